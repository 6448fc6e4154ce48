"""Spec step 5, success dice, settled in closed form once the candidate has won.

    "Success dice: the winner's dice still in play (all its pools) that are strictly
    higher than the highest die still in play among all losing sides (0 if they have none)."

At the face where the candidate wins, its dice showing that face and kept through the
discards are success dice (every loser's die left is lower). Its other dice are uniform
below: given the losers' highest die left, L = l, each is a success when it shows more
than l, independently, and L depends only on the losers' dice. So the sizes of the
success dice follow from (the face, the winner's dice in play per size, the losers' dice
in play) without walking further (`SuccessSizes`). Sizes are counted per die size,
packed in one int (`SuccessCode`), so adding counts is one ``+``.

>>> code = SuccessCode([8, 6, 6])
>>> code.decode(code.unit[8] + 2 * code.unit[6])
(8, 6, 6)
"""

from __future__ import annotations

from collections import defaultdict
from math import comb, prod

__all__ = ["SuccessCode", "WinnerDice", "SuccessSizes"]


class SuccessCode:
    """The winner's success dice counted per die size, packed in one int (mixed radix)."""

    def __init__(self, winner_dice):
        self.sizes = sorted(set(winner_dice), reverse=True)
        self.count = {size: winner_dice.count(size) for size in self.sizes}
        self.unit = {}
        unit = 1
        for size in self.sizes:
            self.unit[size] = unit
            unit *= self.count[size] + 1

    def decode(self, code: int) -> tuple:
        """The sizes of the success dice, largest first."""
        sizes = []
        for size in self.sizes:
            sizes += [size] * ((code // self.unit[size]) % (self.count[size] + 1))
        return tuple(sizes)


class WinnerDice:
    """The candidate's dice counters read for step 5. The walk counts the candidate's
    dice per (pool, size): ``counter_pools[i]`` and ``counter_sizes[i]`` are counter i's.

    >>> winner = WinnerDice([0, 0, 1], [8, 6, 6], SuccessCode([8, 6, 6]))
    >>> winner.kept_code((1, 1, 1), discards=1) == winner.code.unit[8], winner.in_play_per_size((1, 0, 1))
    (True, (1, 1))
    """

    def __init__(self, counter_pools: list, counter_sizes: list, code: SuccessCode):
        self.code = code
        by_size = sorted(range(len(counter_sizes)), key=lambda counter: counter_sizes[counter])
        #: per pool: (counter, success unit) of each of its counters, smallest size first
        self.pool_counters = [
            [(counter, code.unit[counter_sizes[counter]]) for counter in by_size if counter_pools[counter] == pool]
            for pool in range(max(counter_pools) + 1)
        ]
        size_indices = [code.sizes.index(size) for size in counter_sizes]
        #: per counter, the index of its size in ``code.sizes`` (None: the counters are the sizes)
        self.size_index = None if size_indices == list(range(len(code.sizes))) else size_indices

    def kept_code(self, shown, discards: int) -> int:
        """Packed sizes of the winner's dice showing the deciding face that outlast
        ``discards`` rounds of discards: each round, every pool showing the face discards
        one die of it, its smallest (its larger ones are worth more as success dice)."""
        kept = 0
        for counters in self.pool_counters:
            to_discard = discards
            for counter, unit in counters:
                count = shown[counter]
                if count > to_discard:
                    kept += (count - to_discard) * unit
                    to_discard = 0
                else:
                    to_discard -= count
        return kept

    def in_play_per_size(self, dice_left) -> tuple:
        """The winner's dice still in play per size (largest first), from its counters."""
        if self.size_index is None:  # one pool: its counters are the sizes, in order
            return dice_left
        per_size = [0] * len(self.code.sizes)
        for counter, left in enumerate(dice_left):
            per_size[self.size_index[counter]] += left
        return tuple(per_size)


class SuccessSizes:
    """The weights of the candidate's success sizes: each decision is recorded (`add`),
    and the closed form settles them all at the end (`settle`)."""

    def __init__(self, winner_dice, loser_dice):
        self.code = SuccessCode(list(winner_dice))
        self.loser_dice = sorted(loser_dice)
        self.decisions: dict = defaultdict(int)  # (face, winner in play per size, losers in play, kept) -> weight
        self._by_decision: dict = {}
        self._losers_highest_cache: dict = {}
        self._above_cache: dict = {}

    def add(self, face, winner_in_play, losers_in_play, kept_code, weight) -> None:
        """The candidate won at ``face`` keeping ``kept_code`` there, with these dice in play."""
        self.decisions[(face, winner_in_play, losers_in_play, kept_code)] += weight

    def settle(self) -> dict:
        """``{success sizes: weight}`` over every recorded decision."""
        by_code: dict = defaultdict(int)
        for (face, winner_in_play, losers_in_play, kept), weight in self.decisions.items():
            for code, ways in self._below_decision(face, winner_in_play, losers_in_play).items():
                by_code[kept + code] += weight * ways
        return {self.code.decode(code): weight for code, weight in by_code.items()}

    def _below_decision(self, face, winner_in_play, losers_in_play) -> dict:
        """Packed success counts -> ways, for the dice below a decision at ``face``."""
        key = (face, winner_in_play, losers_in_play)
        cached = self._by_decision.get(key)
        if cached is not None:
            return cached
        groups = []  # (success unit, number of dice, highest face they can show)
        for size, in_play in zip(self.code.sizes, winner_in_play):
            if size >= face:
                groups.append((self.code.unit[size], in_play, face - 1))
            else:  # still waiting: every die of this size, on 1..size
                groups.append((self.code.unit[size], self.code.count[size], size))
        result: dict = defaultdict(int)
        for highest, loser_ways in self._losers_highest(face, losers_in_play):
            table = {0: loser_ways}
            for group in groups:
                above = self._above(highest, *group)
                table = {code + extra: ways * more for code, ways in table.items() for extra, more in above}
            for code, ways in table.items():
                result[code] += ways
        self._by_decision[key] = result = dict(result)
        return result

    def _losers_highest(self, face, losers_in_play) -> list:
        """``[(l, ways the losers' highest die left is l)]``."""
        key = (face, losers_in_play)
        cached = self._losers_highest_cache.get(key)
        if cached is None:
            tops = [face - 1] * losers_in_play + [size for size in self.loser_dice if size < face]
            cached, at_most_before = [], 0
            for highest in range(0, max(tops, default=0) + 1):
                at_most = prod(min(highest, top) for top in tops)
                if at_most - at_most_before:
                    cached.append((highest, at_most - at_most_before))
                at_most_before = at_most
            self._losers_highest_cache[key] = cached
        return cached

    def _above(self, highest, unit, dice, top) -> list:
        """``[(k * unit, ways)]``: k of ``dice`` dice on 1..top show more than ``highest``."""
        key = (highest, unit, dice, top)
        cached = self._above_cache.get(key)
        if cached is None:
            above, at_most = max(top - highest, 0), min(highest, top)
            cached = [
                (count * unit, comb(dice, count) * above**count * at_most ** (dice - count))
                for count in range(dice + 1)
            ]
            cached = [(code, ways) for code, ways in cached if ways]
            self._above_cache[key] = cached
        return cached
