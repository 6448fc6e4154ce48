"""The exact distribution of a reward's total (how many rounds, how many Breaks, ...) in a chain.

The solver gives a reward's expected total; its distribution needs more. `RewardCountModel`
wraps a model without decisions: its states carry the total so far, capped at ``cap + 1``,
and play ends in the outcome ``"<total>"`` (or ``"<cap+1>+"``), so solving the wrapped model
(with the same exact solver) gives P(total = 0), ..., P(total = cap) and P(total > cap) exactly.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> law = reward_count_distribution(GamblersRuin(goal=4, start=2, up=1, down=1), "bets", cap=4)
>>> {bets: str(p) for bets, p in law.items()}
{'0': '0', '1': '0', '2': '1/2', '3': '0', '4': '1/4', '5+': '1/4'}
"""

from __future__ import annotations

from fractions import Fraction

from exactdice.errors import InputError, InternalError
from exactdice.markov.graph import explore
from exactdice.markov.model import Chance, Decision, Terminal
from exactdice.markov.solver import Number, solve

__all__ = ["RewardCountModel", "reward_count_distribution", "HasDecisions"]


class HasDecisions(InputError):
    """The model has a decision, so a reward's distribution depends on a strategy."""


class RewardCountModel:
    """``model`` with the running total of one reward in each state (capped at ``cap + 1``)."""

    reward_names = ()

    def __init__(self, model, reward: str, cap: int):
        names = tuple(getattr(model, "reward_names", ()) or ())
        if reward not in names:
            raise InputError("reward", f"the model has no reward {reward!r} (its rewards: {', '.join(names)})")
        self.model, self.slot, self.cap = model, names.index(reward), cap
        self.outcomes = tuple(str(total) for total in range(cap + 1)) + (f"{cap + 1}+",)
        self._expanded: dict = {}

    def initial_state(self):
        return (self.model.initial_state(), 0)

    def _outcome(self, total: int) -> str:
        return str(total) if total <= self.cap else f"{self.cap + 1}+"

    def expand(self, state):
        inner, total = state
        node = self._expanded.get(inner)
        if node is None:
            node = self._expanded[inner] = self.model.expand(inner)
        if isinstance(node, Terminal):
            return Terminal(self._outcome(total))
        if isinstance(node, Decision):
            raise HasDecisions("model", "a reward's distribution needs a model without decisions (fixed policies)")
        branches = []
        for weight, successor, rewards in node.branches:
            gained = rewards[self.slot] if rewards else 0
            branches.append((weight, (successor, min(total + gained, self.cap + 1)), None))
        return Chance(tuple(branches))


def reward_count_distribution(model, reward: str, cap: int, *, max_states: int = 2_000_000) -> dict:
    """``{"0": p, ..., "<cap>": p, "<cap+1>+": p}``: the exact law of the reward's total.

    Play that never ends counts in the last category (its total grows without end only for
    a reward earned every step, such as rounds; for other rewards use a model that ends).
    """
    wrapped = RewardCountModel(model, reward, cap)
    solution = solve(explore(wrapped, max_states=max_states))
    law: dict[str, Number] = {outcome: Fraction(solution.absorption.get(outcome, 0)) for outcome in wrapped.outcomes}
    law[f"{cap + 1}+"] += solution.never_ends
    if sum(law.values()) != 1:
        raise InternalError("a reward's distribution must sum to exactly 1")
    return {key: law[key] for key in sorted(law, key=lambda key: int(key.rstrip("+")))}
