"""`ExactArithmetic.solve_values` in each of its regimes (short and long right sides, small
and large systems) against plain-Fraction Gauss-Jordan elimination."""

import random
from fractions import Fraction

import pytest

from exactdice.markov import arithmetic
from exactdice.markov.arithmetic import ExactArithmetic


def fraction_solve(rows, right_sides):
    """x with A x = b by Gauss-Jordan elimination over Fractions (independent of the backends)."""
    size = len(rows)
    matrix = [[Fraction(row.get(col, 0)) for col in range(size)] + [value] for row, value in zip(rows, right_sides)]
    for col in range(size):
        pivot = next(r for r in range(col, size) if matrix[r][col])
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        lead = matrix[col][col]
        matrix[col] = [value / lead for value in matrix[col]]
        for r in range(size):
            if r != col and matrix[r][col]:
                factor = matrix[r][col]
                matrix[r] = [value - factor * pivot_value for value, pivot_value in zip(matrix[r], matrix[col])]
    return [row[size] for row in matrix]


def loop_system(rng, size, digits):
    """(weight * I - P) rows of a random loop that leaks (each state keeps some weight to
    leave), and right sides that are sums of weights times values over a few shared
    denominators of about ``digits`` digits, as `value_sum` gives them."""
    rows = []
    for i in range(size):
        weight = rng.randint(size + 2, 6 * size)
        row = {i: weight}
        for j in rng.sample(range(size), rng.randint(1, min(size, 4))):
            row[j] = row.get(j, 0) - rng.randint(1, weight // (size + 1))
        rows.append(row)
    base = rng.randrange(10 ** (digits - 1), 10**digits)
    denominators = [base * rng.randint(1, 9) for _ in range(3)]
    values = [Fraction(rng.randrange(den), den) for den in denominators for _ in range(3)]
    numbers = ExactArithmetic()
    right_sides = [
        numbers.value_sum([(rng.randint(1, 5), rng.choice(values)) for _ in range(rng.randint(1, 4))])
        for _ in range(size)
    ]
    return rows, right_sides


@pytest.mark.parametrize("digits", [3, 2_000])  # under and over _LONG_RIGHT_SIDE_BITS
@pytest.mark.parametrize("size", [1, 4, 9, 10, 23, 45])  # elimination, flint, the inverse's two paths
@pytest.mark.parametrize("seed", range(3))
def test_solve_values_matches_fraction_elimination(seed, size, digits):
    rng = random.Random(seed * 1000 + size)
    rows, right_sides = loop_system(rng, size, digits)
    assert (max(den for _, den in right_sides).bit_length() > arithmetic._LONG_RIGHT_SIDE_BITS) == (digits > 1000)
    solved = ExactArithmetic().solve_values(rows, right_sides)
    expected = fraction_solve(rows, [Fraction(int(num), int(den)) for num, den in right_sides])
    assert [Fraction(int(value.numerator), int(value.denominator)) for value in solved] == expected
