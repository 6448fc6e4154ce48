"""Benchmarks of exact Karbon solves (fixed chains and optimal play), explore included.

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/karbon/test_bench_exact.py --benchmark-only``. The peers' side-by-side
figures come from ``scripts/bench_karbon_peers.py`` (Storm) and
``scripts/bench_karbon_optimal.py`` (state counts under optimal play).
"""

import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, contest_odds

ISSUE_CASE = dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1)


def _solve(setup, player, narrator):
    return contest_odds(setup, player=player, narrator=narrator, progress=False)


def test_benchmark_fixed_a3_c3_w3_p1(benchmark):
    setup = ContestSetup(ability=3, challenge=3, consequence=3, peril=1)
    result = benchmark.pedantic(_solve, args=(setup, PlayerPolicy(), NarratorPolicy()), rounds=3, iterations=1)
    assert result.states == 2459 and result.win + result.loss + result.tie == 1


@pytest.mark.parametrize("narrator_kind", ["fixed", "optimal"])
def test_benchmark_optimal_player_d8_v_d8(benchmark, narrator_kind):
    setup = ContestSetup(**ISSUE_CASE)
    result = benchmark.pedantic(_solve, args=(setup, PlayerPolicy(kind="optimal"), NarratorPolicy(kind=narrator_kind)),
                                rounds=3, iterations=1)
    benchmark.extra_info["states"] = result.states
    assert result.win + result.loss + result.tie + result.never_ends == 1
