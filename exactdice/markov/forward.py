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

    def moves(self, node):
        graph = self.graph
        if graph.kind[node] == DECISION:
            return 1, ((1, graph.targets[self.chosen_edge[node]]),)
        low, high = graph.offsets[node], graph.offsets[node + 1]
        return graph.data[node], tuple(zip(graph.weights[low:high], graph.targets[low:high]))

    def block_rows(self, component):
        """(live members, rows of A_C) of a cyclic component (``rows[i]``: column -> entry)."""
        live = sorted(node for node in component if self.alive[node])
        position = {node: i for i, node in enumerate(live)}
        rows = [{i: self.moves(node)[0]} for i, node in enumerate(live)]
        for node in live:  # the transposed system: a column per source
            for weight, target in self.moves(node)[1]:
                column = position.get(target)
                if column is not None:
                    row = rows[column]
                    row[position[node]] = row.get(position[node], 0) - weight
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


def _is_cyclic(graph, component):
    if len(component) > 1:
        return True
    node = component[0]
    return node in graph.targets[graph.offsets[node] : graph.offsets[node + 1]]


def denominator_bound(plan: _Plan) -> int:
    """``Q``: a multiple of the denominator of every state's ``y`` (module docstring),
    from exponent vectors over the small prime factors of totals and block determinants."""
    graph = plan.graph
    kind, data, alive = graph.kind, graph.data, plan.alive
    vectors: list[tuple] = [()]  # interned exponent vectors: sorted ((factor, exponent), ...)
    interned: dict[tuple, int] = {(): 0}
    maxima: dict[tuple, int] = {}
    products: dict[tuple, int] = {}
    factored: dict[int, int] = {}

    def intern(vector):
        found = interned.get(vector)
        if found is None:
            found = interned[vector] = len(vectors)
            vectors.append(vector)
        return found

    def maximum(a, b):
        if a == b or b == 0:
            return a
        if a == 0:
            return b
        key = (a, b) if a < b else (b, a)
        found = maxima.get(key)
        if found is None:
            merged = dict(vectors[a])
            for factor, exponent in vectors[b]:
                if exponent > merged.get(factor, 0):
                    merged[factor] = exponent
            found = maxima[key] = intern(tuple(sorted(merged.items())))
        return found

    def times(vector_id, number):
        """The vector of (vector_id's number) * number."""
        if number == 1:
            return vector_id
        key = (vector_id, number)
        found = products.get(key)
        if found is None:
            number_id = factored.get(number)
            if number_id is None:
                number_id = factored[number] = intern(small_prime_factors(number))
            merged = dict(vectors[vector_id])
            for factor, exponent in vectors[number_id]:
                merged[factor] = merged.get(factor, 0) + exponent
            found = products[key] = intern(tuple(sorted(merged.items())))
        return found

    inflow = [0] * graph.num_states  # max over predecessors so far (vector ids)
    own = [0] * graph.num_states
    reached = bytearray(graph.num_states)
    reached[graph.initial] = 1
    overall = 0
    for index in range(len(plan.components) - 1, -1, -1):
        component = plan.components[index]
        if not any(reached[node] for node in component):
            continue
        if _is_cyclic(graph, component) and any(alive[node] for node in component):
            live, _, determinant = plan.cyclic_block(index)
            incoming = 0
            for node in component:
                incoming = maximum(incoming, inflow[node])
            block = times(incoming, int(determinant))
            members = set(live)
            for node in component:
                own[node] = block if node in members else incoming
            senders = live
        else:
            for node in component:
                if alive[node] and kind[node] != TERMINAL:
                    own[node] = times(inflow[node], data[node] if kind[node] == CHANCE else 1)
                else:
                    own[node] = inflow[node]
            senders = [node for node in component if alive[node] and kind[node] != TERMINAL]
        members = set(component)
        for node in senders:
            vector = own[node]
            for _, target in plan.moves(node)[1]:
                if target not in members or not alive[target]:
                    reached[target] = 1
                    inflow[target] = maximum(inflow[target], vector)
    for node in range(graph.num_states):
        if reached[node]:
            overall = maximum(maximum(overall, own[node]), inflow[node])
    bound = mpz(1)
    for factor, exponent in vectors[overall]:
        bound *= mpz(factor) ** exponent
    return bound


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


def _solve_block(matrix, sources, graph, live):
    """The integers n with A n = sources; raises unless the solution is integral (the
    bound holds a multiple of the block's denominators).

    A small block uses ``B = s A^-1`` (integer, remembered per matrix: small loops recur
    at every chip count): n = B sources / s. A large one goes to FLINT's exact solver
    with the huge right side cut into 8192-bit chunks, one column each, added back with
    shifts: FLINT solves many narrow columns 3-4x faster than one wide one, and a
    60-72-state block's rational inverse costs 2-3x its chunked solve (measured on
    A5 v C5 blocks with a 64,000-bit right side).
    """
    import flint

    if len(live) <= _SMALL_BLOCK:
        key = id(matrix)
        found = _block_inverses.get(key)
        if found is None or found[0] is not matrix:
            numerators, scale = matrix.inv().numer_denom()
            found = (matrix, [[mpz(int(entry)) for entry in row] for row in numerators.tolist()], mpz(int(scale)))
            if len(_block_inverses) >= _MAX_REMEMBERED_SYSTEMS:
                _block_inverses.clear()
            _block_inverses[key] = found
        _, inverse, scale = found
        result = []
        for i, row in enumerate(inverse):
            total = mpz(0)
            for coefficient, amount in zip(row, sources):
                if coefficient and amount:
                    total += coefficient * amount
            if total % scale:
                raise ArithmeticError(
                    f"forward pass: the denominator bound misses a factor at state {graph.states[live[i]]!r}")
            result.append(gmpy2.divexact(total, scale))
        return result
    width = max(int(amount).bit_length() for amount in sources)
    columns = max(1, -(-width // _CHUNK_BITS))
    mask = (1 << _CHUNK_BITS) - 1
    chunks = []
    for amount in sources:
        amount = int(amount)
        sign = -1 if amount < 0 else 1
        amount = abs(amount)
        chunks.append([sign * ((amount >> (_CHUNK_BITS * j)) & mask) for j in range(columns)])
    numerators, denominator = matrix.solve(flint.fmpz_mat(chunks)).numer_denom()
    denominator = mpz(int(denominator))
    result = []
    for i in range(len(live)):
        total = mpz(0)
        for j in range(columns - 1, -1, -1):
            total = (total << _CHUNK_BITS) + mpz(int(numerators[i, j]))
        if total % denominator:
            raise ArithmeticError(
                f"forward pass: the denominator bound misses a factor at state {graph.states[live[i]]!r}")
        result.append(gmpy2.divexact(total, denominator))
    return result


def _run(plan: _Plan, bound, exact: bool) -> ForwardResult:
    graph = plan.graph
    kind, data, alive = graph.kind, graph.data, plan.alive
    count = graph.num_states
    inflow: list = [0] * count  # Q * (weighted inflow) per state
    value: dict = {}  # n[v] = Q * y[v] of the current component's live non-terminal states
    inflow[graph.initial] = bound
    zero = mpz(0) if exact else 0.0
    collected = [zero] * (len(graph.outcomes) + 1)  # per outcome, then never-ends
    never = len(graph.outcomes)
    divexact = gmpy2.divexact

    def exact_division(number, divisor, node):
        if number % divisor:
            raise ArithmeticError(
                f"forward pass: the denominator bound misses a factor at state {graph.states[node]!r}")
        return divexact(number, divisor)

    def float_division(number, divisor, node):
        return number / divisor

    division = exact_division if exact else float_division
    float_blocks: dict = {}
    steps = zero
    rewards = [zero] * len(graph.reward_names)

    for index in range(len(plan.components) - 1, -1, -1):
        component = plan.components[index]
        if not any(inflow[node] for node in component):
            continue
        members = set(component)
        if _is_cyclic(graph, component) and any(alive[node] for node in component):
            if exact:
                live, matrix, _ = plan.cyclic_block(index)
                for node, amount in zip(live, _solve_block(matrix, [inflow[node] for node in live], graph, live)):
                    value[node] = amount
            else:
                if index not in float_blocks:
                    float_blocks[index] = _float_block(plan, index)
                live, matrix, _ = float_blocks[index]
                sources = [inflow[node] for node in live]
                for node, row in zip(live, matrix):
                    value[node] = float(row @ sources)
            senders = live
        else:
            senders = []
            for node in component:
                if alive[node] and kind[node] != TERMINAL:
                    value[node] = (division(inflow[node], data[node], node)
                                   if kind[node] == CHANCE else inflow[node])
                    senders.append(node)
        for node in senders:
            amount = value.pop(node)
            if not amount:
                continue
            for weight, target in plan.moves(node)[1]:
                if target not in members or not alive[target]:
                    inflow[target] += weight * amount
            if kind[node] == CHANCE:  # expected steps and rewards, as the visits go by
                steps += data[node] * amount
                masses = graph.chance_reward_mass[node]
            else:
                masses = graph.action_rewards.get(plan.chosen_edge[node])
            for slot, mass in enumerate(masses or ()):
                if mass:
                    rewards[slot] += mass * amount
        for node in component:
            if not alive[node]:
                collected[never] += inflow[node]
            elif kind[node] == TERMINAL:
                collected[data[node]] += inflow[node]
            inflow[node] = 0  # each state's number is needed only until its component is done

    if exact and sum(collected) != bound:
        raise ArithmeticError("forward pass: the outcome probabilities do not sum to exactly 1")

    def share(amount):
        return Fraction(int(amount), int(bound)) if exact else float(amount)

    bits = int(bound).bit_length() if exact else 0
    absorption = {name: share(collected[i]) for i, name in enumerate(graph.outcomes)}
    never_ends = share(collected[never])
    if never_ends if exact else never_ends > 1e-12:
        return ForwardResult(absorption, never_ends, None, {name: None for name in graph.reward_names}, bits)
    return ForwardResult(absorption, never_ends, share(steps),
                         {name: share(total) for name, total in zip(graph.reward_names, rewards)}, bits)
