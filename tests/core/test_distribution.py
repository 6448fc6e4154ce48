"""Exact distributions against hand-derived values and brute-force enumeration."""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from exactdice import Distribution, Pool, d, constant, parse_dice
from exactdice.errors import InputError, TooLargeError


def brute_sum(sides_list):
    counts = {}
    for roll in itertools.product(*(range(1, s + 1) for s in sides_list)):
        counts[sum(roll)] = counts.get(sum(roll), 0) + 1
    return Distribution(counts)


def test_three_d6_hand_values():
    three = d(6).sum_of(3)
    assert three.probability(10) == Fraction(27, 216)
    assert three.probability(3) == Fraction(1, 216)
    assert three.mean() == Fraction(21, 2)
    assert three.variance() == Fraction(35, 4)


@pytest.mark.parametrize("sides_list", [(6, 6, 6), (4, 8), (6, 8, 10), (2, 3, 5, 7), (20, 20)])
def test_sums_match_brute_force(sides_list):
    total = constant(0)
    for sides in sides_list:
        total = total + d(sides)
    assert total == brute_sum(sides_list)


def test_sum_of_uses_power_and_matches_repeated_convolution():
    repeated = constant(0)
    for _ in range(13):
        repeated = repeated + d(7)
    assert d(7).sum_of(13) == repeated
    # tuple outcomes take the sparse path
    pair = d(3).map(lambda face: (face, face % 2))
    repeated_pair = pair + pair + pair
    assert pair.sum_of(3) == repeated_pair


def test_comparisons_max_min_against_brute_force():
    a, b = d(6), d(8)
    pairs = list(itertools.product(range(1, 7), range(1, 9)))
    assert a.p_greater(b) == Fraction(sum(x > y for x, y in pairs), 48)
    assert a.p_equal(b) == Fraction(sum(x == y for x, y in pairs), 48)
    assert a.p_less(b) == Fraction(sum(x < y for x, y in pairs), 48)
    assert a.maximum(b) == Distribution.from_faces(max(x, y) for x, y in pairs)
    assert a.minimum(b) == Distribution.from_faces(min(x, y) for x, y in pairs)


def test_joint_marginal_condition_and_tables():
    joint = d(4).joint(d(6))
    assert joint.probability((2, 5)) == Fraction(1, 24)
    assert joint.marginal(0) == d(4)
    assert d(10).condition(lambda face: face >= 6) == Distribution.from_faces(range(6, 11))
    survival = d(6).sum_of(2).survival()
    cdf = d(6).sum_of(2).cdf()
    assert survival[7] == Fraction(21, 36) and cdf[7] == Fraction(21, 36)
    assert all(survival[x] + cdf[x] - d(6).sum_of(2).probability(x) == 1 for x in survival)


def test_middle_of_three_d6():
    middle = Pool([d(6)] * 3).order_statistic(1)
    assert middle.probability(1) == Fraction(2, 27)
    assert middle.at_least(4) == Fraction(1, 2)


@pytest.mark.parametrize("sides_list", [(6, 8, 10), (4, 12, 12), (3, 3, 5, 2), (6, 6, 6, 6, 6)])
def test_order_statistics_match_brute_force(sides_list):
    rolls = list(itertools.product(*(range(1, s + 1) for s in sides_list)))
    pool = Pool([d(s) for s in sides_list])
    for position in range(len(sides_list)):
        expected = Distribution.from_faces(sorted(r)[position] for r in rolls)
        assert pool.order_statistic(position) == expected


@pytest.mark.parametrize("sides_list,keep", [((6, 6, 6, 6), 3), ((4, 6, 8), 2), ((10, 10, 10), 1), ((6, 8), 0)])
def test_keep_highest_and_lowest_match_brute_force(sides_list, keep):
    rolls = list(itertools.product(*(range(1, s + 1) for s in sides_list)))
    pool = Pool([d(s) for s in sides_list])
    assert pool.keep_highest(keep) == Distribution.from_faces(sum(sorted(r, reverse=True)[:keep]) for r in rolls)
    assert pool.keep_lowest(keep) == Distribution.from_faces(sum(sorted(r)[:keep]) for r in rolls)


def test_count_where_and_custom_faces():
    pool = Pool([d(6), d(8), Distribution.from_faces([0, 0, 1])])
    rolls = itertools.product(range(1, 7), range(1, 9), [0, 0, 1])
    expected = Distribution.from_faces(sum(face >= 1 and face % 2 == 1 for face in r) for r in rolls)
    assert pool.count_where(lambda face: face >= 1 and face % 2 == 1) == expected


def test_evaluate_sorted_sees_counts_per_group():
    # which group holds the highest face (ties to the smaller-sized group, index 0)
    groups = [(d(4), 1), (d(6), 1)]

    def owner(state, face, counts):
        if state is not None:
            return state
        for index, count in enumerate(counts):
            if count:
                return index
        return None

    result = Pool(groups).evaluate(owner)
    brute = Distribution.from_faces(0 if a >= b else 1 for a in range(1, 5) for b in range(1, 7))
    assert result == brute


def test_notation_values():
    assert parse_dice("3d6+2") == d(6).sum_of(3) + 2
    assert parse_dice("4d6kh3") == Pool([d(6)] * 4).keep_highest(3)
    assert parse_dice("4d6k3") == parse_dice("4d6kh3")
    assert parse_dice("2d20kl1") == d(20).minimum(d(20))
    assert parse_dice("d6+d8+d10") == d(6) + d(8) + d(10)
    assert parse_dice("(2d6+1)-d4") == d(6).sum_of(2) + 1 - d(4)
    assert parse_dice("-3 + 5") == constant(2)


@pytest.mark.parametrize("text,column", [("3d6x", 4), ("3d", 3), ("(d6", 4), ("", None), ("4d6kh", 6), ("d0", 2)])
def test_bad_notation_points_at_the_character(text, column):
    with pytest.raises(InputError) as error:
        parse_dice(text)
    if column is not None:
        assert f"column {column}" in str(error.value)


def test_limits():
    with pytest.raises(TooLargeError, match="1000"):
        parse_dice("1001d6")
    with pytest.raises(TooLargeError, match="faces"):
        parse_dice("d2000000")
    with pytest.raises(InputError, match="cannot keep 5 of 4"):
        parse_dice("4d6kh5")


# ----- property tests: random small expressions sum to exactly 1 and match brute force ----

dice_terms = st.lists(st.tuples(st.integers(1, 3), st.integers(1, 8)), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(dice_terms, st.integers(-5, 5))
def test_random_expressions_sum_to_one_and_match_brute_force(terms, offset):
    text = "+".join(f"{count}d{sides}" for count, sides in terms) + (f"+{offset}" if offset >= 0 else f"{offset}")
    distribution = parse_dice(text)
    assert sum(distribution.probabilities().values()) == 1
    sides_list = [sides for count, sides in terms for _ in range(count)]
    assert distribution == brute_sum(sides_list) + offset


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=4), st.data())
def test_random_keep_highest_matches_brute_force(sides_list, data):
    keep = data.draw(st.integers(0, len(sides_list)))
    rolls = itertools.product(*(range(1, s + 1) for s in sides_list))
    expected = Distribution.from_faces(sum(sorted(r, reverse=True)[:keep]) for r in rolls)
    result = Pool([d(s) for s in sides_list]).keep_highest(keep)
    assert result == expected
    assert sum(result.probabilities().values()) == 1
