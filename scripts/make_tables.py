#!/usr/bin/env python
"""Generate the canonical printable tables of every system into ``tables/<system>/``.

Every table set is written in every format (md, csv, json, html, pdf, png) as
``tables/<system>/<name>.<format>``, and ``tables/README.md`` lists each set with what it
is and the ``exactdice`` command that makes the same file. The tables are solved through
the results store (``--store``, default ``$EXACTDICE_STORE`` or
``~/.cache/exactdice/results.sqlite``) on every core, so an interrupted run resumes and a
re-run only re-renders. md, csv, json and html come out byte-identical on a re-run; pdf
and png differ at most in metadata.

Usage::

    python scripts/make_tables.py                       # every set that finishes, all formats
    python scripts/make_tables.py --systems karst,contingency --no-cache
    python scripts/make_tables.py --systems karbon --karbon-policies optimal --cell-seconds 30
    python scripts/make_tables.py --sensitivity --systems contingency   # rules sensitivity tables only

With no arguments it makes only the exact sets: Karbon's tables with both sides optimal
(millions of states a cell on the default pool) are made only when asked for with
``--karbon-policies optimal`` (or ``fixed,optimal``), and as certified bounds: each cell
gets ``--cell-seconds`` of bounded value iteration (`exactdice.karbon.bounds`) and stops
early at gap ``--precision``; its cells resume from the store like any other (the budget
and precision are part of their key).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from exactdice.errors import InputError
from exactdice.karbon.system import TABLE_POLICIES
from exactdice.karbon.tables import bounded_grid
from exactdice.systems import TableSet, get_system, system_names
from exactdice.tables.export import FORMATS, write_table
from exactdice.tables.jobs import solve_table_jobs
from exactdice.tables.sweep import SweepStatistics, store_and_executor

REPOSITORY = Path(__file__).resolve().parent.parent
#: Karbon's canonical policy pairs (each `TableSet` of Karbon is tagged with its pair's name)
KARBON_POLICIES = tuple(TABLE_POLICIES)
#: the policy pairs made when none are asked for: the ones whose tables finish
DEFAULT_KARBON_POLICIES = ("fixed",)
#: the budget of one bounded cell (seconds) and the gap at which it stops
DEFAULT_CELL_SECONDS = 30.0
DEFAULT_PRECISION = 0.005


def bounded_command(seconds: float, precision: float) -> str:
    """The command that makes Karbon's optimal sets (there is no single ``exactdice`` one)."""
    return (
        f"python scripts/make_tables.py --systems karbon --karbon-policies optimal "
        f"--cell-seconds {seconds:g} --precision {precision:g}"
    )


def as_bounded(table_set: TableSet, seconds: float, precision: float) -> TableSet:
    """A Karbon set with an optimal side, its grids made of certified bounds per cell."""
    grids = []
    for grid in table_set.jobs:
        fixed = {name: value for name, value in grid.arguments.items() if name not in ("player", "narrator", "rules")}
        grids.append(
            bounded_grid(
                grid.row_argument,
                [value for _, value in grid.rows],
                grid.column_argument,
                [value for _, value in grid.columns],
                fixed,
                seconds=seconds,
                precision=precision,
                player=grid.arguments["player"],
                narrator=grid.arguments["narrator"],
                rules=grid.arguments["rules"],
            )
        )
    return dataclasses.replace(
        table_set,
        jobs=tuple(grids),
        command=bounded_command(seconds, precision),
        description=table_set.description.replace(
            "P(win), P(tie), P(loss) and expected rounds",
            "certified bounds on the value of optimal play, with the returned strategy's exact P(win), P(tie), P(loss)",
        ),
    )


def canonical_sets(
    systems=None,
    karbon_policies=DEFAULT_KARBON_POLICIES,
    *,
    cell_seconds: float = DEFAULT_CELL_SECONDS,
    precision: float = DEFAULT_PRECISION,
) -> list[TableSet]:
    """The canonical table sets of the registered systems (all, or those named); of Karbon's,
    those of ``karbon_policies`` (by default the fixed pair); the optimal pair's as bounds
    (`as_bounded`: ``cell_seconds`` a cell, stopping at gap ``precision``)."""
    sets = []
    for name in systems or system_names():
        for table_set in get_system(name).table_sets():
            if table_set.tags and not set(table_set.tags) & set(karbon_policies):
                continue  # a policy pair not asked for
            if "optimal" in table_set.tags:
                table_set = as_bounded(table_set, cell_seconds, precision)
            sets.append(table_set)
    return sets


def _check_systems(systems) -> None:
    with_tables = [name for name in system_names() if get_system(name).table_sets()]
    for system in systems:
        if system not in with_tables:
            raise InputError(
                "--systems", f"no canonical tables for {system!r} yet (available: {', '.join(with_tables)})"
            )


def _write_set(arguments) -> list[str]:
    grids, folder, name, formats = arguments
    written = []
    for fmt in formats:
        path = Path(folder) / f"{name}.{fmt}"
        write_table(grids, fmt, path)
        written.append(str(path))
    return written


def bounds_reached(json_path: Path) -> str | None:
    """What a written set of bounds reached, read back from its JSON (None: no bounds there).

    Cells whose gap is within the precision asked, the widest gap, and the cells whose
    lower bound is the strategy's exact value.
    """
    try:
        tables = json.loads(json_path.read_text(encoding="utf-8"))["tables"]
    except (OSError, ValueError, KeyError):
        return None
    from fractions import Fraction

    from exactdice.tables.grid import cell_from_data

    cells = [
        cell_from_data(value)
        for table in tables
        for metric in table["metrics"][:1]
        if metric.get("bounds")
        for row in metric["exact"]
        for value in row
    ]
    if not cells:
        return None
    exact_odds = [
        value
        for table in tables
        for metric in table["metrics"][1:2]
        for row in metric["exact"]
        for value in row
        if value is not None
    ]
    precision = Fraction(tables[0]["legend"].get("precision asked", "0"))
    gaps = [cell.gap for cell in cells]
    within = sum(gap <= precision for gap in gaps)
    return (
        f"{within} of {len(cells)} cells within gap {float(precision):g}; widest gap "
        f"{float(max(gaps)):.3f}, median {float(sorted(gaps)[len(gaps) // 2]):.3f}; lower bound "
        f"the strategy's exact value in {len(exact_odds)} cells"
    )


def _readme(sets: list[TableSet], missing: list[TableSet], out: Path) -> str:
    lines = [
        "# Printable tables",
        "",
        "The canonical difficulty tables of every system, made by `scripts/make_tables.py`",
        "(`python scripts/make_tables.py` regenerates every exact set; `--systems karst`",
        "one system; `--karbon-policies optimal` Karbon's tables with both sides optimal, as",
        "certified bounds; `--no-cache` ignores the results store). Every value is exact: the `.json`",
        "and `.csv` files hold each cell as a fraction `p/q` with its decimal; `.md`, `.html`",
        "(for printing: one table a page), `.pdf` and `.png` (a heatmap) show percentages.",
        "A file holds the headline metric first and the other metrics after it. The `.html`,",
        "`.pdf` and `.png` shade each table on its own continuous scale: diverging around 50%",
        "(red below, blue above) where its probabilities lie on both sides of 50%, else from",
        "lightest at its smallest value to darkest at its largest; the key under each table",
        "says which, and 50% and above is printed bold.",
        "",
        "Karbon with both sides optimal is too large to solve exactly on the default pool",
        "(millions of states a cell), so its sets (`*_optimal`) hold certified bounds: a cell",
        '"a-b" means no play of the player does better than b and the returned strategy',
        'guarantees a against every narrator reply (README, "Optimal play past exact reach").',
        "Each cell got a fixed time budget on a shared machine; the gap reached is listed per",
        "set below, and the JSON/CSV hold both ends exactly (a float bound as its exact value).",
        "",
        "Each set below exists as `<name>.md`, `.csv`, `.json`, `.html`, `.pdf` and `.png`;",
        "the command given makes the same file in any of those formats (choose with the `-o`",
        "suffix or `--format`).",
        "",
    ]
    for system in system_names():
        system_sets = [s for s in sets if s.system == system]
        if not system_sets:
            continue
        lines += [f"## {system}", ""]
        for table_set in system_sets:
            lines.append(f"- `{system}/{table_set.name}.*`: {table_set.description}.")
            reached = bounds_reached(out / system / f"{table_set.name}.json")
            if reached is not None:
                lines += [f"  Reached: {reached}.", f"  Command: `{table_set.command}`"]
            else:
                lines.append(f"  Command: `{table_set.command} -o {system}/{table_set.name}.html`")
        lines.append("")
    if missing:
        lines += [
            "## Not generated yet",
            "",
            "These canonical sets are not in this folder yet; `python scripts/make_tables.py "
            "--systems karbon --karbon-policies optimal` makes them as certified bounds, "
            "resuming from the results store:",
            "",
        ]
        lines += [f"- `{table_set.system}/{table_set.name}.*`: {table_set.description}." for table_set in missing]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--systems", default=",".join(system_names()), help="comma-separated systems to generate (default: all four)"
    )
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated formats (default: all)")
    parser.add_argument(
        "--out", default=str(REPOSITORY / "tables"), help="output folder (default: tables/ of the repository)"
    )
    parser.add_argument("--no-cache", action="store_true", help="bypass the results store")
    parser.add_argument("--store", default=None, help="results store file (SQLite)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--karbon-policies",
        default=",".join(DEFAULT_KARBON_POLICIES),
        help="Karbon policy pairs to tabulate: fixed, optimal or both (default: "
        "fixed; optimal is too large to solve exactly on the default pool and "
        "is tabulated as certified bounds)",
    )
    parser.add_argument(
        "--cell-seconds",
        type=float,
        default=DEFAULT_CELL_SECONDS,
        help="optimal sets: seconds of bounded search a cell, wall clock (default "
        f"{DEFAULT_CELL_SECONDS:g}; with 150 cells and 2 workers about 40 minutes)",
    )
    parser.add_argument(
        "--precision",
        type=float,
        default=DEFAULT_PRECISION,
        help=f"optimal sets: a cell stops early at this gap (default {DEFAULT_PRECISION:g})",
    )
    parser.add_argument(
        "--sensitivity",
        action="store_true",
        help="make the rules sensitivity tables (tables/<system>/sensitivity/rules.md "
        "and .json: each reading of the rules against the default) instead of the "
        "difficulty tables",
    )
    options = parser.parse_args(argv)
    if options.workers < 1:
        parser.error(f"--workers must be >= 1, got {options.workers}")
    if not options.cell_seconds > 0:
        parser.error(f"--cell-seconds must be > 0, got {options.cell_seconds:g}")
    if not 0 < options.precision < 1:
        parser.error(f"--precision must be between 0 and 1, got {options.precision:g}")
    try:
        if options.sensitivity:
            return _run_sensitivity(options)
        return _run(options)
    except InputError as error:
        print(f"make_tables: error: {error}", file=sys.stderr)
        return 2


def _names(text: str, field: str, noun: str, allowed) -> list[str]:
    """A comma-separated list of names, each one of ``allowed``."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if name not in allowed:
            raise InputError(field, f"unknown {noun} {name!r} ({', '.join(allowed)})")
    return names


def _announce_bounds(sets: list[TableSet], options) -> None:
    cells = sum(len(grid.rows) * len(grid.columns) for s in sets if "optimal" in s.tags for grid in s.jobs)
    if cells:
        # a cell takes its budget, then up to half of it again for the exact check of its strategy
        minutes = cells * options.cell_seconds * 1.6 / options.workers / 60
        print(
            f"make_tables: Karbon with both sides optimal is made as certified bounds: {cells} cells "
            f"of {options.cell_seconds:g} s each plus the exact check of each strategy, up to about "
            f"{minutes:.0f} minutes on {options.workers} workers; Ctrl-C stops, the results store "
            "keeps what is done",
            file=sys.stderr,
        )


def _write_sets(sets: list[TableSet], per_job, out: Path, formats, workers: int) -> list[str]:
    tasks, position = [], 0
    for table_set in sets:
        grids = [grid for grids in per_job[position : position + len(table_set.jobs)] for grid in grids]
        position += len(table_set.jobs)
        folder = out / table_set.system
        folder.mkdir(parents=True, exist_ok=True)
        tasks.append((grids, str(folder), table_set.name, formats))
    if workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=workers) as executor:
            return [path for paths in executor.map(_write_set, tasks) for path in paths]
    return [path for task in tasks for path in _write_set(task)]


def _run(options) -> int:
    started = time.perf_counter()
    systems = [name.strip() for name in options.systems.split(",") if name.strip()]
    formats = _names(options.formats, "--formats", "format", FORMATS)
    _check_systems(systems)
    karbon_policies = _names(options.karbon_policies, "--karbon-policies", "policy pair", KARBON_POLICIES)
    sets = canonical_sets(systems, karbon_policies, cell_seconds=options.cell_seconds, precision=options.precision)
    _announce_bounds(sets, options)
    jobs = [job for table_set in sets for job in table_set.jobs]

    statistics = SweepStatistics()
    with store_and_executor(options.store, no_cache=options.no_cache) as (store, _local):
        per_job = solve_table_jobs(
            jobs,
            store=store,
            workers=options.workers,
            progress=not options.no_progress,
            description="solving",
            statistics=statistics,
        )
    solved_at = time.perf_counter()
    out = Path(options.out)
    written = _write_sets(sets, per_job, out, formats, options.workers)

    # the README lists every canonical set present in the folder, made now or before
    canonical = canonical_sets(
        karbon_policies=KARBON_POLICIES, cell_seconds=options.cell_seconds, precision=options.precision
    )
    present = [
        table_set
        for table_set in canonical
        if any((out / table_set.system / f"{table_set.name}.{fmt}").exists() for fmt in FORMATS)
    ]
    missing = [table_set for table_set in canonical if table_set not in present]
    (out / "README.md").write_text(_readme(present, missing, out) + _sensitivity_readme(out), encoding="utf-8")
    finished = time.perf_counter()
    print(
        f"{len(jobs)} table jobs: {statistics.cached} from the store, {statistics.solved} solved "
        f"in {solved_at - started:.1f} s; wrote {len(written)} files in "
        f"{finished - solved_at:.1f} s; total {finished - started:.1f} s"
    )
    return 0


# ----- rules sensitivity tables -------------------------------------------------------------

#: system -> the module whose ``rules_sensitivity()`` describes its canonical comparison
SENSITIVITY_MODULES = {
    "karbon": "exactdice.karbon.sensitivity",
    "contingency": "exactdice.contingency.sensitivity",
    "chronica": "exactdice.chronica.sensitivity",
    "karst": "exactdice.karst.sensitivity",
}
_SENSITIVITY_HEADING = "## Rules sensitivity tables"


def _sensitivity_readme(out: Path) -> str:
    """The README section listing the sensitivity tables present in *out*."""
    from exactdice.tables.sensitivity import FOLDER, FORMAT, STEM

    present = [system for system in SENSITIVITY_MODULES if (out / system / FOLDER / f"{STEM}.json").exists()]
    if not present:
        return ""
    lines = [
        "",
        _SENSITIVITY_HEADING,
        "",
        "What each reading of a system's rules changes: every other value of every knob against",
        "the default reading, over the system's canonical grid. For each reading and probability:",
        "how many cells move by more than 1 percentage point, and the largest move (which cell,",
        f"from what to what). `{FOLDER}/{STEM}.md` shows percentages; `{FOLDER}/{STEM}.json`",
        f"(`{FORMAT}`) holds every value as an exact fraction `p/q`. Made by",
        "`python scripts/make_tables.py --sensitivity [--systems NAME]` (through the results",
        "store; Karbon's cells are the contests of `exactdice karbon sensitivity`).",
        "",
    ]
    for system in present:
        document = json.loads((out / system / FOLDER / f"{STEM}.json").read_text(encoding="utf-8"))
        lines.append(f"- `{system}/{FOLDER}/{STEM}.*`: {document['grid']}.")
    return "\n".join(lines) + "\n"


def _run_sensitivity(options) -> int:
    """Make ``tables/<system>/sensitivity/rules.md`` and ``.json`` for the systems asked for."""
    import importlib

    from exactdice.tables.sensitivity import rules_sensitivity_table, write_sensitivity

    systems = [name.strip() for name in options.systems.split(",") if name.strip()]
    for system in systems:
        if system not in SENSITIVITY_MODULES:
            raise InputError(
                "--systems", f"no sensitivity table for {system!r} (available: {', '.join(SENSITIVITY_MODULES)})"
            )
    out = Path(options.out)
    with store_and_executor(options.store, no_cache=options.no_cache) as (store, _local):
        for system in systems:
            spec = importlib.import_module(SENSITIVITY_MODULES[system]).rules_sensitivity()
            table = rules_sensitivity_table(
                spec, store=store, workers=options.workers, progress=not options.no_progress
            )
            written = write_sensitivity(table, out / system)
            print(
                f"{system}: {len(spec.readings) - 1} readings against the default in "
                f"{table.seconds:.1f} s; wrote {', '.join(written)}"
            )
    readme = out / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    text = text.split("\n" + _SENSITIVITY_HEADING)[0].rstrip("\n") + "\n"
    readme.write_text(text + _sensitivity_readme(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
