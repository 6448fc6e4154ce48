"""Helpers shared by every subcommand: JSON output, how exact values are shown, list parsing."""

from __future__ import annotations

import csv
import functools
import importlib
import json
import sys

import click

from exactdice.core.display import Display, with_decimals
from exactdice.core.exact import fraction_text, lift_digit_limit

lift_digit_limit()

__all__ = ["emit_json", "json_option", "display_options", "fraction_text", "write_csv_rows",
           "LazyGroup"]

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print machine-readable JSON: exact values as \"p/q\" strings, and a "
                                "\"decimal\" object repeating them as numbers (README, \"JSON\").")


def display_options(function):
    """Add ``--exact`` and ``--digits``; the command receives them as one `Display` named ``display``."""
    @click.option("--exact", "show_exact", is_flag=True,
                  help="Print every exact fraction in full beside its percentage or decimal.")
    @click.option("--digits", type=int, default=None,
                  help="Significant digits of percentages and decimals (default 3); with --exact, "
                       "also cut long fractions to this many leading digits.")
    @functools.wraps(function)
    def wrapper(*args, show_exact, digits, **kwargs):
        if digits is not None and digits < 1:
            from exactdice.errors import InputError
            raise InputError("--digits", f"must be >= 1, got {digits}")
        return function(*args, display=Display(exact=show_exact, digits=digits), **kwargs)
    return wrapper


def emit_json(payload) -> None:
    """Print a JSON document to stdout: exact values are ``"p/q"`` strings, and a top-level
    ``decimal`` object repeats each of them as a number at the same path (`with_decimals`)."""
    json.dump(with_decimals(payload), sys.stdout, indent=2)
    sys.stdout.write("\n")


def write_csv_rows(path, fieldnames, rows, field: str = "--out") -> None:
    """Write dict rows as CSV with a header; a path that cannot be written is an InputError."""
    from exactdice.errors import InputError

    try:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fieldnames)
            writer.writeheader()
            writer.writerows(rows)
    except OSError as error:
        raise InputError(field, f"cannot write {path}: {error.strerror or error}") from None


class LazyGroup(click.Group):
    """A click group whose ``lazy_commands`` ("module:attribute") are imported on first use,
    so ``--help`` and unrelated commands stay fast and modules may import each other."""

    lazy_commands: dict = {}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, name):
        target = self.lazy_commands.get(name)
        if target is None:
            return super().get_command(ctx, name)
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)
