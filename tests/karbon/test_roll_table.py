"""The roll table of a pair of hands (grouped by hits and turncoat count) against the
plain double loop over both hands' outcomes."""

import pytest

from exactdice.karbon.dice import hand_roll
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import ContestSetup


def plain_table(player_hand, narrator_hand, sizes):
    player_roll, narrator_roll = hand_roll(player_hand, sizes), hand_roll(narrator_hand, sizes)
    table = {}
    for p_outcome, p_weight in player_roll.items():
        for n_outcome, n_weight in narrator_roll.items():
            hits_p, turn_p, hits_n, turn_n = p_outcome[0], p_outcome[1:], n_outcome[0], n_outcome[1:]
            winner = "p" if hits_p > hits_n else "n" if hits_n > hits_p else "t"
            gains = {"p": (hits_p, 0), "n": (0, hits_n), "t": (hits_p, hits_n)}[winner]
            if sum(turn_p) > sum(turn_n):
                hands = (
                    tuple(a - b for a, b in zip(player_hand, turn_p)),
                    tuple(a + b for a, b in zip(narrator_hand, turn_p)),
                )
            elif sum(turn_n) > sum(turn_p):
                hands = (
                    tuple(a + b for a, b in zip(player_hand, turn_n)),
                    tuple(a - b for a, b in zip(narrator_hand, turn_n)),
                )
            else:
                hands = (player_hand, narrator_hand)
            key = (winner, *gains, *hands)
            table[key] = table.get(key, 0) + p_weight * n_weight
    return table, player_roll.denominator * narrator_roll.denominator


@pytest.mark.parametrize(
    "player_dice, narrator_dice",
    [
        ({6: 1}, {10: 1}),
        ({4: 2}, {4: 1}),
        ({8: 3}, {8: 2, 10: 1}),
        ({6: 2, 8: 1, 10: 1}, {6: 1, 10: 3}),
        ({}, {8: 2}),
        ({10: 2, 4: 1}, {}),
        ({6: 3, 8: 3}, {6: 2, 8: 2, 10: 3}),
    ],
)
def test_roll_table_matches_the_plain_double_loop(player_dice, narrator_dice):
    setup = ContestSetup(player_dice=player_dice, narrator_dice=narrator_dice, consequence=1, pool={}, reserve={})
    player, narrator = PlayerPolicy(), NarratorPolicy()
    start = setup.start(player, narrator)
    model = KarbonModel(start.sizes, start.situation(), Rules(), player, narrator)
    position = start.position
    table, denominator = model._roll_table(position.player_hand, position.narrator_hand)
    grouped = {}
    for weight, *key in table:
        assert tuple(key) not in grouped
        grouped[tuple(key)] = weight
    assert (grouped, denominator) == plain_table(position.player_hand, position.narrator_hand, start.sizes.sizes)


def test_roll_table_is_computed_once_per_pair_of_hands():
    # the cache key was once overwritten inside the loop, so every round start recomputed its table
    setup = ContestSetup(player_dice={6: 2, 8: 1}, narrator_dice={10: 2}, consequence=1, pool={}, reserve={})
    player, narrator = PlayerPolicy(), NarratorPolicy()
    start = setup.start(player, narrator)
    model = KarbonModel(start.sizes, start.situation(), Rules(), player, narrator)
    hands = (start.position.player_hand, start.position.narrator_hand)
    first = model._roll_table(*hands)
    assert model._roll_table(*hands) is first
    assert list(model._roll_cache) == [hands]
