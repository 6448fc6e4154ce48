"""What a fixed policy picks at each decision point (`FixedPlay`): the player's and the
narrator's preferences applied, or None where a random narrator tosses a fair coin.
"""

from __future__ import annotations

from exactdice.errors import InternalError
from exactdice.karbon.model_decisions import after_take
from exactdice.karbon.position import Position

__all__ = ["FixedPlay"]


def _take_by_preference(available: tuple, count: int, order: tuple) -> tuple:
    """Take ``count`` dice from ``available`` following a preference order of indices."""
    taken = [0] * len(available)
    left = count
    for index in order:
        if left == 0:
            break
        take = min(available[index], left)
        taken[index] = take
        left -= take
    return tuple(taken)


class FixedPlay:
    """What fixed policies pick, for `exactdice.karbon.model.KarbonModel`: at each decision
    point a method ``_fixed_<point>`` names the option picked (None: a fair coin)."""

    def _fixed_choice(self, situation, options):
        """The option a fixed policy picks (None: a fair coin among the options)."""
        wanted = self._fixed[situation[0]](self, situation, [name for name, _, _ in options])
        if wanted is None:
            return None
        for option in options:
            if option[0] == wanted:
                return option
        raise InternalError(f"fixed policy chose {wanted!r}, not among {[name for name, _, _ in options]}")

    def _fixed_risk(self, situation, names):
        return "yes" if self.player.risk == "always" else "no"

    def _fixed_take(self, situation, names):
        _, position, _, count = situation
        return self._dice_name(_take_by_preference(position.pool, count, self.risk_take_order))

    def _fixed_break(self, situation, names):
        return next(o for o in self.player.break_order if o in names)

    def _fixed_swap(self, situation, names):
        return self._greedy_swap(situation[1])[0]

    def _fixed_give(self, situation, names):
        return self._dice_name(_take_by_preference(situation[1].narrator_hand, 2, self.give_order))

    def _fixed_glitch(self, situation, names):
        return next(o for o in self.player.glitch_order if o in names)

    def _fixed_hurt(self, situation, names):
        return None if self.narrator.kind == "random" else self.narrator.hurt

    def _fixed_plans(self, situation, names):
        return None if self.narrator.kind == "random" else self.narrator.plans

    def _fixed_planstake(self, situation, names):
        pool = situation[1].pool
        return self._dice_name(_take_by_preference(pool, min(2, sum(pool)), self.plans_take_order))

    def _fixed_sideswipe(self, situation, names):
        return self.player.sideswipe_take

    def _fixed_swipedice(self, situation, names):
        hand = situation[1].narrator_hand
        order = self.best_first if self.ruleset.sideswipe_picker == "player" else self.give_order
        return self._dice_name(_take_by_preference(hand, min(2, sum(hand)), order))

    def _fixed_take_next(self, situation):
        """The situation after a fixed player's take (`_fixed_take`), without listing the
        other options: the risk walk's most frequent decision (a quarter of its time)."""
        _, position, winner, count = situation
        key = (position.pool, count)
        taken = self._fixed_take_cache.get(key)
        if taken is None:
            taken = self._fixed_take_cache[key] = _take_by_preference(position.pool, count, self.risk_take_order)
        return after_take(position, winner, taken)

    def _greedy_swap(self, position: Position):
        """The fixed advantage: worst hand die for best reserve die while it improves, twice at most.

        Returns (name of the swap, number of swaps made), remembered by hand and reserve."""
        key = (position.player_hand, position.reserve)
        swap = self._swap_cache.get(key)
        if swap is None:
            swap = self._swap_cache[key] = self._greedy_swap_of(*key)
        return swap

    def _greedy_swap_of(self, player_hand: tuple, player_reserve: tuple):
        hand, reserve = list(player_hand), list(player_reserve)
        out, into = [0] * len(hand), [0] * len(hand)
        swaps = 0
        for _ in range(2):
            in_hand = [i for i in range(len(hand)) if hand[i]]
            in_reserve = [i for i in range(len(reserve)) if reserve[i]]
            if not in_hand or not in_reserve:
                break
            worst = max(in_hand, key=self.rank.__getitem__)
            best = min(in_reserve, key=self.rank.__getitem__)
            if self.rank[best] >= self.rank[worst]:
                break
            hand[worst] -= 1
            reserve[worst] += 1
            hand[best] += 1
            reserve[best] -= 1
            out[worst] += 1
            into[best] += 1
            swaps += 1
        return (self._swap_name(tuple(out), tuple(into)), swaps)
