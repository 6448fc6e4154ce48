"""``exactdice <system> table``: printable difficulty tables, and the options they share.

`table_output_options` adds ``--format``, ``-o/--output``, ``--no-cache``, ``--store`` and
``--workers`` to a click command; `produce_tables` solves `TableJob`s and `CellGrid`s through
the results store on every core and writes the grids in the chosen format. The commands
`contingency_table`, `chronica_table` and `karst_table` are attached to their system
groups by those groups (``group.add_command(contingency_table, "table")``).

Formats: md (default, to stdout), csv, json (exact ``p/q`` and decimals), html (for
printing), pdf, png (a heatmap). Without ``--format`` the format comes from the suffix of
``-o``. Solved tables are kept in an SQLite store (default
``~/.cache/exactdice/results.sqlite``, or ``$EXACTDICE_STORE``), so a re-run is instant.
"""

from __future__ import annotations

import functools
import os
from functools import wraps

import click

from exactdice.cli.common import OutputFile, given_values, parameter_options, terminal_bars
from exactdice.contingency.tables import ROLL_KINDS
from exactdice.karst.tables import TABLES as KARST_TABLES
from exactdice.errors import InputError
from exactdice.tables.export import FORMATS, TEXT_FORMATS, format_from_path, render_table, write_table
from exactdice.systems import get_system
from exactdice.tables.jobs import solve_tables
from exactdice.tables.store import STORE_ENVIRONMENT_VARIABLE
from exactdice.tables.sweep import store_and_executor

__all__ = [
    "table_output_options",
    "produce_tables",
    "contingency_table",
    "chronica_table",
    "karst_table",
    "DEFAULT_WORKERS",
]

# the table jobs themselves live with their systems (``exactdice/<system>/tables.py``)

#: one worker process per core, at most two (the project's machines have two)
DEFAULT_WORKERS = max(1, min(2, os.cpu_count() or 1))

_FORMAT_HELP = """\b
Output: --format md|csv|json|html|pdf|png (default: from the -o suffix, else md);
md, csv, json and html go to stdout without -o; pdf and png need -o FILE.
csv has one row per cell (columns table, metric, row_axis, row, column_axis, column,
exact, decimal); json holds every metric as exact "p/q" strings and decimals."""


scheduler_option = click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Solve the cells on the Dask cluster whose scheduler is at ADDRESS (e.g. "
    "tcp://10.0.0.5:8786; needs pip install 'exactdice[cluster]'); default: local processes.",
)


def table_output_options(function):
    """Add --format, -o/--output, --no-cache, --store, --workers and --scheduler to a table command.

    The command receives them as ``output_options`` (a dict), to pass to `produce_tables`.
    """

    @click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS, case_sensitive=False),
        default=None,
        help="Output format (default: from the -o suffix, else md).",
    )
    @click.option(
        "-o",
        "--output",
        type=OutputFile(allow_dash=True),
        default=None,
        help="Write to this file (default: stdout for md/csv/json/html).",
    )
    @click.option("--no-cache", is_flag=True, help="Solve everything afresh; neither read nor write the results store.")
    @click.option(
        "--store",
        "store_path",
        type=OutputFile(),
        default=None,
        help=f"Results store (SQLite) to use [default: ${STORE_ENVIRONMENT_VARIABLE}, "
        "else ~/.cache/exactdice/results.sqlite].",
    )
    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=DEFAULT_WORKERS,
        show_default=True,
        help="Processes solving tables in parallel.",
    )
    @scheduler_option
    @wraps(function)
    def wrapper(*args, fmt, output, no_cache, store_path, workers, scheduler, **kwargs):
        output_options = {
            "fmt": fmt,
            "output": output,
            "no_cache": no_cache,
            "store_path": store_path,
            "workers": workers,
            "scheduler": scheduler,
        }
        return function(*args, output_options=output_options, **kwargs)

    return wrapper


def produce_tables(
    jobs, *, fmt=None, output=None, no_cache=False, store_path=None, workers=DEFAULT_WORKERS, scheduler=None
) -> list:
    """Solve the tables (through the store unless *no_cache*) and write them as asked.

    *jobs*: a list of `TableJob`/`CellGrid`, or a function solving the grids itself
    (``solve(store=, workers=, executor=, progress=)``, a library entry point). Returns the
    grids; progress is drawn on stderr when it is a terminal.
    """
    if fmt and output not in (None, "-"):
        _refuse_a_contradicting_suffix(output, fmt)
    fmt = format_from_path(output, fmt)
    if output in (None, "-") and fmt not in TEXT_FORMATS:
        raise InputError("--output", f"{fmt} is a binary format: give -o FILE.{fmt}")
    solve = jobs if callable(jobs) else functools.partial(solve_tables, jobs)
    bars = terminal_bars()
    try:
        with store_and_executor(store_path, no_cache=no_cache, scheduler=scheduler) as (store, executor):
            grids = solve(store=store, workers=workers, executor=executor, progress=bars or False)
    finally:
        if bars is not None:
            bars.close()
    if output in (None, "-"):
        click.echo(render_table(grids, fmt), nl=False)
    else:
        write_table(grids, fmt, output)
        click.echo(f"wrote {len(grids)} table(s) as {fmt} to {output}", err=True)
    return grids


def _refuse_a_contradicting_suffix(output, fmt: str) -> None:
    """``-o out.pdf --format csv`` would write CSV into a file named .pdf: an error. A name
    whose suffix names no format (``out.txt``) takes the format given."""
    try:
        named = format_from_path(output)
    except InputError:
        return
    if named != fmt.lower():
        raise InputError(
            "--format",
            f"{fmt.lower()} contradicts the file name {output!r} ({named}); drop "
            f"--format or name the file .{fmt.lower()}",
        )


# ----- Contingency ------------------------------------------------------------------------


@click.command(
    "table",
    help=f"""Contingency difficulty tables: P(success) for every 3-die pool.

\b
Rows: the 35 pools of three dice from d4, d6, d8, d10, d12; columns: the named
difficulties of the rules (1 Automatic .. 11 Near Impossible); one table per roll
kind (normal, advantage, disadvantage). Each table also holds
P(success or success-with-condition).

\b
Example:  exactdice contingency table --kind advantage --luck if-failing -o adv.html

{_FORMAT_HELP}""",
)
@click.option(
    "--kind",
    "kinds",
    type=click.Choice(tuple(ROLL_KINDS)),
    multiple=True,
    help="Roll kind(s) to tabulate (repeatable) [default: all three].",
)
@parameter_options(get_system("contingency").parameters, roles=("rules",), skip=("any_size",))
@table_output_options
def contingency_table(kinds, output_options, **rules):
    from exactdice.contingency.tables import table_jobs

    produce_tables(
        table_jobs(get_system("contingency").rules(given_values(rules)), kinds or tuple(ROLL_KINDS)), **output_options
    )


# ----- Karst ------------------------------------------------------------------------------


@click.command(
    "table",
    help=f"""Karst tables: action success, attack hit chance, death-roll odds.

\b
action: P(success) of d6 + modifier >= 6 for modifiers -5..+5;
attack: P(hit) for attack modifier -2..+10 (rows) x defense 8..20 (columns);
death:  P(death) and expected rounds by negative health 0..6 (rows) x aid
        actions per round 0..2 (columns), with the death roll's --modifier.

\b
Example:  exactdice karst table --table death --modifier 1 -o death.pdf

{_FORMAT_HELP}""",
)
@click.option(
    "--table",
    "tables",
    type=click.Choice(tuple(KARST_TABLES)),
    multiple=True,
    help="Which table(s) (repeatable) [default: all three].",
)
@click.option(
    "--modifier", type=int, default=0, show_default=True, help="Modifier added to the death roll (death table only)."
)
@table_output_options
def karst_table(tables, modifier, output_options):
    from exactdice.karst.tables import table_jobs

    produce_tables(table_jobs(tables or tuple(KARST_TABLES), death_modifier=modifier), **output_options)


# ----- Chronica ---------------------------------------------------------------------------


@click.command(
    "table",
    help=f"""Chronica difficulty tables: a player pool against static oppositions.

\b
Rows: player pools of --player-dice dice from d4, d6, d8, d10, d12; columns:
oppositions of three equal dice (3d4 ... 3d12). Each table holds P(win) of the
player, P(tie) and the expected number of the player's success dice. One table
per --player-dice value (default: two and three dice).

\b
Example:  exactdice chronica table --player-dice 3 --tie-rule four-ties -o three.pdf

{_FORMAT_HELP}""",
)
@click.option(
    "--player-dice",
    "player_dice",
    type=click.IntRange(1, 4),
    multiple=True,
    help="Dice in the player's pool, 1-4 (repeatable) [default: 2 and 3].",
)
@parameter_options(get_system("chronica").parameters, roles=("rules",))
@table_output_options
def chronica_table(player_dice, output_options, **rules):
    from exactdice.chronica.tables import table_jobs

    produce_tables(
        table_jobs(get_system("chronica").rules(given_values(rules)), player_dice or (2, 3)), **output_options
    )
