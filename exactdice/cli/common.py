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
           "write_csv_rows", "LazyGroup", "OutputFile"]

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
    """Write dict rows as CSV with a header by `exactdice.output_files.open_output` (a path
    that is no regular file or cannot be written is an InputError naming *field*)."""
    from exactdice.output_files import open_output

    with open_output(path, field) as handle:
        writer = csv.DictWriter(handle, fieldnames=fieldnames)
        writer.writeheader()
        writer.writerows(rows)


class OutputFile(click.ParamType):
    """A click type for a file the command will write: checked when the flags are parsed
    (before any work) by `exactdice.output_files.check_output_path`, so a device, FIFO or
    folder is refused up front with an error naming the flag. ``-`` (stdout) passes when
    *allow_dash*."""

    name = "file"

    def __init__(self, allow_dash: bool = False):
        self.allow_dash = allow_dash

    def convert(self, value, param, ctx):
        from exactdice.output_files import check_output_path

        if self.allow_dash and value == "-":
            return value
        flag = max(param.opts, key=len) if param is not None else "file"
        check_output_path(value, flag)
        return value


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
