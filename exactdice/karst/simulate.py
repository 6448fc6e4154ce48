"""Independent Monte Carlo simulators of Karst rolls (they share only `Rules`).

Every die is rolled with ``numpy.random.Generator(PCG64(seed))``, vectorised across
trials; one row per trial. Columns by simulation (`COLUMNS`):

- ``action``: trial, natural, total, outcome (``success`` | ``failure``)
- ``opposed``: trial, natural, total, versus_natural, versus_total, outcome (``first`` |
  ``second`` | ``neither``: who prevails)
- ``attack`` without health: trial, natural, total, outcome (``hit`` | ``miss``), damage
  (0 on a miss); with health (a knock-out chain, one attack per round): trial, rounds,
  hits, negative_health, outcome (``death`` | ``stable`` with then-death, else empty)
- ``death``: trial, rolls (dice rolled, aid included), rounds, final_negative_health,
  outcome (``death`` | ``stable``)
- ``order``: trial, then score_I and place_I for every combatant I (numbered from 1;
  empty for a surprised combatant)

>>> rows = simulate_rows("action", n=3, seed=7, modifier=2)
>>> [sorted(row) for row in rows][0]
['natural', 'outcome', 'total', 'trial']
"""

from __future__ import annotations

import re

import numpy as np

from exactdice.errors import InputError
from exactdice.karst.ruleset import Rules

__all__ = ["SIMULATIONS", "COLUMNS", "simulate", "simulate_rows", "roll_damage"]

SIMULATIONS = ("action", "opposed", "attack", "death", "order")
MAX_TRIALS = 10_000_000
_TERM = re.compile(r"([+-]?)\s*(?:(\d*)[dD](\d+)|(\d+))\s*", re.ASCII)


def COLUMNS(kind: str, *, health=None, combatants: int = 0) -> tuple[str, ...]:  # noqa: N802
    """The CSV header of one simulation.

    >>> COLUMNS("death")
    ('trial', 'rolls', 'rounds', 'final_negative_health', 'outcome')
    """
    if kind == "action":
        return ("trial", "natural", "total", "outcome")
    if kind == "opposed":
        return ("trial", "natural", "total", "versus_natural", "versus_total", "outcome")
    if kind == "attack":
        if health is None:
            return ("trial", "natural", "total", "outcome", "damage")
        return ("trial", "rounds", "hits", "negative_health", "outcome")
    if kind == "death":
        return ("trial", "rolls", "rounds", "final_negative_health", "outcome")
    if kind == "order":
        return (
            ("trial",)
            + tuple(f"score_{i}" for i in range(1, combatants + 1))
            + tuple(f"place_{i}" for i in range(1, combatants + 1))
        )
    raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")


def roll_damage(expression: str, rng: np.random.Generator, count: int) -> np.ndarray:
    """Roll a sum-of-dice damage expression (``2d4+1``, ``d6-1``, ``3``) ``count`` times.

    >>> roll_damage("3", np.random.Generator(np.random.PCG64(0)), 2).tolist()
    [3, 3]
    """
    text = expression.replace(" ", "")
    position, total = 0, np.zeros(count, dtype=np.int64)
    while position < len(text):
        match = _TERM.match(text, position)
        if not match or match.end() == position or (position and not match.group(1)):
            raise InputError("damage", f"the simulator rolls sums like 2d4+1; cannot read {expression!r}")
        sign = -1 if match.group(1) == "-" else 1
        if match.group(4) is not None:
            total += sign * int(match.group(4))
        else:
            dice = int(match.group(2) or 1)
            sides = int(match.group(3))
            if sides < 1 or dice > 1000:
                raise InputError("damage", f"cannot roll {match.group(0)!r}")
            total += sign * rng.integers(1, sides + 1, size=(count, dice)).sum(axis=1)
        position = match.end()
    if not text:
        raise InputError("damage", "empty damage expression")
    return total


def _action(rng, n, modifier):
    natural = rng.integers(1, 7, size=n)
    total = natural + modifier
    success = (natural == 6) | ((natural != 1) & (total >= 6))
    return {"natural": natural, "total": total, "outcome": np.where(success, "success", "failure")}


def _opposed(rng, n, modifier, versus, rules: Rules):
    """Both sides roll an action roll (the second with ``versus``); who prevails, by the
    rules' ``opposed`` knob."""
    first, second = _action(rng, n, modifier), _action(rng, n, versus)
    by_totals = np.where(
        first["total"] > second["total"], "first", np.where(first["total"] < second["total"], "second", "neither")
    )
    outcome = by_totals
    if rules.opposed == "success-first":
        first_succeeds, second_succeeds = first["outcome"] == "success", second["outcome"] == "success"
        outcome = np.where(
            first_succeeds & ~second_succeeds, "first", np.where(second_succeeds & ~first_succeeds, "second", by_totals)
        )
    return {
        "natural": first["natural"],
        "total": first["total"],
        "versus_natural": second["natural"],
        "versus_total": second["total"],
        "outcome": outcome,
    }


def _death_rolls(rng, negative_health: np.ndarray, modifier: int, aid: int):
    """Play death rolls for every trial; returns (dead, rolls, rounds, final negative health)."""
    n = len(negative_health)
    health_left = negative_health.astype(np.int64).copy()
    dead = np.zeros(n, dtype=bool)
    open_ = np.ones(n, dtype=bool)
    rolls = np.zeros(n, dtype=np.int64)
    rounds = np.zeros(n, dtype=np.int64)

    def roll(active, is_aid):
        natural = rng.integers(1, 7, size=n)
        result = np.maximum(1, natural - health_left + modifier)
        rolls[active] += 1
        stable = active & ((natural == 6) | (result >= 6))
        one = active & ~stable & (result == 1)
        open_[stable] = False
        if is_aid:
            health_left[one] += 1
        else:
            dead[one] = True
            open_[one] = False

    roll(open_.copy(), is_aid=False)
    round_number = 0
    while open_.any():
        round_number += 1
        rounds[open_] = round_number
        for _ in range(aid):
            roll(open_.copy(), is_aid=True)
        roll(open_.copy(), is_aid=False)
    return dead, rolls, rounds, health_left


def _death(rng, n, negative_health, modifier, rules):
    if negative_health < 0:
        raise InputError("negative_health", f"must be >= 0, got {negative_health}")
    dead, rolls, rounds, final = _death_rolls(rng, np.full(n, negative_health), modifier, rules.aid)
    return {
        "rolls": rolls,
        "rounds": rounds,
        "final_negative_health": final,
        "outcome": np.where(dead, "death", "stable"),
    }


def _attack(rng, n, modifier, defense, damage, health, unaware, then_death, death_modifier, rules):
    if health is None:
        natural = rng.integers(1, 21, size=n)
        total = natural + modifier
        hit = (natural == 20) | ((natural != 1) & (total >= defense))
        dealt = np.maximum(1, roll_damage(damage, rng, n)) * (2 if unaware else 1)
        return {
            "natural": natural,
            "total": total,
            "outcome": np.where(hit, "hit", "miss"),
            "damage": np.where(hit, dealt, 0),
        }
    if health < 1:
        raise InputError("health", f"must be >= 1, got {health}")
    left = np.full(n, health, dtype=np.int64)
    rounds = np.zeros(n, dtype=np.int64)
    hits = np.zeros(n, dtype=np.int64)
    round_number = 0
    while (left > 0).any():
        round_number += 1
        standing = left > 0
        natural = rng.integers(1, 21, size=n)
        hit = standing & ((natural == 20) | ((natural != 1) & (natural + modifier >= defense)))
        dealt = np.maximum(1, roll_damage(damage, rng, n))
        if unaware and round_number == 1:
            dealt = dealt * 2
        left = np.where(hit, left - dealt, left)
        hits += hit
        rounds[standing] = round_number
    negative = -left
    outcome = np.full(n, "", dtype=object)
    if then_death:
        dead, _, _, _ = _death_rolls(rng, negative, death_modifier, rules.aid)
        outcome = np.where(dead, "death", "stable")
    return {"rounds": rounds, "hits": hits, "negative_health": negative, "outcome": outcome}


def _order(rng, n, modifiers, two_actions, surprised):
    count = len(modifiers)
    if count < 1:
        raise InputError("modifiers", "give at least one combatant")
    for flag, numbers in (("two_actions", two_actions), ("surprised", surprised)):
        for number in numbers:
            if not 1 <= number <= count:
                raise InputError(flag, f"combatant {number} does not exist (numbered 1..{count})")
    scores = rng.integers(1, 7, size=(n, count)) + np.array(modifiers)
    for number in two_actions:
        column = scores[:, number - 1]
        scores[:, number - 1] = np.where(column >= 4, column - 3, column)
    acting = np.array([number not in surprised for number in range(1, count + 1)])
    columns = {}
    for i in range(count):
        ahead = ((scores[:, acting] > scores[:, [i]]).sum(axis=1)) + 1
        columns[f"score_{i + 1}"] = scores[:, i] if acting[i] else np.full(n, "", dtype=object)
        columns[f"place_{i + 1}"] = ahead if acting[i] else np.full(n, "", dtype=object)
    return columns


def simulate_rows(kind: str, *, n: int, seed: int, rules: Rules = Rules(), **setup) -> list[dict]:
    """`simulate` as rows: one dict of strings per trial, keyed by `COLUMNS`.

    Setup by kind: action(modifier); opposed(modifier, versus); attack(modifier, defense, damage="d6", health=None,
    unaware=False, then_death=False, death_modifier=0); death(negative_health, modifier=0);
    order(modifiers, two_actions=(), surprised=()).

    >>> simulate_rows("death", n=2, seed=1, negative_health=5)[0]["outcome"] in ("death", "stable")
    True
    """
    arrays = simulate(kind, n=n, seed=seed, rules=rules, **setup)
    names = [name for name in arrays if name != "trial"]
    rows = []
    for i in range(n):
        row = {"trial": str(i)}
        for name in names:
            value = arrays[name][i]
            row[name] = value if isinstance(value, str) else str(int(value))
        rows.append(row)
    return rows


def simulate(kind: str, *, n: int, seed: int, rules: Rules = Rules(), **setup) -> dict:
    """Run one simulation: one numpy array per column of `COLUMNS` (setup as for `simulate_rows`).

    >>> simulate("action", n=3, seed=7, modifier=2)["outcome"].shape
    (3,)
    """
    if not 1 <= n <= MAX_TRIALS:
        raise InputError("n", f"must be between 1 and {MAX_TRIALS:,}, got {n}")
    rng = np.random.Generator(np.random.PCG64(seed))
    if kind == "action":
        arrays = _action(rng, n, setup.get("modifier", 0))
    elif kind == "opposed":
        arrays = _opposed(rng, n, setup.get("modifier", 0), setup.get("versus", 0), rules)
    elif kind == "death":
        arrays = _death(rng, n, setup["negative_health"], setup.get("modifier", 0), rules)
    elif kind == "attack":
        arrays = _attack(
            rng,
            n,
            setup["modifier"],
            setup["defense"],
            setup.get("damage", "d6"),
            setup.get("health"),
            setup.get("unaware", False),
            setup.get("then_death", False),
            setup.get("death_modifier", 0),
            rules,
        )
    elif kind == "order":
        arrays = _order(
            rng, n, list(setup["modifiers"]), tuple(setup.get("two_actions", ())), tuple(setup.get("surprised", ()))
        )
    else:
        raise InputError("kind", f"must be one of {', '.join(SIMULATIONS)}, got {kind!r}")
    return {"trial": np.arange(n), **arrays}
