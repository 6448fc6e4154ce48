"""``scripts/make_tables.py``: one small system regenerated, checked against its exact functions."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_tables.py"


def _make(tmp_path, *arguments):
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(tmp_path / "tables"),
            "--store",
            str(tmp_path / "store.sqlite"),
            "--no-progress",
            *arguments,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_karst_tables_regenerate_exactly_and_identically(tmp_path):
    pytest.importorskip("exactdice.karst.tables")
    from exactdice.karst import action_success, attack_hit

    first = _make(tmp_path, "--systems", "karst", "--formats", "md,csv,json,html")
    assert first.returncode == 0, first.stderr
    assert "3 table jobs: 0 from the store, 3 solved" in first.stdout
    folder = tmp_path / "tables" / "karst"
    names = sorted(path.name for path in folder.iterdir())
    assert names == sorted(
        f"{table}.{fmt}" for table in ("action", "attack", "death") for fmt in ("md", "csv", "json", "html")
    )
    (attack,) = json.loads((folder / "attack.json").read_text())["tables"]
    for r, modifier in enumerate(int(label) for label in attack["rows"]):
        for c, defense in enumerate(int(label) for label in attack["columns"]):
            assert Fraction(attack["metrics"][0]["exact"][r][c]) == attack_hit(modifier, defense)
    (action,) = json.loads((folder / "action.json").read_text())["tables"]
    assert [Fraction(row[0]) for row in action["metrics"][0]["exact"]] == [action_success(m) for m in range(-5, 6)]
    readme = (tmp_path / "tables" / "README.md").read_text()
    assert "exactdice karst table --table attack -o karst/attack.html" in readme

    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    second = _make(tmp_path, "--systems", "karst", "--formats", "md,csv,json,html")
    assert second.returncode == 0 and "3 from the store, 0 solved" in second.stdout
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    assert (tmp_path / "tables" / "README.md").read_text() == readme


def test_unknown_system_or_format_is_a_clear_error(tmp_path):
    result = _make(tmp_path, "--systems", "monopoly")
    assert (
        result.returncode == 2 and "make_tables: error: --systems: no canonical tables for 'monopoly'" in result.stderr
    )
    result = _make(tmp_path, "--systems", "karst", "--formats", "docx")
    assert result.returncode == 2 and "--formats: unknown format 'docx'" in result.stderr


def _script_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_tables_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_no_arguments_makes_only_sets_that_finish(monkeypatch):
    """With no arguments no Karbon set with optimal play is asked for (those never finish on
    the default pool); they are made only with --karbon-policies optimal."""
    module = _script_module()
    asked = {}

    def fake_run(options):
        asked["systems"] = options.systems
        asked["policies"] = options.karbon_policies
        return 0

    monkeypatch.setattr(module, "_run", fake_run)
    assert module.main([]) == 0
    assert asked["policies"] == "fixed"
    assert set(asked["systems"].split(",")) == {"karbon", "contingency", "chronica", "karst"}
    default_sets = module.canonical_sets()
    assert default_sets and not any("optimal" in table_set.command for table_set in default_sets)
    assert all(table_set.name.endswith("_fixed") for table_set in default_sets if table_set.system == "karbon")
    optimal = module.canonical_sets(["karbon"], ["optimal"], cell_seconds=12, precision=0.01)
    assert len(optimal) == 6 and all(
        "--karbon-policies optimal --cell-seconds 12 --precision 0.01" in s.command for s in optimal
    )
    for table_set in optimal:  # every cell is bounded, with the budget and precision in its store key
        (grid,) = table_set.jobs
        assert grid.function == "exactdice.karbon.tables:bounded_cell"
        assert grid.arguments["seconds"] == "12" and grid.arguments["precision"] == "0.01"
        assert f"_w{grid.arguments['consequence']}_p{grid.arguments['peril']}_optimal" in table_set.name
        assert grid.arguments["player"] == grid.arguments["narrator"] == "optimal"


def test_bounded_cell_contains_the_exact_optimal_value(tmp_path):
    """On a small pool where optimal play solves exactly, a bounded table's cells contain the
    exact value, their lower end is the returned strategy's exact value, and the grid survives
    the store and the README summary."""
    from exactdice.karbon.tables import bounded_grid, contest_cell
    from exactdice.tables.export import write_table
    from exactdice.tables.grid import Bounds
    from exactdice.tables.jobs import solve_tables
    from exactdice.tables.store import ResultStore

    fixed = {"consequence": 1, "peril": 1, "pool": "d4,d4,d6,d6", "reserve": "d4"}
    grid = bounded_grid("ability", [1, 2], "challenge", [1], fixed, seconds=20, precision=0.001)
    store = ResultStore(tmp_path / "store.sqlite")
    (made,) = solve_tables([grid], store=store, workers=1, progress=False)
    (again,) = solve_tables([grid], store=store, workers=1, progress=False)  # from the store
    store.close()
    assert again == made
    headline = "value = P(win) + P(tie)/2"
    for row, ability in enumerate((1, 2)):
        exact = contest_cell(ability, 1, 1, 1, pool=fixed["pool"], reserve="d4", player="optimal", narrator="optimal")
        value = exact["P(win)"] + exact["P(tie)"] / 2
        cell = made.cell(headline, row, 0)
        assert isinstance(cell, Bounds) and cell.lower <= value <= cell.upper
        assert cell.lower == made.cell("strategy's P(win)", row, 0) + made.cell("strategy's P(tie)", row, 0) / 2
    write_table([made], "json", tmp_path / "set.json")
    summary = _script_module().bounds_reached(tmp_path / "set.json")
    assert summary.startswith(
        f"{sum(made.cell(headline, r, 0).gap <= Fraction(1, 1000) for r in (0, 1))} of 2 cells within gap 0.001"
    ) and summary.endswith("exact value in 2 cells")
