"""What every ``<system> design`` command shares: reading ``--target``, ``--vary`` and
``--tolerance``, their options, and printing the setups found (text or ``--json``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction

import click

from exactdice.cli.common import emit_json, fraction_text, json_option
from exactdice.core.display import fraction_size
from exactdice.errors import InputError, TooLargeError
from exactdice.integer_lists import parse_integer_list

__all__ = [
    "parse_number",
    "parse_target",
    "parse_vary",
    "integer_values",
    "parse_tolerance",
    "fixed_from_flags",
    "design_query_options",
    "with_options",
    "report_design",
    "exact_json",
]

_SHORT_FRACTION = 40
#: the default of --max-setups: the most setups one design grid may hold
DEFAULT_MAX_SETUPS = 10_000
#: a comma that starts the next NAME=VALUES of --vary
_NEXT_AXIS = re.compile(r",\s*(?=[A-Za-z_-]+\s*=)")


def parse_number(text: str, flag: str, example: str = "0.6, 60% or 3/5") -> Fraction:
    """``0.6``, ``60%`` or ``3/5`` -> an exact Fraction; anything else names *flag*.

    >>> parse_number("60%", "--target")
    Fraction(3, 5)
    """
    text = text.strip()
    try:
        return Fraction(text[:-1]) / 100 if text.endswith("%") else Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise InputError(flag, f'"{text}" is not a number ({example})') from None


def parse_target(text: str, metrics, unbounded=()) -> tuple[str, Fraction]:
    """``win=0.6``, ``win=60%``, ``loss=3/5`` or ``rounds=4.5`` -> (metric, exact value).

    Metrics not in *unbounded* are probabilities (0 to 1); unbounded ones must be >= 0.

    >>> parse_target("win=60%", ("win", "loss"))
    ('win', Fraction(3, 5))
    """
    metric, equals, value = text.partition("=")
    metric, value = metric.strip().lower(), value.strip()
    if not equals or metric not in metrics:
        raise InputError(
            "--target",
            f'write METRIC=VALUE with METRIC one of {", ".join(metrics)}, e.g. {next(iter(metrics))}=0.6; got "{text}"',
        )
    number = parse_number(value, "--target")
    if metric not in unbounded and not 0 <= number <= 1:
        raise InputError("--target", f"a probability target must be from 0 to 1 (0% to 100%), got {value}")
    if metric in unbounded and number < 0:
        raise InputError("--target", f"{metric} cannot be negative, got {value}")
    return metric, number


def integer_values(text: str, name: str) -> list[int]:
    """``1-3``, ``1,3,5`` or ``1-3,7`` -> the integers listed (`parse_integer_list`); an
    error names --vary and the parameter.

    >>> integer_values("1-3,7", "challenge"), integer_values("-2--1", "modifier")
    ([1, 2, 3, 7], [-2, -1])
    >>> integer_values("1-x", "peril")
    Traceback (most recent call last):
    exactdice.errors.InputError: --vary: peril: "1-x" is not a number, a range like 1-5, or a list like 1,2,4
    """
    try:
        return parse_integer_list(text, name)
    except InputError as error:
        raise InputError("--vary", f"{name}: {error.message}") from None


def parse_vary(
    text: str, parsers: dict[str, Callable[[str, str], list]], example: str, max_setups: int = DEFAULT_MAX_SETUPS
) -> dict[str, list]:
    """``challenge=1-8,peril=0-3`` -> ``{"challenge": [1..8], "peril": [0..3]}``.

    *parsers* maps each parameter that may vary to the function reading its values
    (`integer_values` for numbers); a comma followed by ``NAME=`` starts the next one. A
    grid of more than *max_setups* points is refused (`TooLargeError` naming --max-setups).

    >>> parse_vary("challenge=1,3,peril=0", {"challenge": integer_values, "peril": integer_values}, "")
    {'challenge': [1, 3], 'peril': [0]}
    """
    axes: dict[str, list] = {}
    for part in (piece.strip() for piece in _NEXT_AXIS.split(text)):
        if not part:
            continue
        name, equals, values = part.partition("=")
        name = name.strip().lower().replace("-", "_")
        if not equals:
            raise InputError("--vary", f'write NAME=VALUES[,NAME=VALUES...], e.g. {example}; got "{text}"')
        if name not in parsers:
            raise InputError("--vary", f"cannot vary {name!r}; choose from {', '.join(parsers)}")
        if name in axes:
            raise InputError("--vary", f"{name} is given twice")
        axes[name] = parsers[name](values.strip(), name)
        if len(set(axes[name])) != len(axes[name]):
            raise InputError("--vary", f"{name} lists a value twice")
    if not axes:
        raise InputError("--vary", f"give at least one NAME=VALUES, e.g. {example}")
    size = math.prod(len(values) for values in axes.values())
    if size > max_setups:
        raise TooLargeError(
            "--max-setups",
            f"--vary gives a grid of {size:,} setups, more than the limit of "
            f"{max_setups:,}; narrow --vary or raise --max-setups",
        )
    return axes


def fixed_from_flags(axes: dict, given: dict) -> dict:
    """The setup parameters given as flags (those not None); one both given and varied is
    an error naming its flag.

    >>> fixed_from_flags({"peril": [0, 1]}, {"ability": 3, "challenge": None})
    {'ability': 3}
    >>> fixed_from_flags({"against_dice": [1, 2]}, {"against_dice": 2})
    Traceback (most recent call last):
    exactdice.errors.InputError: --against-dice: against_dice is varied by --vary; drop --against-dice or take it out of --vary
    """
    for name, value in given.items():
        if name in axes and value is not None:
            flag = "--" + name.replace("_", "-")
            raise InputError(flag, f"{name} is varied by --vary; drop {flag} or take it out of --vary")
    return {name: value for name, value in given.items() if value is not None}


def with_options(function, options):
    """*function* with the click *options* applied, the first one listed first in ``--help``."""
    for option in reversed(options):
        function = option(function)
    return function


def design_query_options(metrics, vary_help: str, example_target: str):
    """The options every design command shares: --target, --vary, --tolerance, --best,
    --exact, --json, --max-setups. The command receives ``target_text``, ``vary_text``,
    ``tolerance``, ``best``, ``full_fractions``, ``as_json`` and ``max_setups``."""
    options = (
        click.option(
            "--target",
            "target_text",
            required=True,
            metavar="METRIC=VALUE",
            help=f"What to aim at: {', '.join(metrics)} (a probability: 0.6, 60% or 3/5), e.g. {example_target}.",
        ),
        click.option("--vary", "vary_text", required=True, metavar="NAME=VALUES,...", help=vary_help),
        click.option(
            "--tolerance",
            default=None,
            metavar="VALUE",
            help="List every setup within this distance of the target (0.05 or 5%); without it, the --best closest.",
        ),
        click.option(
            "--best",
            type=click.IntRange(min=1),
            default=5,
            show_default=True,
            help="How many of the closest setups to list (without --tolerance).",
        ),
        click.option("--exact", "full_fractions", is_flag=True, help="Print exact values in full, however long."),
        json_option,
        click.option(
            "--max-setups",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_SETUPS,
            show_default=True,
            help="The most setups the --vary grid may hold (a larger grid stops with its size).",
        ),
    )
    return lambda function: with_options(function, options)


def parse_tolerance(text: str | None) -> Fraction | None:
    """``--tolerance``: None, or an exact distance >= 0.

    >>> parse_tolerance("5%")
    Fraction(1, 20)
    """
    if text is None:
        return None
    value = parse_number(text, "--tolerance", "0.05 or 5%")
    if value < 0:
        raise InputError("--tolerance", f"must be >= 0, got {text}")
    return value


def exact_json(value: Fraction | None) -> str | None:
    """An exact ``"p/q"`` string (`emit_json` adds its decimal in the ``decimal`` mirror)."""
    return None if value is None else fraction_text(value)


def _shown(value: Fraction, as_number: bool) -> str:
    return f"{float(value):.4f}" if as_number else f"{100 * float(value):.2f} %"


def _exact_text(value: Fraction, full: bool) -> str:
    text = fraction_text(value)
    if full or len(text) <= _SHORT_FRACTION:
        return text
    return f"(exact: {fraction_size(value):,}-digit fraction)"  # as every other command writes it


def _axis_text(name: str, values: list) -> str:
    if len(values) > 2 and all(isinstance(v, int) for v in values) and values == list(range(values[0], values[-1] + 1)):
        return f"{name} {values[0]}-{values[-1]}"
    shown = values if len(values) <= 6 else values[:3] + ["..."] + values[-1:]
    return (
        f"{name} {' | '.join(map(str, shown))} ({len(values)} values)"
        if len(values) > 6
        else f"{name} {', '.join(map(str, shown))}"
    )


def report_design(
    found,
    *,
    metric: str,
    meaning: str,
    axes: dict,
    fixed: dict,
    as_json: bool,
    full_fractions: bool,
    as_number: bool = False,
    method: str = "",
    extra_json: dict | None = None,
) -> None:
    """Print a `DesignResult`: a table best first with the exact values, or ``--json``.

    *method* is a closing line saying how the setups were solved; *as_number* shows values
    as decimals (expected rounds) instead of percentages.
    """
    if as_json:
        emit_json(
            {
                "target": {"metric": metric, "meaning": meaning, "value": exact_json(found.target)},
                "tolerance": exact_json(found.tolerance),
                "fixed": fixed,
                "varied": axes,
                "candidates": [
                    {
                        "setup": candidate.point,
                        "value": exact_json(candidate.value),
                        "distance": exact_json(candidate.distance),
                    }
                    for candidate in found.candidates
                ],
                "within_tolerance": found.within_tolerance,
                "grid_size": found.grid_size,
                "solved_exactly": found.solved,
                "screened": found.screened,
                "exhaustive": found.exhaustive,
                **(extra_json or {}),
            }
        )
        return
    tolerance = "" if found.tolerance is None else f" ± {_shown(found.tolerance, as_number)}"
    click.echo(
        f"target: {meaning} = {_shown(found.target, as_number)}{tolerance} over "
        f"{found.grid_size:,} setups ({', '.join(_axis_text(n, v) for n, v in axes.items())})"
    )
    if found.tolerance is not None and not found.within_tolerance:
        click.echo("no setup lies within the tolerance; the closest:")
    names = list(axes)
    widths = {name: max(11, *(len(str(c.point[name])) for c in found.candidates)) for name in names}
    header = "  ".join(f"{name:>{widths[name]}}" for name in names)
    click.echo(f"rank  {header}  {'value':>10}  {'distance':>10}  exact")
    for rank, candidate in enumerate(found.candidates, start=1):
        cells = "  ".join(f"{str(candidate.point[name]):>{widths[name]}}" for name in names)
        click.echo(
            f"{rank:>4}  {cells}  {_shown(candidate.value, as_number):>10}"
            f"  {_shown(candidate.distance, as_number):>10}  {_exact_text(candidate.value, full_fractions)}"
        )
    share = found.solved / found.grid_size
    click.echo(
        f"solved exactly: {found.solved:,} of {found.grid_size:,} setups ({100 * share:.0f} %)"
        + (f"; {method}" if method else "")
    )
