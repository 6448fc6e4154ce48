"""Helpers shared by every subcommand: JSON output, how exact values are shown (`--exact`,
`--digits`), the groups that import commands on first use, click options made from a
system's declared parameters, and the one place where a library error's parameter names
become CLI flags."""

from __future__ import annotations

import copy
import csv
import functools
import importlib
import json
import re
import sys

import click

from exactdice.core.display import Display, with_decimals
from exactdice.core.exact import fraction_text, lift_digit_limit

lift_digit_limit()

__all__ = [
    "emit_json",
    "json_option",
    "played_json_option",
    "display_options",
    "fraction_text",
    "write_csv_rows",
    "CommandGroup",
    "LazyGroup",
    "parameter_options",
    "command_flags",
    "error_with_flags",
    "with_flags",
    "given_values",
    "terminal_bars",
    "OutputFile",
    "ascii_int",
]


def ascii_int(text) -> int:
    """``int()`` for command-line numbers: ASCII digits only (Python's ``int`` reads a
    full-width "３" as 3; a user typing one almost surely meant something else).

    >>> ascii_int("-12")
    -12
    >>> ascii_int("３")
    Traceback (most recent call last):
    ...
    ValueError: only ASCII digits: '３'
    """
    if isinstance(text, str) and not text.isascii():
        raise ValueError(f"only ASCII digits: {text!r}")
    return int(text)


# Every integer option of the CLI (type=int, IntRange, declared parameters) converts through
# click's IntParamType: one place to make them all ASCII-only (click calls _number_class(value)).
click.types.IntParamType._number_class = staticmethod(ascii_int)

json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print machine-readable JSON: exact values as "p/q" strings, and a '
    '"decimal" object repeating them as numbers (the guide "Read --json" in the docs).',
)
#: ``--json`` of commands that play dice rather than compute odds (simulations, traces)
played_json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print machine-readable JSON: the setup, ruleset, policies and seed, "
    "and what was played (counts and their shares, or each round).",
)


def display_options(function):
    """Add ``--exact`` and ``--digits``; the command receives them as one `Display` named ``display``."""

    @click.option(
        "--exact",
        "show_exact",
        is_flag=True,
        help="Print every exact fraction in full beside its percentage or decimal.",
    )
    @click.option(
        "--digits",
        type=int,
        default=None,
        help="Significant digits of percentages and decimals (default 3, at most 1,000); with "
        "--exact, also cut long fractions to this many leading digits.",
    )
    @functools.wraps(function)
    def wrapper(*args, show_exact, digits, **kwargs):
        return function(*args, display=Display(exact=show_exact, digits=digits), **kwargs)

    return wrapper


def emit_json(payload) -> None:
    """Print a JSON document to stdout: exact values are ``"p/q"`` strings, and a top-level
    ``decimal`` object repeats each of them as a number at the same path (`with_decimals`)."""
    json.dump(with_decimals(payload), sys.stdout, indent=2)
    sys.stdout.write("\n")


def write_csv_rows(path, fieldnames, rows, field: str = "out") -> None:
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
    folder is refused up front with an error naming the flag. ``-`` and ``/dev/stdout``
    (standard output) pass as ``-`` when *allow_dash*."""

    name = "file"

    def __init__(self, allow_dash: bool = False):
        self.allow_dash = allow_dash

    def convert(self, value, param, ctx):
        from exactdice.output_files import check_output_path

        from exactdice.output_files import STDOUT, STDOUT_ALIASES

        if self.allow_dash and value in STDOUT_ALIASES:
            return STDOUT
        flag = max(param.opts, key=len) if param is not None else "file"
        check_output_path(value, flag)
        return value


#: key of ``ctx.meta`` (shared by every context of one run) holding the command being run
_RUNNING = "exactdice.running_command"


class CommandGroup(click.Group):
    """A click group that remembers which subcommand it runs, so the root can name flags.

    Every group of the CLI is one; `error_with_flags` reads the remembered command.
    """

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            ctx.meta[_RUNNING] = command
        return name, command, rest


def running_command(ctx) -> click.Command | None:
    """The innermost command a `CommandGroup` resolved in this run (None before any)."""
    return ctx.meta.get(_RUNNING)


def command_flags(command: click.Command | None) -> dict[str, str]:
    """``{parameter name: flag}`` of a click command: each option's longest ``--`` spelling,
    each argument's metavar; a command may add ``parameter_flags`` for library parameters
    it passes under another name.

    >>> @click.command()
    ... @click.option("--n", "trials", type=int)
    ... def demo(trials): pass
    >>> command_flags(demo)
    {'trials': '--n'}
    """
    if command is None:
        return {}
    flags = {}
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            long = [opt for opt in parameter.opts if opt.startswith("--")] or parameter.opts
            flags[parameter.name] = long[0]
        elif isinstance(parameter, click.Argument):
            flags[parameter.name] = parameter.human_readable_name
    flags.update(getattr(command, "parameter_flags", {}))
    return flags


_QUOTED_PARAMETER = re.compile(r"`([a-z_][a-z0-9_]*)`")
#: flags of the root command, which any library message may name (the memory budget's)
ROOT_FLAGS = {"max_memory": "--max-memory"}


def with_flags(text: str, flags: dict[str, str]) -> str:
    """Library text with each quoted parameter (`` `max_states` ``) shown as its flag.

    >>> with_flags("raise `max_states` or `max_memory`", {"max_states": "--max-states"})
    'raise --max-states or --max-memory'
    """
    known = {**ROOT_FLAGS, **flags}
    return _QUOTED_PARAMETER.sub(lambda match: known.get(match.group(1), match.group(0)), text)


def error_with_flags(error, flags: dict[str, str]):
    """A copy of an `InputError` whose field and quoted parameters are CLI flags.

    Library errors name parameters (``n``, `` `difficulty` ``); the CLI shows the flag a
    user typed. Unknown names are left as they are.

    >>> from exactdice.errors import InputError
    >>> str(error_with_flags(InputError("luck", "if-failing needs `difficulty`"),
    ...                      {"luck": "--luck", "difficulty": "--difficulty"}))
    '--luck: if-failing needs --difficulty'
    """
    field = {**ROOT_FLAGS, **flags}.get(error.field, error.field) if error.field else error.field
    message = with_flags(error.message, flags)
    if (field, message) == (error.field, error.message):
        return error
    renamed = copy.copy(error)
    renamed.field, renamed.message = field, message
    renamed.args = (f"{field}: {message}" if field else message,)
    return renamed


def parameter_options(parameters, *, skip=(), roles=("setup", "rules", "limits"), required=(), lists=None):
    """A decorator adding one click option per declared `exactdice.systems.Parameter` that
    the command line offers (``on_cli``), of the *roles* named.

    Values reach the command under the parameter's name; ranges and required values are
    left to the library, so its errors (mapped to flags) are the ones a user sees. Other
    parameters a help text names (`` `luck` ``) are shown as their flags. *required*: names
    this command needs although the registry has a default for them; *lists*: names (with
    their default text) taken as a value, a range or a list ("1-5", "1,3,5"), for a table.
    """
    chosen = [p for p in parameters if p.name not in skip and p.role in roles and p.on_cli]
    flags = {p.name: p.flag for p in parameters}
    lists = lists or {}

    def decorate(function):
        for parameter in reversed(chosen):
            function = _option(parameter, flags, parameter.name in required, lists.get(parameter.name))(function)
        return function

    return decorate


def given_values(values: dict) -> dict:
    """The values a user gave (on the command line or from the environment), without the
    options left at their defaults: the library fills those in from the registry, and can
    tell what was asked for from what was not."""
    context = click.get_current_context()
    return {
        name: value
        for name, value in values.items()
        if context.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)
    }


def _option(parameter, flags: dict, required: bool, list_default):
    declarations = [parameter.cli_flag or parameter.flag]
    if parameter.short:
        declarations.append(parameter.short)
    repeat = parameter.multiple and "repeat" not in parameter.help.lower()
    settings = {"help": with_flags(parameter.help, flags) + (" Repeat the flag for several." if repeat else "")}
    if list_default is not None:
        settings.update(
            default=list_default,
            show_default=True,
            help=settings["help"] + " A value, a range (1-5) or a list (1,3,5).",
        )
    elif parameter.kind is bool and "/" not in declarations[0]:
        settings["is_flag"] = True
    else:
        if parameter.choices is not None:
            settings["type"] = click.Choice(parameter.choices)
        elif parameter.kind is not bool:
            settings["type"] = parameter.kind
        settings["default"] = parameter.default if not parameter.multiple else ()
        settings["show_default"] = parameter.default is not None and not parameter.multiple
    if parameter.multiple:
        settings["multiple"] = True
    if parameter.required or required:
        settings["required"] = True
        # a default, even None, satisfies click 8.3's required check: leave none
        settings.pop("default", None)
    if parameter.metavar:
        settings["metavar"] = parameter.metavar
    return click.option(*declarations, parameter.name, **settings)


def terminal_bars():
    """The progress callback of a command: tqdm bars on stderr when it is a terminal
    (`exactdice.progress.TerminalBars`), else None (no reports at all)."""
    from exactdice.progress import TerminalBars

    return TerminalBars() if sys.stderr.isatty() else None


class LazyGroup(CommandGroup):
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
