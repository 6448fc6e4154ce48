"""Contingency skill checks (the reading in `exactdice.contingency.reading`): exact model, simulator, tables.

>>> from exactdice.contingency import skill_check, solve_check
>>> solve_check(skill_check("d6,d6,d6", difficulty=4)).outcome_probabilities()["success"]
Fraction(1, 2)
"""

from exactdice.contingency.check import (
    OUTCOME_COLUMN,
    OUTCOMES,
    CheckSolution,
    SkillCheck,
    choose_to_fail,
    classify_total,
    expected_distribution,
    gm_omens_for_face,
    parse_pool,
    player_omens_for_face,
    skill_check,
    solve_check,
)
from exactdice.contingency.ruleset import Rules

__all__ = [
    "Rules",
    "SkillCheck",
    "CheckSolution",
    "skill_check",
    "parse_pool",
    "solve_check",
    "choose_to_fail",
    "classify_total",
    "player_omens_for_face",
    "gm_omens_for_face",
    "expected_distribution",
    "OUTCOMES",
    "OUTCOME_COLUMN",
]
