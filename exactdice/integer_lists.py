"""Whole numbers written as a value, a range or a list (``3``, ``1-5``, ``1,2,4``, ``-2--1``):
the axes of a table and the values of ``--vary`` on the command line and on the web page
read the same way, by `parse_integer_list`."""

from __future__ import annotations

import re

from exactdice.errors import InputError

__all__ = ["parse_integer_list", "MOST_VALUES_A_RANGE"]

#: the longest range accepted (checked before the range is built, so ``0-1000000000`` costs nothing)
MOST_VALUES_A_RANGE = 1001
#: one number or range of numbers: 3, -2, 1-8, -5-5, -5--1
_RANGE = re.compile(r"\s*(-?[0-9]+)\s*(?:-\s*(-?[0-9]+)\s*)?")


def parse_integer_list(text, field: str) -> list[int]:
    """``3``, ``1-5`` or ``1,2,4`` (or a mix: ``1-3,5``; negative numbers too: ``-2--1``)
    -> the whole numbers, in order.

    Anything else is an `InputError` naming *field*.

    >>> parse_integer_list("1-3,5", "peril"), parse_integer_list("-5-5", "modifier")[:2]
    ([1, 2, 3, 5], [-5, -4])
    >>> parse_integer_list("1,x", "peril")
    Traceback (most recent call last):
    exactdice.errors.InputError: peril: "x" is not a number, a range like 1-5, or a list like 1,2,4
    >>> parse_integer_list("3-1", "peril")
    Traceback (most recent call last):
    exactdice.errors.InputError: peril: the range "3-1" runs backwards; write 1-3
    >>> parse_integer_list("0-1000000000", "rows")
    Traceback (most recent call last):
    exactdice.errors.InputError: rows: the range 0-1000000000 has 1,000,000,001 values; at most 1,001
    """
    values = []
    for part in (piece.strip() for piece in str(text).split(",")):
        match = _RANGE.fullmatch(part)
        if match is None:
            raise InputError(field, f'"{part}" is not a number, a range like 1-5, or a list like 1,2,4')
        start = int(match.group(1))
        stop = start if match.group(2) is None else int(match.group(2))
        if stop < start:
            raise InputError(field, f'the range "{part}" runs backwards; write {stop}-{start}')
        if stop - start >= MOST_VALUES_A_RANGE:
            raise InputError(
                field, f"the range {part} has {stop - start + 1:,} values; at most {MOST_VALUES_A_RANGE:,}"
            )
        values.extend(range(start, stop + 1))
    return values
