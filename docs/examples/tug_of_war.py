"""Tug of war: a small multi-round game solved exactly with ``exactdice.markov``.

Each round both sides roll: the player a d6 (or, if they choose, a riskier d10), the rival a
d8. The higher die pulls the rope one step its way; equal dice leave it where it is. The
first side to pull the rope ``goal`` steps wins. A player who chose the d10 and rolls a 1
or a 2 lets the rope slip a step back.
"""

from __future__ import annotations

import random

from exactdice.markov import Chance, Decision, Terminal

OUTCOMES = ("win", "loss")


class TugOfWar:
    """The game as a `exactdice.markov.Model`: a state is the rope's position (steps the
    player has pulled, negative toward the rival), plus the die chosen for the round."""

    outcomes = OUTCOMES
    reward_names = ("rounds",)

    def __init__(self, goal: int = 2, rival_sides: int = 8, player_chooses: bool = True):
        self.goal, self.rival_sides, self.player_chooses = goal, rival_sides, player_chooses

    def initial_state(self):
        return (0, None)

    def expand(self, state):
        rope, die = state
        if rope >= self.goal:
            return Terminal("win")
        if rope <= -self.goal:
            return Terminal("loss")
        if die is None:  # the start of a round: the player picks a die
            if not self.player_chooses:
                return Chance(((1, (rope, 6), None),))
            return Decision("max", (("d6", (rope, 6), None), ("d10", (rope, 10), None)))
        steps: dict[int, int] = {}  # where the rope ends -> how many (player face, rival face) pairs
        for mine in range(1, die + 1):
            for theirs in range(1, self.rival_sides + 1):
                move = (mine > theirs) - (mine < theirs)
                if die == 10 and mine <= 2:
                    move = -1
                steps[rope + move] = steps.get(rope + move, 0) + 1
        return Chance(tuple((weight, (end, None), (1,)) for end, weight in sorted(steps.items())))


def simulate(goal: int, rival_sides: int, n: int, seed: int) -> list[str]:
    """``n`` games played die by die with the d6 every round (shares nothing with `expand`)."""
    rng = random.Random(seed)
    results = []
    for _ in range(n):
        rope = 0
        while abs(rope) < goal:
            mine, theirs = rng.randint(1, 6), rng.randint(1, rival_sides)
            rope += 1 if mine > theirs else -1 if mine < theirs else 0
        results.append("win" if rope > 0 else "loss")
    return results
