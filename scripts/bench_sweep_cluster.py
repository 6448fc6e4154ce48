"""A 150-cell Karbon sweep on the local process pool and on a 2-worker Dask LocalCluster,
back to back in one run (the overhead of the distributed path), with byte-identical tables.

Usage: python scripts/bench_sweep_cluster.py [--repeats 2] [--kill-worker]

The cells: Ability 1-3 x Challenge 1-5 at Consequence 1 and Peril 0-9 (ten grids of 15
cells, fixed policies; about 0.05-1 s each), solved without the store (every run solves
every cell). Each
repeat times the local pool, then the cluster (started before the clock, as a user's
cluster is already running). ``--kill-worker`` adds one cluster run in which a worker
process is killed (SIGKILL) a few seconds in: Dask runs its cells again, and the tables
must still be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import threading
import time

from exactdice.karbon.tables import contest_grid
from exactdice.tables.export import render_table
from exactdice.tables.jobs import solve_tables


def grids():
    return [
        contest_grid("ability", [1, 2, 3], "challenge", [1, 2, 3, 4, 5], {"consequence": 1, "peril": peril})
        for peril in range(10)
    ]


def run(executor=None) -> tuple[float, str]:
    began = time.perf_counter()
    solved = solve_tables(grids(), store=None, workers=2, progress=False, executor=executor)
    seconds = time.perf_counter() - began
    return seconds, hashlib.sha256(render_table(solved, "json").encode()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--kill-worker", action="store_true")
    arguments = parser.parse_args()
    from distributed import Client, LocalCluster

    cells = sum(len(grid.rows) * len(grid.columns) for grid in grids())
    print(f"{cells} Karbon cells; load average before: {os.getloadavg()[0]:.1f}", flush=True)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
        ) as cluster,
        Client(cluster) as client,
    ):
        executor = client.get_executor()
        digests = set()
        ratios = []
        for repeat in range(1, arguments.repeats + 1):
            local_seconds, local_digest = run()
            cluster_seconds, cluster_digest = run(executor)
            digests |= {local_digest, cluster_digest}
            ratios.append(cluster_seconds / local_seconds)
            print(
                f"repeat {repeat}: local pool {local_seconds:.1f} s, LocalCluster {cluster_seconds:.1f} s, "
                f"ratio {cluster_seconds / local_seconds:.3f} (overhead {100 * (ratios[-1] - 1):+.1f} %), "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        if arguments.kill_worker:
            killed = []

            def kill_one_worker():
                time.sleep(5)
                pids = client.run(os.getpid)
                pid = sorted(pids.values())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

            killer = threading.Thread(target=kill_one_worker)
            killer.start()
            seconds, digest = run(executor)
            killer.join()
            digests.add(digest)
            print(
                f"worker {killed[0]} killed after 5 s: LocalCluster {seconds:.1f} s, "
                f"table identical: {digest == local_digest}",
                flush=True,
            )
        print(f"tables byte-identical across every run: {len(digests) == 1} ({sorted(digests)[0][:16]})")
        print(f"cluster / local: mean {sum(ratios) / len(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
