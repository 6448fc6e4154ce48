"""Dice notation: ``3d6+2``, ``4d6kh3``, ``2d20kl1``, ``d6+d8+d10``, ``(2d6+1)-d4``.

Grammar (spaces ignored)::

    expression := term (("+" | "-") term)*
    term       := "-" term | atom
    atom       := NUMBER | [NUMBER] "d" NUMBER [("kh" | "kl" | "k") NUMBER] | "(" expression ")"

``k`` alone means keep highest. Limits: at most `MAX_NOTATION_DICE` dice in one
expression and `MAX_FACES` faces a die.

>>> parse_dice("3d6").probability(10)
Fraction(1, 8)
>>> parse_dice("4d6kh3").max_outcome()
18
"""

from __future__ import annotations

import math
from typing import NoReturn

from exactdice.core.distribution import MAX_FACES, Distribution, constant, d
from exactdice.core.pool import Pool
from exactdice.errors import InputError, TooLargeError

__all__ = ["parse_dice", "NotationError", "MAX_NOTATION_DICE", "MAX_NOTATION_SPAN", "MAX_NOTATION_DEPTH",
           "MAX_NOTATION_RESULT_CHARACTERS"]

#: most dice one expression may roll
MAX_NOTATION_DICE = 1000
#: most distinct totals an expression may span (sum over dice of their faces - 1)
MAX_NOTATION_SPAN = 1_000_000
#: deepest nesting of parentheses and signs
MAX_NOTATION_DEPTH = 100
#: largest result, in characters of its table: totals x (2 x digits of the exact weights + 60).
#: 100d1000 (99,901 totals of ~300 digits) is 6.6e7 and prints 64 MB in 8-16 s
MAX_NOTATION_RESULT_CHARACTERS = 2 * 10**8


class NotationError(InputError):
    """Bad dice notation; the message points at the character at fault.

    Parameters
    ----------
    field : str or None
        The name of the input at fault (``notation`` by default).
    message : str
        What is wrong and where.
    """


class _Parser:
    def __init__(self, text: str, field: str):
        self.text = text
        self.field = field
        self.pos = 0
        self.dice = 0
        self.span = 0
        self.digits = 0.0  # decimal digits of the product of the dice's denominators
        self.depth = 0

    # --- helpers ---
    def error(self, expected: str, at: int | None = None) -> NoReturn:
        at = self.pos if at is None else at
        if at >= len(self.text):
            found = "end of input"
        else:
            found = repr(self.text[at])
        raise NotationError(
            self.field,
            f'bad dice notation "{self.text}": {found} at column {at + 1}, expected {expected}')

    def skip_spaces(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def number(self) -> int | None:
        self.skip_spaces()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in "0123456789":
            self.pos += 1
        if start == self.pos:
            return None
        if self.pos - start > 9:
            raise TooLargeError(self.field, f'number "{self.text[start:self.pos]}" is too large')
        return int(self.text[start:self.pos])

    # --- grammar ---
    def parse(self) -> Distribution:
        if not self.text.strip():
            raise NotationError(self.field, "empty dice notation (try 3d6+2)")
        result = self.expression()
        if self.peek():
            self.error("+, - or the end")
        return result

    def expression(self) -> Distribution:
        result = self.term()
        while self.peek() in ("+", "-"):
            operator = self.text[self.pos]
            self.pos += 1
            right = self.term()
            result = result + right if operator == "+" else result - right
        return result

    def term(self) -> Distribution:
        if self.peek() == "-":
            self.pos += 1
            with self.nested():
                return -self.term()
        return self.atom()

    def nested(self):
        parser = self

        class _Depth:
            def __enter__(self):
                parser.depth += 1
                if parser.depth > MAX_NOTATION_DEPTH:
                    raise TooLargeError(parser.field, f"more than {MAX_NOTATION_DEPTH} nested parentheses "
                                                      "or signs (the limit)")

            def __exit__(self, *exc):
                parser.depth -= 1
                return False

        return _Depth()

    def atom(self) -> Distribution:
        char = self.peek()
        if char == "(":
            self.pos += 1
            with self.nested():
                inner = self.expression()
            if self.peek() != ")":
                self.error('")"')
            self.pos += 1
            return inner
        count = self.number()
        if self.peek().lower() != "d":
            if count is None:
                self.error("a number, a die (dN) or (")
            return constant(count)
        if count is None:
            count = 1
        self.pos += 1  # the "d"
        sides_at = self.pos
        sides = self.number()
        if sides is None:
            self.error("the number of sides after d")
        if sides < 1:
            self.error("at least 1 side", sides_at)
        if sides > MAX_FACES:
            raise TooLargeError(self.field, f"d{sides} has more than {MAX_FACES:,} faces (the limit)")
        self.dice += count
        if self.dice > MAX_NOTATION_DICE:
            raise TooLargeError(
                self.field, f"more than {MAX_NOTATION_DICE} dice in one expression (the limit)")
        self.span += count * (sides - 1)
        if self.span > MAX_NOTATION_SPAN:
            raise TooLargeError(
                self.field, f"the expression spans more than {MAX_NOTATION_SPAN:,} totals (dice x faces; the limit)")
        self.digits += count * math.log10(sides)
        characters = (self.span + 1) * (2 * self.digits + 60)
        if characters > MAX_NOTATION_RESULT_CHARACTERS:
            raise TooLargeError(
                self.field, f"the result would have {self.span + 1:,} totals with exact weights of about "
                            f"{self.digits:,.0f} digits (~{characters:.1e} characters; limit "
                            f"{MAX_NOTATION_RESULT_CHARACTERS:.0e}, exactdice.core.notation."
                            "MAX_NOTATION_RESULT_CHARACTERS)")
        keep = self.keep_suffix()
        die = d(sides)
        if keep is None:
            return die.sum_of(count)
        highest, how_many, at = keep
        if how_many > count:
            raise NotationError(
                self.field,
                f'bad dice notation "{self.text}": cannot keep {how_many} of {count} dice '
                f"(column {at + 1})")
        pool = Pool([(die, count)])
        return pool.keep_highest(how_many) if highest else pool.keep_lowest(how_many)

    def keep_suffix(self):
        if self.peek().lower() != "k":
            return None
        at = self.pos
        self.pos += 1
        highest = True
        if self.pos < len(self.text) and self.text[self.pos].lower() in "hl":
            highest = self.text[self.pos].lower() == "h"
            self.pos += 1
        how_many = self.number()
        if how_many is None:
            self.error("how many dice to keep (e.g. kh3)")
        return highest, how_many, at


def parse_dice(text: str, field: str = "notation") -> Distribution:
    """Parse dice notation into an exact distribution.

    Sums and differences of dice (``3d6+2``, ``d6+d8+d10``), keep-highest and keep-lowest
    (``4d6kh3``, ``2d20kl1``) and parentheses.

    Parameters
    ----------
    text : str
        The expression.
    field : str, default "notation"
        The name an error gives the expression (a CLI flag, a form field).

    Returns
    -------
    Distribution
        The exact distribution of the expression's total.

    Raises
    ------
    NotationError
        (an `InputError`) naming the column of the bad character.
    TooLargeError
        When the expression has more than `MAX_NOTATION_DICE` dice or its table would be
        too large.

    Examples
    --------
    >>> parse_dice("2d20kl1").probability(1)
    Fraction(39, 400)
    >>> parse_dice("3d6x")
    Traceback (most recent call last):
    ...
    exactdice.core.notation.NotationError: notation: bad dice notation "3d6x": 'x' at column 4, expected +, - or the end
    """
    return _Parser(text, field).parse()
