"""Dice lists like ``d8,d8,d10`` or ``2d8,d10``: the one parser and the one writer.

Every system reads its pools, hands and sides with `parse_dice_list`, which returns one
shape: the die sizes in the order written (``2d8`` counts as ``d8,d8``). A system that
wants another shape converts it (Karbon counts dice by size, Chronica sorts a side
largest first). `dice_text` writes sizes back compactly, sizes grouped, in one order:
smallest first unless the caller asks for largest first.

>>> parse_dice_list("d10, 2d8")
(10, 8, 8)
>>> dice_text((10, 8, 8)), dice_text((10, 8, 8), largest_first=True)
('2d8,d10', 'd10,2d8')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from exactdice.core.distribution import MAX_FACES
from exactdice.errors import InputError, TooLargeError

__all__ = ["parse_dice_list", "dice_text", "NotADieError", "NO_DICE", "MAX_LISTED_DICE"]

#: how an empty list may be written where one is allowed
NO_DICE = ("none", "-", "")
#: most dice one list may hold unless the caller sets its own limit
MAX_LISTED_DICE = 1000

_DIE = re.compile(r"^\s*(\d*)\s*[dD]\s*(\d+)\s*$", re.ASCII)


class NotADieError(InputError):
    """An item of a dice list that is not a die; ``item`` is the text (a system may word it)."""

    def __init__(self, field: str, message: str, item: str = ""):
        super().__init__(field, message)
        self.item = item

    def __reduce__(self):
        return (type(self), (self.field, self.message, self.item))


def parse_dice_list(
    text: str, field: str = "dice", *, empty_allowed: bool = False, max_dice: int = MAX_LISTED_DICE
) -> tuple[int, ...]:
    """Die sizes in the order written: ``"d6,2d8"`` -> ``(6, 8, 8)``.

    ``none`` (or nothing) is the empty list when ``empty_allowed``; a count of 0 (``0d6``)
    adds nothing. Errors name ``field``: an item that is not a die, a die outside 1 to
    `MAX_FACES` sides, more than ``max_dice`` dice.

    >>> parse_dice_list("none", empty_allowed=True)
    ()
    >>> parse_dice_list("d6,x7")
    Traceback (most recent call last):
    exactdice.core.dice_list.NotADieError: dice: "x7" is not a die; write dice like d8,d8,d10 or 2d8,d10
    """
    if text is None:
        raise InputError(field, "missing dice list")
    if empty_allowed and text.strip().lower() in NO_DICE:
        return ()
    sizes: list[int] = []
    for item in text.split(","):
        match = _DIE.match(item)
        if not match:
            raise NotADieError(
                field,
                f'"{item.strip()}" is not a die; write dice like d8,d8,d10 '
                f"or 2d8,d10{' or none' if empty_allowed else ''}",
                item.strip(),
            )
        count = int(match.group(1)) if match.group(1) else 1
        sides = int(match.group(2))
        if not 1 <= sides <= MAX_FACES:
            raise InputError(field, f"d{sides}: a die needs 1 to {MAX_FACES:,} sides")
        if len(sizes) + count > max_dice:
            raise TooLargeError(field, f"{len(sizes) + count} dice is more than the limit of {max_dice:,} in one list")
        sizes += [sides] * count
    return tuple(sizes)


def dice_text(sizes: Iterable[int], *, largest_first: bool = False, empty: str = "none") -> str:
    """Write die sizes compactly, grouped by size: ``(6, 8, 6)`` -> ``"2d6,d8"``.

    >>> dice_text([6, 8, 6]), dice_text([]), dice_text([], empty="")
    ('2d6,d8', 'none', '')
    """
    counts = Counter(sizes)
    order = sorted(counts, reverse=largest_first)
    parts = [f"{counts[size] if counts[size] > 1 else ''}d{size}" for size in order]
    return ",".join(parts) if parts else empty
