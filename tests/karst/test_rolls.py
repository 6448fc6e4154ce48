"""Karst action, opposed, attack and order rolls against brute-force enumeration."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from itertools import product

import pytest

from exactdice.errors import InputError
from exactdice.karst import (
    Rules,
    action_success,
    attack_hit,
    opposed,
    order_before,
    order_places,
)


def brute_action(natural, modifier):
    total = natural + modifier
    if natural == 1:
        return False, total
    return natural == 6 or total >= 6, total


@pytest.mark.parametrize("modifier", range(-7, 8))
def test_action_success_by_enumeration(modifier):
    assert action_success(modifier) == Fraction(sum(brute_action(n, modifier)[0] for n in range(1, 7)), 6)


def test_action_natural_one_and_six():
    assert action_success(-50) == Fraction(1, 6)
    assert action_success(50) == Fraction(5, 6)
    assert action_success(2) == Fraction(1, 2)


@pytest.mark.parametrize("rule", ["totals", "success-first"])
def test_opposed_by_enumeration(rule):
    for first, second in product(range(-6, 8, 2), range(-5, 8, 3)):
        counts = defaultdict(int)
        for a, b in product(range(1, 7), repeat=2):
            (sa, ta), (sb, tb) = brute_action(a, first), brute_action(b, second)
            if rule == "success-first" and sa != sb:
                counts["first" if sa else "second"] += 1
            elif ta == tb:
                counts["neither"] += 1
            else:
                counts["first" if ta > tb else "second"] += 1
        expected = {name: Fraction(counts[name], 36) for name in ("first", "second", "neither")}
        assert opposed(first, second, Rules(opposed=rule)) == expected


def test_opposed_rule_matters():
    # +6 fails on a natural 1 with a total of 7; success-first lets a natural 6 of +0 beat it
    assert opposed(6, 0)["second"] == 0
    assert opposed(6, 0, Rules(opposed="success-first"))["second"] == Fraction(1, 36)


@pytest.mark.parametrize("modifier", range(-3, 12, 2))
def test_attack_hit_by_enumeration(modifier):
    for defense in range(5, 32, 3):
        hits = sum(1 for n in range(1, 21) if n == 20 or (n != 1 and n + modifier >= defense))
        assert attack_hit(modifier, defense) == Fraction(hits, 20)
    assert attack_hit(modifier, 100) == Fraction(1, 20)
    assert attack_hit(modifier, -100) == Fraction(19, 20)


def brute_order(modifiers, two_actions, surprised):
    count = len(modifiers)
    places = [defaultdict(Fraction) for _ in range(count)]
    before = [[Fraction(0)] * count for _ in range(count)]
    p = Fraction(1, 6**count)
    for naturals in product(range(1, 7), repeat=count):
        scores = []
        for number, (natural, modifier) in enumerate(zip(naturals, modifiers), start=1):
            score = natural + modifier
            if number in two_actions and score >= 4:
                score -= 3
            scores.append(None if number in surprised else score)
        for i, mine in enumerate(scores):
            if mine is None:
                continue
            places[i][1 + sum(1 for other in scores if other is not None and other > mine)] += p
            for j, theirs in enumerate(scores):
                if j != i and (theirs is None or mine > theirs):
                    before[i][j] += p
    return places, before


@pytest.mark.parametrize(
    "modifiers, two_actions, surprised",
    [
        ([2, 0, -1], (), ()),
        ([2, 0, -1], (1,), ()),
        ([0, 0, 0, 0], (2, 3), ()),
        ([3, 1, 0, -2], (1,), (4,)),
        ([1, 1], (), (1,)),
        ([5], (1,), ()),
    ],
)
def test_order_by_enumeration(modifiers, two_actions, surprised):
    places, before = brute_order(modifiers, two_actions, surprised)
    exact_places = order_places(modifiers, two_actions, surprised)
    exact_before = order_before(modifiers, two_actions, surprised)
    for i in range(len(modifiers)):
        if i + 1 in surprised:
            assert exact_places[i] is None
        else:
            assert exact_places[i] == dict(places[i])
            assert sum(exact_places[i].values()) == 1
        for j in range(len(modifiers)):
            assert exact_before[i][j] == (None if i == j else before[i][j])


def test_two_actions_knob_matters():
    assert order_places([0, 0])[0] != order_places([0, 0], two_actions=[1])[0]
    assert order_before([0, 0], surprised=[2])[0][1] == 1


def test_order_bad_combatant():
    with pytest.raises(InputError, match="two_actions: combatant 3 does not exist"):
        order_places([0, 0], two_actions=[3])
    with pytest.raises(InputError, match="surprised"):
        order_before([0], surprised=[0])
