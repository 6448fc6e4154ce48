"""Spec step 6, concession dice, counted face by face once the candidate has won.

    "Concessions: set the success dice aside. Between the winner and each losing side,
    compare their highest remaining dice: if equal, nothing; otherwise the side with the
    higher die gains as concession dice its dice higher than the other's highest."

Walking the faces from the highest down, one (winner, loser) pair needs only a
`PairStatus` and a count (`pair_step`). The walk's states after the decision are
`Winning` (no loser's die has shown yet, so the winner's dice showing now are success
dice, set aside) and `Conceding` (a status and a count per loser, and the gains so far);
`ConcessionWalk` steps them one face at a time. Concession dice a winner gains from
several losers add up.

>>> pair_step(OPEN, 0, 2, 0), pair_step(WINNER_COUNTING, 2, 1, 1)
((<PairStatus.WINNER_COUNTING: 1>, 2, 0, 0), (<PairStatus.SETTLED: 3>, 0, 2, 0))
"""

from __future__ import annotations

from collections import defaultdict
from enum import IntEnum
from itertools import product
from math import prod
from typing import NamedTuple

from exactdice.chronica.walk import CandidateFrame, join_dice, ways_to_show

__all__ = [
    "PairStatus",
    "OPEN",
    "WINNER_COUNTING",
    "LOSER_COUNTING",
    "SETTLED",
    "pair_step",
    "close_pairs",
    "Winning",
    "Conceding",
    "WINNING",
    "ConcessionWalk",
]


class PairStatus(IntEnum):
    """Where one (winner, loser) pair of the concession count stands, walking the faces down."""

    OPEN = 0  #: neither has shown a die since the success dice
    WINNER_COUNTING = 1  #: the winner's highest is higher: it counts its dice above the loser's highest
    LOSER_COUNTING = 2  #: the loser's highest is higher: the loser counts
    SETTLED = 3  #: the other's highest has shown (or both showed the same): nothing more changes


OPEN, WINNER_COUNTING, LOSER_COUNTING, SETTLED = PairStatus


def pair_step(status, count, winner_shown, loser_shown):
    """One face of step 6 for one pair: ``(status, count, winner's gain, loser's gain)``.

    ``winner_shown`` and ``loser_shown`` are how many of each side's dice show this face.
    The first side to show a die holds the higher "highest remaining die" and counts its
    dice until the other's highest shows; equal highest dice concede nothing.
    """
    if status == OPEN:
        if winner_shown and loser_shown:  # "if equal, nothing"
            return SETTLED, 0, 0, 0
        if winner_shown:
            return WINNER_COUNTING, winner_shown, 0, 0
        if loser_shown:
            return LOSER_COUNTING, loser_shown, 0, 0
        return OPEN, count, 0, 0
    if status == WINNER_COUNTING:
        return (SETTLED, 0, count, 0) if loser_shown else (WINNER_COUNTING, count + winner_shown, 0, 0)
    if status == LOSER_COUNTING:
        return (SETTLED, 0, 0, count) if winner_shown else (LOSER_COUNTING, count + loser_shown, 0, 0)
    return SETTLED, 0, 0, 0


def close_pairs(pairs, gains):
    """``(losers' gains, winner's gain)`` once every die is placed: a pair still counting
    keeps what it counted (the other side had no die left).

    >>> close_pairs(((WINNER_COUNTING, 2), (SETTLED, 0)), (1, 0, 3))
    ((0, 3), 3)
    """
    gains = list(gains)
    for loser, (status, count) in enumerate(pairs):
        if status == WINNER_COUNTING:
            gains[0] += count
        elif status == LOSER_COUNTING:
            gains[1 + loser] += count
    return tuple(gains[1:]), gains[0]


# The walk's states are named tuples (hashed as fast as tuples); their lengths differ from
# `exactdice.chronica.roll.Undecided`'s, so two kinds never compare equal as layer keys.


class Winning(NamedTuple):
    """The candidate has won and no loser's die has shown yet: its dice showing now are
    success dice (spec step 5; their sizes are settled in `exactdice.chronica.success_dice`)."""


class Conceding(NamedTuple):
    """A loser's die has shown: spec step 6, one ``(PairStatus, count)`` per loser in ``pairs``;
    ``gains[0]`` is the winner's concession dice so far, ``gains[1 + j]`` loser ``j``'s."""

    pairs: tuple
    gains: tuple


WINNING = Winning()


class ConcessionWalk:
    """The `Winning` and `Conceding` steps of one candidate's pass.

    After the decision the dice left are counted per side, winner first, then each loser
    (``joining``: the dice of each that join the walk at each face). A loser whose pair is
    settled no longer matters: its dice are summed out at once. Equal `Conceding` steps
    reached from many states in one face are queued and applied once (`apply_queued`).
    """

    def __init__(self, frame: CandidateFrame, joining: list[dict]):
        self.frame = frame
        self.joining = joining
        self.no_pairs = ((OPEN, 0),) * len(frame.losers)
        self.no_gains = (0,) * (len(frame.losers) + 1)
        self.queued: dict = defaultdict(int)  # (pairs, gains, winner shown, losers shown, dice left) -> weight

    def enter(self, dice_left, weight, out) -> None:
        """The candidate has just won with ``dice_left`` (winner, then each loser)."""
        out[(WINNING, dice_left)] += weight

    def queue(self, pairs, gains, winner_shown, losers_shown, dice_left, weight) -> None:
        """Queue a `Conceding` step of this face (`apply_queued` applies it)."""
        self.queued[(pairs, gains, winner_shown, losers_shown, dice_left)] += weight

    def queue_first(self, winner_shown, losers_shown, dice_left, weight) -> None:
        """Queue the first `Conceding` step: a loser's die shows for the first time."""
        self.queue(self.no_pairs, self.no_gains, winner_shown, losers_shown, dice_left, weight)

    def winning_step(self, dice_left, face, weight, out) -> None:
        """The winner's dice showing ``face`` are success dice until a loser's die shows."""
        dice_left = join_dice(dice_left, self.joining, face)
        for choice in product(*(ways_to_show(left, face) for left in dice_left)):
            shown = tuple(count for count, _ in choice)
            ways = weight * prod(ways for _, ways in choice)
            left = tuple(before - count for before, count in zip(dice_left, shown))
            if any(shown[1:]):
                self.queue_first(shown[0], shown[1:], left, ways)
            else:
                out[(WINNING, left)] += ways

    def conceding_step(self, state: Conceding, dice_left, face, weight, out) -> None:
        """Step 6 at ``face``: settled losers' dice sum out; the others' shown dice are queued."""
        dice_left = join_dice(dice_left, self.joining, face)
        options = [ways_to_show(left, face) for left in dice_left]
        for loser, (status, _) in enumerate(state.pairs):
            if status == SETTLED:  # "this loser no longer matters": its dice fall anywhere on 1..face
                weight *= face ** dice_left[1 + loser]
                options[1 + loser] = ((0, 1),)
                dice_left = dice_left[: 1 + loser] + (0,) + dice_left[2 + loser :]
        for choice in product(*options):
            shown = tuple(count for count, _ in choice)
            left = tuple(before - count for before, count in zip(dice_left, shown))
            self.queue(state.pairs, state.gains, shown[0], shown[1:], left, weight * prod(ways for _, ways in choice))

    def apply_queued(self, face, out) -> None:
        """Apply this face's queued steps to every (winner, loser) pair (`pair_step`)."""
        for (pairs, gains, winner_shown, losers_shown, dice_left), weight in self.queued.items():
            self._apply(pairs, gains, winner_shown, losers_shown, dice_left, face, weight, out)
        self.queued.clear()

    def _apply(self, pairs, gains, winner_shown, losers_shown, dice_left, face, weight, out) -> None:
        new_pairs, gains, dice_left = [], list(gains), list(dice_left)
        for loser, ((status, count), shown) in enumerate(zip(pairs, losers_shown)):
            status, count, winner_gain, loser_gain = pair_step(status, count, winner_shown, shown)
            gains[0] += winner_gain
            gains[1 + loser] += loser_gain
            if status == SETTLED and dice_left[1 + loser]:  # its dice left fall anywhere below this face
                weight *= (face - 1) ** dice_left[1 + loser]
                dice_left[1 + loser] = 0
            new_pairs.append((status, count))
        if all(status == SETTLED for status, _ in new_pairs):
            key = self.frame.concession_key(tuple(gains[1:]), gains[0])
            self.frame.concessions[key] += weight * self.frame.unplaced_weight(sum(dice_left), face)
            return
        out[(Conceding(tuple(new_pairs), tuple(gains)), tuple(dice_left))] += weight

    def close(self, state, weight) -> None:
        """Below face 1: every die is placed and the gains are final."""
        if type(state) is Winning:
            key = self.frame.concession_key((0,) * len(self.frame.losers), 0)
        else:
            key = self.frame.concession_key(*close_pairs(state.pairs, state.gains))
        self.frame.concessions[key] += weight
