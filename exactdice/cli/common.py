"""Helpers shared by every subcommand: JSON output, exact/decimal columns, list parsing."""

from __future__ import annotations

import csv
import importlib
import json
import sys

import click

from exactdice.core.exact import decimal_text, fraction_text, lift_digit_limit

lift_digit_limit()

__all__ = ["emit_json", "exact_and_decimal", "json_option", "fraction_text", "decimal_text",
           "write_csv_rows", "LazyGroup"]

json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print machine-readable JSON (fractions as \"p/q\" strings).")


def emit_json(payload) -> None:
    """Print a JSON document to stdout (exact numbers are already strings)."""
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")


def exact_and_decimal(value, digits: int = 10) -> str:
    """``"7/20 (0.35)"``: the exact value with its decimal next to it."""
    return f"{fraction_text(value)} ({decimal_text(value, digits)})"


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
