"""Inverse design: the setups of a grid whose exact value is closest to a target.

A designer asks "which Challenge gives a 3-dice player about a 60 % chance?". The grid is
every combination of the varied setup parameters (`DesignProblem.axes`); each point has
an exact value (one exact solve, the expensive part) and, when the system can give one, a
cheap *screen*: an interval that holds the exact value with a stated confidence (for
Karbon, a seeded simulation with a Hoeffding bound). The search

1. screens every point (cheap; cached in the store),
2. solves points exactly, the most promising first (the smallest possible distance to
   the target, then the closest estimate), a batch at a time on the executor,
3. stops when every unsolved point's interval lies farther from the target than the
   answer already found: the N-th closest exact value (``best``), or, with a
   ``tolerance``, the tolerance (every setup within it is listed) or the closest value
   found when nothing lies within it.

No monotonicity is assumed anywhere: a point is skipped only because its own interval
proves it cannot be in the answer (Karbon's P(win) is not monotone in Challenge for small
Abilities). Every value reported is exact. The intervals hold together with probability
at least ``1 - risk`` (a union bound over the grid); ``exhaustive=True`` solves every point
instead, and a problem without screens is always solved exhaustively.

Systems supply a `DesignProblem`; `exactdice.karbon.design` has Karbon's.

>>> problem = DesignProblem(axes={"n": [1, 2, 3, 4]}, cell=_demo_cell, screen=_demo_screen,
...                         interval=_demo_interval, metric=lambda result: result["P(x)"],
...                         solve_fn=_demo_solve)
>>> found = design_search(problem, target=Fraction(1, 3), best=1, store=None, workers=1,
...                       progress=False)
>>> [(c.point, c.value) for c in found.candidates], found.solved
([({'n': 3}, Fraction(1, 3))], 1)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdice.errors import InputError
from exactdice.tables.store import ResultKey, ResultStore
from exactdice.progress import ProgressCallback
from exactdice.tables.sweep import SweepCell, shared_local_pool, sweep

__all__ = [
    "DesignProblem",
    "DesignCandidate",
    "DesignResult",
    "design_search",
    "hoeffding_half_width",
    "exact_grid_problem",
    "check_axes",
    "check_every_point",
    "DEFAULT_RISK",
]

#: default chance that some screen's interval misses its exact value (union bound over the grid)
DEFAULT_RISK = Fraction(1, 10**6)


@dataclass(frozen=True)
class DesignProblem:
    """A grid of setups and how to solve (and screen) one point.

    Parameters
    ----------
    axes : dict of str to list
        Parameter name -> the values it takes (the grid is their product).
    cell : callable
        ``cell(point)``: the `SweepCell` of the exact solve of one point (a dict).
    metric : callable
        ``metric(result)``: the exact value (a Fraction) the target is about.
    solve_fn : callable
        The top-level function the sweep calls on the cells' tasks.
    screen : callable, optional
        ``screen(point)``: the `SweepCell` of a cheap look at one point (None: the system has
        no screen, every point is solved).
    interval : callable, optional
        ``interval(screen result, risk)``: ``{"low", "high", "estimate"}`` (Fractions) holding
        the exact value except with probability ``risk``.
    """

    axes: dict[str, list]
    cell: Callable[[dict], SweepCell]
    metric: Callable[[Any], Fraction]
    solve_fn: Callable
    screen: Callable[[dict], SweepCell] | None = None
    interval: Callable[[Any, Fraction], dict] | None = None

    def points(self) -> list[dict]:
        """Every point of the grid, in the axes' order."""
        names = list(self.axes)
        return [dict(zip(names, values)) for values in itertools.product(*self.axes.values())]


def check_axes(axes: dict, fixed: dict, allowed: Collection[str], *, only_axes: bool = False) -> None:
    """Refuse varied parameters that are not allowed, or both varied and fixed.

    Parameters
    ----------
    axes : dict
        The varied parameters.
    fixed : dict
        The fixed ones.
    allowed : collection of str
        The parameters that may vary.
    only_axes : bool, default False
        *fixed* may hold other arguments too (only the varied names are checked against
        *allowed*).

    Raises
    ------
    InputError
        (field ``axes``) A parameter not in *allowed*, or both varied and fixed.

    Examples
    --------
    >>> check_axes({"n": [1]}, {"n": 2}, ("n",))
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: axes: n is both varied and fixed
    """
    for name in list(axes) + ([] if only_axes else list(fixed)):
        if name not in allowed:
            verb = "vary" if name in axes else "set"
            raise InputError("axes", f"cannot {verb} {name!r}; choose from {', '.join(allowed)}")
        if name in axes and name in fixed:
            raise InputError("axes", f"{name} is both varied and fixed")


def check_every_point(points: Iterable[dict], check: Callable[[dict], Any]) -> None:
    """Run ``check(point)`` on every grid point before anything is solved.

    An `InputError` about a varied parameter names the grid (field ``axes``, the CLI's
    ``--vary``) and the value, not the parameter's own flag, which the user may not have
    given.

    Parameters
    ----------
    points : iterable of dict
        The grid's points.
    check : callable
        Raises `InputError` for a point that is not allowed.

    Raises
    ------
    InputError
        (field ``axes``) The first point *check* refuses.

    Examples
    --------
    >>> def at_least_one(point):
    ...     if point["n"] < 1:
    ...         raise InputError("n", f"must be >= 1, got {point['n']}")
    >>> check_every_point([{"n": 1}, {"n": 0}], at_least_one)
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: axes: n=0: must be >= 1, got 0
    """
    for point in points:
        try:
            check(point)
        except InputError as error:
            if error.field in point:
                raise InputError("axes", f"{error.field}={point[error.field]}: {error.message}") from None
            raise


def exact_grid_problem(
    axes: dict[str, list],
    fixed: dict,
    *,
    system: str,
    rules: Any,
    rules_data: dict,
    solve_fn: Callable,
    metric: Callable[[Any], Fraction],
) -> DesignProblem:
    """A problem without a screen (every point is solved exactly), for systems whose cells are cheap.

    A point's task is ``(arguments, rules)``: *fixed* updated by the point; its store key
    names *system*, *rules_data* and the arguments.

    Parameters
    ----------
    axes : dict of str to list
        Parameter name -> the values it takes.
    fixed : dict
        The other arguments of a cell.
    system : str
        The rules system (part of the store key).
    rules : Any
        The rules object passed to *solve_fn*.
    rules_data : dict
        The rules' JSON-ready description (part of the store key).
    solve_fn : callable
        ``solve_fn((arguments, rules))``, a top-level function.
    metric : callable
        The exact value of a result.

    Returns
    -------
    DesignProblem
        The problem.

    Examples
    --------
    >>> problem = exact_grid_problem({"n": [2, 3]}, {"m": 1}, system="demo", rules=None, rules_data={},
    ...                              solve_fn=_demo_grid_solve, metric=lambda result: result)
    >>> design_search(problem, target=Fraction(1, 2), best=1, workers=1).candidates[0].point
    {'n': 2}
    """

    def cell(point: dict) -> SweepCell:
        arguments = {**fixed, **point}
        return SweepCell(ResultKey(system, rules_data, {"design": "exact", **arguments}), (arguments, rules))

    return DesignProblem(
        axes={name: list(values) for name, values in axes.items()}, cell=cell, metric=metric, solve_fn=solve_fn
    )


@dataclass(frozen=True)
class DesignCandidate:
    """One solved setup: its point, exact value and exact distance to the target.

    Parameters
    ----------
    point : dict
        The setup's values on the varied axes.
    value : Fraction
        Its exact value of the metric.
    distance : Fraction
        ``|value - target|``.
    result : Any, optional
        The solve's whole result.
    """

    point: dict
    value: Fraction
    distance: Fraction
    result: Any = field(default=None, compare=False, repr=False)


@dataclass
class DesignResult:
    """The answer (best first) and what it cost.

    Parameters
    ----------
    candidates : list of DesignCandidate
        The answer, closest first.
    target : Fraction
        The target value.
    tolerance : Fraction or None
        The tolerance asked for.
    grid_size : int
        Setups in the grid.
    solved : int
        Setups solved exactly.
    screened : int
        Setups screened by simulation.
    exhaustive : bool
        Whether every setup was solved.
    risk : Fraction or None
        The chance that some screen's interval missed its exact value (None without screens).
    within_tolerance : bool, default True
        False when no setup was within the tolerance (the closest is listed instead).
    solved_points : list of dict, optional
        Every point solved exactly.
    """

    candidates: list[DesignCandidate]
    target: Fraction
    tolerance: Fraction | None
    grid_size: int
    solved: int
    screened: int
    exhaustive: bool
    risk: Fraction | None
    within_tolerance: bool = True
    solved_points: list[dict] = field(default_factory=list, repr=False)


def hoeffding_half_width(samples: int, risk: Fraction) -> Fraction:
    """A Fraction at least Hoeffding's half-width for a mean of *samples* values in [0, 1].

    ``P(|mean - expectation| >= h) <= risk``. Rounded up, never down.

    Parameters
    ----------
    samples : int
        The number of values averaged.
    risk : Fraction
        The chance allowed outside the interval.

    Returns
    -------
    Fraction
        h.

    Examples
    --------
    >>> float(hoeffding_half_width(100_000, Fraction(1, 10**9))) > 0.0102
    True
    """
    if samples < 1 or not 0 < risk < 1:
        raise ValueError("need samples >= 1 and 0 < risk < 1")
    width = math.sqrt(math.log(2 / float(risk)) / (2 * samples))
    # a margin far above the float error of sqrt and log
    return Fraction(math.ceil(width * 10**9) + 1, 10**9)


def _distance_bound(interval: dict, target: Fraction) -> Fraction:
    low, high = interval["low"], interval["high"]
    if low <= target <= high:
        return Fraction(0)
    return low - target if target < low else target - high


def design_search(
    problem: DesignProblem,
    *,
    target: Fraction,
    tolerance: Fraction | None = None,
    best: int = 5,
    store: ResultStore | None = None,
    workers: int = 2,
    executor: Executor | None = None,
    progress: bool | ProgressCallback = False,
    exhaustive: bool = False,
    risk: Fraction = DEFAULT_RISK,
) -> DesignResult:
    """The points whose exact value is closest to *target*, best first.

    Screens every point where the problem has a screen, then solves points exactly, the
    most promising first, until no unsolved point's interval can reach the answer (see the
    module's docstring).

    Parameters
    ----------
    problem : DesignProblem
        The grid and how to solve a point.
    target : Fraction
        The value wanted.
    tolerance : Fraction, optional
        Every point within it (or, if none is, the closest one).
    best : int, default 5
        Without *tolerance*: the *best* closest (ties at the last place included).
    store : ResultStore, optional
        The results store (screens and exact cells are kept).
    workers : int, default 2
        Local processes.
    executor : concurrent.futures.Executor, optional
        Where to solve (a Dask client's, say).
    progress : bool or callable, default False
        A progress callback given a report per setup solved, or True for bars on stderr
        (`exactdice.tables.sweep.sweep`).
    exhaustive : bool, default False
        Solve every point exactly (no screen).
    risk : Fraction, default 1/10**6
        The chance allowed that some screen's interval misses its exact value.

    Returns
    -------
    DesignResult
        The closest points and what the search cost.

    Raises
    ------
    InputError
        An empty grid.
    """
    _check_search(best, tolerance, risk)
    target = Fraction(target)
    points = problem.points()
    if not points:
        raise InputError("axes", "the grid is empty")
    keys = [_point_key(point) for point in points]
    screening = problem.screen is not None and not exhaustive
    batch = max(1, workers if executor is None else 2 * workers)
    solved: dict[tuple, DesignCandidate] = {}

    def solve_points(indices: list[int], sweep_options: dict) -> None:
        cells = [problem.cell(points[index]) for index in indices]
        results = sweep(cells, problem.solve_fn, description="solving", **sweep_options)
        for index, result in zip(indices, results):
            value = Fraction(problem.metric(result))
            solved[keys[index]] = DesignCandidate(points[index], value, abs(value - target), result)

    # one pool of workers for the screens and every batch (a pool per batch cost ~50 ms a batch)
    with shared_local_pool(workers, executor) as shared:
        sweep_options = dict(store=store, workers=workers, executor=shared, progress=progress)
        if not screening:
            solve_points(list(range(len(points))), sweep_options)
        else:
            lower, order = _screen(problem, points, target, risk, sweep_options)
            while True:
                threshold = _threshold(solved.values(), tolerance, best)
                needed = [i for i in order if keys[i] not in solved and (threshold is None or lower[i] <= threshold)]
                if not needed:
                    break
                solve_points(needed[:batch], sweep_options)

    answer = _answer(list(solved.values()), tolerance, best)
    return DesignResult(
        candidates=answer,
        target=target,
        tolerance=tolerance,
        grid_size=len(points),
        solved=len(solved),
        screened=len(points) if screening else 0,
        exhaustive=not screening,
        risk=risk if screening else None,
        within_tolerance=tolerance is None or any(c.distance <= tolerance for c in answer),
        solved_points=[points[i] for i in range(len(points)) if keys[i] in solved],
    )


def _check_search(best: int, tolerance: Fraction | None, risk: Fraction) -> None:
    if best < 1:
        raise InputError("best", f"must be >= 1, got {best}")
    if tolerance is not None and tolerance < 0:
        raise InputError("tolerance", f"must be >= 0, got {tolerance}")
    if not 0 < risk < 1:
        raise InputError("risk", f"must be between 0 and 1, got {risk}")


def _screen(
    problem: DesignProblem, points: list[dict], target: Fraction, risk: Fraction, sweep_options: dict
) -> tuple[list[Fraction], list[int]]:
    """Screen every point: (the least distance each can have, the order to solve them in:
    the most promising first, by that distance and then by the estimate's)."""
    per_point_risk = Fraction(risk) / len(points)
    screens = sweep(
        [problem.screen(point) for point in points], problem.solve_fn, description="screening", **sweep_options
    )
    intervals = [problem.interval(result, per_point_risk) for result in screens]
    lower = [_distance_bound(interval, target) for interval in intervals]
    estimate = [abs(interval["estimate"] - target) for interval in intervals]
    return lower, sorted(range(len(points)), key=lambda i: (lower[i], estimate[i], i))


def _threshold(candidates, tolerance, best) -> Fraction | None:
    """The largest distance an unsolved point may have and still change the answer."""
    distances = sorted(candidate.distance for candidate in candidates)
    if tolerance is not None:
        if distances and distances[0] <= tolerance:
            return tolerance
        return distances[0] if distances else None
    return distances[best - 1] if len(distances) >= best else None


def _answer(candidates: list[DesignCandidate], tolerance, best) -> list[DesignCandidate]:
    ranked = sorted(candidates, key=lambda c: (c.distance, _point_key(c.point)))
    threshold = _threshold(ranked, tolerance, best)
    if threshold is None:
        return ranked
    return [c for c in ranked if c.distance <= threshold]


def _point_key(point: dict) -> tuple:
    return tuple(sorted(point.items()))


# ----- the module example's problem -----------------------------------------------------


def _demo_cell(point: dict) -> SweepCell:
    return SweepCell(ResultKey("demo", {}, point), ("exact", point["n"]))


def _demo_screen(point: dict) -> SweepCell:
    return SweepCell(ResultKey("demo-screen", {}, point), ("screen", point["n"]))


def _demo_interval(result, risk: Fraction) -> dict:
    return {"low": result - Fraction(1, 100), "high": result + Fraction(1, 100), "estimate": result}


def _demo_solve(task):
    kind, n = task
    return {"P(x)": Fraction(1, n)} if kind == "exact" else Fraction(1, n)


def _demo_grid_solve(task):
    arguments, _rules = task
    return Fraction(arguments["m"], arguments["n"])
