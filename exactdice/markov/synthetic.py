"""Small reference models: gambler's ruin, contest-shaped chains and a tug of war.

They exercise the solver (tests, benchmarks, Storm/icepool comparisons) without any
game knowledge: integer weights, many small cycles, decisions when asked.

>>> from exactdice.markov import solve
>>> solve(GamblersRuin(goal=2, start=1, up=1, down=1)).absorption["win"]
Fraction(1, 2)
"""

from __future__ import annotations

import random

from exactdice.markov.model import Chance, Decision, Terminal

__all__ = ["GamblersRuin", "ContestChain", "TugOfWar"]

_BRANCH_TOTALS = (6**2 * 8, 6 * 8 * 10, 6**3, 6**2 * 8 * 10, 8**2 * 10)


class GamblersRuin:
    """Walk on 0..goal: up with weight ``up``, down with weight ``down``; reaching
    ``goal`` wins, 0 loses. Each step has reward ``(1,)`` on counter "bets".

    >>> GamblersRuin(goal=3, start=1, up=2, down=1).expand(1)
    Chance(branches=((2, 2, (1,)), (1, 0, (1,))))
    """

    outcomes = ("win", "loss")
    reward_names = ("bets",)

    def __init__(self, goal: int, start: int, up: int, down: int):
        self.goal, self.start, self.up, self.down = goal, start, up, down

    def initial_state(self):
        return self.start

    def expand(self, money):
        if money >= self.goal:
            return Terminal("win")
        if money <= 0:
            return Terminal("loss")
        return Chance(((self.up, money + 1, (1,)), (self.down, money - 1, (1,))))


class ContestChain:
    """A contest-shaped chain: ``size`` live states, each rolling ``branches`` ways
    with totals like 6^a 8^b 10^c; self-loops ("nothing happens") on every 16th state,
    2-cycles between some pairs of states, forward jumps, and three outcomes. With ``decision_every`` > 0
    every such state is instead a "max" choice among three forward chance states.

    >>> chain = ContestChain(size=50, branches=8, seed=1)
    >>> len(chain.expand(0).branches) <= 8
    True
    """

    outcomes = ("win", "loss", "tie")
    reward_names = ("rounds",)

    def __init__(self, size: int, branches: int = 35, seed: int = 0, reach: int = 80, decision_every: int = 0):
        self.size, self.branches, self.seed, self.reach = size, branches, seed, reach
        self.decision_every = decision_every

    def initial_state(self):
        return 0

    def _successor(self, target: int):
        if target >= self.size:
            return ("end", self.outcomes[target % 3])
        return target

    def expand(self, state):
        if isinstance(state, tuple):
            return Terminal(state[1])
        if self.decision_every and state % self.decision_every == self.decision_every - 1:
            return Decision(
                "max",
                tuple((f"to+{step}", self._successor(state + step), None) for step in (1, 2, 3)),
            )
        rng = random.Random(self.seed * 1_000_003 + state)
        total = rng.choice(_BRANCH_TOTALS)
        cuts = sorted(rng.sample(range(1, total), self.branches - 1))
        parts = [b - a for a, b in zip([0] + cuts, cuts + [total])]
        successors = []
        if state % 16 == 0:
            successors.append(state)  # nothing happens: roll again
        if state % 32 == 1:
            successors.append(state - 1)  # a small cycle with the partner state
        while len(successors) < self.branches:
            successors.append(state + rng.randint(1, self.reach))
        return Chance(tuple((weight, self._successor(target), (1,)) for weight, target in zip(parts, successors)))


class TugOfWar:
    """Rope position in -reach..reach; each round both sides roll a d6 and the rope
    moves by the difference; reaching +reach wins, -reach loses.

    >>> TugOfWar(reach=3).expand(3)
    Terminal(outcome='win')
    """

    outcomes = ("win", "loss")
    reward_names = ()

    def __init__(self, reach: int):
        self.reach = reach

    def initial_state(self):
        return 0

    def expand(self, position):
        if position >= self.reach:
            return Terminal("win")
        if position <= -self.reach:
            return Terminal("loss")
        moves = {}
        for mine in range(1, 7):
            for theirs in range(1, 7):
                target = max(-self.reach, min(self.reach, position + mine - theirs))
                moves[target] = moves.get(target, 0) + 1
        return Chance(tuple((weight, target, None) for target, weight in moves.items()))
