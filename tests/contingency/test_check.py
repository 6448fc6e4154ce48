"""Contingency skill checks: the spec's micro-examples, every knob, and brute-force twins."""

from __future__ import annotations

import random
from collections import defaultdict
from fractions import Fraction
from itertools import product

import pytest

from exactdice.contingency import (
    Rules,
    choose_to_fail,
    expected_distribution,
    parse_pool,
    skill_check,
    solve_check,
)
from exactdice.errors import InputError


# ----- a brute-force twin: list every face of every die, follow the rules literally ------


def omens(face, rules):
    player = 3 if face >= 12 else 2 if face >= 10 else 1 if face >= 8 else 0
    gm = (face <= 1) if rules.gm_omen == "at-most-1" else (face == 1)
    return player, int(gm)


def brute_force(check, rules, difficulty):
    """(outcome, total, player omens, gm omens) -> p, and result die size -> p, by enumeration."""
    joint, sizes = defaultdict(Fraction), defaultdict(Fraction)
    count = len(check.dice)
    net = check.advantage - check.disadvantage
    position = count - 1 if net > 0 else 0 if net < 0 else count // 2
    roll_p = Fraction(1, 1)
    for size in check.dice:
        roll_p /= size
    for naturals in product(*(range(1, size + 1) for size in check.dice)):
        faces = [n + m for n, m in zip(naturals, check.modifiers)]
        ranked = sorted(range(count), key=lambda i: (faces[i], check.dice[i], i))
        chosen = ranked[position]
        face, size = faces[chosen], check.dice[chosen]
        player = sum(omens(f, rules)[0] for f in faces)
        gm = sum(omens(f, rules)[1] for f in faces)
        use_luck = rules.luck == "always" or (rules.luck == "if-failing" and face < difficulty)
        luck_faces = (
            [n + (check.modifiers[chosen] if rules.luck_modifier else 0) for n in range(1, size + 1)]
            if use_luck
            else [None]
        )
        for luck in luck_faces:
            p = roll_p / len(luck_faces)
            total = face + (luck or 0)
            extra = omens(luck, rules) if luck is not None else (0, 0)
            if difficulty is None:
                outcome = None
            elif total >= difficulty:
                outcome = "success"
            elif total == difficulty - 1 and rules.fail_by_one == "take":
                outcome = "success-with-condition"
            else:
                outcome = "failure"
            joint[(outcome, total, player + extra[0], gm + extra[1])] += p
            sizes[size] += p
    return dict(joint), dict(sizes)


def random_case(rng):
    count = rng.choice([3, 3, 3, 1, 5]) if rng.random() < 0.3 else 3
    dice = tuple(rng.choice([2, 3, 4, 6, 8] if count < 5 else [2, 3, 4]) for _ in range(count))
    modifiers = tuple(rng.randint(-2, 3) for _ in dice) if rng.random() < 0.6 else (0,) * count
    rules = Rules(
        luck=rng.choice(["never", "always", "if-failing"]),
        fail_by_one=rng.choice(["take", "refuse"]),
        luck_modifier=rng.random() < 0.5,
        gm_omen=rng.choice(["exactly-1", "at-most-1"]),
        any_size=count != 3,
    )
    difficulty = rng.randint(1, 12)
    check = skill_check(
        dice,
        modifiers=modifiers,
        advantage=rng.choice([0, 0, 1, 2]),
        disadvantage=rng.choice([0, 0, 1]),
        difficulty=difficulty,
    )
    return check, rules


@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_on_random_pools(seed):
    rng = random.Random(1000 + seed)
    for _ in range(20):
        check, rules = random_case(rng)
        solution = solve_check(check, rules)
        joint, sizes = brute_force(check, rules, check.difficulty)
        assert solution.joint.probabilities() == joint, (check, rules)
        assert {size: p for size, p in solution.result_die.probabilities().items()} == sizes
        for level, p in solution.p_at_least.items():
            at_level, _ = brute_force(check, rules, level)
            assert p == sum(q for (outcome, *_), q in at_level.items() if outcome == "success")
            assert solution.p_at_least_with_condition[level] == sum(
                q for (outcome, *_), q in at_level.items() if outcome != "failure"
            )


def test_without_difficulty_matches_brute_force():
    check = skill_check([4, 6, 8], modifiers=[2, 0, -1], advantage=1)
    rules = Rules(luck="always", luck_modifier=True)
    joint, _ = brute_force(check, rules, None)
    assert solve_check(check, rules).joint.probabilities() == joint
    assert "outcome" not in solve_check(check, rules).to_json()


# ----- the spec's worked micro-example ------------------------------------------------------


def test_middle_of_three_d6():
    solution = solve_check(skill_check("d6,d6,d6", difficulty=4))
    assert solution.p_at_least[4] == Fraction(1, 2)
    assert solution.outcome_probabilities()["success"] == Fraction(1, 2)
    assert solution.total.probability(1) == Fraction(16, 216)


def test_seed_example_luck_die_is_the_middle_die():
    # Monique rolls d6, d8, d10 showing 3, 1, 9: the middle is the d6. With the d8 and d10
    # pinned by modifiers only the d6 varies, so the result die is always the d6.
    check = skill_check([6, 8, 10], modifiers=[0, -100, 100])
    assert solve_check(check).result_die.probabilities() == {6: Fraction(1)}


def test_ties_go_to_the_smaller_die():
    # A d4 and a d2 beside a d3 pinned far above: the middle die is the higher of the
    # d4 and the d2; on a tie the d2 sorts first, so the d4 is the middle one.
    high_pin = solve_check(skill_check([4, 2, 3], modifiers=[0, 0, 50]))
    assert high_pin.result_die.probability(4) == Fraction(sum(1 for a in range(1, 5) for b in range(1, 3) if a >= b), 8)
    # pinned far below: the middle is the lower of the two, and a tie leaves the d2 there
    low_pin = solve_check(skill_check([4, 2, 3], modifiers=[0, 0, -50]))
    assert low_pin.result_die.probability(4) == Fraction(sum(1 for a in range(1, 5) for b in range(1, 3) if a < b), 8)


# ----- every knob changes the answer -------------------------------------------------------


def test_advantage_and_disadvantage_cancel():
    base = solve_check(skill_check([6, 8, 10], difficulty=6)).outcome_probabilities()
    cancelled = solve_check(skill_check([6, 8, 10], difficulty=6, advantage=2, disadvantage=2))
    assert cancelled.outcome_probabilities() == base
    high = solve_check(skill_check([6, 8, 10], difficulty=6, advantage=2, disadvantage=1))
    low = solve_check(skill_check([6, 8, 10], difficulty=6, disadvantage=3))
    assert low.p_at_least[6] < base["success"] < high.p_at_least[6]
    assert high.total.max_outcome() == 10 and low.total.max_outcome() == 6


def test_luck_policies():
    check = skill_check([4, 4, 4], difficulty=5)
    never = solve_check(check, Rules(luck="never")).outcome_probabilities()
    always = solve_check(check, Rules(luck="always")).outcome_probabilities()
    failing = solve_check(check, Rules(luck="if-failing")).outcome_probabilities()
    assert never["success"] == 0
    assert 0 < always["success"] <= failing["success"]
    # a d4 result below 5 plus a d4 luck die: only "if-failing" never wastes a success
    high = skill_check([4, 4, 4], difficulty=3)
    assert (
        solve_check(high, Rules(luck="if-failing")).outcome_probabilities()["success"]
        >= solve_check(high, Rules(luck="always")).outcome_probabilities()["success"]
    )


def test_fail_by_one_policy():
    check = skill_check([6, 6, 6], difficulty=4)
    take = solve_check(check).outcome_probabilities()
    refuse = solve_check(check, Rules(fail_by_one="refuse")).outcome_probabilities()
    assert take["success-with-condition"] == solve_check(check).total.probability(3) > 0
    assert refuse["success-with-condition"] == 0
    assert refuse["failure"] == take["failure"] + take["success-with-condition"]


def test_luck_modifier_shifts_the_luck_die():
    check = skill_check([6, 6, 6], modifier=2, difficulty=4)
    off = solve_check(check, Rules(luck="always"))
    on = solve_check(check, Rules(luck="always", luck_modifier=True))
    assert on.total.mean() == off.total.mean() + 2


def test_gm_omen_rule():
    check = skill_check([4, 4, 4], modifier=-2)
    exactly = solve_check(check, Rules(gm_omen="exactly-1")).gm_omens.mean()
    at_most = solve_check(check, Rules(gm_omen="at-most-1")).gm_omens.mean()
    assert exactly == Fraction(3, 4) and at_most == Fraction(9, 4)


def test_omens_count_every_die_and_the_luck_die():
    check = skill_check([12, 12, 12])
    plain = solve_check(check)
    assert plain.player_omens.max_outcome() == 9
    lucky = solve_check(check, Rules(luck="always"))
    assert lucky.player_omens.max_outcome() == 12  # "up to 12 omens from a single roll"


def test_choose_to_fail():
    assert [choose_to_fail(), choose_to_fail(1), choose_to_fail(0, 1), choose_to_fail(2, 2)] == [2, 3, 1, 2]


def test_expected_distribution_names_every_outcome():
    probabilities = expected_distribution(skill_check([6, 8, 10], difficulty=7))
    assert set(probabilities) == {"success", "success-with-condition", "failure"}
    assert sum(probabilities.values()) == 1


# ----- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dice, rules, message",
    [
        ("d1,d6,d6", Rules(), "d1 is not allowed"),
        ("d6,d6", Rules(), "no middle die"),
        ("d6,d6,d6,d6", Rules(any_size=True), "no middle die"),
        ("d6,d6,d6,d6,d6", Rules(), "`any_size`"),
        ("d6,z8,d6", Rules(), "unknown die"),
        ("", Rules(), "unknown die"),
    ],
)
def test_bad_pools(dice, rules, message):
    with pytest.raises(InputError, match=message):
        solve_check(skill_check(dice), rules)


def test_any_size_allows_other_odd_pools():
    assert solve_check(skill_check("5d6"), Rules(any_size=True)).result_die.probability(6) == 1
    assert parse_pool("d4,2d8") == (4, 8, 8)


def test_other_bad_input():
    with pytest.raises(InputError, match="one modifier per die"):
        skill_check("d6,d6,d6", modifiers=[1, 2])
    with pytest.raises(InputError, match="if-failing needs `difficulty`"):
        solve_check(skill_check("d6,d6,d6"), Rules(luck="if-failing"))
    with pytest.raises(InputError, match="advantage"):
        skill_check("d6,d6,d6", advantage=-1)
    with pytest.raises(InputError, match="luck"):
        Rules(luck="maybe")


# ----- interchangeable dice are walked as one group (issue 16) -------------------------------


@pytest.mark.parametrize(
    "dice, modifiers",
    [
        ((4, 4, 4, 2, 2, 4, 3), (1, 1, 1, 0, 0, 1, 2)),  # groups of 4, 2 and 1
        ((3, 3, 3, 3, 3), (0, 1, 0, 1, 0)),  # one size, two modifiers: die by die
        ((2, 4, 2, 4, 2), (0, 0, 0, -1, 0)),  # d2s grouped, d4s die by die
    ],
)
def test_grouped_dice_match_brute_force(dice, modifiers):
    for rules in (Rules(any_size=True, luck="always", luck_modifier=True), Rules(any_size=True, luck="if-failing")):
        for advantage, disadvantage in ((0, 0), (1, 0), (0, 1)):
            check = skill_check(dice, modifiers=modifiers, advantage=advantage, disadvantage=disadvantage, difficulty=4)
            joint, sizes = brute_force(check, rules, check.difficulty)
            solution = solve_check(check, rules)
            assert solution.joint.probabilities() == joint
            assert solution.result_die.probabilities() == sizes


def test_work_estimate_refuses_huge_pools_up_front_and_allows_many_equal_dice():
    from exactdice.contingency.check import MAX_CHECK_WORK, check_work
    from exactdice.errors import TooLargeError

    rules = Rules(any_size=True)
    big = skill_check("999d6")
    assert check_work(big) > MAX_CHECK_WORK
    with pytest.raises(TooLargeError, match=r"^dice: this pool would take about 3\.0e\+10 steps"):
        solve_check(big, rules)
    # the estimate of a pool without omens, calibrated on 201d6 (7 s): 501d6 is refused
    assert check_work(skill_check("201d6")) < MAX_CHECK_WORK < check_work(skill_check("501d6"))
    # 13d6 is one group of 13 interchangeable dice: exact and quick (was > 100 s die by die)
    solution = solve_check(skill_check("13d6", difficulty=4), rules)
    assert solution.outcome_probabilities()["success"] == Fraction(1, 2)  # symmetric middle die


@pytest.mark.parametrize(
    "options, message",
    [
        ({"modifier": 10**9}, "modifier: a face modifier must be between -1000 and 1000"),
        ({"modifiers": [0, 0, -1001]}, "modifiers: a face modifier must be between"),
        ({"difficulty": -5}, "difficulty: must be between 1 .Automatic. and 10,000, got -5"),
        ({"difficulty": 0}, "difficulty: must be between 1"),
        ({"difficulty": 10**6}, "difficulty: must be between 1 .Automatic. and 10,000, got 1000000"),
    ],
)
def test_modifier_and_difficulty_bounds(options, message):
    with pytest.raises(InputError, match=message):
        skill_check([6, 6, 6], **options)
