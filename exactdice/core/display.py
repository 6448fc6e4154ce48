"""Exact numbers for people: percentages and decimals first, the exact fraction's size beside them.

Every command's text output goes through `Display`, and every JSON document through
`with_decimals`, so the look of a probability is decided here once. All rounding is done
on the exact ``Fraction``; a float is made only for the JSON ``decimal`` mirror.

>>> from fractions import Fraction
>>> show = Display()
>>> show.probability(Fraction(521, 960))
'54.3 %  (521/960)'
>>> show.probability(Fraction(2**80 + 1, 3**60))
'0.00285 %  (exact: 29-digit fraction)'
>>> Display(exact=True).probability(Fraction(1, 8))
'12.5 %  = 1/8'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from exactdice.core.exact import decimal_text, fraction_text, integer_text, to_fraction

__all__ = [
    "Display",
    "percent_text",
    "column_percent_text",
    "significant_text",
    "fraction_size",
    "with_decimals",
    "counted",
    "DEFAULT_DIGITS",
    "SHORT_FRACTION",
]

DEFAULT_DIGITS = 3
#: the most significant digits shown (more says nothing; 10^7 took minutes to format)
MAX_DIGITS = 1000
"""Significant digits of a percentage or decimal unless ``--digits`` says otherwise."""

SHORT_FRACTION = 21
"""Fractions of at most this many characters (like ``521/960``) are always shown in full."""

_LOG10_2 = 0.30102999566398120
_EXACT_STRING = re.compile(r"-?\d+(/\d+)?")


def significant_text(value, digits: int = DEFAULT_DIGITS) -> str:
    """Round an exact rational to ``digits`` significant digits (never fewer than its whole part).

    Rounding is done exactly (half to even, as ``round`` on a Fraction); a whole number is
    written as it is, so ``25`` means exactly 25; below 10**-4 the form is ``1.23e-05``.

    >>> significant_text(Fraction(20, 3)), significant_text(Fraction(12345, 1)), significant_text(0)
    ('6.67', '12345', '0')
    >>> significant_text(Fraction(1, 3000), 2), significant_text(Fraction(1, 300000), 2)
    ('0.00033', '3.3e-06')
    """
    value = to_fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    value = abs(value)
    magnitude = _order_of_magnitude(value)  # 10**magnitude <= value < 10**(magnitude + 1)
    if magnitude < -4:  # 0.0000123 -> 1.23e-05
        mantissa = significant_text(value / Fraction(10) ** magnitude, digits)
        if mantissa.startswith("10"):  # 9.995 rounded up
            magnitude += 1
            mantissa = significant_text(value / Fraction(10) ** magnitude, digits)
        return f"{sign}{mantissa}e{magnitude:03d}"
    places = max(0, digits - 1 - magnitude)
    scaled = round(value * 10**places)
    if places and len(str(scaled)) > digits:
        places -= 1  # rounding carried into a new digit (9.995 -> 10.0)
        scaled = round(value * 10**places)
    whole, fraction = divmod(scaled, 10**places)
    if places == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{fraction:0{places}d}"


def _order_of_magnitude(value: Fraction) -> int:
    """The integer m with 10**m <= value < 10**(m+1), for value > 0."""
    guess = int((value.numerator.bit_length() - value.denominator.bit_length()) * _LOG10_2)  # off by 2 at most
    while Fraction(10) ** guess > value:
        guess -= 1
    while Fraction(10) ** (guess + 1) <= value:
        guess += 1
    return guess


def counted(count, noun: str, plural: str | None = None) -> str:
    """A count with its noun, singular for exactly one.

    >>> counted(1, "hit"), counted(3, "hit"), counted(0, "Glitch", "Glitches")
    ('1 hit', '3 hits', '0 Glitches')
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def percent_text(p, digits: int = DEFAULT_DIGITS) -> str:
    """A probability as a percentage with ``digits`` significant digits.

    A probability that is not exactly 0 or 1 never shows as ``0 %`` or ``100 %``: more
    digits are added until it does not.

    >>> percent_text(Fraction(159, 1000)), percent_text(1), percent_text(0)
    ('15.9 %', '100 %', '0 %')
    >>> percent_text(1 - Fraction(1, 10**5)), percent_text(1 - Fraction(1, 10**9))
    ('99.999 %', '100 % - 1e-07 %')
    """
    p = to_fraction(p)
    if p in (0, 1):
        return f"{int(p * 100)} %"
    if 1 - p < Fraction(1, 10**6):
        return f"100 % - {significant_text((1 - p) * 100, digits)} %"
    shown = digits
    while True:
        text = significant_text(p * 100, shown)
        if Fraction(text) not in (0, 100):
            return f"{text} %"
        shown += 1


def column_percent_text(p, decimals: int = 2) -> str:
    """A probability as a percentage with ``decimals`` places and no sign, for a column or
    a bar's label. As in `percent_text`, only an exact 0 or 1 reads "0" or "100" (written
    so, without places); a probability that rounds to either shows its own digits instead.

    >>> column_percent_text(Fraction(1, 3)), column_percent_text(0), column_percent_text(1)
    ('33.33', '0', '100')
    >>> column_percent_text(Fraction(1, 60466176)), column_percent_text(1 - Fraction(1, 10**9))
    ('1.7e-06', '100 - 1e-07')
    """
    p = to_fraction(p)
    if p in (0, 1):
        return str(int(p * 100))
    rounded = round(p * 100, decimals)
    if rounded == 0:
        return significant_text(p * 100, 2)
    if rounded == 100:
        return f"100 - {significant_text((1 - p) * 100, 2)}"
    return decimal_text(p * 100, decimals)


def fraction_size(value) -> int:
    """The digits of an exact fraction: those of its longer part (for a probability, the
    denominator), so "a 1,487-digit fraction" has parts of at most 1,487 digits.

    >>> fraction_size(Fraction(521, 960)), fraction_size(Fraction(12345, 7))
    (3, 5)
    """
    value = to_fraction(value)
    return max(len(integer_text(abs(value.numerator))), len(integer_text(value.denominator)))


def _shortened(text: str, digits: int) -> str:
    """``p/q`` with each long part cut to its leading ``digits`` digits and its length."""

    def cut(part):
        bare = part.lstrip("-")
        if len(bare) <= digits + 3:
            return part
        return f"{part[: digits + len(part) - len(bare)]}...({len(bare):,} digits)"

    return "/".join(cut(part) for part in text.split("/"))


@dataclass(frozen=True)
class Display:
    """How a command shows exact values: percentages and decimals first.

    ``exact=True`` (the CLI's ``--exact``) adds every fraction in full; ``digits`` (the
    CLI's ``--digits``) sets the significant digits of percentages and decimals and, with
    ``exact``, shortens fractions to that many leading digits.

    >>> Display(digits=2).expectation(Fraction(20, 3))
    '6.7  (20/3)'
    >>> Display(exact=True, digits=3).probability(Fraction(10**30, 3 * 10**30 + 1))
    '33.3 %  = 100...(31 digits)/300...(31 digits)'
    """

    exact: bool = False
    digits: int | None = None
    float_preview: bool = False

    def __post_init__(self):
        if self.digits is not None and not 1 <= self.digits <= MAX_DIGITS:
            from exactdice.errors import InputError

            raise InputError("digits", f"must be from 1 to {MAX_DIGITS:,} significant digits, got {self.digits:,}")

    @property
    def significant(self) -> int:
        return self.digits or DEFAULT_DIGITS

    def probability(self, p) -> str:
        """``"15.9 %  (exact: 921-digit fraction)"``, or with a short fraction beside it."""
        if p is None:
            return "undefined"
        if self.float_preview:
            return f"{significant_text(Fraction(float(p)) * 100, self.significant)} %  (float preview, not exact)"
        return f"{percent_text(p, self.significant)}  {self.exact_part(p)}"

    def expectation(self, value) -> str:
        """``"6.38  (exact: 1,205-digit fraction)"``; ``undefined`` when play may never end."""
        if value is None:
            return "undefined (play may never end)"
        if self.float_preview:
            return f"{significant_text(Fraction(float(value)), self.significant)}  (float preview, not exact)"
        return f"{significant_text(value, self.significant)}  {self.exact_part(value)}"

    def fraction_cell(self, value) -> str:
        """A table cell for the exact value: the fraction when short (all of it with ``exact``),
        else its size.

        >>> Display().fraction_cell(Fraction(1, 216)), Display().fraction_cell(Fraction(1, 10**30))
        ('1/216', '31-digit fraction')
        """
        text = self.exact_part(value)
        return text[2:] if text.startswith("= ") else text.strip("()").removeprefix("exact: ")

    def table(self, header, rows) -> list[str]:
        """Right-aligned columns: ``header`` and ``rows`` are sequences of cell strings."""
        widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
        return [
            "  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)).rstrip() for row in (header, *rows)
        ]

    def distribution(self, distribution) -> list[str]:
        """A distribution's lines: each outcome's percentage, "at least" and "at most", then
        the exact probability (short fractions, their size, or all of them with ``exact``).

        >>> from exactdice.core.distribution import d
        >>> print("\\n".join(Display().distribution(d(4))))
        outcome  probability  at least  at most  exact
              1         25 %     100 %     25 %    1/4
              2         25 %      75 %     50 %    1/4
              3         25 %      50 %     75 %    1/4
              4         25 %      25 %    100 %    1/4
        """
        probabilities = distribution.probabilities()
        numeric = all(isinstance(outcome, (int, Fraction)) for outcome in probabilities)
        at_least = distribution.survival() if numeric else {}
        at_most = distribution.cdf() if numeric else {}
        rows = []
        for outcome, p in probabilities.items():
            text = ",".join(map(str, outcome)) if isinstance(outcome, tuple) else str(outcome)
            cumulative = (
                [percent_text(at_least[outcome], self.significant), percent_text(at_most[outcome], self.significant)]
                if numeric
                else []
            )
            rows.append([text, percent_text(p, self.significant), *cumulative, self.fraction_cell(p)])
        header = ["outcome", "probability", *(["at least", "at most"] if numeric else []), "exact"]
        return self.table(header, rows)

    def exact_part(self, value) -> str:
        """What follows the decimal: the fraction (short, or all of it with ``exact``) or its size."""
        text = fraction_text(value)
        if self.exact:
            return "= " + (_shortened(text, self.digits) if self.digits else text)
        if len(text) <= SHORT_FRACTION:
            return f"({text})"
        return f"(exact: {fraction_size(value):,}-digit fraction)"


def with_decimals(document):
    """The JSON document with a ``decimal`` mirror of its exact values added at the top.

    Every exact value stays a ``"p/q"`` (or ``"p"``) string where it was; ``decimal``
    repeats the document's shape holding only those values, each as the nearest float
    (correctly rounded from the exact fraction). An existing ``decimal`` key is replaced.

    >>> with_decimals({"win": "1/4", "rounds": {"1": "1/3"}, "states": 5, "dice": "2d6"})
    {'win': '1/4', 'rounds': {'1': '1/3'}, 'states': 5, 'dice': '2d6', 'decimal': {'win': 0.25, 'rounds': {'1': 0.3333333333333333}}}
    """
    if not isinstance(document, dict):
        return document
    body = {key: value for key, value in document.items() if key != "decimal"}
    mirror = _decimal_mirror(body)
    if mirror:
        body["decimal"] = mirror
    return body


def _decimal_mirror(value):
    """The float mirror of the exact strings inside ``value`` (None when there are none)."""
    if isinstance(value, str):
        if not _EXACT_STRING.fullmatch(value):
            return None
        try:
            return float(Fraction(value))
        except OverflowError:  # a count past 10**308 (a denominator) has no float
            return None
    if isinstance(value, dict):
        mirror = {}
        for key, item in value.items():
            inner = _decimal_mirror(item)
            if inner is not None:
                mirror[key] = inner
        return mirror or None
    if isinstance(value, list):
        items = [_decimal_mirror(item) for item in value]
        return items if any(item is not None for item in items) else None
    return None
