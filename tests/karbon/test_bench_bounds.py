"""Benchmarks of certified bounds on optimal play (`exactdice.karbon.bounds`).

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/karbon/test_bench_bounds.py --benchmark-only``. The exact solve of the same
setup runs beside it for the ratio; the gap against time on the default pool comes from
``scripts/bench_karbon_bounds.py``.
"""

from fractions import Fraction

import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, contest_odds
from exactdice.karbon.bounds import bounded_odds

SMALL = dict(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1)
OPTIMAL = PlayerPolicy(kind="optimal")


@pytest.mark.parametrize("narrator_kind", ["fixed", "optimal"])
def test_benchmark_bounds_small_pool(benchmark, narrator_kind):
    setup = ContestSetup(**SMALL)
    narrator = NarratorPolicy(kind=narrator_kind)
    result = benchmark.pedantic(
        bounded_odds, args=(setup, None, OPTIMAL, narrator), kwargs=dict(precision=1e-3), rounds=3, iterations=1
    )
    benchmark.extra_info.update(explored=result.explored, gap=result.gap)
    exact = contest_odds(setup, player=OPTIMAL, narrator=narrator).value
    assert result.lower <= exact <= Fraction(result.upper) and result.gap <= 1e-3


@pytest.mark.parametrize("narrator_kind", ["fixed", "optimal"])
def test_benchmark_exact_small_pool_for_the_ratio(benchmark, narrator_kind):
    setup = ContestSetup(**SMALL)
    result = benchmark.pedantic(
        contest_odds,
        args=(setup,),
        kwargs=dict(player=OPTIMAL, narrator=NarratorPolicy(kind=narrator_kind), progress=False),
        rounds=3,
        iterations=1,
    )
    assert result.win + result.loss + result.tie + result.never_ends == 1
