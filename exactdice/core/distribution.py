"""Exact finite distributions with integer weights.

A `Distribution` maps hashable outcomes (ints, or tuples for joint outcomes) to
positive integer weights; a probability is ``weight / denominator`` and becomes a
`Fraction` only when asked for. Every operation returns a new distribution.

>>> three_d6 = d(6).sum_of(3)
>>> three_d6.probability(10)
Fraction(1, 8)
>>> three_d6.mean()
Fraction(21, 2)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType
from typing import Any

from gmpy2 import mpz

from exactdice.core.exact import decimal_text, fraction_text
from exactdice.errors import InputError, TooLargeError

__all__ = ["Distribution", "d", "constant", "MAX_FACES"]

#: largest number of faces a single die may have (a dN past this is refused)
MAX_FACES = 10**6

# Above this span of integer outcomes, convolution falls back to sparse dictionaries.
_DENSE_SPAN_LIMIT = 4_000_000


def _add_outcomes(a, b):
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b, strict=True))
    return a + b


def _negate(a):
    if isinstance(a, tuple):
        return tuple(-x for x in a)
    return -a


def _sort_key(outcome):
    return outcome


class Distribution:
    """A finite discrete distribution with exact integer weights.

    Build one with `d`, `constant`, `Distribution.from_faces` or from a mapping of
    outcome -> positive int weight. Outcomes are kept sorted. A distribution is immutable
    (its weights are a read-only view and its attributes cannot be set), so it can be
    cached and shared. Probabilities are `fractions.Fraction` s made from the weights on
    demand.

    Parameters
    ----------
    weights : Mapping[Hashable, int]
        Outcome -> positive integer weight; the probability of an outcome is its weight
        over the sum of the weights.

    Raises
    ------
    TypeError
        When a weight is not an int.
    ValueError
        When a weight is negative, or no outcome has a positive weight.

    Examples
    --------
    >>> Distribution({1: 1, 2: 3}).probability(2)
    Fraction(3, 4)
    >>> Distribution({1: 1})._weights[1] = 100
    Traceback (most recent call last):
    TypeError: 'mappingproxy' object does not support item assignment
    """

    __slots__ = ("_weights", "_denominator", "__dict__")

    _weights: Mapping[Any, int]  # outcome -> weight, set once in __init__ (the class refuses setattr)
    _denominator: int

    def __init__(self, weights: Mapping[Hashable, int]):
        cleaned = {}
        for outcome, weight in weights.items():
            if not isinstance(weight, int) or isinstance(weight, bool):
                raise TypeError(f"weights must be ints, got {weight!r} for outcome {outcome!r}")
            if weight < 0:
                raise ValueError(f"negative weight {weight} for outcome {outcome!r}")
            if weight:
                cleaned[outcome] = weight
        if not cleaned:
            raise ValueError("a distribution needs at least one outcome with positive weight")
        try:
            ordered = sorted(cleaned, key=_sort_key)
        except TypeError:
            ordered = list(cleaned)
        weights = MappingProxyType({outcome: cleaned[outcome] for outcome in ordered})
        object.__setattr__(self, "_weights", weights)
        object.__setattr__(self, "_denominator", sum(weights.values()))

    def __setattr__(self, name, value):
        raise AttributeError(f"a Distribution is immutable (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"a Distribution is immutable (cannot delete {name!r})")

    def __reduce__(self):
        # rebuilt from its weights (a read-only view does not pickle), e.g. for worker processes
        return (type(self), (dict(self._weights),))

    # ----- construction -------------------------------------------------------------

    @classmethod
    def from_faces(cls, faces: Iterable[Hashable]) -> "Distribution":
        """A die with the given faces, each equally likely (repeats count twice).

        >>> Distribution.from_faces([1, 1, 2]).probability(1)
        Fraction(2, 3)
        """
        weights: dict = {}
        for face in faces:
            weights[face] = weights.get(face, 0) + 1
        return cls(weights)

    @classmethod
    def from_probabilities(cls, probabilities: Mapping[Hashable, Fraction]) -> "Distribution":
        """Build from exact probabilities (Fractions or ints) that sum to exactly 1.

        >>> Distribution.from_probabilities({0: Fraction(1, 3), 1: Fraction(2, 3)}).weight(1)
        2
        """
        values = {o: Fraction(p) for o, p in probabilities.items()}
        if sum(values.values()) != 1:
            raise ValueError("probabilities must sum to exactly 1")
        common = math.lcm(*(p.denominator for p in values.values()))
        return cls({o: int(p * common) for o, p in values.items()})

    # ----- basic access -------------------------------------------------------------

    @property
    def denominator(self) -> int:
        """Sum of the weights: every probability is ``weight / denominator``."""
        return self._denominator

    def outcomes(self) -> tuple:
        """The outcomes in sorted order.

        >>> d(4).outcomes()
        (1, 2, 3, 4)
        """
        return tuple(self._weights)

    def weights(self) -> dict:
        """A copy of the outcome -> integer weight mapping."""
        return dict(self._weights)

    def items(self):
        """(outcome, weight) pairs in sorted order."""
        return self._weights.items()

    def weight(self, outcome) -> int:
        """The integer weight of an outcome (0 if impossible)."""
        return self._weights.get(outcome, 0)

    def probability(self, outcome) -> Fraction:
        """Exact probability of one outcome.

        >>> d(6).probability(7)
        Fraction(0, 1)
        """
        return Fraction(self._weights.get(outcome, 0), self._denominator)

    def probabilities(self) -> dict:
        """Outcome -> exact `Fraction`; they sum to exactly 1.

        >>> sum(d(6).sum_of(2).probabilities().values())
        Fraction(1, 1)
        """
        return {o: Fraction(w, self._denominator) for o, w in self._weights.items()}

    def __len__(self) -> int:
        return len(self._weights)

    def __iter__(self):
        return iter(self._weights)

    def __contains__(self, outcome) -> bool:
        return outcome in self._weights

    def min_outcome(self):
        """The smallest outcome."""
        return next(iter(self._weights))

    def max_outcome(self):
        """The largest outcome."""
        return next(reversed(self._weights))

    def is_integer_valued(self) -> bool:
        """True when every outcome is a plain int."""
        return self._integer_valued

    @cached_property
    def _integer_valued(self) -> bool:
        return all(isinstance(o, int) and not isinstance(o, bool) for o in self._weights)

    # ----- equality ---------------------------------------------------------------------

    @cached_property
    def _reduced(self) -> tuple:
        common = math.gcd(*self._weights.values())
        return tuple((o, w // common) for o, w in self._weights.items())

    def __eq__(self, other) -> bool:
        if not isinstance(other, Distribution):
            return NotImplemented
        return self._reduced == other._reduced

    def __hash__(self) -> int:
        return hash(self._reduced)

    # ----- transformation ---------------------------------------------------------------

    def map(self, function: Callable) -> "Distribution":
        """Apply a function to every outcome, merging outcomes that map together.

        >>> d(6).map(lambda face: face >= 5).probability(True)
        Fraction(1, 3)
        """
        result: dict = {}
        for outcome, weight in self._weights.items():
            new = function(outcome)
            result[new] = result.get(new, 0) + weight
        return Distribution(result)

    def condition(self, predicate: Callable) -> "Distribution":
        """The distribution given that ``predicate(outcome)`` holds.

        >>> d(6).condition(lambda face: face > 4).probability(6)
        Fraction(1, 2)
        """
        kept = {o: w for o, w in self._weights.items() if predicate(o)}
        if not kept:
            raise ValueError("conditioning on an event of probability 0")
        return Distribution(kept)

    def probability_where(self, predicate: Callable) -> Fraction:
        """P(predicate(outcome)).

        >>> d(6).probability_where(lambda face: face % 2 == 0)
        Fraction(1, 2)
        """
        hit = sum(w for o, w in self._weights.items() if predicate(o))
        return Fraction(hit, self._denominator)

    def marginal(self, index: int) -> "Distribution":
        """The distribution of one coordinate of tuple outcomes.

        >>> d(2).joint(d(3)).marginal(1) == d(3)
        True
        """
        return self.map(lambda outcome: outcome[index])

    # ----- combination ------------------------------------------------------------------

    def combine(self, other: "Distribution", function: Callable) -> "Distribution":
        """Distribution of ``function(x, y)`` for independent x ~ self, y ~ other.

        >>> d(6).combine(d(6), max).probability(6)
        Fraction(11, 36)
        """
        other = _as_distribution(other)
        result: dict = {}
        for x, wx in self._weights.items():
            for y, wy in other._weights.items():
                key = function(x, y)
                result[key] = result.get(key, 0) + wx * wy
        return Distribution(result)

    def joint(self, *others: "Distribution") -> "Distribution":
        """Independent product: outcomes are tuples (one coordinate per distribution).

        >>> d(2).joint(d(2)).probability((1, 2))
        Fraction(1, 4)
        """
        result = self.map(lambda outcome: (outcome,))
        for other in others:
            result = result.combine(_as_distribution(other), lambda acc, y: acc + (y,))
        return result

    def __add__(self, other) -> "Distribution":
        if isinstance(other, Distribution):
            return _convolve(self, other)
        if isinstance(other, int) and not isinstance(other, bool):
            if self._has_tuples:
                raise TypeError("cannot add a constant to tuple outcomes")
            return Distribution({o + other: w for o, w in self._weights.items()})
        return NotImplemented

    __radd__ = __add__

    @cached_property
    def _has_tuples(self) -> bool:
        return any(isinstance(o, tuple) for o in self._weights)

    def __neg__(self) -> "Distribution":
        return self.map(_negate)

    def __sub__(self, other) -> "Distribution":
        if isinstance(other, (Distribution, int)) and not isinstance(other, bool):
            return self + (-other)
        return NotImplemented

    def __rsub__(self, other) -> "Distribution":
        return (-self) + other

    def sum_of(self, count: int) -> "Distribution":
        """Sum of ``count`` independent copies, by repeated squaring (not count convolutions).

        >>> d(6).sum_of(3).probability(3)
        Fraction(1, 216)
        >>> d(6).sum_of(0) == constant(0)
        True
        """
        if count < 0:
            raise ValueError("count must be >= 0")
        if count == 0:
            zero = tuple(0 for _ in self.min_outcome()) if self._has_tuples else 0
            return Distribution({zero: 1})
        if self._integer_valued:
            return _integer_power(self, count)
        return _repeated_squaring(self, count)

    def maximum(self, other) -> "Distribution":
        """Distribution of max(x, y) for independent x, y.

        >>> d(6).maximum(d(6)).probability(1)
        Fraction(1, 36)
        """
        return _order_pair(self, _as_distribution(other), take_max=True)

    def minimum(self, other) -> "Distribution":
        """Distribution of min(x, y) for independent x, y.

        >>> d(6).minimum(d(6)).probability(6)
        Fraction(1, 36)
        """
        return _order_pair(self, _as_distribution(other), take_max=False)

    # ----- comparisons between two independent distributions ---------------------------

    def p_greater(self, other) -> Fraction:
        """P(x > y) for independent x ~ self, y ~ other.

        >>> d(6).p_greater(d(6))
        Fraction(5, 12)
        """
        other = _as_distribution(other)
        below = 0  # weight of other strictly below the current outcome of self
        total = 0
        other_items = list(other._weights.items())
        j = 0
        for x, wx in self._weights.items():
            while j < len(other_items) and other_items[j][0] < x:
                below += other_items[j][1]
                j += 1
            total += wx * below
        return Fraction(total, self._denominator * other._denominator)

    def p_equal(self, other) -> Fraction:
        """P(x == y) for independent x ~ self, y ~ other.

        >>> d(6).p_equal(d(6))
        Fraction(1, 6)
        """
        other = _as_distribution(other)
        total = sum(w * other._weights.get(o, 0) for o, w in self._weights.items())
        return Fraction(total, self._denominator * other._denominator)

    def p_less(self, other) -> Fraction:
        """P(x < y) for independent x ~ self, y ~ other."""
        return _as_distribution(other).p_greater(self)

    # ----- statistics -------------------------------------------------------------------

    def mean(self) -> Fraction:
        """Exact mean of a numeric distribution.

        >>> d(6).mean()
        Fraction(7, 2)
        """
        return Fraction(sum(o * w for o, w in self._weights.items()), self._denominator)

    def variance(self) -> Fraction:
        """Exact variance of a numeric distribution.

        >>> d(6).variance()
        Fraction(35, 12)
        """
        n = self._denominator
        s1 = sum(o * w for o, w in self._weights.items())
        s2 = sum(o * o * w for o, w in self._weights.items())
        return Fraction(s2 * n - s1 * s1, n * n)

    def at_least(self, threshold) -> Fraction:
        """P(outcome >= threshold).

        >>> d(6).at_least(5)
        Fraction(1, 3)
        """
        return Fraction(sum(w for o, w in self._weights.items() if o >= threshold), self._denominator)

    def at_most(self, threshold) -> Fraction:
        """P(outcome <= threshold).

        >>> d(6).at_most(2)
        Fraction(1, 3)
        """
        return Fraction(sum(w for o, w in self._weights.items() if o <= threshold), self._denominator)

    def cdf(self) -> dict:
        """Outcome -> P(X <= outcome) ("at most" table).

        >>> d(4).cdf()[2]
        Fraction(1, 2)
        """
        result, running = {}, 0
        for outcome, weight in self._weights.items():
            running += weight
            result[outcome] = Fraction(running, self._denominator)
        return result

    def survival(self) -> dict:
        """Outcome -> P(X >= outcome) ("at least" table).

        >>> d(4).survival()[2]
        Fraction(3, 4)
        """
        result, running = {}, 0
        for outcome, weight in reversed(self._weights.items()):  # type: ignore[call-overload]  # a dict's view
            running += weight
            result[outcome] = Fraction(running, self._denominator)
        return dict(reversed(result.items()))

    # ----- presentation -----------------------------------------------------------------

    def table_rows(self, digits: int = 6) -> list[tuple[str, str, str, str, str]]:
        """Rows of (outcome, exact p, decimal p, at least, at most) as strings."""
        cumulative = self._integer_valued or not self._has_tuples
        at_least = self.survival() if cumulative else {}
        at_most = self.cdf() if cumulative else {}
        rows = []
        for outcome, weight in self._weights.items():
            p = Fraction(weight, self._denominator)
            rows.append(
                (
                    _outcome_text(outcome),
                    fraction_text(p),
                    decimal_text(p, digits),
                    decimal_text(at_least[outcome], digits) if cumulative else "",
                    decimal_text(at_most[outcome], digits) if cumulative else "",
                )
            )
        return rows

    def __str__(self) -> str:
        header = ("outcome", "probability", "decimal", "at least", "at most")
        rows = self.table_rows()
        widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(5)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        body = ", ".join(f"{o!r}: {w}" for o, w in list(self._weights.items())[:12])
        more = ", ..." if len(self._weights) > 12 else ""
        return f"Distribution({{{body}{more}}})"

    def _repr_markdown_(self) -> str:
        lines = [
            f"Denominator: {self._denominator}",
            "",
            "| outcome | probability | decimal | at least | at most |",
            "|---:|---:|---:|---:|---:|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in self.table_rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.table_rows()
        )
        return (
            "<table><thead><tr><th>outcome</th><th>probability</th><th>decimal</th>"
            f"<th>at least</th><th>at most</th></tr></thead><tbody>{cells}</tbody></table>"
        )

    def to_json(self) -> dict:
        """A JSON-ready summary: outcomes as ``"p/q"`` strings, mean, variance, cdf tables.

        >>> d(2).to_json()["outcomes"]
        {'1': '1/2', '2': '1/2'}
        """
        result = {
            "outcomes": {_outcome_text(o): fraction_text(p) for o, p in self.probabilities().items()},
            "denominator": str(self._denominator),
        }
        if self._integer_valued:
            result["mean"] = fraction_text(self.mean())
            result["variance"] = fraction_text(self.variance())
            result["at_least"] = {str(o): fraction_text(p) for o, p in self.survival().items()}
            result["at_most"] = {str(o): fraction_text(p) for o, p in self.cdf().items()}
        return result


def _outcome_text(outcome) -> str:
    if isinstance(outcome, tuple):
        return ",".join(str(x) for x in outcome)
    return str(outcome)


def _as_distribution(value) -> Distribution:
    if isinstance(value, Distribution):
        return value
    return constant(value)


# ----- convolution --------------------------------------------------------------------


def _convolve(a: Distribution, b: Distribution) -> Distribution:
    if a._integer_valued and b._integer_valued:
        span = (a.max_outcome() - a.min_outcome()) + (b.max_outcome() - b.min_outcome())
        if span < _DENSE_SPAN_LIMIT and len(a) * len(b) > 64:
            return _kronecker_product(a, b)
    if len(a) > len(b):
        a, b = b, a
    result: dict = {}
    b_items = list(b._weights.items())
    for x, wx in a._weights.items():
        for y, wy in b_items:
            key = _add_outcomes(x, y)
            result[key] = result.get(key, 0) + wx * wy
    return Distribution(result)


def _slot_bytes(bound: int) -> int:
    """Bytes per coefficient slot so that every coefficient (< bound) fits."""
    return max(1, (bound.bit_length() + 8) // 8)


def _pack(dist: Distribution, slot: int) -> int:
    low = dist.min_outcome()
    span = dist.max_outcome() - low + 1
    buffer = bytearray(span * slot)
    for outcome, weight in dist._weights.items():
        start = (outcome - low) * slot
        buffer[start : start + slot] = weight.to_bytes(slot, "little")
    return int.from_bytes(buffer, "little")


def _unpack(packed: int, low: int, span: int, slot: int) -> Distribution:
    raw = packed.to_bytes(span * slot, "little")
    weights: dict[Any, int] = {}
    for i in range(span):
        weight = int.from_bytes(raw[i * slot : (i + 1) * slot], "little")
        if weight:
            weights[low + i] = weight
    return Distribution(weights)


def _kronecker_product(a: Distribution, b: Distribution) -> Distribution:
    """Convolve integer distributions by one big-integer multiplication (Kronecker substitution)."""
    slot = _slot_bytes(a._denominator * b._denominator)
    packed = int(mpz(_pack(a, slot)) * _pack(b, slot))  # GMP: ~100x Python's big-int multiply
    low = a.min_outcome() + b.min_outcome()
    span = a.max_outcome() + b.max_outcome() - low + 1
    return _unpack(packed, low, span, slot)


def _repeated_squaring(dist: Distribution, count: int) -> Distribution:
    """n-fold sum by convolving squares (log2(count) convolutions, not count)."""
    result: Distribution | None = None
    base = dist
    while count:
        if count & 1:
            result = base if result is None else _convolve(result, base)
        count >>= 1
        if count:
            base = _convolve(base, base)
    return result  # type: ignore[return-value]  # count >= 1, so set


def _integer_power(dist: Distribution, count: int) -> Distribution:
    """n-fold sum of an integer distribution as one big-integer power."""
    span = (dist.max_outcome() - dist.min_outcome()) * count + 1
    if span >= _DENSE_SPAN_LIMIT:
        return _repeated_squaring(dist, count)
    slot = _slot_bytes(dist._denominator**count)
    packed = int(mpz(_pack(dist, slot)) ** count)  # GMP: 1.3 s for 100d1000, Python's int 130 s
    return _unpack(packed, dist.min_outcome() * count, span, slot)


def _order_pair(a: Distribution, b: Distribution, take_max: bool) -> Distribution:
    outcomes = sorted(set(a._weights) | set(b._weights))
    if not take_max:
        outcomes.reverse()
    # cumulative weight of each side "not beyond" the current outcome
    result = {}
    cum_a = cum_b = 0
    for outcome in outcomes:
        wa, wb = a._weights.get(outcome, 0), b._weights.get(outcome, 0)
        new_a, new_b = cum_a + wa, cum_b + wb
        weight = new_a * new_b - cum_a * cum_b
        if weight:
            result[outcome] = weight
        cum_a, cum_b = new_a, new_b
    return Distribution(result)


# ----- public constructors ------------------------------------------------------------


def d(sides: int) -> Distribution:
    """A fair die with faces 1..sides.

    Parameters
    ----------
    sides : int
        The number of faces, at least 1 and at most `MAX_FACES`.

    Returns
    -------
    Distribution
        Each face 1..sides with weight 1.

    Raises
    ------
    InputError
        When *sides* is not a whole number of at least 1.
    TooLargeError
        When *sides* is more than `MAX_FACES`.

    Examples
    --------
    >>> d(6).probability(3)
    Fraction(1, 6)
    """
    if not isinstance(sides, int) or isinstance(sides, bool) or sides < 1:
        raise InputError("sides", f"a die needs a whole number of sides >= 1, got {sides!r}")
    if sides > MAX_FACES:
        raise TooLargeError("sides", f"d{sides} has more than {MAX_FACES:,} faces (the limit)")
    return Distribution(dict.fromkeys(range(1, sides + 1), 1))


def constant(value: Hashable) -> Distribution:
    """A distribution that always gives ``value``.

    Parameters
    ----------
    value : Hashable
        The one outcome.

    Returns
    -------
    Distribution
        *value* with probability 1.

    Examples
    --------
    >>> constant(3).mean()
    Fraction(3, 1)
    """
    return Distribution({value: 1})
