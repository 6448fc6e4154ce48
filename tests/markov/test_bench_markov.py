"""pytest-benchmark timings of exploring and solving (skipped under --benchmark-skip)."""

from __future__ import annotations

import pytest

from exactdice.markov import explore, solve
from exactdice.markov.synthetic import ContestChain, TugOfWar

pytest.importorskip("pytest_benchmark")


def test_bench_explore_contest_chain(benchmark):
    graph = benchmark(explore, ContestChain(size=500))
    assert graph.num_states == 503


def test_bench_solve_contest_chain_exact(benchmark):
    graph = explore(ContestChain(size=500))
    solution = benchmark(solve, graph)
    assert solution.never_ends == 0


def test_bench_solve_tug_of_war_exact(benchmark):
    graph = explore(TugOfWar(reach=40))
    assert benchmark(solve, graph).absorption["win"] * 2 == 1
