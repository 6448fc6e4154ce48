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

cimport cython
from libc.stdint cimport int64_t, int32_t, uint8_t, uint64_t
from libc.math cimport INFINITY, nextafter
from libcpp.vector cimport vector
from cpython.exc cimport PyErr_CheckSignals

from exactdice.markov._graph cimport HugePages

cdef extern from "<fenv.h>" nogil:
    int fesetround(int rounding)
    int fegetround()
    int FE_DOWNWARD
    int FE_UPWARD
    int FE_TONEAREST

DEF TERMINAL = 0
DEF CHANCE = 1
DEF DECISION = 2
# columns a sweep sums at once, in registers (`_edge_sums`): 8, 12 or 16
DEF LANES = 8
# a pass of `_edge_sums` over lower bounds, upper bounds, or half of each
DEF LOWER = 0
DEF UPPER = 1
DEF MIXED = 2

# bit 63 of a reach mask: the node is reached from the initial one
cdef uint64_t VISITED = (<uint64_t>1) << 63
#: a reach mask's bit for the nodes reached from the initial one (`outcome_reach`)
REACHED = VISITED
#: outcomes a graph may have: a reach mask's bits below `VISITED`'s
MOST_OUTCOMES = 63
# a weight from here on may not be a float
cdef int64_t WIDE = (<int64_t>1) << 53


@cython.final
cdef class _Components:
    """Strongly connected components of a CSR graph, sinks first (an iterative Tarjan)."""

    cdef vector[int64_t] order     # nodes, component after component
    cdef vector[int64_t] starts    # component c is order[starts[c]:starts[c + 1]]
    cdef vector[uint8_t] cyclic    # component c has a cycle (two members, or a self-loop)


cdef _Components _components(const int64_t[:] offsets, const int32_t[:] targets, int64_t count,
                             int64_t root_only):
    """Components reachable from ``root_only`` (or from every node if it is -1), found
    without the GIL (the certified solve prepares its expectations meanwhile)."""
    cdef _Components result = _Components()
    with nogil:
        _find_components(result, offsets, targets, count, root_only)
    return result


cdef int _find_components(_Components result, const int64_t[:] offsets, const int32_t[:] targets,
                          int64_t count, int64_t root_only) except -1 nogil:
    cdef vector[int64_t, HugePages[int64_t]] index, low  # read at random, per edge
    cdef vector[int64_t] stack, work_node, work_edge
    cdef vector[uint8_t] on_stack
    # (`resize`, not `assign`: Cython declares only it as raising, so memory running out
    # is a MemoryError, not an abort)
    index.resize(count, -1)
    low.resize(count, 0)
    on_stack.resize(count, 0)
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
    return 0


def strongly_connected(const int64_t[:] offsets, const int32_t[:] targets):
    """The strongly connected components of a CSR graph, sinks first, as lists of node ids
    (`exactdice.markov.graph.StateGraph.strongly_connected_components`, compiled)."""
    cdef int64_t count = offsets.shape[0] - 1, c
    cdef _Components parts = _components(offsets, targets, count, -1)
    return [[parts.order[i] for i in range(parts.starts[c], parts.starts[c + 1])]
            for c in range(<int64_t>parts.cyclic.size())]


def reachable_components(const int64_t[:] offsets, const int32_t[:] targets, int64_t initial):
    """The components reachable from ``initial``, sinks first, for `outcome_reach`,
    `chain_bounds` and `chain_expectations` to share (an opaque object: computing them is
    a pass over every reachable edge)."""
    return _components(offsets, targets, offsets.shape[0] - 1, initial)


def outcome_reach(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                  const int32_t[:] targets, _Components parts not None):
    """Per node, a bit mask of the outcomes it can reach (``data`` of its terminal
    nodes, below 63), with bit 63 set on every node of ``parts`` (`reachable_components`):
    where each reached node can reach an outcome, play ends with probability 1."""
    import numpy

    reach_array = numpy.zeros(kind.shape[0], dtype=numpy.uint64)
    cdef uint64_t[::1] reach = reach_array
    cdef int64_t c, i, node, edge, start, end
    cdef uint64_t mask
    with nogil:
        for c in range(<int64_t>parts.cyclic.size()):
            start, end = parts.starts[c], parts.starts[c + 1]
            # the members of a component reach what its exits reach
            mask = 0
            for i in range(start, end):
                node = parts.order[i]
                if kind[node] == TERMINAL:
                    mask |= (<uint64_t>1) << data[node]
                for edge in range(offsets[node], offsets[node + 1]):
                    mask |= reach[targets[edge]] & ~VISITED
            for i in range(start, end):
                reach[parts.order[i]] = mask | VISITED
    return reach_array


cdef object _special_nodes(int64_t count, dict big):
    """A flag per node: 1 for the nodes ``big`` gives exactly (past 64 bits)."""
    import numpy

    flags = numpy.zeros(count, dtype=numpy.uint8)
    if big:
        flags[numpy.fromiter(big, dtype=numpy.int64, count=len(big))] = 1
    return flags


def chain_bounds(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                 const int32_t[:] targets, const int64_t[:] weights, int outcomes, const uint64_t[::1] reach,
                 double tolerance, int64_t most_sweeps, _Components parts not None, overrides=None,
                 check=None):
    """Certified bounds on the probability of ending in each outcome, from every node of
    ``parts`` (`reachable_components`; a chain: no decision nodes).

    ``kind``, ``data``, ``offsets``, ``targets``, ``weights``: the graph's CSR arrays
    (`exactdice.markov.graph.StateGraph`); a weight or total of -1 is given exactly in
    ``overrides`` (node -> (total, [weights]) as Python ints; past 64 bits). ``reach``:
    the nodes' `outcome_reach`.
    Returns ``(lower, negated_upper, sweeps, widest)``: float64 arrays of shape (nodes,
    outcomes), the lower bounds and the upper bounds negated (views of one array), the
    sweeps made and the widest interval left in a cyclic component (below
    ``tolerance`` unless ``most_sweeps`` ran out). ``check()`` is called now and then (it
    may raise). The sweeps run without the GIL (`chain_expectations` may run beside them
    in another thread); it is taken for ``overrides`` nodes and ``check``.
    """
    import numpy

    cdef int64_t count = kind.shape[0]
    cdef int half = _padded(outcomes)
    # a row: the lower bounds, then the upper bounds negated (`_sweep`); spare columns 0
    bounds_array = numpy.zeros((count, 2 * half))
    cdef double[:, ::1] bounds = bounds_array
    cdef dict big = overrides or {}
    cdef const uint8_t[::1] special = _special_nodes(count, big)
    cdef int64_t c, i, node, start, end, total_sweeps = 0
    cdef int o
    cdef uint64_t mask
    cdef double widest = 0.0
    cdef int previous = fegetround()
    if outcomes > MOST_OUTCOMES:
        raise ValueError(f"at most {MOST_OUTCOMES} outcomes (bit 63 of a reach mask marks the nodes reached)")
    try:
        with nogil:
            for c in range(<int64_t>parts.cyclic.size()):
                start, end = parts.starts[c], parts.starts[c + 1]
                mask = reach[parts.order[start]] & ~VISITED
                for i in range(start, end):
                    node = parts.order[i]
                    for o in range(outcomes):
                        if kind[node] == TERMINAL:
                            bounds[node, o] = 1.0 if data[node] == o else 0.0
                            bounds[node, half + o] = -1.0 if data[node] == o else -0.0
                        else:
                            bounds[node, half + o] = -1.0 if (mask >> o) & 1 else -0.0
                if not parts.cyclic[c]:
                    if kind[parts.order[start]] != TERMINAL:
                        _sweep(kind, data, offsets, targets, weights, None, bounds, parts.order, start, end,
                               outcomes, special, big)
                    continue
                _settle(kind, data, offsets, targets, weights, None, bounds, parts.order, start, end, outcomes,
                        special, big, tolerance, most_sweeps, check, previous, &total_sweeps, &widest)
                if not c % 4096:
                    _checked(check, previous)
    finally:
        fesetround(previous)
    return bounds_array[:, :outcomes], bounds_array[:, half:half + outcomes], total_sweeps, widest


cdef int _settle(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                 const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                 double[:, ::1] bounds, vector[int64_t]& order, int64_t start, int64_t end, int columns,
                 const uint8_t[::1] special, dict big, double tolerance, int64_t most_sweeps, check,
                 int rounding, int64_t* total_sweeps, double* widest) except -1 nogil:
    """`_sweep` the cyclic component order[start:end] until each of its intervals is within
    ``tolerance`` (relative to 1 + its lower end where ``mass`` is given: expected totals),
    or ``most_sweeps`` ran out; counts into ``total_sweeps``, and raises ``widest`` to the
    widest interval left. ``check`` as `_checked`'s, every 64 sweeps."""
    cdef int64_t sweeps = 0, i, node
    cdef int column, half = bounds.shape[1] // 2
    cdef double width, lower, upper, scale
    while True:
        _sweep(kind, data, offsets, targets, weights, mass, bounds, order, start, end, columns, special, big)
        sweeps += 1
        total_sweeps[0] += 1
        width = 0.0
        for i in range(start, end):
            node = order[i]
            for column in range(columns):
                lower, upper = bounds[node, column], -bounds[node, half + column]
                scale = 1.0 if mass is None else 1.0 + lower
                if upper - lower > width * scale:
                    width = (upper - lower) / scale
        if width <= tolerance or sweeps >= most_sweeps:
            if width > widest[0]:
                widest[0] = width
            return 0
        if not total_sweeps[0] % 64:
            _checked(check, rounding)


cdef int _checked(check, int rounding) except -1 nogil:
    """``check()`` and pending signals, with the GIL, in rounding mode ``rounding``."""
    fesetround(rounding)
    with gil:
        PyErr_CheckSignals()
        if check is not None:
            check()
    return 0


def chain_expectations(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                       const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                       double tolerance, int64_t most_sweeps, _Components parts not None, overrides=None,
                       check=None):
    """Certified bounds on expected totals (a reward per chance step, ``mass[node, r] /
    data[node]``) from every node of ``parts`` (`reachable_components`), where play ends
    with probability 1 (the caller checks that: `outcome_reach`).

    Lower bounds iterate up from 0. Upper bounds iterate down from a bound proven first:
    in a cyclic component, once every member leaves it within K steps with probability at
    least q (a lower bound from K round-down sweeps), the expected steps inside are at most
    K / q, so a member's expectation is at most K / q times the largest reward a step
    pays there plus the largest upper bound of an exit. Every later round-up sweep stays
    above the expectation (the step is monotone), and the sweeps stop once each interval
    is within ``tolerance`` relative to 1 + its lower end. Returns ``(lower,
    negated_upper, widest_relative, sweeps)`` (as `chain_bounds`'). Without the GIL, as
    `chain_bounds`.
    """
    import numpy

    cdef int64_t count = kind.shape[0]
    cdef int rewards = mass.shape[1]
    if rewards > 64:
        raise ValueError("at most 64 reward counters")
    cdef int half = _padded(rewards)
    # a row: the lower bounds, then the upper bounds negated (`_sweep`); spare columns 0
    bounds_array = numpy.zeros((count, 2 * half))
    bounds_array[:, half:half + rewards] = -INFINITY
    cdef double[:, ::1] bounds = bounds_array
    cdef double[::1] left = numpy.zeros(count)
    cdef double[::1] left_next = numpy.zeros(count)
    cdef uint8_t[::1] inside = numpy.zeros(count, dtype=numpy.uint8)
    cdef dict big = overrides or {}
    cdef const uint8_t[::1] special = _special_nodes(count, big)
    cdef int64_t c, i, node, start, end, total_sweeps = 0
    cdef int r
    cdef double widest = 0.0, steps_bound
    cdef int previous = fegetround()
    try:
        with nogil:
            for c in range(<int64_t>parts.cyclic.size()):
                start, end = parts.starts[c], parts.starts[c + 1]
                node = parts.order[start]
                if not c % 4096:
                    _checked(check, previous)
                if not parts.cyclic[c]:
                    if kind[node] == TERMINAL:
                        for r in range(rewards):
                            bounds[node, half + r] = -0.0
                    else:
                        _sweep(kind, data, offsets, targets, weights, mass, bounds, parts.order, start, end,
                               rewards, special, big)
                    continue
                for i in range(start, end):
                    inside[parts.order[i]] = 1
                steps_bound = _steps_bound(kind, data, offsets, targets, weights, parts.order, start, end, inside,
                                           left, left_next, special, big, check, previous)
                _first_upper(kind, data, offsets, targets, weights, mass, bounds, parts.order, start, end, rewards,
                             inside, special, big, steps_bound)
                for i in range(start, end):
                    inside[parts.order[i]] = 0
                _settle(kind, data, offsets, targets, weights, mass, bounds, parts.order, start, end, rewards,
                        special, big, tolerance, most_sweeps, check, previous, &total_sweeps, &widest)
    finally:
        fesetround(previous)
    return bounds_array[:, :rewards], bounds_array[:, half:half + rewards], widest, total_sweeps


cdef double _steps_bound(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                         const int32_t[:] targets, const int64_t[:] weights, vector[int64_t]& order,
                         int64_t start, int64_t end, uint8_t[::1] inside, double[::1] left,
                         double[::1] left_next, const uint8_t[::1] special, dict big, check,
                         int rounding) except -1 nogil:
    """An upper bound on the expected steps spent in component order[start:end] from any
    member: K / q once every member has left within K steps with probability >= q (lower
    bounds from K round-down Jacobi sweeps of the probability of having left).
    ``check`` as `_checked`'s, every 64 sweeps, with ``rounding`` the caller's mode."""
    cdef int64_t i, node, edge, target, steps = 0
    cdef double least = 0.0, total, sum_
    for i in range(start, end):
        left[order[i]] = 0.0
    fesetround(FE_DOWNWARD)
    try:
        while least < 0.5:
            steps += 1
            if steps > 10_000_000:
                with gil:
                    raise ArithmeticError("a component that play does not leave")
            if not steps % 64:
                _checked(check, rounding)
                fesetround(FE_DOWNWARD)
            for i in range(start, end):
                node = order[i]
                if data[node] < 0 or special[node]:
                    with gil:
                        left_next[node] = _left_big(node, offsets, targets, inside, left, big[node])
                    continue
                sum_ = 0.0
                for edge in range(offsets[node], offsets[node + 1]):
                    target = targets[edge]
                    sum_ += <double>weights[edge] * (left[target] if inside[target] else 1.0)
                left_next[node] = sum_ / _total_up(data[node])
            least = 1.0
            for i in range(start, end):
                node = order[i]
                left[node] = left_next[node]
                if left[node] < least:
                    least = left[node]
        fesetround(FE_UPWARD)
        total = <double>steps / least
    finally:
        fesetround(FE_TONEAREST)
    return total


cdef double _left_big(int64_t node, const int64_t[:] offsets, const int32_t[:] targets, uint8_t[::1] inside,
                      double[::1] left, tuple exact) except -1:
    from fractions import Fraction

    total, node_weights = exact[0], exact[1]
    value = 0.0
    cdef int64_t edge, target
    for edge in range(offsets[node], offsets[node + 1]):
        target = targets[edge]
        p = _down(Fraction(node_weights[edge - offsets[node]], total))
        fesetround(FE_DOWNWARD)
        value = value + p * (left[target] if inside[target] else 1.0)
    return value


cdef int _first_upper(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                      const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                      double[:, ::1] bounds, vector[int64_t]& order, int64_t start, int64_t end, int rewards,
                      uint8_t[::1] inside, const uint8_t[::1] special, dict big,
                      double steps_bound) except -1 nogil:
    """A first upper bound for every member: steps_bound times the largest reward a step
    pays in the component, plus the largest upper bound of a node it leaves to (``bounds``'
    rows as `_sweep`'s)."""
    cdef int64_t i, node, edge, target
    cdef int r, half = bounds.shape[1] // 2
    cdef double most_reward[64]
    cdef double most_exit[64]
    cdef double step
    for r in range(rewards):
        most_reward[r] = 0.0
        most_exit[r] = 0.0
    fesetround(FE_UPWARD)
    for i in range(start, end):
        node = order[i]
        for r in range(rewards):
            if data[node] < 0 or special[node]:
                with gil:
                    step = _up_ratio(big[node], r)
                fesetround(FE_UPWARD)
            else:
                step = <double>mass[node, r] / _total_down(data[node])
            if step > most_reward[r]:
                most_reward[r] = step
        for edge in range(offsets[node], offsets[node + 1]):
            target = targets[edge]
            if not inside[target]:
                for r in range(rewards):
                    if -bounds[target, half + r] > most_exit[r]:
                        most_exit[r] = -bounds[target, half + r]
    for i in range(start, end):
        for r in range(rewards):
            bounds[order[i], half + r] = -(most_reward[r] * steps_bound + most_exit[r])
    fesetround(FE_TONEAREST)
    return 0


def _up_ratio(exact, int r):
    from fractions import Fraction
    total, _weights, masses = exact
    return _up(Fraction(masses[r], total))


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


cdef inline int _padded(int width) noexcept nogil:
    """The columns of each bound a row of `_sweep` holds for ``width`` columns: 4, 6 or 8,
    or whole blocks of 16, so that `_edge_sums` takes a row (both bounds) in passes of
    8, 12 or 16 lanes, each pass either one bound's columns or half of each."""
    if width <= 8:
        return 4 if width <= 4 else (6 if width <= 6 else 8)
    return (width + 2 * LANES - 1) // (2 * LANES) * (2 * LANES)


cdef inline void _edge_sums(const int64_t[:] offsets, const int32_t[:] targets, const int64_t[:] weights,
                            const double[:, ::1] source, int64_t node, int block, int lanes, int kind,
                            bint wide, double* sums) noexcept nogil:
    """``sums[lane] += weight * source[target, block + lane]`` over the node's edges, in
    round-down mode, for ``lanes`` (8, 12 or 16) columns at once in registers, each column
    summed in edge order as a loop over one column would.

    A column of lower bounds takes the weight rounded down, one of negated upper bounds
    the weight rounded up: they differ only past 2**53, so only where the node is
    ``wide`` (its total, the weights' sum, passes 2**53). ``kind`` `MIXED`: the first half
    of the lanes are lower bounds and the rest upper ones; `LOWER` or `UPPER`: all 16
    lanes are."""
    cdef double a0 = sums[0], a1 = sums[1], a2 = sums[2], a3 = sums[3], low, high
    cdef double a4 = sums[4], a5 = sums[5], a6 = sums[6], a7 = sums[7]
    cdef double a8, a9, a10, a11, a12, a13, a14, a15
    cdef const double* row
    cdef int64_t edge
    if lanes == LANES:
        for edge in range(offsets[node], offsets[node + 1]):
            low = <double>weights[edge]
            high = -<double>(-weights[edge]) if wide else low
            row = &source[targets[edge], block]
            a0 += low * row[0]
            a1 += low * row[1]
            a2 += low * row[2]
            a3 += low * row[3]
            a4 += high * row[4]
            a5 += high * row[5]
            a6 += high * row[6]
            a7 += high * row[7]
    elif lanes == 12:
        a8, a9, a10, a11 = sums[8], sums[9], sums[10], sums[11]
        for edge in range(offsets[node], offsets[node + 1]):
            low = <double>weights[edge]
            high = -<double>(-weights[edge]) if wide else low
            row = &source[targets[edge], block]
            a0 += low * row[0]
            a1 += low * row[1]
            a2 += low * row[2]
            a3 += low * row[3]
            a4 += low * row[4]
            a5 += low * row[5]
            a6 += high * row[6]
            a7 += high * row[7]
            a8 += high * row[8]
            a9 += high * row[9]
            a10 += high * row[10]
            a11 += high * row[11]
        sums[8], sums[9], sums[10], sums[11] = a8, a9, a10, a11
    else:
        a8, a9, a10, a11, a12, a13, a14, a15 = sums[8], sums[9], sums[10], sums[11], sums[12], sums[13], sums[14], sums[15]
        for edge in range(offsets[node], offsets[node + 1]):
            low = <double>weights[edge]
            high = -<double>(-weights[edge]) if wide else low
            if kind == LOWER:
                high = low
            elif kind == UPPER:
                low = high
            row = &source[targets[edge], block]
            a0 += low * row[0]
            a1 += low * row[1]
            a2 += low * row[2]
            a3 += low * row[3]
            a4 += low * row[4]
            a5 += low * row[5]
            a6 += low * row[6]
            a7 += low * row[7]
            a8 += high * row[8]
            a9 += high * row[9]
            a10 += high * row[10]
            a11 += high * row[11]
            a12 += high * row[12]
            a13 += high * row[13]
            a14 += high * row[14]
            a15 += high * row[15]
        sums[8], sums[9], sums[10], sums[11], sums[12], sums[13], sums[14], sums[15] = a8, a9, a10, a11, a12, a13, a14, a15
    sums[0], sums[1], sums[2], sums[3] = a0, a1, a2, a3
    sums[4], sums[5], sums[6], sums[7] = a4, a5, a6, a7


cdef int _sweep(const uint8_t[:] kind, const int64_t[:] data, const int64_t[:] offsets,
                const int32_t[:] targets, const int64_t[:] weights, const int64_t[:, ::1] mass,
                double[:, ::1] bounds, vector[int64_t]& order, int64_t start, int64_t end, int columns,
                const uint8_t[::1] special, dict big) except -1 nogil:
    """One Gauss-Seidel sweep over order[start:end] of both bounds of ``columns`` columns,
    each kept only where it tightens the bound it replaces.

    A row of ``bounds`` holds a node's lower bounds, then its upper bounds negated
    (`_padded` columns each), and the sweep runs in round-down mode: the round-down of a
    negated sum is the round-up of the sum, bit for bit, so one pass over a node's edges
    rounds both bounds outward (each weight rounded down for the lower bounds and up for
    the upper ones, `_edge_sums`). Each column starts from the node's reward ``mass`` (expected
    totals), or from 0 where ``mass`` is None (probabilities)."""
    cdef int64_t i, node
    cdef int lane, column, blocks, block, half = bounds.shape[1] // 2
    cdef int lanes = 2 * half if half <= LANES else 2 * LANES  # a row's both halves at once
    cdef bint masses = mass is not None
    cdef double sums[2 * LANES]
    cdef double total_above, total_below
    fesetround(FE_DOWNWARD)
    for i in range(start, end):
        node = order[i]
        if kind[node] == TERMINAL:
            continue
        if kind[node] == DECISION:
            fesetround(FE_TONEAREST)
            with gil:
                raise ValueError("certified chain bounds take a chain (no decision nodes)")
        if data[node] < 0 or special[node]:
            with gil:
                _sweep_big(node, offsets, targets, bounds, columns, big[node], masses)
            fesetround(FE_DOWNWARD)
            continue
        total_above = _total_up(data[node])
        total_below = <double>data[node]  # rounded down
        for blocks in range(2 * half // lanes):
            block = blocks * lanes
            for lane in range(lanes):
                column = block + lane
                if not masses:
                    sums[lane] = 0.0
                elif column < half:
                    sums[lane] = <double>mass[node, column] if column < columns else 0.0
                else:
                    sums[lane] = <double>(-mass[node, column - half]) if column - half < columns else 0.0
            _edge_sums(offsets, targets, weights, bounds, node, block, lanes,
                       MIXED if half <= LANES else (LOWER if block < half else UPPER), data[node] >= WIDE, sums)
            for lane in range(lanes):
                column = block + lane
                if column < half:
                    if column < columns:
                        sums[lane] = sums[lane] / total_above
                        if sums[lane] > bounds[node, column]:
                            bounds[node, column] = sums[lane]
                elif column - half < columns:
                    sums[lane] = sums[lane] / total_below
                    if sums[lane] > bounds[node, column]:
                        bounds[node, column] = sums[lane]
    fesetround(FE_TONEAREST)
    return 0


cdef int _sweep_big(int64_t node, const int64_t[:] offsets, const int32_t[:] targets, double[:, ::1] bounds,
                    int columns, tuple exact, bint masses) except -1:
    """A node whose weights (or reward masses) pass 64 bits: its step in exact rationals,
    each probability rounded outward (``exact``: (total, weights), and its masses with
    ``masses``; ``bounds``' rows as `_sweep`'s)."""
    from fractions import Fraction

    total, node_weights = exact[0], exact[1]
    cdef int64_t edge
    cdef int column, half = bounds.shape[1] // 2
    fesetround(FE_TONEAREST)
    probabilities = [Fraction(weight, total) for weight in node_weights]
    low_ps, high_ps = [_down(p) for p in probabilities], [_up(p) for p in probabilities]
    for column in range(columns):
        start = Fraction(exact[2][column], total) if masses else Fraction(0)
        low, high = _down(start), _up(start)
        for edge in range(offsets[node], offsets[node + 1]):
            low_p, high_p = low_ps[edge - offsets[node]], high_ps[edge - offsets[node]]
            fesetround(FE_DOWNWARD)
            low = low + low_p * bounds[targets[edge], column]
            fesetround(FE_UPWARD)
            high = high + high_p * -bounds[targets[edge], half + column]
        fesetround(FE_TONEAREST)
        if low > bounds[node, column]:
            bounds[node, column] = low
        if -high > bounds[node, half + column]:
            bounds[node, half + column] = -high
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


# ----- games: bounded value iteration over a growing graph (BRTDP with KKW end components) ----

from exactdice.markov._graph cimport CHANCE as G_CHANCE, DECISION as G_DECISION, FRONTIER as G_FRONTIER
from exactdice.markov._graph cimport TERMINAL as G_TERMINAL, GrowingGraph
from libcpp.unordered_set cimport unordered_set

DEF MAX_TRAJECTORY = 100_000


@cython.final
cdef class GameSearch:
    """Lower and upper bounds on the value of every node of a turn-based stochastic game
    (chance, "max" and "min" nodes) that a `GrowingGraph` explores as the search goes.

    Trajectories from the initial node follow the bounds (BRTDP: McMahan, Likhachev,
    Gordon 2005), expanding the frontier nodes they meet and backing the bounds up along
    their path; `sweep` backs up every expanded node; `settle_end_components` pulls the
    upper bounds of end components down and pushes the lower ones up (Kelmendi,
    Kretinsky, Weininger, CAV 2018) so both converge where play can circle. Every chance
    backup is computed in round-down (lower) and round-up (upper) arithmetic from the
    exact integer weights, so the bounds stay sound. A node holds 16 bytes here (its two
    bounds) besides the graph's own arrays.
    """

    cdef GrowingGraph graph
    cdef vector[double] lo
    cdef vector[double] hi
    cdef vector[double] payoff
    cdef double least, greatest, endless
    cdef int64_t initial
    cdef uint64_t rng
    cdef public int64_t trajectories, sweeps, end_component_passes, end_components
    cdef bint cycle_seen
    cdef vector[int64_t] path
    cdef unordered_set[int64_t] on_path

    def __init__(self, GrowingGraph graph, payoffs, double endless, int64_t initial=0, uint64_t seed=0):
        """``payoffs``: the payoff of each outcome (by index); ``endless``: what play that
        never ends pays."""
        self.graph = graph
        for value in payoffs:
            self.payoff.push_back(value)
        self.endless = endless
        self.least = min(list(payoffs) + [endless])
        self.greatest = max(list(payoffs) + [endless])
        self.initial = initial
        self.rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL
        self.trajectories = self.sweeps = self.end_component_passes = self.end_components = 0
        self._grow()

    cdef inline double _random(self) noexcept nogil:
        """A float in [0, 1) (xorshift64*)."""
        self.rng ^= self.rng >> 12
        self.rng ^= self.rng << 25
        self.rng ^= self.rng >> 27
        return ((self.rng * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0)

    cdef void _grow(self) noexcept:
        """Bounds for the nodes the graph found since: the least and greatest payoff (a
        terminal's own payoff once expanded)."""
        cdef int64_t n = self.graph.node_count(), node
        cdef int64_t before = self.lo.size()
        self.lo.resize(n, self.least)
        self.hi.resize(n, self.greatest)
        for node in range(before, n):
            if self.graph.kind[node] == G_TERMINAL:
                self.lo[node] = self.hi[node] = self.payoff[self.graph.data[node]]

    cdef int _expand(self, int64_t node) except -1:
        self.graph.expand(node)
        self._grow()
        if self.graph.kind[node] == G_TERMINAL:
            self.lo[node] = self.hi[node] = self.payoff[self.graph.data[node]]
        return 0

    cdef bint _backup(self, int64_t node) except -1:
        """One Bellman backup of both bounds; True where one moved."""
        cdef uint8_t kind = self.graph.kind[node]
        cdef int64_t first = self.graph.first_edge[node], count = self.graph.edge_count[node], edge, target
        cdef double low, high, w, total
        cdef bint moved = False
        if kind == G_CHANCE:
            if self.graph.data[node] < 0:
                low, high = self._chance_big(node)
            elif self.graph.data[node] >= WIDE:
                low, high = self._chance_wide(node)
            else:
                fesetround(FE_DOWNWARD)
                low = 0.0
                for edge in range(first, first + count):
                    low += <double>self.graph.weights[edge] * self.lo[self.graph.targets[edge]]
                low = low / _total_up(self.graph.data[node])
                fesetround(FE_UPWARD)
                high = 0.0
                for edge in range(first, first + count):
                    high += <double>self.graph.weights[edge] * self.hi[self.graph.targets[edge]]
                high = high / _total_down(self.graph.data[node])
                fesetround(FE_TONEAREST)
        elif kind == G_DECISION:
            target = self.graph.targets[first]
            low, high = self.lo[target], self.hi[target]
            for edge in range(first + 1, first + count):
                target = self.graph.targets[edge]
                if self.graph.data[node] > 0:
                    if self.lo[target] > low:
                        low = self.lo[target]
                    if self.hi[target] > high:
                        high = self.hi[target]
                else:
                    if self.lo[target] < low:
                        low = self.lo[target]
                    if self.hi[target] < high:
                        high = self.hi[target]
        else:
            return False
        if low > self.lo[node]:
            self.lo[node] = low
            moved = True
        if high < self.hi[node]:
            self.hi[node] = high
            moved = True
        if moved and self.lo[node] > self.hi[node]:
            raise ArithmeticError(f"the bounds crossed at node {node} ([{self.lo[node]!r}, {self.hi[node]!r}])")
        return moved

    cdef tuple _chance_big(self, int64_t node):
        """A chance backup where the weights pass 64 bits: each probability rounded outward
        (the way that moves its term outward: a value may be negative)."""
        from fractions import Fraction
        total, node_weights = self.graph.big[node]
        cdef int64_t first = self.graph.first_edge[node], edge
        cdef double low_value, high_value
        low = high = 0.0
        for edge in range(first, first + self.graph.edge_count[node]):
            p = Fraction(node_weights[edge - first], total)
            low_p, high_p = _down(p), _up(p)
            low_value, high_value = self.lo[self.graph.targets[edge]], self.hi[self.graph.targets[edge]]
            fesetround(FE_DOWNWARD)
            low = low + (low_p if low_value >= 0 else high_p) * low_value
            fesetround(FE_UPWARD)
            high = high + (high_p if high_value >= 0 else low_p) * high_value
            fesetround(FE_TONEAREST)
        return low, high

    cdef tuple _chance_wide(self, int64_t node):
        """A chance backup where the total passes 2**53, so a weight or the total may not
        be a float: each rounded the way that moves its term outward (a value may be
        negative)."""
        cdef int64_t first = self.graph.first_edge[node], edge, weight, total = self.graph.data[node]
        cdef double low = 0.0, high = 0.0, value
        fesetround(FE_DOWNWARD)
        for edge in range(first, first + self.graph.edge_count[node]):
            weight, value = self.graph.weights[edge], self.lo[self.graph.targets[edge]]
            low += (<double>weight if value >= 0 else -<double>(-weight)) * value
        low = low / (-<double>(-total) if low >= 0 else <double>total)
        fesetround(FE_UPWARD)
        for edge in range(first, first + self.graph.edge_count[node]):
            weight, value = self.graph.weights[edge], self.hi[self.graph.targets[edge]]
            high += (<double>weight if value >= 0 else -<double>(-weight)) * value
        high = high / (-<double>(-total) if high >= 0 else <double>total)
        fesetround(FE_TONEAREST)
        return low, high

    cdef int64_t _choose(self, int64_t node, bint maximise) noexcept:
        """Among the actions best for the upper bounds ("max") or the lower ones ("min"),
        one drawn with weight its gap (a fixed tie-break can circle an end component and
        never look at an equally good exit)."""
        cdef int64_t first = self.graph.first_edge[node], count = self.graph.edge_count[node], edge, target
        cdef int64_t first_tied = -1, last_tied = -1
        cdef double best, value, total = 0.0, pick
        target = self.graph.targets[first]
        best = self.hi[target] if maximise else self.lo[target]
        for edge in range(first + 1, first + count):
            target = self.graph.targets[edge]
            value = self.hi[target] if maximise else self.lo[target]
            if value > best if maximise else value < best:
                best = value
        for edge in range(first, first + count):
            target = self.graph.targets[edge]
            if (self.hi[target] if maximise else self.lo[target]) == best:
                total += self.hi[target] - self.lo[target]
                if first_tied < 0:
                    first_tied = target
                last_tied = target
        if total <= 0.0:
            return first_tied
        pick = self._random() * total
        for edge in range(first, first + count):
            target = self.graph.targets[edge]
            if (self.hi[target] if maximise else self.lo[target]) == best:
                pick -= self.hi[target] - self.lo[target]
                if pick < 0:
                    return target
        return last_tied

    cdef int _trajectory(self, double stop_gap) except -1:
        cdef int64_t node = self.initial, next_node = -1, edge, first, count, target
        cdef uint8_t kind
        cdef double total, weight_sum, pick
        cdef Py_ssize_t i
        self.path.clear()
        self.on_path.clear()
        while <int64_t>self.path.size() < MAX_TRAJECTORY:
            if self.graph.kind[node] == G_FRONTIER:
                self._expand(node)
            self.path.push_back(node)
            self.on_path.insert(node)
            kind = self.graph.kind[node]
            if kind == G_TERMINAL or self.hi[node] - self.lo[node] <= stop_gap:
                break
            first, count = self.graph.first_edge[node], self.graph.edge_count[node]
            if kind == G_DECISION:
                next_node = self._choose(node, self.graph.data[node] > 0)
            else:
                total = 0.0
                weight_sum = 0.0
                for edge in range(first, first + count):
                    target = self.graph.targets[edge]
                    total += <double>self.graph.weights[edge] * (self.hi[target] - self.lo[target])
                    weight_sum += <double>self.graph.weights[edge]
                if weight_sum <= 0 or total <= stop_gap * weight_sum:
                    break  # what the successors could still gain is below the gap sought
                pick = self._random() * total
                next_node = self.graph.targets[first + count - 1]
                for edge in range(first, first + count):
                    target = self.graph.targets[edge]
                    pick -= <double>self.graph.weights[edge] * (self.hi[target] - self.lo[target])
                    if pick < 0:
                        next_node = target
                        break
            if self.on_path.count(next_node):
                self.cycle_seen = True
                break
            node = next_node
        for i in range(<Py_ssize_t>self.path.size() - 1, -1, -1):
            self._backup(self.path[i])
        self.trajectories += 1
        return 0

    def sweep(self, int passes=3):
        """Back up every expanded node, last found first, up to ``passes`` times (until no
        bound moves); returns the passes made."""
        cdef int made = 0
        cdef int64_t node
        cdef bint moved
        while made < passes:
            made += 1
            moved = False
            for node in range(<int64_t>self.lo.size() - 1, -1, -1):
                if self.graph.kind[node] != G_FRONTIER and self.lo[node] < self.hi[node]:
                    if self._backup(node):
                        moved = True
            if not moved:
                break
        self.sweeps += made
        return made

    # ----- end components -----------------------------------------------------------------

    def settle_end_components(self):
        """Pull the upper bounds of end components down and push the lower ones up.

        Upper: in an end component T where every "min" node keeps an action inside T (its
        actions restricted to those best for the lower bounds, KKW), "min" can keep play in
        T until "max" leaves it, so no node of T is worth more than max(best exit of a
        "max" node, what endless play pays): sound for any such T. Lower: the mirror
        image. Returns the end components found.
        """
        cdef int found = 0
        for for_upper in (True, False):
            found += self._settle(for_upper)
        self.end_component_passes += 1
        self.end_components = found
        return found

    cdef int _settle(self, bint for_upper, const int64_t* members=NULL, int64_t member_count=0) except -1:
        """`settle_end_components` for one side, over every expanded node or over
        ``members`` only."""
        cdef int64_t n = self.lo.size(), m = self.graph.targets.size(), node, edge, first, count, target, i
        cdef vector[uint8_t] inside       # a candidate member of an end component
        cdef vector[uint8_t] allowed      # per edge: usable inside one
        cdef vector[int64_t] component
        cdef vector[uint8_t] candidate
        inside.assign(n, 0)
        allowed.assign(m, 0)
        candidate.assign(n, 1 if members == NULL else 0)
        for i in range(member_count):
            candidate[members[i]] = 1
        cdef double best
        cdef bint restricted
        for node in range(n):
            if not candidate[node] or (self.graph.kind[node] != G_CHANCE and self.graph.kind[node] != G_DECISION):
                continue
            inside[node] = 1
            first, count = self.graph.first_edge[node], self.graph.edge_count[node]
            restricted = (self.graph.kind[node] == G_DECISION
                          and ((self.graph.data[node] < 0) if for_upper else (self.graph.data[node] > 0)))
            if restricted:  # the restricted side keeps only its actions best for the other bound
                best = self.lo[self.graph.targets[first]] if for_upper else self.hi[self.graph.targets[first]]
                for edge in range(first, first + count):
                    target = self.graph.targets[edge]
                    if for_upper and self.lo[target] < best:
                        best = self.lo[target]
                    elif not for_upper and self.hi[target] > best:
                        best = self.hi[target]
                for edge in range(first, first + count):
                    target = self.graph.targets[edge]
                    allowed[edge] = (self.lo[target] == best) if for_upper else (self.hi[target] == best)
            else:
                for edge in range(first, first + count):
                    allowed[edge] = 1
        cdef bint changed = True
        cdef bint keep
        while changed:
            _restricted_components(self.graph, inside, allowed, component)
            changed = False
            for node in range(n):
                if not inside[node]:
                    continue
                first, count = self.graph.first_edge[node], self.graph.edge_count[node]
                keep = False
                for edge in range(first, first + count):
                    if not allowed[edge]:
                        continue
                    target = self.graph.targets[edge]
                    if inside[target] and component[target] == component[node]:
                        keep = True
                    elif self.graph.kind[node] == G_CHANCE:
                        keep = False   # a chance node with a branch outside is in no end component
                        break
                    else:
                        allowed[edge] = 0
                        changed = True
                if not keep:
                    inside[node] = 0
                    changed = True
        # the groups: the components of what is left
        _restricted_components(self.graph, inside, allowed, component)
        cdef dict caps = {}
        cdef int64_t group
        for node in range(n):
            if not inside[node]:
                continue
            group = component[node]
            if group not in caps:
                caps[group] = self.endless
            if self.graph.kind[node] == G_DECISION and ((self.graph.data[node] > 0) if for_upper
                                                         else (self.graph.data[node] < 0)):
                first, count = self.graph.first_edge[node], self.graph.edge_count[node]
                for edge in range(first, first + count):
                    target = self.graph.targets[edge]
                    if inside[target] and component[target] == group:
                        continue
                    if for_upper and self.hi[target] > caps[group]:
                        caps[group] = self.hi[target]
                    elif not for_upper and self.lo[target] < caps[group]:
                        caps[group] = self.lo[target]
        for node in range(n):
            if not inside[node]:
                continue
            best = caps[component[node]]
            if for_upper and best < self.hi[node]:
                self.hi[node] = best
            elif not for_upper and best > self.lo[node]:
                self.lo[node] = best
        return len(caps)

    # ----- the run ----------------------------------------------------------------------------

    def run(self, double precision, max_seconds=None, max_nodes=None, progress=None,
            double progress_every=0.5, stop_check=None, check=None, double sweep_growth=1.5):
        """Trajectories until the gap at the initial node is <= ``precision``, ``max_seconds``
        pass, ``max_nodes`` nodes are expanded, ``check()`` raises or Ctrl-C; returns
        ``(stopped, history)`` ("precision", "time", "states", "interrupted", or the reason
        ``stop_check(lower, upper)`` returned; history: (seconds, lower, upper, expanded)).
        """
        import time
        cdef double started = time.perf_counter(), now, next_report
        cdef double stop_gap = precision / 100
        cdef int64_t since_settle = 0, root = self.initial
        cdef double next_sweep = max(2000, self.graph.expanded_count * sweep_growth)
        stopped = "precision"
        history = []
        next_report = started
        try:
            while self.hi[root] - self.lo[root] > precision:
                if not self.trajectories % 16:
                    now = time.perf_counter()
                    if max_seconds is not None and now - started >= max_seconds:
                        stopped = "time"
                        break
                    if max_nodes is not None and self.graph.expanded_count >= max_nodes:
                        stopped = "states"
                        break
                    if now >= next_report:
                        history.append((now - started, self.lo[root], self.hi[root], self.graph.expanded_count))
                        if progress is not None:
                            progress(self.lo[root], self.hi[root], self.graph.expanded_count, now - started)
                        if check is not None:
                            check()
                        next_report = now + progress_every
                        if stop_check is not None:
                            reason = stop_check(self.lo[root], self.hi[root])
                            if reason:
                                stopped = reason
                                break
                    PyErr_CheckSignals()
                self._trajectory(stop_gap)
                since_settle += 1
                if self.cycle_seen and since_settle >= max(16, self.graph.expanded_count // 20):
                    self.settle_end_components()
                    self.cycle_seen = False
                    since_settle = 0
                if self.graph.expanded_count >= next_sweep:
                    self.sweep()
                    next_sweep = self.graph.expanded_count * sweep_growth
            if stopped not in ("precision", "interrupted"):
                self.sweep()
        except KeyboardInterrupt:
            stopped = "interrupted"
        history.append((time.perf_counter() - started, self.lo[root], self.hi[root], self.graph.expanded_count))
        return stopped, history

    def solve_all(self, double tolerance, int64_t most_sweeps=1_000_000, check=None):
        """Bounds for a whole, expanded graph: its components, sinks first, each swept
        (Gauss-Seidel) until every member's interval is within ``tolerance``, its end
        components settled every 64 sweeps that do not get there and whenever no bound
        moves (then, if settling moves none either, the component is as narrow as its exits
        allow). Returns (sweeps, widest interval left)."""
        cdef int64_t n = self.lo.size(), node, c, count_components, i, start, end, made, total_made = 0
        cdef vector[uint8_t] inside, allowed
        cdef vector[int64_t] component, order, starts
        cdef double widest = 0.0, width, before
        cdef bint moved
        for node in range(n):
            if self.graph.kind[node] == G_FRONTIER:
                raise ValueError("solve_all needs the whole graph expanded")
        inside.assign(n, 1)
        allowed.assign(self.graph.targets.size(), 1)
        _restricted_components(self.graph, inside, allowed, component)
        count_components = 0
        for node in range(n):
            if component[node] + 1 > count_components:
                count_components = component[node] + 1
        starts.assign(count_components + 1, 0)
        for node in range(n):
            starts[component[node] + 1] += 1
        for c in range(count_components):
            starts[c + 1] += starts[c]
        order.assign(n, 0)
        cdef vector[int64_t] fill = starts
        for node in range(n):
            order[fill[component[node]]] = node
            fill[component[node]] += 1
        for c in range(count_components):   # Tarjan numbers the sinks first
            start, end = starts[c], starts[c + 1]
            made = 0
            while True:
                moved = False
                for i in range(start, end):
                    if self.graph.kind[order[i]] != G_TERMINAL and self._backup(order[i]):
                        moved = True
                made += 1
                width = 0.0
                for i in range(start, end):
                    if self.hi[order[i]] - self.lo[order[i]] > width:
                        width = self.hi[order[i]] - self.lo[order[i]]
                if width <= tolerance or made >= most_sweeps:
                    break
                if not moved or not made % 64:
                    before = width
                    self._settle(True, &order[start], end - start)
                    self._settle(False, &order[start], end - start)
                    width = 0.0
                    for i in range(start, end):
                        if self.hi[order[i]] - self.lo[order[i]] > width:
                            width = self.hi[order[i]] - self.lo[order[i]]
                    if not moved and width >= before:
                        break
                    if check is not None:
                        check()
                    PyErr_CheckSignals()
            total_made += made
            if width > widest:
                widest = width
        self.sweeps += total_made
        return total_made, widest

    def bounds(self, int64_t node):
        """(lower, upper) of a node."""
        return self.lo[node], self.hi[node]

    def raise_lower(self, int64_t node, double value):
        """Take a sound lower bound known from elsewhere (the value of a fixed strategy)."""
        if value > self.hi[node]:
            raise ArithmeticError(f"a lower bound {value!r} above the upper bound {self.hi[node]!r}")
        if value > self.lo[node]:
            self.lo[node] = value

    @property
    def lower(self):
        return self.lo[self.initial]

    @property
    def upper(self):
        return self.hi[self.initial]

    def memory_bytes(self):
        return 8 * (self.lo.capacity() + self.hi.capacity())

    def best_actions(self, double tie=0.0):
        """Expanded "max" node -> the edge it takes (`strategy_edges`)."""
        return {node: edge for node, edge in self.strategy_edges(tie).items() if self.graph.data[node] > 0}

    def strategy_edges(self, double tie=0.0):
        """Decision node -> the edge it takes, for the nodes play reaches from the initial
        one this way: "max" among its actions best for the lower bounds, "min" among those
        best for the upper bounds (within ``tie`` of the best). Ties go to an action
        through which the node first joins, walking backward, the nodes that lead to a
        terminal or frontier node: greedy alone can circle an end component forever (an
        exit worth the same as staying)."""
        cdef int64_t n = self.lo.size(), node, edge, first, count, target
        cdef vector[uint8_t] seen
        cdef vector[int64_t] stack, reached
        cdef double best, value
        cdef bint maximise
        seen.assign(n, 0)
        seen[self.initial] = 1
        stack.push_back(self.initial)
        candidates = {}
        while stack.size():
            node = stack.back()
            stack.pop_back()
            reached.push_back(node)
            kind = self.graph.kind[node]
            if kind == G_TERMINAL or kind == G_FRONTIER:
                continue
            first, count = self.graph.first_edge[node], self.graph.edge_count[node]
            if kind == G_DECISION:
                maximise = self.graph.data[node] > 0
                values = [self.lo[self.graph.targets[edge]] if maximise else self.hi[self.graph.targets[edge]]
                          for edge in range(first, first + count)]
                best = max(values) if maximise else min(values)
                chosen = [first + i for i, value in enumerate(values)
                          if (value >= best - tie if maximise else value <= best + tie)]
                candidates[node] = chosen
                following = [self.graph.targets[edge] for edge in chosen]
            else:
                following = [self.graph.targets[edge] for edge in range(first, first + count)]
            for target in following:
                if not seen[target]:
                    seen[target] = 1
                    stack.push_back(target)
        predecessors = {}
        for node in reached:
            kind = self.graph.kind[node]
            if kind == G_CHANCE:
                first, count = self.graph.first_edge[node], self.graph.edge_count[node]
                for edge in range(first, first + count):
                    predecessors.setdefault(self.graph.targets[edge], []).append((node, -1))
            elif kind == G_DECISION:
                for edge in candidates[node]:
                    predecessors.setdefault(self.graph.targets[edge], []).append((node, edge))
        queue = [node for node in reached if self.graph.kind[node] in (G_TERMINAL, G_FRONTIER)]
        joined = set(queue)
        chosen_edge = {}
        position = 0
        while position < len(queue):   # breadth first: the shortest way to an end
            for node, edge in predecessors.get(queue[position], ()):
                if node in joined:
                    continue
                joined.add(node)
                if edge >= 0:
                    chosen_edge[node] = edge
                queue.append(node)
            position += 1
        return {node: chosen_edge.get(node, edges[0]) for node, edges in candidates.items()}


cdef int _restricted_components(GrowingGraph graph, vector[uint8_t]& inside, vector[uint8_t]& allowed,
                                vector[int64_t]& component) except -1:
    """Strongly connected components (an iterative Tarjan) of the nodes marked ``inside``
    over their ``allowed`` edges to other such nodes: ``component[node]`` numbers them."""
    cdef int64_t n = inside.size(), counter = 0, root, node, edge, child, member, number = 0
    cdef vector[int64_t] index, low, stack, work_node, work_edge
    cdef vector[uint8_t] on_stack
    index.assign(n, -1)
    low.assign(n, 0)
    on_stack.assign(n, 0)
    component.assign(n, -1)
    cdef bint descended
    for root in range(n):
        if not inside[root] or index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.push_back(root)
        on_stack[root] = 1
        work_node.push_back(root)
        work_edge.push_back(graph.first_edge[root])
        while work_node.size():
            node = work_node.back()
            edge = work_edge.back()
            descended = False
            while edge < graph.first_edge[node] + graph.edge_count[node]:
                child = graph.targets[edge]
                edge += 1
                if not allowed[edge - 1] or not inside[child]:
                    continue
                if index[child] == -1:
                    work_edge[work_edge.size() - 1] = edge
                    index[child] = low[child] = counter
                    counter += 1
                    stack.push_back(child)
                    on_stack[child] = 1
                    work_node.push_back(child)
                    work_edge.push_back(graph.first_edge[child])
                    descended = True
                    break
                if on_stack[child] and index[child] < low[node]:
                    low[node] = index[child]
            if descended:
                continue
            work_node.pop_back()
            work_edge.pop_back()
            if work_node.size() and low[node] < low[work_node.back()]:
                low[work_node.back()] = low[node]
            if low[node] == index[node]:
                while True:
                    member = stack.back()
                    stack.pop_back()
                    on_stack[member] = 0
                    component[member] = number
                    if member == node:
                        break
                number += 1
    return 0
