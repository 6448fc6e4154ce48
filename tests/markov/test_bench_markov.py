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


def test_bench_forward_pass_through_large_loops(benchmark):
    """Loops of 40 states (FLINT's chunked solve) behind chance states: the forward
    pass's loop path, narrow right sides included."""
    from exactdice.markov.forward import forward_pass

    from .test_forward_blocks import LoopsBehindChance

    graph = explore(LoopsBehindChance(2, loops=6, loop_size=40))
    result = benchmark(forward_pass, graph)
    assert sum(result.absorption.values()) + result.never_ends == 1


def test_bench_float_preview_through_large_loops(benchmark):
    """The float preview of the same graph (numpy per state, dense solve per loop)."""
    from exactdice.markov.forward import forward_pass

    from .test_forward_blocks import LoopsBehindChance

    graph = explore(LoopsBehindChance(2, loops=6, loop_size=40))
    result = benchmark(forward_pass, graph, exact=False)
    assert abs(sum(result.absorption.values()) + result.never_ends - 1) < 1e-9


def test_bench_forward_pass_contest_chain(benchmark):
    """A long contest-shaped chain (self-loops, 2-cycles): mostly acyclic states, the
    per-edge multiply-adds at each state's own width."""
    from exactdice.markov.forward import forward_pass

    graph = explore(ContestChain(size=1000, branches=35, reach=80))
    result = benchmark(forward_pass, graph)
    assert sum(result.absorption.values()) + result.never_ends == 1
