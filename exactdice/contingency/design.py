"""Contingency inverse design: which difficulty (or pool) gives a target chance of success.

`contingency_design_problem` builds the `exactdice.design.DesignProblem` of a grid of skill
checks: the varied parameters are the difficulty, the pool ``dice`` (``"d6,d8,d10"``), advantage,
disadvantage and the face modifier; each point is one exact `solve_check`. A check costs
about a millisecond, so every point is solved (no simulator screen is worth its cost).

Targets: ``success``, ``success-or-condition`` (a success or a success with a condition)
and ``failure``.

>>> problem = contingency_design_problem({"difficulty": list(range(1, 11))}, {"dice": "d6,d8,d10"})
>>> found = design_search(problem, target=Fraction(1, 2), best=1, workers=1)
>>> found.candidates[0].point, found.candidates[0].value
({'difficulty': 5}, Fraction(7, 15))
"""

from __future__ import annotations

from fractions import Fraction  # noqa: F401 (the examples use it)

from exactdice.contingency.check import skill_check, solve_check, validate
from exactdice.contingency.ruleset import Rules
from exactdice.contingency.tables import standard_pools
from exactdice.design import DesignProblem, check_axes, check_every_point, design_search, exact_grid_problem
from exactdice.errors import InputError

__all__ = [
    "METRICS",
    "VARIABLE_PARAMETERS",
    "DEFAULTS",
    "contingency_design_problem",
    "solve_design_task",
    "design_search",
    "standard_pool_texts",
]

#: target name -> what it is
METRICS = {
    "success": "P(success)",
    "success-or-condition": "P(success or success-with-condition)",
    "failure": "P(failure)",
}
#: setup parameters a design may vary, and their values when neither varied nor given
DEFAULTS = {"difficulty": None, "dice": "d6,d8,d10", "advantage": 0, "disadvantage": 0, "modifier": 0}
VARIABLE_PARAMETERS = tuple(DEFAULTS)


def standard_pool_texts() -> list[str]:
    """The canonical tables' 35 pools of three dice from d4..d12, as pool texts.

    >>> standard_pool_texts()[:2]
    ['d4,d4,d4', 'd4,d4,d6']
    """
    return [",".join(f"d{size}" for size in pool) for pool in standard_pools()]


def _check(arguments: dict):
    return skill_check(
        arguments["dice"],
        modifier=arguments["modifier"],
        advantage=arguments["advantage"],
        disadvantage=arguments["disadvantage"],
        difficulty=arguments["difficulty"],
    )


def contingency_design_problem(
    axes: dict[str, list], fixed: dict, *, metric: str = "success", rules: Rules = Rules()
) -> DesignProblem:
    """The design grid over *axes* (parameter -> values), the rest of the check from *fixed*
    (and `DEFAULTS`); every point is checked as a skill check before anything is solved."""
    if metric not in METRICS:
        raise InputError("metric", f"unknown target {metric!r}; choose from {', '.join(METRICS)}")
    check_axes(axes, fixed, VARIABLE_PARAMETERS)
    if "difficulty" not in axes and fixed.get("difficulty") is None:
        raise InputError("difficulty", "give a difficulty or vary it (difficulty=1-11)")
    base = {**DEFAULTS, **fixed}
    for name in axes:
        base.pop(name)
    problem = exact_grid_problem(
        axes,
        base,
        system="contingency",
        rules=rules,
        rules_data=rules.to_dict(),
        solve_fn=solve_design_task,
        metric=lambda result: result[metric],
    )
    check_every_point(problem.points(), lambda point: validate(_check({**base, **point}), rules))
    return problem


def solve_design_task(task) -> dict:
    """P(success), P(success or success-with-condition) and P(failure) of one check.

    >>> solve_design_task(({**DEFAULTS, "dice": "d4,d4,d4", "difficulty": 4}, Rules()))["failure"]
    Fraction(1, 2)
    """
    arguments, rules = task
    outcomes = solve_check(_check(arguments), rules).outcome_probabilities()
    return {
        "success": outcomes["success"],
        "success-or-condition": outcomes["success"] + outcomes["success-with-condition"],
        "failure": outcomes["failure"],
    }
