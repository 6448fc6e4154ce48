"""``exactdice contingency design``, ``karst design`` and ``chronica design``: which setups
give a target chance (a thin layer over each system's ``design`` module).

These systems' cells cost micro- to milliseconds, so every setup of the grid is solved
exactly in this process: no screen, no store, no worker processes (their start-up would
cost more than the cells).
"""

from __future__ import annotations

import click

from exactdice.cli import design_common
from exactdice.cli.common import given_values, parameter_options, terminal_bars
from exactdice.errors import InputError
from exactdice.systems import get_system

__all__ = ["contingency_design", "karst_design", "chronica_design"]

_EXHAUSTIVE = "every setup solved exactly (each costs milliseconds: no screen needed)"


def _search_and_report(
    system: str,
    *,
    metric: str,
    meaning: str,
    target,
    axes: dict,
    fixed: dict,
    tolerance,
    best: int,
    as_json: bool,
    full_fractions: bool,
    shown_fixed: dict | None = None,
    **problem_options,
) -> None:
    """Solve every point of *system*'s design grid here (`exactdice.answers.design`) and print
    the closest (text or --json)."""
    from exactdice.answers import design

    bars = terminal_bars()
    try:
        found = design(
            system,
            axes,
            fixed,
            metric=metric,
            target=target,
            tolerance=design_common.parse_tolerance(tolerance),
            best=best,
            store=None,
            workers=1,
            progress=bars,
            **problem_options,
        )
    finally:
        if bars is not None:
            bars.close()
    design_common.report_design(
        found,
        metric=metric,
        meaning=meaning,
        axes=axes,
        fixed=fixed if shown_fixed is None else shown_fixed,
        as_json=as_json,
        full_fractions=full_fractions,
        method=_EXHAUSTIVE,
    )


# ----- Contingency -----------------------------------------------------------------------


def _pool_values(text: str, name: str) -> list[str]:
    """``standard`` (the tables' 35 pools of d4..d12) or pools separated by ``/``."""
    from exactdice.contingency.check import parse_pool
    from exactdice.contingency.design import standard_pool_texts

    if text.strip().lower() == "standard":
        return standard_pool_texts()
    pools = []
    for part in text.split("/"):
        try:
            pools.append(",".join(f"d{size}" for size in parse_pool(part.strip(), name)))
        except InputError as error:
            raise InputError("--vary", f"{name}: {error.message}") from None
    return pools


_CONTINGENCY_SETUP = ("dice", "difficulty", "advantage", "disadvantage", "modifier")


@click.command("design")
@design_common.design_query_options(
    ("success", "success-or-condition", "failure"),
    "The grid: difficulty=1-11, dice=standard (the 35 pools of d4..d12) or dice=d6,d8,d10/d8,d8,d8, "
    "advantage=0-2, disadvantage=0-2, modifier=-2-2.",
    "success=0.6",
)
@parameter_options(get_system("contingency").parameters, skip=("modifiers",))
def contingency_design(target_text, vary_text, tolerance, best, full_fractions, as_json, max_setups, **values):
    """The checks whose exact P(success) (or success-or-condition, failure) is closest to a
    target, best first: which difficulty gives a pool about a 60 % chance, or which pool
    for a difficulty.

    \b
    Examples:
      exactdice contingency design --target success=0.6 --dice d6,d8,d10 --vary difficulty=1-11
      exactdice contingency design --target success=50% --difficulty 6 --vary dice=standard --best 3
      exactdice contingency design --target success-or-condition=0.75 --vary difficulty=2-10,advantage=0-1

    Every setup of the grid is solved exactly (a check costs about a millisecond).
    """
    from exactdice.contingency.design import METRICS
    from exactdice.contingency.system import SYSTEM

    metric, target = design_common.parse_target(target_text, METRICS)
    parsers = {
        "difficulty": design_common.integer_values,
        "dice": _pool_values,
        "advantage": design_common.integer_values,
        "disadvantage": design_common.integer_values,
        "modifier": design_common.integer_values,
    }
    axes = design_common.parse_vary(vary_text, parsers, "difficulty=1-11", max_setups)
    given = given_values(values)
    fixed = design_common.fixed_from_flags(axes, {name: given.get(name) for name in _CONTINGENCY_SETUP})
    rules = SYSTEM.rules(given)
    _search_and_report(
        "contingency",
        metric=metric,
        meaning=METRICS[metric],
        target=target,
        axes=axes,
        fixed=fixed,
        shown_fixed={**fixed, "rules": rules.to_dict()},
        tolerance=tolerance,
        best=best,
        as_json=as_json,
        full_fractions=full_fractions,
        rules=rules,
    )


contingency_design.parameter_flags = {"metric": "--target", "axes": "--vary"}


# ----- Karst -------------------------------------------------------------------------------


@click.command("design")
@design_common.design_query_options(
    ("hit", "success"),
    "The grid: defense=8-20 and/or modifier=-2-10 for hit (an attack roll, d20 + modifier "
    "against the defense); modifier=-5-5 for success (an action roll, d6 + modifier against 6).",
    "hit=0.6",
)
@click.option("--modifier", type=int, default=None, help="Fixed modifier (or vary it).")
@click.option("--defense", type=int, default=None, help="Fixed defense of an attack's target (or vary it).")
def karst_design(target_text, vary_text, tolerance, best, full_fractions, as_json, max_setups, modifier, defense):
    """The rolls whose exact P(hit) or P(success) is closest to a target, best first: which
    defense gives an attacker a 60 % chance to hit, or which modifier an action needs.

    \b
    Examples:
      exactdice karst design --target hit=0.6 --modifier 3 --vary defense=8-20
      exactdice karst design --target hit=50% --defense 15 --vary modifier=-2-10
      exactdice karst design --target success=0.5 --vary modifier=-5-5

    Every roll of the grid is solved exactly (microseconds each).
    """
    from exactdice.karst.design import METRICS

    metric, target = design_common.parse_target(target_text, METRICS)
    parsers = {"modifier": design_common.integer_values, "defense": design_common.integer_values}
    axes = design_common.parse_vary(vary_text, parsers, "defense=8-20", max_setups)
    fixed = design_common.fixed_from_flags(axes, {"modifier": modifier, "defense": defense})
    _search_and_report(
        "karst",
        metric=metric,
        meaning=METRICS[metric],
        target=target,
        axes=axes,
        fixed=fixed,
        tolerance=tolerance,
        best=best,
        as_json=as_json,
        full_fractions=full_fractions,
    )


karst_design.parameter_flags = {"metric": "--target", "axes": "--vary"}


# ----- Chronica ----------------------------------------------------------------------------


def _size_values(text: str, name: str) -> list[int]:
    """Die sizes: ``4,6,8``, ``d4,d6,d8`` or a range ``4-12`` (every size in it)."""
    return design_common.integer_values(text.replace("d", "").replace("D", ""), name)


@click.command("design")
@design_common.design_query_options(
    ("win", "tie", "loss"),
    "The grid: the player's dice=1-4 and size=d4,d6,d8,d10,d12 (a pool of `dice` dice of that "
    "size), and/or the opposition's against-dice and against-size.",
    "win=0.5",
)
@click.option("--dice", type=int, default=None, help="Fixed number of player dice (or vary it).")
@click.option("--size", default=None, help="Fixed size of the player's dice, like d8 (or vary it).")
@click.option("--against-dice", type=int, default=None, help="Fixed number of opposition dice (or vary it).")
@click.option("--against-size", default=None, help="Fixed size of the opposition's dice, like d8 (or vary it).")
@parameter_options(get_system("chronica").parameters, skip=("sides", "target"), roles=("rules",))
def chronica_design(
    target_text,
    vary_text,
    tolerance,
    best,
    full_fractions,
    as_json,
    max_setups,
    dice,
    size,
    against_dice,
    against_size,
    **rule_values,
):
    """The contests whose exact P(win) (or tie, loss) of the player is closest to a target,
    best first: which pool gives a player about an even chance against 3d8.

    \b
    Examples:
      exactdice chronica design --target win=0.5 --vary dice=1-4,size=d4,d6,d8,d10,d12 --against-dice 3 --against-size d8
      exactdice chronica design --target win=0.6 --dice 2 --size d10 --vary against-dice=1-4,against-size=d6,d8,d10

    Every contest of the grid is solved exactly (milliseconds to a second each).
    """
    from exactdice.chronica.design import METRICS
    from exactdice.chronica.ruleset import parse_die
    from exactdice.chronica.system import SYSTEM

    metric, target = design_common.parse_target(target_text, METRICS)
    parsers = {
        "dice": design_common.integer_values,
        "size": _size_values,
        "against_dice": design_common.integer_values,
        "against_size": _size_values,
    }
    axes = design_common.parse_vary(vary_text, parsers, "dice=1-4,size=d6,d8", max_setups)
    sizes = {
        name: None if text is None else parse_die(text if text.lower().startswith("d") else f"d{text}", name)
        for name, text in (("size", size), ("against_size", against_size))
    }
    fixed = design_common.fixed_from_flags(axes, {"dice": dice, "against_dice": against_dice, **sizes})
    rules = SYSTEM.rules(given_values(rule_values))
    _search_and_report(
        "chronica",
        metric=metric,
        meaning=METRICS[metric],
        target=target,
        axes=axes,
        fixed=fixed,
        shown_fixed={**fixed, "rules": rules.describe()},
        tolerance=tolerance,
        best=best,
        as_json=as_json,
        full_fractions=full_fractions,
        rules=rules,
    )


chronica_design.parameter_flags = {"metric": "--target", "axes": "--vary"}
