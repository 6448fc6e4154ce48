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


def _risk_always_loop_system():
    """A 384-state system shaped like risk=always A2 v C2's loops: about 40 entries a row,
    off-diagonal entries of up to 28 bits, diagonals of up to 44 bits carrying powers of
    two (so the matrix is singular mod 2 once each row's power of two is out, and the
    2-adic lifting refuses it), and a right side of 33,000 bits."""
    import random

    rng = random.Random(384)
    size = 384
    rows = []
    for i in range(size):
        row = {j: -rng.getrandbits(28) for j in rng.sample(range(size), 39) if j != i}
        row[i] = (sum(-entry for entry in row.values()) + rng.getrandbits(20)) << rng.randint(0, 8)
        rows.append(row)
    sources = [rng.getrandbits(33_000) if rng.random() < 0.8 else 0 for _ in range(size)]
    return rows, sources


def test_bench_loop_solve_by_odd_lifting(benchmark):
    """One risk=always-shaped loop solve by odd lifting (its matrix's facts remembered
    between rounds, as for a loop that recurs); compare with the next benchmark."""
    from exactdice.markov.lifting import solve_by_lifting, solve_by_odd_lifting

    rows, sources = _risk_always_loop_system()
    assert solve_by_lifting(rows, sources) is None
    numerators, denominator = benchmark(solve_by_odd_lifting, rows, sources)
    assert all(sum(e * numerators[j] for j, e in row.items()) == denominator * s for row, s in zip(rows, sources))


def test_bench_risk_always_loop_solve_by_flint_chunks(benchmark):
    from exactdice.markov.forward import _solve_by_chunks, block_system

    rows, sources = _risk_always_loop_system()
    numerators, denominator = benchmark.pedantic(_solve_by_chunks, (block_system(rows), sources), rounds=3)
    assert all(sum(e * numerators[j] for j, e in row.items()) == denominator * s for row, s in zip(rows, sources))
