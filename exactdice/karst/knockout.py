"""Karst knock-out chains: one attack per round until the target's health is <= 0.

Each round the attack hits with the attack roll's chance and deals the weapon's damage
(at least 1; doubled on the first attack when the target is unaware; our reading: the
target is aware after the first attack, hit or miss). Returned: the joint distribution
of (rounds, negative health left at knock-out), cut by the spec's rule, its exact mean,
the exact distribution of the negative health left, and optionally the death roll that
follows.

>>> chain = solve_knockout(KnockoutSetup(modifier=100, defense=10, damage="1", health=2))
>>> chain.rounds.probabilities[2]
Fraction(361, 400)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from exactdice.core.distribution import Distribution
from exactdice.core.exact import fraction_text
from exactdice.core.notation import parse_dice
from exactdice.errors import InputError, TooLargeError, check_invariant
from exactdice.karst.death import solve_death
from exactdice.karst.rolls import attack_roll
from exactdice.karst.rounds import MAX_ROUNDS, RoundsDistribution, tail_is_small
from exactdice.karst.ruleset import Rules

__all__ = ["KnockoutSetup", "KnockoutSolution", "damage_per_hit", "solve_knockout", "knockout_then_death"]

#: largest starting health a knock-out chain accepts
MAX_HEALTH = 10_000


@dataclass(frozen=True)
class KnockoutSetup:
    """An attack chain until knock-out: one attack a round until the target's health is 0 or less.

    Parameters
    ----------
    modifier : int
        The attack modifier.
    defense : int
        The target's defense.
    damage : str, default "d6"
        The weapon's damage, a dice expression (at least 1 a hit).
    health : int, default 1
        The target's health.
    unaware : bool, default False
        The first attack's damage is doubled.
    """

    modifier: int
    defense: int
    damage: str = "d6"
    health: int = 1
    unaware: bool = False

    def describe(self) -> str:
        """One human-readable line."""
        return (
            f"attack {self.modifier:+d} vs defense {self.defense}, damage {self.damage}"
            f"{' (unaware: doubled on the first attack)' if self.unaware else ''}, health {self.health}"
        )

    def to_dict(self) -> dict:
        """The setup as JSON-ready values."""
        return {
            "modifier": self.modifier,
            "defense": self.defense,
            "damage": self.damage,
            "health": self.health,
            "unaware": self.unaware,
        }


def damage_per_hit(expression: str, doubled: bool = False) -> Distribution:
    """Damage of one hit: the dice expression, at least 1, doubled against an unaware target.

    Parameters
    ----------
    expression : str
        The damage in dice notation (``"d8"``, ``"2d6+1"``).
    doubled : bool, default False
        Double the damage (the first attack on an unaware target).

    Returns
    -------
    Distribution
        The damage.

    Raises
    ------
    NotationError
        Bad dice notation.

    Examples
    --------
    >>> damage_per_hit("d4-2").probabilities()
    {1: Fraction(3, 4), 2: Fraction(1, 4)}
    >>> damage_per_hit("d4-2", doubled=True).outcomes()
    (2, 4)
    """
    damage = parse_dice(expression, field="damage").map(lambda value: max(1, value))
    return damage.map(lambda value: 2 * value) if doubled else damage


@dataclass(frozen=True)
class KnockoutSolution:
    """What `solve_knockout` found.

    Attributes
    ----------
    setup : KnockoutSetup
        The chain solved.
    hit : Fraction
        P(hit) of one attack.
    rounds : RoundsDistribution
        Rounds to knock-out, listed until a small rest, with the rest exact.
    knockout : dict
        ``(rounds, negative health)`` -> probability, for the listed rounds.
    expected_rounds : Fraction
        The exact mean number of rounds.
    negative_health : dict of int to Fraction
        Negative health left at knock-out -> probability (exact, nothing cut).
    """

    setup: KnockoutSetup
    hit: Fraction
    rounds: RoundsDistribution
    knockout: dict  # (rounds, negative health) -> p, for the listed rounds
    expected_rounds: Fraction
    negative_health: dict  # negative health left at knock-out -> p (exact, no cut)

    def to_json(self) -> dict:
        """JSON-ready result: ``hit``, ``rounds``, ``expected_rounds``, ``knockout``, ``negative_health``."""
        return {
            "hit": fraction_text(self.hit),
            "rounds": self.rounds.to_json(),
            "expected_rounds": fraction_text(self.expected_rounds),
            "knockout": [
                {"rounds": r, "negative_health": h, "p": fraction_text(p)} for (r, h), p in self.knockout.items()
            ],
            "knockout_rest": fraction_text(self.rounds.rest),
            "negative_health": {str(h): fraction_text(p) for h, p in self.negative_health.items()},
        }


def _validate(setup: KnockoutSetup) -> None:
    if not isinstance(setup.health, int) or setup.health < 1:
        raise InputError("health", f"the target's health must be >= 1 to be knocked out, got {setup.health!r}")
    if setup.health > MAX_HEALTH:
        raise TooLargeError("health", f"{setup.health} is more than the limit of {MAX_HEALTH:,}")


#: the round-by-round iteration costs about health x rounds; past this it would take minutes
MAX_KNOCKOUT_WORK = 400_000


#: exact work of a chain, in digit-steps (see `_check_work`); about 30 s on a busy 2-core machine
MAX_DAMAGE_WORK = 600_000_000


def _check_work(setup: KnockoutSetup, hit: Fraction, damage) -> None:
    """Refuse chains whose exact iteration would run for minutes: health x expected rounds,
    and health x damage totals x the totals a hit can overshoot by (the exact chains over
    every health), estimated before any of it runs."""
    expected_rounds = setup.health / (float(hit) * float(damage.mean()))
    work = setup.health * expected_rounds
    if work > MAX_KNOCKOUT_WORK:
        raise TooLargeError(
            "health",
            f"health {setup.health} at a {float(hit):.0%} hit chance needs about "
            f"{expected_rounds:,.0f} rounds; health x rounds = {work:,.0f} is past "
            f"the limit of {MAX_KNOCKOUT_WORK:,} (lower `health` or raise the hit chance)",
        )
    totals = len(damage)
    # the chains over every health: health x totals x overshoots steps on fractions whose size
    # grows with the health (calibrated: d6 / 3d6 / 2d10 at health 1000: 3.6e7 / 2.6e8 / 3.6e8
    # units, 1 / 12 / 20 s under load)
    chains = setup.health**2 * totals * min(totals, setup.health)
    # the listed rounds (until P(more) < 1e-12) x totals, on weights growing by one step's digits a round
    listed = expected_rounds + 28 / -math.log(1 - float(hit)) if hit < 1 else expected_rounds + 1
    digits = math.log10(20 * damage.denominator)
    rounds_work = listed * totals * listed * digits
    damage_work = chains + rounds_work
    if damage_work > MAX_DAMAGE_WORK:
        raise TooLargeError(
            "damage",
            f"{setup.damage} has {totals:,} damage totals; against health "
            f"{setup.health} the exact chains would take about {damage_work:.1e} "
            f"steps, past the limit of {MAX_DAMAGE_WORK:.0e} (lower `health` or use "
            "fewer damage dice; exactdice.karst.knockout.MAX_DAMAGE_WORK)",
        )


def _hit_weights(setup: KnockoutSetup) -> tuple[int, int]:
    roll = attack_roll(setup.modifier, setup.defense)
    return roll.weight(True), roll.denominator


def _iterate_rounds(setup, hits, sides, first_damage, damage):
    """Exact round-by-round iteration with integer weights over a growing denominator."""
    misses = sides - hits
    alive = {setup.health: 1}  # remaining health -> weight over `denominator`
    denominator = 1
    knockout: dict = {}
    rounds: dict = {}
    round_number = 0
    while True:
        round_number += 1
        if round_number > MAX_ROUNDS:
            raise TooLargeError("health", f"the knock-out needs more than {MAX_ROUNDS:,} rounds listed (the limit)")
        hit_damage = first_damage if round_number == 1 else damage
        step = sides * hit_damage.denominator
        denominator *= step
        after: dict = {}
        knocked: dict = {}  # negative health -> weight
        for health, weight in alive.items():
            if misses:
                after[health] = after.get(health, 0) + weight * misses * hit_damage.denominator
            for amount, amount_weight in hit_damage.items():
                gained = weight * hits * amount_weight
                left = health - amount
                if left > 0:
                    after[left] = after.get(left, 0) + gained
                else:
                    knocked[-left] = knocked.get(-left, 0) + gained
        for negative, weight in sorted(knocked.items()):
            knockout[(round_number, negative)] = Fraction(weight, denominator)
        rounds[round_number] = Fraction(sum(knocked.values()), denominator)
        alive = after
        remaining = sum(alive.values())
        if tail_is_small(remaining, denominator):
            return rounds, knockout, Fraction(remaining, denominator)


def _aware_chain(health: int, hit: Fraction, damage: Distribution) -> tuple[list, list]:
    """For every starting health 0..health against an aware target: expected rounds and
    the exact distribution of negative health left (misses only delay, so it is exact)."""
    damage_probabilities = damage.probabilities()
    expected = [Fraction(0)]
    negative = [{0: Fraction(1)}]  # health 0 is unused; kept to index by health
    for start in range(1, health + 1):
        mean = 1 / hit  # rounds until the next hit, then the rest of the chain
        left_over: dict = {}
        for amount, p in damage_probabilities.items():
            rest = start - amount
            if rest > 0:
                mean += p * expected[rest]
                for value, q in negative[rest].items():
                    left_over[value] = left_over.get(value, 0) + p * q
            else:
                left_over[-rest] = left_over.get(-rest, 0) + p
        expected.append(mean)
        negative.append(left_over)
    return expected, negative


def solve_knockout(setup: KnockoutSetup) -> KnockoutSolution:
    """Solve a knock-out chain exactly.

    Parameters
    ----------
    setup : KnockoutSetup
        The chain.

    Returns
    -------
    KnockoutSolution
        Rounds to knock-out, the negative health left and their joint list.

    Raises
    ------
    TooLargeError
        A chain whose exact work (health^2 x damage totals x overshoots) passes 6e8.

    Examples
    --------
    >>> chain = solve_knockout(KnockoutSetup(modifier=0, defense=11, damage="d4", health=3))
    >>> chain.hit, chain.negative_health[0]
    (Fraction(1, 2), Fraction(25, 64))
    """
    _validate(setup)
    hits, sides = _hit_weights(setup)
    hit = Fraction(hits, sides)
    damage = damage_per_hit(setup.damage)
    first_damage = damage_per_hit(setup.damage, doubled=True) if setup.unaware else damage
    _check_work(setup, hit, damage)
    rounds, knockout, rest = _iterate_rounds(setup, hits, sides, first_damage, damage)

    expected, negative = _aware_chain(setup.health, hit, damage)
    # first attack (maybe unaware), then the aware chain
    expected_rounds = 1 + (1 - hit) * expected[setup.health]
    left_over: dict = {}
    for value, q in negative[setup.health].items():  # the first attack missed (a natural 1 always can)
        left_over[value] = left_over.get(value, 0) + (1 - hit) * q
    for amount, p in first_damage.probabilities().items():
        remaining = setup.health - amount
        if remaining > 0:
            expected_rounds += hit * p * expected[remaining]
            for value, q in negative[remaining].items():
                left_over[value] = left_over.get(value, 0) + hit * p * q
        else:
            left_over[-remaining] = left_over.get(-remaining, 0) + hit * p
    negative_health = dict(sorted(left_over.items()))
    check_invariant(sum(negative_health.values()) == 1, "negative health at knock-out must sum to exactly 1")
    return KnockoutSolution(setup, hit, RoundsDistribution(rounds, rest), knockout, expected_rounds, negative_health)


def knockout_then_death(solution: KnockoutSolution, modifier: int = 0, rules: Rules = Rules()) -> dict:
    """P(death) and P(stable) when the knocked-out target makes its death rolls.

    Parameters
    ----------
    solution : KnockoutSolution
        The knock-out chain (its negative health left feeds the death roll).
    modifier : int, default 0
        The death roll's modifier.
    rules : Rules, optional
        The reading of the rules (``aid``).

    Returns
    -------
    dict of str to Fraction
        ``death`` and ``stable``, summing to exactly 1.

    Examples
    --------
    >>> chain = solve_knockout(KnockoutSetup(modifier=100, defense=10, damage="1", health=1))
    >>> knockout_then_death(chain)["death"]
    Fraction(1, 2)
    """
    death = stable = Fraction(0)
    for negative, p in solution.negative_health.items():
        rolls = solve_death(negative, modifier, rules)
        death += p * rolls.death
        stable += p * rolls.stable
    return {"death": death, "stable": stable}
