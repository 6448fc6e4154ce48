"""The layering rules, checked on the source: inner layers never import outer ones.

The layers, inside out: the dice core (``exactdice/core``), the state-graph solver
(``exactdice/markov``), one package per rules system, the registry (``systems.py``) and the
tables machinery, then the edges (``exactdice/cli``). Each rule below is an AST scan of
every module (imports inside functions count too), plus one run of a fresh interpreter for
what must not be loaded at run time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "exactdice"
SYSTEM_PACKAGES = ("karbon", "contingency", "chronica", "karst")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path):
    """``(imported module, imported name or None, line)`` for every import in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [(node.module, alias.name, node.lineno) for alias in node.names]
    return found


def violations(modules, forbidden_prefixes):
    """Imports of any of ``forbidden_prefixes`` by the given modules, as readable lines."""
    bad = []
    for name in modules:
        for imported, _, line in imports(MODULES[name]):
            if any(imported == prefix or imported.startswith(prefix + ".") for prefix in forbidden_prefixes):
                bad.append(f"{name}:{line} imports {imported}")
    return bad


def inside(prefix: str) -> list[str]:
    return [name for name in MODULES if name == prefix or name.startswith(prefix + ".")]


def test_the_scan_sees_every_layer():
    # guards against a scan that finds nothing and so can never fail
    assert {
        "exactdice.core.pool",
        "exactdice.markov.solver",
        "exactdice.karbon.model",
        "exactdice.cli.main",
        "exactdice.validation",
        "exactdice.systems",
    } <= set(MODULES)
    assert violations(["exactdice.cli.karbon"], ["exactdice.karbon"])  # it does import karbon


def test_nothing_outside_the_cli_imports_the_cli():
    outside = [name for name in MODULES if not name.startswith("exactdice.cli")]
    assert violations(outside, ["exactdice.cli"]) == []


def test_validation_builds_no_click_command():
    assert violations(["exactdice.validation"], ["click", "exactdice.cli"]) == []


def test_the_dice_core_knows_no_game_no_solver_and_no_edge():
    assert (
        violations(
            inside("exactdice.core"),
            ["exactdice." + name for name in (*SYSTEM_PACKAGES, "markov", "tables", "cli", "systems", "validation")],
        )
        == []
    )


def test_the_solver_knows_no_game():
    assert (
        violations(
            inside("exactdice.markov"), ["exactdice." + name for name in (*SYSTEM_PACKAGES, "tables", "cli", "systems")]
        )
        == []
    )


@pytest.mark.parametrize("system", SYSTEM_PACKAGES)
def test_a_system_package_imports_no_other_system(system):
    others = ["exactdice." + name for name in SYSTEM_PACKAGES if name != system]
    assert violations(inside(f"exactdice.{system}"), others) == []


def test_the_registry_names_systems_only_as_text():
    assert violations(["exactdice.systems"], ["exactdice." + name for name in (*SYSTEM_PACKAGES, "cli")]) == []


def test_cli_modules_import_no_private_names_from_each_other():
    bad = [
        f"{name}:{line} imports {imported}.{what}"
        for name in inside("exactdice.cli")
        for imported, what, line in imports(MODULES[name])
        if imported.startswith("exactdice.cli") and what and what.startswith("_")
    ]
    assert bad == []


def test_table_jobs_are_built_in_the_system_packages_not_in_the_cli():
    bad = []
    for name in inside("exactdice.cli"):
        for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("TableJob", "CellGrid"):
                bad.append(f"{name}:{node.lineno}")
    assert bad == []


def test_invariant_checks_raise_instead_of_assert():
    # `python -O` removes assert statements; exactdice's checks must survive it
    bad = [
        f"{name}:{node.lineno}"
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert bad == []


def test_library_errors_name_parameters_not_flags():
    bad = []
    for name in MODULES:
        if name.startswith("exactdice.cli"):
            continue
        for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "").endswith("Error")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value.startswith("-")
            ):
                bad.append(f"{name}:{node.lineno} {node.args[0].value}")
    assert bad == []


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _messages(tree: ast.AST):
    """Every text of a module that may reach a person: its string constants and f-strings,
    but not docstrings and other bare strings (documentation), nor the declarations of a
    parameter's command-line spelling (``cli_flag=``, ``short=``), nor command lines."""
    documentation, declared = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.JoinedStr)):
            documentation.add(id(node.value))
        if isinstance(node, ast.keyword) and node.arg in ("cli_flag", "short"):
            declared.update(id(part) for part in ast.walk(node.value))
    for node in ast.walk(tree):
        if id(node) in documentation or id(node) in declared:
            continue
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                declared.add(id(part))
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if not text.startswith("exactdice "):  # a command line is the command line's own spelling
            yield node.lineno, text


def test_nothing_outside_the_cli_and_the_web_names_a_flag_in_a_message():
    """Library errors, stop reasons and help name parameters (`` `max_states` ``); the CLI
    shows their flags, the page their labels (issue 37)."""
    bad = []
    for name, path in MODULES.items():
        if name.startswith(("exactdice.cli", "exactdice.web")):
            continue
        for line, text in _messages(ast.parse(path.read_text(encoding="utf-8"))):
            if _FLAG.search(text):
                bad.append(f"{name}:{line} {text[:80]!r}")
    assert bad == []


def test_the_flag_scan_finds_a_flag_in_a_message():
    # guards against a scan that can never fail
    tree = ast.parse(
        'raise InputError("max_states", f"raise it with --max-states, got {n}")\n'
        'Parameter("rules", str, cli_flag="--rule")\n"""A docstring naming --help."""'
    )
    assert [text for _, text in _messages(tree) if _FLAG.search(text)] == ["raise it with --max-states, got {}"]


def test_the_karbon_simulator_loads_neither_the_exact_model_nor_the_solver():
    script = (
        "import sys, exactdice.karbon.simulate, exactdice.karbon.trace\n"
        "print(sorted(m for m in sys.modules if m.startswith(('exactdice.markov', "
        "'exactdice.karbon.model', 'exactdice.karbon.solve', 'exactdice.karbon.draws'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_exact_model_still_loads_the_solver_when_asked():
    # the check above is only meaningful if these modules exist and do load the solver
    script = "import sys\nfrom exactdice.karbon import contest_odds\nprint('exactdice.markov' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True", result.stderr
