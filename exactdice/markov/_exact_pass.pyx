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

from libc.stdint cimport int64_t, int32_t, uint8_t

from gmpy2 import gcd, lcm, mpz

from exactdice.limits import check_memory

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
        term = weights[edge] * nums[target]
        reaches_end |= alive[target]
        if by_denominator is None:
            if first_denominator is None:
                first_denominator, first_sum = denominator, term
                continue
            if denominator is first_denominator or denominator == first_denominator:
                first_sum = first_sum + term
                continue
            by_denominator = {first_denominator: first_sum}
        by_denominator[denominator] = by_denominator.get(denominator, 0) + term
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
                _flow_into(inflow, targets[edge], den, weights[edge] * num)
        else:
            _flow_into(inflow, targets[<Py_ssize_t>chosen[node]], den, 1 * num)
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


cdef inline int _flow_into(dict inflow, Py_ssize_t target, object denominator, object amount) except -1:
    sums = inflow.get(target)
    if sums is None:
        inflow[target] = {denominator: amount}
    else:
        (<dict>sums)[denominator] = (<dict>sums).get(denominator, 0) + amount
    return 0
