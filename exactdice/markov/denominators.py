"""Denominator classes: an exact rational's denominator known before its digits, as an
exponent vector over the small primes met (`Denominators`), for `exactdice.markov.forward`.

Totals of Karbon's states are products of die sizes, so their factors are small primes; a
loop's solution denominator's cofactor without small factors counts as one more "prime".
Two classes meet at their elementwise maximum, and the integer scale between two classes
is computed only where they meet.

>>> small_prime_factors(360)
((2, 3), (3, 2), (5, 1))
"""

from __future__ import annotations

from itertools import zip_longest
from operator import le

import gmpy2
from gmpy2 import mpz

try:
    from exactdice.markov._exact_pass import summed_parts
except ImportError:  # an install that could not build the extension: Python's sums
    summed_parts = None  # type: ignore[assignment]

__all__ = ["Denominators", "small_prime_factors"]

_TRIAL_PRIMES_BELOW = 1000


def _primes_below(limit):
    sieve = bytearray([1]) * limit
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return [i for i in range(limit) if sieve[i]]


_TRIAL_PRIMES = _primes_below(_TRIAL_PRIMES_BELOW)


def small_prime_factors(number: int) -> tuple:
    """``((factor, exponent), ...)`` of a positive integer: its prime factors below
    1000, then the remaining cofactor (if not 1) as one factor of its own.

    >>> small_prime_factors(360)
    ((2, 3), (3, 2), (5, 1))
    >>> small_prime_factors(2 * 1000003)
    ((2, 1), (1000003, 1))
    """
    number = int(number)
    factors = []
    for prime in _TRIAL_PRIMES:
        if prime * prime > number:
            break
        if number % prime == 0:
            exponent = 0
            while number % prime == 0:
                number //= prime
                exponent += 1
            factors.append((prime, exponent))
    if number > 1:
        factors.append((number, 1))
    return tuple(sorted(factors))


class Denominators:
    """Denominators as classes: exponent vectors over the factors met, interned to small
    integers. Class 0 is 1. Products, joins (elementwise maxima) and the integer scale
    from one class to a larger one are remembered: a graph has few distinct ones.

    >>> classes = Denominators()
    >>> sixth = classes.times(0, 6)
    >>> fourth = classes.times(0, 4)
    >>> joined = classes.join((sixth, fourth))
    >>> classes.number(joined), classes.scale(sixth, joined), classes.scale(fourth, joined)
    (mpz(12), mpz(2), mpz(3))
    """

    def __init__(self):
        self.factors: list = []  # column -> factor
        self._column: dict = {}
        self._exponents: dict = {1: ()}  # number -> ((column, exponent), ...)
        self.vectors: list = [()]  # class -> exponent tuple (no trailing zeros)
        self._numbers: list = [mpz(1)]  # class -> its number, once needed
        self._classes: dict = {(): 0}
        self._times: dict = {}
        self._joins: dict = {}
        self._scales: dict = {}

    def _intern(self, vector) -> int:
        while vector and not vector[-1]:
            vector = vector[:-1]
        klass = self._classes.get(vector)
        if klass is None:
            klass = self._classes[vector] = len(self.vectors)
            self.vectors.append(vector)
            self._numbers.append(None)
        return klass

    def times(self, klass: int, number) -> int:
        """The class of (``klass``'s number) * ``number`` (a positive integer)."""
        key = (klass, number)
        found = self._times.get(key)
        if found is None:
            exponents = self._exponents.get(number)
            if exponents is None:
                exponents = self._exponents[int(number)] = tuple(
                    (self._factor_column(factor), power) for factor, power in small_prime_factors(number)
                )
            vector = list(self.vectors[klass])
            for column, power in exponents:
                if column >= len(vector):
                    vector.extend([0] * (column + 1 - len(vector)))
                vector[column] += power
            found = self._times[key] = self._intern(tuple(vector))
            if self._numbers[found] is None and self._numbers[klass] is not None:
                self._numbers[found] = self._numbers[klass] * number
        return found

    def _factor_column(self, factor) -> int:
        column = self._column.get(factor)
        if column is None:
            column = self._column[factor] = len(self.factors)
            self.factors.append(factor)
        return column

    def join(self, classes) -> int:
        """The class of the least common multiple of the classes' vectors (their
        elementwise maximum): a multiple of each."""
        key = tuple(sorted(classes))
        found = self._joins.get(key)
        if found is None:
            vectors = [self.vectors[klass] for klass in key]
            found = self._joins[key] = self._intern(tuple(map(max, zip_longest(*vectors, fillvalue=0))))
        return found

    def scale(self, source: int, target: int) -> mpz:
        """The integer ``number(target) / number(source)``; ``target``'s vector must be at
        least ``source``'s in every column (as a join or a product of it is), else an
        `ArithmeticError`."""
        key = (source, target)
        found = self._scales.get(key)
        if found is None:
            low, high = self.vectors[source], self.vectors[target]
            if len(low) > len(high) or not all(map(le, low, high)):  # vectors end in a nonzero exponent
                raise ArithmeticError("forward pass: a denominator class does not divide its join")
            found = self._scales[key] = gmpy2.divexact(self.number(target), self.number(source))
        return found

    def number(self, klass: int) -> mpz:
        """The denominator a class stands for (a product of powers of its factors)."""
        found = self._numbers[klass]
        if found is None:
            found = mpz(1)
            for factor, power in zip(self.factors, self.vectors[klass]):
                if power:
                    found *= mpz(factor) ** power
            self._numbers[klass] = found
        return found

    def gathered(self, amounts: dict):
        """``(class, amount)``: the amounts of several classes (class -> integer) as one
        integer over their join (one multiplication per class that is not the join)."""
        if len(amounts) == 1:
            return next(iter(amounts.items()))
        joined, scale = self.join(amounts), self.scale
        if summed_parts is not None:  # the same sum, grown in place
            parts = [(amount, None if klass == joined else scale(klass, joined)) for klass, amount in amounts.items()]
            return joined, summed_parts([parts])[0]
        total = mpz(0)
        for klass, amount in amounts.items():
            total += amount if klass == joined else amount * scale(klass, joined)
        return joined, total
