"""Exact numbers at the edges: ``"p/q"`` strings, parsing, and float display.

Exact answers here can have thousands of digits, past Python's default limit of
4,300 digits for int/str conversion; importing this module lifts that limit for the
process so printing and parsing never fail.

>>> from fractions import Fraction
>>> fraction_text(Fraction(27, 216))
'1/8'
>>> parse_fraction("1/8") == Fraction(1, 8)
True
"""

from __future__ import annotations

import sys
from fractions import Fraction

__all__ = [
    "fraction_text",
    "integer_text",
    "parse_fraction",
    "to_fraction",
    "decimal_text",
    "directed_decimal_text",
    "lift_digit_limit",
]


def lift_digit_limit() -> None:
    """Allow int/str conversion of any size (exact answers pass 4,300 digits)."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)


lift_digit_limit()


def to_fraction(value: object) -> Fraction:
    """Convert an exact rational (int, Fraction, gmpy2 mpq, flint fmpq) to ``Fraction``.

    Parameters
    ----------
    value : int, Fraction, mpq or fmpq
        The exact value.

    Returns
    -------
    Fraction
        The same value.

    Examples
    --------
    >>> to_fraction(3)
    Fraction(3, 1)
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        raise TypeError("floats are not exact; refusing to convert %r" % value)
    numerator = getattr(value, "numerator", None)
    denominator = getattr(value, "denominator", None)
    if numerator is not None and denominator is not None:
        num = numerator() if callable(numerator) else numerator
        den = denominator() if callable(denominator) else denominator
        return Fraction(int(num), int(den))
    # python-flint fmpq exposes p and q
    if hasattr(value, "p") and hasattr(value, "q"):
        return Fraction(int(value.p), int(value.q))
    raise TypeError(f"not an exact rational: {value!r}")


#: past this many bits an integer is written by GMP (subquadratic) rather than by `str`
#: (quadratic in CPython 3.11: 4 ms for 12,000 digits, where GMP takes 0.2 ms)
_GMP_TEXT_BITS = 8_192


def integer_text(number: int) -> str:
    """``str(number)``, written by GMP when the number is long (exact answers' numerators
    and denominators reach tens of thousands of digits).

    >>> integer_text(-1234), integer_text(7**20000) == str(7**20000)
    ('-1234', True)
    """
    if number.bit_length() <= _GMP_TEXT_BITS:
        return str(number)
    from gmpy2 import mpz

    return str(mpz(number))


def fraction_text(value: object) -> str:
    """Write an exact rational as ``"p/q"`` (``"p"`` when q is 1).

    Parameters
    ----------
    value : int, Fraction or another exact rational
        The value (gmpy2 and FLINT rationals too).

    Returns
    -------
    str
        Numerator and denominator in full.

    Examples
    --------
    >>> fraction_text(Fraction(1, 2)), fraction_text(2)
    ('1/2', '2')
    """
    value = to_fraction(value)
    if value.denominator == 1:
        return integer_text(value.numerator)
    return f"{integer_text(value.numerator)}/{integer_text(value.denominator)}"


def parse_fraction(text: str) -> Fraction:
    """Read ``"p/q"`` or ``"p"`` back into a ``Fraction`` (the inverse of `fraction_text`).

    Parameters
    ----------
    text : str
        The fraction as written by `fraction_text` (and in every ``--json`` answer).

    Returns
    -------
    Fraction
        The exact value.

    Raises
    ------
    ValueError
        When *text* is not a fraction.

    Examples
    --------
    >>> parse_fraction("-3/4")
    Fraction(-3, 4)
    """
    return Fraction(text.strip())


def decimal_text(value: object, digits: int = 10) -> str:
    """Show an exact rational as a rounded decimal for people (never used in computation).

    Parameters
    ----------
    value : int, Fraction or another exact rational
        The value.
    digits : int, default 10
        Digits after the decimal point.

    Returns
    -------
    str
        The value rounded half to even, as text.

    Examples
    --------
    >>> decimal_text(Fraction(2, 3), 4)
    '0.6667'
    """
    value = to_fraction(value)
    scaled = round(value * 10**digits)
    sign = "-" if scaled < 0 else ""
    scaled = abs(scaled)
    whole, frac = divmod(scaled, 10**digits)
    if digits == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{frac:0{digits}d}"


def directed_decimal_text(value, digits: int, up: bool) -> str:
    """``value`` to ``digits`` decimals rounded down (or up with ``up``): a bound shown
    rounded outward stays a bound.

    >>> directed_decimal_text(Fraction(2, 3), 3, up=False), directed_decimal_text(Fraction(2, 3), 3, up=True)
    ('0.666', '0.667')
    """
    scaled = to_fraction(value) * 10**digits
    whole = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    return decimal_text(Fraction(whole, 10**digits), digits)
