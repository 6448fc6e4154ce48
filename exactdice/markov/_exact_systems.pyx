# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Small exact linear systems, compiled: fraction-free Gauss-Jordan elimination with A's
entries in 64-bit integers and the right sides in big integers.

The solver's loops (`exactdice.markov.arithmetic.ExactArithmetic.solve_values` and
`solve_vectors`) are systems A X = B where A = weight * I - P over a component's live
states: small integer entries, two or three a row, and a nonsingular M-matrix, so every
diagonal pivot is positive in any order (a principal submatrix of a nonsingular M-matrix
is one too; a pivot that is not positive only makes `eliminate` decline). The pivot is
chosen by Markowitz's rule (the least (row entries - 1) x (column entries - 1)), which
keeps the chain-like loops of a contest sparse. Each combined row of A is divided by the
gcd of its entries, which keeps them within 64 bits; its right side keeps that factor in
a scale of its own, cancelled where the right side shares it. The big integers meet A's
small ones: two products and a difference a combination, and an lcm of two rows' scales
where they differ.
"""

cimport cython
from cpython.number cimport PyIndex_Check
from libc.math cimport floor
from libc.stdint cimport INT64_MAX, int32_t, int64_t, uint64_t
from libc.stdlib cimport llabs
from libcpp.vector cimport vector

from exactdice.markov._loaded cimport loaded_symbol

import numpy
from gmpy2 import gcd, is_divisible, lcm, mpq, mpz

# CBLAS's dgemm with 64-bit integers (an ILP64 OpenBLAS, as numpy's wheels bundle it)
ctypedef void (*_dgemm_t)(int order, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                          int64_t ldc) noexcept nogil
DEF ROW_MAJOR = 101
DEF NO_TRANSPOSE = 111
cdef _dgemm_t _dgemm = NULL

cdef extern from *:
    """
    typedef __int128 exactdice_wide;
    /* A's entries are kept within +-(2^63 - 1): a combination of two fits in 128 bits */
    static inline exactdice_wide exactdice_combined(long long keep, long long mine, long long take,
                                                    long long theirs) {
        return (exactdice_wide)keep * mine - (exactdice_wide)take * theirs;
    }
    static inline exactdice_wide exactdice_wide_gcd(exactdice_wide a, exactdice_wide b) {
        if (a < 0) a = -a;
        if (b < 0) b = -b;
        while (b) { exactdice_wide t = a % b; a = b; b = t; }
        return a;
    }
    static inline unsigned long long exactdice_high(exactdice_wide value) {
        return (unsigned long long)((unsigned __int128)value >> 64);
    }
    static inline unsigned long long exactdice_low(exactdice_wide value) {
        return (unsigned long long)value;
    }
    static inline int exactdice_fits(exactdice_wide value) {
        return -(exactdice_wide)INT64_MAX <= value && value <= (exactdice_wide)INT64_MAX;
    }
    """
    ctypedef long long wide "exactdice_wide"  # 128 bits; Cython needs only its name
    bint fits "exactdice_fits"(wide value) nogil
    unsigned long long high "exactdice_high"(wide value) nogil
    unsigned long long low "exactdice_low"(wide value) nogil
    wide combined "exactdice_combined"(long long keep, long long mine, long long take, long long theirs) nogil
    wide wide_gcd "exactdice_wide_gcd"(wide a, wide b) nogil

_ONE = mpz(1)

#: systems with more rows than this are declined (a dense n x n table of A is kept here)
MAX_ROWS = 96


cdef inline int64_t _gcd(int64_t a, int64_t b) noexcept nogil:
    a, b = llabs(a), llabs(b)
    while b:
        a, b = b, a % b
    return a


@cython.final
cdef class _Elimination:
    """A being eliminated (an n x n table of 64-bit entries, each row divided by its
    entries' gcd) and B beside it, row i of B standing for ``sums[i] / scales[i]``."""

    cdef Py_ssize_t size, width
    cdef vector[int64_t] a
    cdef vector[wide] combination
    cdef vector[int] entries  # nonzero entries of each row
    cdef vector[int] column_entries  # ... and of each column
    cdef list sums, scales

    cdef bint fill(self, list rows, list right_sides) except -1:
        """Read A and B; False when a row is no dict, or an entry of A is no integer,
        passes 64 bits or names no column."""
        cdef Py_ssize_t size = len(rows), i, j
        self.size, self.width = size, len(right_sides[0])
        self.a.assign(size * size, 0)
        self.combination.assign(size, 0)
        self.entries.assign(size, 0)
        self.column_entries.assign(size, 0)
        for i in range(size):
            if not isinstance(rows[i], dict):
                return False
            for column, coefficient in (<dict>rows[i]).items():
                if not PyIndex_Check(coefficient) or not -INT64_MAX <= coefficient <= INT64_MAX:
                    return False  # a Fraction or a float would be truncated
                j = column
                if not 0 <= j < size:
                    return False
                self.a[i * size + j] = coefficient
                if coefficient:
                    self.entries[i] += 1
                    self.column_entries[j] += 1
        self.sums = [list(row) for row in right_sides]
        self.scales = [1] * size
        return True

    cdef Py_ssize_t sparsest(self, vector[char]& done):
        """Markowitz's rule: the pivot whose row and column are sparsest (the least fill)."""
        cdef Py_ssize_t i, pivot = -1
        cdef int64_t cost, best_cost = 0
        for i in range(self.size):
            cost = (self.entries[i] - 1) * <int64_t>(self.column_entries[i] - 1)
            if not done[i] and (pivot < 0 or cost < best_cost):
                pivot, best_cost = i, cost
        return pivot

    cdef bint combine(self, Py_ssize_t r, Py_ssize_t pivot) except -1:
        """Row r <- keep * row r - take * pivot row, clearing A[r, pivot]; False when an
        entry would pass 64 bits or the row becomes zeros (A is singular)."""
        cdef Py_ssize_t size = self.size, c, j
        cdef int64_t p = self.a[pivot * size + pivot], f = self.a[r * size + pivot]
        cdef int64_t shared = _gcd(p, f)
        cdef int64_t keep = p // shared, take = f // shared
        cdef wide common = 0, value
        self.entries[r] = 0
        for c in range(size):  # entries are within 64 bits: each combination fits in 128
            value = combined(keep, self.a[r * size + c], take, self.a[pivot * size + c])
            self.combination[c] = value
            self.column_entries[c] += (value != 0) - (self.a[r * size + c] != 0)
            if value != 0:
                self.entries[r] += 1
                if common != 1:
                    if fits(common) and fits(value):
                        common = _gcd(<int64_t>common, <int64_t>value)
                    else:
                        common = wide_gcd(common, value)
        if self.entries[r] == 0:  # a row of zeros: A is singular
            return False
        for c in range(size):
            value = self.combination[c]
            if common != 1 and value != 0:
                value = value // common
            if not fits(value):
                return False
            self.a[r * size + c] = <int64_t>value
        # the row's common factor (positive) may pass 64 bits even when its entries do not
        if fits(common):
            common_factor = <int64_t>common
        else:
            common_factor = (<object>high(common)) << 64 | <object>low(common)
        cdef list target = self.sums[r], source = self.sums[pivot]
        scale, pivot_scale = self.scales[r], self.scales[pivot]
        if scale == pivot_scale:
            for j in range(self.width):
                target[j] = keep * target[j] - take * source[j]
        else:
            both = lcm(scale, pivot_scale)
            mine, theirs = keep * (both // scale), take * (both // pivot_scale)
            for j in range(self.width):
                target[j] = mine * target[j] - theirs * source[j]
            scale = both
        if common_factor != 1:
            cancelled = gcd(common_factor, *target)
            if cancelled != 1:
                for j in range(self.width):
                    target[j] //= cancelled
            scale = scale * (common_factor // cancelled)
        self.scales[r] = scale
        return True


def eliminate(list rows, list right_sides):
    """Solve A X = B. ``rows[i]`` maps column -> integer coefficient of A; ``right_sides[i]``
    lists row i of B (integers, all rows the same width). Returns ``(divisors, sums)``:
    X[i][j] = sums[i][j] / divisors[i], not reduced, every divisor positive; or None
    when A is not of the kind this serves (more than `MAX_ROWS` rows, an entry that is no
    integer or passes 64 bits, a pivot that is not positive, a singular A): the caller
    then solves it another way.

    Gauss-Jordan elimination in Markowitz's order, each step fraction-free row
    combinations (`_Elimination.combine`). (Forward elimination and back substitution
    made fewer combinations but longer right sides: 3x slower on a contest's loops.)

    >>> eliminate([{0: 2, 1: -1}, {1: 1}], [[1], [3]])  # x = 2 / 1, y = 3 / 1
    ([mpz(1), 1], [[mpz(2)], [3]])
    """
    cdef Py_ssize_t size = len(rows), step, r, pivot
    if size == 0:
        return [], []
    if size > MAX_ROWS:
        return None
    cdef _Elimination work = _Elimination()
    if not work.fill(rows, right_sides):
        return None
    cdef vector[char] done = vector[char](size, 0)
    for step in range(size):
        pivot = work.sparsest(done)
        if work.a[pivot * size + pivot] <= 0:
            return None
        done[pivot] = 1
        for r in range(size):
            if r != pivot and work.a[r * size + pivot] != 0:
                if not work.combine(r, pivot):
                    return None
    return [work.a[r * size + r] * work.scales[r] for r in range(size)], work.sums


cdef tuple _over_common(list right_sides):
    """``(common, scaled)``: the right sides ``(numerators, denominator)`` over their
    least common denominator."""
    common = _ONE
    for _, denominator in right_sides:
        if denominator != common and not is_divisible(common, denominator):
            common = lcm(common, denominator)
    cdef list scaled = []
    for numerators, denominator in right_sides:
        if denominator == common:
            scaled.append(list(numerators))
        else:
            factor = common // denominator
            scaled.append([value * factor for value in numerators])
    return common, scaled


def solve_values(list rows, list right_sides):
    """The values x of A x = b, each an ``mpq``, for b given as ``(numerator,
    denominator)`` pairs; None where `eliminate` does not serve.

    >>> solve_values([{0: 2, 1: -1}, {1: 1}], [(1, 3), (1, 2)])
    [mpq(5,12), mpq(1,2)]
    """
    common, scaled = _over_common([((numerator,), denominator) for numerator, denominator in right_sides])
    solved = eliminate(rows, scaled)
    if solved is None:
        return None
    return [mpq(sums[0], divisor * common) for divisor, sums in zip(*solved)]


def solve_vectors(list rows, list right_sides):
    """Each row of X in A X = B as ``(numerators, denominator)`` in lowest terms, for B's
    rows given as ``(numerators, denominator)``; None where `eliminate` does not serve."""
    common, scaled = _over_common(right_sides)
    solved = eliminate(rows, scaled)
    if solved is None:
        return None
    cdef list result = []
    for divisor, sums in zip(*solved):
        denominator = divisor * common
        shared = gcd(denominator, *sums)
        if shared != 1:
            result.append((tuple([value // shared for value in sums]), denominator // shared))
        else:
            result.append((tuple([mpz(value) for value in sums]), mpz(denominator)))
    return result


def _bind_blas():
    """Find the ILP64 ``cblas_dgemm`` of the BLAS numpy itself loaded (searched from
    numpy's core module, whose dependency it is), checked on a known product; else left
    unbound (`lift_digits` then declines and numpy's loop serves)."""
    global _dgemm
    try:
        from numpy._core import _multiarray_umath as core
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as core
    path = getattr(core, "__file__", None)
    if path is None:
        return
    library = path.encode()
    cdef _dgemm_t found = NULL
    for name in (b"scipy_cblas_dgemm64_", b"cblas_dgemm64_"):
        found = <_dgemm_t>loaded_symbol(library, name)
        if found != NULL:
            break
    if found == NULL:
        return
    cdef double[:, ::1] a = numpy.arange(6.0).reshape(2, 3), b = numpy.arange(12.0).reshape(3, 4)
    product = numpy.zeros((2, 4))
    cdef double[:, ::1] c = product
    found(ROW_MAJOR, NO_TRANSPOSE, NO_TRANSPOSE, 2, 4, 3, 1.0, &a[0, 0], 3, &b[0, 0], 4, 0.0, &c[0, 0], 4)
    if (product == numpy.asarray(a) @ numpy.asarray(b)).all():
        _dgemm = found


_bind_blas()


def blas_found():
    """Whether `lift_digits` found numpy's BLAS (else it declines)."""
    return _dgemm != NULL


def lift_digits(const double[:, ::1] inverse, const double[:, ::1] stacked, const double[:, :, ::1] right):
    """`exactdice.markov.lifting._lift`'s steps in one compiled loop: the same float64
    operations in the same order (every one exact), the two products by numpy's own
    BLAS, without a numpy call a step. None where that BLAS was not found.

    >>> import numpy  # 3 x = 7, two digits: x = 7 / 3 mod 2^32 = 43693 + 43690 * 2^16
    >>> inverse, stacked = numpy.array([[43691.0]]), numpy.array([[3.0], [0.0]])  # 1 / 3 mod 2^16; A = 3
    >>> right = numpy.zeros((2, 1, 1)); right[0, 0, 0] = 7
    >>> lift_digits(inverse, stacked, right).ravel().tolist()
    [43693.0, 43690.0]
    """
    if _dgemm == NULL:
        return None
    cdef Py_ssize_t steps = right.shape[0], size = right.shape[1], columns = right.shape[2]
    if inverse.shape[0] != size or inverse.shape[1] != size or stacked.shape[0] != 2 * size or stacked.shape[1] != size:
        raise ValueError("lift_digits: inverse must be n x n and stacked 2n x n for a right side of n rows")
    cdef Py_ssize_t width = size * columns, k, i
    out = numpy.empty((steps, size, columns))
    cdef double[:, :, ::1] digits = out
    cdef vector[double] carry = vector[double](width, 0.0), u = vector[double](width)
    cdef vector[double] low_part = vector[double](width), product = vector[double](2 * width)
    cdef double scale = 1.0 / 65536.0, base = 65536.0, x
    if steps == 0 or width == 0:
        return out
    with nogil:
        for k in range(steps):
            for i in range(width):  # u = digit + carry, and u mod 2^16
                u[i] = (&right[k, 0, 0])[i] + carry[i]
                low_part[i] = u[i] - floor(u[i] * scale) * base
            _dgemm(ROW_MAJOR, NO_TRANSPOSE, NO_TRANSPOSE, size, columns, size, 1.0, &inverse[0, 0], size,
                   low_part.data(), columns, 0.0, &digits[k, 0, 0], columns)
            for i in range(width):  # the digit: C (u mod 2^16) mod 2^16
                x = (&digits[k, 0, 0])[i]
                (&digits[k, 0, 0])[i] = x - floor(x * scale) * base
            _dgemm(ROW_MAJOR, NO_TRANSPOSE, NO_TRANSPOSE, 2 * size, columns, size, 1.0, &stacked[0, 0], size,
                   &digits[k, 0, 0], columns, 0.0, product.data(), columns)
            for i in range(width):  # the next carry: (u - lo x) / 2^16 - 16 hi x
                carry[i] = (u[i] - product[i]) * scale - product[width + i]
    return out


def lift_odd_digits(const double[:, ::1] inverse, const int64_t[::1] offsets, const int32_t[::1] columns,
                    const int64_t[::1] entries, const int64_t[:, :, ::1] right, int64_t modulus):
    """The ``p``-adic digits (``steps x n x m``, each in [0, p)) of ``A^-1`` times the
    right side whose base-``p`` digits ``right`` holds, for an odd ``p``
    (`exactdice.markov.lifting.solve_by_odd_lifting`): ``x_k = C (u mod p) mod p`` with
    ``u`` the k-th digit plus the carry, then the carry ``(u - A x_k) / p``.

    ``C = A^-1 mod p`` (float64, with ``n (p - 1)^2 < 2^53``: its product, by numpy's own
    BLAS, is exact); ``A`` in compressed rows (``offsets``, ``columns``, ``entries``).
    ``u - A x_k`` is computed modulo 2^64 and divided by ``p`` exactly by multiplying by
    ``p``'s inverse modulo 2^64: right wherever the carry itself fits in 63 bits, which
    holds while every row's absolute sum of ``A`` is below 2^61 (the caller keeps it below
    2^60, and ``n (p - 1)^2`` below 2^52). None where that BLAS was not found. The arrays
    are trusted (an internal helper: no bounds are checked).

    >>> import numpy  # 3 x = 7 mod 5^2: x = 19 = 4 + 3 * 5 (3 * 19 = 57 = 7 + 2 * 25)
    >>> inverse = numpy.array([[2.0]])  # 1 / 3 mod 5
    >>> right = numpy.zeros((2, 1, 1), dtype=numpy.int64); right[0, 0, 0] = 7 % 5; right[1, 0, 0] = 7 // 5
    >>> offsets, columns, entries = numpy.array([0, 1]), numpy.array([0], dtype=numpy.int32), numpy.array([3])
    >>> lift_odd_digits(inverse, offsets, columns, entries, right, 5).ravel().tolist()
    [4, 3]
    """
    if _dgemm == NULL:
        return None
    cdef Py_ssize_t steps = right.shape[0], size = right.shape[1], width = right.shape[2]
    if inverse.shape[0] != size or inverse.shape[1] != size or offsets.shape[0] != size + 1:
        raise ValueError("lift_odd_digits: inverse must be n x n and A n rows for a right side of n rows")
    if modulus < 3 or modulus % 2 == 0:
        raise ValueError("lift_odd_digits: the modulus must be odd and at least 3")
    cdef Py_ssize_t cells = size * width, k, i, row, c, e
    out = numpy.empty((steps, size, width), dtype=numpy.int64)
    cdef int64_t[:, :, ::1] digits = out
    cdef vector[int64_t] carry = vector[int64_t](cells, 0), u = vector[int64_t](cells)
    cdef vector[double] residue = vector[double](cells), product = vector[double](cells)
    cdef uint64_t inverse_of_modulus = modulus, total  # Newton's iteration for p^-1 mod 2^64
    for _ in range(6):
        inverse_of_modulus *= 2 - <uint64_t>modulus * inverse_of_modulus
    cdef double base = <double>modulus, scale = 1.0 / base, x
    cdef int64_t r
    cdef int64_t* digit
    if steps == 0 or cells == 0:
        return out
    with nogil:
        for k in range(steps):
            for i in range(cells):  # u = digit + carry, and u mod p
                u[i] = (&right[k, 0, 0])[i] + carry[i]
                r = u[i] % modulus
                residue[i] = <double>(r + modulus if r < 0 else r)
            _dgemm(ROW_MAJOR, NO_TRANSPOSE, NO_TRANSPOSE, size, width, size, 1.0, &inverse[0, 0], size,
                   residue.data(), width, 0.0, product.data(), width)
            digit = &digits[k, 0, 0]
            for i in range(cells):  # the digit: C (u mod p) mod p
                x = product[i] - floor(product[i] * scale) * base
                if x < 0:
                    x += base
                elif x >= base:
                    x -= base
                digit[i] = <int64_t>x
            for row in range(size):  # the next carry: (u - A x) / p, exactly
                for c in range(width):
                    total = <uint64_t>u[row * width + c]
                    for e in range(offsets[row], offsets[row + 1]):
                        total -= <uint64_t>entries[e] * <uint64_t>digit[columns[e] * width + c]
                    carry[row * width + c] = <int64_t>(total * inverse_of_modulus)
    return out


cdef const char* _LETTERS = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def digits_as_text(const int64_t[:, ::1] digits, int base, int letters_per_digit):
    """Each row of little-endian digits in base ``base^letters_per_digit`` (each in
    [0, base^letters_per_digit)) as text in base ``base`` (most significant letter first,
    zeros included), every row ``columns * letters_per_digit`` letters: one ``bytes`` of
    all the rows, which ``gmpy2.mpz(text, base)`` reads row by row.

    >>> import numpy  # 5 + 3 * 9 = 32 = 1012 in base 3
    >>> digits_as_text(numpy.array([[5, 3]]), 3, 2)
    b'1012'
    """
    if base < 2 or base > 62 or letters_per_digit < 1:
        raise ValueError("digits_as_text: base must be 2-62 and letters_per_digit at least 1")
    cdef Py_ssize_t rows = digits.shape[0], columns = digits.shape[1], width = columns * letters_per_digit
    cdef Py_ssize_t row, column, letter, at
    cdef int64_t value
    text = bytearray(rows * width)
    cdef unsigned char[::1] out = text
    with nogil:
        for row in range(rows):
            at = row * width + width - 1
            for column in range(columns):
                value = digits[row, column]
                for letter in range(letters_per_digit):
                    out[at] = _LETTERS[value % base]
                    value //= base
                    at -= 1
    return bytes(text)


def text_as_digits(const unsigned char[::1] text, int base, int letters_per_digit, Py_ssize_t count):
    """``count`` little-endian digits in base ``base^letters_per_digit`` (int64) of a
    number written in base ``base`` (gmpy2's letters: 0-9, A-Z, a-z), the inverse of
    `digits_as_text` for one row; an error if the number needs more digits.

    >>> text_as_digits(b'1012', 3, 2, 3).tolist()
    [5, 3, 0]
    """
    if base < 2 or base > 62 or letters_per_digit < 1:
        raise ValueError("text_as_digits: base must be 2-62 and letters_per_digit at least 1")
    cdef Py_ssize_t length = text.shape[0], position, at
    if length > count * letters_per_digit:
        raise ValueError("text_as_digits: the number has more digits than asked for")
    out = numpy.zeros(count, dtype=numpy.int64)
    cdef int64_t[::1] digits = out
    cdef int64_t value, scale
    cdef unsigned char letter
    with nogil:
        for position in range(length):  # from the least significant letter
            letter = text[length - 1 - position]
            if letter <= 57:
                value = letter - 48
            elif letter <= 90:
                value = letter - 55
            else:
                value = letter - 61
            at = position // letters_per_digit
            scale = 1
            for _ in range(position % letters_per_digit):
                scale *= base
            digits[at] += value * scale
    return out
