"""Benchmarks of exact Chronica contests (the candidate-winner dynamic program).

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/chronica/test_bench_contest.py --benchmark-only``. The expected values
were computed by the solver before its refactor into named states (issue 13): a change
in them is a change in the results, not only in the speed.
"""

from fractions import Fraction

from exactdice.chronica import Rules, solve_contest

THREE_SIDES = [((12, 10, 8), (6,)), ((10, 10, 8),), ((8, 6, 6),)]
FIVE_DICE_EACH = [((12, 10, 8, 8, 6),), ((10, 10, 8, 6, 4),)]


def test_benchmark_three_sides_with_pools(benchmark):
    result = benchmark.pedantic(solve_contest, args=(THREE_SIDES, Rules()), rounds=3, iterations=1)
    assert result.win == (Fraction(40859629, 73728000), Fraction(248345081, 663552000), Fraction(46495453, 663552000))
    assert result.tie == Fraction(64987, 44236800)
    assert result.expected_successes() == Fraction(1731032659, 1327104000)


def test_benchmark_five_dice_each_four_ties(benchmark):
    result = benchmark.pedantic(
        solve_contest, args=(FIVE_DICE_EACH, Rules(tie_rule="four-ties")), rounds=3, iterations=1
    )
    assert result.win == (Fraction(18224959, 29491200), Fraction(56011681, 147456000))
    assert result.tie == Fraction(26627, 12288000)
    assert result.expected_successes() == Fraction(37101793, 24576000)
