"""The sides as they are rolled: target dice, physical dice and push dice (spec points 7-9).

A side is a tuple of pools, a pool a tuple of die sizes (`exactdice.chronica.ruleset`).
These transforms run before a roll is solved (`exactdice.chronica.roll`), so the dynamic
program only ever sees the dice actually rolled.

>>> apply_target([((8,),), ((10, 4),)], 6)
[((8,),), ((10, 6, 6),)]
>>> [sides for sides, _ in rolled_contests([((6,),), ((6,),)], Rules(push=True, push_dice=(4,)))]
[[((6,),), ((6,),)], [((6, 4),), ((6, 4),)]]
"""

from __future__ import annotations

from collections.abc import Sequence

from exactdice.chronica.ruleset import PHYSICAL_DICE, Rules

__all__ = ["apply_target", "physical_size", "apply_physical", "with_push_dice", "rolled_contests"]

#: a condition or penalty contest gives the opposition up to this many target dice
TARGET_DICE = 3


def apply_target(sides: Sequence[Sequence[Sequence[int]]], target: int | None) -> list:
    """Condition / penalty contest: every side but the first takes up to three dN.

    Smallest dice smaller than dN are replaced first (first pool first among equals);
    while a side has fewer than three dice, dN dice are added to its first pool.

    Parameters
    ----------
    sides : sequence
        Pools of die sizes per side.
    target : int or None
        The N of dN (None: the sides unchanged).

    Returns
    -------
    list
        The sides as rolled.

    Examples
    --------
    >>> apply_target([((8,),), ((10, 4),)], 6)
    [((8,),), ((10, 6, 6),)]
    """
    if target is None:
        return [tuple(tuple(pool) for pool in side) for side in sides]
    return [tuple(tuple(pool) for pool in sides[0])] + [_side_with_target(side, target) for side in sides[1:]]


def _side_with_target(side, target: int):
    pools = [list(pool) for pool in side]
    missing = max(0, TARGET_DICE - sum(len(pool) for pool in pools))
    pools[0] += [target] * missing
    smaller = sorted(
        (size, pool_index, position)
        for pool_index, pool in enumerate(side)
        for position, size in enumerate(pool)
        if size < target
    )
    for _, pool_index, position in smaller[: TARGET_DICE - missing]:
        pools[pool_index][position] = target
    return tuple(tuple(sorted(pool, reverse=True)) for pool in pools)


def physical_size(size: int) -> int:
    """The die actually rolled for a dN with physical dice (spec point 8): the nearest
    smaller physical die, or the die itself when none is smaller.

    >>> physical_size(11), physical_size(3), physical_size(20), physical_size(30)
    (10, 3, 20, 20)
    """
    smaller = [physical for physical in PHYSICAL_DICE if physical <= size]
    return max(smaller) if smaller else size


def apply_physical(side: Sequence[Sequence[int]]) -> tuple[tuple[tuple[int, ...], ...], bool]:
    """The first side rolled with physical dice, and whether any die was substituted.

    Parameters
    ----------
    side : tuple of tuple of int
        The first side's pools.

    Returns
    -------
    tuple
        ``(side, substituted)``: each die without a physical counterpart replaced by the
        nearest smaller d4/d6/d8/d10/d12/d20, and whether any was.

    Examples
    --------
    >>> apply_physical(((11, 6), (3,)))
    (((10, 6), (3,)), True)
    """
    rolled = tuple(tuple(sorted((physical_size(size) for size in pool), reverse=True)) for pool in side)
    substituted = any(physical_size(size) != size for pool in side for size in pool)
    return rolled, substituted


def with_push_dice(side, push_dice):
    """``side`` with ``push_dice`` added to its first pool (spec point 7).

    >>> with_push_dice(((8,), (6,)), (10, 4))
    ((10, 8, 4), (6,))
    """
    pools = [list(pool) for pool in side]
    pools[0] = sorted(pools[0] + list(push_dice), reverse=True)
    return tuple(tuple(pool) for pool in pools)


def rolled_contests(base, rules: Rules):
    """The sides as rolled at each push level, with whether the first side holds a
    substituted die: push level ``n`` adds ``n`` times the push dice to every side's first
    pool (spec point 7: "added to every side's first pool at each push and accumulate"),
    then the first side's dice are made physical (point 8) when the rules say so."""
    levels = rules.max_pushes if rules.push else 0
    for level in range(levels + 1):
        rolled = [with_push_dice(side, rules.push_dice * level) for side in base]
        substituted = False
        if rules.physical:
            rolled[0], substituted = apply_physical(rolled[0])
        yield rolled, substituted
