"""How long a Karbon contest lasts: the exact probability it has ended by round n.

`contest_length` reads a solved contest (`exactdice.karbon.solve.contest_odds`): its
model, and under optimal play the strategy found, make a chain whose ``rounds`` reward
counts the rounds; `exactdice.markov.reward_layers` gives the exact mass that ends in
each outcome at each round count. Rounds are listed until less than `TAIL_TARGET` of the
mass is left (at most `MAX_ROUNDS`), or up to a number asked for; what has not ended by
then is the exact tail. `exactdice.karbon.charts.length_chart` draws it.

>>> from exactdice.karbon.setup import ContestSetup
>>> from exactdice.karbon.solve import contest_odds
>>> odds = contest_odds(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}))
>>> length = contest_length(odds, rounds=3)
>>> length.rounds, [round(float(p), 4) for p in length.ended_by], length.tail == 1 - length.ended_by[-1]
((1, 2, 3), [0.0, 0.0, 0.0067], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.markov.reward_layers import RewardLayers

__all__ = ["ContestLength", "contest_length", "TAIL_TARGET", "MAX_ROUNDS"]

#: rounds are listed until less than this much of the contest's mass is left
TAIL_TARGET = Fraction(1, 100)
#: the most rounds listed (asked for or not)
MAX_ROUNDS = 500
_OUTCOMES = ("win", "loss", "tie")


@dataclass(frozen=True)
class ContestLength:
    """``ended_by[i]``: P(the contest has ended by round ``rounds[i]``), exactly;
    ``ended_in[outcome][i]`` the same split by how it ended; ``tail`` what has not ended by
    the last round listed (a longer contest, or one that never ends)."""

    rounds: tuple
    ended_by: tuple
    ended_in: dict
    tail: Fraction
    expected_rounds: Fraction | None
    description: str

    def to_json(self) -> dict:
        """The exact values as ``"p/q"`` strings (and decimals), round by round."""
        from exactdice.core.exact import decimal_text, fraction_text

        return {
            "rounds": list(self.rounds),
            "ended_by": [fraction_text(p) for p in self.ended_by],
            "ended_by_decimal": [decimal_text(p, 10) for p in self.ended_by],
            "ended_in": {outcome: [fraction_text(p) for p in values] for outcome, values in self.ended_in.items()},
            "tail": fraction_text(self.tail),
            "expected_rounds": None if self.expected_rounds is None else fraction_text(self.expected_rounds),
        }


def contest_length(odds, *, rounds: int | None = None, max_states: int | None = None) -> ContestLength:
    """The exact P(ended by round n) of a solved contest, n = 1 .. ``rounds`` (None: until
    less than `TAIL_TARGET` is left, at most `MAX_ROUNDS`). ``max_states`` bounds the
    graph explored again with the rounds marked (None: room for the solved graph)."""
    if odds.model is None or not odds.exact:
        raise InputError("odds", "the contest's length needs an exact solve (not a float preview or bounds)")
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS
    ):
        raise InputError("rounds", f"must be a whole number from 1 to {MAX_ROUNDS}, got {rounds!r}")
    if max_states is None:  # the solved graph, and at most one marker state per transition
        max_states = max(10_000, 2 * odds.transitions)
    layers = RewardLayers(odds.model, "rounds", strategy=odds.strategy or None, max_states=max_states)
    so_far = dict.fromkeys(_OUTCOMES, Fraction(0))
    _add(so_far, layers.next_layer())  # ended before any round (a Fallout that settles it)
    ended_in: dict = {outcome: [] for outcome in _OUTCOMES}
    ended_by: list[Fraction] = []
    while len(ended_by) < (rounds or MAX_ROUNDS):
        _add(so_far, layers.next_layer())
        for outcome in _OUTCOMES:
            ended_in[outcome].append(so_far[outcome])
        ended_by.append(sum(so_far.values(), Fraction(0)))
        if rounds is None and 1 - ended_by[-1] < TAIL_TARGET:
            break
    return ContestLength(
        tuple(range(1, len(ended_by) + 1)),
        tuple(ended_by),
        {outcome: tuple(values) for outcome, values in ended_in.items()},
        1 - ended_by[-1],
        odds.expected_rounds,
        _describe(odds),
    )


def _add(so_far: dict, layer: dict) -> None:
    for outcome in _OUTCOMES:
        so_far[outcome] += layer.get(outcome, 0)


def _describe(odds) -> str:
    setup = odds.setup
    if setup is None:
        return "Karbon contest"
    return (
        f"Karbon contest, player {_hand(odds.player_draw)} v narrator {_hand(odds.narrator_draw)}, "
        f"track {setup.consequence}, peril {setup.peril}"
    )


def _hand(dice: dict) -> str:
    from exactdice.karbon.dice import dice_text

    return dice_text(dice) or "no dice"
