"""The other systems' pages: one `SystemPage` per main computation, each a form over the
system's own ``expected_distribution`` (the exact law of its simulator's outcome column).

A page declares its fields (`exactdice.web.forms.Field`) and a ``build`` that turns the
checked values into the library's call, so every check the library makes runs in the
server before any work starts; the work itself (`exact_outcomes`) runs in a worker.

>>> page = SYSTEM_PAGES["contingency"]
>>> call = page.prepare({"difficulty": "6"})
>>> outcomes = exact_outcomes("contingency", call.values)
>>> sum(outcomes.values())
Fraction(1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from exactdice.errors import InputError
from exactdice.web.forms import Field, FormError, form_field, read_fields

__all__ = ["SystemPage", "SYSTEM_PAGES", "exact_outcomes", "PreparedCall"]


@dataclass(frozen=True)
class PreparedCall:
    """Checked field values and the library call they make (run by `exact_outcomes`)."""

    system: str
    values: dict


@dataclass(frozen=True)
class SystemPage:
    """One computation's form: its fields, and ``build(values)`` -> a no-argument function
    returning {outcome: exact probability} (built in the server, so errors come early)."""

    name: str
    title: str
    outcome: str
    column: str
    fields: tuple[Field, ...]
    build: Callable[[dict], Callable[[], dict]]

    def prepare(self, data: dict) -> PreparedCall:
        """Check every field and the library's own checks; `FormError` names the bad ones."""
        values = read_fields(self.fields, data)
        try:
            self.build(values)
        except InputError as error:
            raise FormError({form_field(error.field, tuple(values)): error.message}) from None
        return PreparedCall(self.name, values)


def _contingency(values):
    from exactdice.contingency.check import expected_distribution, skill_check
    from exactdice.contingency.ruleset import ContingencyRules

    rules = ContingencyRules(luck=values["luck"], fail_by_one=values["fail_by_one"],
                             gm_omen=values["gm_omen"])
    try:
        check = skill_check(values["dice"], modifier=values["modifier"], advantage=values["advantage"],
                            disadvantage=values["disadvantage"], difficulty=values["difficulty"])
    except InputError as error:
        field = {"--dice": "dice"}.get(error.field, error.field)
        raise InputError(field, error.message) from None
    from exactdice.contingency.check import validate

    validate(check, rules)
    return lambda: expected_distribution(check, rules)


def _chronica(values):
    from exactdice.chronica import expected_distribution
    from exactdice.chronica.ruleset import ChronicaRules, parse_die, parse_side

    sides = []
    for name in ("side_1", "side_2", "side_3"):
        if values[name]:
            sides.append(parse_side(values[name], name))
        elif name != "side_3":
            raise InputError(name, "give the side's dice, e.g. d8,d8,d6")
    target = parse_die(values["target"], "target") if values["target"] else None
    rules = ChronicaRules(tie_rule=values["tie_rule"])
    return lambda: expected_distribution(sides, rules, target)


def _karst_attack(values):
    from exactdice.karst import expected_distribution
    from exactdice.karst.knockout import damage_per_hit

    damage_per_hit(values["damage"])  # a bad expression is named before any work
    setup = {"modifier": values["modifier"], "defense": values["defense"], "damage": values["damage"],
             "health": values["health"], "unaware": values["unaware"]}
    return lambda: expected_distribution("attack", **setup)


def _karst_death(values):
    from exactdice.karst import expected_distribution

    return lambda: expected_distribution("death", negative_health=values["negative_health"],
                                         modifier=values["modifier"])


def _pages():
    from exactdice.contingency.ruleset import FAIL_BY_ONE_POLICIES, GM_OMEN_RULES, LUCK_POLICIES
    from exactdice.chronica.ruleset import TIE_RULES

    pages = [
        SystemPage("contingency", "Contingency skill check", "outcome", "outcome", (
            Field("dice", "text", "d6,d8,d10", label="Dice", help="The pool: wellness, attribute, skill (3d6 = d6,d6,d6)."),
            Field("difficulty", "int", 6, low=1, high=100, label="Difficulty", help="Target number."),
            Field("advantage", "int", 0, low=0, high=20, label="Advantage", help="Units of advantage."),
            Field("disadvantage", "int", 0, low=0, high=20, label="Disadvantage", help="Units of disadvantage."),
            Field("modifier", "int", 0, low=-20, high=20, label="Modifier", help="Added to every die's face."),
            Field("luck", "choice", LUCK_POLICIES[0], choices=LUCK_POLICIES, label="Luck die",
                  help="When to add a luck die of the result die's size."),
            Field("fail_by_one", "choice", FAIL_BY_ONE_POLICIES[0], choices=FAIL_BY_ONE_POLICIES,
                  label="Fail by one", help="Whether difficulty - 1 becomes success-with-condition."),
            Field("gm_omen", "choice", GM_OMEN_RULES[0], choices=GM_OMEN_RULES, label="GM omen",
                  help="Which faces give the moderator an omen."),
        ), _contingency),
        SystemPage("chronica", "Chronica Mutanis Mundi contest", "winner (side 0, 1, ... or tie)", "winner", (
            Field("side_1", "text", "d8,d8,d6", label="Side 0 dice", help="The first side's dice, e.g. d8,d8,d6."),
            Field("side_2", "text", "d10,d6", label="Side 1 dice", help="The second side's dice."),
            Field("side_3", "text", "", label="Side 2 dice", help="A third side (optional)."),
            Field("target", "text", "", label="Target die", help="A target die (optional), e.g. d8."),
            Field("tie_rule", "choice", TIE_RULES[0], choices=TIE_RULES, label="Tie rule",
                  help="all-discarded: a true tie only when every die is gone."),
        ), _chronica),
        SystemPage("karst-attack", "Karst attack until knockout", "negative health after the fight",
                   "negative_health", (
            Field("modifier", "int", 2, low=-20, high=20, label="Attack modifier", help="The attacker's modifier."),
            Field("defense", "int", 12, low=0, high=40, label="Defense", help="The target's defense."),
            Field("damage", "text", "d6", label="Damage", help="Damage per hit, dice notation."),
            Field("health", "int", 8, low=1, high=100, label="Health", help="The target's health."),
            Field("unaware", "bool", False, label="Unaware", help="Damage doubled on the first attack."),
        ), _karst_attack),
        SystemPage("karst-death", "Karst death roll", "outcome", "outcome", (
            Field("negative_health", "int", 2, low=1, high=100, label="Negative health", help="How far below zero."),
            Field("modifier", "int", 0, low=-20, high=20, label="Modifier", help="Death roll modifier."),
        ), _karst_death),
    ]
    return {page.name: page for page in pages}


SYSTEM_PAGES = _pages()


def exact_outcomes(system: str, values: dict) -> dict:
    """{outcome: exact probability} of a prepared call, checked to sum to exactly 1 (in a worker)."""
    outcomes = SYSTEM_PAGES[system].build(values)()
    outcomes = {str(name): Fraction(p) for name, p in outcomes.items()}
    total = sum(outcomes.values(), Fraction(0))
    if total != 1:
        raise ArithmeticError(f"the outcome probabilities sum to {total}, not exactly 1")
    return outcomes
