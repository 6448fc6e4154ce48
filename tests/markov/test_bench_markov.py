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
    """Loops of 40 states (2-adic lifting, or FLINT where it does not apply) behind
    chance states: the forward pass's loop path, narrow right sides included."""
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


def _wide_loop_system():
    """A 72-state system shaped like A5 v C5's loops (35-bit entries, about a third of
    the off-diagonal filled, rows carrying powers of two) with a 38,000-bit right side."""
    import random

    from .test_lifting import random_system

    return random_system(random.Random(72), 72, 35, 38_000, odd_diagonal_only=True)


def test_bench_loop_solve_by_lifting(benchmark):
    """One wide loop solve by 2-adic lifting; compare with the next benchmark (FLINT's
    chunked solve of the same system, the path it replaced)."""
    from exactdice.markov.lifting import solve_by_lifting

    rows, sources = _wide_loop_system()
    numerators, denominator = benchmark(solve_by_lifting, rows, sources)
    assert all(sum(e * numerators[j] for j, e in row.items()) == denominator * s for row, s in zip(rows, sources))


def test_bench_loop_solve_by_flint_chunks(benchmark):
    from exactdice.markov.forward import _solve_by_chunks, block_system

    rows, sources = _wide_loop_system()
    numerators, denominator = benchmark(_solve_by_chunks, block_system(rows), sources)
    assert all(sum(e * numerators[j] for j, e in row.items()) == denominator * s for row, s in zip(rows, sources))
