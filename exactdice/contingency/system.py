"""Contingency as a registered `exactdice.systems.RulesSystem`: one skill check.

>>> setup = SYSTEM.setup({"dice": "3d6", "difficulty": 4})
>>> SYSTEM.exact(setup, SYSTEM.rules({}))["success"]
Fraction(1, 2)
"""

from __future__ import annotations

from collections.abc import Mapping

from exactdice.contingency.check import (
    OUTCOME_COLUMN,
    SkillCheck,
    expected_distribution,
    parse_modifiers,
    parse_pool,
    skill_check,
    validate,
)
from exactdice.contingency.ruleset import FAIL_BY_ONE_POLICIES, GM_OMEN_RULES, LUCK_POLICIES, Rules
from exactdice.contingency.tables import ROLL_KINDS, table_jobs
from exactdice.systems import DeclaredSystem, Parameter, TableSet

__all__ = ["SYSTEM", "PARAMETERS", "build_check"]

PARAMETERS = (
    Parameter(
        "dice",
        str,
        "d6,d8,d10",
        'The pool: die sizes separated by commas (wellness, attribute, skill); "3d6" means d6,d6,d6.',
        reader=parse_pool,
    ),
    Parameter("difficulty", int, None, "Target number; gives the outcome (needed by `luck` if-failing).", example=4),
    Parameter(
        "advantage",
        int,
        0,
        "Units of advantage (cancel against disadvantage; any net advantage takes the highest die).",
        minimum=0,
    ),
    Parameter("disadvantage", int, 0, "Units of disadvantage (any net disadvantage takes the lowest die).", minimum=0),
    Parameter("modifier", int, 0, "Face modifier added to every die of the pool."),
    Parameter(
        "modifiers",
        str,
        None,
        "One face modifier per die, like 1,0,-1 (instead of `modifier`).",
        label="Modifier per die",
    ),
    Parameter(
        "luck", str, "never", "When to add a luck die of the result die's size.", choices=LUCK_POLICIES, role="rules"
    ),
    Parameter(
        "fail_by_one",
        str,
        "take",
        "Whether a total of difficulty - 1 becomes success-with-condition.",
        choices=FAIL_BY_ONE_POLICIES,
        role="rules",
    ),
    Parameter("luck_modifier", bool, False, "Give the luck die the result die's own face modifier.", role="rules"),
    Parameter(
        "gm_omen",
        str,
        "exactly-1",
        "Which faces give the moderator an omen.",
        choices=GM_OMEN_RULES,
        role="rules",
        label="GM omen",
    ),
    Parameter("any_size", bool, False, "Allow pools of any odd size (the rules roll three dice).", role="rules"),
)


def build_check(setup: Mapping) -> SkillCheck:
    """The `SkillCheck` of a setup mapping (dice and modifiers as text, as the CLI gives them).

    >>> build_check({"dice": "d6,d8,d10", "modifiers": "1,0,-1"}).modifiers
    (1, 0, -1)
    """
    return skill_check(
        setup.get("dice", "d6,d8,d10"),
        modifier=setup.get("modifier", 0),
        modifiers=parse_modifiers(setup.get("modifiers")),
        advantage=setup.get("advantage", 0),
        disadvantage=setup.get("disadvantage", 0),
        difficulty=setup.get("difficulty"),
    )


def _exact(setup: Mapping, rules: Rules) -> dict:
    return expected_distribution(build_check(setup), rules)


def _simulate(setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
    from exactdice.contingency.simulate import simulate

    check = build_check(setup)
    validate(check, rules)
    return simulate(check, rules, n=n, seed=seed)


def _column_distributions(setup: Mapping, rules: Rules) -> dict:
    """The exact laws of the total, result die and omen columns."""
    from exactdice.contingency.check import column_distributions

    return column_distributions(build_check(setup), rules)


def _exact_laws(setup: Mapping, rules: Rules) -> tuple[dict, dict]:
    """`_exact` and `_column_distributions` from one solve."""
    from exactdice.contingency.check import exact_laws

    return exact_laws(build_check(setup), rules)


#: the canonical tables' description, per roll kind
_TABLE_DESCRIPTION = (
    "P(success) and P(success or success-with-condition) of the 35 three-die "
    "pools of d4..d12 against the 11 named difficulties, {kind} roll, default "
    "rules ({rules})"
)


def _charts(setup: Mapping, rules: Rules) -> dict:
    """P(success) against difficulty (`exactdice.contingency.charts.success_chart`)."""
    from exactdice.contingency.charts import success_chart
    from exactdice.contingency.check import solve_check

    return {"chance": success_chart(solve_check(build_check(setup), rules))}


#: each outcome in words
OUTCOME_WORDS = {"success": "success", "success-with-condition": "success with a condition", "failure": "failure"}


def _table_sets() -> list[TableSet]:
    rules = Rules()
    return [
        TableSet(
            "contingency",
            f"difficulty_{kind}",
            _TABLE_DESCRIPTION.format(kind=kind, rules=rules.describe()),
            f"exactdice contingency table --kind {kind}",
            tuple(table_jobs(rules, (kind,))),
        )
        for kind in ROLL_KINDS
    ]


#: Contingency skill checks (spec ``contingency.md``)
SYSTEM = DeclaredSystem(
    "contingency",
    "Contingency skill checks: success, success-with-condition, failure.",
    Rules,
    PARAMETERS,
    exact=_exact,
    simulate=_simulate,
    outcome=OUTCOME_COLUMN,
    column_distributions=_column_distributions,
    exact_laws=_exact_laws,
    table_sets=_table_sets,
    task="Contingency skill check",
    outcome_words=lambda outcome: OUTCOME_WORDS.get(outcome, outcome),
    charts=_charts,
)
