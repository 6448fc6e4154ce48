"""Run the whole ``exactdice`` entry point (with its error handling) in-process."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from exactdice.cli import main as main_module


class _EntryPoint:
    """What CliRunner needs of a command: a name and ``main(args=..., prog_name=...)``."""

    name = "exactdice"

    def main(self, args=(), prog_name=None, **extra):
        main_module.main(list(args))


@pytest.fixture
def run_cli():
    """``run_cli(["dist", "3d6"])`` -> click's Result of the full entry point (exit code, output)."""

    def run(arguments, **options):
        return CliRunner().invoke(_EntryPoint(), arguments, **options)

    return run
