"""The Chronica rules knobs and the way a contest's sides are written.

A *side* is a tuple of *pools*; a pool is a tuple of die sizes (``8`` is a d8). Sides
are written ``"d8,d8,d6"`` or ``"2d8,d6"``, co-operating pools separated by ``/``
(``"d8,d6/d10"``). Knobs as in `exactdice.chronica.reading` (default first).

>>> parse_side("2d8,d6/d10")
((8, 8, 6), (10,))
>>> Rules().describe()
'tie rule all-discarded, push off, physical dice off'
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from exactdice.core.dice_list import dice_text as core_dice_text
from exactdice.core.dice_list import parse_dice_list as core_dice_list
from exactdice.core.distribution import MAX_FACES
from exactdice.errors import InputError, TooLargeError

__all__ = [
    "Rules",
    "TIE_RULES",
    "PHYSICAL_DICE",
    "MAX_CONTEST_DICE",
    "MAX_PUSHES",
    "dice_text",
    "parse_die",
    "parse_dice_list",
    "parse_side",
    "read_sides",
    "side_text",
]

#: how a contest ends in a tie: every die discarded (seed 003), or also after four discard rounds (002)
TIE_RULES = ("all-discarded", "four-ties")

#: die sizes that exist as physical dice (spec point 8)
PHYSICAL_DICE = (4, 6, 8, 10, 12, 20)

#: most pushes (re-rolls after a tie) one contest may allow
MAX_PUSHES = 100

#: most dice one contest may hold over all sides (push dice included)
MAX_CONTEST_DICE = 36


@dataclass(frozen=True)
class Rules:
    """The knobs of one Chronica contest.

    Parameters
    ----------
    tie_rule : {"all-discarded", "four-ties"}
        A true tie only when every die is gone, or also once four successive comparisons
        ended in discards.
    push : bool, default False
        On a tie, roll the contest again, at most *max_pushes* times.
    push_dice : tuple of int, default ()
        Die sizes added to every side's first pool at each push (they accumulate).
    max_pushes : int, default 1
        Most re-rolls after ties with *push* on.
    physical : bool, default False
        The first side rolls dice with no physical counterpart as the nearest smaller
        physical die, and wins a first-comparison tie at once with one success die.

    Raises
    ------
    InputError
        A value out of its range.

    Examples
    --------
    >>> Rules(push=True, push_dice=(6,) * 5).to_dict()["push_dice"]
    '5d6'
    """

    tie_rule: str = "all-discarded"
    push: bool = False
    push_dice: tuple[int, ...] = ()
    max_pushes: int = 1
    physical: bool = False

    def __post_init__(self):
        if self.tie_rule not in TIE_RULES:
            raise InputError("tie_rule", f"must be one of {', '.join(TIE_RULES)}, got {self.tie_rule!r}")
        if not isinstance(self.max_pushes, int) or self.max_pushes < 0:
            raise InputError("max_pushes", f"must be a whole number >= 0, got {self.max_pushes!r}")
        if self.max_pushes > MAX_PUSHES:
            raise TooLargeError("max_pushes", f"{self.max_pushes} is more than the limit of {MAX_PUSHES}")
        if self.push_dice and not self.push:
            raise InputError("push_dice", "push dice only matter with `push` on")
        for size in self.push_dice:
            _check_size(size, "push_dice")

    @property
    def four_ties(self) -> bool:
        """True when four successive discard rounds also end the contest in a tie."""
        return self.tie_rule == "four-ties"

    def describe(self) -> str:
        """One line for a table legend or a report header.

        >>> Rules(push=True, max_pushes=2).describe()
        'tie rule all-discarded, push on (at most 2, no push dice), physical dice off'
        """
        if self.push:
            extra = dice_text(self.push_dice) if self.push_dice else "no push dice"
            push = f"push on (at most {self.max_pushes}, {extra})"
        else:
            push = "push off"
        return f"tie rule {self.tie_rule}, {push}, physical dice {'on' if self.physical else 'off'}"

    def to_dict(self) -> dict:
        """The knobs as JSON-ready values."""
        return {
            "tie_rule": self.tie_rule,
            "push": self.push,
            "push_dice": dice_text(self.push_dice),
            "max_pushes": self.max_pushes,
            "physical": self.physical,
        }


def _check_size(size: int, field: str) -> int:
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise InputError(field, f"a die needs a whole number of sides >= 1, got {size!r}")
    if size > MAX_FACES:
        raise TooLargeError(field, f"d{size} has more than {MAX_FACES:,} faces (the limit)")
    return size


def parse_die(text: str, field: str = "target") -> int:
    """Read one die, ``"d8"`` -> 8.

    Parameters
    ----------
    text : str
        The die.
    field : str, default "target"
        The name an error gives it.

    Returns
    -------
    int
        Its size.

    Raises
    ------
    InputError
        Text that is not one die.

    Examples
    --------
    >>> parse_die("d10")
    10
    """
    try:
        sizes = core_dice_list(text, field)
    except InputError:
        sizes = ()
    if len(sizes) != 1:
        raise InputError(field, f'expected one die like "d8", got {text!r}')
    return sizes[0]


def parse_dice_list(text: str, field: str = "sides") -> tuple[int, ...]:
    """Read ``"d8,d8,d6"`` or ``"2d8,d6"`` into die sizes, largest first.

    Parameters
    ----------
    text : str
        The dice.
    field : str, default "sides"
        The name an error gives them.

    Returns
    -------
    tuple of int
        The sizes, largest first.

    Raises
    ------
    InputError
        Bad dice.
    TooLargeError
        A die of more than `MAX_FACES` faces.

    Examples
    --------
    >>> parse_dice_list("2d8,d6,d12")
    (12, 8, 8, 6)
    """
    return tuple(sorted(core_dice_list(text, field, max_dice=MAX_CONTEST_DICE), reverse=True))


def parse_side(text: str, field: str = "sides") -> tuple[tuple[int, ...], ...]:
    """Read one side: pools separated by ``/``, each a dice list.

    Parameters
    ----------
    text : str
        The side, as ``--side`` takes it.
    field : str, default "sides"
        The name an error gives it.

    Returns
    -------
    tuple of tuple of int
        One tuple of die sizes per pool.

    Raises
    ------
    InputError
        Bad dice or an empty pool.

    Examples
    --------
    >>> parse_side("d8, d6 / 2d10")
    ((8, 6), (10, 10))
    """
    if not text.strip():
        raise InputError(field, "a side needs at least one die (for example d8,d6)")
    return tuple(parse_dice_list(pool, field) for pool in text.split("/"))


def read_sides(sides, field: str = "sides") -> list[tuple[tuple[int, ...], ...]]:
    """Sides as `solve_contest` takes them: each a text like ``"d8,d6/d10"`` (`parse_side`)
    or already pools of die sizes, checked either way.

    >>> read_sides(["d8,d6", ((10,),)])
    [((8, 6),), ((10,),)]
    >>> read_sides([[(8, 0)], "d6"])
    Traceback (most recent call last):
    exactdice.errors.InputError: sides: a die needs a whole number of sides >= 1, got 0
    """
    if isinstance(sides, str):
        raise InputError(field, f'give a list of sides, one per side, like ["d8,d6", "d10"], got {sides!r}')
    read = []
    for side in sides:
        if isinstance(side, str):
            read.append(parse_side(side, field))
            continue
        try:
            pools = tuple(tuple(pool) for pool in side)
        except TypeError:
            raise InputError(
                field, f'a side is dice like "d8,d6" or pools of die sizes like ((8, 6),), got {side!r}'
            ) from None
        for pool in pools:
            for size in pool:
                _check_size(size, field)
        read.append(tuple(tuple(int(size) for size in pool) for pool in pools))
    return read


def dice_text(sizes: Iterable[int]) -> str:
    """``(6, 6, 8)`` -> ``"d8,2d6"``: a dice list written compactly, largest first.

    Parameters
    ----------
    sizes : sequence of int
        Die sizes.

    Returns
    -------
    str
        The dice as text.

    Examples
    --------
    >>> dice_text((6, 8, 6))
    'd8,2d6'
    """
    return core_dice_text(sizes, largest_first=True, empty="")


def side_text(side: Sequence[Sequence[int]]) -> str:
    """A side written back in the ``--side`` syntax.

    Parameters
    ----------
    side : tuple of tuple of int
        One tuple of die sizes per pool.

    Returns
    -------
    str
        The side's text.

    Examples
    --------
    >>> side_text(((8, 8, 6), (10,)))
    '2d8,d6/d10'
    """
    return "/".join(dice_text(pool) for pool in side)
