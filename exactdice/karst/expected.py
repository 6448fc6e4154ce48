"""Exact distributions of each Karst simulation's categorical column (for the validator).

`outcome_column` names the CSV column; `expected_distribution` gives its exact law,
keyed by the text the simulator writes in that column.

>>> outcome_column("death"), expected_distribution("death", negative_health=2)["death"]
('outcome', Fraction(3, 4))
"""

from __future__ import annotations

from exactdice.errors import InputError
from exactdice.karst.death import solve_death
from exactdice.karst.knockout import KnockoutSetup, knockout_then_death, solve_knockout
from exactdice.karst.rolls import action_success, attack_hit, order_places
from exactdice.karst.ruleset import Rules
from exactdice.karst.simulate import SIMULATIONS

__all__ = ["outcome_column", "expected_distribution"]


def outcome_column(kind: str, *, health=None, then_death: bool = False, combatant: int = 1, **_) -> str:
    """The simulator's CSV column that `expected_distribution` describes.

    >>> outcome_column("attack", health=8), outcome_column("order", combatant=2)
    ('negative_health', 'place_2')
    """
    if kind == "order":
        return f"place_{combatant}"
    if kind == "attack" and health is not None and not then_death:
        return "negative_health"
    if kind not in SIMULATIONS:
        raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")
    return "outcome"


def expected_distribution(kind: str, *, rules: Rules = Rules(), **setup) -> dict:
    """Exact category -> probability for the column named by `outcome_column`.

    Setup keys are those of `exactdice.karst.simulate.simulate` (plus ``combatant`` for order).

    >>> expected_distribution("action", modifier=0)
    {'success': Fraction(1, 6), 'failure': Fraction(5, 6)}
    """
    if kind == "action":
        p = action_success(setup.get("modifier", 0))
        return {"success": p, "failure": 1 - p}
    if kind == "death":
        solution = solve_death(setup["negative_health"], setup.get("modifier", 0), rules)
        return {"death": solution.death, "stable": solution.stable}
    if kind == "attack":
        if setup.get("health") is None:
            p = attack_hit(setup["modifier"], setup["defense"])
            return {"hit": p, "miss": 1 - p}
        chain = solve_knockout(KnockoutSetup(setup["modifier"], setup["defense"], setup.get("damage", "d6"),
                                             setup["health"], setup.get("unaware", False)))
        if setup.get("then_death"):
            return knockout_then_death(chain, setup.get("death_modifier", 0), rules)
        return {str(value): p for value, p in chain.negative_health.items()}
    if kind == "order":
        combatant = setup.get("combatant", 1)
        places = order_places(setup["modifiers"], setup.get("two_actions", ()), setup.get("surprised", ()))
        if not 1 <= combatant <= len(places):
            raise InputError("combatant", f"combatant {combatant} does not exist (numbered 1..{len(places)})")
        chosen = places[combatant - 1]
        if chosen is None:
            raise InputError("combatant", f"combatant {combatant} is surprised: it does not act in the "
                                            "opening round, so it has no place to validate")
        return {str(place): p for place, p in chosen.items()}
    raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")
