"""The decision points of a round (`DecisionOptions`): at each, who decides and the options
open, ``(name, next situation, packed reward)`` in the spec's tie-break order.
"""

from __future__ import annotations

from functools import lru_cache

from exactdice.karbon.dice import DiceSizes, compositions
from exactdice.karbon.model_branches import NO_REWARD, ONE_CONDITION, ONE_INJURY
from exactdice.karbon.model_positions import make_position, minus, plus
from exactdice.karbon.position import Position

__all__ = ["DECISION_POINTS", "DecisionOptions", "after_take"]

# every decision point of a round: the method listing its options (name, next situation,
# rewards) and the method naming what a fixed policy picks there (None: a fair coin)
DECISION_POINTS = {
    "risk": ("_risk_options", "_fixed_risk"),
    "take": ("_take_options", "_fixed_take"),
    "break": ("_break_options", "_fixed_break"),
    "swap": ("_swap_options", "_fixed_swap"),
    "give": ("_give_options", "_fixed_give"),
    "glitch": ("_glitch_options", "_fixed_glitch"),
    "hurt": ("_hurt_options", "_fixed_hurt"),
    "plans": ("_plans_options", "_fixed_plans"),
    "planstake": ("_planstake_options", "_fixed_planstake"),
    "sideswipe": ("_sideswipe_options", "_fixed_sideswipe"),
    "swipedice": ("_swipedice_options", "_fixed_swipedice"),
}


@lru_cache(maxsize=65536)
def _named_compositions(sizes: DiceSizes, available: tuple, count: int) -> tuple:
    """``(name, taken)`` for every composition (`compositions`), remembered: the same pool
    and count recur in many situations."""
    return tuple((sizes.text(taken), taken) for taken in compositions(available, count))


class DecisionOptions:
    """The options at each decision point and who decides there, for
    `exactdice.karbon.model.KarbonModel`."""

    def _decision(self, situation):
        """(side deciding as a node or None, options) at a decision situation.

        Options are ``(name, next situation, reward)`` in the spec's tie-break order.
        """
        options, who = self._phases[situation[0]](self, situation)
        decides = self.player_decides if who == "player" else self.narrator_decides
        side = ("max" if who == "player" else self.narrator_side) if decides else None
        return side, options

    def _dice_name(self, counts: tuple) -> str:
        return self.sizes.text(counts)

    def _swap_name(self, out: tuple, into: tuple) -> str:
        return f"{self.sizes.text(out)}->{self.sizes.text(into)}"

    def _risk_options(self, situation):
        _, position, winner = situation
        return [
            ("no", ("peril", position, winner), NO_REWARD),
            ("yes", ("riskroll", position, winner), NO_REWARD),
        ], "player"

    def _take_options(self, situation):
        _, position, winner, count = situation
        return [
            (name, after_take(position, winner, taken), NO_REWARD)
            for name, taken in _named_compositions(self.sizes, position.pool, count)
        ], "player"

    def _break_options(self, situation):
        _, position, queue = situation
        options = []
        if position.peril > 0:
            options.append(("security", ("test", position._replace(peril=position.peril - 1), queue), NO_REWARD))
        if position.narrator_chips > 0:
            options.append(("footing-discard", ("test", position._replace(narrator_chips=0), queue), NO_REWARD))
        if sum(position.narrator_hand) > 0:
            options.append(("footing-dice", ("give", position, queue), NO_REWARD))
        if self._advantage_applicable(position):
            options.append(("advantage", ("swap", position, queue), NO_REWARD))
        if not options:
            options.append(("none", ("test", position, queue), NO_REWARD))
        return options, "player"

    def _advantage_applicable(self, position: Position) -> bool:
        if self.player_decides:
            hand_types = [i for i, c in enumerate(position.player_hand) if c]
            reserve_types = [i for i, c in enumerate(position.reserve) if c]
            return any(h != r for h in hand_types for r in reserve_types)
        return bool(self._greedy_swap(position)[1])

    def _swap_options(self, situation):
        _, position, queue = situation
        hand, reserve = position.player_hand, position.reserve
        options = []
        for size in (1, 2):
            for out in compositions(hand, size):
                for into in compositions(reserve, size):
                    if any(o and i for o, i in zip(out, into)):
                        continue  # a type both out and in is a smaller swap (or none)
                    new_hand = plus(minus(hand, out), into)
                    new_reserve = plus(minus(reserve, into), out)
                    options.append(
                        (
                            self._swap_name(out, into),
                            ("test", position._replace(player_hand=new_hand, reserve=new_reserve), queue),
                            NO_REWARD,
                        )
                    )
        return options, "player"

    def _give_options(self, situation):
        _, position, queue = situation
        hand = position.narrator_hand
        return [
            (
                self._dice_name(given),
                (
                    "test",
                    position._replace(narrator_hand=minus(hand, given), player_hand=plus(position.player_hand, given)),
                    queue,
                ),
                NO_REWARD,
            )
            for given in compositions(hand, min(2, sum(hand)))
        ], "narrator"

    def _glitch_options(self, situation):
        _, position, queue = situation
        options = [("hurt", ("hurt", position, queue), NO_REWARD), ("plans", ("plans", position, queue), NO_REWARD)]
        if position.wins >= 1:
            options.append(("sideswipe", ("sideswipe", position._replace(wins=position.wins - 1), queue), NO_REWARD))
        return options, "player"

    def _hurt_options(self, situation):
        _, position, queue = situation
        injured = position._replace(
            player_chips=position.player_chips + 2,
            peril=position.peril + (1 if self.ruleset.injury_peril == "on" else 0),
        )
        return [
            ("injury", ("test", injured, queue), ONE_INJURY),
            ("condition", ("test", position, queue), ONE_CONDITION),
        ], "narrator"

    def _plans_options(self, situation):
        _, position, queue = situation
        take = min(2, sum(position.pool))
        dice_next = ("planstake", position, queue) if take else ("test", position, queue)
        return [
            ("dice", dice_next, NO_REWARD),
            ("peril", ("test", position._replace(peril=position.peril + 1), queue), NO_REWARD),
        ], "narrator"

    def _planstake_options(self, situation):
        _, position, queue = situation
        return [
            (
                self._dice_name(taken),
                (
                    "test",
                    position._replace(
                        pool=minus(position.pool, taken), narrator_hand=plus(position.narrator_hand, taken)
                    ),
                    queue,
                ),
                NO_REWARD,
            )
            for taken in compositions(position.pool, min(2, sum(position.pool)))
        ], "narrator"

    def _sideswipe_options(self, situation):
        _, position, queue = situation
        chips = position._replace(player_chips=position.player_chips + position.narrator_chips, narrator_chips=0)
        options = [("chips", ("test", chips, queue), NO_REWARD)]
        if sum(position.narrator_hand):
            options.append(("dice", ("swipedice", position, queue), NO_REWARD))
        else:
            options.append(("dice", ("test", position, queue), NO_REWARD))
        return options, "player"

    def _swipedice_options(self, situation):
        options, _ = self._give_options(situation)
        picker = "player" if self.ruleset.sideswipe_picker == "player" else "narrator"
        return options, picker


def after_take(position: Position, winner: str, taken: tuple):
    """The pre-peril situation after the player took ``taken`` from the pool (a risk)."""
    return (
        "peril",
        make_position((plus(position[0], taken), position[1], minus(position[2], taken)) + position[3:]),
        winner,
    )
