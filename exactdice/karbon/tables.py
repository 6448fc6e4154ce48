"""Karbon difficulty tables: P(win) (with P(tie), P(loss), expected rounds) over two setup axes.

Each cell is one exact contest solve, so a grid is a `exactdice.tables.jobs.CellGrid`:
cells are solved on every core and kept in the results store one by one.

>>> cell = contest_cell(ability=1, challenge=1, consequence=1, peril=0, pool="d8,d8", reserve="none")
>>> cell["P(win)"] + cell["P(tie)"] + cell["P(loss)"]
Fraction(1, 1)
"""

from __future__ import annotations

from exactdice.karbon.dice import dice_text, parse_dice_list
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE, ContestSetup
from exactdice.karbon.solve import contest_odds
from exactdice.tables.jobs import CellGrid

__all__ = ["AXES", "METRICS", "contest_cell", "contest_grid", "canonical_grids"]

#: setup parameters a table may use as its row or column axis
AXES = ("ability", "challenge", "consequence", "peril", "fortune", "fallout")
METRICS = ("P(win)", "P(tie)", "P(loss)", "expected rounds")
_AXIS_TITLE = {"ability": "Ability", "challenge": "Challenge", "consequence": "Consequence W",
               "peril": "Peril P", "fortune": "Fortune F", "fallout": "Fallout K"}


def contest_cell(ability: int, challenge: int, consequence: int, peril: int, fortune: int = 0,
                 fallout: int = 0, training: bool = False, pool: str = dice_text(DEFAULT_POOL),
                 reserve: str = dice_text(DEFAULT_RESERVE), player: str = "fixed",
                 narrator: str = "fixed", rules: tuple = ()) -> dict:
    """One cell: the exact odds of one contest, as {metric: Fraction}."""
    setup = ContestSetup(ability=ability, challenge=challenge, consequence=consequence, peril=peril,
                         fortune=fortune, fallout=fallout, training=training,
                         pool=parse_dice_list(pool, "pool"), reserve=parse_dice_list(reserve, "reserve"))
    result = contest_odds(setup, Rules().with_rules(rules), parse_player_policy(player),
                          parse_narrator_policy(narrator))
    return {"P(win)": result.win, "P(tie)": result.tie, "P(loss)": result.loss,
            "expected rounds": result.expected_rounds}


def contest_grid(row_axis: str, rows, column_axis: str, columns, fixed: dict,
                 player: str = "fixed", narrator: str = "fixed", rules: tuple = ()) -> CellGrid:
    """A grid over two setup axes, every other setup parameter as in ``fixed``."""
    ruleset = Rules().with_rules(rules)
    # pool and reserve always named, so a change of their defaults can never reuse stored cells
    fixed = {"pool": dice_text(DEFAULT_POOL), "reserve": dice_text(DEFAULT_RESERVE), **fixed}
    arguments = dict(fixed, player=player, narrator=narrator, rules=tuple(rules))
    arguments.pop(row_axis, None)
    arguments.pop(column_axis, None)
    described = ", ".join(f"{_AXIS_TITLE.get(k, k)} {v}" for k, v in fixed.items()
                          if k not in (row_axis, column_axis) and k in _AXIS_TITLE)
    return CellGrid(
        system="karbon", table=f"{row_axis}-by-{column_axis}", function="exactdice.karbon.tables:contest_cell",
        row_argument=row_axis, column_argument=column_axis,
        rows=tuple((str(v), v) for v in rows), columns=tuple((str(v), v) for v in columns),
        metrics=METRICS, title=f"Karbon P(win): {_AXIS_TITLE[row_axis]} x {_AXIS_TITLE[column_axis]}"
                                + (f" ({described})" if described else ""),
        row_label=_AXIS_TITLE[row_axis], column_label=_AXIS_TITLE[column_axis],
        arguments=arguments, ruleset=ruleset,
        policies={"player": parse_player_policy(player).text(), "narrator": parse_narrator_policy(narrator).text()},
        legend={"ruleset": ", ".join(f"{k}={v}" for k, v in ruleset.to_dict().items()),
                "player policy": parse_player_policy(player).text(),
                "narrator policy": parse_narrator_policy(narrator).text(),
                "pool": arguments["pool"], "reserve": arguments["reserve"]},
        probability_metrics=("P(win)", "P(tie)", "P(loss)"))


def canonical_grids(policies=(("fixed", "fixed"),), consequences=(1, 2, 3), perils=(0, 1),
                    abilities=range(1, 6), challenges=range(1, 6)) -> list[CellGrid]:
    """The canonical set: Ability x Challenge at each W and P, for each pair of policies."""
    return [contest_grid("ability", list(abilities), "challenge", list(challenges),
                         {"consequence": w, "peril": p}, player=player, narrator=narrator)
            for player, narrator in policies for w in consequences for p in perils]
