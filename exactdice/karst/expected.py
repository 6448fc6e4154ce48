"""Exact distributions of each Karst simulation's categorical column (for the validator).

`outcome_column` names the CSV column; `expected_distribution` gives its exact law,
keyed by the text the simulator writes in that column.

>>> outcome_column("death"), expected_distribution("death", negative_health=2)["death"]
('outcome', Fraction(3, 4))
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from exactdice.core.distribution import d
from exactdice.errors import InputError
from exactdice.karst.death import solve_death
from exactdice.karst.knockout import KnockoutSetup, damage_per_hit, knockout_then_death, solve_knockout
from exactdice.karst.rolls import action_success, attack_hit, opposed, order_places
from exactdice.karst.ruleset import Rules
from exactdice.karst.simulate import SIMULATIONS

__all__ = ["outcome_column", "expected_distribution", "column_distributions", "exact_laws"]


def outcome_column(
    kind: str, *, health: int | None = None, then_death: bool = False, combatant: int = 1, **_: object
) -> str:
    """The simulator's CSV column that `expected_distribution` describes.

    Parameters
    ----------
    kind : {"action", "opposed", "attack", "death", "order"}
        The roll.
    health : int, optional
        With ``attack``: a knock-out chain's target health.
    then_death : bool, default False
        With ``attack`` and *health*: the death rolls after the knock-out.
    combatant : int, default 1
        With ``order``: whose place.
    **_
        The roll's other setup values (ignored here).

    Returns
    -------
    str
        The column's name.

    Examples
    --------
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


def expected_distribution(kind: str, *, rules: Rules = Rules(), **setup: Any) -> dict:
    """Exact category -> probability for the column named by `outcome_column`.

    Parameters
    ----------
    kind : {"action", "opposed", "attack", "death", "order"}
        The roll.
    rules : Rules, optional
        The reading of the rules.
    **setup
        The roll's setup, with the keys of `exactdice.karst.simulate.simulate` (plus
        ``combatant`` for order).

    Returns
    -------
    dict of str to Fraction
        The column's categories as the CSV writes them, summing to exactly 1.

    Raises
    ------
    InputError
        An unknown *kind* or a bad setup value.

    Examples
    --------
    >>> expected_distribution("action", modifier=0)
    {'success': Fraction(1, 6), 'failure': Fraction(5, 6)}
    """
    if kind == "action":
        p = action_success(setup.get("modifier", 0))
        return {"success": p, "failure": 1 - p}
    if kind == "opposed":
        return opposed(setup.get("modifier", 0), setup.get("versus", 0), rules)
    if kind == "death":
        return _death_laws(_solved_death(setup, rules))[0]
    if kind == "attack":
        if setup.get("health") is None:
            if setup.get("then_death"):
                raise InputError("then_death", "chains the knock-out into the death roll: give `health` too")
            p = attack_hit(setup["modifier"], setup["defense"])
            return {"hit": p, "miss": 1 - p}
        return _knockout_laws(_solved_knockout(setup), setup, rules)[0]
    if kind == "order":
        combatant = setup.get("combatant", 1)
        places = order_places(setup["modifiers"], setup.get("two_actions", ()), setup.get("surprised", ()))
        if not 1 <= combatant <= len(places):
            raise InputError("combatant", f"combatant {combatant} does not exist (numbered 1..{len(places)})")
        chosen = places[combatant - 1]
        if chosen is None:
            raise InputError(
                "combatant",
                f"combatant {combatant} is surprised: it does not act in the "
                "opening round, so it has no place to validate",
            )
        return {str(place): p for place, p in chosen.items()}
    raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")


def column_distributions(kind: str, *, rules: Rules = Rules(), **setup) -> dict:
    """Every further simulator column with an exact law: column -> `ColumnDistribution`.

    Rounds (death rolls and knock-outs) are listed round by round with the remaining mass in
    one tail category; dice faces and totals are uniform dice shifted by the modifier.

    >>> columns = column_distributions("death", negative_health=2)
    >>> sorted(columns), columns["rounds"].probabilities["0"]
    (['rounds'], Fraction(2, 3))
    """
    from exactdice.validation import ColumnDistribution

    def shifted(sides, modifier):
        return ColumnDistribution.from_distribution(d(sides), lambda face: str(face + modifier))

    if kind == "action":
        modifier = setup.get("modifier", 0)
        return {"natural": shifted(6, 0), "total": shifted(6, modifier)}
    if kind == "opposed":
        return {
            "natural": shifted(6, 0),
            "total": shifted(6, setup.get("modifier", 0)),
            "versus_natural": shifted(6, 0),
            "versus_total": shifted(6, setup.get("versus", 0)),
        }
    if kind == "death":
        return _death_laws(_solved_death(setup, rules))[1]
    if kind == "attack":
        if setup.get("health") is None:
            modifier = setup.get("modifier", 0)
            hit = attack_hit(modifier, setup["defense"])
            damage = {"0": 1 - hit}
            for value, p in (
                damage_per_hit(setup.get("damage", "d6"), setup.get("unaware", False)).probabilities().items()
            ):
                damage[str(value)] = damage.get(str(value), Fraction(0)) + hit * p
            return {"natural": shifted(20, 0), "total": shifted(20, modifier), "damage": ColumnDistribution(damage)}
        return _knockout_laws(_solved_knockout(setup), setup, rules)[1]
    if kind == "order":
        modifiers = setup["modifiers"]
        two_actions, surprised = setup.get("two_actions", ()), setup.get("surprised", ())
        places = order_places(modifiers, two_actions, surprised)
        columns = {}
        for number, (modifier, place) in enumerate(zip(modifiers, places), start=1):
            if place is None:  # surprised: the simulator leaves both columns empty
                columns[f"score_{number}"] = columns[f"place_{number}"] = ColumnDistribution({"": Fraction(1)})
                continue
            score = (
                (lambda face, m=modifier: face + m - 3 if face + m >= 4 else face + m)
                if number in two_actions
                else (lambda face, m=modifier: face + m)
            )
            columns[f"score_{number}"] = ColumnDistribution.from_distribution(d(6), lambda face: str(score(face)))
            columns[f"place_{number}"] = ColumnDistribution.from_distribution(place)
        return columns
    raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")


def exact_laws(kind: str, *, rules: Rules = Rules(), **setup) -> tuple[dict, dict]:
    """(`expected_distribution`, `column_distributions`) of one roll, its chain solved once.

    >>> outcome, columns = exact_laws("death", negative_health=2)
    >>> outcome["death"], columns["rounds"].probabilities["0"]
    (Fraction(3, 4), Fraction(2, 3))
    """
    if kind == "death":
        return _death_laws(_solved_death(setup, rules))
    if kind == "attack" and setup.get("health") is not None:
        return _knockout_laws(_solved_knockout(setup), setup, rules)
    # closed forms (action, a single attack, the opening order): nothing worth sharing
    return expected_distribution(kind, rules=rules, **setup), column_distributions(kind, rules=rules, **setup)


def _solved_death(setup: dict, rules: Rules):
    return solve_death(setup["negative_health"], setup.get("modifier", 0), rules)


def _solved_knockout(setup: dict):
    return solve_knockout(
        KnockoutSetup(
            setup["modifier"], setup["defense"], setup.get("damage", "d6"), setup["health"], setup.get("unaware", False)
        )
    )


def _death_laws(solution) -> tuple[dict, dict]:
    from exactdice.validation import ColumnDistribution

    return (
        {"death": solution.death, "stable": solution.stable},
        {"rounds": ColumnDistribution.with_tail(solution.rounds.probabilities)},
    )


def _knockout_laws(chain, setup: dict, rules: Rules) -> tuple[dict, dict]:
    """A knock-out chain's outcome law (negative health, or death/stable with ``then_death``)
    and its further columns."""
    from exactdice.validation import ColumnDistribution

    columns = {
        "rounds": ColumnDistribution.with_tail(chain.rounds.probabilities),
        "negative_health": ColumnDistribution.from_distribution(chain.negative_health),
    }
    if not setup.get("then_death"):
        return {str(value): p for value, p in chain.negative_health.items()}, columns
    death = knockout_then_death(chain, setup.get("death_modifier", 0), rules)
    columns["outcome"] = ColumnDistribution.from_distribution(death)
    return death, columns
