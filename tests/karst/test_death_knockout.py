"""Karst death rolls (closed forms, an independent per-round recursion) and knock-out chains."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product

import pytest

from exactdice.errors import InputError
from exactdice.karst import Rules, KnockoutSetup, knockout_then_death, solve_death, solve_knockout
from exactdice.karst.rounds import TAIL_MASS
from exactdice.markov import Chance, Terminal, solve


def test_spec_micro_example():
    solution = solve_death(2)
    assert (solution.death, solution.stable) == (Fraction(3, 4), Fraction(1, 4))


@pytest.mark.parametrize("h", range(5))
def test_closed_form_without_aid(h):
    solution = solve_death(h)
    assert solution.death == Fraction(h + 1, h + 2)
    # rounds are geometric: inconclusive with probability (4 - h)/6 each roll
    keep = Fraction(4 - h, 6)
    assert solution.expected_rounds == keep / (1 - keep)
    for rounds, p in solution.rounds.probabilities.items():
        assert p == keep**rounds * (1 - keep)


def brute_death(h, modifier, aid, cap=12):
    """P(death) by enumerating the faces of a whole round (aid rolls, then the end roll)."""

    def classify(natural, health):
        result = max(1, natural - health + modifier)
        return "stable" if natural == 6 or result >= 6 else "one" if result == 1 else "open"

    @lru_cache(maxsize=None)
    def round_from(health):
        """From the start of a later round: P(death) (health only grows, so recursion ends)."""
        health = min(health, cap)
        death = stay = Fraction(0)
        further = Fraction(0)
        for faces in product(range(1, 7), repeat=aid + 1):
            p = Fraction(1, 6 ** (aid + 1))
            current, settled = health, None
            for natural in faces[:aid]:
                kind = classify(natural, current)
                if kind == "stable":
                    settled = "stable"
                    break
                if kind == "one":
                    current += 1
            if settled is None:
                kind = classify(faces[aid], current)
                if kind == "one":
                    death += p
                elif kind == "open":
                    if min(current, cap) == health:
                        stay += p
                    else:
                        further += p * round_from(current)
        return (death + further) / (1 - stay)

    death = Fraction(0)
    for natural in range(1, 7):
        kind = classify(natural, h)
        if kind != "stable":
            death += Fraction(1, 6) * (1 if kind == "one" else round_from(h))
    return death


@pytest.mark.parametrize(
    "h, modifier, aid",
    [
        (0, 0, 1),
        (1, 0, 2),
        (2, 1, 1),
        (3, -1, 2),
        (0, 2, 3),
        (5, 0, 1),
        (6, 0, 2),
        (1, -2, 1),
        (0, 7, 2),
    ],
)
def test_death_with_aid_matches_round_enumeration(h, modifier, aid):
    solution = solve_death(h, modifier, Rules(aid=aid))
    assert solution.death == brute_death(h, modifier, aid)
    assert solution.death + solution.stable == 1


def test_aid_and_modifier_matter():
    assert solve_death(0, rules=Rules(aid=1)).death < solve_death(0).death
    assert solve_death(2, modifier=1).death < solve_death(2).death
    assert solve_death(0, modifier=5).stable == 1


@pytest.mark.parametrize("h, aid", [(0, 0), (0, 2), (3, 1), (1, 3)])
def test_rounds_distribution_follows_the_truncation_rule(h, aid):
    solution = solve_death(h, rules=Rules(aid=aid))
    rounds = solution.rounds
    assert sum(rounds.probabilities.values()) + rounds.rest == 1
    assert rounds.rest < TAIL_MASS
    last = max(rounds.probabilities)
    if last > 0:  # one round earlier, the tail was still at least 10^-12
        assert rounds.rest + rounds.probabilities[last] >= TAIL_MASS
    mean_listed = sum(r * p for r, p in rounds.probabilities.items())
    assert 0 <= solution.expected_rounds - mean_listed < Fraction(1, 10**9)


def test_negative_health_must_be_non_negative():
    with pytest.raises(InputError, match="negative_health"):
        solve_death(-1)


# ----- knock-out chains ---------------------------------------------------------------


def brute_knockout(modifier, defense, damage_faces, health, unaware, rounds_limit):
    """P(knock-out in round r with negative health n), recursing on (round, health, first)."""
    hit = Fraction(sum(1 for n in range(1, 21) if n == 20 or (n != 1 and n + modifier >= defense)), 20)
    result: dict = {}

    def walk(round_number, left, p, first):
        if round_number > rounds_limit:
            return
        walk(round_number + 1, left, p * (1 - hit), False)
        for face in damage_faces:
            amount = max(1, face) * (2 if first and unaware else 1)
            q = p * hit / len(damage_faces)
            if left - amount <= 0:
                key = (round_number, amount - left)
                result[key] = result.get(key, 0) + q
            else:
                walk(round_number + 1, left - amount, q, False)

    walk(1, health, Fraction(1), True)
    return result


@pytest.mark.parametrize(
    "modifier, defense, damage, faces, health, unaware",
    [
        (0, 11, "d4", [1, 2, 3, 4], 3, False),
        (5, 15, "d4-2", [-1, 0, 1, 2], 4, True),
        (10, 12, "d3+1", [2, 3, 4], 5, True),
        (-2, 25, "2", [2], 2, False),
    ],
)
def test_knockout_matches_recursion(modifier, defense, damage, faces, health, unaware):
    chain = solve_knockout(KnockoutSetup(modifier, defense, damage, health, unaware))
    limit = 6
    brute = brute_knockout(modifier, defense, faces, health, unaware, limit)
    listed = {key: p for key, p in chain.knockout.items() if key[0] <= limit}
    assert listed == brute
    assert sum(chain.rounds.probabilities.values()) + chain.rounds.rest == 1
    assert chain.rounds.rest < TAIL_MASS


class KnockoutModel:
    """The same chain on the project's Markov solver, as an independent check of the mean."""

    outcomes = ("down",)
    reward_names = ("rounds",)

    def __init__(self, hit_weight, damage_faces, health, unaware):
        self.hit_weight, self.faces, self.health, self.unaware = hit_weight, damage_faces, health, unaware

    def initial_state(self):
        return (self.health, True)

    def expand(self, state):
        left, first = state
        if left <= 0:
            return Terminal("down")
        branches = [((20 - self.hit_weight) * len(self.faces), (left, False), (1,))] if self.hit_weight < 20 else []
        for face in self.faces:
            amount = max(1, face) * (2 if first and self.unaware else 1)
            branches.append((self.hit_weight, (max(left - amount, 0), False), (1,)))
        return Chance(tuple(branches))


@pytest.mark.parametrize(
    "damage, faces, health, unaware",
    [
        ("d6", [1, 2, 3, 4, 5, 6], 9, True),
        ("d4-1", [0, 1, 2, 3], 6, False),
        ("1", [1], 4, True),
    ],
)
def test_expected_rounds_against_markov_solver(damage, faces, health, unaware):
    chain = solve_knockout(KnockoutSetup(3, 14, damage, health, unaware))
    hit_weight = int(chain.hit * 20)
    expected = solve(KnockoutModel(hit_weight, faces, health, unaware)).expected_rewards["rounds"]
    assert chain.expected_rounds == expected
    listed_mean = sum(r * p for r, p in chain.rounds.probabilities.items())
    assert 0 <= chain.expected_rounds - listed_mean < Fraction(1, 10**8)


def test_negative_health_marginal_is_exact():
    chain = solve_knockout(KnockoutSetup(0, 11, "d4", 3))
    listed = {}
    for (_, negative), p in chain.knockout.items():
        listed[negative] = listed.get(negative, 0) + p
    assert sum(chain.negative_health.values()) == 1
    for negative, p in chain.negative_health.items():
        assert 0 <= p - listed.get(negative, 0) <= chain.rounds.rest


def test_unaware_doubles_the_first_hit():
    aware = solve_knockout(KnockoutSetup(100, 10, "3", 5))
    unaware = solve_knockout(KnockoutSetup(100, 10, "3", 5, unaware=True))
    assert aware.rounds.probabilities[1] == 0
    assert unaware.rounds.probabilities[1] == Fraction(19, 20)  # 6 damage on a hit
    assert unaware.expected_rounds < aware.expected_rounds


def test_then_death_chains_negative_health_into_the_death_roll():
    chain = solve_knockout(KnockoutSetup(0, 11, "d4", 3))
    result = knockout_then_death(chain)
    expected = sum(p * solve_death(n).death for n, p in chain.negative_health.items())
    assert result["death"] == expected and result["death"] + result["stable"] == 1
    assert knockout_then_death(chain, rules=Rules(aid=2))["death"] < expected


def test_knockout_bad_input():
    with pytest.raises(InputError, match="health"):
        solve_knockout(KnockoutSetup(0, 10, "d6", 0))
    with pytest.raises(InputError, match="damage"):
        solve_knockout(KnockoutSetup(0, 10, "d6+", 5))
