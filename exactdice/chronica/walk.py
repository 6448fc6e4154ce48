"""What every step of a Chronica roll's face walk shares (`exactdice.chronica.roll`).

The walk goes down the face values from the highest. At face ``v`` a die not yet
placed is either *in play* (its size is at least ``v``: it shows some face in 1..v,
uniformly) or *waiting* (smaller than ``v``; it joins the walk at the face equal to its
size). "k of the m dice in play show v" has C(m, k) ways and leaves m - k dice in play
on 1..v-1, so weights are integers over the fixed total prod N and nothing ever
enumerates rolls.

>>> ways_to_show(3, 6)
((0, 1), (1, 3), (2, 3), (3, 1))
>>> join_dice((1, 0), [{6: 2}, {4: 1}], 6)
(3, 0)
"""

from __future__ import annotations

from collections import defaultdict
from math import comb, prod

__all__ = ["TIED", "OTHER_WINS", "ways_to_show", "join_dice", "joining_faces", "waiting_weights", "CandidateFrame"]

#: the outcome key of a tie, and of a win by a side other than the pass's candidate
TIED = ("tie",)
OTHER_WINS = ("other",)


def ways_to_show(dice_in_play: int, face: int) -> tuple:
    """``((k, ways), ...)``: how many of ``dice_in_play`` dice show ``face`` and in how
    many ways; at face 1 every die left shows 1."""
    if face == 1:
        return ((dice_in_play, 1),)
    return tuple((shown, comb(dice_in_play, shown)) for shown in range(dice_in_play + 1))


def join_dice(dice_left: tuple, joining: list, face: int) -> tuple:
    """``dice_left`` per counter with the dice that join the walk at ``face`` added."""
    return tuple(left + joins.get(face, 0) for left, joins in zip(dice_left, joining))


def joining_faces(sizes) -> dict:
    """Face -> how many of these dice join the walk there (a dN joins at face N).

    >>> joining_faces([8, 6, 6])
    {8: 1, 6: 2}
    """
    joins: dict = defaultdict(int)
    for size in sizes:
        joins[size] += 1
    return dict(joins)


def waiting_weights(sizes) -> dict:
    """Face v -> the product of the sizes below v: the ways the dice still waiting at v can fall.

    >>> waiting_weights([6, 4, 2])
    {1: 1, 2: 1, 3: 2, 4: 2, 5: 8, 6: 8}
    """
    return {face: prod(size for size in sizes if size < face) for face in range(1, max(sizes) + 1)}


class CandidateFrame:
    """One candidate's pass: the contest, the candidate and its losers, and the outcome
    weights found so far (``sizes``: (winner, success sizes) -> weight; ``concessions``:
    (winner, concession dice per side) -> weight; ties and other sides' wins under
    `TIED` and `OTHER_WINS` in both)."""

    def __init__(self, sides, candidate: int):
        self.sides = sides
        self.candidate = candidate
        self.losers = [side for side in range(len(sides)) if side != candidate]
        self.dice = [[size for pool in side for size in pool] for side in sides]  # per side, pools merged
        every_size = [size for side_dice in self.dice for size in side_dice]
        self.top_face = max(every_size)
        self.total = prod(every_size)
        self.waiting = waiting_weights(every_size)
        self.sizes: dict = defaultdict(int)
        self.concessions: dict = defaultdict(int)

    def unplaced_weight(self, dice_in_play: int, face: int) -> int:
        """The ways every die not yet placed can fall: those in play below ``face``, the rest waiting."""
        return (face - 1) ** dice_in_play * self.waiting[face]

    def concession_key(self, loser_gains, winner_gain) -> tuple:
        """The outcome ``(candidate, concession dice per side)``."""
        gains = [0] * len(self.sides)
        gains[self.candidate] = winner_gain
        for loser, gain in zip(self.losers, loser_gains):
            gains[loser] = gain
        return (self.candidate, tuple(gains))

    def settle(self, outcome, weight) -> None:
        """Record a settled outcome (`TIED` or `OTHER_WINS`) in both tallies."""
        self.sizes[outcome] += weight
        self.concessions[outcome] += weight
