"""Contingency as a registered `exactdice.systems.RulesSystem`: one skill check.

>>> setup = SYSTEM.setup({"dice": "3d6", "difficulty": 4})
>>> SYSTEM.exact(setup, SYSTEM.rules({}))["success"]
Fraction(1, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exactdice.contingency.check import (OUTCOME_COLUMN, SkillCheck, expected_distribution,
                                         parse_modifiers, skill_check, validate)
from exactdice.contingency.ruleset import FAIL_BY_ONE_POLICIES, GM_OMEN_RULES, LUCK_POLICIES, Rules
from exactdice.contingency.tables import ROLL_KINDS, table_jobs
from exactdice.systems import Parameter, TableSet, rules_values, setup_values

__all__ = ["SYSTEM", "ContingencySystem", "PARAMETERS", "build_check"]

PARAMETERS = (
    Parameter("dice", str, "d6,d8,d10",
              "The pool: die sizes separated by commas (wellness, attribute, skill); "
              "\"3d6\" means d6,d6,d6."),
    Parameter("difficulty", int, None,
              "Target number; gives the outcome (needed by --luck if-failing)."),
    Parameter("advantage", int, 0, "Units of advantage (cancel against disadvantage; any net "
              "advantage takes the highest die).", minimum=0),
    Parameter("disadvantage", int, 0, "Units of disadvantage (any net disadvantage takes the "
              "lowest die).", minimum=0),
    Parameter("modifier", int, 0, "Face modifier added to every die of the pool."),
    Parameter("modifiers", str, None, "One face modifier per die, like 1,0,-1 (instead of "
              "--modifier)."),
    Parameter("luck", str, "never", "When to add a luck die of the result die's size.",
              choices=LUCK_POLICIES, role="rules"),
    Parameter("fail_by_one", str, "take", "Whether a total of difficulty - 1 becomes "
              "success-with-condition.", choices=FAIL_BY_ONE_POLICIES, role="rules"),
    Parameter("luck_modifier", bool, False, "Give the luck die the result die's own face "
              "modifier.", role="rules"),
    Parameter("gm_omen", str, "exactly-1", "Which faces give the moderator an omen.",
              choices=GM_OMEN_RULES, role="rules"),
    Parameter("any_size", bool, False, "Allow pools of any odd size (the rules roll three "
              "dice).", role="rules"),
)


def build_check(setup: Mapping) -> SkillCheck:
    """The `SkillCheck` of a setup mapping (dice and modifiers as text, as the CLI gives them).

    >>> build_check({"dice": "d6,d8,d10", "modifiers": "1,0,-1"}).modifiers
    (1, 0, -1)
    """
    return skill_check(setup.get("dice", "d6,d8,d10"), modifier=setup.get("modifier", 0),
                       modifiers=parse_modifiers(setup.get("modifiers")),
                       advantage=setup.get("advantage", 0),
                       disadvantage=setup.get("disadvantage", 0),
                       difficulty=setup.get("difficulty"))


@dataclass(frozen=True)
class ContingencySystem:
    """Contingency skill checks (spec ``contingency.md``)."""

    name: str = "contingency"
    summary: str = "Contingency skill checks: success, success-with-condition, failure."
    rules_type: type = Rules
    parameters: tuple = PARAMETERS
    variants = {}

    def setup(self, values: Mapping) -> dict:
        return setup_values(self, values)

    def rules(self, values: Mapping) -> Rules:
        return Rules(**rules_values(self, values))

    def exact(self, setup: Mapping, rules: Rules) -> dict:
        return expected_distribution(build_check(setup), rules)

    def simulate(self, setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
        from exactdice.contingency.simulate import simulate

        check = build_check(setup)
        validate(check, rules)
        return simulate(check, rules, n=n, seed=seed)

    def outcome_column(self, setup: Mapping) -> str:
        return OUTCOME_COLUMN

    def column_distributions(self, setup: Mapping, rules: Rules) -> dict:
        """The exact laws of the total, result die and omen columns."""
        from exactdice.contingency.check import column_distributions

        return column_distributions(build_check(setup), rules)

    def table_sets(self) -> list[TableSet]:
        rules = Rules()
        return [TableSet("contingency", f"difficulty_{kind}",
                         f"P(success) and P(success or success-with-condition) of the 35 "
                         f"three-die pools of d4..d12 against the 11 named difficulties, {kind} "
                         f"roll, default rules ({rules.describe()})",
                         f"exactdice contingency table --kind {kind}",
                         tuple(table_jobs(rules, (kind,))))
                for kind in ROLL_KINDS]


SYSTEM = ContingencySystem()
