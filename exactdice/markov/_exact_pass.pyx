# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The exact passes' loops over a graph's acyclic states, compiled.

`exactdice.markov.solver._Solver` keeps each state's value as ``(numerator,
denominator)`` (gmpy2 integers). Most states of a Karbon graph are components of one
state without a self-loop: a chance node's value is sum(weight * successor) / total, a
decision node's is its first best successor's. This loop does those states over the
graph's CSR arrays with the same integer operations, in the same order, as the Python
methods it stands in for (`_Solver.solve_single`, `ExactArithmetic.scalar_combine`), so
both give the identical numbers; the integers themselves stay gmpy2's. The forward pass
of expected visits (`exactdice.markov.expected_visits.ExpectedVisits`) is done the same
way. Cyclic components, and
states with weights past 64 bits, go back to the solver's Python.
"""

cimport cython
from cpython.object cimport PyObject
from libc.stdint cimport int64_t, int32_t, uint8_t
from libcpp.vector cimport vector

from exactdice.markov._loaded cimport loaded_symbol

import numpy

try:
    from exactdice.markov._gmp_cpu import use_cpu_loops
except ImportError:  # that extension alone not built: GMP's loops as it chose them
    use_cpu_loops = None
from gmpy2 import gcd, lcm, mpz

from exactdice.limits import check_memory

ctypedef struct _Mpz:  # GMP's __mpz_struct
    int alloc
    int size
    void* limbs

ctypedef struct _MpzBody:  # what follows the object's header in gmpy2's MPZ_Object
    _Mpz number
    Py_hash_t hash_cache  # -1: not computed

ctypedef void (*_addmul_ui_t)(_Mpz* total, const _Mpz* value, unsigned long factor) noexcept nogil
ctypedef void (*_addmul_t)(_Mpz* total, const _Mpz* value, const _Mpz* factor) noexcept nogil
# bound by `_bind_gmp`; NULL: every sum makes new numbers (`use_gmp(False)` for tests)
cdef _addmul_ui_t _addmul_ui = NULL
cdef _addmul_ui_t _submul_ui = NULL
cdef _addmul_t _addmul = NULL
cdef _addmul_ui_t _found_addmul_ui = NULL
cdef _addmul_ui_t _found_submul_ui = NULL
cdef _addmul_t _found_addmul = NULL


cdef inline _MpzBody* _body_of(object value) noexcept:
    return <_MpzBody*>(<char*><PyObject*>value + sizeof(PyObject))


cdef inline _Mpz* _mpz_of(object value) noexcept:
    """The GMP number inside a gmpy2 ``mpz`` (its struct: the object's header, then it)."""
    return &_body_of(value).number


cdef inline bint _owned(object value, Py_ssize_t holders) noexcept:
    """Whether ``value`` is an ``mpz`` that nothing holds but the caller's ``holders``
    references: then changing it in place changes no number anyone else sees."""
    return type(value) is mpz and (<PyObject*>value).ob_refcnt == holders


cdef inline bint _grow(object total, object value, int64_t factor) noexcept:
    """``total += factor * value`` in place, where GMP is bound and both are ``mpz``
    (``total`` held by the caller alone, `_owned`); False: nothing done."""
    if _addmul_ui == NULL or type(total) is not mpz or type(value) is not mpz:
        return False
    if factor >= 0:
        _addmul_ui(_mpz_of(total), _mpz_of(value), <unsigned long>factor)
    else:
        _submul_ui(_mpz_of(total), _mpz_of(value), <unsigned long>(-(factor + 1)) + 1)
    _body_of(total).hash_cache = -1
    return True


cdef inline bint _grow_by(object total, object value, object factor) noexcept:
    """``total += factor * value`` in place for a big ``factor``, as `_grow`."""
    if _addmul == NULL or type(total) is not mpz or type(value) is not mpz or type(factor) is not mpz:
        return False
    _addmul(_mpz_of(total), _mpz_of(value), _mpz_of(factor))
    _body_of(total).hash_cache = -1
    return True


cdef object _add_product(object total, object value, int64_t factor, Py_ssize_t holders=2):
    """``total + factor * value``: in place when only ``holders`` references hold
    ``total`` (default: the caller's variable and one container; `_owned`), else a new
    number."""
    if _owned(total, holders) and _grow(total, value, factor):
        return total
    return total + factor * value


def _bind_gmp():
    """Find ``mpz_addmul_ui``, ``mpz_submul_ui`` and ``mpz_addmul`` in the GMP that gmpy2
    itself loaded, so that a sum of products grows one number in place instead of making
    two new ones a term; each checked on known values (the object layout assumed) before
    it is used, else left unbound (the sums then make new numbers, as Python does)."""
    global _found_addmul_ui, _found_submul_ui, _found_addmul
    import gmpy2.gmpy2 as extension

    library = extension.__file__.encode()
    by_small = <_addmul_ui_t>loaded_symbol(library, b"__gmpz_addmul_ui")
    less_small = <_addmul_ui_t>loaded_symbol(library, b"__gmpz_submul_ui")
    by_big = <_addmul_t>loaded_symbol(library, b"__gmpz_addmul")
    if by_small == NULL or less_small == NULL or by_big == NULL or sizeof(unsigned long) < 8:
        return  # (a 64-bit weight must fit GMP's unsigned long)
    start = mpz(11) ** 60
    cdef Py_hash_t known = hash(start)
    if _body_of(start).hash_cache != known or _mpz_of(start).size != 4:  # 208 bits: 4 limbs
        return
    for value in (mpz(3) ** 200, -(mpz(7) ** 90), mpz(5), mpz(0)):
        total, less, other = start + 0, start + 0, start + 0
        by_small(_mpz_of(total), _mpz_of(value), 123456789)
        less_small(_mpz_of(less), _mpz_of(value), 987654321)
        by_big(_mpz_of(other), _mpz_of(value), _mpz_of(-start))
        if total != start + value * 123456789 or less != start - value * 987654321 or other != start - value * start:
            return
    _found_addmul_ui, _found_submul_ui, _found_addmul = by_small, less_small, by_big
    use_gmp(True)


def summed_parts(list parts):
    """`exactdice.markov.forward.summed_parts` (a loop's right sides: per member, the sum
    of amount, or amount * scale), each sum grown in place where GMP is bound and the
    numbers are ``mpz`` (otherwise summed as Python sums them).

    >>> summed_parts([[(mpz(2), None), (mpz(3), mpz(5))], []])
    [mpz(17), mpz(0)]
    """
    cdef list sums = [], member
    cdef object total, amount, scale
    for member in parts:
        total = mpz()
        for amount, scale in member:
            if scale is None:
                total = _add_product(total, amount, 1, 1)
            elif not (_owned(total, 1) and _grow_by(total, amount, scale)):
                total = total + amount * scale
        sums.append(total)
    return sums


def row_total(dict row, list values):
    """sum(entry * values[column] for column, entry in row.items()): a loop's row times
    its solution, checked against the right side (`exactdice.markov.forward.solve_block`),
    grown in place where GMP is bound.

    >>> row_total({0: 2, 1: -3}, [mpz(10), mpz(4)])
    mpz(8)
    """
    cdef object total = mpz(), value
    cdef object column, entry
    for column, entry in row.items():
        value = values[column]
        if type(entry) is int and -(2**63) <= entry < 2**63:
            total = _add_product(total, value, entry, 1)
        else:
            total = total + entry * value
    return total


def use_gmp(bint wanted) -> bool:
    """Grow sums in place with GMP (where `_bind_gmp` found it) or make new numbers as
    Python does (False; the tests compare the two); returns whether GMP is now in use."""
    global _addmul_ui, _submul_ui, _addmul
    if wanted:
        _addmul_ui, _submul_ui, _addmul = _found_addmul_ui, _found_submul_ui, _found_addmul
    else:
        _addmul_ui = _submul_ui = NULL
        _addmul = NULL
    return _addmul_ui != NULL


_bind_gmp()
if use_cpu_loops is not None:
    use_cpu_loops(True)  # GMP's faster loops where its fat build did not know this CPU's model


DEF TERMINAL = 0
DEF CHANCE = 1
DEF DECISION = 2
# acyclic states between two memory checks (which also enforce time limits) and progress
# updates; a cyclic component is checked before it is solved
DEF CHECK_EVERY = 4096
_ZERO, _ONE = mpz(0), mpz(1)


def backward_values(solver, list components, csr, bar):
    """Solve ``components`` (sinks first) into ``solver``'s values: acyclic states here,
    the others through ``solver.solve_cycle`` and ``solver.solve_single``."""
    cdef const uint8_t[::1] kind = csr.kind
    cdef const int64_t[::1] data = csr.data
    cdef const int64_t[::1] offsets = csr.offsets
    cdef const int32_t[::1] targets = csr.targets
    cdef const int64_t[::1] weights = csr.weights
    cdef unsigned char[::1] alive = solver.alive
    cdef dict big = csr.big
    cdef list nums = solver.nums
    cdef list dens = solver.dens
    cdef dict chosen = solver.chosen_edge
    cdef list terminal_values = solver.terminal_vectors
    cdef Py_ssize_t node, edge, low, high, since_check = 0
    cdef bint looping
    cdef list component
    for component in components:
        if len(component) == 1:
            node = component[0]
            low, high = offsets[node], offsets[node + 1]
            looping = False
            for edge in range(low, high):
                if targets[edge] == node:
                    looping = True
                    break
            if not looping:
                if kind[node] == TERMINAL:
                    nums[node], dens[node] = terminal_values[data[node]]
                    alive[node] = 1
                elif big and node in big:
                    solver.solve_single(node)
                elif kind[node] == CHANCE:
                    _chance_value(node, low, high, data[node], targets, weights, alive, nums, dens)
                else:
                    edge = _first_best_edge(low, high, data[node], targets, nums, dens)
                    chosen[node] = edge
                    nums[node] = nums[targets[edge]]
                    dens[node] = dens[targets[edge]]
                    alive[node] = alive[targets[edge]]
                since_check += 1
                if since_check == CHECK_EVERY:
                    check_memory("while solving")
                    if bar is not None:
                        bar.update(since_check)
                    since_check = 0
                continue
        check_memory("while solving")
        solver.solve_cycle(component)
        if bar is not None:
            bar.update(len(component))
    if bar is not None and since_check:
        bar.update(since_check)


cdef int _chance_value(
    Py_ssize_t node,
    Py_ssize_t low,
    Py_ssize_t high,
    int64_t total,
    const int32_t[::1] targets,
    const int64_t[::1] weights,
    unsigned char[::1] alive,
    list nums,
    list dens,
) except -1:
    """sum(weight * value) / total over the node's edges, terms summed per distinct
    denominator first and cancelling only what ``total`` shares with the numerator (as
    `ExactArithmetic.scalar_combine`)."""
    cdef Py_ssize_t edge, target
    cdef unsigned char reaches_end = 0
    cdef object first_denominator = None, first_sum = None, denominator, numerator, divisor
    cdef dict by_denominator = None
    for edge in range(low, high):
        target = targets[edge]
        denominator = dens[target]
        reaches_end |= alive[target]
        if by_denominator is None:
            if first_denominator is None:
                first_denominator, first_sum = denominator, weights[edge] * nums[target]
                continue
            if denominator is first_denominator or denominator == first_denominator:
                # first_sum: a number made here, held by this variable alone
                first_sum = _add_product(first_sum, nums[target], weights[edge], 1)
                continue
            by_denominator = {first_denominator: first_sum}
        by_denominator[denominator] = by_denominator.get(denominator, 0) + weights[edge] * nums[target]
    if by_denominator is None:
        numerator, denominator = first_sum, first_denominator
    else:
        denominator = lcm(*by_denominator)
        numerator = sum([part * (denominator // each) for each, part in by_denominator.items()])
    divisor = gcd(total, numerator)
    if divisor != 1:
        nums[node] = numerator // divisor
        dens[node] = denominator * (total // divisor)
    else:
        nums[node] = numerator
        dens[node] = denominator * total
    alive[node] = reaches_end
    return 0


cdef Py_ssize_t _first_best_edge(
    Py_ssize_t low, Py_ssize_t high, int64_t side, const int32_t[::1] targets, list nums, list dens
) except -1:
    """The first edge whose target's value is best for ``side`` (as
    `_Solver.first_best_value`: numerator times the other denominator)."""
    cdef Py_ssize_t edge, best_edge = low
    cdef object best_num = nums[targets[low]], best_den = dens[targets[low]], num, den
    for edge in range(low + 1, high):
        num, den = nums[targets[edge]], dens[targets[edge]]
        if (num * best_den - best_num * den) * side > 0:
            best_edge, best_num, best_den = edge, num, den
    return best_edge


def forward_visits(visits, list components, csr):
    """Push the expected visits forward through ``components`` (sources first): acyclic
    states here, with the integer operations of `ExpectedVisits.pass_single`; the
    others through ``visits.pass_cycle`` and ``visits.pass_single``."""
    cdef const uint8_t[::1] kind = csr.kind
    cdef const int64_t[::1] data = csr.data
    cdef const int64_t[::1] offsets = csr.offsets
    cdef const int32_t[::1] targets = csr.targets
    cdef const int64_t[::1] weights = csr.weights
    solver = visits.solver
    cdef const unsigned char[::1] alive = solver.alive
    cdef set looping = solver.looping
    cdef dict chosen = solver.chosen_edge
    cdef dict big = csr.big
    cdef dict inflow = visits.inflow
    cdef list flow_num = visits.flow_num
    cdef list flow_den = visits.flow_den
    cdef Py_ssize_t node, edge, initial = visits.graph.initial, index, count = len(components)
    cdef Py_ssize_t since_check = 0
    cdef list component
    for index in range(count - 1, -1, -1):
        component = components[index]
        if len(component) != 1 or component[0] in looping:
            check_memory("while solving")
            visits.pass_cycle(component)
            continue
        node = component[0]
        if node not in inflow:
            continue
        since_check += 1
        if since_check == CHECK_EVERY:
            check_memory("while solving")
            since_check = 0
        if kind[node] == TERMINAL or not alive[node] or (big and node in big):
            visits.pass_single(node)
            continue
        num, den = _arriving(inflow.pop(node))
        if node == initial:
            num = num + den
        if kind[node] == CHANCE:
            den = den * data[node]
            for edge in range(offsets[node], offsets[node + 1]):
                _flow_into(inflow, targets[edge], den, num, weights[edge])
        else:
            _flow_into(inflow, targets[<Py_ssize_t>chosen[node]], den, num, 1)
        flow_num[node], flow_den[node] = num, den


cdef tuple _arriving(dict by_denominator):
    """``(numerator, denominator)`` of sum(numerator / denominator) over the dict, over the
    least common denominator (as `ExactArithmetic.common_sum`)."""
    if len(by_denominator) <= 1:
        for denominator, total in by_denominator.items():
            return total, denominator
        return _ZERO, _ONE
    common = lcm(*by_denominator)
    return sum([total * (common // denominator) for denominator, total in by_denominator.items()]), common


cdef inline int _flow_into(
    dict inflow, Py_ssize_t target, object denominator, object value, int64_t weight
) except -1:
    """Add ``weight * value`` (over ``denominator``) to ``target``'s inflow."""
    cdef object sums = inflow.get(target)
    if sums is None:
        inflow[target] = {denominator: weight * value}
    else:
        _add_to_class(sums, denominator, value, weight)
    return 0


cdef inline int _add_to_class(dict sums, object klass, object value, int64_t weight) except -1:
    """``sums[klass] += weight * value`` (a state's inflow per denominator or class),
    grown in place where that is safe (`_add_product`)."""
    cdef object held = sums.get(klass)
    sums[klass] = weight * value if held is None else _add_product(held, value, weight)
    return 0


cdef list _transposed_rows(const uint8_t[::1] kind, const int64_t[::1] data, const int64_t[::1] offsets,
                           const int32_t[::1] targets, const int64_t[::1] weights, const int32_t[::1] slots,
                           list live, dict chosen):
    """The rows of a loop's transposed system over its ``live`` members, whose ``slots``
    hold their places (``rows[i]``: column -> entry, a column per source): ``total * I``
    less each move that stays among them, a decision's along its ``chosen`` edge, weight 1."""
    cdef Py_ssize_t size = len(live), i, node, edge, low, high
    cdef int32_t column
    cdef list rows = [{i: 1 if kind[<Py_ssize_t>live[i]] == DECISION else data[<Py_ssize_t>live[i]]} for i in range(size)]
    cdef dict row
    for i in range(size):
        node = live[i]
        if kind[node] == DECISION:
            low = chosen[node]
            high = low + 1
        else:
            low, high = offsets[node], offsets[node + 1]
        for edge in range(low, high):
            column = slots[targets[edge]]
            if column >= 0:
                row = rows[column]
                row[i] = row.get(i, 0) - (1 if kind[node] == DECISION else weights[edge])
    return rows


@cython.final
cdef class LoopSystems:
    """The linear systems of a graph's cyclic components, built over its CSR arrays: the
    compiled `_Solver.live_states` and `_Solver.build_system` (decisions fixed by a policy,
    node -> edge), and `ExpectedVisits.pass_cycle`. Right sides are summed per distinct
    denominator of the values as the solver holds them (numerator and denominator, not
    reduced), so the solved values are the same rationals."""

    cdef object solver
    cdef const uint8_t[::1] kind
    cdef const int64_t[::1] data
    cdef const int64_t[::1] offsets
    cdef const int32_t[::1] targets
    cdef const int64_t[::1] weights
    cdef dict big
    cdef int32_t[::1] slots  # a member's place while its component is worked on, else -1

    def __init__(self, solver, csr):
        self.solver = solver
        self.kind, self.data, self.offsets = csr.kind, csr.data, csr.offsets
        self.targets, self.weights, self.big = csr.targets, csr.weights, csr.big
        self.slots = numpy.full(len(csr.kind), -1, dtype=numpy.int32)

    def serves(self, list component):
        """False when a member has a weight or total past 64 bits (the Python methods
        then serve)."""
        if self.big:
            for node in component:
                if node in self.big:
                    return False
        return True

    cdef inline tuple _span(self, Py_ssize_t node, dict policy):
        """The edges ``node`` takes: a decision's one under ``policy``, a chance node's all."""
        cdef Py_ssize_t edge
        if self.kind[node] == DECISION:
            edge = policy[node]
            return edge, edge + 1
        return self.offsets[node], self.offsets[node + 1]

    cdef inline int64_t _weight(self, Py_ssize_t node, Py_ssize_t edge) noexcept:
        """An edge's weight over the node's total (`_total`): a decision's move weighs 1."""
        return 1 if self.kind[node] == DECISION else self.weights[edge]

    cdef inline int64_t _total(self, Py_ssize_t node) noexcept:
        return 1 if self.kind[node] == DECISION else self.data[node]

    def live_states(self, list component, dict policy):
        """The members that can reach a terminal under ``policy``, sorted."""
        cdef Py_ssize_t size = len(component), i, edge, low, high, place
        cdef int32_t target, member
        cdef const unsigned char[::1] alive = self.solver.alive
        cdef vector[char] live = vector[char](size, 0)
        cdef vector[vector[int32_t]] parents = vector[vector[int32_t]](size)
        cdef vector[int32_t] frontier
        for i in range(size):
            self.slots[<Py_ssize_t>component[i]] = i
        try:
            for i in range(size):
                low, high = self._span(component[i], policy)
                for edge in range(low, high):
                    target = self.targets[edge]
                    member = self.slots[target]
                    if member >= 0:
                        parents[member].push_back(i)
                    elif alive[target] and not live[i]:
                        live[i] = 1
                        frontier.push_back(i)
        finally:
            self._release(component)
        while not frontier.empty():
            place = frontier.back()
            frontier.pop_back()
            for member in parents[place]:
                if not live[member]:
                    live[member] = 1
                    frontier.push_back(member)
        cdef list found = [component[i] for i in range(size) if live[i]]
        found.sort()
        return found

    cdef void _release(self, list members):
        """Every member's slot back to -1 (also when the work on them raised)."""
        for node in members:
            self.slots[<Py_ssize_t>node] = -1

    def system(self, list component, dict policy, endless):
        """``(order, rows, right_sides)``: the live members, sorted, and the rows of
        (weight*I - P) x = known part over them, each known part as ``(numerator,
        denominator)`` (successors outside at their values, dead members at ``endless``)."""
        cdef Py_ssize_t column, node
        cdef list rows = [], right_sides = []
        cdef list order = self.live_states(component, policy)
        for node in component:
            self.slots[node] = -2  # a dead member, unless it is live (below)
        for column in range(len(order)):
            self.slots[<Py_ssize_t>order[column]] = column
        try:
            self._rows(order, policy, endless, rows, right_sides)
        finally:
            self._release(component)
        return order, rows, right_sides

    cdef int _rows(self, list order, dict policy, endless, list rows, list right_sides) except -1:
        """`system`'s rows and right sides, the members' slots set."""
        cdef Py_ssize_t column, node, edge, low, high
        cdef int32_t target, member
        cdef int64_t weight
        cdef list nums = self.solver.nums, dens = self.solver.dens
        cdef dict row, by_denominator
        for column in range(len(order)):
            node = order[column]
            row = {column: self._total(node)}
            by_denominator = {}
            low, high = self._span(node, policy)
            for edge in range(low, high):
                target = self.targets[edge]
                weight = self._weight(node, edge)
                member = self.slots[target]
                if member >= 0:
                    row[member] = row.get(member, 0) - weight
                elif member == -2:
                    by_denominator[endless.denominator] = by_denominator.get(endless.denominator, 0) + weight * endless.numerator
                else:
                    by_denominator[dens[target]] = by_denominator.get(dens[target], 0) + weight * nums[target]
            rows.append(row)
            right_sides.append(_arriving(by_denominator))
        return 0

    def pass_cycle(self, visits, list component):
        """`ExpectedVisits.pass_cycle` over the arrays: one solve of the transposed system
        over the live members (a column per source), their flows pushed out of the loop;
        members that cannot end keep what arrives."""
        cdef const unsigned char[::1] alive = self.solver.alive
        cdef list live = [node for node in component if alive[<Py_ssize_t>node]]
        cdef Py_ssize_t place
        for place in range(len(live)):
            self.slots[<Py_ssize_t>live[place]] = place
        try:
            if any(node in visits.inflow for node in live):
                self._flows(visits, live)
        finally:
            self._release(live)
        for node in component:
            if node in visits.inflow:  # a member that cannot end (play never ends here)
                visits.collect(node)

    cdef int _flows(self, visits, list live) except -1:
        """`pass_cycle`'s solve and its flows out, the live members' slots set."""
        cdef dict chosen = self.solver.chosen_edge, inflow = visits.inflow
        cdef list flow_num = visits.flow_num, flow_den = visits.flow_den
        cdef Py_ssize_t size = len(live), i, node, edge, low, high, initial = visits.graph.initial
        cdef int32_t target
        cdef list rows = _transposed_rows(
            self.kind, self.data, self.offsets, self.targets, self.weights, self.slots, live, chosen
        )
        cdef list right_sides = []
        for i in range(size):
            node = live[i]
            sums = inflow.pop(node, None)
            if sums is None:
                right_sides.append(((_ZERO,), _ONE))
                continue
            num, den = _arriving(sums)
            right_sides.append(((num + den if node == initial else num,), den))
        for i, (nums, den) in enumerate(visits.numbers.solve_vectors(rows, right_sides)):
            node = live[i]
            num = nums[0]
            flow_num[node], flow_den[node] = num, den
            low, high = self._span(node, chosen)
            for edge in range(low, high):
                target = self.targets[edge]
                if self.slots[target] < 0:
                    _flow_into(inflow, target, den, num, self._weight(node, edge))
        return 0


def reward_totals(visits, csr):
    """``(steps, [reward totals])`` of `ExpectedVisits.totals`, each as ``(numerator,
    denominator)``, from the flows and the arrays' reward masses (``csr.mass`` must hold
    every reward counter): each total summed per distinct denominator of the flows."""
    cdef const uint8_t[::1] kind = csr.kind
    cdef const int64_t[::1] data = csr.data
    cdef const int64_t[:, ::1] mass = csr.mass
    cdef dict big_mass = csr.big_mass, big = csr.big
    cdef list flow_num = visits.flow_num, flow_den = visits.flow_den
    cdef dict chosen = visits.solver.chosen_edge
    action_rewards = visits.graph.action_rewards
    cdef Py_ssize_t node, counter, counters = mass.shape[1]
    cdef dict steps = {}
    cdef list rewards = [{} for _ in range(counters)]
    cdef dict sums
    cdef int64_t amount
    for node in range(len(flow_num)):
        num = flow_num[node]
        if num is None or kind[node] == TERMINAL:
            continue
        den = flow_den[node]
        if kind[node] == CHANCE:
            total = big[node][0] if big and node in big else data[node]
            steps[den] = steps.get(den, 0) + total * num
            if not (big_mass and node in big_mass):
                for counter in range(counters):
                    amount = mass[node, counter]
                    if amount:
                        sums = rewards[counter]
                        sums[den] = sums.get(den, 0) + amount * num
                continue
            amounts = big_mass[node]
        else:
            amounts = action_rewards.get(chosen[node])
        if amounts:
            for counter in range(counters):
                if amounts[counter]:
                    sums = rewards[counter]
                    sums[den] = sums.get(den, 0) + amounts[counter] * num
    return _arriving(steps), [_arriving(sums) for sums in rewards]


@cython.final
cdef class ChainFlows:
    """The inner loops of the chain's forward pass (`exactdice.markov.forward._Pass`) over
    a graph's arrays: an acyclic chance state's amount sent along its edges, and the sums
    a solved loop passes on. The same sums in the same order as the Python methods, so
    both give the identical integers; a sum grows in place where that is safe (`_grow`).
    Over a graph's arrays (`exactdice.markov.arrays.Csr`: int32 targets) where every
    total and weight fits 64 bits (no ``csr.big``).

    >>> from array import array
    >>> from gmpy2 import mpz
    >>> class Arrays:  # node 0 -> 1 (weight 2), 2 (weight 3); node 1 -> 0, 2
    ...     kind, data = bytearray([1, 1, 0]), array("q", [5, 2, 0])
    ...     offsets, targets, weights = array("q", [0, 2, 4, 4]), array("i", [1, 2, 0, 2]), array("q", [2, 3, 1, 1])
    >>> flows = ChainFlows(Arrays())
    >>> inflow = [None, {7: mpz(1)}, None]
    >>> flows.spread(inflow, 0, 5, mpz(10), 4)
    >>> inflow
    [None, {7: mpz(1), 5: mpz(20)}, {5: mpz(30)}]
    >>> flows.leaving([0, 1], [mpz(4), mpz(6)], {})
    [(2, mpz(18))]
    >>> flows.sent(inflow, [(1, mpz(5)), (2, mpz(1))], 5, 1), inflow
    ([1], [None, {7: mpz(1), 5: mpz(25)}, {5: mpz(31)}])
    >>> flows.block_rows([0, 1], {})
    [{0: 5, 1: -1}, {1: 2, 0: -2}]
    """

    cdef const uint8_t[::1] kind
    cdef const int64_t[::1] data
    cdef const int64_t[::1] offsets
    cdef const int32_t[::1] targets
    cdef const int64_t[::1] weights
    cdef const int64_t[:, ::1] mass  # reward masses (a column per reward, or none)
    cdef dict big_mass
    cdef list scratch  # a target's running sum while a loop's exits are summed, else None
    cdef int32_t[::1] slots  # a loop member's column while its rows are built, else -1

    def __init__(self, csr):
        self.kind, self.data = csr.kind, csr.data
        self.offsets, self.targets, self.weights = csr.offsets, csr.targets, csr.weights
        mass = getattr(csr, "mass", None)  # (arrays without masses: no reward columns)
        self.mass = numpy.zeros((len(csr.kind), 0), dtype=numpy.int64) if mass is None else mass
        self.big_mass = getattr(csr, "big_mass", None) or {}
        self.scratch = [None] * len(csr.kind)
        self.slots = numpy.full(len(csr.kind), -1, dtype=numpy.int32)

    def block_rows(self, list live, dict chosen_edge):
        """The rows of a loop's transposed system over its ``live`` members (``rows[i]``:
        column -> entry; a column per source), as `exactdice.markov.forward._Plan.block_rows`
        builds them, in the same order."""
        cdef Py_ssize_t i
        for i in range(len(live)):
            self.slots[<Py_ssize_t>live[i]] = i
        try:
            return _transposed_rows(
                self.kind, self.data, self.offsets, self.targets, self.weights, self.slots, live, chosen_edge
            )
        finally:
            for node in live:
                self.slots[<Py_ssize_t>node] = -1

    def spread(self, list inflow, Py_ssize_t node, object own, object amount, Py_ssize_t most_classes):
        """Add ``weight * amount`` to every successor's inflow of class ``own``
        (`_Pass.state`'s loop over a chance node's edges); return the successors whose
        inflow now holds more than ``most_classes`` classes, in edge order (None: none)."""
        cdef Py_ssize_t edge, target
        cdef object amounts
        cdef list crowded = None
        for edge in range(self.offsets[node], self.offsets[node + 1]):
            target = self.targets[edge]
            amounts = inflow[target]
            if amounts is None:
                inflow[target] = {own: self.weights[edge] * amount}
            else:
                _add_to_class(amounts, own, amount, self.weights[edge])
                if len(<dict>amounts) > most_classes:
                    if crowded is None:
                        crowded = []
                    crowded.append(target)
        return crowded

    @property
    def reward_columns(self) -> int:
        """The reward masses' columns `counted` reads."""
        return self.mass.shape[1]

    def counted(self, list live, list values, object klass, dict steps, list rewards):
        """A solved loop's steps and rewards (`_Pass.loop_solved`): for each chance member
        of ``live`` with a value, ``steps[klass] += total * value`` and, per reward column,
        ``rewards[column][klass] += mass * value``; returns the places in ``live`` of the
        members left to the caller (decisions, and masses past 64 bits)."""
        cdef Py_ssize_t i, node, column, columns = self.mass.shape[1]
        cdef int64_t mass
        cdef object amount
        cdef list left = []
        if len(rewards) != columns:
            raise ValueError(f"{len(rewards)} rewards summed over {columns} mass columns")
        for i in range(len(live)):
            amount = values[i]
            if not amount:
                continue
            node = live[i]
            if self.kind[node] != CHANCE or (self.big_mass and node in self.big_mass):
                left.append(i)
                continue
            _add_to_class(steps, klass, amount, self.data[node])
            for column in range(columns):
                mass = self.mass[node, column]
                if mass:
                    _add_to_class(<dict>rewards[column], klass, amount, mass)
        return left

    def sent(self, list inflow, list items, object klass, Py_ssize_t most_classes):
        """Add each ``(target, amount)`` of ``items`` (a solved loop's exits, every target
        once) to the target's inflow of class ``klass`` (`_Pass.send`); return the targets
        whose inflow now holds more than ``most_classes`` classes, in order (None: none)."""
        cdef Py_ssize_t target
        cdef object amount, amounts, held
        cdef list crowded = None
        for target, amount in items:
            amounts = inflow[target]
            if amounts is None:
                inflow[target] = {klass: amount}
                continue
            held = (<dict>amounts).get(klass)
            (<dict>amounts)[klass] = amount if held is None else _add_product(held, amount, 1)
            if len(<dict>amounts) > most_classes:
                if crowded is None:
                    crowded = []
                crowded.append(target)
        return crowded

    def leaving(self, list live, list values, dict chosen_edge):
        """``[(target, sum of weight * value)]`` for the states a loop passes visits to, in
        the order `_Pass.leaving` lists them (each target where an edge first reaches it),
        the loop's live members dropped."""
        cdef list scratch = self.scratch, touched = [], result = []
        cdef Py_ssize_t i, node, edge, target
        cdef object amount, held
        try:
            for i in range(len(live)):
                amount = values[i]
                if not amount:
                    continue
                node = live[i]
                if self.kind[node] == DECISION:
                    _sum_into(scratch, touched, self.targets[<Py_ssize_t>chosen_edge[node]], amount, 1)
                    continue
                for edge in range(self.offsets[node], self.offsets[node + 1]):
                    _sum_into(scratch, touched, self.targets[edge], amount, self.weights[edge])
            for node in live:
                if scratch[node] is not None:
                    scratch[node] = False  # a member: dropped below
            for target in touched:
                held = scratch[target]
                if held is not False:
                    result.append((target, held))
        finally:
            for target in touched:
                scratch[target] = None
        return result


cdef inline int _sum_into(list scratch, list touched, Py_ssize_t target, object amount, int64_t weight) except -1:
    """``scratch[target] += weight * amount`` (a sum made by `ChainFlows.leaving`, grown
    in place while the list alone holds it), noting the targets met."""
    cdef object held = scratch[target]
    if held is None:
        touched.append(target)
        scratch[target] = 0 + weight * amount
    else:
        scratch[target] = _add_product(held, amount, weight)
    return 0


def entering_counts(const int64_t[::1] offsets, const int32_t[::1] targets, const int64_t[::1] component_of,
                    Py_ssize_t components):
    """Per component, the edges that enter it from another component (int64; what
    `exactdice.markov.loop_pool._Readiness` counts down), in one sweep over the edges.

    >>> from array import array  # nodes 0 <-> 1 (component 1), both -> node 2 (component 0)
    >>> entering_counts(array("q", [0, 2, 4, 4]), array("i", [1, 2, 0, 2]), array("q", [1, 1, 0]), 2).tolist()
    [2, 0]
    """
    waiting = numpy.zeros(components, dtype=numpy.int64)
    cdef int64_t[::1] counts = waiting
    cdef Py_ssize_t node, edge
    cdef int64_t here, entered
    for node in range(offsets.shape[0] - 1):
        here = component_of[node]
        for edge in range(offsets[node], offsets[node + 1]):
            entered = component_of[targets[edge]]
            if entered != here:
                counts[entered] += 1
    return waiting


def entered_ready(
    const int64_t[::1] offsets,
    const int32_t[::1] targets,
    const int64_t[::1] component_of,
    int64_t[::1] waiting,
    Py_ssize_t index,
    list component,
):
    """Count down, for every edge of component ``index`` that leaves it, the edges the
    entered component still waits for; return the components that now wait for none,
    in edge order for one state and by index for several (as
    `exactdice.markov.loop_pool._Readiness.done` lists them)."""
    cdef list ready = []
    cdef Py_ssize_t node, edge
    cdef int64_t entered
    for node in component:
        for edge in range(offsets[node], offsets[node + 1]):
            entered = component_of[targets[edge]]
            if entered != index:
                waiting[entered] -= 1
                if waiting[entered] == 0:
                    ready.append(entered)
    if len(component) > 1:
        ready.sort()
    return ready


def cyclic_components(const int64_t[::1] offsets, const int32_t[::1] targets, components):
    """Per component, 1 where it is a loop (more than one state, or a state with an edge
    to itself), else 0 (a ``bytearray``; `exactdice.markov.forward._Plan.cyclic`), in
    one sweep over the single states' edges. Components are sequences of nodes, none
    empty (a graph's strongly connected components).

    >>> from array import array  # node 0 -> 1, node 1 -> 1 (a self-loop), node 2 -> 0
    >>> list(cyclic_components(array("q", [0, 1, 2, 3]), array("i", [1, 1, 0]), [[0], [1], [2]]))
    [0, 1, 0]
    """
    cdef Py_ssize_t index, edge, node, count = len(components)
    cyclic = bytearray(count)
    cdef unsigned char[::1] out = cyclic
    cdef object component
    for index in range(count):
        component = components[index]
        if len(component) > 1:
            out[index] = 1
            continue
        node = component[0]
        for edge in range(offsets[node], offsets[node + 1]):
            if targets[edge] == node:
                out[index] = 1
                break
    return cyclic
