"""Karbon dice: face classes (hit / miss / turncoat), dice lists, and multisets of dice.

A multiset of dice is a tuple of counts aligned with a contest's sorted die sizes
(`DiceSizes`), so hands, pool and reserve are small hashable tuples.

>>> die_classes(8)
(3, 2, 3)
>>> parse_dice_list("2d8,d10", "pool")
{8: 2, 10: 1}
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import lru_cache

from exactdice.core.dice_list import dice_text as core_dice_text
from exactdice.core.dice_list import parse_dice_list as core_dice_list
from exactdice.core.distribution import MAX_FACES, Distribution
from exactdice.errors import InputError

__all__ = [
    "die_classes",
    "compositions",
    "DiceCounts",
    "parse_dice_list",
    "dice_counts",
    "dice_text",
    "hit_rank_key",
    "DiceSizes",
    "hand_roll",
]


def die_classes(sides: int) -> tuple[int, int, int]:
    """Faces of a dN that are (hits, misses, turncoats): 1-3 hit, 4-5 miss, 6+ turncoat.

    >>> die_classes(6), die_classes(10), die_classes(2)
    ((3, 2, 1), (3, 2, 5), (2, 0, 0))
    """
    hits = min(3, sides)
    misses = max(0, min(sides, 5) - 3)
    return hits, misses, sides - hits - misses


def hit_rank_key(sides: int) -> tuple[Fraction, Fraction, int]:
    """Sort key ranking die types best first: higher hit chance, then fewer turncoats.

    >>> sorted([10, 6, 8], key=hit_rank_key)
    [6, 8, 10]
    """
    hits, _, turncoats = die_classes(sides)
    return (-Fraction(hits, sides), Fraction(turncoats, sides), sides)


def parse_dice_list(text: str, field: str) -> dict[int, int]:
    """Read ``d8,d8,d10`` / ``2d8,d10`` / ``none`` into {sides: count} (`exactdice.core.dice_list`).

    >>> parse_dice_list("none", "pool")
    {}
    >>> parse_dice_list("7d6,5d8,3d10", "pool")
    {6: 7, 8: 5, 10: 3}
    """
    return dict(sorted(Counter(core_dice_list(text, field, empty_allowed=True)).items()))


def dice_counts(value, field: str) -> dict[int, int]:
    """Dice given as ``"2d8,d10"`` (as on the command line) or as a ``{sides: count}``
    mapping, checked: {sides: count} with sizes 1 to `MAX_FACES` and whole counts >= 0.

    >>> dice_counts("2d8,d10", "pool"), dice_counts({6: 2}, "pool")
    ({8: 2, 10: 1}, {6: 2})
    >>> dice_counts({0: 2}, "pool")
    Traceback (most recent call last):
    exactdice.errors.InputError: pool: d0: a die needs 1 to 1,000,000 sides
    """
    if isinstance(value, str):
        return parse_dice_list(value, field)
    if not isinstance(value, Mapping):
        raise InputError(field, f'give dice like "2d8,d10" or a {{sides: count}} mapping, got {value!r}')
    for sides, count in value.items():
        if not isinstance(sides, numbers.Integral) or isinstance(sides, bool) or not 1 <= sides <= MAX_FACES:
            raise InputError(field, f"d{sides}: a die needs 1 to {MAX_FACES:,} sides")
        if not isinstance(count, numbers.Integral) or isinstance(count, bool) or count < 0:
            raise InputError(field, f"d{sides}: the count must be a whole number >= 0, got {count!r}")
    return {int(sides): int(count) for sides, count in value.items()}


def dice_text(counts: Mapping[int, int] | Iterable[int]) -> str:
    """Write dice as ``2d8,d10``, smallest first (``none`` when empty).

    >>> dice_text({8: 2, 10: 1}), dice_text({})
    ('2d8,d10', 'none')
    """
    if isinstance(counts, Mapping):
        counts = [sides for sides, count in counts.items() for _ in range(count)]
    return core_dice_text(counts)


class DiceSizes:
    """The die sizes of one contest, sorted; multisets are count tuples aligned with them.

    >>> sizes = DiceSizes([10, 6, 8])
    >>> sizes.counts({8: 2}), sizes.mapping((0, 2, 1))
    ((0, 2, 0), {8: 2, 10: 1})
    """

    def __init__(self, sizes: Iterable[int]):
        self.sizes: tuple[int, ...] = tuple(sorted(set(sizes)))
        self.position = {sides: i for i, sides in enumerate(self.sizes)}
        self.empty = (0,) * len(self.sizes)
        # indices ranked best first (hit chance, then fewer turncoats)
        self.best_first = tuple(sorted(range(len(self.sizes)), key=lambda i: hit_rank_key(self.sizes[i])))
        self._texts: dict = {}

    def counts(self, mapping: Mapping[int, int]) -> tuple[int, ...]:
        """{sides: count} -> count tuple."""
        result = [0] * len(self.sizes)
        for sides, count in mapping.items():
            result[self.position[sides]] += count
        return tuple(result)

    def mapping(self, counts: tuple[int, ...]) -> dict[int, int]:
        """count tuple -> {sides: count} (zero counts dropped)."""
        return {self.sizes[i]: c for i, c in enumerate(counts) if c}

    def text(self, counts: tuple[int, ...]) -> str:
        """count tuple -> ``2d8,d10`` (remembered: exploring names the same dice again and again)."""
        if type(counts) is not tuple:
            counts = tuple(counts)
        text = self._texts.get(counts)
        if text is None:
            text = self._texts[counts] = dice_text(self.mapping(counts))
        return text

    def order_from_preference(self, preference: tuple[int, ...]) -> tuple[int, ...]:
        """Indices in a preference order of die sizes; unnamed sizes follow, best first.

        >>> DiceSizes([4, 6, 8]).order_from_preference((8, 6))
        (2, 1, 0)
        """
        named = [self.position[s] for s in preference if s in self.position]
        rest = [i for i in self.best_first if i not in named]
        return tuple(named + rest)


@lru_cache(maxsize=None)
def _single_type_roll(sides: int, count: int, slot: int, width: int) -> Distribution:
    """(hits, turncoat vector) of ``count`` dN, the turncoats counted in vector position ``slot``."""
    hits, misses, turncoats = die_classes(sides)
    vector = tuple(1 if i == slot else 0 for i in range(width))
    zero = (0,) * width
    one_die: dict = {}
    for outcome, weight in (((1, zero), hits), ((0, zero), misses), ((0, vector), turncoats)):
        if weight:
            one_die[outcome] = one_die.get(outcome, 0) + weight
    flat = Distribution({(h,) + v: w for (h, v), w in one_die.items()})
    return flat.sum_of(count)


@lru_cache(maxsize=None)
def hand_roll(hand: tuple[int, ...], sizes: tuple[int, ...]) -> Distribution:
    """Joint distribution of (hits, turncoats of size 0, turncoats of size 1, ...) of a hand.

    Built from exact per-die-type distributions (a multinomial over hit / miss /
    turncoat per type), never by listing faces.

    >>> hand_roll((1,), (6,)).probability((1, 0))
    Fraction(1, 2)
    """
    width = len(sizes)
    total = Distribution({(0,) * (width + 1): 1})
    for slot, count in enumerate(hand):
        if count:
            total = total + _single_type_roll(sizes[slot], count, slot, width)
    return total


def compositions(available: tuple, count: int) -> list[tuple]:
    """Every multiset of ``count`` dice from ``available`` (count tuples), in ascending
    order of their sorted die sizes (more of the smaller sizes first).

    >>> compositions((2, 1), 2)
    [(2, 0), (1, 1)]
    """
    if count > sum(available):
        return []
    result = []

    def build(index, left, prefix):
        if index == len(available):
            if left == 0:
                result.append(tuple(prefix))
            return
        for take in range(min(available[index], left), -1, -1):
            prefix.append(take)
            build(index + 1, left - take, prefix)
            prefix.pop()

    build(0, count, [])
    return result


class DiceCounts(Mapping):
    """A read-only, hashable ``{sides: count}`` mapping (a pool, a reserve or a hand).

    It equals a plain dict with the same items, so ``setup.pool == {6: 7}`` still reads well.

    >>> pool = DiceCounts({6: 2, 8: 1})
    >>> pool == {6: 2, 8: 1}, hash(pool) == hash(DiceCounts({8: 1, 6: 2}))
    (True, True)
    >>> pool[6] = 3
    Traceback (most recent call last):
    TypeError: 'DiceCounts' object does not support item assignment
    """

    __slots__ = ("_counts",)

    def __init__(self, counts: Mapping[int, int] = ()):
        object.__setattr__(self, "_counts", dict(counts))

    def __getitem__(self, sides):
        return self._counts[sides]

    def __iter__(self):
        return iter(self._counts)

    def __len__(self):
        return len(self._counts)

    def __hash__(self):
        return hash(frozenset(self._counts.items()))

    def __eq__(self, other):
        return dict(self._counts) == dict(other) if isinstance(other, Mapping) else NotImplemented

    def __setattr__(self, name, value):
        raise AttributeError("DiceCounts is read-only")

    def __reduce__(self):
        return (type(self), (self._counts,))

    def __repr__(self):
        return f"DiceCounts({self._counts!r})"
