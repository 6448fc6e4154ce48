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
