"""sympy is a test dependency only: importing every module of the package never loads it."""

import subprocess
import sys

PROGRAM = """
import importlib, pkgutil, sys
import exactdice
for module in pkgutil.walk_packages(exactdice.__path__, "exactdice."):
    importlib.import_module(module.name)
print(len(sys.modules), "sympy" in sys.modules)
"""


def test_the_package_never_imports_sympy():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == "False"


def test_sympy_is_in_the_test_extra_not_the_dependencies():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    assert not any(requirement.startswith("sympy") for requirement in project["dependencies"])
    assert any(requirement.startswith("sympy") for requirement in project["optional-dependencies"]["test"])


def test_every_data_file_of_the_package_is_installed():
    """A non-editable install copies only .py files and the `package-data` globs: every
    other file under exactdice/ (the web page's scripts, styles, templates) must match one,
    or an installed `exactdice serve` cannot start."""
    import tomllib
    from fnmatch import fnmatch
    from pathlib import Path

    root = Path(__file__).parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    # the compiled extensions and the C++ Cython generates for them are built, not shipped as data
    built = (".py", ".pyc", ".so", ".pyd", ".cpp")
    data_files = [
        path
        for path in (root / "exactdice").rglob("*")
        if path.is_file() and path.suffix not in built and "__pycache__" not in path.parts
    ]
    assert data_files  # the web page's files at least
    for path in data_files:
        relative = path.relative_to(root)
        covered = any(
            fnmatch(str(relative.relative_to(Path(*package.split(".")))), pattern)
            for package, patterns in globs.items()
            if relative.is_relative_to(Path(*package.split(".")))
            for pattern in patterns
        )
        assert covered, f"{relative} is not in [tool.setuptools.package-data]"
