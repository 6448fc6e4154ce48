"""General state-graph solver: explore a model once, then solve it exactly.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> solve(explore(GamblersRuin(goal=3, start=2, up=1, down=1))).absorption["win"]
Fraction(2, 3)
"""

from exactdice.markov.graph import StateGraph, explore
from exactdice.markov.model import Chance, Decision, Model, Terminal
from exactdice.markov.solver import Solution, Strategy, solve

__all__ = ["Terminal", "Chance", "Decision", "Model", "StateGraph", "Solution", "Strategy", "explore", "solve"]
