"""Karbon difficulty tables: P(win) (with P(tie), P(loss), expected rounds) over two setup axes.

Each cell is one exact contest solve, so a grid is a `exactdice.tables.jobs.CellGrid`:
cells are solved on every core and kept in the results store one by one.

>>> cell = contest_cell(ability=1, challenge=1, consequence=1, peril=0, pool="d8,d8", reserve="none")
>>> cell["P(win)"] + cell["P(tie)"] + cell["P(loss)"]
Fraction(1, 1)
"""

from __future__ import annotations

from fractions import Fraction

from exactdice.karbon.dice import dice_text
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE, setup_from_cell
from exactdice.karbon.solve import DEFAULT_MAX_STATES, contest_odds
from exactdice.tables.grid import Bounds
from exactdice.tables.jobs import CellGrid

__all__ = [
    "AXES",
    "METRICS",
    "BOUNDED_METRICS",
    "contest_cell",
    "contest_grid",
    "canonical_grids",
    "bounded_cell",
    "bounded_grid",
    "value_metric",
]

#: setup parameters a table may use as its row or column axis
AXES = ("ability", "challenge", "consequence", "peril", "fortune", "fallout")
METRICS = ("P(win)", "P(tie)", "P(loss)", "expected rounds")
#: a bounded cell's metrics after its headline `value_metric`: the certified strategy's exact odds
BOUNDED_METRICS = ("strategy's P(win)", "strategy's P(tie)", "strategy's P(loss)")
_AXIS_TITLE = {
    "ability": "Ability",
    "challenge": "Challenge",
    "consequence": "Consequence W",
    "peril": "Peril P",
    "fortune": "Fortune F",
    "fallout": "Fallout K",
}


def contest_cell(
    ability: int,
    challenge: int,
    consequence: int,
    peril: int,
    fortune: int = 0,
    fallout: int = 0,
    training: bool = False,
    pool: str = dice_text(DEFAULT_POOL),
    reserve: str = dice_text(DEFAULT_RESERVE),
    player: str = "fixed",
    narrator: str = "fixed",
    rules: tuple = (),
    max_states: int | None = None,
) -> dict:
    """One cell: the exact odds of one contest, as {metric: Fraction} (``max_states``: the
    explorer's state budget, default `contest_odds`'s)."""
    setup = setup_from_cell(locals())  # the cell's arguments, as the results store keeps them
    result = contest_odds(
        setup,
        Rules().with_rules(rules),
        parse_player_policy(player),
        parse_narrator_policy(narrator),
        max_states=DEFAULT_MAX_STATES if max_states is None else max_states,
    )
    return {
        "P(win)": result.win,
        "P(tie)": result.tie,
        "P(loss)": result.loss,
        "expected rounds": result.expected_rounds,
    }


def value_metric(rules: tuple = ()) -> str:
    """The headline of a bounded table: the value optimal play maximises (spec section 7).

    >>> value_metric(), value_metric(("objective=win",))
    ('value = P(win) + P(tie)/2', 'value = P(win)')
    """
    if Rules().with_rules(rules).objective == "win":
        return "value = P(win)"
    return "value = P(win) + P(tie)/2"


def bounded_cell(
    ability: int,
    challenge: int,
    consequence: int,
    peril: int,
    fortune: int = 0,
    fallout: int = 0,
    training: bool = False,
    pool: str = dice_text(DEFAULT_POOL),
    reserve: str = dice_text(DEFAULT_RESERVE),
    player: str = "optimal",
    narrator: str = "optimal",
    rules: tuple = (),
    seconds: float | str = 30.0,
    precision: float | str = 0.005,
    fixed_states: int = 50_000,
    certify_states: int = 200_000,
) -> dict:
    """One cell of optimal play as certified bounds (`exactdice.karbon.bounds.bounded_odds`)
    within about 1.5 x ``seconds``: the fixed preferences' exact solve (the starting lower
    bounds, up to ``fixed_states`` and a third of ``seconds``) and the search share
    ``seconds``, then the exact check of
    the strategy gets up to ``seconds / 2`` (and ``certify_states``):
    {value metric: `Bounds`, the strategy's exact P(win), P(tie), P(loss) (None where not
    certified exactly), and how the cell was made}.
    """
    setup = setup_from_cell(locals())  # the cell's arguments, as the results store keeps them
    from exactdice.karbon.bounds import bounded_odds

    found = bounded_odds(
        setup,
        Rules().with_rules(rules),
        parse_player_policy(player),
        parse_narrator_policy(narrator),
        precision=float(precision),
        max_seconds=float(seconds),
        fixed_states=fixed_states,
        certify_states=certify_states,
        fixed_seconds=float(seconds) / 3,
        certify_seconds=float(seconds) / 2,
    )
    # a float bound is a sound bound as the exact rational it stands for
    cell = {
        value_metric(rules): Bounds(Fraction(found.lower), Fraction(found.upper)),
        "lower exact": found.lower_kind == "exact",
        "stopped": found.stopped,
        "states explored": found.explored,
        "milliseconds": round(found.seconds * 1000),
        "fixed start": found.fixed_value is not None,
    }
    for metric, value in zip(BOUNDED_METRICS, (found.win, found.tie, found.loss)):
        cell[metric] = value
    return cell


def bounded_grid(
    row_axis: str,
    rows,
    column_axis: str,
    columns,
    fixed: dict,
    *,
    seconds: float,
    precision: float,
    player: str = "optimal",
    narrator: str = "optimal",
    rules: tuple = (),
) -> CellGrid:
    """`contest_grid` for optimal play past exact reach: each cell certified bounds on the
    value (`bounded_cell`, ``seconds`` a cell, stopping at gap ``precision``)."""
    exact = contest_grid(row_axis, rows, column_axis, columns, fixed, player=player, narrator=narrator, rules=rules)
    headline = value_metric(rules)
    # as text: the arguments are part of the store key, which holds no floats
    arguments = dict(exact.arguments, seconds=f"{seconds:g}", precision=f"{precision:g}")
    legend = dict(exact.legend)
    legend["bounds"] = (
        f"certified bounds on the value of optimal play, {seconds:g} s a cell "
        "(wall clock, shared machine); the strategy's odds are exact where it was "
        "solved exactly against the narrator's best reply, else '-'"
    )
    legend["precision asked"] = f"{precision:g}"
    return CellGrid(
        system="karbon",
        table=exact.table + "-bounds",
        function="exactdice.karbon.tables:bounded_cell",
        row_argument=row_axis,
        column_argument=column_axis,
        rows=exact.rows,
        columns=exact.columns,
        metrics=(headline,) + BOUNDED_METRICS,
        title=exact.title.replace("Karbon P(win)", "Karbon optimal play, certified bounds"),
        row_label=exact.row_label,
        column_label=exact.column_label,
        arguments=arguments,
        ruleset=exact.ruleset,
        policies=exact.policies,
        legend=legend,
        probability_metrics=(headline,) + BOUNDED_METRICS,
    )


def contest_grid(
    row_axis: str,
    rows,
    column_axis: str,
    columns,
    fixed: dict,
    player: str = "fixed",
    narrator: str = "fixed",
    rules: tuple = (),
) -> CellGrid:
    """A grid over two setup axes, every other setup parameter as in ``fixed``."""
    ruleset = Rules().with_rules(rules)
    # pool and reserve always named, so a change of their defaults can never reuse stored cells
    fixed = {"pool": dice_text(DEFAULT_POOL), "reserve": dice_text(DEFAULT_RESERVE), **fixed}
    arguments = dict(fixed, player=player, narrator=narrator, rules=tuple(rules))
    arguments.pop(row_axis, None)
    arguments.pop(column_axis, None)
    described = ", ".join(
        f"{_AXIS_TITLE.get(k, k)} {v}"
        for k, v in fixed.items()
        if k not in (row_axis, column_axis) and k in _AXIS_TITLE
    )
    return CellGrid(
        system="karbon",
        table=f"{row_axis}-by-{column_axis}",
        function="exactdice.karbon.tables:contest_cell",
        row_argument=row_axis,
        column_argument=column_axis,
        rows=tuple((str(v), v) for v in rows),
        columns=tuple((str(v), v) for v in columns),
        metrics=METRICS,
        title=f"Karbon P(win): {_AXIS_TITLE[row_axis]} x {_AXIS_TITLE[column_axis]}"
        + (f" ({described})" if described else ""),
        row_label=_AXIS_TITLE[row_axis],
        column_label=_AXIS_TITLE[column_axis],
        arguments=arguments,
        ruleset=ruleset,
        policies={"player": parse_player_policy(player).text(), "narrator": parse_narrator_policy(narrator).text()},
        legend={
            "ruleset": ", ".join(f"{k}={v}" for k, v in ruleset.to_dict().items()),
            "player policy": parse_player_policy(player).text(),
            "narrator policy": parse_narrator_policy(narrator).text(),
            "pool": arguments["pool"],
            "reserve": arguments["reserve"],
        },
        probability_metrics=("P(win)", "P(tie)", "P(loss)"),
    )


def canonical_grids(
    policies=(("fixed", "fixed"),), consequences=(1, 2, 3), perils=(0, 1), abilities=range(1, 6), challenges=range(1, 6)
) -> list[CellGrid]:
    """The canonical set: Ability x Challenge at each W and P, for each pair of policies."""
    return [
        contest_grid(
            "ability",
            list(abilities),
            "challenge",
            list(challenges),
            {"consequence": w, "peril": p},
            player=player,
            narrator=narrator,
        )
        for player, narrator in policies
        for w in consequences
        for p in perils
    ]
