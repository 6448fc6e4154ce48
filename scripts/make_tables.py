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
    python scripts/make_tables.py --systems karbon --karbon-policies optimal   # does not finish yet
    python scripts/make_tables.py --sensitivity --systems contingency   # rules sensitivity tables only

With no arguments it makes only the sets that finish: Karbon's tables with both sides
optimal (millions of states a cell on the default pool) are made only when asked for with
``--karbon-policies optimal`` (or ``fixed,optimal``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from exactdice.errors import InputError
from exactdice.karbon.system import TABLE_POLICIES
from exactdice.systems import TableSet, get_system, system_names
from exactdice.tables.export import FORMATS, write_table
from exactdice.tables.jobs import solve_table_jobs
from exactdice.tables.store import open_store
from exactdice.tables.sweep import SweepStatistics

REPOSITORY = Path(__file__).resolve().parent.parent
#: Karbon's canonical policy pairs (each `TableSet` of Karbon is tagged with its pair's name)
KARBON_POLICIES = tuple(TABLE_POLICIES)
#: the policy pairs made when none are asked for: the ones whose tables finish
DEFAULT_KARBON_POLICIES = ("fixed",)


def canonical_sets(systems=None, karbon_policies=DEFAULT_KARBON_POLICIES) -> list[TableSet]:
    """The canonical table sets of the registered systems (all, or those named); of Karbon's,
    those of ``karbon_policies`` (by default the fixed pair: optimal play does not finish)."""
    sets = []
    for name in systems or system_names():
        for table_set in get_system(name).table_sets():
            if table_set.tags and not set(table_set.tags) & set(karbon_policies):
                continue  # a policy pair not asked for
            sets.append(table_set)
    return sets


def _check_systems(systems) -> None:
    with_tables = [name for name in system_names() if get_system(name).table_sets()]
    for system in systems:
        if system not in with_tables:
            raise InputError("--systems", f"no canonical tables for {system!r} yet "
                                          f"(available: {', '.join(with_tables)})")


def _write_set(arguments) -> list[str]:
    grids, folder, name, formats = arguments
    written = []
    for fmt in formats:
        path = Path(folder) / f"{name}.{fmt}"
        write_table(grids, fmt, path)
        written.append(str(path))
    return written


def _readme(sets: list[TableSet], missing: list[TableSet]) -> str:
    lines = [
        "# Printable tables",
        "",
        "The canonical difficulty tables of every system, made by `scripts/make_tables.py`",
        "(`python scripts/make_tables.py` regenerates every set that finishes; `--systems karst`",
        "one system; `--karbon-policies optimal` Karbon's tables with both sides optimal, which",
        "do not finish yet; `--no-cache` ignores the results store). Every value is exact: the `.json`",
        "and `.csv` files hold each cell as a fraction `p/q` with its decimal; `.md`, `.html`",
        "(for printing: one table a page), `.pdf` and `.png` (a heatmap) show percentages.",
        "A file holds the headline metric first and the other metrics after it.",
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
            lines += [f"- `{system}/{table_set.name}.*`: {table_set.description}.",
                      f"  Command: `{table_set.command} -o {system}/{table_set.name}.html`"]
        lines.append("")
    if missing:
        lines += ["## Not generated yet", "",
                  "These canonical sets are not in this folder yet; `python scripts/make_tables.py "
                  "--systems karbon --karbon-policies optimal` asks for them, resuming from the "
                  "results store (Karbon with both sides optimal does not finish yet: its state "
                  "graph has millions of states):", ""]
        lines += [f"- `{table_set.system}/{table_set.name}.*`: {table_set.description}."
                  for table_set in missing]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", default=",".join(system_names()),
                        help="comma-separated systems to generate (default: all four)")
    parser.add_argument("--formats", default=",".join(FORMATS),
                        help="comma-separated formats (default: all)")
    parser.add_argument("--out", default=str(REPOSITORY / "tables"),
                        help="output folder (default: tables/ of the repository)")
    parser.add_argument("--no-cache", action="store_true", help="bypass the results store")
    parser.add_argument("--store", default=None, help="results store file (SQLite)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--karbon-policies", default=",".join(DEFAULT_KARBON_POLICIES),
                        help="Karbon policy pairs to tabulate: fixed, optimal or both (default: "
                             "fixed; optimal on the default pool explores millions of states a "
                             "cell and does not finish yet)")
    parser.add_argument("--sensitivity", action="store_true",
                        help="make the rules sensitivity tables (tables/<system>/sensitivity/rules.md "
                             "and .json: each reading of the rules against the default) instead of the "
                             "difficulty tables")
    options = parser.parse_args(argv)
    if options.workers < 1:
        parser.error(f"--workers must be >= 1, got {options.workers}")
    try:
        if options.sensitivity:
            return _run_sensitivity(options)
        return _run(options)
    except InputError as error:
        print(f"make_tables: error: {error}", file=sys.stderr)
        return 2


def _run(options) -> int:
    started = time.perf_counter()
    systems = [name.strip() for name in options.systems.split(",") if name.strip()]
    formats = [name.strip() for name in options.formats.split(",") if name.strip()]
    for fmt in formats:
        if fmt not in FORMATS:
            raise InputError("--formats", f"unknown format {fmt!r} ({', '.join(FORMATS)})")
    _check_systems(systems)
    karbon_policies = [name.strip() for name in options.karbon_policies.split(",") if name.strip()]
    for name in karbon_policies:
        if name not in KARBON_POLICIES:
            raise InputError("--karbon-policies", f"unknown policy pair {name!r} "
                                                  f"({', '.join(KARBON_POLICIES)})")
    if "optimal" in karbon_policies and "karbon" in systems:
        print("make_tables: Karbon with both sides optimal explores millions of states a cell "
              "on the default pool and does not finish yet (README, \"Limits\"); Ctrl-C stops, "
              "the results store keeps what is done", file=sys.stderr)
    sets = canonical_sets(systems, karbon_policies)
    jobs = [job for table_set in sets for job in table_set.jobs]

    statistics = SweepStatistics()
    store = open_store(options.store, no_cache=options.no_cache)
    try:
        per_job = solve_table_jobs(jobs, store=store, workers=options.workers,
                                   progress=not options.no_progress, description="solving",
                                   statistics=statistics)
    finally:
        if store is not None:
            store.close()
    solved_at = time.perf_counter()

    out = Path(options.out)
    tasks, position = [], 0
    for table_set in sets:
        grids = [grid for grids in per_job[position:position + len(table_set.jobs)] for grid in grids]
        position += len(table_set.jobs)
        folder = out / table_set.system
        folder.mkdir(parents=True, exist_ok=True)
        tasks.append((grids, str(folder), table_set.name, formats))
    if options.workers > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=options.workers) as executor:
            written = [path for paths in executor.map(_write_set, tasks) for path in paths]
    else:
        written = [path for task in tasks for path in _write_set(task)]

    # the README lists every canonical set present in the folder, made now or before
    canonical = canonical_sets(karbon_policies=KARBON_POLICIES)
    present = [table_set for table_set in canonical
               if any((out / table_set.system / f"{table_set.name}.{fmt}").exists() for fmt in FORMATS)]
    missing = [table_set for table_set in canonical if table_set not in present]
    (out / "README.md").write_text(_readme(present, missing) + _sensitivity_readme(out), encoding="utf-8")
    finished = time.perf_counter()
    print(f"{len(jobs)} table jobs: {statistics.cached} from the store, {statistics.solved} solved "
          f"in {solved_at - started:.1f} s; wrote {len(written)} files in "
          f"{finished - solved_at:.1f} s; total {finished - started:.1f} s")
    return 0


# ----- rules sensitivity tables -------------------------------------------------------------

#: system -> the module whose ``rules_sensitivity()`` describes its canonical comparison
SENSITIVITY_MODULES = {"karbon": "exactdice.karbon.sensitivity",
                       "contingency": "exactdice.contingency.sensitivity",
                       "chronica": "exactdice.chronica.sensitivity",
                       "karst": "exactdice.karst.sensitivity"}
_SENSITIVITY_HEADING = "## Rules sensitivity tables"


def _sensitivity_readme(out: Path) -> str:
    """The README section listing the sensitivity tables present in *out*."""
    from exactdice.tables.sensitivity import FOLDER, FORMAT, STEM

    present = [system for system in SENSITIVITY_MODULES if (out / system / FOLDER / f"{STEM}.json").exists()]
    if not present:
        return ""
    lines = ["", _SENSITIVITY_HEADING, "",
             "What each reading of a system's rules changes: every other value of every knob against",
             "the default reading, over the system's canonical grid. For each reading and probability:",
             "how many cells move by more than 1 percentage point, and the largest move (which cell,",
             f"from what to what). `{FOLDER}/{STEM}.md` shows percentages; `{FOLDER}/{STEM}.json`",
             f"(`{FORMAT}`) holds every value as an exact fraction `p/q`. Made by",
             "`python scripts/make_tables.py --sensitivity [--systems NAME]` (through the results",
             "store; Karbon's cells are the contests of `exactdice karbon sensitivity`).", ""]
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
            raise InputError("--systems", f"no sensitivity table for {system!r} "
                                          f"(available: {', '.join(SENSITIVITY_MODULES)})")
    out = Path(options.out)
    store = open_store(options.store, no_cache=options.no_cache)
    try:
        for system in systems:
            spec = importlib.import_module(SENSITIVITY_MODULES[system]).rules_sensitivity()
            table = rules_sensitivity_table(spec, store=store, workers=options.workers,
                                            progress=not options.no_progress)
            written = write_sensitivity(table, out / system)
            print(f"{system}: {len(spec.readings) - 1} readings against the default in "
                  f"{table.seconds:.1f} s; wrote {', '.join(written)}")
    finally:
        if store is not None:
            store.close()
    readme = out / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    text = text.split("\n" + _SENSITIVITY_HEADING)[0].rstrip("\n") + "\n"
    readme.write_text(text + _sensitivity_readme(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
