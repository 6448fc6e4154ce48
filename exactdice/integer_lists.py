"""Whole numbers written as a value, a range or a list (``3``, ``1-5``, ``1,2,4``): the axes
of a table on the command line and on the web page read the same way."""

from __future__ import annotations

from exactdice.errors import InputError

__all__ = ["parse_integer_list", "MOST_VALUES_A_RANGE"]

#: the longest range accepted (checked before the range is built, so ``0-1000000000`` costs nothing)
MOST_VALUES_A_RANGE = 1001


def parse_integer_list(text, field: str) -> list[int]:
    """``3``, ``1-5`` or ``1,2,4`` (or a mix: ``1-3,5``) -> the whole numbers, in order.

    Anything else is an `InputError` naming *field*.

    >>> parse_integer_list("1-3,5", "peril")
    [1, 2, 3, 5]
    >>> parse_integer_list("3-1", "peril")
    Traceback (most recent call last):
    exactdice.errors.InputError: peril: "3-1" is not a number, a range like 1-5, or a list like 1,2,4
    >>> parse_integer_list("0-1000000000", "rows")
    Traceback (most recent call last):
    exactdice.errors.InputError: rows: the range 0-1000000000 has 1,000,000,001 values; at most 1,001
    """
    values = []
    for part in str(text).split(","):
        low, dash, high = part.strip().partition("-")
        try:
            start, stop = (int(low), int(high)) if dash else (int(part), int(part))
        except ValueError:
            start, stop = 1, 0
        if stop < start:
            raise InputError(field, f'"{text}" is not a number, a range like 1-5, or a list like '
                                    "1,2,4")
        if stop - start >= MOST_VALUES_A_RANGE:
            raise InputError(field, f"the range {part.strip()} has {stop - start + 1:,} values; "
                                    f"at most {MOST_VALUES_A_RANGE:,}")
        values.extend(range(start, stop + 1))
    return values
