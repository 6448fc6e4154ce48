"""The sweep on a Dask cluster (a 2-worker `distributed.LocalCluster`): the same code path as
the local pool, byte-identical tables, the store written by the client only, and a worker
killed mid-sweep does not lose its cell (Dask runs it again)."""

from __future__ import annotations

import os
import signal
import threading
import time
from fractions import Fraction

import pytest

distributed = pytest.importorskip("distributed")

from exactdice.errors import InputError  # noqa: E402
from exactdice.karbon.tables import contest_grid  # noqa: E402
from exactdice.tables.export import render_table  # noqa: E402
from exactdice.tables.jobs import solve_tables  # noqa: E402
from exactdice.tables.store import ResultKey, ResultStore  # noqa: E402
from exactdice.tables.sweep import SweepStatistics, cluster_executor, executor_for, sweep  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    # distributed's nannies set OMP/MKL/OPENBLAS_NUM_THREADS and MALLOC_TRIM_THRESHOLD_ in
    # this process's environment (its "pre-spawn-environ"); give the later tests theirs back
    environment = dict(os.environ)
    try:
        with distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
        ) as local:
            yield local
    finally:
        os.environ.clear()
        os.environ.update(environment)


def _small_grid():
    # six Karbon cells of well under a second each
    return contest_grid("ability", [1, 2], "challenge", [1, 2, 3], {"consequence": 1, "peril": 0})


def test_a_dask_sweep_gives_byte_identical_tables(tmp_path, cluster):
    local = solve_tables([_small_grid()], store=None, workers=2, progress=False)
    with executor_for(cluster.scheduler_address) as executor:
        remote = solve_tables([_small_grid()], store=None, progress=False, executor=executor)
    for fmt in ("json", "csv", "md"):
        assert render_table(remote, fmt).encode() == render_table(local, fmt).encode()


def test_the_client_writes_the_store_and_a_rerun_solves_nothing(tmp_path, cluster):
    path = tmp_path / "s.sqlite"
    with ResultStore(path) as store, executor_for(cluster.scheduler_address) as executor:
        first = SweepStatistics()
        grids = solve_tables([_small_grid()], store=store, progress=False, executor=executor, statistics=first)
        assert (first.solved, first.cached, len(store)) == (6, 0, 6)
        again = SweepStatistics()
        assert solve_tables([_small_grid()], store=store, workers=1, progress=False, statistics=again) == grids
        assert (again.solved, again.cached) == (0, 6)


def test_a_worker_killed_mid_sweep_loses_no_cell(tmp_path, cluster):
    from exactdice.tables.sweep import SweepCell, _slow_reciprocal

    cells = [
        SweepCell(ResultKey("demo", {}, {"n": n}), (n, str(tmp_path), 1.5 if n == 1 else 0.2)) for n in range(1, 7)
    ]
    killed = []

    def kill_the_worker_of_cell_1():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = list(tmp_path.glob("n1-pid*"))
            if started:
                pid = int(started[0].name.split("pid")[1])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_the_worker_of_cell_1)
    killer.start()
    with ResultStore(tmp_path / "s.sqlite") as store, executor_for(cluster.scheduler_address) as executor:
        results = sweep(cells, _slow_reciprocal, store=store, executor=executor, progress=False)
        assert len(store) == 6
    killer.join()
    assert results == [Fraction(1, n) for n in range(1, 7)]
    attempts = {path.name for path in tmp_path.glob("n1-pid*")}
    assert len(killed) == 1 and len(attempts) == 2, attempts  # cell 1 ran again elsewhere
    cluster.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker


def test_an_input_error_on_a_dask_worker_arrives_whole(tmp_path, cluster):
    cells = [ResultKey("demo", {}, {"n": n}) for n in (1, 0)]
    from exactdice.tables.sweep import SweepCell, _reciprocal_of_key

    with executor_for(cluster.scheduler_address) as executor:
        with pytest.raises(InputError) as caught:
            sweep([SweepCell(key) for key in cells], _reciprocal_of_key, store=None, executor=executor, progress=False)
    assert (caught.value.field, caught.value.message) == ("n", "has no reciprocal")


def test_an_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(InputError, match="^scheduler: cannot reach the Dask scheduler"):
        cluster_executor("tcp://127.0.0.1:9", timeout=1)


def test_the_cli_names_the_scheduler_flag(capsys, tmp_path):
    from exactdice.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(
            [
                "karst",
                "table",
                "--table",
                "action",
                "--no-cache",
                "--scheduler",
                "tcp://127.0.0.1:9",
                "-o",
                str(tmp_path / "t.md"),
            ]
        )
    assert exit_.value.code == 2
    assert "--scheduler: cannot reach the Dask scheduler" in capsys.readouterr().err
