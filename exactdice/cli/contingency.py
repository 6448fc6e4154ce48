"""``exactdice contingency``: exact Contingency skill checks and their simulator."""

from __future__ import annotations

from fractions import Fraction

import click

from exactdice.cli.common import (
    CommandGroup,
    OutputFile,
    display_options,
    emit_json,
    json_option,
    parameter_options,
    write_csv_rows,
)
from exactdice.contingency.check import OUTCOMES, choose_to_fail, solve_check, validate
from exactdice.contingency.simulate import COLUMNS, simulate as simulate_columns, simulate_rows
from exactdice.contingency.system import PARAMETERS, SYSTEM, build_check
from exactdice.core.display import percent_text
from exactdice.systems import split_values

__all__ = ["contingency"]


def _build(**values):
    """(skill check, rules) from the options declared in `exactdice.contingency.system`."""
    setup, rules = split_values(SYSTEM, values)
    rules = SYSTEM.rules(rules)  # the knobs are checked first
    return build_check(setup), rules


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
def contingency():
    """Contingency skill checks: the middle of three dice, luck dice, omens.

    Sorting is by modified face, ties by die size (smaller first). Every
    probability is exact: percentages first, the fraction beside them (all of it
    with --exact); --json gives "p/q" strings with a decimal mirror.
    """


@contingency.command()
@parameter_options(PARAMETERS)
@display_options
@click.option(
    "--plot",
    "plot_path",
    type=OutputFile(),
    help="Also draw P(success) against difficulty to this PNG (the check's own difficulty marked).",
)
@json_option
def check(as_json, display, plot_path, **setup):
    """Exact odds of one skill check.

    \b
    Prints P(success / success-with-condition / failure) (with --difficulty),
    P(success) at every difficulty, the final total, player and moderator
    omens (over every die, the luck die included), the result die's size, and
    the moderator's omens for choosing to fail instead.

    \b
    Example:  exactdice contingency check --dice d6,d8,d10 --difficulty 6 --luck if-failing
    Picture:  exactdice contingency check --dice d6,d8,d10 --difficulty 6 --plot odds.png
    JSON keys: outcome, total, player_omens, gm_omens, result_die, expected_player_omens,
    expected_gm_omens, joint, p_at_least, p_at_least_with_condition (plus setup, rules).
    """
    if plot_path:
        from exactdice.tables.charts import check_png_path

        check_png_path(plot_path, "--plot")
    skill, rules = _build(**setup)
    solution = solve_check(skill, rules)
    if plot_path:
        from exactdice.contingency.charts import success_chart
        from exactdice.tables.charts import chart_png, write_chart_png

        write_chart_png(chart_png(success_chart(solution)), plot_path, "--plot")
        click.echo(f"wrote P(success) by difficulty to {plot_path}", err=True)
    if as_json:
        emit_json(solution.to_json())
        return
    click.echo(f"Contingency check: {skill.describe()}")
    click.echo(f"rules: {rules.describe()}")
    if skill.difficulty is not None:
        for name, p in solution.outcome_probabilities().items():
            click.echo(f"  {'P(' + name + ')':<28}{display.probability(p)}")
    click.echo("\nP(success) by difficulty, and P(success, with a condition allowed):")
    rows = [
        [
            str(level),
            percent_text(p, display.significant),
            display.fraction_cell(p),
            percent_text(solution.p_at_least_with_condition[level], display.significant),
            display.fraction_cell(solution.p_at_least_with_condition[level]),
        ]
        for level, p in solution.p_at_least.items()
    ]
    for line in display.table(["difficulty", "success", "exact", "with condition", "exact"], rows):
        click.echo("  " + line)
    click.echo("\nfinal total:")
    click.echo(_indent("\n".join(display.distribution(solution.total))))
    for label, distribution in (("player omens", solution.player_omens), ("moderator omens", solution.gm_omens)):
        click.echo(f"\n{label} (expected {display.expectation(distribution.mean())}):")
        for value, p in distribution.probabilities().items():
            click.echo(f"  {value:>3}: {display.probability(p)}")
    click.echo("\nresult die:")
    for size, p in solution.result_die.probabilities().items():
        click.echo(f"  d{size}: {display.probability(p)}")
    click.echo(
        f"\nchoosing to fail instead gives the moderator {choose_to_fail(skill.advantage, skill.disadvantage)} omen(s)"
    )


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


@contingency.command()
@parameter_options(PARAMETERS)
@click.option("--n", "n", type=int, default=100_000, show_default=True, help="Number of checks to roll.")
@click.option(
    "--seed", type=click.IntRange(min=0), default=7, show_default=True, help="Seed of numpy's PCG64 generator."
)
@click.option(
    "--out",
    type=OutputFile(allow_dash=True),
    default=None,
    help="Write one CSV row per check here, or - for standard output (without it, print a summary).",
)
def simulate(n, seed, out, **setup):
    """Roll skill checks with real (pseudo-random) dice, independently of the exact model.

    \b
    CSV columns (one row per check):
      trial         0-based trial number
      faces         modified faces of the pool in the order given, ';'-separated
      result_die    size of the result die, like d8
      result_face   the result die's modified face
      luck_face     the luck die's face (empty when none was rolled)
      total         result face plus luck face
      outcome       success | success-with-condition | failure (empty without --difficulty)
      player_omens  player omens over every die rolled (luck die included)
      gm_omens      moderator omens over every die rolled
    `exactdice validate contingency --samples FILE.csv` compares the outcome column with the exact odds.
    """
    skill, rules = _build(**setup)
    validate(skill, rules)  # the same input checks as the exact model
    if out is not None:
        rows = simulate_rows(skill, rules, n=n, seed=seed)
        write_csv_rows(out, COLUMNS, rows)
        click.echo(f"wrote {n} checks to {out}", err=True)
        return
    arrays = simulate_columns(skill, rules, n=n, seed=seed)
    click.echo(f"simulated {n} checks ({skill.describe()}; {rules.describe()}; seed {seed})")
    if skill.difficulty is not None:
        for name in OUTCOMES:
            share = int((arrays["outcome"] == name).sum())
            click.echo(f"  {name:<24} {share:>9}  {percent_text(Fraction(share, n))}")
    click.echo(f"  mean total         {float(arrays['total'].mean()):.6f}")
    click.echo(f"  mean player omens  {float(arrays['player_omens'].mean()):.6f}")
    click.echo(f"  mean gm omens      {float(arrays['gm_omens'].mean()):.6f}")


def _attach_shared_commands():
    """The table, rules and design commands live with the other systems' ones."""
    from exactdice.cli.rules import attach_shared_commands
    from exactdice.cli.system_design import contingency_design
    from exactdice.cli.table_commands import contingency_table

    attach_shared_commands(contingency, "contingency", table=contingency_table, design=contingency_design)


_attach_shared_commands()
