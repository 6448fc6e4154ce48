"""Exact Chronica contests against the spec's example and brute-force enumeration."""

from __future__ import annotations

import random
import sys
from itertools import product
from math import prod
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdice.chronica import Rules, apply_physical, apply_target, roll_outcomes, solve_contest
from exactdice.chronica.concessions import PairStatus, close_pairs, pair_step
from exactdice.chronica.contest import TIE, physical_size
from exactdice.chronica.success_dice import SuccessCode
from exactdice.errors import InputError, TooLargeError

sys.path.insert(0, str(Path(__file__).parent))
from chronica_reference import brute_force, with_pushes  # noqa: E402


def marginals(joint):
    """(winner, sizes) and (winner, concessions) marginals of the reference's joint outcomes."""
    sizes, gains = defaultdict(Fraction), defaultdict(Fraction)
    for (winner, success_sizes, concessions), p in joint.items():
        sizes[(winner, success_sizes)] += p
        gains[(winner, concessions)] += p
    return dict(sizes), dict(gains)


def exact_roll(sides, four_ties=False, physical=False):
    first, substituted = apply_physical(sides[0]) if physical else (tuple(sides[0]), False)
    sizes, gains = roll_outcomes([first] + list(sides[1:]), four_ties=four_ties, instant_first_side=substituted)
    return sizes.probabilities(), gains.probabilities()


def random_contest(rng, max_dice=6, max_size=8):
    while True:
        sides = []
        for _ in range(rng.choice([2, 2, 3])):
            pools = tuple(
                tuple(sorted((rng.randint(1, max_size) for _ in range(rng.randint(1, 3))), reverse=True))
                for _ in range(rng.choice([1, 1, 2]))
            )
            sides.append(pools)
        if sum(len(pool) for side in sides for pool in side) <= max_dice:
            return sides


# ----- the spec's worked micro-example ------------------------------------------------------


def test_d6_against_d6_micro_example():
    result = solve_contest([((6,),), ((6,),)])
    assert result.tie == Fraction(1, 6)
    assert result.win == (Fraction(5, 12), Fraction(5, 12))
    # the winner always has exactly one success die
    assert result.successes == {0: {1: Fraction(5, 12)}, 1: {1: Fraction(5, 12)}}
    assert result.success_sizes == {0: {(6,): Fraction(5, 12)}, 1: {(6,): Fraction(5, 12)}}


def test_hand_worked_small_cases():
    # d8 vs d6: ties on 1..6 (6/48), d8 wins 27/48, d6 wins 15/48
    result = solve_contest([((8,),), ((6,),)])
    assert (result.win, result.tie) == ((Fraction(9, 16), Fraction(5, 16)), Fraction(1, 8))
    # 2d4 vs d4: the pair can only lose when the single die beats both
    result = solve_contest([((4, 4),), ((4,),)])
    assert result.tie == 0
    assert result.win[1] == sum(Fraction((v - 1) ** 2, 64) for v in range(1, 5))


def test_cooperating_pools_tie_with_each_other_and_still_win():
    # side 0 = two pools of d1 (both show 1): side 0 alone holds the top against nothing higher
    result = solve_contest([((1,), (1,)), ((1,),)])
    # both pools of side 0 and side 1 show 1: one round of discards (both pools of side 0
    # discard), then every die is gone: a true tie
    assert result.tie == 1
    result = solve_contest([((1, 1), (1,)), ((1,),)])
    # side 0's first pool keeps a die after the discard round: it wins with one success die
    assert result.win[0] == 1 and result.successes[0] == {1: 1}


# ----- brute force: every face of every die -------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_random_contests_match_brute_force(seed):
    rng = random.Random(1000 + seed)
    for _ in range(25):
        sides = random_contest(rng)
        assert exact_roll(sides) == marginals(brute_force(sides)), sides


@pytest.mark.parametrize("seed", range(3))
def test_four_ties_matches_brute_force(seed):
    rng = random.Random(2000 + seed)
    long_chains = 0
    for _ in range(10):
        # small dice, five against four (and a small third side): four discard rounds happen
        while True:
            sides = []
            for count in (5, 4, 1)[: 2 + (seed == 2)]:
                dice = [rng.choice([1, 2, 2, 3]) for _ in range(count)]
                cut = rng.choice([count, count, 2])
                sides.append(tuple(pool for pool in (tuple(dice[:cut]), tuple(dice[cut:])) if pool))
            if prod(s for side in sides for pool in side for s in pool) <= 3000:
                break
        got = exact_roll(sides, four_ties=True)
        assert got == marginals(brute_force(sides, four_ties=True)), sides
        long_chains += got != exact_roll(sides)
    assert long_chains, "the four-ties rule must have mattered in some of these contests"


@pytest.mark.parametrize("seed", range(3))
def test_physical_dice_match_brute_force(seed):
    rng = random.Random(3000 + seed)
    for _ in range(20):
        sides = random_contest(rng, max_size=9)
        got = exact_roll(sides, physical=True)
        assert got == marginals(brute_force(sides, physical_dice=True)), sides


@settings(deadline=None, max_examples=40, derandomize=True)
@given(
    st.lists(
        st.lists(st.lists(st.integers(1, 7), min_size=1, max_size=2), min_size=1, max_size=2), min_size=2, max_size=3
    ).filter(lambda s: sum(len(p) for side in s for p in side) <= 6),
    st.booleans(),
)
def test_hypothesis_contests_match_brute_force(sides, four_ties):
    sides = [tuple(tuple(pool) for pool in side) for side in sides]
    assert exact_roll(sides, four_ties=four_ties) == marginals(brute_force(sides, four_ties=four_ties))


def test_pushes_match_brute_force():
    cases = [
        ([((4, 3),), ((4, 3),)], (), 2),
        ([((3,),), ((3,),)], (2,), 2),
        ([((2,), (3,)), ((3, 2),), ((3,),)], (2,), 1),
    ]
    for sides, push_dice, max_pushes in cases:
        rules = Rules(push=True, push_dice=push_dice, max_pushes=max_pushes)
        result = solve_contest(sides, rules)
        sizes, gains = marginals(with_pushes(sides, max_pushes=max_pushes, push_dice=push_dice))
        assert result.size_outcomes == sizes
        assert result.concession_outcomes == gains


def test_push_mixes_ties_into_rerolls():
    plain = solve_contest([((6,),), ((6,),)])
    pushed = solve_contest([((6,),), ((6,),)], Rules(push=True, max_pushes=3))
    assert pushed.tie == plain.tie**4
    assert pushed.win[0] == plain.win[0] * sum(plain.tie**k for k in range(4))


def test_push_dice_accumulate():
    rules = Rules(push=True, push_dice=(6,), max_pushes=2)
    result = solve_contest([((6,),), ((6,),)], rules)
    one = solve_contest([((6, 6),), ((6, 6),)])
    two = solve_contest([((6, 6, 6),), ((6, 6, 6),)])
    assert result.tie == Fraction(1, 6) * one.tie * two.tie
    assert result.win[0] == Fraction(5, 12) + Fraction(1, 6) * (one.win[0] + one.tie * two.win[0])


# ----- every knob changes the answer where it should ------------------------------------------


def test_four_ties_knob_adds_ties():
    sides = [((3, 3, 3, 3, 3),), ((3, 3, 3, 3, 3),)]
    plain = solve_contest(sides)
    four = solve_contest(sides, Rules(tie_rule="four-ties"))
    assert four.tie > plain.tie
    # four rounds of discards, then side 0 still has a die: a win, or a tie under four-ties
    assert solve_contest([((1,) * 5,), ((1,) * 4,)]).win[0] == 1
    assert solve_contest([((1,) * 5,), ((1,) * 4,)], Rules(tie_rule="four-ties")).tie == 1
    # three rounds are not enough for the four-ties rule
    assert solve_contest([((1,) * 4,), ((1,) * 3,)], Rules(tie_rule="four-ties")).win[0] == 1


def test_physical_knob_substitutes_and_wins_first_ties():
    assert [physical_size(n) for n in (3, 5, 7, 9, 11, 13, 19, 21)] == [3, 4, 6, 8, 10, 12, 12, 20]
    # d7 is rolled as a d6 and wins ties at the top: against a d6 it never loses a tie
    result = solve_contest([((7,),), ((6,),)], Rules(physical=True))
    assert result.win == (Fraction(5, 12) + Fraction(1, 6), Fraction(5, 12)) and result.tie == 0
    assert solve_contest([((7,),), ((6,),)]).win != result.win
    # no substituted die: the physical rule changes nothing
    assert solve_contest([((6,),), ((6,),)], Rules(physical=True)).tie == Fraction(1, 6)
    # only the first side is substituted
    assert solve_contest([((6,),), ((7,),)], Rules(physical=True)).rolled_sides[1] == ((7,),)


def test_target_knob():
    assert apply_target([((8,),), ((10, 4),), ((12, 12, 12, 2),)], 6) == [((8,),), ((10, 6, 6),), ((12, 12, 12, 6),)]
    # smallest first, at most three, and never a die already at least dN
    assert apply_target([((4,),), ((4, 4), (2, 2, 8))], 10) == [((4,),), ((10, 4), (10, 10, 8))]
    assert apply_target([((4,),), ((20,),)], 6) == [((4,),), ((20, 6, 6),)]
    plain = solve_contest([((8, 6),), ((4,),)])
    targeted = solve_contest([((8, 6),), ((4,),)], target=8)
    assert targeted.rolled_sides == (((8, 6),), ((8, 8, 8),))
    assert targeted.win[0] < plain.win[0]
    assert targeted.win == solve_contest([((8, 6),), ((8, 8, 8),)]).win


def test_success_sizes_keep_the_larger_die_of_a_tied_pool():
    # pool d2+d1 vs d1: the face-1 tie discards the smallest die showing 1
    # (d2 shows 2: it alone beats the 1; d2 shows 1: the d1 is discarded, the d2 wins)
    result = solve_contest([((2, 1),), ((1,),)])
    assert result.success_sizes == {0: {(2,): 1}}


def test_three_sides_concessions_add_up():
    result = solve_contest([((6, 6),), ((6,),), ((4,),)])
    assert sum(result.win) + result.tie == 1
    for table in result.concessions.values():
        assert sum(table.values()) == 1


def test_ten_dice_a_side_up_to_d20_solves():
    player = ((20, 20, 12, 12, 10, 10, 8, 8, 6, 4),)
    opposition = ((20, 12, 12, 10, 10, 10, 8, 8, 6, 4),)
    result = solve_contest([player, opposition])
    assert sum(result.win) + result.tie == 1
    assert max(result.successes[0]) <= 10
    for table in result.concessions.values():
        assert sum(table.values()) == 1


def test_solving_without_concessions_gives_the_same_rest():
    sides = [((12, 10, 10, 8, 6, 4),), ((12, 12, 8, 8, 6, 6),)]
    full, quick = solve_contest(sides), solve_contest(sides, concessions=False)
    assert (quick.win, quick.tie, quick.success_sizes) == (full.win, full.tie, full.success_sizes)
    assert quick.concession_outcomes == {}


# ----- bad input --------------------------------------------------------------------------------


def test_bad_input_is_an_input_error():
    with pytest.raises(InputError, match="two sides"):
        solve_contest([((6,),)])
    with pytest.raises(InputError, match="push_dice"):
        Rules(push_dice=(6,))
    with pytest.raises(InputError, match="tie_rule"):
        Rules(tie_rule="sometimes")
    with pytest.raises(InputError, match="max_pushes"):
        Rules(push=True, max_pushes=-1)
    with pytest.raises(TooLargeError, match="limit"):
        roll_outcomes([((6,) * 40,), ((6,) * 40,)])
    with pytest.raises(TooLargeError, match="states"):  # 18 different dice against 18
        roll_outcomes([(tuple(range(1, 19)),), (tuple(range(1, 19)),)])


def test_tie_outcome_uses_the_tie_index():
    sizes, gains = roll_outcomes([((1,),), ((1,),)])
    assert sizes.probabilities() == {(TIE, ()): 1}
    assert gains.probabilities() == {(TIE, (0, 0)): 1}


def test_pair_steps_walking_down_give_the_concession_rule():
    """`pair_step` fed face by face (highest first), then `close_pairs`, gives spec step 6 read directly."""
    for winner_faces in product(range(1, 5), repeat=2):
        for loser_count in range(3):
            for loser_faces in product(range(1, 5), repeat=loser_count):
                status, count, gains = PairStatus.OPEN, 0, [0, 0]
                for face in range(4, 0, -1):
                    status, count, won, lost = pair_step(
                        status, count, winner_faces.count(face), loser_faces.count(face)
                    )
                    gains[0] += won
                    gains[1] += lost
                (loser_gain,), winner_gain = close_pairs(((status, count),), gains)
                win_high, lose_high = max(winner_faces), max(loser_faces, default=0)
                expected = (
                    sum(f > lose_high for f in winner_faces) if win_high > lose_high else 0,
                    sum(f > win_high for f in loser_faces) if lose_high > win_high else 0,
                )
                assert (winner_gain, loser_gain) == expected, (winner_faces, loser_faces)


def test_success_code_packs_and_unpacks_every_multiset():
    code = SuccessCode([12, 8, 8, 6, 6, 6])
    for twelves, eights, sixes in product(range(2), range(3), range(4)):
        packed = twelves * code.unit[12] + eights * code.unit[8] + sixes * code.unit[6]
        assert code.decode(packed) == (12,) * twelves + (8,) * eights + (6,) * sixes


def test_sides_as_dice_text_are_the_same_contest_and_bad_sizes_are_named():
    assert solve_contest(["d8,d6", "d10"]) == solve_contest([((8, 6),), ((10,),)])
    with pytest.raises(InputError, match="sides: a die needs a whole number of sides >= 1, got 0"):
        solve_contest([((8, 0),), ((6,),)])
    with pytest.raises(InputError, match='a side is dice like "d8,d6"'):
        solve_contest([8, 6])
