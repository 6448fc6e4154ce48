"""Number backends for the solver: exact (gmpy2 integers, fraction-free) and float.

A state's result vector is stored as ``(numerators, denominator)``: one shared
denominator for all its quantities (outcome probabilities and never-ends; the
solver's forward pass keeps expected visits the same way). Combining a chance node's
successors brings them over a common denominator (usually they already share one)
with exact integer multiply-adds and reduces ONCE per node with a cheap gcd against
the node's small total weight, instead of a gcd of huge numbers per rational addition
(`scripts/bench_solver_backends.py` measures it).

>>> exact = ExactArithmetic()
>>> exact.fraction(exact.ratio(2, 4))
Fraction(1, 2)
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
from gmpy2 import mpq, mpz

from exactdice.core.exact import to_fraction

try:
    from exactdice.markov import _exact_systems
except ImportError:  # not built: FLINT and the Python elimination below serve alone
    _exact_systems = None  # type: ignore[assignment]

__all__ = ["ExactArithmetic", "FloatArithmetic"]

_SMALL_SYSTEM = 10  # below this size, elimination in Python beats converting to flint
_MAX_REMEMBERED_INVERSES = 4096
# right sides past this many bits (over their common denominator) are solved through A's
# inverse (`_scaled_inverse`, up to 40 rows): computing it costs more than one
# elimination, but then the huge numbers meet only its small entries (`solve_values`)
_LONG_RIGHT_SIDE_BITS = 4096


class ExactArithmetic:
    """Exact rationals: gmpy2 ``mpz``/``mpq`` inside, ``Fraction`` at the surface.

    >>> ExactArithmetic().solve_linear([{0: 2}], [[ExactArithmetic().ratio(1, 1)]])
    [[mpq(1,2)]]
    """

    exact = True
    zero = mpz(0)
    one = mpz(1)

    def __init__(self):
        self._inverses: dict = {}

    def ratio(self, numerator, denominator):
        return mpq(numerator, denominator)

    def number(self, value):
        value = to_fraction(value)
        return mpq(value.numerator, value.denominator)

    def fraction(self, value) -> Fraction:
        return Fraction(int(value.numerator), int(value.denominator))

    def vector_entry(self, numerators, denominator, slot):
        return mpq(numerators[slot], denominator)

    def weighted_sum(self, edge_pairs, vector_nums, vector_dens, width):
        """``(sums, common)``: sum(weight * successor vector) as integers over
        ``common`` (not reduced)."""
        common = self.one
        for _, target in edge_pairs:
            denominator = vector_dens[target]
            if denominator is not common and denominator != common and not gmpy2.is_divisible(common, denominator):
                common = gmpy2.lcm(common, denominator)
        sums = [0] * width
        for weight, target in edge_pairs:
            denominator = vector_dens[target]
            factor = weight if denominator is common or denominator == common else weight * (common // denominator)
            numerators = vector_nums[target]
            for slot in range(width):
                value = numerators[slot]
                if value:
                    sums[slot] += factor * value
        return sums, common

    def reduced(self, sums, denominator):
        """``(numerators, denominator)`` in lowest terms (one multi-argument gcd)."""
        divisor = gmpy2.gcd(denominator, *sums)
        if divisor != 1:
            return tuple(value // divisor for value in sums), denominator // divisor
        return tuple(mpz(value) for value in sums), mpz(denominator)

    def combine(self, edge_pairs, vector_nums, vector_dens, total):
        """Result vector of a chance node: sum(weight * successor) / total."""
        width = len(vector_nums[edge_pairs[0][1]])
        sums, common = self.weighted_sum(edge_pairs, vector_nums, vector_dens, width)
        # Cancel only what the small total shares with the numerators (cheap gcds with a
        # small number); a full gcd against the huge denominator costs more than the
        # rare extra factor it would remove. Values are normalised when read out.
        divisor = gmpy2.gcd(total, *sums)
        if divisor != 1:
            return tuple(value // divisor for value in sums), common * (total // divisor)
        return tuple(sums), common * total

    def scalar_sum(self, pairs, nums, dens):
        """``(numerator, denominator)`` of sum(weight * nums[i] / dens[i]) over ``pairs``
        of ``(weight, i)`` (any iterable), not reduced (zero is ``(0, 1)``). Terms are
        summed per distinct denominator first (successors mostly share a few), so the big
        scaling to the common denominator happens once per denominator, not per term."""
        by_denominator: dict = {}
        get = by_denominator.get
        for weight, index in pairs:
            denominator = dens[index]
            by_denominator[denominator] = get(denominator, 0) + weight * nums[index]
        return self.common_sum(by_denominator)

    def common_sum(self, by_denominator):
        """``(numerator, denominator)`` of sum(numerator / denominator) over a dict
        denominator -> numerator, over the least common denominator (not reduced)."""
        if len(by_denominator) <= 1:
            for denominator, total in by_denominator.items():
                return total, denominator
            return self.zero, self.one
        common = gmpy2.lcm(*by_denominator)
        return sum([total * (common // denominator) for denominator, total in by_denominator.items()]), common

    def scalar_combine(self, pairs, nums, dens, total):
        """``(numerator, denominator)`` of a chance node's value: sum(weight * value) /
        total, cancelling only what the small total shares with the numerator."""
        numerator, denominator = self.scalar_sum(pairs, nums, dens)
        divisor = gmpy2.gcd(total, numerator)
        if divisor != 1:
            return numerator // divisor, denominator * (total // divisor)
        return numerator, denominator * total

    def divided(self, numerator, denominator, divisor):
        """A number divided by a small positive integer."""
        return numerator, denominator * divisor

    def solve_vectors(self, rows, right_sides):
        """Solve A X = R for small-integer A (``rows[i]``: column -> coefficient) and
        right sides given as ``(integer sums, denominator)``; returns reduced
        ``(numerators, denominator)`` per row. The compiled elimination
        (`exactdice.markov._exact_systems`) serves first; where it declines, small
        systems invert A exactly (its entries are small) and multiply, so the huge
        numbers only meet small ones, and large ones go to FLINT."""
        solved = _exact_systems.solve_vectors(rows, right_sides) if _exact_systems is not None else None
        if solved is not None:
            return solved
        size = len(rows)
        common = self.one
        for _, denominator in right_sides:
            if denominator != common and not gmpy2.is_divisible(common, denominator):
                common = gmpy2.lcm(common, denominator)
        scaled = [
            [value * (common // denominator) for value in sums] if denominator != common else sums
            for sums, denominator in right_sides
        ]
        width = len(scaled[0])
        if size > _SMALL_SYSTEM * 4:
            import flint

            solution = _flint_matrix(rows).solve(flint.fmpz_mat([[int(v) for v in row] for row in scaled]))
            result = []
            for i in range(size):
                values = [mpq(int(solution[i, j].p), int(solution[i, j].q)) for j in range(width)]
                nums, den = self.from_numbers(values)
                result.append(self.reduced(list(nums), den * common))
            return result
        adjugate, scale = self._scaled_inverse(rows)
        result = []
        for i in range(size):
            sums = [0] * width
            for k, coefficient in enumerate(adjugate[i]):
                if coefficient:
                    source = scaled[k]
                    for slot in range(width):
                        if source[slot]:
                            sums[slot] += coefficient * source[slot]
            result.append(self.reduced(sums, scale * common))
        return result

    def value_sum(self, pairs):
        """``(numerator, denominator)`` of sum(weight * value) over ``(weight, value)``
        pairs, not reduced: values are summed per distinct denominator (no gcd of huge
        numbers per addition, as adding rationals one by one would pay)."""
        by_denominator: dict = {}
        get = by_denominator.get
        for weight, value in pairs:
            denominator = value.denominator
            by_denominator[denominator] = get(denominator, 0) + weight * value.numerator
        return self.common_sum(by_denominator)

    def solve_values(self, rows, right_sides):
        """Solve A x = b for small-integer A (``rows[i]``: column -> coefficient) and b
        given as ``(numerator, denominator)`` pairs (`value_sum`): the values x. The right
        sides go over one common denominator first: solving with rational right sides of
        many huge denominators costs far more (16x on systems of 22-160 states with
        20,000-36,000-digit right sides). The compiled elimination
        (`exactdice.markov._exact_systems`) serves first; where it declines, long right
        sides meet only A's small inverse (`_scaled_inverse`), short ones and large
        systems one elimination (Python's or FLINT's).

        >>> ExactArithmetic().solve_values([{0: 2, 1: -1}, {1: 1}], [(1, 3), (1, 2)])
        [mpq(5,12), mpq(1,2)]
        """
        solved = _exact_systems.solve_values(rows, right_sides) if _exact_systems is not None else None
        if solved is not None:
            return solved
        common = self.one
        for _, denominator in right_sides:
            if denominator != common and not gmpy2.is_divisible(common, denominator):
                common = gmpy2.lcm(common, denominator)
        scaled = [
            numerator * (common // denominator) if denominator != common else numerator
            for numerator, denominator in right_sides
        ]
        if common.bit_length() > _LONG_RIGHT_SIDE_BITS and len(rows) <= _SMALL_SYSTEM * 4:
            # A's inverse once, then one product a row (larger systems: FLINT, below)
            adjugate, scale = self._scaled_inverse(rows)
            denominator = scale * common
            # mpq reduces each value once (its one gcd of huge numbers)
            return [
                mpq(sum([coefficient * scaled[k] for k, coefficient in enumerate(row) if coefficient]), denominator)
                for row in adjugate
            ]
        if len(rows) < _SMALL_SYSTEM:  # A's pivots are small: the big integers meet small ones
            return [row[0] / common for row in self.solve_linear(rows, [[mpq(value)] for value in scaled])]
        import flint

        solution = _flint_matrix(rows).solve(flint.fmpz_mat([[int(value)] for value in scaled]))
        return [mpq(int(solution[i, 0].p), int(solution[i, 0].q) * common) for i in range(len(rows))]

    def _scaled_inverse(self, rows):
        """``(B, scale)`` with B = scale * A^-1 an integer matrix, remembered per matrix:
        the same small loop (say, hands trading dice on 0-0 ties) recurs at every chip
        count and track position, so most components reuse an inverse."""
        key = tuple(tuple(sorted(row.items())) for row in rows)
        cached = self._inverses.get(key)
        if cached is None:
            size = len(rows)
            inverse = self.solve_linear(rows, [[mpq(int(i == j)) for j in range(size)] for i in range(size)])
            scale = mpz(1)
            for row in inverse:
                for value in row:
                    if value.denominator != 1:
                        scale = gmpy2.lcm(scale, value.denominator)
            cached = [[int(value * scale) for value in row] for row in inverse], scale
            if len(self._inverses) >= _MAX_REMEMBERED_INVERSES:
                self._inverses.clear()
            self._inverses[key] = cached
        return cached

    def split(self, value):
        """``(numerator, denominator)`` of a rational in lowest terms (an ``mpq``'s own)."""
        return value.numerator, value.denominator

    def from_numbers(self, values):
        """``(numerators, denominator)`` of a list of rationals."""
        common = mpz(1)
        for value in values:
            if value.denominator != 1 and not gmpy2.is_divisible(common, value.denominator):
                common = gmpy2.lcm(common, value.denominator)
        return tuple(value.numerator * (common // value.denominator) for value in values), common

    def solve_linear(self, rows, right_sides):
        """Solve A x = B exactly; ``rows[i]`` maps column -> integer coefficient and
        ``right_sides[i]`` lists rationals (one per right-hand side)."""
        size = len(rows)
        if size >= _SMALL_SYSTEM:
            return _solve_with_flint(rows, right_sides)
        width = len(right_sides[0])
        matrix = [
            [mpq(row.get(col, 0)) for col in range(size)] + [mpq(v) for v in rhs] for row, rhs in zip(rows, right_sides)
        ]
        for pivot_col in range(size):
            pivot_row = next(r for r in range(pivot_col, size) if matrix[r][pivot_col] != 0)
            matrix[pivot_col], matrix[pivot_row] = matrix[pivot_row], matrix[pivot_col]
            pivot = matrix[pivot_col]
            inverse = 1 / pivot[pivot_col]
            for col in range(pivot_col, size + width):
                pivot[col] *= inverse
            for r in range(size):
                if r != pivot_col and matrix[r][pivot_col] != 0:
                    factor = matrix[r][pivot_col]
                    target = matrix[r]
                    for col in range(pivot_col, size + width):
                        if pivot[col]:
                            target[col] -= factor * pivot[col]
        return [row[size:] for row in matrix]

    def better(self, side, candidate, incumbent) -> bool:
        return (candidate > incumbent) if side > 0 else (candidate < incumbent)


def _flint_matrix(rows):
    """A as a FLINT integer matrix (``rows[i]``: column -> coefficient)."""
    import flint

    size = len(rows)
    matrix = flint.fmpz_mat(size, size)
    for i, row in enumerate(rows):
        for col, coefficient in row.items():
            matrix[i, col] = int(coefficient)
    return matrix


def _solve_with_flint(rows, right_sides):
    import flint

    size, width = len(rows), len(right_sides[0])
    matrix = _flint_matrix(rows)
    rhs = flint.fmpq_mat(size, width)
    for i, values in enumerate(right_sides):
        for j, value in enumerate(values):
            rhs[i, j] = flint.fmpq(int(value.numerator), int(value.denominator))
    solution = flint.fmpq_mat(matrix).solve(rhs)
    return [[mpq(int(solution[i, j].p), int(solution[i, j].q)) for j in range(width)] for i in range(size)]


class FloatArithmetic:
    """Floating point with the same interface, for quick previews (not exact).

    >>> FloatArithmetic().ratio(1, 4)
    0.25
    """

    exact = False
    zero = 0.0
    one = 1.0
    tolerance = 1e-12

    def ratio(self, numerator, denominator):
        return numerator / denominator

    def number(self, value):
        return float(value)

    def fraction(self, value):
        return float(value)

    def vector_entry(self, numerators, denominator, slot):
        return numerators[slot]

    def weighted_sum(self, edge_pairs, vector_nums, vector_dens, width):
        sums = [0.0] * width
        for weight, target in edge_pairs:
            numerators = vector_nums[target]
            for slot in range(width):
                sums[slot] += weight * numerators[slot]
        return sums, 1.0

    def reduced(self, sums, denominator):
        return tuple(value / denominator for value in sums), 1.0

    def combine(self, edge_pairs, vector_nums, vector_dens, total):
        width = len(vector_nums[edge_pairs[0][1]])
        sums, _ = self.weighted_sum(edge_pairs, vector_nums, vector_dens, width)
        return self.reduced(sums, total)

    def scalar_sum(self, pairs, nums, dens):
        return sum(weight * nums[index] for weight, index in pairs), 1.0

    def scalar_combine(self, pairs, nums, dens, total):
        return sum(weight * nums[index] for weight, index in pairs) / total, 1.0

    def common_sum(self, by_denominator):
        return sum(numerator / denominator for denominator, numerator in by_denominator.items()), 1.0

    def divided(self, numerator, denominator, divisor):
        return numerator / divisor, 1.0

    def value_sum(self, pairs):
        return sum(weight * value for weight, value in pairs), 1.0

    def solve_values(self, rows, right_sides):
        return [
            row[0]
            for row in self.solve_linear(rows, [[numerator / denominator] for numerator, denominator in right_sides])
        ]

    def solve_vectors(self, rows, right_sides):
        solution = self.solve_linear(rows, [[v / den for v in sums] for sums, den in right_sides])
        return [(tuple(row), 1.0) for row in solution]

    def split(self, value):
        return float(value), 1.0

    def from_numbers(self, values):
        return tuple(float(v) for v in values), 1.0

    def solve_linear(self, rows, right_sides):
        import numpy

        size = len(rows)
        matrix = numpy.zeros((size, size))
        for i, row in enumerate(rows):
            for col, coefficient in row.items():
                matrix[i, col] = coefficient
        solution = numpy.linalg.solve(matrix, numpy.array(right_sides, dtype=float))
        return solution.tolist()

    def better(self, side, candidate, incumbent) -> bool:
        margin = self.tolerance * max(1.0, abs(incumbent))
        return (candidate > incumbent + margin) if side > 0 else (candidate < incumbent - margin)
