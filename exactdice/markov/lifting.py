"""Exact solves of a small integer system with a wide right side, by 2-adic lifting (or,
where 2 divides its determinant or its entries are too wide for that, lifting in an odd
base: `solve_by_odd_lifting`).

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
import gmpy2
from gmpy2 import gcd, mpz

try:
    from exactdice.markov._exact_systems import (
        blas_found,
        digits_as_text,
        lift_digits,
        lift_odd_digits,
        text_as_digits,
    )

    if not blas_found():
        lift_digits = lift_odd_digits = None  # type: ignore[assignment]
except ImportError:  # an install that could not build the extension: numpy's loop, and no odd lifting
    lift_digits = lift_odd_digits = None  # type: ignore[assignment]
try:
    from exactdice.markov._exact_pass import row_total
except ImportError:
    row_total = None  # type: ignore[assignment]

__all__ = ["satisfies", "solve_by_lifting", "solve_by_odd_lifting"]


def satisfies(rows, sources, numerators, denominator) -> bool:
    """Whether ``A m = d s`` exactly, row by row (``rows[i]``: column -> entry of A): the
    check every loop's solve passes, whichever way it was found.

    >>> satisfies([{0: 2, 1: -1}, {0: -1, 1: 2}], [30, 0], [mpz(20), mpz(10)], 1)
    True
    """
    for row, source in zip(rows, sources):
        if row_total is not None and type(numerators) is list:
            total = row_total(row, numerators)
        else:
            total = mpz(0)
            for column, entry in row.items():
                total += entry * numerators[column]
        if total != denominator * source:
            return False
    return True


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
    found = _without_rows_twos(rows)
    if found is None:
        return None
    dense, shifts = found
    size = len(dense)
    widest = int(np.abs(dense).max()).bit_length()
    if widest + size.bit_length() + 3 > _FLOAT_BITS:
        return None
    inverse, determinant = _facts_of(dense)
    if inverse is None:
        return None
    top, scaled = _scaled_sources(sources, shifts)
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


def _without_rows_twos(rows):
    """``(A', shifts)``: A as an int64 array with each row's power of two out
    (``A' = diag(2^-shifts) A``), or None (an entry past int64, or an empty row)."""
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
    return dense, shifts


def _scaled_sources(sources, shifts):
    """``(V, s')``: ``s'_i = 2^(V - v_i) s_i`` with ``V`` the largest shift, so that
    ``A' (2^V y) = s'``."""
    shifts = shifts.tolist()
    top = max(shifts)
    return top, [int(source) << (top - shift) for source, shift in zip(sources, shifts)]


_MAX_REMEMBERED_BYTES = 32 << 20


class _Remembered:
    """``facts(dense)`` remembered per matrix, up to 32 MiB of them (then forgotten all at
    once): the same loop recurs at other chip counts and track positions (21 of A5 v C5's
    106 loops). ``copies``: the bytes each costs, in matrices of ``dense``'s size."""

    def __init__(self, facts, copies: int):
        self.facts, self.copies = facts, copies
        self.found: dict = {}
        self.bytes = 0

    def __call__(self, dense):
        key = (len(dense), dense.tobytes())
        if key in self.found:
            return self.found[key]
        found = self.facts(dense)
        size = self.copies * len(key[1])
        if self.bytes + size > _MAX_REMEMBERED_BYTES:
            self.found.clear()
            self.bytes = 0
        self.found[key] = found
        self.bytes += size
        return found


def _facts_uncached(dense):
    """``(A'^-1 mod 2^16, det A')`` of ``dense``, or ``(None, None)`` when it is singular
    mod 2."""
    inverse = _inverse_mod_digit(dense)
    return inverse, None if inverse is None else _determinant(dense)


_facts_of = _Remembered(_facts_uncached, 2)  # the key and the inverse, as large


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
    return _lowest_terms(numerators, determinant << top)


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


# --- odd lifting: A' singular mod 2, or too wide for exact 16-bit float steps ---------

#: the odd lifting's bases: primes above 36 whose powers gmpy2 writes and reads as text in
#: their own base (it takes bases up to 62, a letter a digit), tried in turn until one
#: does not divide det A'
ODD_PRIMES = (37, 41, 43, 47, 53, 59, 61)
#: bits added to the odd lifting's estimated bounds (the estimates are floats; a wrong one
#: only makes the result fail its check, and the caller solves another way): the numbers
#: read get half of them, a factor of the denominator found late (`_odd_read_out`) the rest
_SAFETY_BITS = 128
# microseconds per row squared of an odd lifting step, whatever its width, and per column
# (measured on 384 rows: 12 us a step and 20 us a column)
_ODD_STEP_COST_FIXED, _ODD_STEP_COST_COLUMN = 8.1e-5, 1.4e-4


def solve_by_odd_lifting(rows, sources, columns: int | None = None):
    """``(m, d)`` with ``A (m / d) = sources`` exactly, checked here by multiplying back,
    for a system `solve_by_lifting` declines: ``A'`` singular mod 2 (risk=always's loops:
    det A' has 2^30 in it), or entries too wide for its float steps (44 bits there). None
    where this does not apply either, or its result fails the check.

    Dixon's lifting again, with ``p = q^k`` for the first ``q`` of `ODD_PRIMES` that does
    not divide det A', and ``k`` as large as ``n (p - 1)^2 < 2^52`` allows (about 21 bits
    a step on 384 rows):

    * the right side's digits in base ``p`` come from its text in base ``q`` (GMP's own
      conversion), and the digits lifted go back the same way;
    * a step is one float64 product with ``C = A'^-1 mod p`` (exact: every sum below
      2^53) and one integer product with ``A'``'s nonzero entries, taken modulo 2^64 and
      divided by ``p`` exactly (`exactdice.markov._exact_systems.lift_odd_digits`);
    * the common denominator ``d`` (a divisor of det A', usually its largest invariant
      factor) is found without the determinant: by rational reconstruction from the
      lifted solution of a random narrow right side solved beside the real one, times
      any factor a real column's reconstruction shows is missing;
    * the bounds (det A' and ``|A'^-1|``) are float estimates plus `_SAFETY_BITS`: they
      decide only how far to lift. What makes the answer exact is the check
      ``A' m = d s'``, which any wrong guess fails.

    >>> numerators, denominator = solve_by_odd_lifting([{0: 2, 1: -1}, {0: -1, 1: 2}], [30, 0])
    >>> [int(m) for m in numerators], int(denominator)
    ([20, 10], 1)
    """
    if lift_odd_digits is None or not rows or (columns is not None and columns < 1):
        return None
    found = _without_rows_twos(rows)
    if found is None:
        return None
    dense, shifts = found
    size = len(dense)
    if float(np.abs(dense.astype(np.float64)).sum(axis=1).max()) >= 2.0**60:  # the carries fit in 63 bits
        return None
    facts = _odd_facts_of(dense)
    if facts is None:
        return None
    q, k, inverse, sparse, bound_bits = facts
    p = q**k
    top, scaled = _scaled_sources(sources, shifts)
    width = max(1, max(abs(value).bit_length() for value in scaled))
    digit_bits = math.log2(p)
    if columns is None:
        columns = _odd_columns_for(width, bound_bits, digit_bits, size)
    per_column = -(-(math.ceil(width / digit_bits) + 1) // columns)
    chunk_bits = per_column * digit_bits
    trial_bits = 2 * (bound_bits + DIGIT_BITS) + _SAFETY_BITS  # the random side's reconstruction
    steps = math.ceil(max(chunk_bits + bound_bits + _SAFETY_BITS, trial_bits) / digit_bits)
    right = np.zeros((steps, size, columns + 1), dtype=np.int64)
    right[0, :, 0] = _trial_side(size)
    for i, value in enumerate(scaled):
        if value:
            digits = _base_digits(abs(value), q, k, per_column * columns).reshape(columns, per_column).T
            right[:per_column, i, 1:] = -digits if value < 0 else digits
    offsets, columns_of_entries, entries = sparse
    expansion = lift_odd_digits(inverse, offsets, columns_of_entries, entries, right, p)
    numerators, denominator = _odd_read_out(expansion, q, k, steps, per_column, chunk_bits + bound_bits)
    if denominator is None:
        return None
    if not satisfies(rows, sources, numerators, denominator << top):  # A' m = d s' is A m = (d 2^V) s
        return None
    return _lowest_terms(numerators, denominator << top)


def _scattered(size: int, bits: int):
    """``size`` numbers in [1, 2^bits) (bits <= 32) that look random and are the same every
    time: Fibonacci hashing of 1, 2, ..., size (no random module needed)."""
    counts = np.arange(1, size + 1, dtype=np.uint64)
    return np.maximum(((counts * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64), 1)


def _trial_side(size: int):
    """The random-looking narrow right side whose solution gives the denominator."""
    return _scattered(size, DIGIT_BITS)


def _odd_facts_uncached(dense):
    """``(q, k, C, A' as compressed rows, bound bits)`` of ``dense``, or None: the base,
    ``C = A'^-1 mod q^k`` (float64), and an estimate of the bits of ``d A'^-1`` (log2
    |det A'| plus log2 of ``A'^-1``'s largest absolute row sum, from floats)."""
    import flint

    size = len(dense)
    as_floats = dense.astype(np.float64)
    sign, log_determinant = np.linalg.slogdet(as_floats)
    try:
        inverse_norm = float(np.abs(np.linalg.inv(as_floats)).sum(axis=1).max())
    except np.linalg.LinAlgError:
        return None
    if sign == 0 or not math.isfinite(log_determinant) or not math.isfinite(inverse_norm):
        return None
    bound_bits = math.ceil(log_determinant / math.log(2) + max(0.0, math.log2(inverse_norm)) + 1)
    for q in ODD_PRIMES:
        try:
            residues = flint.nmod_mat(size, size, (dense % q).ravel().tolist(), q).inv()
        except ZeroDivisionError:  # q divides det A'
            continue
        k = 1
        while size * (q ** (k + 1) - 1) ** 2 < 2**52:
            k += 1
        inverse = np.array([int(entry) for entry in residues.entries()], dtype=np.float64).reshape(size, size)
        inverse = _inverse_lifted(dense, inverse, q, k)
        nonzero = np.nonzero(dense)
        offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(nonzero[0], minlength=size), out=offsets[1:])
        sparse = (offsets, nonzero[1].astype(np.int32), dense[nonzero].astype(np.int64))
        return q, k, inverse, sparse, bound_bits
    return None


_odd_facts_of = _Remembered(lambda dense: _odd_facts_uncached(dense), 3)  # the key, the inverse, the rows


def _inverse_lifted(dense, inverse, q: int, k: int):
    """``A'^-1 mod q^k`` from ``A'^-1 mod q`` by Newton's iteration ``C <- C (2 - A' C)``,
    every product in float64 modulo ``q^k`` (below 2^52 by the choice of ``k``)."""
    modulus = float(q**k)
    low = np.mod(dense, q**k).astype(np.float64)
    twice = 2 * np.eye(len(dense))
    precision = 1
    while precision < k:
        inverse = np.mod(inverse @ np.mod(twice - np.mod(low @ inverse, modulus), modulus), modulus)
        precision *= 2
    return inverse


def _odd_columns_for(width: int, bound_bits: int, digit_bits: float, size: int) -> int:
    """The chunk count that minimises the odd lifting's steps times their cost."""
    trial = 2 * (bound_bits + DIGIT_BITS) + _SAFETY_BITS

    def cost(count):
        steps = max(width / count + bound_bits + _SAFETY_BITS, trial) / digit_bits
        return steps * (_ODD_STEP_COST_FIXED + _ODD_STEP_COST_COLUMN * (count + 1)) * size * size

    return min(range(1, 33), key=cost)


def _base_digits(value, q: int, k: int, count: int):
    """``count`` little-endian digits of ``value >= 0`` in base ``q^k`` (int64)."""
    return text_as_digits(mpz(value).digits(q).encode(), q, k, count)


def _from_base_digits(digits, q: int, k: int) -> list:
    """The numbers whose little-endian base ``q^k`` digits are ``digits``' rows."""
    digits = np.ascontiguousarray(digits)
    text = digits_as_text(digits, q, k)
    width = digits.shape[1] * k
    return [mpz(text[i * width : (i + 1) * width], q) for i in range(len(digits))]


def _combined(digits, q: int, k: int):
    """``sum r_i z_i mod p^L`` for the numbers ``z_i`` whose base-``p`` digits are
    ``digits``' rows and random-looking ``r_i`` below 2^8 (`_scattered`): its denominator
    is the least common multiple of theirs, but for small primes that the combination
    happens to cancel (which a real column's check then finds)."""
    p = q**k
    weights = _scattered(len(digits), 8)
    total = weights @ digits  # below 2^8 n p: within int64 for n p < 2^55
    while (total >= p).any():  # carries, the last one dropped (mod p^L)
        carries = total // p
        total -= carries * p
        total[1:] += carries[:-1]
    return _from_base_digits(total[None, :], q, k)[0]


def _odd_read_out(expansion, q: int, k: int, steps: int, per_column: int, bound_bits: float):
    """``(m, d)`` from the lifted digits (column 0 the random side, then the chunks), or
    ``(None, None)`` where a reconstruction fails. ``d`` is the denominator of a random
    combination of the random side's solution (`_combined`), times any factor a chunk's
    entry shows it lacks (then the numerators read so far are multiplied by it too: each
    is ``d`` times a solution)."""
    modulus = mpz(q**k) ** steps
    half = modulus >> 1
    denominator = _rational(_combined(expansion[:, :, 0].T, q, k), modulus, gmpy2.isqrt(half))
    if denominator is None:
        return None, None
    bound = mpz(1) << math.ceil(bound_bits + _SAFETY_BITS // 2)
    _, size, width = expansion.shape
    shift = mpz(q**k) ** per_column
    numerators = [mpz(0)] * size
    for column in range(width - 1, 0, -1):
        chunk = _from_base_digits(expansion[:, :, column].T, q, k)
        for i, value in enumerate(chunk):
            scaled = (value * denominator) % modulus
            if bound < scaled < modulus - bound:  # a factor the random side's solution did not show
                factor = _rational(scaled, modulus, bound)
                if factor is None:
                    return None, None
                denominator *= factor
                numerators = [numerator * factor for numerator in numerators]
                scaled = (value * denominator) % modulus
            numerators[i] = numerators[i] * shift + (scaled - modulus if scaled > half else scaled)
    return numerators, denominator


def _rational(value, modulus, bound):
    """The least ``e > 0`` with ``e value mod modulus`` in ``[-bound, bound]`` and ``e``
    within ``modulus / (2 bound)`` (rational reconstruction by the extended Euclidean
    algorithm), or None."""
    r0, r1 = modulus, value
    t0, t1 = mpz(0), mpz(1)
    while r1 > bound:
        quotient, remainder = divmod(r0, r1)
        r0, r1 = r1, remainder
        t0, t1 = t1, t0 - quotient * t1
    factor = abs(t1)
    if factor == 0 or factor > modulus // (2 * bound):
        return None
    return factor


def _lowest_terms(numerators, denominator):
    """``(m / g, d / g)`` with ``g`` the gcd of them all, ``d > 0``."""
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
