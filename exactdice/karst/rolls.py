"""Karst action rolls, opposed rolls, attack rolls and order rolls, exactly.

>>> action_success(0)
Fraction(1, 6)
>>> attack_hit(5, 15)
Fraction(11, 20)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from fractions import Fraction

from exactdice.core.distribution import Distribution, d
from exactdice.errors import InputError, TooLargeError
from exactdice.karst.ruleset import Rules

__all__ = [
    "action_roll",
    "action_success",
    "opposed",
    "attack_roll",
    "attack_hit",
    "order_scores",
    "order_places",
    "order_before",
    "OPPOSED_RESULTS",
]

#: who prevails in an opposed roll
OPPOSED_RESULTS = ("first", "second", "neither")


def action_roll(modifier: int) -> Distribution:
    """Joint distribution of (success, total) of one action roll: d6 + modifier.

    A natural 1 fails and a natural 6 succeeds whatever the modifier; otherwise the
    roll succeeds at a total of 6 or more.

    Parameters
    ----------
    modifier : int
        Added to the d6.

    Returns
    -------
    Distribution
        Over ``(success, total)`` pairs.

    Examples
    --------
    >>> action_roll(3).probability((True, 4))
    Fraction(0, 1)
    """

    def outcome(natural):
        total = natural + modifier
        return (natural == 6 or (natural != 1 and total >= 6), total)

    return d(6).map(outcome)


def action_success(modifier: int) -> Fraction:
    """P(success) of an action roll with the given modifier.

    Parameters
    ----------
    modifier : int
        Added to the d6.

    Returns
    -------
    Fraction
        Between 1/6 (a natural 6) and 5/6 (a natural 1 fails).

    Examples
    --------
    >>> action_success(-10), action_success(10)
    (Fraction(1, 6), Fraction(5, 6))
    """
    return action_roll(modifier).probability_where(lambda outcome: outcome[0])


def opposed(first_modifier: int, second_modifier: int, rules: Rules = Rules()) -> dict:
    """P(first prevails), P(second prevails), P(neither) for an opposed action roll.

    ``totals``: the higher total prevails. ``success-first``: a success beats a failure,
    otherwise the higher total; equal totals prevail for neither.

    Parameters
    ----------
    first_modifier, second_modifier : int
        Each roller's modifier.
    rules : Rules, optional
        The reading of the rules (``opposed``).

    Returns
    -------
    dict of str to Fraction
        ``first``, ``second`` and ``neither``, summing to exactly 1.

    Examples
    --------
    >>> opposed(0, 0)["neither"]
    Fraction(1, 6)
    """

    def winner(first, second):
        if rules.opposed == "success-first" and first[0] != second[0]:
            return "first" if first[0] else "second"
        if first[1] == second[1]:
            return "neither"
        return "first" if first[1] > second[1] else "second"

    result = action_roll(first_modifier).combine(action_roll(second_modifier), winner)
    return {name: result.probability(name) for name in OPPOSED_RESULTS}


def attack_roll(modifier: int, defense: int) -> Distribution:
    """Distribution of hit (True) / miss (False): d20 + modifier against a defense.

    Parameters
    ----------
    modifier : int
        Added to the d20.
    defense : int
        The target's defense.

    Returns
    -------
    Distribution
        Over True (hit) and False (miss).

    Examples
    --------
    >>> attack_roll(-100, 10).probability(True)
    Fraction(1, 20)
    """
    return d(20).map(lambda natural: natural == 20 or (natural != 1 and natural + modifier >= defense))


def attack_hit(modifier: int, defense: int) -> Fraction:
    """P(hit) of an attack roll: a natural 20 hits, a natural 1 misses.

    Parameters
    ----------
    modifier : int
        Added to the d20.
    defense : int
        The target's defense.

    Returns
    -------
    Fraction
        Between 1/20 and 19/20.

    Examples
    --------
    >>> attack_hit(100, 10)
    Fraction(19, 20)
    """
    return attack_roll(modifier, defense).probability(True)


def order_scores(
    modifiers: Sequence[int], two_actions: Collection[int] = (), surprised: Collection[int] = ()
) -> list[Distribution | None]:
    """Each combatant's order score (None for a surprised combatant, who does not act).

    A combatant taking two actions subtracts 3 whenever its score is at least 4.

    Parameters
    ----------
    modifiers : sequence of int
        Each combatant's order modifier.
    two_actions : collection of int, optional
        The combatants (numbered from 1) taking two actions.
    surprised : collection of int, optional
        The combatants (numbered from 1) surprised in the opening round.

    Returns
    -------
    list of Distribution or None
        One score distribution per combatant.

    Raises
    ------
    InputError
        No combatant, or a combatant number out of range.

    Examples
    --------
    >>> order_scores([0], two_actions=[1])[0].probability(1)
    Fraction(1, 3)
    """
    count = len(modifiers)
    if count < 1:
        raise InputError("modifiers", "give at least one combatant's order modifier")
    for flag, numbers in (("two_actions", two_actions), ("surprised", surprised)):
        for number in numbers:
            if not 1 <= number <= count:
                raise InputError(flag, f"combatant {number} does not exist (numbered 1..{count})")
    scores = []
    for number, modifier in enumerate(modifiers, start=1):
        if number in surprised:
            scores.append(None)
            continue
        score = d(6) + modifier
        if number in two_actions:
            score = score.map(lambda value: value - 3 if value >= 4 else value)
        scores.append(score)
    return scores


def order_places(
    modifiers: Sequence[int], two_actions: Collection[int] = (), surprised: Collection[int] = ()
) -> list[dict | None]:
    """Per combatant, place -> probability (competition ranking: ties share the better place).

    A combatant's place is 1 + the number of acting combatants with a strictly higher
    score; a surprised combatant has no place (None).

    Parameters
    ----------
    modifiers : sequence of int
        Each combatant's order modifier.
    two_actions, surprised : collection of int, optional
        As for `order_scores`.

    Returns
    -------
    list of dict or None
        Place -> exact probability, per combatant.

    Raises
    ------
    TooLargeError
        More than 500 combatants, or work past 5e7 steps.

    Examples
    --------
    >>> order_places([0, 0])[0]
    {1: Fraction(7, 12), 2: Fraction(5, 12)}
    """
    scores = order_scores(modifiers, two_actions, surprised)
    _check_order_work(scores)
    places = []
    solved: dict = {}  # combatants with the same score distribution have the same places
    for index, own in enumerate(scores):
        if own is None:
            places.append(None)
            continue
        if own in solved:
            places.append(dict(solved[own]))
            continue
        others = [other for other_index, other in enumerate(scores) if other_index != index and other is not None]
        weights: dict = {}
        for value, weight in own.items():
            place = Distribution({1: 1})  # 1 + one Bernoulli count per other combatant above
            for other in others:
                above = sum(w for score, w in other.items() if score > value)
                place = place + Distribution({0: other.denominator - above, 1: above})
            for rank, rank_weight in place.items():
                weights[rank] = weights.get(rank, 0) + weight * rank_weight
        solved[own] = Distribution(weights).probabilities()
        places.append(dict(solved[own]))
    return places


#: most combatants in one order roll (the answer alone has a line per combatant and place)
MAX_COMBATANTS = 500
#: most steps of the places' computation (distinct scores x combatants**2 x faces)
MAX_ORDER_WORK = 50_000_000


def _check_order_work(scores) -> None:
    """Refuse an order roll past `MAX_COMBATANTS`, or whose places would take past
    `MAX_ORDER_WORK` steps (each distinct score: 6 faces x one growing sum per other)."""
    count = len(scores)
    if count > MAX_COMBATANTS:
        raise TooLargeError("modifiers", f"{count:,} combatants is more than the limit of {MAX_COMBATANTS}")
    distinct = len({score for score in scores if score is not None})
    work = distinct * 6 * count * count // 2
    if work > MAX_ORDER_WORK:
        raise TooLargeError(
            "modifiers",
            f"{count:,} combatants with {distinct} different order scores would take "
            f"about {work:,} steps (limit {MAX_ORDER_WORK:,}); give fewer combatants "
            "or fewer different modifiers",
        )


def order_before(
    modifiers: Sequence[int], two_actions: Collection[int] = (), surprised: Collection[int] = ()
) -> list[list[Fraction | None]]:
    """Matrix of P(combatant i acts strictly before j) (None on the diagonal).

    A surprised combatant acts before nobody; everyone acting is before it.

    Parameters
    ----------
    modifiers : sequence of int
        Each combatant's order modifier.
    two_actions, surprised : collection of int, optional
        As for `order_scores`.

    Returns
    -------
    list of list of Fraction or None
        ``result[i][j]`` = P(i acts strictly before j).

    Raises
    ------
    TooLargeError
        More than 500 combatants, or work past 5e7 steps.

    Examples
    --------
    >>> order_before([1, 0])[0][1]
    Fraction(7, 12)
    """
    scores = order_scores(modifiers, two_actions, surprised)
    _check_order_work(scores)
    greater: dict = {}  # (score, score) -> P(first > second), computed once per distinct pair
    matrix = []
    for i, mine in enumerate(scores):
        row = []
        for j, theirs in enumerate(scores):
            if i == j:
                row.append(None)
            elif mine is None:
                row.append(Fraction(0))
            elif theirs is None:
                row.append(Fraction(1))
            else:
                pair = (mine, theirs)
                if pair not in greater:
                    greater[pair] = mine.p_greater(theirs)
                row.append(greater[pair])
        matrix.append(row)
    return matrix
