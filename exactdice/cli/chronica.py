"""``exactdice chronica``: Chronica Mutanis Mundi contests (exact odds, simulation, table).

>>> from click.testing import CliRunner
>>> CliRunner().invoke(chronica, ["contest", "--side", "d6", "--side", "d6"]).exit_code
0
"""

from __future__ import annotations

import click

from exactdice.chronica.contest import sizes_text, solve_contest
from exactdice.chronica.ruleset import side_text
from exactdice.chronica.simulate import columns, simulate_rows, summarise, write_csv
from exactdice.chronica.system import PARAMETERS, SYSTEM, parse_contest
from exactdice.cli.common import CommandGroup, OutputFile, display_options, emit_json, json_option, parameter_options
from exactdice.core.display import percent_text
from exactdice.errors import InputError
from exactdice.systems import split_values

__all__ = ["chronica"]


def _setup(**values):
    """(sides, target size, rules) from the options declared in `exactdice.chronica.system`."""
    setup, rules = split_values(SYSTEM, values)
    sides, target = parse_contest(setup["sides"], setup["target"])
    return sides, target, SYSTEM.rules(rules)


@click.group(
    cls=CommandGroup,
    help="""Chronica Mutanis Mundi contests: exact odds for two or more sides.

\b
  exactdice chronica contest --side d8,d8,d6 --side d10,d6
  exactdice chronica simulate --side d8,d8,d6 --side d10,d6 --n 100000 --seed 7 --out s.csv
  exactdice chronica table --player-dice 2""",
)
def chronica():
    pass


@chronica.command(
    help="""Exact odds of one contest: P(win) per side, P(tie), success dice
(count and sizes) and concession dice.

\b
The highest dice are compared; tied sides discard one die of the tied value per pool
(a pool discards its smallest die of that value) until one side alone holds the top.
Success dice are the winner's dice above every loser's highest die; concessions compare
the winner with each loser once the success dice are set aside.

\b
JSON keys: win (one per side), tie, successes (winner -> count -> "p/q"),
success_sizes (winner -> "d12,d8" -> "p/q"), concessions (side -> count -> "p/q")."""
)
@parameter_options(PARAMETERS)
@display_options
@json_option
def contest(as_json, display, **values):
    parsed, target_size, rules = _setup(**values)
    result = solve_contest(parsed, rules, target_size)
    if as_json:
        emit_json(result.to_json())
        return
    click.echo(f"Rules: {rules.describe()}" + (f"; target d{target_size}" if target_size else ""))
    for index, side in enumerate(result.rolled_sides):
        click.echo(f"  side {index}: {side_text(side)}")
    click.echo("")
    for index, p in enumerate(result.win):
        click.echo(f"P(side {index} wins)   {display.probability(p)}")
    click.echo(f"P(tie)            {display.probability(result.tie)}")
    click.echo(f"expected success dice  {display.expectation(result.expected_successes())}")
    for winner, table in result.successes.items():
        click.echo(f"\nSide {winner} wins with n success dice:")
        for count, p in table.items():
            click.echo(f"  {count:>3}  {display.probability(p)}")
        click.echo(f"  most likely success dice sizes of side {winner}:")
        ranked = sorted(result.success_sizes[winner].items(), key=lambda item: -item[1])
        shown = ranked if display.exact else ranked[:8]
        for sizes, p in shown:
            click.echo(f"    {sizes_text(sizes):<20} {display.probability(p)}")
        if len(ranked) > len(shown):
            click.echo(f"    ... {len(ranked) - len(shown)} more (all with --exact or --json)")
    click.echo("\nConcession dice gained:")
    for side, table in result.concessions.items():
        parts = ", ".join(f"{count}: {percent_text(p, display.significant)}" for count, p in table.items())
        click.echo(f"  side {side}: {parts}")


@chronica.command(
    help="""Simulate contests by rolling every die (independent of the exact model).

\b
CSV columns (one row per trial, header row first):
  winner          side index (0, 1, ...) or "tie"
  successes       number of success dice of the winner (0 on a tie)
  success_sizes   their sizes, largest first, e.g. "d12,d8" (empty on a tie)
  concessions_<i> concession dice side i gains
  pushes          how many times the contest was pushed
Without --out, prints the observed winner frequencies."""
)
@parameter_options(PARAMETERS)
@click.option("--n", "n", type=int, default=100_000, show_default=True, help="Number of trials.")
@click.option("--seed", type=click.IntRange(min=0), default=7, show_default=True, help="Seed of the PCG64 generator.")
@click.option(
    "--out",
    type=OutputFile(allow_dash=True),
    default=None,
    help="Write every trial to this CSV file, or - for standard output.",
)
@json_option
def simulate(n, seed, out, as_json, **values):
    trials = n
    if as_json and out == "-":
        raise InputError("--json", "and --out - would both print to standard output; give --out a file name")
    parsed, target_size, rules = _setup(**values)
    rows = simulate_rows(parsed, rules, target_size, n=n, seed=seed)
    if out:
        write_csv(rows, out, len(parsed))
    observed = summarise(rows, len(parsed))
    if as_json:
        emit_json(
            {
                "trials": trials,
                "seed": seed,
                "out": out,
                "columns": columns(len(parsed)),
                "winner_frequencies": observed,
            }
        )
        return
    aside = out == "-"  # the CSV is on standard output: the summary goes to stderr
    if out:
        click.echo(f"Wrote {trials} trials to {out} (columns: {', '.join(columns(len(parsed)))})", err=aside)
    for key, frequency in observed.items():
        label = "tie" if key == "tie" else f"side {key} wins"
        click.echo(f"  {label:<12} {frequency * 100:.3g} %", err=aside)


def _attach_shared_commands():
    """The table, rules and design commands live with the other systems' ones."""
    from exactdice.cli.rules import attach_shared_commands
    from exactdice.cli.system_design import chronica_design
    from exactdice.cli.table_commands import chronica_table

    attach_shared_commands(chronica, "chronica", table=chronica_table, design=chronica_design)


_attach_shared_commands()
