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

import os
import sys
from functools import wraps

import click

from exactdice.chronica.ruleset import TIE_RULES
from exactdice.contingency.ruleset import FAIL_BY_ONE_POLICIES, GM_OMEN_RULES, LUCK_POLICIES
from exactdice.cli.common import OutputFile
from exactdice.contingency.tables import ROLL_KINDS
from exactdice.karst.tables import TABLES as KARST_TABLES
from exactdice.errors import InputError
from exactdice.tables.export import FORMATS, TEXT_FORMATS, format_from_path, render_table, write_table
from exactdice.tables.jobs import CellGrid, TableJob, solve_tables
from exactdice.tables.store import STORE_ENVIRONMENT_VARIABLE
from exactdice.tables.sweep import store_and_executor

__all__ = ["table_output_options", "produce_tables", "contingency_table", "chronica_table",
           "karst_table", "DEFAULT_WORKERS"]

# the table jobs themselves live with their systems (``exactdice/<system>/tables.py``)

#: one worker process per core, at most two (the project's machines have two)
DEFAULT_WORKERS = max(1, min(2, os.cpu_count() or 1))

_FORMAT_HELP = """\b
Output: --format md|csv|json|html|pdf|png (default: from the -o suffix, else md);
md, csv, json and html go to stdout without -o; pdf and png need -o FILE.
csv has one row per cell (columns table, metric, row_axis, row, column_axis, column,
exact, decimal); json holds every metric as exact "p/q" strings and decimals."""


scheduler_option = click.option(
    "--scheduler", default=None, metavar="ADDRESS",
    help="Solve the cells on the Dask cluster whose scheduler is at ADDRESS (e.g. "
         "tcp://10.0.0.5:8786; needs pip install 'exactdice[cluster]'); default: local processes.")


def table_output_options(function):
    """Add --format, -o/--output, --no-cache, --store, --workers and --scheduler to a table command.

    The command receives them as ``output_options`` (a dict), to pass to `produce_tables`.
    """
    @click.option("--format", "fmt", type=click.Choice(FORMATS, case_sensitive=False), default=None,
                  help="Output format (default: from the -o suffix, else md).")
    @click.option("-o", "--output", type=OutputFile(allow_dash=True), default=None,
                  help="Write to this file (default: stdout for md/csv/json/html).")
    @click.option("--no-cache", is_flag=True,
                  help="Solve everything afresh; neither read nor write the results store.")
    @click.option("--store", "store_path", type=OutputFile(), default=None,
                  help=f"Results store (SQLite) to use [default: ${STORE_ENVIRONMENT_VARIABLE}, "
                       "else ~/.cache/exactdice/results.sqlite].")
    @click.option("--workers", type=click.IntRange(min=1), default=DEFAULT_WORKERS,
                  show_default=True, help="Processes solving tables in parallel.")
    @scheduler_option
    @wraps(function)
    def wrapper(*args, fmt, output, no_cache, store_path, workers, scheduler, **kwargs):
        output_options = {"fmt": fmt, "output": output, "no_cache": no_cache,
                          "store_path": store_path, "workers": workers, "scheduler": scheduler}
        return function(*args, output_options=output_options, **kwargs)

    return wrapper


def produce_tables(jobs: list[TableJob | CellGrid], *, fmt=None, output=None, no_cache=False,
                   store_path=None, workers=DEFAULT_WORKERS, scheduler=None, progress=None) -> list:
    """Solve the jobs (through the store unless *no_cache*) and write them as asked.

    Returns the grids. *progress* None means: a progress bar when stderr is a terminal.
    """
    if fmt and output not in (None, "-"):
        _refuse_a_contradicting_suffix(output, fmt)
    fmt = format_from_path(output, fmt)
    if output in (None, "-") and fmt not in TEXT_FORMATS:
        raise InputError("--output", f"{fmt} is a binary format: give -o FILE.{fmt}")
    if progress is None:
        progress = sys.stderr.isatty()
    with store_and_executor(store_path, no_cache=no_cache, scheduler=scheduler) as (store, executor):
        grids = solve_tables(jobs, store=store, workers=workers, progress=progress, executor=executor)
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
        raise InputError("--format", f"{fmt.lower()} contradicts the file name {output!r} ({named}); drop "
                                     f"--format or name the file .{fmt.lower()}")


# ----- Contingency ------------------------------------------------------------------------

@click.command("table", help=f"""Contingency difficulty tables: P(success) for every 3-die pool.

\b
Rows: the 35 pools of three dice from d4, d6, d8, d10, d12; columns: the named
difficulties of the rules (1 Automatic .. 11 Near Impossible); one table per roll
kind (normal, advantage, disadvantage). Each table also holds
P(success or success-with-condition).

\b
Example:  exactdice contingency table --kind advantage --luck if-failing -o adv.html

{_FORMAT_HELP}""")
@click.option("--kind", "kinds", type=click.Choice(tuple(ROLL_KINDS)), multiple=True,
              help="Roll kind(s) to tabulate (repeatable) [default: all three].")
@click.option("--luck", type=click.Choice(LUCK_POLICIES), default="never", show_default=True,
              help="Luck die policy.")
@click.option("--fail-by-one", type=click.Choice(FAIL_BY_ONE_POLICIES), default="take", show_default=True,
              help="Failing by one: take (success-with-condition) or refuse.")
@click.option("--luck-modifier", is_flag=True, help="Give the luck die the result die's modifier.")
@click.option("--gm-omen", type=click.Choice(GM_OMEN_RULES), default="exactly-1", show_default=True,
              help="Moderator omen faces.")
@table_output_options
def contingency_table(kinds, luck, fail_by_one, luck_modifier, gm_omen, output_options):
    from exactdice.contingency.ruleset import Rules
    from exactdice.contingency.tables import table_jobs

    rules = Rules(luck=luck, fail_by_one=fail_by_one, luck_modifier=luck_modifier, gm_omen=gm_omen)
    produce_tables(table_jobs(rules, kinds or tuple(ROLL_KINDS)), **output_options)


# ----- Karst ------------------------------------------------------------------------------

@click.command("table", help=f"""Karst tables: action success, attack hit chance, death-roll odds.

\b
action: P(success) of d6 + modifier >= 6 for modifiers -5..+5;
attack: P(hit) for attack modifier -2..+10 (rows) x defense 8..20 (columns);
death:  P(death) and expected rounds by negative health 0..6 (rows) x aid
        actions per round 0..2 (columns), with the death roll's --modifier.

\b
Example:  exactdice karst table --table death --modifier 1 -o death.pdf

{_FORMAT_HELP}""")
@click.option("--table", "tables", type=click.Choice(tuple(KARST_TABLES)), multiple=True,
              help="Which table(s) (repeatable) [default: all three].")
@click.option("--modifier", type=int, default=0, show_default=True,
              help="Modifier added to the death roll (death table only).")
@table_output_options
def karst_table(tables, modifier, output_options):
    from exactdice.karst.tables import table_jobs

    produce_tables(table_jobs(tables or tuple(KARST_TABLES), death_modifier=modifier),
                   **output_options)


# ----- Chronica ---------------------------------------------------------------------------

@click.command("table", help=f"""Chronica difficulty tables: a player pool against static oppositions.

\b
Rows: player pools of --player-dice dice from d4, d6, d8, d10, d12; columns:
oppositions of three equal dice (3d4 ... 3d12). Each table holds P(win) of the
player, P(tie) and the expected number of the player's success dice. One table
per --player-dice value (default: two and three dice).

\b
Example:  exactdice chronica table --player-dice 3 --tie-rule four-ties -o three.pdf

{_FORMAT_HELP}""")
@click.option("--player-dice", "player_dice", type=click.IntRange(1, 4), multiple=True,
              help="Dice in the player's pool, 1-4 (repeatable) [default: 2 and 3].")
@click.option("--tie-rule", type=click.Choice(TIE_RULES), default="all-discarded", show_default=True,
              help="See `exactdice chronica contest --help`.")
@click.option("--push/--no-push", default=False, show_default=True,
              help="On a tie, roll the contest again (at most --max-pushes times).")
@click.option("--push-dice", default=None, metavar="DICE",
              help="Dice added to every side's first pool at each push, e.g. 5d6 (needs --push).")
@click.option("--max-pushes", type=int, default=1, show_default=True, help="Most re-rolls with --push.")
@click.option("--physical/--no-physical", default=False, show_default=True,
              help="The player rolls non-physical dice as the nearest smaller physical die.")
@table_output_options
def chronica_table(player_dice, tie_rule, push, push_dice, max_pushes, physical, output_options):
    from exactdice.chronica.ruleset import Rules, parse_dice_list
    from exactdice.chronica.tables import table_jobs

    if not push and (push_dice or max_pushes != 1):
        raise InputError("--push-dice" if push_dice else "--max-pushes", "only matters with --push")
    rules = Rules(tie_rule=tie_rule, push=push, max_pushes=max_pushes, physical=physical,
                  push_dice=parse_dice_list(push_dice, "push_dice") if push_dice else ())
    produce_tables(table_jobs(rules, player_dice or (2, 3)), **output_options)
