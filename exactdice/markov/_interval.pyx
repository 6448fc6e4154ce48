# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Certified float bounds over a graph's CSR arrays: interval iteration, compiled.

For every node a lower and an upper bound on the probability of ending in each outcome
(chains) or on the value (one side, or both sides, deciding), computed component by
component, sinks first, with Gauss-Seidel sweeps inside a cyclic component. Every
lower bound is computed in round-down and every upper bound in round-up arithmetic
(the floating-point unit's rounding mode, with the module compiled ``-frounding-math``),
from the exact integer weights, so each interval holds the exact value: a bound is a
bound, whatever the rounding errors.

A lower iterate that starts at 0 and an upper iterate that starts at 1 (0 where the
outcome cannot be reached, known from the graph) both move monotonically towards the
exact value in a component that every path can leave; the sweeps stop once every
member's interval is narrower than the tolerance (`exactdice.markov.interval`).
"""

from libc.stdint cimport int64_t, int32_t, uint8_t, uint64_t
from libc.math cimport INFINITY, nextafter
from libcpp.vector cimport vector
from cpython.exc cimport PyErr_CheckSignals

cdef extern from "<fenv.h>" nogil:
    int fesetround(int rounding)
    int fegetround()
    int FE_DOWNWARD
    int FE_UPWARD
    int FE_TONEAREST

DEF TERMINAL = 0
DEF CHANCE = 1
DEF DECISION = 2


cdef class _Components:
    """Strongly connected components of a CSR graph, sinks first (an iterative Tarjan)."""

    cdef vector[int64_t] order     # nodes, component after component
    cdef vector[int64_t] starts    # component c is order[starts[c]:starts[c + 1]]
    cdef vector[uint8_t] cyclic    # component c has a cycle (two members, or a self-loop)


cdef _Components _components(const int64_t[:] offsets, const int32_t[:] targets, int64_t count,
                             int64_t root_only):
    """Components reachable from ``root_only`` (or from every node if it is -1)."""
    cdef _Components result = _Components()
    cdef vector[int64_t] index, low, stack, work_node, work_edge
    cdef vector[uint8_t] on_stack
    index.assign(count, -1)
    low.assign(count, 0)
    on_stack.assign(count, 0)
    cdef int64_t counter = 0, root, node, edge, child, member, first
    cdef bint descended, loop
    cdef int64_t roots_end = count if root_only < 0 else 1
    cdef int64_t r
    result.starts.push_back(0)
    for r in range(roots_end):
        root = r if root_only < 0 else root_only
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.push_back(root)
        on_stack[root] = 1
        work_node.push_back(root)
        work_edge.push_back(offsets[root])
        while work_node.size():
            node = work_node.back()
            edge = work_edge.back()
            descended = False
            while edge < offsets[node + 1]:
                child = targets[edge]
                edge += 1
                if index[child] == -1:
                    work_edge[work_edge.size() - 1] = edge
                    index[child] = low[child] = counter
                    counter += 1
                    stack.push_back(child)
                    on_stack[child] = 1
                    work_node.push_back(child)
                    work_edge.push_back(offsets[child])
                    descended = True
                    break
                if on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
            if descended:
                continue
            work_node.pop_back()
            work_edge.pop_back()
            if work_node.size():
                if low[node] < low[work_node.back()]:
                    low[work_node.back()] = low[node]
            if low[node] == index[node]:
                first = result.order.size()
                while True:
                    member = stack.back()
                    stack.pop_back()
                    on_stack[member] = 0
                    result.order.push_back(member)
                    if member == node:
                        break
                loop = result.order.size() - first > 1
                if not loop:
                    for edge in range(offsets[node], offsets[node + 1]):
                        if targets[edge] == node:
                            loop = True
                result.starts.push_back(result.order.size())
                result.cyclic.push_back(loop)
    return result


def chain_bounds(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                 const int32_t[:] targets, const int64_t[:] weights, int outcomes, int64_t initial,
                 double tolerance, int64_t most_sweeps, overrides=None, check=None):
    """Certified bounds on the probability of ending in each outcome, from every node
    reachable from ``initial`` (a chain: no decision nodes).

    ``kind``, ``data``, ``offsets``, ``targets``, ``weights``: the graph's CSR arrays
    (`exactdice.markov.graph.StateGraph`); a weight or total of -1 is given exactly in
    ``overrides`` (node -> (total, [weights]) as Python ints; past 64 bits).
    Returns ``(lower, upper, reach, sweeps, widest)``: float64 arrays of shape
    (nodes, outcomes), a per-node bit mask of the outcomes it can reach, the sweeps made
    and the widest interval left in a cyclic component (below ``tolerance`` unless
    ``most_sweeps`` ran out). ``check()`` is called now and then (it may raise).
    """
    import numpy

    cdef int64_t count = kind.shape[0]
    lower_array = numpy.zeros((count, outcomes))
    upper_array = numpy.zeros((count, outcomes))
    reach_array = numpy.zeros(count, dtype=numpy.uint64)
    cdef double[:, ::1] lower = lower_array
    cdef double[:, ::1] upper = upper_array
    cdef uint64_t[::1] reach = reach_array
    cdef _Components parts = _components(offsets, targets, count, initial)
    cdef int64_t c, i, node, edge, start, end, sweeps = 0, total_sweeps = 0
    cdef int o
    cdef uint64_t mask
    cdef double widest = 0.0, width
    cdef bint settled
    cdef int previous = fegetround()
    if outcomes > 64:
        raise ValueError("at most 64 outcomes")
    big = overrides or {}
    try:
        for c in range(<int64_t>parts.cyclic.size()):
            start, end = parts.starts[c], parts.starts[c + 1]
            # the outcomes each member can reach: its exits' (all members share them)
            mask = 0
            for i in range(start, end):
                node = parts.order[i]
                if kind[node] == TERMINAL:
                    mask |= (<uint64_t>1) << data[node]
                for edge in range(offsets[node], offsets[node + 1]):
                    mask |= reach[targets[edge]]
            for i in range(start, end):
                node = parts.order[i]
                reach[node] = mask
                for o in range(outcomes):
                    if kind[node] == TERMINAL:
                        lower[node, o] = upper[node, o] = 1.0 if data[node] == o else 0.0
                    else:
                        lower[node, o] = 0.0
                        upper[node, o] = 1.0 if (mask >> o) & 1 else 0.0
            if not parts.cyclic[c]:
                if kind[parts.order[start]] != TERMINAL:
                    _sweep(kind, data, offsets, targets, weights, lower, upper, parts.order, start, end,
                           outcomes, big)
                continue
            sweeps = 0
            while True:
                _sweep(kind, data, offsets, targets, weights, lower, upper, parts.order, start, end, outcomes, big)
                sweeps += 1
                total_sweeps += 1
                width = 0.0
                for i in range(start, end):
                    node = parts.order[i]
                    for o in range(outcomes):
                        if upper[node, o] - lower[node, o] > width:
                            width = upper[node, o] - lower[node, o]
                if width <= tolerance or sweeps >= most_sweeps:
                    if width > widest:
                        widest = width
                    break
                if not total_sweeps % 64:
                    fesetround(previous)
                    PyErr_CheckSignals()
                    if check is not None:
                        check()
            if check is not None and not c % 4096:
                fesetround(previous)
                check()
    finally:
        fesetround(previous)
    return lower_array, upper_array, reach_array, total_sweeps, widest


def chain_expectations(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                       const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                       int64_t initial, double tolerance, int64_t most_sweeps, overrides=None, check=None):
    """Certified bounds on expected totals (a reward per chance step, ``mass[node, r] /
    data[node]``) from every node reachable from ``initial``, where play ends with
    probability 1 (the caller checks that).

    Lower bounds iterate up from 0; upper bounds are guessed above them and kept only once
    one sweep in round-up mode shows the guess is inductive (optimistic value iteration:
    a vector U with B(U) <= U lies above the least fixed point, the expectation). Returns
    ``(lower, upper, widest_relative, certified)``; ``certified`` is False where a component's
    guess never held within ``most_sweeps`` (its upper bounds are then +inf).
    """
    import numpy

    cdef int64_t count = kind.shape[0]
    cdef int rewards = mass.shape[1]
    if rewards > 64:
        raise ValueError("at most 64 reward counters")
    lower_array = numpy.zeros((count, rewards))
    upper_array = numpy.zeros((count, rewards))
    cdef double[:, ::1] lower = lower_array
    cdef double[:, ::1] upper = upper_array
    cdef double[:, ::1] scratch = numpy.zeros((count, rewards))
    cdef _Components parts = _components(offsets, targets, count, initial)
    cdef int64_t c, i, node, start, end, sweeps, attempt
    cdef int r
    cdef double widest = 0.0, scale, change
    cdef bint certified = True, holds
    cdef int previous = fegetround()
    big = overrides or {}
    try:
        for c in range(<int64_t>parts.cyclic.size()):
            start, end = parts.starts[c], parts.starts[c + 1]
            if not parts.cyclic[c]:
                node = parts.order[start]
                if kind[node] != TERMINAL:
                    _reward_sweep(kind, data, offsets, targets, weights, mass, lower, parts.order, start, end,
                                  rewards, big, FE_DOWNWARD, NULL)
                    _reward_sweep(kind, data, offsets, targets, weights, mass, upper, parts.order, start, end,
                                  rewards, big, FE_UPWARD, NULL)
                continue
            sweeps = 0
            holds = False
            attempt = 0
            while sweeps < most_sweeps:
                change = 0.0
                _reward_sweep(kind, data, offsets, targets, weights, mass, lower, parts.order, start, end,
                              rewards, big, FE_DOWNWARD, &change)
                sweeps += 1
                if change > tolerance and sweeps % 8:
                    continue
                # a guess above the lower bounds; inductive (one round-up sweep stays below it)?
                attempt += 1
                scale = tolerance * (0.5 ** min(attempt, 20)) if change <= tolerance else change
                for i in range(start, end):
                    node = parts.order[i]
                    for r in range(rewards):
                        upper[node, r] = lower[node, r] + scale * (1.0 + lower[node, r]) * 2.0
                if _inductive(kind, data, offsets, targets, weights, mass, upper, scratch, parts.order, start,
                              end, rewards, big):
                    holds = True
                    break
                if not sweeps % 64:
                    fesetround(previous)
                    PyErr_CheckSignals()
                    if check is not None:
                        check()
            if not holds:
                certified = False
                for i in range(start, end):
                    node = parts.order[i]
                    for r in range(rewards):
                        upper[node, r] = INFINITY
            for i in range(start, end):
                node = parts.order[i]
                for r in range(rewards):
                    if upper[node, r] - lower[node, r] > widest * (1.0 + lower[node, r]):
                        widest = (upper[node, r] - lower[node, r]) / (1.0 + lower[node, r])
    finally:
        fesetround(previous)
    return lower_array, upper_array, widest, certified


cdef int _reward_sweep(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                       const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                       double[:, ::1] values, vector[int64_t]& order, int64_t start, int64_t end, int rewards,
                       dict big, int mode, double* change, double[:, ::1] source=None) except -1:
    """One sweep of expected totals in one rounding mode (down: the lower bounds, which
    only grow; up: the upper bounds) into ``values``: Gauss-Seidel, or Jacobi from
    ``source`` where one is given; ``change`` gets the largest relative rise."""
    if source is None:
        source = values
    cdef int64_t i, node, edge
    cdef int r
    cdef double sums[64]
    cdef double total, w, value
    for i in range(start, end):
        node = order[i]
        if kind[node] == TERMINAL:
            continue
        if kind[node] == DECISION:
            raise ValueError("chain_expectations takes a chain (no decision nodes)")
        if data[node] < 0 or big and node in big or mass[node, 0] < 0:
            _reward_big(node, offsets, targets, values, source, rewards, big[node], mode, change)
            continue
        fesetround(mode)
        for r in range(rewards):
            sums[r] = <double>mass[node, r]
        for edge in range(offsets[node], offsets[node + 1]):
            w = <double>weights[edge]
            for r in range(rewards):
                sums[r] += w * source[targets[edge], r]
        total = _total_up(data[node]) if mode == FE_DOWNWARD else _total_down(data[node])
        for r in range(rewards):
            value = sums[r] / total
            if change != NULL and value - values[node, r] > change[0] * (1.0 + value):
                change[0] = (value - values[node, r]) / (1.0 + value)
            values[node, r] = value
    fesetround(FE_TONEAREST)
    return 0


cdef bint _inductive(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                     const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                     double[:, ::1] upper, double[:, ::1] scratch, vector[int64_t]& order, int64_t start,
                     int64_t end, int rewards, dict big) except -1:
    """Whether one round-up Bellman step B from ``upper`` (a Jacobi step: every member's
    from the same vector U, into ``scratch``) stays at or below U on order[start:end]. If
    B(U) <= U, U lies above the least fixed point (the expectation), and so does B(U),
    which then replaces U."""
    cdef int64_t i, node
    cdef int r
    _reward_sweep(kind, data, offsets, targets, weights, mass, scratch, order, start, end, rewards, big,
                  FE_UPWARD, NULL, upper)
    for i in range(start, end):
        node = order[i]
        for r in range(rewards):
            if scratch[node, r] > upper[node, r]:
                return False
    for i in range(start, end):
        node = order[i]
        for r in range(rewards):
            upper[node, r] = scratch[node, r]
    return True


cdef int _reward_big(int64_t node, const int64_t[:] offsets, const int32_t[:] targets, double[:, ::1] values,
                     double[:, ::1] source, int rewards, tuple exact, int mode, double* change) except -1:
    """A node whose weights or masses pass 64 bits: its step in exact rationals, each
    probability rounded outward (``exact`` is (total, weights, masses) as ints)."""
    from fractions import Fraction

    total, node_weights, masses = exact
    cdef int64_t edge
    cdef int r
    for r in range(rewards):
        value = Fraction(masses[r], total)
        value = _down(value) if mode == FE_DOWNWARD else _up(value)
        fesetround(mode)
        for edge in range(offsets[node], offsets[node + 1]):
            p = Fraction(node_weights[edge - offsets[node]], total)
            p = _down(p) if mode == FE_DOWNWARD else _up(p)
            fesetround(mode)
            value = value + p * source[targets[edge], r]
        fesetround(FE_TONEAREST)
        if change != NULL and value - values[node, r] > change[0] * (1.0 + value):
            change[0] = (value - values[node, r]) / (1.0 + value)
        values[node, r] = value
    return 0


cdef inline double _total_up(int64_t total) noexcept nogil:
    """``total`` as a float at or above it, in round-down mode."""
    cdef double converted = <double>total
    if <int64_t>converted != total:
        converted = nextafter(converted, INFINITY)
    return converted


cdef inline double _total_down(int64_t total) noexcept nogil:
    """``total`` as a float at or below it, in round-up mode."""
    cdef double converted = <double>total
    if <int64_t>converted != total:
        converted = nextafter(converted, -INFINITY)
    return converted


cdef int _sweep(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                const int32_t[:] targets, const int64_t[:] weights, double[:, ::1] lower,
                double[:, ::1] upper, vector[int64_t]& order, int64_t start, int64_t end, int outcomes,
                dict big) except -1:
    """One Gauss-Seidel sweep over order[start:end], lower bounds in round-down mode, then
    upper bounds in round-up mode; each kept only where it tightens the bound it replaces."""
    cdef int64_t i, node, edge
    cdef int o
    cdef double total, sums[64]
    cdef double w
    for i in range(start, end):
        node = order[i]
        if kind[node] == DECISION:
            raise ValueError("chain_bounds takes a chain (no decision nodes)")
        if kind[node] != TERMINAL and (data[node] < 0 or big and node in big):
            _sweep_big(node, offsets, targets, lower, upper, outcomes, big[node])
    fesetround(FE_DOWNWARD)
    for i in range(start, end):
        node = order[i]
        if kind[node] == TERMINAL or data[node] < 0 or big and node in big:
            continue
        for o in range(outcomes):
            sums[o] = 0.0
        for edge in range(offsets[node], offsets[node + 1]):
            w = <double>weights[edge]
            for o in range(outcomes):
                sums[o] += w * lower[targets[edge], o]
        total = _total_up(data[node])
        for o in range(outcomes):
            sums[o] = sums[o] / total
            if sums[o] > lower[node, o]:
                lower[node, o] = sums[o]
    fesetround(FE_UPWARD)
    for i in range(start, end):
        node = order[i]
        if kind[node] == TERMINAL or data[node] < 0 or big and node in big:
            continue
        for o in range(outcomes):
            sums[o] = 0.0
        for edge in range(offsets[node], offsets[node + 1]):
            w = <double>weights[edge]
            for o in range(outcomes):
                sums[o] += w * upper[targets[edge], o]
        total = _total_down(data[node])
        for o in range(outcomes):
            sums[o] = sums[o] / total
            if sums[o] < upper[node, o]:
                upper[node, o] = sums[o]
    fesetround(FE_TONEAREST)
    return 0


cdef int _sweep_big(int64_t node, const int64_t[:] offsets, const int32_t[:] targets, double[:, ::1] lower,
                    double[:, ::1] upper, int outcomes, tuple exact) except -1:
    """A node whose weights pass 64 bits: its probabilities as floats rounded outward."""
    from fractions import Fraction
    import math

    total, node_weights = exact
    cdef int64_t edge
    cdef int o
    for o in range(outcomes):
        low = high = 0.0
        for edge in range(offsets[node], offsets[node + 1]):
            p = Fraction(node_weights[edge - offsets[node]], total)
            low_p, high_p = _down(p), _up(p)
            fesetround(FE_DOWNWARD)
            low = low + low_p * lower[targets[edge], o]
            fesetround(FE_UPWARD)
            high = high + high_p * upper[targets[edge], o]
        fesetround(FE_TONEAREST)
        if low > lower[node, o]:
            lower[node, o] = low
        if high < upper[node, o]:
            upper[node, o] = high
    return 0


def _down(p):
    """The largest float at or below the Fraction ``p``."""
    import math
    value = float(p)
    return value if value <= p else math.nextafter(value, -math.inf)


def _up(p):
    """The smallest float at or above the Fraction ``p``."""
    import math
    value = float(p)
    return value if value >= p else math.nextafter(value, math.inf)
