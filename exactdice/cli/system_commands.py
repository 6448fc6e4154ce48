"""``exactdice <system> exact|simulate|table`` for any registered system, from its declaration.

A system registered in `exactdice.systems` without a hand-made command module (the four
built-in systems have richer ones) still gets a command group: ``exact`` prints the exact
outcome distribution, ``simulate`` plays seeded trials (CSV with ``--out``), ``table``
writes its canonical tables in any format. ``exactdice validate <system>`` comes from the
same declaration (`exactdice.cli.validate`).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import click

from exactdice.cli.common import (
    CommandGroup,
    OutputFile,
    display_options,
    emit_json,
    fraction_text,
    given_values,
    json_option,
    parameter_options,
    write_csv_rows,
)
from exactdice.cli.table_commands import produce_tables, table_output_options
from exactdice.core.display import percent_text
from exactdice.systems import split_values

__all__ = ["system_group"]


def system_group(system) -> click.Group:
    """The command group of one registered system (no variants).

    >>> from exactdice.systems import get_system
    >>> sorted(system_group(get_system("contingency")).commands)
    ['exact', 'simulate', 'table']
    """
    group = CommandGroup(name=system.name, help=f"{system.summary} (Commands made from its declared parameters.)")
    group.add_command(_exact_command(system))
    group.add_command(_simulate_command(system))
    group.add_command(_table_command(system))
    return group


def _built(system, values):
    setup_part, rules_part = split_values(system, values)
    rules = system.rules(rules_part)
    return system.setup(setup_part), rules


def _exact_command(system) -> click.Command:
    @parameter_options(system.parameters)
    @display_options
    @json_option
    def exact(as_json, display, **values):
        from exactdice.answers.systems import system_answer

        answer = system_answer(system.name, given_values(values))
        column = system.outcome_column(system.setup(given_values(values)))
        if as_json:
            emit_json(
                {
                    "system": system.name,
                    "column": column,
                    "probabilities": {outcome: fraction_text(p) for outcome, p in answer.outcomes.items()},
                }
            )
            return
        click.echo(f"{system.name}: exact P({column})")
        for outcome, p in answer.outcomes.items():
            click.echo(f"  {outcome:<12} {display.probability(p)}")

    return click.command("exact", help=f"Exact outcome distribution. {system.summary}")(exact)


def _simulate_command(system) -> click.Command:
    @parameter_options(system.parameters)
    @click.option("--n", "n", type=int, default=100_000, show_default=True, help="Number of trials.")
    @click.option("--seed", type=click.IntRange(min=0), default=7, show_default=True, help="Seed of the generator.")
    @click.option(
        "--out",
        type=OutputFile(allow_dash=True),
        default=None,
        help="Write one CSV row per trial here, or - for standard output (without it, print the outcome shares).",
    )
    def simulate(n, seed, out, **values):
        setup, rules = _built(system, values)
        columns = system.simulate(setup, rules, n, seed)
        if out is not None:
            names = list(columns)
            rows = [dict(zip(names, values)) for values in zip(*(list(columns[name]) for name in names))]
            write_csv_rows(out, names, rows)
            click.echo(f"wrote {n} trials to {out}", err=True)
            return
        column = system.outcome_column(setup)
        counts = Counter(str(value) for value in columns[column])
        click.echo(f"simulated {n} trials of {system.name} (seed {seed}), column {column!r}:")
        for outcome, count in sorted(counts.items()):
            click.echo(f"  {outcome:<12} {count:>9}  {percent_text(Fraction(count, n))}")

    return click.command("simulate", help="Simulate trials with seeded dice, independently of the exact model.")(
        simulate
    )


def _table_command(system) -> click.Command:
    @table_output_options
    def table(output_options):
        jobs = [job for table_set in system.table_sets() for job in table_set.jobs]
        produce_tables(jobs, **output_options)

    return click.command("table", help="The system's canonical tables.")(table)
