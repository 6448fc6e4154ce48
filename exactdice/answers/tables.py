"""Requests over many setups: a Karbon table, what moves P(win), a designer's target.

`karbon_table` solves a grid of contests over two setup parameters (`exactdice.karbon.tables`,
cell by cell through the results store); `karbon_what_if` steps each setup parameter one
down and one up (the what-if strip) and `karbon_sensitivity` makes every one-step change
(`exactdice.karbon.sensitivity`); `design` finds the setups closest to a target
(`exactdice.design`). Each takes the parameters by their registry names and a progress
callback; the work goes through `exactdice.tables.sweep` (local workers, a cluster, or this
process with ``workers=1``).

>>> grid = karbon_table({"consequence": 1, "pool": "d8,d8,d8", "reserve": "none"},
...                     {"ability": [1, 2], "challenge": [1]})
>>> grid.rows, grid.columns, grid.metrics["P(win)"][1][0] + grid.metrics["P(tie)"][1][0] + grid.metrics["P(loss)"][1][0]
(['1', '2'], ['1'], Fraction(1, 1))
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from exactdice.errors import InputError, TooLargeError
from exactdice.progress import ProgressCallback

__all__ = [
    "karbon_table",
    "karbon_table_check",
    "karbon_what_if",
    "karbon_sensitivity",
    "design",
    "MAX_TABLE_CELLS",
    "PAGE_MAX_TABLE_CELLS",
    "base_setup",
    "DESIGN_SYSTEMS",
]

#: most cells of one Karbon table (each is one exact solve)
MAX_TABLE_CELLS = 400
#: most cells of a table made on the web page (the server's workers share one machine)
PAGE_MAX_TABLE_CELLS = 100


def _fixed_arguments(values: Mapping[str, Any], axes: Mapping[str, list]) -> dict:
    """`contest_cell`'s arguments of *values* (the registry's names) but the axes, checked."""
    from exactdice.answers.karbon import karbon_request
    from exactdice.karbon.system import SYSTEM

    if "player_dice" in values or "narrator_dice" in values or "state_file" in values:
        raise InputError(
            "player_dice",
            "a table draws its hands: give `ability` and `challenge` (or vary them), "
            "not explicit hands or a state file",
        )
    corner = {name: listed[0] for name, listed in axes.items()}
    request = karbon_request({**values, **corner})  # every other value checked as for one contest
    setup = SYSTEM.setup({**values, **corner})
    fixed = {
        name: setup[name]
        for name in (
            "ability",
            "challenge",
            "consequence",
            "peril",
            "fortune",
            "fallout",
            "training",
            "pool",
            "reserve",
        )
        if name not in axes
    }
    rules = tuple(
        f"{name}={value}"
        for name, value in request.ruleset.to_dict().items()
        if value != type(request.ruleset)().to_dict()[name]
    )
    return {"fixed": fixed, "player": request.player.text(), "narrator": request.narrator.text(), "rules": rules}


def _check_axes(axes: Mapping[str, list], max_cells: int) -> None:
    """Two setup parameters with their values (the registry's ranges), within *max_cells*."""
    from exactdice.karbon.system import SYSTEM
    from exactdice.karbon.tables import AXES

    if len(axes) != 2:
        raise InputError(
            "axes",
            f"give exactly two setup parameters to vary (the table's rows and columns), "
            f"got {len(axes)}: {', '.join(axes) or 'none'}",
        )
    declared = {parameter.name: parameter for parameter in SYSTEM.parameters}
    for name, listed in axes.items():
        if name not in AXES:
            raise InputError("axes", f"cannot vary {name!r}; choose two of {', '.join(AXES)}")
        if not listed or len(set(listed)) != len(listed):
            raise InputError(name, "give its values once each")
        for value in (min(listed), max(listed)):
            declared[name].check(value)
    (first, rows), (_, columns) = axes.items()
    if len(rows) * len(columns) > max_cells:
        raise TooLargeError(
            first,
            f"{len(rows)} x {len(columns)} = {len(rows) * len(columns):,} cells, each one "
            f"exact solve; at most {max_cells:,} in one table",
        )


def karbon_table_check(values: Mapping[str, Any], axes: Mapping[str, list], max_cells: int = MAX_TABLE_CELLS) -> dict:
    """Check a table before any solve (its axes, its size, every other value, the corners'
    limits: a hand, the track, peril); the fixed `contest_cell` arguments."""
    _check_axes(axes, max_cells)
    arguments = _fixed_arguments(values, axes)
    for pick in (min, max):
        _fixed_arguments(values, {name: [pick(listed)] for name, listed in axes.items()})
    return arguments


def karbon_table(
    values: Mapping[str, Any],
    axes: Mapping[str, list],
    *,
    store: Any = None,
    workers: int = 1,
    executor: Any = None,
    max_cells: int = MAX_TABLE_CELLS,
    progress: ProgressCallback | None = None,
) -> Any:
    """A table of P(win), P(tie), P(loss) and expected rounds over two setup parameters.

    Parameters
    ----------
    values : mapping
        Karbon's parameters by name, the ones held fixed (pool, policies, rules, ...).
    axes : mapping of str to list of int
        The rows' parameter and values, then the columns' (two of ``ability``, ``challenge``,
        ``consequence``, ``peril``, ``fortune``, ``fallout``).
    store : ResultStore, optional
        The results store, cell by cell (None: no cache).
    workers : int, default 1
        Local processes (1: this one).
    executor : concurrent.futures.Executor, optional
        Where the cells are solved (a cluster's).
    max_cells : int, default `MAX_TABLE_CELLS`
        Most cells, each one exact solve.
    progress : callable, optional
        Given a report per cell solved.

    Returns
    -------
    TableGrid
        The grid; every cell exact, each cell's probabilities summing to exactly 1.
    """
    from exactdice.karbon.tables import contest_grid
    from exactdice.tables.jobs import solve_tables

    arguments = karbon_table_check(values, axes, max_cells)
    (row_axis, rows), (column_axis, columns) = axes.items()
    grid = contest_grid(
        row_axis,
        list(rows),
        column_axis,
        list(columns),
        arguments["fixed"],
        player=arguments["player"],
        narrator=arguments["narrator"],
        rules=arguments["rules"],
    )
    (table,) = solve_tables(
        [grid],
        store=store,
        workers=workers,
        executor=executor,
        progress=progress if progress is not None else False,
        description="cells",
    )
    for r in range(len(rows)):
        for c in range(len(columns)):
            if sum(table.metrics[name][r][c] for name in ("P(win)", "P(tie)", "P(loss)")) != 1:
                raise ArithmeticError(f"cell {rows[r]}, {columns[c]}: its probabilities do not sum to exactly 1")
    return table


def base_setup(values: Mapping[str, Any]) -> dict:
    """The base setup of a sensitivity (`exactdice.karbon.sensitivity.base_arguments`) from
    the registry's values: a drawn contest."""
    from exactdice.answers.karbon import karbon_request
    from exactdice.karbon.sensitivity import base_arguments

    request = karbon_request(values)
    setup = request.setup
    if setup.player_dice is not None:
        raise InputError(
            "player_dice",
            "what moves the odds steps the draw (`ability`, `challenge`, ...): give them, not explicit hands",
        )
    from exactdice.karbon.dice import dice_text

    return base_arguments(
        setup.ability,
        setup.challenge,
        setup.consequence,
        setup.peril,
        setup.fortune,
        setup.fallout,
        setup.training,
        dice_text(setup.pool),
        dice_text(setup.reserve),
        request.player.text(),
        request.narrator.text(),
        tuple(f"{name}={value}" for name, value in request.ruleset.to_dict().items()),
    )


def karbon_sensitivity(
    values: Mapping[str, Any],
    *,
    groups: tuple | None = None,
    max_states: int | None = None,
    store: Any = None,
    workers: int = 1,
    executor: Any = None,
    progress: ProgressCallback | None = None,
) -> Any:
    """How P(win), P(loss), P(tie) and expected rounds move with every one-step change of a
    contest (`exactdice.karbon.sensitivity.karbon_sensitivity`).

    Parameters
    ----------
    values : mapping
        Karbon's parameters by name: a drawn contest (not explicit hands).
    groups : tuple of str, optional
        The kinds of change: ``setup``, ``rule``, ``player``, ``narrator`` (None: all).
    max_states : int, optional
        Each contest's state budget (None: the values' own, else
        `exactdice.karbon.sensitivity.DEFAULT_VARIANT_STATES`); a change past it is skipped.
    store : ResultStore, optional
        The results store (None: no cache).
    workers : int, default 1
        Local processes (1: this one).
    executor : concurrent.futures.Executor, optional
        Where the contests are solved (a cluster's).
    progress : callable, optional
        Given a report per contest solved.

    Returns
    -------
    SensitivityReport
        The base values, every change's exact values and differences (largest effect
        first), and the changes skipped with the reason.
    """
    from exactdice.karbon.sensitivity import DEFAULT_VARIANT_STATES
    from exactdice.karbon.sensitivity import karbon_sensitivity as sensitivity

    if max_states is None:
        max_states = values.get("max_states") or DEFAULT_VARIANT_STATES
    from exactdice.karbon.system import SYSTEM

    next(parameter for parameter in SYSTEM.parameters if parameter.name == "max_states").check(max_states)
    return sensitivity(
        base_setup(values),
        store=store,
        workers=workers,
        executor=executor,
        progress=progress if progress is not None else False,
        max_states=max_states,
        groups=groups,
    )


def karbon_what_if(
    values: Mapping[str, Any], *, metric: str = "P(win)", progress: ProgressCallback | None = None
) -> tuple:
    """The what-if strip: *metric* with each stepped setup parameter (Ability, Challenge,
    Consequence, Peril, Fortune, Fallout) one step down and up, solved exactly (each within
    the values' ``max_states``).

    Parameters
    ----------
    values : mapping
        Karbon's parameters by name: a drawn contest.
    metric : str, default "P(win)"
        What the charts show (``P(win)``, ``P(loss)``, ``P(tie)``, ``expected rounds``).
    progress : callable, optional
        Given a report per contest solved.

    Returns
    -------
    tuple
        ``(report, charts)``: the `SensitivityReport` of the steps and one chart per
        parameter (`exactdice.karbon.charts.what_if_charts`).

    Examples
    --------
    >>> report, charts = karbon_what_if({"ability": 1, "challenge": 1, "consequence": 1,
    ...                                  "pool": "d8,d8,d8", "reserve": "none"})
    >>> [chart.title for chart in charts][:2], charts[0].curves[0].xs
    (['Ability', 'Challenge'], (0, 1, 2))
    """
    from exactdice.karbon.charts import what_if_charts
    from exactdice.karbon.sensitivity import steps_below_least

    report = karbon_sensitivity(values, groups=("setup",), progress=progress)
    missing = steps_below_least(report.base)  # values that do not exist: nothing to say about them
    report.skipped = [(name, why) for name, why in report.skipped if name not in missing]
    return report, what_if_charts(report, metric)


#: the systems with a design problem: name -> "module:function"
DESIGN_SYSTEMS = {
    "karbon": "exactdice.karbon.design:karbon_design_problem",
    "contingency": "exactdice.contingency.design:contingency_design_problem",
    "chronica": "exactdice.chronica.design:chronica_design_problem",
    "karst": "exactdice.karst.design:karst_design_problem",
}


def design(
    system: str,
    axes: Mapping[str, list],
    fixed: Mapping[str, Any],
    *,
    metric: str,
    target: Fraction,
    tolerance: Fraction | None = None,
    best: int = 5,
    store: Any = None,
    workers: int = 1,
    executor: Any = None,
    exhaustive: bool = False,
    risk: Fraction | None = None,
    progress: ProgressCallback | None = None,
    **problem_options: Any,
) -> Any:
    """The setups of a grid whose exact *metric* is closest to *target*, best first
    (`exactdice.design.design_search` over the system's design problem).

    Parameters
    ----------
    system : str
        One of `DESIGN_SYSTEMS`.
    axes : mapping of str to list
        The parameters varied and their values (the grid is their product).
    fixed : mapping
        The other parameters' values.
    metric : str
        What the target is about (``win``, ``success``, ``hit``, ...: the system's).
    target : Fraction
        The value wanted.
    tolerance : Fraction, optional
        Every setup within it (or, if none is, the closest).
    best : int, default 5
        Without *tolerance*: the *best* closest.
    store : ResultStore, optional
        The results store.
    workers : int, default 1
        Local processes (1: this one).
    executor : concurrent.futures.Executor, optional
        Where to solve (a cluster's).
    exhaustive : bool, default False
        Solve every setup exactly (no screening).
    risk : Fraction, optional
        The chance allowed that some screen misses its exact value (default
        `exactdice.design.DEFAULT_RISK`).
    progress : callable, optional
        Given a report per setup solved.
    **problem_options
        The design problem's own (Karbon's ``player``, ``narrator``, ``rules``, ``samples``;
        a system's ``rules``).

    Returns
    -------
    DesignResult
        The closest setups with their exact values, and how many were solved.

    Examples
    --------
    >>> found = design("karst", {"defense": list(range(8, 21))}, {"modifier": 3}, metric="hit",
    ...                target=Fraction(1, 2), best=1)
    >>> [candidate.point for candidate in found.candidates]
    [{'defense': 14}]
    """
    from importlib import import_module

    from exactdice.design import DEFAULT_RISK, design_search

    if system not in DESIGN_SYSTEMS:
        raise InputError("system", f"no design for {system!r}; known: {', '.join(DESIGN_SYSTEMS)}")
    module, function = DESIGN_SYSTEMS[system].split(":")
    problem = getattr(import_module(module), function)(dict(axes), dict(fixed), metric=metric, **problem_options)
    return design_search(
        problem,
        target=target,
        tolerance=tolerance,
        best=best,
        store=store,
        workers=workers,
        executor=executor,
        progress=progress if progress is not None else False,
        exhaustive=exhaustive,
        risk=DEFAULT_RISK if risk is None else risk,
    )
