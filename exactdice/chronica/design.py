"""Chronica inverse design: which pool sizes give a target chance against an opposition.

`chronica_design_problem` builds the `exactdice.design.DesignProblem` of a grid of two-side
contests: the player rolls ``dice`` dice of size ``size`` against ``against_dice`` dice of
size ``against_size`` (any of the four may be varied). Each point is one exact
`solve_contest` (milliseconds to a second), so every point is solved (no screen).

Targets (for the player): ``win``, ``tie``, ``loss``.

>>> problem = chronica_design_problem({"dice": [1, 2, 3]}, {"size": 8, "against_dice": 3, "against_size": 6})
>>> found = design_search(problem, target=Fraction(1, 2), best=1, workers=1)
>>> found.candidates[0].point
{'dice': 1}
"""

from __future__ import annotations

from fractions import Fraction  # noqa: F401 (the examples use it)

from exactdice.chronica.contest import solve_contest
from exactdice.chronica.ruleset import MAX_CONTEST_DICE, Rules, _check_size
from exactdice.design import DesignProblem, check_axes, check_every_point, design_search, exact_grid_problem
from exactdice.errors import InputError

__all__ = ["METRICS", "PARAMETERS", "chronica_design_problem", "solve_design_task", "design_search"]

#: target name -> what it is (win and loss are the player's)
METRICS = {"win": "P(win)", "tie": "P(tie)", "loss": "P(loss)"}
PARAMETERS = ("dice", "size", "against_dice", "against_size")


def chronica_design_problem(
    axes: dict[str, list], fixed: dict, *, metric: str = "win", rules: Rules = Rules()
) -> DesignProblem:
    """The design grid over *axes* (parameter -> values), the rest from *fixed*."""
    if metric not in METRICS:
        raise InputError("metric", f"unknown target {metric!r}; choose from {', '.join(METRICS)}")
    check_axes(axes, fixed, PARAMETERS)
    for name in PARAMETERS:
        if name not in axes and fixed.get(name) is None:
            raise InputError(name, f"give {name.replace('_', '-')} or vary it")
    problem = exact_grid_problem(
        axes,
        dict(fixed),
        system="chronica",
        rules=rules,
        rules_data=rules.to_dict(),
        solve_fn=solve_design_task,
        metric=lambda result: result[metric],
    )

    def check(point):
        arguments = {**fixed, **point}
        for name in ("dice", "against_dice"):
            if arguments[name] < 1:
                raise InputError(name, f"a side needs at least one die, got {arguments[name]}")
        if arguments["dice"] + arguments["against_dice"] > MAX_CONTEST_DICE:
            raise InputError(
                "dice",
                f"{arguments['dice'] + arguments['against_dice']} dice in one contest; at most {MAX_CONTEST_DICE}",
            )
        _check_size(arguments["size"], "size")
        _check_size(arguments["against_size"], "against_size")

    check_every_point(problem.points(), check)
    return problem


def solve_design_task(task) -> dict:
    """P(win), P(tie) and P(loss) of the player in one contest.

    >>> solve_design_task(({"dice": 1, "size": 8, "against_dice": 1, "against_size": 6}, Rules()))["win"]
    Fraction(9, 16)
    """
    arguments, rules = task
    player = ((arguments["size"],) * arguments["dice"],)
    opposition = ((arguments["against_size"],) * arguments["against_dice"],)
    result = solve_contest([player, opposition], rules, concessions=False)
    return {"win": result.win[0], "tie": result.tie, "loss": result.win[1]}
