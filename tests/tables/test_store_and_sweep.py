"""The results store and the parallel sweep: resume, atomic writes, clear errors, --no-cache."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest

from exactdice.errors import InputError
from exactdice.tables.jobs import TableJob, solve_tables
from exactdice.tables.store import (
    STORE_ENVIRONMENT_VARIABLE,
    ResultKey,
    ResultStore,
    canonical_json,
    decode_result,
    default_store_path,
    encode_result,
    open_store,
)
from exactdice.tables.sweep import SweepStatistics, _reciprocal_of_key, sweep


def _keys(count, system="demo"):
    return [ResultKey(system, {"rule": "x"}, {"n": n}, {"policy": "p"}) for n in range(1, count + 1)]


def test_store_round_trips_exact_values_and_keys_by_every_part(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        key = ResultKey("karst", {"opposed": "totals"}, {"m": 1}, {"aid": 0})
        value = {"P": Fraction(1, 3), "rows": [Fraction(2, 7), None, 3, "text"], "flag": True}
        store.put(key, value)
        assert store.get(key) == value
        for other in (
            ResultKey("karbon", {"opposed": "totals"}, {"m": 1}, {"aid": 0}),
            ResultKey("karst", {"opposed": "success-first"}, {"m": 1}, {"aid": 0}),
            ResultKey("karst", {"opposed": "totals"}, {"m": 2}, {"aid": 0}),
            ResultKey("karst", {"opposed": "totals"}, {"m": 1}, {"aid": 1}),
            ResultKey("karst", {"opposed": "totals"}, {"m": 1}, {"aid": 0}, version="0.0.1"),
        ):
            assert store.get(other) is None
        # key order in a mapping does not matter
        assert store.get(ResultKey("karst", {"opposed": "totals"}, {"m": 1}, {"aid": 0})) == value
        assert len(store) == 1


def test_encoding_refuses_floats_and_tags_fractions():
    assert canonical_json({"b": 1, "a": Fraction(1, 2)}) == '{"a":{"fraction":"1/2"},"b":1}'
    assert decode_result(encode_result({"x": [Fraction(-5, 3)]})) == {"x": [Fraction(-5, 3)]}
    with pytest.raises(TypeError, match="float"):
        encode_result({"p": 0.5})


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(STORE_ENVIRONMENT_VARIABLE, str(tmp_path / "elsewhere.sqlite"))
    assert default_store_path() == tmp_path / "elsewhere.sqlite"
    monkeypatch.delenv(STORE_ENVIRONMENT_VARIABLE)
    assert default_store_path().parts[-3:] == (".cache", "exactdice", "results.sqlite")
    assert open_store(tmp_path / "x.sqlite", no_cache=True) is None
    assert not (tmp_path / "x.sqlite").exists()


def test_sweep_in_parallel_equals_serial_and_fills_the_store(tmp_path):
    keys = _keys(40) + _keys(3)  # duplicates are solved once
    expected = [Fraction(1, key.setup["n"]) for key in keys]
    assert sweep(keys, _reciprocal_of_key, store=None, workers=1, progress=False) == expected
    with ResultStore(tmp_path / "r.sqlite") as store:
        statistics = SweepStatistics()
        assert (
            sweep(keys, _reciprocal_of_key, store=store, workers=2, progress=False, statistics=statistics) == expected
        )
        assert (statistics.solved, statistics.cached, len(store)) == (40, 0, 40)
        again = SweepStatistics()
        assert sweep(keys, _reciprocal_of_key, store=store, workers=2, progress=False, statistics=again) == expected
        assert (again.solved, again.cached) == (0, 40)


def test_sweep_resumes_from_a_partial_store(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        sweep(_keys(5), _reciprocal_of_key, store=store, workers=1, progress=False)
        # a stored value is used as is (not recomputed): plant a marker to prove it
        store.put(_keys(1)[0], Fraction(99))
        statistics = SweepStatistics()
        results = sweep(_keys(8), _reciprocal_of_key, store=store, workers=2, progress=False, statistics=statistics)
        assert results[0] == 99 and results[1:] == [Fraction(1, n) for n in range(2, 9)]
        assert (statistics.cached, statistics.solved) == (5, 3)


_CRASHING_SWEEP = textwrap.dedent("""
    import os, sys
    from fractions import Fraction
    from exactdice.tables.store import ResultKey, ResultStore
    from exactdice.tables.sweep import sweep

    store = ResultStore(sys.argv[1])
    crash_at, mode = int(sys.argv[2]), sys.argv[3]
    if mode == "mid-write":
        # die inside the transaction of the crash_at-th write: after its INSERT ran, before COMMIT
        inserts = []
        def trace(statement):
            if statement.startswith("INSERT OR REPLACE"):
                inserts.append(statement)
            if statement == "COMMIT" and len(inserts) == crash_at:
                os._exit(9)
        store._connection.set_trace_callback(trace)

    def solve(key):
        if mode == "mid-solve" and key.setup["n"] == crash_at:
            os._exit(9)
        return {"p": Fraction(1, key.setup["n"]), "filler": "x" * 5000}

    keys = [ResultKey("demo", {}, {"n": n}) for n in range(1, 11)]
    sweep(keys, solve, store=store, workers=1, progress=False)
""")


@pytest.mark.parametrize("mode", ["mid-solve", "mid-write"])
def test_a_killed_sweep_leaves_only_whole_rows_and_resumes(tmp_path, mode):
    path = tmp_path / "r.sqlite"
    completed = subprocess.run(
        [sys.executable, "-c", _CRASHING_SWEEP, str(path), "4", mode], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 9, completed.stderr
    with ResultStore(path) as store:
        assert store.integrity_ok()
        assert len(store) == 3  # the 4th row is absent, not half there
        rows = store._connection.execute("SELECT setup, result FROM results").fetchall()
        for setup, _ in rows:
            n = int(setup.split(":")[-1].rstrip("}"))
            assert store.get(ResultKey("demo", {}, {"n": n})) == {"p": Fraction(1, n), "filler": "x" * 5000}
        statistics = SweepStatistics()
        keys = [ResultKey("demo", {}, {"n": n}) for n in range(1, 11)]
        results = sweep(keys, _reciprocal_of_key, store=store, workers=1, progress=False, statistics=statistics)
        assert (statistics.cached, statistics.solved) == (3, 7)
        assert results[3:] == [Fraction(1, n) for n in range(4, 11)]


def test_a_corrupt_store_gives_a_clear_message(tmp_path):
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(InputError) as caught:
        ResultStore(path)
    message = str(caught.value)
    assert message.startswith("store_path: results store")
    assert str(path) in message and "corrupt" in message and "delete it" in message


def test_a_locked_store_gives_a_clear_message(tmp_path):
    path = tmp_path / "busy.sqlite"
    ResultStore(path).close()
    holder = sqlite3.connect(str(path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(InputError) as caught:
            ResultStore(path, timeout=0.2)
        assert "locked by another exactdice process" in str(caught.value) and str(path) in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_unreadable_row_gives_a_clear_message(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        key = ResultKey("demo", {}, {"n": 1})
        store.put(key, 1)
        store._connection.execute("UPDATE results SET result = '{not json'")
        with pytest.raises(InputError, match="unreadable result"):
            store.get(key)


def test_table_jobs_are_cached_as_whole_grids(tmp_path):
    jobs = [TableJob("demo", "reciprocals", "exactdice.tables.jobs:demo_table", {"size": n}) for n in (2, 4, 3)]
    with ResultStore(tmp_path / "r.sqlite") as store:
        first = solve_tables(jobs, store=store, workers=2, progress=False)
        statistics = SweepStatistics()
        second = solve_tables(jobs, store=store, workers=2, progress=False, statistics=statistics)
        assert first == second and statistics.cached == 3 and statistics.solved == 0
        assert [grid.title for grid in first] == ["reciprocals up to 2", "reciprocals up to 4", "reciprocals up to 3"]


def _quotient_grid(**changes):
    from exactdice.tables.jobs import CellGrid

    fields = dict(
        system="demo",
        table="quotients",
        function="exactdice.tables.jobs:demo_cell",
        row_argument="numerator",
        column_argument="denominator",
        rows=tuple((str(n), n) for n in range(1, 4)),
        columns=tuple((str(d), d) for d in range(4, 8)),
        metrics=("P(x)",),
        title="n/d",
        row_label="n",
        column_label="d",
    )
    fields.update(changes)
    return CellGrid(**fields)


def test_cell_grids_store_one_row_a_cell_and_resume(tmp_path):
    grid = _quotient_grid()
    expected = [[Fraction(n, d) for d in range(4, 8)] for n in range(1, 4)]
    with ResultStore(tmp_path / "r.sqlite") as store:
        # a first, partial sweep: only the first row of cells
        solve_tables([_quotient_grid(rows=(("1", 1),))], store=store, workers=1, progress=False)
        assert len(store) == 4
        statistics = SweepStatistics()
        (solved,) = solve_tables([grid], store=store, workers=2, progress=False, statistics=statistics)
        assert solved.metrics["P(x)"] == expected and solved.rows == ["1", "2", "3"]
        assert (statistics.cached, statistics.solved, len(store)) == (4, 8, 12)
        # the same cell under another ruleset is another row
        solve_tables([_quotient_grid(ruleset={"knob": "on"})], store=store, workers=1, progress=False)
        assert len(store) == 24


def test_whole_tables_and_cell_grids_share_one_sweep(tmp_path):
    from exactdice.tables.jobs import solve_table_jobs

    jobs = [TableJob("demo", "reciprocals", "exactdice.tables.jobs:demo_table", {"size": 2}), _quotient_grid()]
    per_job = solve_table_jobs(jobs, store=None, workers=2, progress=False)
    assert [len(grids) for grids in per_job] == [1, 1]
    assert per_job[0][0].title == "reciprocals up to 2"
    assert per_job[1][0].cell("P(x)", 2, 3) == Fraction(3, 7)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_input_error_in_a_worker_arrives_whole_and_keeps_finished_cells(tmp_path, workers):
    keys = [ResultKey("demo", {}, {"n": n}) for n in [1, 2, 3, 4, 0, 5]]
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(InputError) as caught:
            sweep(keys, _reciprocal_of_key, store=store, workers=workers, progress=False)
        assert (caught.value.field, caught.value.message) == ("n", "has no reciprocal")
        assert store.get(keys[4]) is None
        stored = {key.setup["n"]: store.get(key) for key in keys if store.get(key) is not None}
        assert all(value == Fraction(1, n) for n, value in stored.items())
        if workers == 1:
            assert sorted(stored) == [1, 2, 3, 4]  # every cell before the bad one is kept


def test_a_store_path_that_is_a_folder_gives_a_clear_message(tmp_path):
    with pytest.raises(InputError, match="store_path: .* is a directory, not a file"):
        ResultStore(tmp_path)


def _stderr_is_a_terminal(key):
    import sys as system

    return system.stderr.isatty()


@pytest.mark.parametrize("workers", [1, 2])
def test_cells_are_solved_where_stderr_is_no_terminal_so_only_the_sweep_draws_a_bar(workers, monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    keys = [ResultKey("demo", {}, {"n": n}) for n in range(3)]
    assert sweep(keys, _stderr_is_a_terminal, store=None, workers=workers, progress=False) == [False] * 3
    assert sys.stderr is terminal  # this process's stderr is given back
