# cython: language_level=3, boundscheck=False, wraparound=False
# distutils: language = c++
"""GMP's one-limb loops chosen by what this CPU can do, not by its model's name.

gmpy2's wheels carry a "fat" GMP: it picks each inner loop by the CPU's model when it
first runs, and falls back to its generic x86-64 loops for a model it does not know, as
on a virtual machine that names its CPU "Intel(R) Xeon(R) Processor". The exact passes
spend most of their time in one of those loops, ``mpn_addmul_1`` (a wide number times a
weight, added: every edge). Where the CPU has BMI2 and ADX (Broadwell and later, Zen),
GMP's own Broadwell loops (``mulx``, ``adcx``, ``adox``) are 1.3x faster at it:
`use_cpu_loops` puts them in GMP's dispatch table (``__gmpn_cpuvec``) in place of the
generic ones. A slot is changed only where it holds exactly the generic loop (the table's
size read from the dynamic linker), and the change is kept only if the loops then agree
with Python's own integers on random and all-ones limbs of every length modulo 8; else the
table is left as GMP set it. ``EXACTDICE_GMP_CPU_LOOPS=0`` keeps GMP's own choice.

>>> sorted(use_cpu_loops(False))
[]
>>> use_cpu_loops(True) == use_cpu_loops(True)
True
"""

from libc.stdint cimport uint64_t, uintptr_t
from libcpp.vector cimport vector

from exactdice.markov._loaded cimport loaded_symbol

import os
import random

cdef extern from *:
    """
    #include <dlfcn.h>
    #include <link.h>
    /* the size in bytes of the symbol at address, from the dynamic linker (0: unknown) */
    static size_t exactdice_symbol_size(void* address) {
        Dl_info info;
        const ElfW(Sym)* symbol = NULL;
        if (!dladdr1(address, &info, (void**)&symbol, RTLD_DL_SYMENT) || symbol == NULL) return 0;
        return (size_t)symbol->st_size;
    }
    """
    size_t symbol_size "exactdice_symbol_size"(void* address) nogil

from gmpy2 import mpz

#: the loops swapped, and the variants tried for each (the first one GMP has)
_VARIANTS = {b"addmul_1": (b"coreibwl", b"coreihwl"), b"submul_1": (b"coreibwl", b"coreihwl"), b"mul_1": (b"coreibwl",)}
#: set to 0 to keep GMP's own choice of loops
OPT_OUT = "EXACTDICE_GMP_CPU_LOOPS"
cdef void** _table = NULL
cdef list _slots = []  # (name, index, generic, fast): addresses as ints


def _cpu_flags() -> set:
    """The CPU's feature flags, from Linux's /proc/cpuinfo (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _find_slots():
    """The dispatch table's slots of the generic loops, with their faster variants, where
    this CPU runs them (BMI2 and ADX) and the GMP gmpy2 loaded is a fat one."""
    global _table
    import gmpy2.gmpy2 as extension

    if os.environ.get(OPT_OUT) == "0" or not {"bmi2", "adx"} <= _cpu_flags():
        return
    library = extension.__file__.encode()
    table = <void**>loaded_symbol(library, b"__gmpn_cpuvec")
    ready = <int*>loaded_symbol(library, b"__gmpn_cpuvec_initialized")
    if table == NULL or ready == NULL:
        return
    cdef size_t words = symbol_size(<void*>table) // sizeof(void*)  # (read, not assumed)
    mpz(3) ** 300 * mpz(7) ** 300 + 1  # any GMP work fills its table first
    if not ready[0]:
        return
    cdef void* generic
    cdef void* fast
    for name, variants in _VARIANTS.items():
        generic = loaded_symbol(library, b"__gmpn_" + name + b"_x86_64")
        fast = NULL
        for variant in variants:
            fast = loaded_symbol(library, b"__gmpn_" + name + b"_" + variant)
            if fast != NULL:
                break
        if generic == NULL or fast == NULL:
            continue
        places = [i for i in range(words) if table[i] == generic]
        if len(places) == 1:
            _slots.append((name.decode(), places[0], <uintptr_t>generic, <uintptr_t>fast))
    if _slots:
        _table = table


ctypedef uint64_t (*_limb_loop)(uint64_t* result, const uint64_t* value, long size, uint64_t factor) noexcept nogil


def _agrees() -> bool:
    """GMP's entry points for the swapped loops (which go through its table) give what
    Python's own integers give, on random limbs of several lengths: ``r + u v``,
    ``r - u v`` and ``u v`` with the carry or borrow out."""
    import gmpy2.gmpy2 as extension

    library = extension.__file__.encode()
    cdef _limb_loop add = <_limb_loop>loaded_symbol(library, b"__gmpn_addmul_1")
    cdef _limb_loop subtract = <_limb_loop>loaded_symbol(library, b"__gmpn_submul_1")
    cdef _limb_loop multiply = <_limb_loop>loaded_symbol(library, b"__gmpn_mul_1")
    if add == NULL or subtract == NULL or multiply == NULL:
        return False
    draw = random.Random(20261130)
    cdef vector[uint64_t] result, value
    cdef uint64_t factor, out
    cdef long size, i
    for size in (*range(1, 18), 64, 1000, 1001):  # every entry of loops unrolled 8 ways
        for loop in range(6):
            ones = loop >= 3  # all-ones limbs and factor: every carry taken
            value = [2**64 - 1 if ones else draw.getrandbits(64) for _ in range(size)]
            result = [2**64 - 1 if ones else draw.getrandbits(64) for _ in range(size)]
            factor = 2**64 - 1 if ones else draw.getrandbits(64)
            loop %= 3
            start, times = _number(result, size), _number(value, size) * factor
            if loop == 0:
                out, expected = add(result.data(), value.data(), size, factor), start + times
            elif loop == 1:
                out, expected = subtract(result.data(), value.data(), size, factor), start - times
            else:
                out, expected = multiply(result.data(), value.data(), size, factor), times
            carried = int(out) << (64 * int(size))  # (in Python's integers, not C's)
            found = _number(result, size) + (-carried if loop == 1 else carried)
            if found != expected:
                return False
    return True


cdef object _number(vector[uint64_t]& limbs, long size):
    """The number the first ``size`` limbs stand for (least significant first)."""
    cdef long i
    total = 0
    for i in range(size - 1, -1, -1):
        total = (total << 64) | limbs[i]
    return total


def available() -> list:
    """The loops `use_cpu_loops` can swap here (empty where the CPU, GMP or the
    environment, ``EXACTDICE_GMP_CPU_LOOPS=0``, does not allow it)."""
    return [name for name, *_ in _slots] if _table != NULL else []


def use_cpu_loops(bint wanted) -> list:
    """Put the faster loops in GMP's table (``wanted``) or the generic ones back; returns
    the names of the loops now swapped in (empty: none, or this CPU or GMP does not allow
    it, or the check on random numbers failed and the table was put back)."""
    if _table == NULL:
        return []
    for name, index, generic, fast in _slots:
        _table[index] = <void*><uintptr_t>(fast if wanted else generic)
    if wanted and not _agrees():
        use_cpu_loops(False)
        return []
    return [name for name, *_ in _slots] if wanted else []


_find_slots()
