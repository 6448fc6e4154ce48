"""The dice a round rolls: both hands at once (`roll_table`: the contest's winner, the chips
each side gains and the hands after an Opening, over every roll of the two hands), and the
extra d8 of a risk and of peril (`binomial_hits`).
"""

from __future__ import annotations

import math
from functools import lru_cache

from exactdice.karbon.dice import hand_roll
from exactdice.karbon.model_positions import minus, plus

__all__ = ["RISK_DICE", "EXTRA_DIE_SIDES", "roll_table", "binomial_hits"]

RISK_DICE = 3  # d8 rolled when the player risks
EXTRA_DIE_SIDES = 8  # risk and peril dice are d8


@lru_cache(maxsize=4096)
def _hand_summary(hand: tuple, sizes: tuple) -> tuple:
    """``(hand_roll, _hits_and_count, _hits_with_fewer_turncoats)`` of a hand, remembered:
    a hand meets many others in the roll tables (`roll_table`)."""
    roll = hand_roll(hand, sizes)
    groups = _hits_and_count(roll)
    return roll, groups, _hits_with_fewer_turncoats(groups)


def _hits_and_count(roll) -> dict:
    """A hand roll's outcomes ``(hits, *turncoats per type)`` summed by (hits, turncoats)."""
    groups: dict = {}
    for outcome, weight in roll.items():
        key = (outcome[0], sum(outcome[1:]))
        groups[key] = groups.get(key, 0) + weight
    return groups


def _hits_with_fewer_turncoats(groups: dict) -> list:
    """``[{hits: weight}, ...]``: at index ``c``, the outcomes with fewer than ``c``
    turncoats; the last entry holds them all (for any larger count)."""
    counts = sorted({count for _, count in groups})
    result, running = [], {}
    for count in range(counts[-1] + 2 if counts else 1):
        result.append(dict(running))
        for (hits, group_count), weight in groups.items():
            if group_count == count:
                running[hits] = running.get(hits, 0) + weight
    return result


def _contest(hits_p: int, hits_n: int) -> tuple:
    """(winner, chips the player gains, chips the narrator gains) of a roll's hits."""
    if hits_p > hits_n:
        return "p", hits_p, 0
    if hits_n > hits_p:
        return "n", 0, hits_n
    return "t", hits_p, hits_n


def roll_table(player_hand: tuple, narrator_hand: tuple, sizes: tuple) -> tuple:
    """``(table, denominator)`` of the roll of both hands: the table's entries are
    ``(weight, winner, chips the player gains, chips the narrator gains, player hand after,
    narrator hand after)``, the weights over ``denominator``."""
    player_roll, player_groups, player_fewer = _hand_summary(player_hand, sizes)
    narrator_roll, narrator_groups, narrator_fewer = _hand_summary(narrator_hand, sizes)
    # The side with more turncoats offers them (an Opening), so the hands after the
    # roll follow that side's turncoats alone; the other side matters only through
    # its hits, summed over its outcomes with fewer turncoats. That makes the table
    # cost |outcomes| x |hit counts| per side, not |outcomes|^2.
    merged: dict = {}
    for offering_roll, fewer, player_offers in (
        (player_roll, narrator_fewer, True),
        (narrator_roll, player_fewer, False),
    ):
        for outcome, weight in offering_roll.items():
            hits, turn = outcome[0], outcome[1:]
            count = sum(turn)
            other_hits = fewer[min(count, len(fewer) - 1)]
            if not other_hits:
                continue
            if player_offers:
                hands = (minus(player_hand, turn), plus(narrator_hand, turn))
            else:
                hands = (plus(player_hand, turn), minus(narrator_hand, turn))
            for hits_other, other_weight in other_hits.items():
                entry = (_contest(hits, hits_other) if player_offers else _contest(hits_other, hits)) + hands
                merged[entry] = merged.get(entry, 0) + weight * other_weight
    unchanged = (player_hand, narrator_hand)
    for (hits_p, count_p), p_weight in player_groups.items():  # no Opening
        for (hits_n, count_n), n_weight in narrator_groups.items():
            if count_p == count_n:
                entry = _contest(hits_p, hits_n) + unchanged
                merged[entry] = merged.get(entry, 0) + p_weight * n_weight
    table = tuple((w,) + k for k, w in merged.items())
    return table, player_roll.denominator * narrator_roll.denominator


@lru_cache(maxsize=None)
def binomial_hits(dice: int, sides: int = EXTRA_DIE_SIDES) -> tuple:
    """((hits, weight), ...) for ``dice`` extra dN with hits on 1-3, over ``sides**dice``."""
    hit = min(3, sides)
    return tuple((k, math.comb(dice, k) * hit**k * (sides - hit) ** (dice - k)) for k in range(dice + 1))
