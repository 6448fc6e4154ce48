"""Whole numbers written as a value, a range or a list (``3``, ``1-5``, ``1,2,4``): the axes
of a table on the command line and on the web page read the same way."""

from __future__ import annotations

from exactdice.errors import InputError

__all__ = ["parse_integer_list"]


def parse_integer_list(text, field: str) -> list[int]:
    """``3``, ``1-5`` or ``1,2,4`` (or a mix: ``1-3,5``) -> the whole numbers, in order.

    Anything else is an `InputError` naming *field*.

    >>> parse_integer_list("1-3,5", "peril")
    [1, 2, 3, 5]
    >>> parse_integer_list("3-1", "peril")
    Traceback (most recent call last):
    exactdice.errors.InputError: peril: "3-1" is not a number, a range like 1-5, or a list like 1,2,4
    """
    values = []
    for part in str(text).split(","):
        low, dash, high = part.strip().partition("-")
        try:
            if dash:
                start, stop = int(low), int(high)
                if stop < start:
                    raise ValueError
                values.extend(range(start, stop + 1))
            else:
                values.append(int(part))
        except ValueError:
            raise InputError(field, f'"{text}" is not a number, a range like 1-5, or a list like '
                                    "1,2,4") from None
    return values
