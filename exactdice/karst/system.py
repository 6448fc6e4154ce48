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


__all__ = ["SYSTEM", "karst_roll", "ROLLS", "TASKS", "outcome_words"]


def _read_damage(expression: str) -> None:
    """Refuse damage that is no dice expression, with or without a health to knock out."""
    from exactdice.karst.knockout import damage_per_hit

    damage_per_hit(expression)


_AID = Parameter("aid", int, 0, "Aid actions per round (each an extra death roll).", role="rules")

#: roll -> (its setup parameters, one line of help)
ROLLS = {
    "action": (
        (Parameter("modifier", int, 0, "Added to the d6."),),
        "Karst action rolls (d6 + modifier): column 'outcome', success | failure.",
    ),
    "opposed": (
        (
            Parameter("modifier", int, 0, "The first side's modifier."),
            Parameter("versus", int, 0, "The second side's modifier.", cli_flag="--vs"),
            Parameter(
                "opposed",
                str,
                "totals",
                "totals: the higher total prevails; success-first: a "
                "success beats a failure, then the higher total. Equal totals prevail for "
                "neither.",
                choices=OPPOSED_RULES,
                role="rules",
            ),
        ),
        "Karst opposed action rolls (d6 + modifier each): column 'outcome', first | second | neither (who prevails).",
    ),
    "attack": (
        (
            Parameter("modifier", int, 0, "Attack modifier added to the d20."),
            Parameter("defense", int, None, "The target's defense.", required=True, example=12),
            Parameter("damage", str, "d6", "Weapon damage, a sum of dice like 2d4+1.", reader=_read_damage),
            Parameter(
                "health",
                int,
                None,
                "Target health: whole knock-out chains (one attack a round), the rounds to knock it out.",
            ),
            Parameter("unaware", bool, False, "Double the damage of the first attack."),
            Parameter("then_death", bool, False, "Chain the knock-out into the death roll."),
            _AID,
            Parameter("death_modifier", int, 0, "Death-roll modifier (with `then_death`)."),
        ),
        "Karst attacks (d20 + modifier against defense). Without `health`: column "
        "'outcome', hit | miss. With `health`: whole knock-out chains, column "
        "'negative_health' (the health below zero at the knock-out); with "
        "`then_death` as well: column 'outcome', death | stable.",
    ),
    "death": (
        (
            Parameter("negative_health", int, None, "h = -health >= 0.", required=True, example=2),
            _AID,
            Parameter("modifier", int, 0, "Added to every death roll."),
        ),
        "Karst death rolls from negative health H: column 'outcome', death | stable.",
    ),
    "order": (
        (
            Parameter(
                "modifiers",
                int,
                (),
                "Each combatant's order modifier, combatant 1 first.",
                multiple=True,
                required=True,
                cli_flag="--modifier",
                example=(2, 0),
            ),
            Parameter(
                "two_actions", int, (), "Combatant I takes two actions (-3 when its score is >= 4).", multiple=True
            ),
            Parameter(
                "surprised", int, (), "Combatant I is surprised: it does not act in the opening round.", multiple=True
            ),
            Parameter("combatant", int, 1, "Whose place to validate (numbered from 1)."),
        ),
        "Karst initiative order: the place of one combatant (`combatant` I, numbered "
        "from 1 in the order of `modifiers`), column 'place_I'.",
    ),
}

#: each roll as a person asks for it
TASKS = {
    "action": "Karst action roll",
    "opposed": "Karst opposed roll",
    "attack": "Karst attack",
    "death": "Karst death roll",
    "order": "Karst initiative order",
}
#: outcomes in words (a knock-out's health and an order's place are numbers: see `outcome_words`)
_WORDS = {
    "success": "success",
    "failure": "failure",
    "first": "the first side prevails",
    "second": "the second side prevails",
    "neither": "neither side prevails",
    "hit": "the attack hits",
    "miss": "the attack misses",
    "death": "dies",
    "stable": "stabilises",
}


def outcome_words(roll: str, outcome: str) -> str:
    """An outcome of *roll* as a person reads it.

    >>> outcome_words("attack", "hit"), outcome_words("attack", "3"), outcome_words("order", "1")
    ('the attack hits', 'knocked out at health -3', 'place 1')
    """
    if outcome in _WORDS:
        return _WORDS[outcome]
    if roll == "attack" and str(outcome).isdigit():
        return f"knocked out at health -{outcome}" if outcome != "0" else "knocked out at health 0"
    if roll == "order" and str(outcome).isdigit():
        return f"place {outcome}"
    return str(outcome)


def _charts(roll: str, setup: Mapping, rules: Rules) -> dict:
    """An attack's P(hit) against defense (`exactdice.karst.charts.hit_chart`)."""
    from exactdice.karst.charts import hit_chart

    return {"chance": hit_chart(setup["modifier"], setup["defense"])} if roll == "attack" else {}


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
    return DeclaredSystem(
        roll,
        summary,
        Rules,
        parameters,
        exact=partial(_exact, roll),
        simulate=partial(_simulate, roll),
        outcome=partial(_outcome_column, roll),
        column_distributions=partial(_column_distributions, roll),
        exact_laws=partial(_exact_laws, roll),
        task=TASKS[roll],
        outcome_words=partial(outcome_words, roll),
        charts=partial(_charts, roll),
    )


_TABLE_DESCRIPTIONS = {
    "action": "action roll P(success) by modifier -5..+5",
    "attack": "attack roll P(hit) by attack modifier -2..+10 x defense 8..20",
    "death": "death roll P(death) (and expected rounds) by negative health 0..6 x aid "
    "actions per round 0..2, death-roll modifier 0",
}


def _table_sets() -> list[TableSet]:
    return [
        TableSet("karst", name, description, f"exactdice karst table --table {name}", tuple(table_jobs((name,))))
        for name, description in _TABLE_DESCRIPTIONS.items()
    ]


#: Karst rolls (spec ``karst.md``): the system is its five rolls
SYSTEM = DeclaredSystem(
    "karst",
    "Karst rolls: action | opposed | attack | death | order (one subcommand each).",
    Rules,
    variants={roll: karst_roll(roll) for roll in ROLLS},
    table_sets=_table_sets,
)
