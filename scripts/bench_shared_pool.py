"""What a design search saves by one process pool for all its batches: the same batches of
trivial cells, side by side, each batch on a pool of its own (what `design_search` did) and
all on one `shared_local_pool` (what it does). The cells cost nothing, so the difference is
the pools' start and end.

Usage: python scripts/bench_shared_pool.py [--batches 11] [--workers 2] [--repeats 7]

(11 batches of 2 is what `karbon design --target win=0.5 --tolerance 20% -a 2 -w 1
--vary challenge=1-6,peril=0-3,fortune=0-1 --samples 5000` runs after its screens.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time

from exactdice.tables.store import ResultKey
from exactdice.tables.sweep import SweepCell, _reciprocal_of_key, shared_local_pool, sweep


@contextlib.contextmanager
def _pool_per_batch(workers: int):
    yield None  # no executor: each sweep starts and ends a pool of its own


def run_batches(pools, batches: int, workers: int) -> float:
    """Seconds for *batches* sweeps of *workers* cells each on the executor *pools* gives."""
    began = time.perf_counter()
    with pools(workers) as executor:
        for batch in range(batches):
            cells = [SweepCell(ResultKey("bench", {}, {"n": workers * batch + k + 1})) for k in range(workers)]
            sweep(cells, _reciprocal_of_key, store=None, workers=workers, executor=executor, progress=False)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=11)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    times = {"a pool per batch": [], "one shared pool": []}
    for _ in range(options.repeats):  # alternated, so both see the same load
        times["a pool per batch"].append(run_batches(_pool_per_batch, options.batches, options.workers))
        times["one shared pool"].append(run_batches(shared_local_pool, options.batches, options.workers))
    for name, seconds in times.items():
        print(f"{name:>17}: median {statistics.median(seconds):.3f} s (runs: {' '.join(f'{s:.3f}' for s in seconds)})")
    per_batch, shared = (statistics.median(seconds) for seconds in times.values())
    print(
        f"{options.batches} batches of {options.workers} cells: ratio {per_batch / shared:.1f}, "
        f"{1000 * (per_batch - shared) / options.batches:.0f} ms saved a batch; "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
