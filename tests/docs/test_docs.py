"""The documentation as a reader meets it: the site builds with warnings as errors, its
internal links lead somewhere, every example on its pages (and in the README) runs and prints
what the page says, the CLI reference lists every command and the API reference every public
name, each documented with its parameters and returns (numpydoc)."""

from __future__ import annotations

import doctest
import html.parser
import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.parts)
#: every page whose examples run: the documentation's and the README
EXAMPLE_PAGES = [ROOT / "README.md", *PAGES]
#: the packages (and public modules) whose __all__ the API reference documents
API_MODULES = [
    "exactdice",
    "exactdice.core",
    "exactdice.markov",
    "exactdice.karbon",
    "exactdice.contingency",
    "exactdice.chronica",
    "exactdice.karst",
    "exactdice.tables",
    "exactdice.systems",
    "exactdice.answers",
    "exactdice.progress",
    "exactdice.validation",
    "exactdice.design",
    "exactdice.errors",
]
#: fenced blocks that are not run, and why: installs and servers (how to run the tests, the
#: benchmarks and the docs is itself checked by CI, which runs the same commands)
NOT_RUN = (
    "python3 -m venv",
    ". .venv/bin/activate",
    "pip install",
    "git clone",
    "cd ",
    "exactdice serve",
    "dask ",
    "pytest",
    "python scripts/",
    "sudo apt-get",
    "sphinx-build",
    "ruff ",
    "mypy",
    "python -m build",
    "twine ",
    "EXACTDICE_SCREENSHOT_DIR=",
    "bash .ci/run",
)
#: languages of blocks that are data or output, never run
DATA_LANGUAGES = {"text", "json", "csv", "toml", "markdown"}
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)


def blocks(page: Path) -> list[tuple[str, str, int]]:
    """(language, body, line) of every fenced block on *page* (MyST directives excluded)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        language = match["info"].strip().split(" ")[0]
        if not language.startswith("{"):
            found.append((language, match["body"], text.count("\n", 0, match.start()) + 1))
    return found


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


# --- the build ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The HTML site, built as CI builds it: warnings are errors."""
    if importlib.util.find_spec("sphinx") is None:
        if os.environ.get("CI"):
            pytest.fail('the docs extra is not installed (pip install -e ".[docs]")')
        pytest.skip('the docs extra is not installed (pip install -e ".[docs]")')
    out = tmp_path_factory.mktemp("html")
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(out / ".doctrees"),
            str(DOCS),
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 0, f"the docs build failed ({seconds:.0f} s):\n{done.stdout}\n{done.stderr}"
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("href"):
            self.links.append(attributes["href"])
        if tag in ("img", "script") and attributes.get("src"):
            self.links.append(attributes["src"])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_every_internal_link_leads_to_a_page_and_anchor(built):
    pages = {path: _parse(path) for path in built.rglob("*.html") if "_modules" not in path.parts}
    broken = []
    for path, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("mailto:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(built)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(built)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken)


def test_the_pages_link_only_within_the_site_or_to_the_repository():
    """No link leaves the site except to public references; none points into the checkout
    (``../exactdice/...``), which a reader of the built site does not have."""
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            assert not target.startswith(("../../exactdice", "../exactdice", "/")), f"{_name(page)}: {target}"


def test_the_readme_links_lead_to_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", readme):
        if not urlsplit(target).scheme:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_the_readme_is_short_and_no_diary():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    diary = re.compile(r"\b(19|20)\d\d\b|this (stop|session)|last stop|the issue's report", re.I)
    for page in EXAMPLE_PAGES:
        found = diary.findall(page.read_text(encoding="utf-8"))
        assert not found, f"{_name(page)} reads like a diary: {found}"


# --- the examples ---------------------------------------------------------------------------


def test_every_block_is_an_example_that_runs_or_data():
    """A block is run (pycon, console), names a command the tests do not run (shell: installs,
    servers, the test suite itself) or is data/output; nothing else slips through unchecked."""
    for page in EXAMPLE_PAGES:
        for language, body, line in blocks(page):
            where = f"{_name(page)}:{line}"
            assert language in {"pycon", "console", "shell"} | DATA_LANGUAGES, f"{where}: block language {language!r}"
            if language == "shell":
                for command in _commands(body):
                    assert command.startswith(NOT_RUN), f"{where}: {command!r} can run: make it a console block"
            if language == "console":
                assert body.startswith("$ "), f"{where}: a console block starts with a '$ ' command"


def _commands(body: str) -> list[str]:
    """The commands of a shell block, one per line (comments and continuations joined)."""
    joined = body.replace("\\\n", " ")
    commands = (
        line.split("#")[0].strip() if line.lstrip().startswith("#") else line.split("  #")[0].strip()
        for line in joined.splitlines()
    )
    return [command for command in commands if command]


def _pages_with(language: str) -> list[Path]:
    return [page for page in EXAMPLE_PAGES if any(found == language for found, _, _ in blocks(page))]


@pytest.fixture
def page_folder(tmp_path):
    """The folder the examples of a page run in, holding docs/examples (the pages' scripts)."""
    shutil.copytree(DOCS / "examples", tmp_path, dirs_exist_ok=True)
    return tmp_path


@pytest.mark.parametrize("page", _pages_with("pycon"), ids=_name)
def test_the_python_examples_print_what_the_page_says(page, page_folder, monkeypatch):
    """A page's pycon blocks run in order in one namespace (as a reader types them), as doctests."""
    monkeypatch.chdir(page_folder)
    monkeypatch.syspath_prepend(str(page_folder))
    namespace: dict = {}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    parser = doctest.DocTestParser()
    for language, body, line in blocks(page):
        if language != "pycon":
            continue
        test = parser.get_doctest(_blank_lines_kept(body), namespace, f"{_name(page)}:{line}", str(page), line)
        assert test.examples, f"{_name(page)}:{line}: a pycon block without '>>>' examples"
        runner.run(test, clear_globs=False)
        namespace = test.globs  # a DocTest works on a copy: the next block sees this one's names
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} example(s) on {_name(page)} printed something else (above)"


def _blank_lines_kept(body: str) -> str:
    """A pycon block as doctest reads it: a blank line inside printed output is part of it
    (doctest would end the output there), one before the next '>>>' is not."""
    lines = body.rstrip("\n").splitlines()
    kept = []
    for index, line in enumerate(lines):
        following = next((later for later in lines[index + 1 :] if later.strip()), ">>>")
        kept.append("<BLANKLINE>" if not line.strip() and not following.startswith(">>>") else line)
    return "\n".join(kept) + "\n"


def _expected_matches(want: str, got: str) -> bool:
    """The console output matches the page's: line for line, '...' standing for any text."""
    checker = doctest.OutputChecker()
    tidy = lambda text: "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"  # noqa: E731
    return checker.check_output(tidy(want), tidy(got), doctest.ELLIPSIS)


def _console_examples(body: str) -> list[tuple[str, str]]:
    """(command, expected output) of each '$ ' line of a console block; '\\' continues a command."""
    examples: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and index + 1 < len(lines):
                index += 1
                command = command[:-1] + " " + lines[index].strip()
            examples.append((command, []))
        else:
            examples[-1][1].append(line)
        index += 1
    return [(command, "\n".join(output)) for command, output in examples]


@pytest.mark.parametrize("page", _pages_with("console"), ids=_name)
def test_the_commands_print_what_the_page_says(page, page_folder):
    """A page's console commands run in order in one folder (so a file one writes, the next can
    read), with this environment's ``exactdice``; each prints what the page shows."""
    bin_dir = Path(sys.executable).parent
    environment = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "100",
        "EXACTDICE_STORE": str(page_folder / "results.sqlite"),
        "PYTHONUNBUFFERED": "1",
    }
    environment.pop("EXACTDICE_MAX_MEMORY", None)
    failures = []
    for language, body, line in blocks(page):
        if language != "console":
            continue
        for command, want in _console_examples(body):
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=page_folder,
                env=environment,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=300,
            )
            got = done.stdout
            if not _expected_matches(want, got):
                failures.append(
                    f"{_name(page)}:{line}: $ {command}\n--- the page says:\n{want}\n--- it printed "
                    f"(exit {done.returncode}):\n{got}"
                )
    assert not failures, "\n\n".join(failures)


# --- the references -------------------------------------------------------------------------


def _click_commands(command, path=()):
    import click

    yield " ".join(path)
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=path[-1] if path else "exactdice")
        for name in command.list_commands(context):
            yield from _click_commands(command.get_command(context, name), (*path, name))


def test_the_cli_reference_lists_every_command(built):
    from exactdice.cli.main import cli

    sections = _parse(built / "reference" / "cli.html").ids
    missing = [name for name in _click_commands(cli, ("exactdice",)) if name.replace(" ", "-") not in sections]
    assert not missing, f"not in the CLI reference: {missing}"


def _public(module_name: str):
    module = importlib.import_module(module_name)
    for name in module.__all__:
        yield module, name, getattr(module, name)


@pytest.mark.parametrize("module_name", API_MODULES)
def test_the_api_reference_documents_every_public_name(built, module_name):
    page = (built / "reference" / "api" / f"{module_name}.html").read_text(encoding="utf-8")
    parsed = _parse(built / "reference" / "api" / f"{module_name}.html")
    ids, links = parsed.ids, parsed.links
    missing = []
    for module, name, value in _public(module_name):
        if name == "__version__":
            assert "__version__" in page
            continue
        documented_here = f"{module_name}.{name}" in ids
        # the top-level page links each re-exported name to where it is documented
        linked = module_name == "exactdice" and any(link.endswith(f".{name}") for link in links)
        if not (documented_here or linked):
            missing.append(name)
    assert not missing, f"{module_name}: not documented: {missing}"


def test_every_public_function_is_annotated():
    """py.typed promises annotations: every public function's parameters and return."""
    missing = []
    for module_name in API_MODULES:
        for module, name, value in _public(module_name):
            if not inspect.isfunction(value):
                continue
            signature = inspect.signature(value)
            bare = [
                parameter
                for parameter, detail in signature.parameters.items()
                if detail.annotation is inspect.Parameter.empty
            ]
            if bare or signature.return_annotation is inspect.Signature.empty:
                missing.append(f"{module_name}.{name}: {bare or 'the return'}")
    assert not missing, "\n".join(missing)


#: numpydoc's checks that make a reference usable: a docstring, a summary, every parameter
#: documented (and none that is not one), a Returns section where something is returned
NUMPYDOC_CHECKS = {"GL08", "SS01", "PR01", "PR02", "RT01"}


@pytest.mark.parametrize("module_name", API_MODULES[1:])
def test_every_public_function_and_class_documents_its_parameters_and_returns(module_name):
    validate = pytest.importorskip("numpydoc.validate").validate
    problems = []
    for module, name, value in _public(module_name):
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        found = validate(f"{value.__module__}.{value.__qualname__}")
        errors = [f"{code} {message}" for code, message in found["errors"] if code in NUMPYDOC_CHECKS]
        if inspect.isclass(value) and any(code.startswith("PR0") for code, _ in found["errors"]):
            # a result class may list its fields as Attributes instead of Parameters
            if "Attributes" in (inspect.getdoc(value) or ""):
                errors = [error for error in errors if not error.startswith("PR0")]
        problems += [f"{module_name}.{name}: {error}" for error in errors]
    assert not problems, "\n".join(problems)
