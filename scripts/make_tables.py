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

With no arguments it makes only the sets that finish: Karbon's tables with both sides
optimal (millions of states a cell on the default pool) are made only when asked for with
``--karbon-policies optimal`` (or ``fixed,optimal``).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from exactdice.errors import InputError
from exactdice.tables.export import FORMATS, write_table
from exactdice.tables.jobs import CellGrid, TableJob, solve_table_jobs
from exactdice.tables.store import open_store
from exactdice.tables.sweep import SweepStatistics

REPOSITORY = Path(__file__).resolve().parent.parent
SYSTEMS = ("karbon", "contingency", "chronica", "karst")


@dataclass
class TableSet:
    """One group of grids written together as ``<system>/<name>.<format>``."""

    system: str
    name: str
    description: str
    command: str  # the exactdice command that makes the same file (with -o ...)
    jobs: list[TableJob | CellGrid] = field(default_factory=list)


def contingency_sets() -> list[TableSet]:
    from exactdice.cli.table_commands import contingency_jobs
    from exactdice.contingency.ruleset import ContingencyRules

    rules = ContingencyRules()
    return [TableSet("contingency", f"difficulty_{kind}",
                     f"P(success) and P(success or success-with-condition) of the 35 three-die "
                     f"pools of d4..d12 against the 11 named difficulties, {kind} roll, default "
                     f"rules ({rules.describe()})",
                     f"exactdice contingency table --kind {kind}",
                     contingency_jobs(rules, (kind,)))
            for kind in ("normal", "advantage", "disadvantage")]


def karst_sets() -> list[TableSet]:
    from exactdice.cli.table_commands import karst_jobs

    descriptions = {
        "action": "action roll P(success) by modifier -5..+5",
        "attack": "attack roll P(hit) by attack modifier -2..+10 x defense 8..20",
        "death": "death roll P(death) (and expected rounds) by negative health 0..6 x aid "
                 "actions per round 0..2, death-roll modifier 0",
    }
    return [TableSet("karst", name, description, f"exactdice karst table --table {name}",
                     karst_jobs((name,)))
            for name, description in descriptions.items()]


def chronica_sets() -> list[TableSet]:
    from exactdice.chronica.ruleset import ChronicaRules
    from exactdice.cli.table_commands import chronica_jobs

    rules = ChronicaRules()
    words = {2: "two", 3: "three"}
    return [TableSet("chronica", f"{words[count]}_dice",
                     f"P(win), P(tie) and expected success dice of a player pool of {words[count]} "
                     f"dice (d4..d12) against static oppositions of three equal dice (3d4 ... "
                     f"3d12), default rules ({rules.describe()})",
                     f"exactdice chronica table --player-dice {count}",
                     chronica_jobs(rules, (count,)))
            for count in (2, 3)]


KARBON_POLICIES = {"fixed": ("fixed", "fixed"), "optimal": ("optimal", "optimal")}
#: the policy pairs made when none are asked for: the ones whose tables finish
DEFAULT_KARBON_POLICIES = ("fixed",)


def karbon_sets(policies=DEFAULT_KARBON_POLICIES) -> list[TableSet]:
    from exactdice.karbon.tables import contest_grid

    sets = []
    for name in policies:
        player, narrator = KARBON_POLICIES[name]
        for consequence in (1, 2, 3):
            for peril in (0, 1):
                grid = contest_grid("ability", list(range(1, 6)), "challenge", list(range(1, 6)),
                                    {"consequence": consequence, "peril": peril},
                                    player=player, narrator=narrator)
                words = "both sides optimal" if name == "optimal" else "both sides' fixed default policies"
                sets.append(TableSet(
                    "karbon", f"ability_challenge_w{consequence}_p{peril}_{name}",
                    f"P(win), P(tie), P(loss) and expected rounds for Ability 1-5 x Challenge 1-5, "
                    f"Consequence W = {consequence}, Peril P = {peril}, {words}, default ruleset",
                    f"exactdice karbon table --ability 1-5 --challenge 1-5 --consequence {consequence} "
                    f"--peril {peril} --player-policy {player} --narrator-policy {narrator}",
                    [grid]))
    return sets


SET_BUILDERS = {"karbon": karbon_sets, "contingency": contingency_sets, "chronica": chronica_sets,
                "karst": karst_sets}


def _available_builders(systems) -> dict:
    builders = {}
    for system in systems:
        if system not in SET_BUILDERS:
            raise InputError("--systems", f"no canonical tables for {system!r} yet "
                                          f"(available: {', '.join(SET_BUILDERS)})")
        builders[system] = SET_BUILDERS[system]
    return builders


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
    for system in SYSTEMS:
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
    parser.add_argument("--systems", default=",".join(SYSTEMS),
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
    options = parser.parse_args(argv)
    if options.workers < 1:
        parser.error(f"--workers must be >= 1, got {options.workers}")
    try:
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
    builders = _available_builders(systems)
    karbon_policies = [name.strip() for name in options.karbon_policies.split(",") if name.strip()]
    for name in karbon_policies:
        if name not in KARBON_POLICIES:
            raise InputError("--karbon-policies", f"unknown policy pair {name!r} "
                                                  f"({', '.join(KARBON_POLICIES)})")
    if "karbon" in builders:
        builders["karbon"] = lambda: karbon_sets(karbon_policies)
        if "optimal" in karbon_policies:
            print("make_tables: Karbon with both sides optimal explores millions of states a cell "
                  "on the default pool and does not finish yet (README, \"Limits\"); Ctrl-C stops, "
                  "the results store keeps what is done", file=sys.stderr)
    sets = [table_set for builder in builders.values() for table_set in builder()]
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
    canonical = [table_set for builder in SET_BUILDERS.values() for table_set in builder()]
    canonical += karbon_sets(tuple(name for name in KARBON_POLICIES if name not in DEFAULT_KARBON_POLICIES))
    present = [table_set for table_set in canonical
               if any((out / table_set.system / f"{table_set.name}.{fmt}").exists() for fmt in FORMATS)]
    missing = [table_set for table_set in canonical if table_set not in present]
    (out / "README.md").write_text(_readme(present, missing), encoding="utf-8")
    finished = time.perf_counter()
    print(f"{len(jobs)} table jobs: {statistics.cached} from the store, {statistics.solved} solved "
          f"in {solved_at - started:.1f} s; wrote {len(written)} files in "
          f"{finished - solved_at:.1f} s; total {finished - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
