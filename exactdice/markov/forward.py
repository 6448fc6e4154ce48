"""Everything at the initial state from one exact forward pass of expected visits.

Under a fixed strategy (chance nodes only, or decisions with a chosen edge each), the
expected number of visits to every state, counted from the initial state, carries all
the initial state's answers: the probability of an outcome is the visits to its
terminal states, never-ending play is the flow that enters a state which cannot reach
a terminal, expected steps are the visits to chance nodes and a reward is a weighted
sum of visits. So a chain without decisions needs no backward pass at all.

The arithmetic: one shared denominator
---------------------------------------
Let ``y[v]`` be the visits to ``v`` divided by its total weight ``t[v]`` (a decision
node's total is 1): what each unit of edge weight carries onwards. The ``y`` solve the
integer system ``A y = e_initial`` with ``A = diag(t) - W^T`` (``W`` the edge weights
among live states). Taken component by component in topological order (sources first):

* an acyclic state has ``y[v] = (inflow) / t[v]``, where the inflow is the weighted sum
  of its predecessors' ``y`` (plus 1 at the initial state);
* a cyclic component ``C`` has ``y_C = A_C^-1 (inflow_C) = adj(A_C) (inflow_C) / det A_C``
  (``adj`` the integer adjugate);
* a terminal or a never-ending state just collects its inflow.

So the denominator of ``y[v]`` divides ``D[v] = d[v] * lcm(D[u] for predecessors u)``
with ``d[v]`` = ``t[v]``, ``det A_C`` or 1. Written as exponent vectors over the prime
factors of the ``d``'s (totals are products of die sizes, so their factors are small
primes; a cofactor without small factors counts as one more "prime", which can only
make the bound larger), the lcm is an elementwise maximum and the product a sum. One
cheap pass over those vectors gives ``Q``, a multiple of every ``D[v]``; ``Q`` is at most
the largest denominator among the answers' own parts times the few factors that cancel.

The pass then keeps ``n[v] = Q * y[v]``, an INTEGER for every state, and does only
integer multiply-adds and exact divisions by small numbers (a cyclic block: FLINT's
exact solve of ``A_C n_C = Q inflow_C``): no gcd, no lcm, no denominators to bring
together. Every division is checked to leave no remainder (every block solution to be
integral); when all do, the ``n`` satisfy ``A n = Q e_initial`` exactly, so ``n / Q`` IS the solution of
the system (``A`` restricted to live states is invertible): there is no reconstruction
to trust. The outcome probabilities and never-ends are then checked to sum to exactly 1.

Loops on narrow numbers
-----------------------
The bound pass also records, per loop ``C``, ``D_in(C)``: the elementwise maximum of
its senders' vectors, a multiple of the denominator of every inflow ``y`` into ``C``.
So the loop's right side ``Q inflow_C`` is ``g * s`` with ``g = Q / D_in(C)`` and ``s``
an integer vector of about ``bits(D_in)`` bits (19,000 on average on A5 v C5 W3 P1's
72-state loops, against 64,022 for ``Q``). The loop solves ``A_C z = s`` (FLINT, exact)
and ``n_C = g z``; the division ``s = b / g`` is checked exact, and ``g z`` holds
whatever ``g`` is, so the scale is a saving, never an assumption. As ``Q`` holds
``D_in(C) * det A_C``, ``det A_C`` (hence ``z``'s denominator ``d``) divides ``g``,
and ``n_C = (g / d) * numerators(z)``: the loop hands its narrow numerators to its
targets (sum of weight * numerator per target) and multiplies each target's sum by
``g / d`` once. When ``d`` does not divide ``g`` every ``n`` is checked one by one.

Why not the issue's big modulus (not built; an argument, not a measurement): a pass
modulo ``M = 2^N - 1`` with ``N > bits(Q)`` keeps every state's number at ``N`` bits
as this pass keeps it at ``bits(Q)``, and turns the exact division by a small total
into a multiplication by a wide inverse modulo ``M``; it does not make the loops cheaper (its prototype spent 130 of 191 s in
them on A5 v C5 W5 P2). Loops were 72% of this pass's time on A5 v C5 W3 P1 before
their right sides were narrowed, so that is where the measured 1.8-2.0x came from.

>>> from exactdice.markov.graph import explore
>>> from exactdice.markov.synthetic import GamblersRuin
>>> result = forward_pass(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
>>> result.absorption["win"], result.expected_steps
(Fraction(1, 3), Fraction(2, 1))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import gmpy2
from gmpy2 import mpz

from exactdice.markov.graph import CHANCE, DECISION, TERMINAL, StateGraph

__all__ = ["ForwardResult", "forward_pass", "denominator_bound", "small_prime_factors"]

_TRIAL_PRIMES_BELOW = 1000


def _primes_below(limit):
    sieve = bytearray([1]) * limit
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return [i for i in range(limit) if sieve[i]]


_TRIAL_PRIMES = _primes_below(_TRIAL_PRIMES_BELOW)


def small_prime_factors(number: int) -> tuple:
    """``((factor, exponent), ...)`` of a positive integer: its prime factors below
    1000, then the remaining cofactor (if not 1) as one factor of its own.

    >>> small_prime_factors(360)
    ((2, 3), (3, 2), (5, 1))
    >>> small_prime_factors(2 * 1000003)
    ((2, 1), (1000003, 1))
    """
    number = int(number)
    factors = []
    for prime in _TRIAL_PRIMES:
        if prime * prime > number:
            break
        if number % prime == 0:
            exponent = 0
            while number % prime == 0:
                number //= prime
                exponent += 1
            factors.append((prime, exponent))
    if number > 1:
        factors.append((number, 1))
    return tuple(sorted(factors))


@dataclass
class ForwardResult:
    """The initial state's answers from `forward_pass` (all exact ``Fraction``)."""

    absorption: dict
    never_ends: Fraction
    expected_steps: Fraction | None
    expected_rewards: dict
    denominator_bits: int


class _Plan:
    """The order of the pass and each node's moves under the strategy."""

    def __init__(self, graph: StateGraph, chosen_edge, alive, components, inverse):
        self.graph = graph
        self.chosen_edge = chosen_edge
        self.alive = alive
        self.components = components
        self.inverse = inverse
        self.cyclic: dict[int, tuple] = {}  # component index -> (live order, A_C, det A_C)
        self.block_inflow: dict[int, mpz] = {}  # component index -> denominator bound of its inflow

    def is_cyclic(self, index) -> bool:
        """Whether component ``index`` is a loop (more than one state, or a self-loop)."""
        component = self.components[index]
        if len(component) > 1:
            return True
        node = component[0]
        graph = self.graph
        return node in graph.targets[graph.offsets[node] : graph.offsets[node + 1]]

    def moves(self, node):
        graph = self.graph
        if graph.kind[node] == DECISION:
            return 1, ((1, graph.targets[self.chosen_edge[node]]),)
        low, high = graph.offsets[node], graph.offsets[node + 1]
        return graph.data[node], tuple(zip(graph.weights[low:high], graph.targets[low:high]))

    def block_rows(self, component):
        """(live members, rows of A_C) of a cyclic component (``rows[i]``: column -> entry).

        The transposed system: a column per source. A chance node's edges are screened
        for targets inside the block in one vectorised lookup (most edges leave it)."""
        import numpy

        graph = self.graph
        live = sorted(node for node in component if self.alive[node])
        position = numpy.full(graph.num_states, -1, dtype=numpy.int64)
        position[live] = numpy.arange(len(live))
        targets = numpy.frombuffer(graph.targets, dtype=numpy.int64)
        rows = [{i: self.moves(node)[0]} for i, node in enumerate(live)]
        for source, node in enumerate(live):
            if graph.kind[node] == DECISION:
                inside = [(1, graph.targets[self.chosen_edge[node]])]
            else:
                low = graph.offsets[node]
                edges = numpy.flatnonzero(position[targets[low : graph.offsets[node + 1]]] >= 0) + low
                inside = [(graph.weights[edge], graph.targets[edge]) for edge in edges.tolist()]
            for weight, target in inside:
                column = int(position[target])
                if column >= 0:
                    row = rows[column]
                    row[source] = row.get(source, 0) - weight
        return live, rows

    def cyclic_block(self, index):
        """(live members, A_C as a FLINT matrix, det A_C) of cyclic component ``index``."""
        block = self.cyclic.get(index)
        if block is None:
            live, rows = self.block_rows(self.components[index])
            matrix, determinant = self.inverse(rows) if live else (None, mpz(1))
            block = self.cyclic[index] = (live, matrix, determinant)
        return block


def _float_block(plan, index):
    """(live members, A_C^-1 as a float matrix): the float preview's cyclic solve."""
    import numpy

    live, rows = plan.block_rows(plan.components[index])
    matrix = numpy.zeros((len(live), len(live)))
    for i, row in enumerate(rows):
        for column, entry in row.items():
            matrix[i, column] = entry
    return live, numpy.linalg.inv(matrix), 1.0


_systems: dict = {}
_MAX_REMEMBERED_SYSTEMS = 4096


def block_system(rows):
    """``(A, det A)`` of a small integer matrix (``rows[i]``: column -> entry) as a FLINT
    ``fmpz_mat`` and an ``mpz``, remembered per matrix: the same loop recurs at many chip
    counts and track positions.

    >>> block_system([{0: 2, 1: -1}, {0: -1, 1: 2}])[1]
    mpz(3)
    """
    key = tuple(tuple(sorted(row.items())) for row in rows)
    found = _systems.get(key)
    if found is None:
        import flint

        size = len(rows)
        matrix = flint.fmpz_mat(size, size)
        for i, row in enumerate(rows):
            for column, entry in row.items():
                matrix[i, column] = int(entry)
        found = (matrix, mpz(int(matrix.det())))
        if len(_systems) >= _MAX_REMEMBERED_SYSTEMS:
            _systems.clear()
        _systems[key] = found
    return found


class _Exponents:
    """Exponent vectors as rows of an integer matrix, one column per factor met (a
    factor below 1000, or a cofactor without such factors: `small_prime_factors`)."""

    def __init__(self, count: int):
        import numpy

        self.numpy = numpy
        self.factors: list = []
        self.column: dict = {}
        self.known: dict = {1: {}}  # number -> {column: exponent}
        self.inflow = numpy.zeros((count, 8), dtype=numpy.int64)  # max over senders so far
        self.overall = numpy.zeros(8, dtype=numpy.int64)

    def times(self, vector, number):
        """The vector of (vector's number) * number."""
        number = int(number)
        exponents = self.known.get(number)
        if exponents is None:
            exponents = self.known[number] = {self._column(factor): power
                                              for factor, power in small_prime_factors(number)}
        if not exponents:
            return vector
        vector = self.numpy.pad(vector, (0, self.inflow.shape[1] - len(vector)))
        for column, power in exponents.items():
            vector[column] += power
        return vector

    def _column(self, factor):
        column = self.column.get(factor)
        if column is None:
            column = self.column[factor] = len(self.factors)
            self.factors.append(factor)
            if column >= self.inflow.shape[1]:  # room for more factors
                grow = self.inflow.shape[1]
                self.inflow = self.numpy.pad(self.inflow, ((0, 0), (0, grow)))
                self.overall = self.numpy.pad(self.overall, (0, grow))
        return column

    def number(self, vector) -> mpz:
        bound = mpz(1)
        for factor, power in zip(self.factors, vector.tolist()):
            bound *= mpz(factor) ** power
        return bound


def denominator_bound(plan: _Plan) -> mpz:
    """``Q``: a multiple of the denominator of every state's ``y`` (module docstring),
    from exponent vectors over the small prime factors of totals and block determinants.

    One pass over the components, sources first: a state's own vector is the maximum of
    what its senders pushed plus its total's (or its loop determinant's) exponents, and
    it pushes that to every successor in one vectorised maximum."""
    import numpy

    graph = plan.graph
    exponents = _Exponents(graph.num_states)
    reached = numpy.zeros(graph.num_states, dtype=bool)
    reached[graph.initial] = True
    targets = numpy.frombuffer(graph.targets, dtype=numpy.int64) if len(graph.targets) else numpy.zeros(0, numpy.int64)
    for index in range(len(plan.components) - 1, -1, -1):
        component = plan.components[index]
        if not reached[component].any():
            continue
        for node, vector in _own_vectors(plan, index, exponents):
            exponents.overall = numpy.maximum(exponents.overall, vector)
            successors = _successor_array(plan, node, targets)
            reached[successors] = True
            inflow = exponents.inflow
            inflow[successors] = numpy.maximum(inflow[successors], vector)
    return exponents.number(numpy.maximum(exponents.overall, exponents.inflow[reached].max(axis=0)))


def _own_vectors(plan, index, exponents):
    """``(sender, own vector)`` for the members of component ``index`` that pass visits
    on (live, not terminal); the others only hold what flowed in."""
    graph, alive = plan.graph, plan.alive
    component = plan.components[index]
    inflow = exponents.inflow
    if plan.is_cyclic(index) and any(alive[node] for node in component):
        live, _, determinant = plan.cyclic_block(index)
        incoming = inflow[component].max(axis=0)
        plan.block_inflow[index] = exponents.number(incoming)
        block = exponents.times(incoming, determinant)
        return [(node, block) for node in live]
    own = []
    for node in component:
        if alive[node] and graph.kind[node] != TERMINAL:
            total = graph.data[node] if graph.kind[node] == CHANCE else 1
            own.append((node, exponents.times(inflow[node], total)))
    return own


def _successor_array(plan, node, targets):
    graph = plan.graph
    if graph.kind[node] == DECISION:
        return [graph.targets[plan.chosen_edge[node]]]
    return targets[graph.offsets[node] : graph.offsets[node + 1]]


def forward_pass(graph: StateGraph, chosen_edge=None, alive=None, components=None,
                 inverse=None, exact: bool = True) -> ForwardResult:
    """The initial state's outcome probabilities, never-ends, expected steps and
    rewards under a fixed strategy (``chosen_edge``: decision node -> edge), exactly
    (``exact=False``: the same pass in floats, a quick preview, not exact).

    ``alive`` (node -> can reach a terminal under the strategy), ``components`` (sinks
    first) and ``inverse`` (rows -> ``(A, det A)``, `block_system`) are computed when
    not given.
    """
    chosen_edge = chosen_edge or {}
    if any(kind == DECISION for kind in graph.kind) and not chosen_edge:
        raise ValueError("a graph with decisions needs a chosen edge per decision node")
    if components is None:
        components = graph.strongly_connected_components()
    if inverse is None:
        inverse = block_system
    plan = _Plan(graph, chosen_edge, None, components, inverse)
    plan.alive = alive if alive is not None else _alive_states(plan)
    if not exact:
        return _run(plan, 1.0, exact=False)
    return _run(plan, denominator_bound(plan), exact=True)


def _alive_states(plan: _Plan) -> bytearray:
    """Which states can reach a terminal under the strategy: without decisions, one pass
    over the components (sinks first; a component is alive when it holds a terminal or
    leads to an alive one), else a reverse search."""
    graph = plan.graph
    count = graph.num_states
    if not plan.chosen_edge:
        alive = bytearray(count)
        offsets, targets, kind = graph.offsets, graph.targets, graph.kind
        for component in plan.components:
            if any(kind[node] == TERMINAL for node in component) or any(
                    alive[targets[edge]] for node in component for edge in range(offsets[node], offsets[node + 1])):
                for node in component:
                    alive[node] = 1
        return alive
    predecessors: list[list[int]] = [[] for _ in range(count)]
    alive = bytearray(count)
    frontier = []
    for node in range(count):
        if graph.kind[node] == TERMINAL:
            alive[node] = 1
            frontier.append(node)
            continue
        for _, target in plan.moves(node)[1]:
            predecessors[target].append(node)
    while frontier:
        node = frontier.pop()
        for parent in predecessors[node]:
            if not alive[parent]:
                alive[parent] = 1
                frontier.append(parent)
    return alive


_CHUNK_BITS = 8192


_SMALL_BLOCK = 32  # up to this size a block is solved by its remembered integer inverse
_block_inverses: dict = {}


def _missing_factor(graph, node):
    name = graph.states[node] if graph is not None else node
    return ArithmeticError(f"forward pass: the denominator bound misses a factor at state {name!r}")


def _solve_block(matrix, sources, graph, live, scale=1):
    """The integers n with A n = sources; raises unless the solution is integral (the
    bound holds a multiple of the block's denominators).

    >>> matrix, _ = block_system([{0: 2, 1: -1}, {0: -1, 1: 2}])
    >>> [int(n) for n in _solve_block(matrix, [30, 0], None, [0, 1], scale=10)]
    [20, 10]
    """
    numerators, factor = _block_solution(matrix, sources, graph, live, scale)
    return [factor * numerator for numerator in numerators]


def _block_solution(matrix, sources, graph, live, scale=1):
    """``(m, factor)`` with ``n = factor * m`` the integers solving A n = sources.

    ``scale`` divides every source exactly (checked): the loop's inflow has the
    denominator of its senders, a small part of ``Q``, so ``sources = scale * s`` with a
    narrow ``s`` (on A5 v C5 W3 P1 the 72-state loops' inflow has 19,000 bits on average
    against Q's 64,000). The block solves ``A z = s`` exactly and ``n = scale * z``;
    when the solution's denominator divides ``scale`` (the bound puts the block's
    determinant into ``Q / scale``), ``n = (scale / denominator) * numerators``, and
    the narrow numerators are what the loop passes on (one wide multiplication per
    target, not per edge). ``A n = sources`` then holds exactly; otherwise every
    ``n`` is checked to be an integer.
    """
    if scale != 1:
        reduced = []
        for node, amount in zip(live, sources):
            quotient, remainder = gmpy2.t_divmod(amount, scale)
            if remainder:
                raise _missing_factor(graph, node)
            reduced.append(quotient)
        sources = reduced
    if len(live) <= _SMALL_BLOCK:
        numerators, denominator = _solve_by_inverse(matrix, sources)
    else:
        numerators, denominator = _solve_by_chunks(matrix, sources)
    scale = mpz(scale)
    if scale % denominator == 0:
        return numerators, gmpy2.divexact(scale, denominator)
    return _scaled_back(numerators, denominator, scale, graph, live), mpz(1)


def _scaled_back(numerators, denominator, scale, graph, live):
    """``scale * numerator / denominator`` per entry, each checked to be an integer."""
    result = []
    for node, numerator in zip(live, numerators):
        quotient, remainder = gmpy2.t_divmod(scale * numerator, denominator)
        if remainder:
            raise _missing_factor(graph, node)
        result.append(quotient)
    return result


def _solve_by_inverse(matrix, sources):
    """``(B sources, s)`` with ``B = s A^-1`` integral, remembered per matrix: small
    loops recur at every chip count and track position."""
    key = id(matrix)
    found = _block_inverses.get(key)
    if found is None or found[0] is not matrix:
        numerators, scale = matrix.inv().numer_denom()
        found = (matrix, [[mpz(int(entry)) for entry in row] for row in numerators.tolist()], mpz(int(scale)))
        if len(_block_inverses) >= _MAX_REMEMBERED_SYSTEMS:
            _block_inverses.clear()
        _block_inverses[key] = found
    _, inverse, scale = found
    totals = []
    for row in inverse:
        total = mpz(0)
        for coefficient, amount in zip(row, sources):
            if coefficient and amount:
                total += coefficient * amount
        totals.append(total)
    return totals, scale


def _solve_by_chunks(matrix, sources):
    """``(numerators, denominator)`` of ``A^-1 sources`` by FLINT's exact solver, the
    wide right side cut into 8192-bit chunks, one column each, added back with shifts:
    FLINT solves many narrow columns 3-4x faster than one wide one (2048-bit chunks
    1.5x slower, 16384-bit 1.3x slower on A5 v C5's 72-state loops), and a
    60-72-state block's rational inverse costs 2-3x its chunked solve."""
    numerators, denominator = matrix.solve(_chunk_columns(sources)).numer_denom()
    return _join_columns(numerators), mpz(int(denominator))


def _chunk_columns(values):
    """An ``fmpz_mat`` whose row i holds value i cut into 8192-bit chunks (sign kept):
    value i = sum of row i's entries times 2^(8192 j)."""
    import flint

    width = max(int(value).bit_length() for value in values)
    columns = max(1, -(-width // _CHUNK_BITS))
    mask = (1 << _CHUNK_BITS) - 1
    chunks = []
    for value in values:
        value = int(value)
        sign = -1 if value < 0 else 1
        value = abs(value)
        chunks.append([sign * ((value >> (_CHUNK_BITS * j)) & mask) for j in range(columns)])
    return flint.fmpz_mat(chunks)


def _join_columns(matrix):
    """The numbers `_chunk_columns` cut, added back with shifts (one per row)."""
    totals = []
    columns = matrix.ncols()
    for i in range(matrix.nrows()):
        total = mpz(0)
        for j in range(columns - 1, -1, -1):
            total = (total << _CHUNK_BITS) + mpz(int(matrix[i, j]))
        totals.append(total)
    return totals


class _Pass:
    """The state of one forward pass: pending inflows, what the terminals collected,
    steps and rewards so far (``Q`` times the true values, or floats)."""

    def __init__(self, plan: _Plan, bound, exact: bool):
        graph = plan.graph
        self.plan, self.graph, self.bound, self.exact = plan, graph, bound, exact
        self.inflow: list = [0] * graph.num_states  # Q * (weighted inflow) per state
        self.inflow[graph.initial] = bound
        zero = mpz(0) if exact else 0.0
        self.collected = [zero] * (len(graph.outcomes) + 1)  # per outcome, then never-ends
        self.steps = zero
        self.rewards = [zero] * len(graph.reward_names)
        self.float_blocks: dict = {}

    def state(self, node):
        """One acyclic state: collect its inflow, or pass it on to every successor."""
        graph, inflow = self.graph, self.inflow
        amount = inflow[node]
        inflow[node] = 0  # each state's number is needed only until its component is done
        kind = graph.kind[node]
        if not self.plan.alive[node]:
            self.collected[-1] += amount
        elif kind == TERMINAL:
            self.collected[graph.data[node]] += amount
        elif kind == CHANCE:
            total = graph.data[node]
            if self.exact:
                value, remainder = gmpy2.t_divmod(amount, total)
                if remainder:
                    raise _missing_factor(graph, node)
            else:
                value = amount / total
            low, high = graph.offsets[node], graph.offsets[node + 1]
            for weight, target in zip(graph.weights[low:high], graph.targets[low:high]):
                inflow[target] += weight * value
            self.count(node, value)
        else:
            inflow[graph.targets[self.plan.chosen_edge[node]]] += amount
            self.count(node, amount)

    def count(self, node, amount):
        """Expected steps and rewards, as the visits go by."""
        graph = self.graph
        if graph.kind[node] == CHANCE:
            self.steps += graph.data[node] * amount
            masses = graph.chance_reward_mass[node]
        else:
            masses = graph.action_rewards.get(self.plan.chosen_edge[node])
        for slot, mass in enumerate(masses or ()):
            if mass:
                self.rewards[slot] += mass * amount

    def loop(self, index):
        """A cyclic component: solve its block, pass on what leaves it, collect the rest."""
        plan, graph, inflow = self.plan, self.graph, self.inflow
        component = plan.components[index]
        if any(plan.alive[node] for node in component):
            live, numerators, factor = self.block_values(index)
            steps, rewards = self.steps, self.rewards
            self.steps, self.rewards = self.steps * 0, [total * 0 for total in rewards]
            for node, amount in zip(live, numerators):
                if amount:
                    self.count(node, amount)
            for target, amount in self.leaving(index, live, numerators):
                inflow[target] += factor * amount
            self.steps = steps + factor * self.steps
            self.rewards = [total + factor * extra for total, extra in zip(rewards, self.rewards)]
        for node in component:
            if not plan.alive[node]:
                self.collected[-1] += inflow[node]
            elif graph.kind[node] == TERMINAL:
                self.collected[graph.data[node]] += inflow[node]
            inflow[node] = 0

    def leaving(self, index, live, values):
        """(target, sum of weight * value) for the states a loop passes visits to: outside
        it, or its dead members (narrow numbers: one wide multiplication per target)."""
        plan = self.plan
        members = set(plan.components[index])
        alive = plan.alive
        leaving: dict = {}
        for node, amount in zip(live, values):
            if amount:
                for weight, target in plan.moves(node)[1]:
                    if target not in members or not alive[target]:
                        leaving[target] = leaving.get(target, 0) + weight * amount
        return leaving.items()

    def block_values(self, index):
        """(live members, ``m``, factor) of cyclic component ``index``: ``n = factor * m``."""
        plan, inflow = self.plan, self.inflow
        if self.exact:
            live, matrix, _ = plan.cyclic_block(index)
            scale = self.bound // plan.block_inflow.get(index, self.bound)
            return (live, *_block_solution(matrix, [inflow[node] for node in live], self.graph, live, scale))
        if index not in self.float_blocks:
            self.float_blocks[index] = _float_block(plan, index)
        live, matrix, _ = self.float_blocks[index]
        sources = [inflow[node] for node in live]
        return live, [float(row @ sources) for row in matrix], 1.0

    def result(self) -> ForwardResult:
        exact, bound, graph = self.exact, self.bound, self.graph
        if exact and sum(self.collected) != bound:
            raise ArithmeticError("forward pass: the outcome probabilities do not sum to exactly 1")

        def share(amount):
            return Fraction(int(amount), int(bound)) if exact else float(amount)

        bits = int(bound).bit_length() if exact else 0
        absorption = {name: share(self.collected[i]) for i, name in enumerate(graph.outcomes)}
        never_ends = share(self.collected[-1])
        if never_ends if exact else never_ends > 1e-12:
            return ForwardResult(absorption, never_ends, None, {name: None for name in graph.reward_names}, bits)
        return ForwardResult(absorption, never_ends, share(self.steps),
                             {name: share(total) for name, total in zip(graph.reward_names, self.rewards)}, bits)


def _run(plan: _Plan, bound, exact: bool) -> ForwardResult:
    """Push the visits from the initial state through the components, sources first."""
    flow = _Pass(plan, bound, exact)
    inflow, components = flow.inflow, plan.components
    for index in range(len(components) - 1, -1, -1):
        component = components[index]
        if len(component) == 1 and not plan.is_cyclic(index):
            if inflow[component[0]]:
                flow.state(component[0])
        elif any(inflow[node] for node in component):
            flow.loop(index)
    return flow.result()
