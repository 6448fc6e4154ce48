"""The walk of a round (`RoundWalk`): one path followed from a situation through the chance
events (the risk dice, peril) and the decisions of a fixed or random side, until it reaches
the next round start, the end, or a decision made as a node of its own; and the Test (spec
4.7), where chips are placed and the Breaks and Glitches they complete are resolved.
"""

from __future__ import annotations

from exactdice.karbon.model_branches import NO_REWARD, ONE_BREAK, ONE_GLITCH, emit
from exactdice.karbon.model_positions import (
    LOSSES,
    NARRATOR_CHIPS,
    NARRATOR_STACK,
    PLAYER_CHIPS,
    PLAYER_STACK,
    WINS,
    make_position,
    replaced,
)
from exactdice.karbon.model_rolls import EXTRA_DIE_SIDES, RISK_DICE, binomial_hits
from exactdice.karbon.position import STACK_SIZE, Position

__all__ = ["RoundWalk"]


class RoundWalk:
    """The walk of a round and its Test, for `exactdice.karbon.model.KarbonModel`."""

    def _walk(self, situation, num, den, reward, out, top=False):
        """Follow one path from ``situation`` until a round start, the end or an open decision."""
        while True:
            if type(situation) is Position:
                emit(out, self.round_start(situation), num, den, reward)
                return
            at_top, top = top, False
            phase = situation[0]
            if phase == "end":
                emit(out, situation, num, den, reward)
                return
            if phase == "riskroll":  # reached from one risk situation only: nothing to share
                self._risk_roll(situation, num, den, reward, out)
                return
            if phase == "peril":
                if self.peril_recurs and not at_top:
                    self._follow(situation, num, den, reward, out)
                else:
                    self._peril(situation, num, den, reward, out)
                return
            if phase == "test":
                situation, reward = self._test_step(situation, reward)
                continue
            if not self.player_decides:  # a fixed player's risk and take, built alone
                if phase == "risk":  # `_fixed_risk`'s choice
                    situation = (self._risked_phase,) + situation[1:]
                    continue
                if phase == "take":  # `_fixed_take`'s pick
                    situation = self._fixed_take_next(situation)
                    continue
            side, options = self._decision(situation)
            if len(options) == 1:
                name, situation, delta = options[0]
                reward += delta
                continue
            if side is not None and not at_top:  # an optimal / kind side decides: its own node
                emit(out, situation, num, den, reward)
                return
            chosen = self._fixed_choice(situation, options)
            if chosen is None:  # a coin flip (random narrator): two equally likely paths
                for name, nxt, delta in options:
                    self._walk(nxt, num, den * len(options), reward + delta, out)
                return
            name, situation, delta = chosen
            reward += delta

    def _follow(self, situation, num, den, reward, out):
        """Emit the rest of the round from ``situation`` (`_continuation`), reached with
        probability num/den and reward ``reward``."""
        for rest_num, rest_den, nxt, rest_reward in self._continuation(situation):
            emit(out, nxt, num * rest_num, den * rest_den, reward + rest_reward)

    def _continuation(self, situation):
        """The rest of the round from a situation inside it, walked once and remembered
        (after a risk, many rolls and takes meet at the same pre-peril situation)."""
        cached = self._continuation_cache.get(situation)
        if cached is None:
            branches: dict = {}
            if situation[0] == "peril":
                self._peril(situation, 1, 1, NO_REWARD, branches)
            else:
                self._walk(situation, 1, 1, NO_REWARD, branches)
            cached = tuple((num, den, nxt, reward) for (nxt, reward), (num, den) in branches.items())
            if len(self._continuation_cache) >= self.continuations_kept:
                self._continuation_cache.clear()  # bounded memory; exploring is breadth first,
                # so what recurs is mostly recent
            self._continuation_cache[situation] = cached
        return cached

    def _risk_roll(self, situation, num, den, reward, out):
        _, position, winner = situation
        pool_size = sum(position.pool)
        for hits, weight in binomial_hits(RISK_DICE):
            after = make_position(position[:5] + (position[5] + RISK_DICE - hits,) + position[6:])
            take = min(hits, pool_size)
            nxt = ("take", after, winner, take) if take else ("peril", after, winner)
            self._walk(nxt, num * weight, den * EXTRA_DIE_SIDES**RISK_DICE, reward, out)

    def _peril(self, situation, num, den, reward, out):
        _, position, winner = situation
        if position.peril == 0:
            self._walk(("test", position, ("place", winner)), num, den, reward, out)
            return
        to_stack = self.peril_to_stack
        for hits, weight in binomial_hits(position.peril):
            if to_stack:
                stack = position.narrator_stack + hits
                after = replaced(position, NARRATOR_STACK, stack % STACK_SIZE)
                queue = ("G",) * (stack // STACK_SIZE) + ("place", winner)
            else:
                after = replaced(position, NARRATOR_CHIPS, position[NARRATOR_CHIPS] + hits)
                queue = ("place", winner)
            # walked, not remembered (`_continuation`): a Test situation seldom recurs
            # outside the pre-peril situation remembered already (5-10% less exploring)
            self._walk(("test", after, queue), num * weight, den * EXTRA_DIE_SIDES**position.peril, reward, out)

    # ----- the Test (spec 4.7) -------------------------------------------------------------

    def _test_step(self, situation, reward):
        """Resolve the next item of the Test's queue; returns (next situation, reward)."""
        _, position, queue = situation
        if not queue:
            return position, reward
        head = queue[0]
        if head == "place":
            return ("test", *self._placement(position, queue[1], queue[2:])), reward
        if head == "B":
            position, reward, phase = replaced(position, WINS, position[WINS] + 1), reward + ONE_BREAK, "break"
        else:  # "G"
            position, reward, phase = replaced(position, LOSSES, position[LOSSES] + 1), reward + ONE_GLITCH, "glitch"
        over = self._track_check(position)
        if over is not None:
            return over, reward
        return (phase, position, queue[1:]), reward

    def _placement(self, position: Position, winner: str, rest: tuple):
        one_only = self.ruleset.rewards_per_test == "1"
        breaks = glitches = 0
        if winner in ("p", "t"):
            chips, stack, breaks = _place(position.player_chips, position.player_stack, one_only)
            position = make_position(
                position[:PLAYER_CHIPS] + (chips, position[NARRATOR_CHIPS], stack) + position[PLAYER_STACK + 1 :]
            )
        if winner in ("n", "t"):
            chips, stack, glitches = _place(position.narrator_chips, position.narrator_stack, one_only)
            position = make_position(
                position[:NARRATOR_CHIPS] + (chips, position[PLAYER_STACK], stack) + position[NARRATOR_STACK + 1 :]
            )
        if self.ruleset.tie_order == "player_first":
            queue = ("B",) * breaks + ("G",) * glitches
        else:
            queue = ("G",) * glitches + ("B",) * breaks
        return position, queue + rest

    def _track_check(self, position: Position):
        """The end situation when the track is full, else None (sudden death goes on)."""
        if position.wins + position.losses < position.track:
            return None
        if position.wins > position.losses:
            return ("end", "win")
        if position.losses > position.wins:
            return ("end", "loss")
        if self.ruleset.sudden_death == "on":
            return position._replace(
                track=position.track + 1, player_chips=0, narrator_chips=0, player_stack=0, narrator_stack=0
            )
        return ("end", "tie")


def _place(chips: int, stack: int, one_only: bool):
    """Move hand chips onto the stack; returns (chips left, stack, completions)."""
    if one_only:
        if stack + chips >= STACK_SIZE:
            return chips - (STACK_SIZE - stack), 0, 1
        return 0, stack + chips, 0
    total = stack + chips
    return 0, total % STACK_SIZE, total // STACK_SIZE
