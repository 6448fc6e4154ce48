"""Tug of war as a registered rules system: its parameters, exact law and simulator declared
once, so the command line (``exact``, ``simulate``, ``table``, ``validate``) and the web page's
forms come from the declaration."""

from __future__ import annotations

from dataclasses import dataclass

from exactdice.markov import solve
from exactdice.systems import DeclaredSystem, Parameter
from tug_of_war import TugOfWar, simulate


@dataclass(frozen=True)
class Rules:
    """One knob: whether the player may take the riskier d10."""

    player_chooses: bool = False


PARAMETERS = (
    Parameter("goal", int, 2, "Steps to pull the rope to win.", minimum=1, maximum=20),
    Parameter("rival_sides", int, 8, "Sides of the rival's die.", minimum=2, maximum=100),
    Parameter("player_chooses", bool, False, "The player may take the d10 each round.", role="rules"),
)


def exact(setup, rules):
    """The exact outcome distribution: {"win": ..., "loss": ...}."""
    return solve(TugOfWar(setup["goal"], setup["rival_sides"], rules.player_chooses)).absorption


def simulated(setup, rules, n, seed):
    """Seeded games as columns (the d6 every round: the simulator takes no decisions)."""
    return {"outcome": simulate(setup["goal"], setup["rival_sides"], n, seed)}


SYSTEM = DeclaredSystem(
    "tug-of-war",
    "Tug of war: the first side to pull the rope GOAL steps wins.",
    Rules,
    PARAMETERS,
    exact=exact,
    simulate=simulated,
)
