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

__all__ = [
    "parse_dice",
    "NotationError",
    "MAX_NOTATION_DICE",
    "MAX_NOTATION_SPAN",
    "MAX_NOTATION_DEPTH",
    "MAX_NOTATION_RESULT_CHARACTERS",
    "MAX_NOTATION_TERMS",
    "MAX_NOTATION_WORK",
    "notation_size",
]

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


#: most terms (dice, constants, parenthesised parts) one expression may join
MAX_NOTATION_TERMS = 1000
#: longest expression text read
MAX_NOTATION_CHARACTERS = 100_000
#: most work one expression may take, in weight digits handled (`_work` estimates it before
#: any work; ~7 x 10^7 a second here, so the limit is a few seconds)
MAX_NOTATION_WORK = 12 * 10**7


class _Parser:
    """Reads the text into a tree, checking every limit as it goes; nothing is computed
    until the whole expression has been read and its work estimated (`parse_dice`).

    Nodes: ``("const", n)``, ``("dice", count, sides, keep)`` (keep: None or
    ``(highest, how_many)``), ``("neg", node)``, ``("sum", [(sign, node), ...])``.
    """

    def __init__(self, text: str, field: str):
        self.text = text
        self.field = field
        self.pos = 0
        self.dice = 0
        self.span = 0
        self.terms = 0
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
            self.field, f'bad dice notation "{self.text}": {found} at column {at + 1}, expected {expected}'
        )

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
            raise TooLargeError(self.field, f'number "{self.text[start : self.pos]}" is too large')
        return int(self.text[start : self.pos])

    # --- grammar ---
    def parse(self):
        if not self.text.strip():
            raise NotationError(self.field, "empty dice notation (try 3d6+2)")
        if len(self.text) > MAX_NOTATION_CHARACTERS:
            raise TooLargeError(
                self.field, f"the expression is {len(self.text):,} characters long; at most {MAX_NOTATION_CHARACTERS:,}"
            )
        tree = self.expression()
        if self.peek():
            self.error("+, - or the end")
        return tree

    def expression(self):
        terms = [(1, self.term())]
        while self.peek() in ("+", "-"):
            sign = 1 if self.text[self.pos] == "+" else -1
            self.pos += 1
            terms.append((sign, self.term()))
        return terms[0][1] if len(terms) == 1 else ("sum", terms)

    def term(self):
        if self.peek() == "-":
            self.pos += 1
            with self.nested():
                return ("neg", self.term())
        return self.atom()

    def nested(self):
        parser = self

        class _Depth:
            def __enter__(self):
                parser.depth += 1
                if parser.depth > MAX_NOTATION_DEPTH:
                    raise TooLargeError(
                        parser.field, f"more than {MAX_NOTATION_DEPTH} nested parentheses or signs (the limit)"
                    )

            def __exit__(self, *exc):
                parser.depth -= 1
                return False

        return _Depth()

    def atom(self):
        self.terms += 1
        if self.terms > MAX_NOTATION_TERMS:
            raise TooLargeError(
                self.field,
                f"more than {MAX_NOTATION_TERMS:,} terms in one expression (the limit; "
                "write 300d6 rather than d6+d6+...)",
            )
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
            return ("const", count)
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
            raise TooLargeError(self.field, f"more than {MAX_NOTATION_DICE} dice in one expression (the limit)")
        self.span += count * (sides - 1)
        if self.span > MAX_NOTATION_SPAN:
            raise TooLargeError(
                self.field, f"the expression spans more than {MAX_NOTATION_SPAN:,} totals (dice x faces; the limit)"
            )
        self.digits += count * math.log10(sides)
        characters = (self.span + 1) * (2 * self.digits + 60)
        if characters > MAX_NOTATION_RESULT_CHARACTERS:
            raise TooLargeError(
                self.field,
                f"the result would have {self.span + 1:,} totals with exact weights of about "
                f"{self.digits:,.0f} digits (~{characters:.1e} characters; limit "
                f"{MAX_NOTATION_RESULT_CHARACTERS:.0e}, exactdice.core.notation."
                "MAX_NOTATION_RESULT_CHARACTERS)",
            )
        keep = self.keep_suffix()
        if keep is not None:
            highest, how_many, at = keep
            if how_many > count:
                raise NotationError(
                    self.field,
                    f'bad dice notation "{self.text}": cannot keep {how_many} of {count} dice (column {at + 1})',
                )
            keep = (highest, how_many)
        return ("dice", count, sides, keep)

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


def _grouped(terms):
    """A sum's terms with like dice joined (``d6+d6`` is ``2d6``, rolled once by repeated
    squaring instead of convolved term by term) and its constants added up: (constant,
    [(sign, node)]). The sum is the same exact distribution in any order."""
    constant_total, counts, others = 0, {}, []
    for sign, node in terms:
        if node[0] == "const":
            constant_total += sign * node[1]
        elif node[0] == "dice" and node[3] is None:
            counts[(sign, node[2])] = counts.get((sign, node[2]), 0) + node[1]
        else:
            others.append((sign, node))
    return constant_total, [(sign, ("dice", count, sides, None)) for (sign, sides), count in counts.items()] + others


def _span(node) -> int:
    kind = node[0]
    if kind == "const":
        return 0
    if kind == "dice":
        return (node[3][1] if node[3] else node[1]) * (node[2] - 1)
    if kind == "neg":
        return _span(node[1])
    return sum(_span(term) for _, term in node[1])


def _digits(node) -> float:
    """Decimal digits of the node's exact weights (of the product of its dice's sides)."""
    kind = node[0]
    if kind == "const":
        return 0.0
    if kind == "dice":
        return node[1] * math.log10(max(node[2], 2))
    if kind == "neg":
        return _digits(node[1])
    return sum(_digits(term) for _, term in node[1])


#: the work of one total beyond its weight's digits (building its entry), in digits
_PER_TOTAL = 100


def _work(node) -> int:
    """The estimated work of evaluating *node*, in weight digits handled: a convolution
    (`exactdice.core.distribution`'s Kronecker product) packs and unpacks every total of
    both sides, so it costs their totals times the digits of the weights; a kept pool
    (`exactdice.core.pool`) walks faces x (dice kept, total) states. Each total also costs a
    fixed `_PER_TOTAL` (its slot in a dict). Measured here, loaded: 1-3 x 10^7 units a
    second (d2+d3+...+d119 1-3.5 s, d1000000 3-8 s, 100d6kh90 1.7-4 s, 200d6kh100 5.6 s)."""
    kind = node[0]
    if kind == "const":
        return 0
    if kind == "dice":
        count, sides, keep = node[1:]
        digits = count * math.log10(max(sides, 2)) + _PER_TOTAL
        if keep is None:  # repeated squaring: the last product dominates
            return int((count * (sides - 1) + 2) * digits)
        kept = keep[1]
        return int(sides * (kept + 1) ** 2 * (kept * sides + 1) * digits) // 15
    if kind == "neg":
        return _work(node[1])
    _, parts = _grouped(node[1])
    work, accumulated, digits = 0, None, float(_PER_TOTAL)
    for _, part in parts:
        work += _work(part)
        span = _span(part)
        digits += _digits(part)
        if accumulated is not None:
            work += int((accumulated + span + 2) * digits)
            accumulated += span
        else:
            accumulated = span
    return work


def _evaluate(node) -> Distribution:
    kind = node[0]
    if kind == "const":
        return constant(node[1])
    if kind == "dice":
        _, count, sides, keep = node
        die = d(sides)
        if keep is None:
            return die.sum_of(count)
        highest, how_many = keep
        pool = Pool([(die, count)])
        return pool.keep_highest(how_many) if highest else pool.keep_lowest(how_many)
    if kind == "neg":
        return -_evaluate(node[1])
    constant_total, parts = _grouped(node[1])
    result = None
    for sign, part in parts:
        value = _evaluate(part) if sign > 0 else -_evaluate(part)
        result = value if result is None else result + value
    return constant(constant_total) if result is None else result + constant_total


def notation_size(text: str, field: str = "notation") -> tuple[int, float]:
    """(most totals, decimal digits of the exact weights) of an expression, read without
    computing it (every limit of `parse_dice` but the work is checked): what a caller
    needs to refuse an answer too large to send before any work.

    >>> notation_size("3d6+2")[0]
    16
    """
    tree = _Parser(text, field).parse()
    return _span(tree) + 1, _digits(tree)


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
    parser = _Parser(text, field)
    tree = parser.parse()
    work = _work(tree)
    if work > MAX_NOTATION_WORK:
        raise TooLargeError(
            field,
            f"the expression would take about {work:,} units of exact work (limit "
            f"{MAX_NOTATION_WORK:,}, a few seconds; exactdice.core.notation."
            "MAX_NOTATION_WORK): use fewer or smaller dice, keep fewer, or join like dice "
            "(10d6 rather than d6+d6+...)",
        )
    return _evaluate(tree)
