"""The compiled small exact systems (`exactdice.markov._exact_systems`) against an
independent solve in Python Fractions, and against the FLINT path they stand in for in
`ExactArithmetic`: the same rationals, the same integers and types; and the systems they
decline (too large, an entry past 64 bits, a pivot that is not positive, growth past 64
bits) are solved the other way."""

from __future__ import annotations

import doctest
import random
from fractions import Fraction

import pytest
from gmpy2 import mpq, mpz

from exactdice.markov import arithmetic
from exactdice.markov.arithmetic import ExactArithmetic

from .test_arithmetic import fraction_solve as solve_column

systems = pytest.importorskip("exactdice.markov._exact_systems", reason="the compiled systems are not built")


def fraction_solve(rows, right_sides):
    """X of A X = B over Fractions, a column of B at a time (`test_arithmetic`'s solve)."""
    width = len(right_sides[0])
    columns = [solve_column(rows, [Fraction(right[j]) for right in right_sides]) for j in range(width)]
    return [list(row) for row in zip(*columns)]


def loop_system(rng, size, width, weight_bits=3, value_bits=300):
    """A component's system as the solver builds it: weight * I - P over live states,
    sparse, with long right sides. State 0 leaves the loop and every other state moves
    to the one before it, so every state can leave: A is a nonsingular M-matrix."""
    rows = []
    for i in range(size):
        total = rng.randint(2, 2**weight_bits)
        row = {i: total}
        inside = total - (rng.randint(1, total) if i == 0 else 0)
        if i > 0:
            row[i - 1] = -1  # the step towards state 0
            inside -= 1
        for _ in range(rng.randint(0, 2)):
            target, share = rng.randrange(size), rng.randint(0, inside)
            row[target] = row.get(target, 0) - share
            inside -= share
        rows.append({col: value for col, value in row.items() if value})
    right_sides = [[rng.randint(-(2**value_bits), 2**value_bits) for _ in range(width)] for _ in range(size)]
    return rows, right_sides


@pytest.mark.parametrize("seed", range(40))
def test_elimination_gives_the_exact_solution(seed):
    rng = random.Random(seed)
    rows, right_sides = loop_system(rng, size=rng.randint(1, 30), width=rng.randint(1, 3))
    solved = systems.eliminate(rows, right_sides)
    assert solved is not None
    divisors, sums = solved
    assert all(divisor > 0 for divisor in divisors)
    got = [[Fraction(int(value), int(divisor)) for value in row] for divisor, row in zip(divisors, sums)]
    assert got == fraction_solve(rows, right_sides)


@pytest.mark.parametrize("seed", range(20))
def test_elimination_is_exact_or_declines_where_entries_grow(seed):
    """Random weights of 10 bits share few factors, and A's entries grow past 64 bits
    on about two systems in three: those are declined, never rounded."""
    rng = random.Random(500 + seed)
    rows, right_sides = loop_system(rng, size=rng.randint(2, 30), width=1, weight_bits=10)
    solved = systems.eliminate(rows, right_sides)
    expected = fraction_solve(rows, right_sides)
    if solved is not None:
        assert [[Fraction(int(s), int(d)) for s in row] for d, row in zip(*solved)] == expected
    numbers = ExactArithmetic()
    found = numbers.solve_values(rows, [(mpz(row[0]), mpz(1)) for row in right_sides])
    assert [Fraction(int(v.numerator), int(v.denominator)) for v in found] == [row[0] for row in expected]


def test_elimination_declines_what_it_does_not_serve():
    assert systems.eliminate([], []) == ([], [])
    too_many = systems.MAX_ROWS + 1
    assert systems.eliminate([{i: 1} for i in range(too_many)], [[1]] * too_many) is None
    assert systems.eliminate([{0: 2**64}], [[1]]) is None  # an entry past 64 bits
    assert systems.eliminate([{0: 0, 1: 1}, {0: 1, 1: 0}], [[1], [1]]) is None  # a zero pivot
    assert systems.eliminate([{0: -3}], [[1]]) is None  # a negative pivot
    assert systems.eliminate([{0: 1, 1: -1}, {0: -1, 1: 1}], [[1], [0]]) is None  # singular
    assert systems.eliminate([{0: 1, 1: -1}, {0: -1, 1: 1}], [[0], [0]]) is None  # and B zero too
    assert systems.eliminate([{0: Fraction(3, 2)}], [[3]]) is None  # not truncated to 1
    assert systems.eliminate([{0: 1.5}], [[3]]) is None
    assert systems.eliminate([[1]], [[3]]) is None  # a row that is no mapping
    assert ExactArithmetic().solve_values([{0: mpq(3, 2)}], [(mpz(3), mpz(1))]) == [mpq(2)]
    # entries near 2^62 whose combinations stay past 64 bits after dividing out their gcd
    big = 2**62 - 57
    grows = [{0: big, 1: -(big - 2), 2: -1}, {0: -(big - 4), 1: big, 2: -3}, {0: -5, 1: -7, 2: big}]
    assert systems.eliminate(grows, [[1], [2], [3]]) is None


@pytest.mark.parametrize("seed", range(20))
def test_arithmetic_gives_the_same_integers_with_and_without_the_compiled_systems(seed, monkeypatch):
    rng = random.Random(1000 + seed)
    rows, sums = loop_system(rng, size=rng.randint(2, 24), width=rng.randint(1, 4))
    denominators = [mpz(rng.choice([1, 6, 2**200 + 1, 3**150])) for _ in rows]
    values = [(mpz(row[0]), denominator) for row, denominator in zip(sums, denominators)]
    vectors = [(tuple(mpz(value) for value in row), denominator) for row, denominator in zip(sums, denominators)]
    numbers = ExactArithmetic()
    compiled = numbers.solve_values(rows, values), numbers.solve_vectors(rows, vectors)
    monkeypatch.setattr(arithmetic, "_exact_systems", None)
    in_python = ExactArithmetic().solve_values(rows, values), ExactArithmetic().solve_vectors(rows, vectors)
    assert compiled == in_python
    assert [type(value) for value in compiled[0]] == [mpq] * len(rows)
    for (nums, den), (python_nums, python_den) in zip(compiled[1], in_python[1]):
        assert [type(value) for value in (*nums, den)] == [type(value) for value in (*python_nums, python_den)]


def test_arithmetic_solves_a_system_the_elimination_declines():
    big = 2**62 - 57
    rows = [{0: big, 1: -(big - 2), 2: -1}, {0: -(big - 4), 1: big, 2: -3}, {0: -5, 1: -7, 2: big}]
    right_sides = [(mpz(1), mpz(1)), (mpz(2), mpz(1)), (mpz(3), mpz(1))]
    expected = fraction_solve(rows, [[1], [2], [3]])
    assert [
        Fraction(int(v.numerator), int(v.denominator)) for v in ExactArithmetic().solve_values(rows, right_sides)
    ] == [row[0] for row in expected]


def test_the_compiled_modules_examples_hold():
    """pytest's doctest collection skips compiled modules: their examples are run here."""
    results = doctest.testmod(systems)
    assert results.attempted >= 2 and results.failed == 0
