"""Karst rolls (the reading in `exactdice.karst.reading`): action, opposed, attack, knock-out, death and order rolls.

>>> from exactdice.karst import action_success, solve_death
>>> action_success(2)
Fraction(1, 2)
>>> solve_death(2).death
Fraction(3, 4)
"""

from exactdice.karst.death import DeathRollChain, DeathSolution, death_roll_faces, solve_death
from exactdice.karst.expected import outcome_column, expected_distribution
from exactdice.karst.knockout import (
    KnockoutSetup,
    KnockoutSolution,
    damage_per_hit,
    knockout_then_death,
    solve_knockout,
)
from exactdice.karst.rolls import (
    action_roll,
    action_success,
    attack_hit,
    attack_roll,
    opposed,
    order_before,
    order_places,
    order_scores,
)
from exactdice.karst.ruleset import Rules

__all__ = [
    "Rules",
    "action_roll",
    "action_success",
    "opposed",
    "attack_roll",
    "attack_hit",
    "order_scores",
    "order_places",
    "order_before",
    "KnockoutSetup",
    "KnockoutSolution",
    "damage_per_hit",
    "solve_knockout",
    "knockout_then_death",
    "DeathRollChain",
    "DeathSolution",
    "death_roll_faces",
    "solve_death",
    "outcome_column",
    "expected_distribution",
]
