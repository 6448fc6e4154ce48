"""Karst inverse design: which defense or modifier gives a target chance to hit or to succeed.

`karst_design_problem` builds the `exactdice.design.DesignProblem` of a grid of rolls:

- ``hit``: an attack roll, d20 + modifier against a defense (vary ``defense`` and/or
  ``modifier``; a natural 20 hits, a natural 1 misses);
- ``success``: an action roll, d6 + modifier against 6 (vary ``modifier``; the target
  number of an action roll is always 6).

A roll costs microseconds, so every point is solved exactly (no screen).

>>> problem = karst_design_problem({"defense": list(range(8, 21))}, {"modifier": 3}, metric="hit")
>>> found = design_search(problem, target=Fraction(1, 2), best=1, workers=1)
>>> found.candidates[0].point, found.candidates[0].value
({'defense': 14}, Fraction(1, 2))
"""

from __future__ import annotations

from fractions import Fraction

from exactdice.design import DesignProblem, check_axes, design_search, exact_grid_problem
from exactdice.errors import InputError
from exactdice.karst.rolls import action_success, attack_hit
from exactdice.karst.ruleset import Rules

__all__ = ["METRICS", "ROLL_PARAMETERS", "PARAMETERS", "karst_design_problem", "solve_design_task", "design_search"]

#: target name -> what it is
METRICS = {"hit": "P(hit)", "success": "P(success)"}
#: target name -> the parameters of its roll (an attack roll, an action roll)
ROLL_PARAMETERS = {"hit": ("modifier", "defense"), "success": ("modifier",)}
#: every parameter a design may vary or fix
PARAMETERS = ("modifier", "defense")
#: the largest |modifier| or defense a design takes (the rolls are flat beyond +-20)
LIMIT = 1000


def karst_design_problem(axes: dict[str, list], fixed: dict, *, metric: str = "hit") -> DesignProblem:
    """The design grid over *axes* (parameter -> values) for the roll of *metric*."""
    if metric not in METRICS:
        raise InputError("metric", f"unknown target {metric!r}; choose from {', '.join(METRICS)}")
    parameters = ROLL_PARAMETERS[metric]
    check_axes(axes, fixed, parameters)
    for name in parameters:
        if name not in axes and fixed.get(name) is None:
            raise InputError(name, f"give a {name} or vary it ({name}=8-20)")
    for name, values in [*axes.items(), *((name, [value]) for name, value in fixed.items())]:
        for value in values:
            if abs(value) > LIMIT:
                raise InputError(name, f"must be between -{LIMIT} and {LIMIT}, got {value}")
    return exact_grid_problem(
        axes,
        {**fixed, "roll": metric},
        system="karst",
        rules=Rules(),
        rules_data=Rules().to_dict(),
        solve_fn=solve_design_task,
        metric=lambda result: result,
    )


def solve_design_task(task) -> Fraction:
    """P(hit) or P(success) of one roll.

    >>> solve_design_task(({"roll": "success", "modifier": 0}, Rules()))
    Fraction(1, 6)
    """
    arguments, _rules = task
    if arguments["roll"] == "hit":
        return attack_hit(arguments["modifier"], arguments["defense"])
    return action_success(arguments["modifier"])
