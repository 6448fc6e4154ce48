"""Benchmark: Karbon contests per second for A3/C3/W3/P1 with fixed policies (goal >= 50,000/s).

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/karbon/test_bench_simulate.py --benchmark-only``.
"""

from exactdice.karbon import ContestSetup
from exactdice.karbon.simulate import simulate

CONTESTS = 100_000


def test_benchmark_a3_c3_w3_p1(benchmark):
    setup = ContestSetup(ability=3, challenge=3, consequence=3, peril=1)
    rows = benchmark.pedantic(simulate, args=(setup,), kwargs={"n": CONTESTS, "seed": 7}, rounds=3, iterations=1)
    assert len(rows["outcome"]) == CONTESTS
    seconds = benchmark.stats.stats.min
    benchmark.extra_info["contests_per_second"] = CONTESTS / seconds
    print(f"\nA3/C3/W3/P1: {CONTESTS / seconds:,.0f} contests/s")
