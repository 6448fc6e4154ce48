"""2-adic and odd lifting for a loop's exact solve: identical numerators and denominator
to FLINT's rational solver (an independent exact path) on random systems of every shape
the forward pass meets, and a refusal (None) wherever its argument does not hold."""

from __future__ import annotations

import random

import flint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdice.markov.lifting import solve_by_lifting, solve_by_odd_lifting


def flint_solution(rows, sources):
    """``(m, d)`` in lowest terms with ``d > 0`` from FLINT's rational solve."""
    size = len(rows)
    matrix = flint.fmpq_mat(size, size)
    for i, row in enumerate(rows):
        for column, entry in row.items():
            matrix[i, column] = entry
    right = flint.fmpq_mat(size, 1, [int(source) for source in sources])
    numerators, denominator = matrix.solve(right).numer_denom()
    return [int(numerators[i, 0]) for i in range(size)], int(denominator)


def random_system(rng, size, entry_bits, source_bits, row_twos=3, odd_diagonal_only=False):
    """A diagonally heavy integer matrix (like a loop's ``diag(t) - W^T``) whose rows
    carry powers of two, and a right side of mixed widths and signs, zeros included.
    ``odd_diagonal_only``: off-diagonal entries even (before the row's power of two), so
    the matrix lifts."""
    rows = []
    for _ in range(size):
        row = {}
        for column in range(size):
            if rng.random() < 0.5:
                row[column] = -rng.getrandbits(max(1, entry_bits - 4)) << odd_diagonal_only
        row[len(rows)] = rng.getrandbits(entry_bits) | 1
        shift = rng.randint(0, row_twos)
        rows.append({column: entry << shift for column, entry in row.items()})
    sources = [rng.choice([-1, 0, 1, 1]) * rng.getrandbits(rng.choice([1, 64, source_bits])) for _ in range(size)]
    return rows, sources


def small_systems(bound):
    """Square systems of 1-9 rows with entries within ``bound`` and a right side of up to
    3,000 bits (hypothesis)."""
    return st.integers(1, 9).flatmap(
        lambda size: st.tuples(
            st.lists(st.lists(st.integers(-bound, bound), min_size=size, max_size=size), min_size=size, max_size=size),
            st.lists(st.integers(-(2**3000), 2**3000), min_size=size, max_size=size),
        )
    )


def lifted(rows, sources, columns=None):
    found = solve_by_lifting(rows, sources, columns)
    assert found is not None, "the lifting refused a system it should solve"
    numerators, denominator = found
    return [int(m) for m in numerators], int(denominator)


@pytest.mark.parametrize("seed", range(40))
def test_random_systems_match_flint_exactly(seed):
    rng = random.Random(seed)
    size = rng.choice([1, 2, 3, 5, 8, 17, 33, 72, 90])
    rows, sources = random_system(rng, size, rng.choice([3, 12, 30, 36]), rng.choice([10, 3_000, 40_000]))
    try:
        expected = flint_solution(rows, sources)
    except ZeroDivisionError:
        pytest.skip("a singular draw")
    found = solve_by_lifting(rows, sources)
    if found is None:  # singular mod 2 after the rows' powers of two: FLINT's path then
        return
    assert ([int(m) for m in found[0]], int(found[1])) == expected


def test_the_random_systems_above_mostly_lift():
    """Not a test of fallbacks only: most of those draws lift."""
    lifts = 0
    for seed in range(40):
        rng = random.Random(seed)
        size = rng.choice([1, 2, 3, 5, 8, 17, 33, 72, 90])
        rows, sources = random_system(rng, size, rng.choice([3, 12, 30, 36]), rng.choice([10, 3_000, 40_000]))
        lifts += solve_by_lifting(rows, sources) is not None
    assert lifts >= 20  # 24 of 40 lift


@pytest.mark.parametrize("columns", [1, 2, 3, 7, 32])
def test_any_cut_of_the_right_side_gives_the_same_answer(columns):
    rng = random.Random(5)
    rows, sources = random_system(rng, 24, 34, 30_000, odd_diagonal_only=True)
    assert lifted(rows, sources, columns) == flint_solution(rows, sources)


def test_a_solution_far_wider_than_its_right_side():
    """A unimodular matrix with a huge inverse: the numerators outgrow the right side by
    the Hadamard bound's worth, and come back exactly."""
    rows = [{0: 1, 1: 2**40}, {1: 1, 2: 2**40}, {2: 1}]
    assert lifted(rows, [1, -1, 1]) == ([2**80 + 2**40 + 1, -1 - 2**40, 1], 1)


def test_a_fraction_in_lowest_terms_with_the_rows_powers_of_two():
    rows = [{0: 4, 1: -2}, {0: -1, 1: 3}]  # row 0 is 2 x (2, -1): the 2 comes out
    assert lifted(rows, [1, 0]) == flint_solution(rows, [1, 0]) == ([3, 1], 10)


@pytest.mark.parametrize(
    "rows, why",
    [
        ([{0: 1, 1: 1}, {0: 1, 1: 3}], "determinant 2: singular mod 2"),
        ([{0: 6, 1: 2}, {0: 1, 1: 1}], "row 0 is 2 x (3, 1): determinant 2 after the twos are out"),
        ([{0: 1}, {}], "a zero row"),
        ([{0: 2**48 + 1}, {1: 1}], "an entry too wide for exact float64 steps"),
        ([{0: 2**70 + 1}, {1: 1}], "an entry past int64"),
        ([{0: -(2**63)}, {1: 1}], "an entry of int64's least value"),
    ],
)
def test_systems_outside_the_argument_are_refused(rows, why):
    assert solve_by_lifting(rows, [1, 1]) is None, why


@settings(max_examples=60, deadline=None)
@given(small_systems(2**20))
def test_any_small_system_that_lifts_matches_flint(system):
    matrix, sources = system
    rows = [{column: entry for column, entry in enumerate(row) if entry} for row in matrix]
    found = solve_by_lifting(rows, sources)
    if found is None:
        return
    assert ([int(m) for m in found[0]], int(found[1])) == flint_solution(rows, sources)


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_steps_give_numpys_digits(seed, monkeypatch):
    """`lift_digits` (numpy's BLAS called from one compiled loop) and numpy's loop give
    the same digits, carries past 2^16 and below zero included; the whole solve then
    matches FLINT either way."""
    numpy = pytest.importorskip("numpy")
    systems = pytest.importorskip("exactdice.markov._exact_systems")
    from exactdice.markov import lifting

    assert systems.blas_found(), "numpy's BLAS was not found: the lifting's steps run in numpy"
    rng = random.Random(seed)
    size = rng.choice([1, 7, 40, 72])
    rows, sources = random_system(rng, size, rng.choice([12, 30, 36]), 6_000, odd_diagonal_only=True)
    dense = numpy.zeros((size, size), dtype=numpy.int64)
    for i, row in enumerate(rows):
        dense[i, list(row)] = list(row.values())
    dense >>= numpy.array([min((entry & -entry).bit_length() - 1 for entry in row.values()) for row in rows])[:, None]
    inverse, _ = lifting._facts_of(dense)
    digits = numpy.random.default_rng(seed).integers(-(2**16) + 1, 2**16, (30, size, rng.choice([1, 3, 8])))
    right = digits.astype(numpy.float64)
    compiled = lifting._lift(dense, inverse, right)
    monkeypatch.setattr(lifting, "lift_digits", None)
    assert (lifting._lift(dense, inverse, right) == compiled).all()
    assert lifted(rows, sources) == flint_solution(rows, sources)


def odd_lifted(rows, sources, columns=None):
    found = solve_by_odd_lifting(rows, sources, columns)
    assert found is not None, "the odd lifting refused a system it should solve"
    numerators, denominator = found
    return [int(m) for m in numerators], int(denominator)


@pytest.mark.parametrize("seed", range(30))
def test_odd_lifting_matches_flint_where_the_2_adic_lifting_refuses(seed):
    """Systems singular mod 2 (every entry even but the diagonal's, then a row's power of
    two out, as risk=always's loops) and entries too wide for the 2-adic float steps."""
    rng = random.Random(seed)
    size = rng.choice([1, 2, 5, 17, 40, 96, 200])
    entry_bits = rng.choice([12, 30, 44, 50])
    rows, sources = random_system(rng, size, entry_bits, rng.choice([10, 3_000, 40_000]), row_twos=6)
    try:
        expected = flint_solution(rows, sources)
    except ZeroDivisionError:
        pytest.skip("a singular draw")
    assert odd_lifted(rows, sources) == expected


def test_odd_lifting_solves_a_system_singular_mod_2():
    rows = [{0: 3, 1: 1}, {0: 1, 1: 3}]  # determinant 8
    assert solve_by_lifting(rows, [1, 1]) is None
    assert odd_lifted(rows, [5, -7]) == flint_solution(rows, [5, -7]) == ([11, -13], 4)


@pytest.mark.parametrize("columns", [1, 2, 5, 32])
def test_any_cut_of_the_right_side_gives_the_same_answer_odd(columns):
    rng = random.Random(7)
    rows, sources = random_system(rng, 30, 44, 30_000, row_twos=6)
    assert odd_lifted(rows, sources, columns) == flint_solution(rows, sources)


def test_the_odd_lifting_finds_a_factor_the_random_side_lacks(monkeypatch):
    """A random side whose solution lacks the factor 3 of the denominator (1/5 and 1):
    a real column's reconstruction finds it, and the numerators read before are scaled."""
    from exactdice.markov import lifting

    monkeypatch.setattr(lifting, "_trial_side", lambda size: [3, 5, 1][:size])
    rows = [{0: 3}, {1: 5, 2: -1}, {2: 1}]
    sources = [2**5000 + 1, 7, 2**4000]
    assert odd_lifted(rows, sources) == flint_solution(rows, sources)
    assert odd_lifted(rows, sources)[1] == 15


def test_the_odd_lifting_declines_when_the_random_side_shows_too_little(monkeypatch):
    """A random side whose solution is whole (denominator 1): a real column's entry then
    lacks more than its margin can find, and the lifting declines rather than guess."""
    from exactdice.markov import lifting

    monkeypatch.setattr(lifting, "_trial_side", lambda size: [0] * size)
    rng = random.Random(3)
    rows, sources = random_system(rng, 24, 30, 20_000, row_twos=6)
    assert solve_by_odd_lifting(rows, sources) is None


def test_the_odd_lifting_declines_when_its_estimates_are_short(monkeypatch):
    """Bounds too short to hold the numerators: the check by multiplying back fails, and
    the lifting declines (None) rather than answer; the forward pass then uses FLINT."""
    from exactdice.markov import lifting

    real = lifting._odd_facts_uncached
    monkeypatch.setattr(lifting._odd_facts_of, "found", {})
    monkeypatch.setattr(lifting, "_odd_facts_uncached", lambda dense: (*real(dense)[:4], 0))  # bound: 0 bits
    monkeypatch.setattr(lifting, "_SAFETY_BITS", 0)
    rng = random.Random(4)
    rows, sources = random_system(rng, 12, 30, 20_000, row_twos=6)
    assert solve_by_odd_lifting(rows, sources) is None


@pytest.mark.parametrize(
    "rows, why",
    [
        ([{0: 1}, {}], "a zero row"),
        ([{0: 2**70 + 1}, {1: 1}], "an entry past int64"),
        ([{0: 2**61 + 1}, {1: 1}], "a row whose sum would carry past 63 bits"),
        ([{0: 37 * 41 * 43 * 47 * 53 * 59 * 61}, {1: 1}], "every odd base divides the determinant"),
    ],
)
def test_systems_outside_the_odd_argument_are_refused(rows, why):
    assert solve_by_odd_lifting(rows, [1, 1]) is None, why


@settings(max_examples=60, deadline=None)
@given(small_systems(2**40))
def test_any_small_system_the_odd_lifting_solves_matches_flint(system):
    matrix, sources = system
    rows = [{column: entry for column, entry in enumerate(row) if entry} for row in matrix]
    found = solve_by_odd_lifting(rows, sources)
    try:
        expected = flint_solution(rows, sources)
    except ZeroDivisionError:
        assert found is None
        return
    if found is not None:
        assert ([int(m) for m in found[0]], int(found[1])) == expected


@pytest.mark.parametrize("seed", range(6))
def test_the_odd_steps_give_the_p_adic_digits_of_the_solution(seed):
    """`lift_odd_digits`' digits, read as a number mod p^L, are A'^-1 s' mod p^L as
    Python's own integers give it (s' one digit wide, so the digits are its solution's)."""
    numpy = pytest.importorskip("numpy")
    pytest.importorskip("exactdice.markov._exact_systems")
    from exactdice.markov import lifting

    rng = random.Random(seed)
    size = rng.choice([1, 4, 30, 90])
    rows, _ = random_system(rng, size, rng.choice([20, 44]), 10, row_twos=6)
    dense, _ = lifting._without_rows_twos(rows)
    facts = lifting._odd_facts_of(dense)
    assert facts is not None
    q, k, inverse, sparse, _ = facts
    p, steps = q**k, 40
    right = numpy.zeros((steps, size, 2), dtype=numpy.int64)
    right[0] = numpy.random.default_rng(seed).integers(-p + 1, p, (size, 2))
    digits = lifting.lift_odd_digits(inverse, *sparse, right, p)
    modulus = p**steps
    reduced_rows = [{j: int(dense[i, j]) for j in range(size) if dense[i, j]} for i in range(size)]
    for column in range(2):
        numerators, denominator = flint_solution(reduced_rows, [int(value) for value in right[0, :, column]])
        inverse_denominator = pow(denominator, -1, modulus)
        for i in range(size):
            lifted_value = sum(int(digits[step, i, column]) * p**step for step in range(steps))
            assert 0 <= digits[:, i, column].min() and digits[:, i, column].max() < p
            assert lifted_value == numerators[i] * inverse_denominator % modulus
