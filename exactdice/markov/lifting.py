"""Exact solves of a small integer system with a wide right side, by 2-adic lifting.

A loop of the forward pass is a system ``A y = s`` with ``A`` small (up to ~100 rows)
and narrow (entries of 30-40 bits) and ``s`` wide (20,000-40,000 bits on A5 v C5).
FLINT's general solver spends 100-150 ms on such a 72-row system; most of that is the
width of ``s``, while ``A``'s determinant costs 5 ms. `solve_by_lifting` instead lifts
the solution 16 bits at a time (Dixon, "Exact solution of linear equations using
p-adic expansions", Numer. Math. 40, 1982, with p = 2^16), every step one float64
matrix product that is exact because its numbers stay below 2^53.

The argument, step by step:

* Rows' powers of two out: with ``v_i`` the 2-adic valuation of row i's content and
  ``V = max v_i``, ``A' = diag(2^-v_i) A`` is an integer matrix and ``A' (2^V y) = s'``
  with ``s'_i = 2^(V - v_i) s_i``. When ``det A'`` is odd (every loop of the Karbon
  contests measured: their determinants' powers of two are exactly the rows'), ``A'``
  is invertible mod 2^16 (``C``: its inverse mod 2, lifted by Newton's iteration).
* Lifting: ``z = A'^-1 s'`` is a 2-adic integer vector with digits
  ``x_k = C r_k mod 2^16``, ``r_{k+1} = (r_k - A' x_k) / 2^16``, ``r_0 = s'``; the
  division is exact. Only ``r_k mod 2^16`` is needed, and it is the k-th digit of
  ``s'`` plus a carry: with ``u`` that sum, the next carry is ``(u - A' x_k) / 2^16``,
  so every number stays small.
* Exact float64 steps: ``C``'s entries and ``u mod 2^16`` are below 2^16, so ``C u``'s
  partial sums stay below n 2^32; ``A' = lo + 2^20 hi`` with ``0 <= lo < 2^20``, and
  ``carry = (u - lo x) / 2^16 - 16 hi x``: every product and partial sum stays below
  n 2^(w+1) for entries of w bits, and the carries below n 2^(w+1) too. The solve is
  refused (None) unless n 2^(w+3) <= 2^53. Any summation order of BLAS is exact.
* Reading the answer: by Cramer, ``m = det(A') z`` is an integer vector with
  ``|m_i| <= |s'|_2 prod_j |a'_j|_2`` (Hadamard, columns ``a'_j``), so ``m`` is
  ``det(A') z mod 2^L`` in the symmetric range once ``2^L`` exceeds twice that bound.
  Then ``y = m / (det(A') 2^V)``, reduced by the gcd.
* The right side is cut into ``columns`` chunks of ``W`` bits solved side by side (one
  matrix product per step for all of them) and added back with shifts: fewer steps
  of a wider product, which BLAS does at a better rate.
* The steps run in one compiled loop (`exactdice.markov._exact_systems.lift_digits`)
  calling numpy's own BLAS, where it is built; else in numpy, the same operations.

The caller checks ``A m = d s`` exactly (`exactdice.markov.forward.solve_block`), so a
wrong bound could only raise, never return a wrong value.

>>> numerators, denominator = solve_by_lifting([{0: 2, 1: -1}, {0: -1, 1: 2}], [30, 0])
>>> [int(m) for m in numerators], int(denominator)
([20, 10], 1)
"""

from __future__ import annotations

import math

import numpy as np
from gmpy2 import gcd, mpz

try:
    from exactdice.markov._exact_systems import blas_found, lift_digits

    if not blas_found():
        lift_digits = None  # type: ignore[assignment]
except ImportError:  # an install that could not build the extension: numpy's loop
    lift_digits = None  # type: ignore[assignment]

__all__ = ["solve_by_lifting"]

DIGIT_BITS = 16
_BASE = float(1 << DIGIT_BITS)
_SCALE = 1.0 / _BASE
_LOW_BITS = 20
_FLOAT_BITS = 53
# microseconds a lifting step costs whatever its width, and per column of the right side
# (measured on 72 rows): the compiled steps are mostly their two products; numpy's loop,
# its calls
_STEP_COST_FIXED, _STEP_COST_COLUMN = (1.5, 0.65) if lift_digits is not None else (28.0, 2.0)


def solve_by_lifting(rows, sources, columns: int | None = None):
    """``(m, d)`` with ``A (m / d) = sources`` (``rows[i]``: column -> integer entry of
    A), ``d > 0`` and ``m / d`` in lowest terms; None when the lifting does not apply
    (A' singular mod 2, or entries too wide for exact float64 steps): then use another
    solver. ``columns``: how many chunks the right side is cut into (default: by a
    cost model). Nothing here is checked against ``A``; the caller multiplies back.
    """
    size = len(rows)
    dense = np.zeros((size, size), dtype=np.int64)
    try:
        for i, row in enumerate(rows):
            dense[i, list(row)] = list(row.values())
    except OverflowError:  # an entry past int64
        return None
    if (dense == np.iinfo(np.int64).min).any():  # its negation and lowest set bit overflow
        return None
    content = np.bitwise_or.reduce(dense, axis=1)
    if not content.all():
        return None
    shifts = np.log2((content & -content).astype(np.float64)).astype(np.int64)  # exact: powers of two
    dense >>= shifts[:, None]
    widest = int(np.abs(dense).max()).bit_length()
    if widest + size.bit_length() + 3 > _FLOAT_BITS:
        return None
    inverse, determinant = _facts_of(dense)
    if inverse is None:
        return None
    shifts = shifts.tolist()
    top = max(shifts)
    scaled = [int(source) << (top - shift) for source, shift in zip(sources, shifts)]
    width = max(1, max(abs(value).bit_length() for value in scaled))
    # Hadamard: prod_j |a'_j| <= 2^hadamard (the float sums' relative error, about
    # n 2^-53, moves the sum of logarithms by far less than the 1e-6 added), and
    # |s'_chunk| <= sqrt(n) 2^chunk_bits
    squares = np.square(dense.astype(np.float64)).sum(axis=0)
    hadamard = math.ceil(float(np.log2(squares).sum()) / 2 + 1e-6)
    if columns is None:
        columns = _columns_for(width, hadamard)
    digits_per_chunk = -(-width // (columns * DIGIT_BITS))
    chunk_bits = digits_per_chunk * DIGIT_BITS
    columns = -(-width // chunk_bits)
    bound_bits = chunk_bits + (size.bit_length() + 1) // 2 + hadamard + 2
    steps = -(-bound_bits // DIGIT_BITS)
    right = np.zeros((steps, size, columns), dtype=np.float64)
    chunk_bytes = columns * chunk_bits // 8
    for i, value in enumerate(scaled):
        if value:
            digits = np.frombuffer(abs(value).to_bytes(chunk_bytes, "little"), dtype="<u2")
            digits = digits.reshape(columns, digits_per_chunk).T.astype(np.float64)
            right[:digits_per_chunk, i, :] = -digits if value < 0 else digits
    expansion = _lift(dense, inverse, right)
    return _read_out(expansion, determinant, top, steps, chunk_bits)


_facts: dict = {}
_facts_bytes = 0
_MAX_REMEMBERED_BYTES = 32 << 20


def _facts_of(dense):
    """``(A'^-1 mod 2^16, det A')`` of ``dense``, or ``(None, None)`` when it is singular
    mod 2; remembered per matrix (up to 32 MiB of them), as the same loop recurs at other
    chip counts and track positions (21 of A5 v C5's 106 loops)."""
    global _facts_bytes
    key = (len(dense), dense.tobytes())
    found = _facts.get(key)
    if found is None:
        inverse = _inverse_mod_digit(dense)
        found = (inverse, None if inverse is None else _determinant(dense))
        size = 2 * len(key[1])  # the key and the inverse, as large
        if _facts_bytes + size > _MAX_REMEMBERED_BYTES:
            _facts.clear()
            _facts_bytes = 0
        _facts[key] = found
        _facts_bytes += size
    return found


def _columns_for(width: int, hadamard: int) -> int:
    """The chunk count that minimises (width / K + hadamard) steps at
    (fixed + K per column) microseconds each."""
    best, best_cost = 1, None
    for count in range(1, 33):
        cost = (width / count + hadamard) * (_STEP_COST_FIXED + _STEP_COST_COLUMN * count)
        if best_cost is None or cost < best_cost:
            best, best_cost = count, cost
    return best


def _lift(dense, inverse, right):
    """The 2-adic digits ``x_k`` (``steps x n x columns`` floats, each in [0, 2^16)) of
    ``A'^-1`` times the right side whose digits ``right`` holds (module docstring)."""
    size = len(dense)
    steps, _, columns = right.shape
    high = dense >> _LOW_BITS
    low = dense - (high << _LOW_BITS)
    stacked = np.concatenate([low, high << (_LOW_BITS - DIGIT_BITS)]).astype(np.float64)
    if lift_digits is not None:
        return lift_digits(inverse, stacked, right)  # the steps below, compiled
    out = np.empty_like(right)
    carry = np.zeros((size, columns))
    u = np.empty((size, columns))
    low_part = np.empty((size, columns))
    product = np.empty((2 * size, columns))
    spare = product[:size]
    add, sub, multiply, floor, matmul = np.add, np.subtract, np.multiply, np.floor, np.matmul
    for k in range(steps):
        add(right[k], carry, out=u)
        multiply(u, _SCALE, out=low_part)  # u mod 2^16 as u - 2^16 floor(u / 2^16)
        floor(low_part, out=low_part)
        multiply(low_part, _BASE, out=low_part)
        sub(u, low_part, out=low_part)
        x = out[k]
        matmul(inverse, low_part, out=x)
        multiply(x, _SCALE, out=spare)
        floor(spare, out=spare)
        multiply(spare, _BASE, out=spare)
        sub(x, spare, out=x)
        matmul(stacked, x, out=product)
        sub(u, product[:size], out=carry)
        multiply(carry, _SCALE, out=carry)
        sub(carry, product[size:], out=carry)
    return out


def _read_out(expansion, determinant: int, top: int, steps: int, chunk_bits: int):
    """``(m, d)`` from the digits: each chunk's ``det z mod 2^L`` in the symmetric
    range, chunks added back with shifts, over ``det 2^top``, in lowest terms."""
    modulus = mpz(1) << (steps * DIGIT_BITS)
    mask = modulus - 1
    half = modulus >> 1
    _, size, columns = expansion.shape
    digits = np.ascontiguousarray(expansion.transpose(1, 2, 0)).astype("<u2")
    determinant = mpz(determinant)
    numerators = []
    for i in range(size):
        total = mpz(0)
        for column in range(columns - 1, -1, -1):
            expanded = mpz.from_bytes(digits[i, column].tobytes(), "little")
            value = (expanded * determinant) & mask
            if value >= half:
                value -= modulus
            total = (total << chunk_bits) + value
        numerators.append(total)
    denominator = determinant << top
    if denominator < 0:
        denominator = -denominator
        numerators = [-value for value in numerators]
    common = denominator
    for value in numerators:
        if common == 1:
            break
        common = gcd(common, value)
    if common != 1:
        numerators = [value // common for value in numerators]
        denominator //= common
    return numerators, denominator


def _determinant(dense) -> int:
    import flint

    return int(flint.fmpz_mat(dense.tolist()).det())


def _inverse_mod_digit(dense):
    """``A'^-1 mod 2^16`` (float64), by Newton's iteration ``C <- C (2 - A' C)`` from the
    inverse mod 2 (in float64: entries below 2^16, sums below n 2^32, exact); None when
    ``A'`` is singular mod 2."""
    inverse = _inverse_mod_two(dense)
    if inverse is None:
        return None
    size = len(dense)
    low = (dense & ((1 << DIGIT_BITS) - 1)).astype(np.float64)
    twice = 2 * np.eye(size)
    bits = 1
    while bits < DIGIT_BITS:
        inverse = np.mod(inverse @ np.mod(twice - np.mod(low @ inverse, _BASE), _BASE), _BASE)
        bits *= 2
    return inverse


def _inverse_mod_two(dense):
    """The inverse of ``dense`` mod 2 as a float64 0/1 matrix (Gauss-Jordan on rows
    packed into ints: row i is bits 0..n-1 of A, n..2n-1 of the identity), or None."""
    size = len(dense)
    packed = np.packbits((dense & 1).astype(np.uint8), axis=1, bitorder="little")
    rows = [int.from_bytes(row.tobytes(), "little") | (1 << (size + i)) for i, row in enumerate(packed)]
    for column in range(size):
        bit = 1 << column
        pivot = next((i for i in range(column, size) if rows[i] & bit), None)
        if pivot is None:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        pivot_row = rows[column]
        for i in range(size):
            if i != column and rows[i] & bit:
                rows[i] ^= pivot_row
    width = (2 * size + 7) // 8
    packed = np.frombuffer(b"".join(row.to_bytes(width, "little") for row in rows), dtype=np.uint8)
    bits = np.unpackbits(packed.reshape(size, width), axis=1, bitorder="little")
    return bits[:, size : 2 * size].astype(np.float64)
