"""``exactdice dist``: the exact distribution of a dice expression."""

from __future__ import annotations

import click

from exactdice.cli.common import OutputFile, display_options, emit_json, json_option
from exactdice.core.display import counted
from exactdice.core.distribution import MAX_FACES
from exactdice.core.notation import (
    MAX_NOTATION_DEPTH,
    MAX_NOTATION_DICE,
    MAX_NOTATION_RESULT_CHARACTERS,
    MAX_NOTATION_SPAN,
    parse_dice,
)


@click.command(
    help=f"""Exact distribution of a dice expression.

\b
EXPRESSION uses dice notation:
  3d6+2      sum of three d6, plus 2
  4d6kh3     roll 4d6, keep the highest 3 (k3 means the same; kl keeps lowest)
  2d20kl1    disadvantage
  d6+d8+d10  mixed dice;  (2d6+1)-d4  parentheses and subtraction

Prints each outcome's probability as a percentage with the "at least" / "at most"
columns and the exact fraction (in full with --exact); --plot draws the
distribution with its at-least/at-most curves. Limits: at most {MAX_NOTATION_DICE} dice in one expression,
{MAX_FACES:,} faces a die, {MAX_NOTATION_SPAN:,} distinct totals (dice x faces) and
{MAX_NOTATION_DEPTH} nested parentheses; a result table of at most about
{MAX_NOTATION_RESULT_CHARACTERS:.0e} characters (totals x digits of the exact weights,
estimated before any work: 100d1000 is about 7e7). An expression starting with "-" needs "--"
before it: exactdice dist -- "-d6+3"."""
)
@click.argument("expression")
@display_options
@click.option(
    "--plot",
    "plot_path",
    type=OutputFile(),
    help="Also draw the distribution and its at-least/at-most curves to this PNG file.",
)
@json_option
def dist(expression: str, display, plot_path, as_json: bool):
    distribution = parse_dice(expression, field="EXPRESSION")
    if plot_path:
        from exactdice.tables.plots import plot_distribution

        plot_distribution(distribution, expression, plot_path, field="plot_path")
    if as_json:
        payload = {"expression": expression}
        payload.update(distribution.to_json())
        emit_json(payload)
        return
    click.echo(
        f"{expression}: {counted(len(distribution), 'outcome')}, mean {display.expectation(distribution.mean())}, "
        f"variance {display.expectation(distribution.variance())}"
    )
    for line in display.distribution(distribution):
        click.echo(line)
    if plot_path:
        click.echo(f"plot written to {plot_path}")
