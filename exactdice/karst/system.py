"""Karst as a registered `exactdice.systems.RulesSystem`: one variant per roll.

The action, attack, death and order rolls have different setups, so Karst registers one
system whose ``variants`` are four systems (``exactdice validate karst death ...``).

>>> death = SYSTEM.variants["death"]
>>> death.exact(death.setup({"negative_health": 2}), death.rules({}))
{'death': Fraction(3, 4), 'stable': Fraction(1, 4)}
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from exactdice.karst.expected import expected_distribution, outcome_column
from exactdice.karst.ruleset import OPPOSED_RULES, Rules
from exactdice.karst.tables import table_jobs
from exactdice.systems import DeclaredSystem, Parameter, TableSet

__all__ = ["SYSTEM", "karst_roll", "ROLLS"]

_AID = Parameter("aid", int, 0, "Aid actions per round (each an extra death roll).", role="rules")

#: roll -> (its setup parameters, one line of help)
ROLLS = {
    "action": ((Parameter("modifier", int, 0, "Added to the d6."),),
               "Karst action rolls (d6 + modifier): column 'outcome', success | failure."),
    "opposed": ((Parameter("modifier", int, 0, "The first side's modifier."),
                 Parameter("versus", int, 0, "The second side's modifier.", cli_flag="--vs"),
                 Parameter("opposed", str, "totals", "totals: the higher total prevails; success-first: a "
                           "success beats a failure, then the higher total. Equal totals prevail for "
                           "neither.", choices=OPPOSED_RULES, role="rules")),
                "Karst opposed action rolls (d6 + modifier each): column 'outcome', first | second | "
                "neither (who prevails)."),
    "attack": ((Parameter("modifier", int, 0, "Attack modifier added to the d20."),
                Parameter("defense", int, None, "The target's defense.", required=True, example=12),
                Parameter("damage", str, "d6", "Weapon damage, a sum of dice like 2d4+1."),
                Parameter("health", int, None, "Target health: validate whole knock-out chains."),
                Parameter("unaware", bool, False, "Double the damage of the first attack."),
                Parameter("then_death", bool, False, "Chain the knock-out into the death roll."),
                _AID,
                Parameter("death_modifier", int, 0, "Death-roll modifier (with --then-death).")),
               "Karst attacks (d20 + modifier against defense). Without --health: column "
               "'outcome', hit | miss. With --health: whole knock-out chains, column "
               "'negative_health' (the health below zero at the knock-out); with "
               "--then-death as well: column 'outcome', death | stable."),
    "death": ((Parameter("negative_health", int, None, "h = -health >= 0.", required=True, example=2),
               _AID,
               Parameter("modifier", int, 0, "Added to every death roll.")),
              "Karst death rolls from negative health H: column 'outcome', death | stable."),
    "order": ((Parameter("modifiers", int, (), "Each combatant's order modifier, combatant 1 first.",
                         multiple=True, required=True, cli_flag="--modifier",
                         example=(2, 0)),
               Parameter("two_actions", int, (), "Combatant I takes two actions.", multiple=True),
               Parameter("surprised", int, (), "Combatant I is surprised.", multiple=True),
               Parameter("combatant", int, 1, "Whose place to validate (numbered from 1).")),
              "Karst initiative order: the place of one combatant (--combatant I, numbered "
              "from 1 in the order of --modifier), column 'place_I'."),
}

#: setup parameters the simulator does not take (they only pick what is validated)
_NOT_SIMULATED = ("combatant",)


def _exact(roll: str, setup: Mapping, rules: Rules) -> dict:
    return expected_distribution(roll, rules=rules, **setup)


def _simulate(roll: str, setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
    from exactdice.karst.simulate import simulate

    simulated = {key: value for key, value in setup.items() if key not in _NOT_SIMULATED}
    return simulate(roll, n=n, seed=seed, rules=rules, **simulated)


def _outcome_column(roll: str, setup: Mapping) -> str:
    return outcome_column(roll, **setup)


def _column_distributions(roll: str, setup: Mapping, rules: Rules) -> dict:
    """The exact laws of the roll's other columns (rounds, faces, totals, places...)."""
    from exactdice.karst.expected import column_distributions

    return column_distributions(roll, rules=rules, **setup)


def _exact_laws(roll: str, setup: Mapping, rules: Rules) -> tuple[dict, dict]:
    """`_exact` and `_column_distributions` from one solve."""
    from exactdice.karst.expected import exact_laws

    return exact_laws(roll, rules=rules, **setup)


def karst_roll(roll: str) -> DeclaredSystem:
    """One Karst roll (``action``, ``opposed``, ``attack``, ``death`` or ``order``) as a system.

    >>> karst_roll("action").setup({"modifier": 2})
    {'modifier': 2}
    """
    parameters, summary = ROLLS[roll]
    return DeclaredSystem(roll, summary, Rules, parameters, exact=partial(_exact, roll),
                          simulate=partial(_simulate, roll), outcome=partial(_outcome_column, roll),
                          column_distributions=partial(_column_distributions, roll),
                          exact_laws=partial(_exact_laws, roll))


_TABLE_DESCRIPTIONS = {
    "action": "action roll P(success) by modifier -5..+5",
    "attack": "attack roll P(hit) by attack modifier -2..+10 x defense 8..20",
    "death": "death roll P(death) (and expected rounds) by negative health 0..6 x aid "
             "actions per round 0..2, death-roll modifier 0",
}


def _table_sets() -> list[TableSet]:
    return [TableSet("karst", name, description, f"exactdice karst table --table {name}",
                     tuple(table_jobs((name,))))
            for name, description in _TABLE_DESCRIPTIONS.items()]


#: Karst rolls (spec ``karst.md``): the system is its five rolls
SYSTEM = DeclaredSystem(
    "karst", "Karst rolls: action | opposed | attack | death | order (one subcommand each).", Rules,
    variants={roll: karst_roll(roll) for roll in ROLLS}, table_sets=_table_sets)
