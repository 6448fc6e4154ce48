"""Everything at the initial state from one exact forward pass of expected visits.

Under a fixed strategy (chance nodes only, or decisions with a chosen edge each), the
expected number of visits to every state, counted from the initial state, carries all
the initial state's answers: the probability of an outcome is the visits to its
terminal states, never-ending play is the flow that enters a state which cannot reach
a terminal, expected steps are the visits to chance nodes and a reward is a weighted
sum of visits. So a chain without decisions needs no backward pass at all.

The arithmetic: a denominator per state, known in advance of its digits
------------------------------------------------------------------------
Let ``y[v]`` be the visits to ``v`` divided by its total weight ``t[v]`` (a decision
node's total is 1): what each unit of edge weight carries onwards. The ``y`` solve the
integer system ``A y = e_initial`` with ``A = diag(t) - W^T`` (``W`` the edge weights
among live states). Taken component by component in topological order (sources first):

* an acyclic state has ``y[v] = (inflow) / t[v]``, where the inflow is the weighted sum
  of its predecessors' ``y`` (plus 1 at the initial state);
* a cyclic component ``C`` has ``y_C = A_C^-1 (inflow_C)``, one exact linear solve;
* a terminal or a never-ending state just collects its inflow.

Each number travels as an integer ``n`` over a denominator ``D`` known before any of
its digits: a CLASS, an exponent vector over the prime factors met
(totals are products of die sizes, so their factors are small primes; a loop's
solution denominator's cofactor without small factors counts as one more "prime").
A sender of class ``D`` adds ``weight * n`` to its target's amount OF THAT CLASS, so
an edge costs one multiply-add at the sender's own width, not at the widest width
in the graph. When a state's inflow arrives in several classes it is brought to their
elementwise maximum ``D_in`` once (one multiplication by the integer ``D_in / D`` per
class, not per edge), and its own class is ``D_in * t[v]``: the state's ``n`` IS its
inflow amount, with no division at all. (A state that waits with more than four classes
has them joined early, `_Pass.gather`: the same ``D_in`` in the end, in less memory.)
A loop brings its members' inflows to one ``D_in(C)``, solves ``A_C z = s`` exactly
(2-adic lifting, `exactdice.markov.lifting`, or lifting in an odd base where 2 divides
the determinant, with FLINT where neither applies, or a remembered integer inverse for
small loops that recur) and gets ``z = m / d``; its
members' class is ``D_in(C) * d`` and their ``n`` the numerators ``m``, and
``A_C m = d s`` is checked before they are passed on.
Every scale is a product of nonnegative powers of the class's factors, so each step is
exact rational arithmetic with the denominators kept apart; nothing is reconstructed.
At the end the outcomes', never-ends', steps' and rewards' amounts are brought to the
join ``Q`` of their classes and the outcome probabilities and never-ends are checked to
sum to exactly 1 (a wrong scale or class on the way to an outcome breaks that sum; a
loop's solution is checked on its own by multiplying back). A class's number is
computed only where two classes meet (the integer scale between them).

On A5 v C5, W3 P1, ``Q`` has 59,167 bits, while a loop's right side has 240-38,000
(20,000 on average) and the numbers leaving a loop about that plus its solution's
denominator (1,500-2,000 bits): narrow numbers are where the per-edge time went down
(2x against one shared ``Q``; scripts/MEASUREMENTS.md, "A denominator class per state").

Why not the issue's big modulus (not built; an argument, not a measurement): a pass
modulo ``M = 2^N - 1`` with ``N > bits(Q)`` keeps every state's number at ``N`` bits,
wider than this pass keeps any of them, turns no division into anything cheaper (there
is none left) and does not make the loops cheaper (its prototype spent 130 of 191 s
in them on A5 v C5 W5 P2).

>>> from exactdice.markov.graph import explore
>>> from exactdice.markov.synthetic import GamblersRuin
>>> result = forward_pass(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
>>> result.absorption["win"], result.expected_steps
(Fraction(1, 3), Fraction(2, 1))
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from fractions import Fraction

from gmpy2 import mpz

from exactdice.limits import check_memory, memory_budget, memory_in_use
from exactdice.markov.graph import CHANCE, DECISION, TERMINAL, StateGraph
from exactdice.markov.arrays import loops_of
from exactdice.markov.denominators import Denominators, small_prime_factors
from exactdice.markov.lifting import satisfies, solve_by_lifting, solve_by_odd_lifting

try:
    from exactdice.markov._exact_pass import ChainFlows, cyclic_components
    from exactdice.markov._exact_pass import summed_parts as compiled_parts
except ImportError:  # an install that could not build the extension: the Python loops
    ChainFlows = compiled_parts = cyclic_components = None  # type: ignore[assignment,misc]

__all__ = ["ForwardResult", "forward_pass", "small_prime_factors", "Denominators"]


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

    def __init__(self, graph: StateGraph, chosen_edge, alive, components):
        self.graph = graph
        self.chosen_edge = chosen_edge
        self.alive = alive
        self.components = components
        self._positions = None  # numpy: a loop member's column while its rows are built, else -1
        self._cyclic: bytearray | None = None
        from exactdice.markov.arrays import csr_arrays

        #: the graph's arrays for numpy and the compiled loops (an array graph's own)
        self.csr = csr_arrays(graph, masses=False)
        # the pass's edge loops compiled, where the extension is built and every number
        # fits 64 bits
        self.flows = ChainFlows(self.csr) if ChainFlows is not None and not self.csr.big else None

    @property
    def cyclic(self) -> bytearray:
        """Per component, 1 where it is a loop (more than one state, or a self-loop), found
        in one sweep."""
        if self._cyclic is None:
            sweep = loops_of if cyclic_components is None else cyclic_components
            self._cyclic = sweep(self.csr.offsets, self.csr.targets, self.components)
        return self._cyclic

    def visit(self, flow, bar=None) -> None:
        """Drive a pass (exact `_Pass` or the float preview's flow) through the
        components, sources first: ``flow.state`` for each acyclic state and
        ``flow.loop`` for each loop that receives inflow (``flow.inflow[node]`` true:
        a pending exact amount or a nonzero float). ``bar``: a progress bar counting
        states passed."""
        components, inflow, cyclic = self.components, flow.inflow, self.cyclic
        for index in range(len(components) - 1, -1, -1):
            component = components[index]
            if not cyclic[index]:
                if inflow[component[0]]:
                    flow.state(component[0])
            elif any(inflow[node] for node in component):
                flow.loop(index)
            check_memory("while solving")
            if bar is not None:
                bar.update(len(component))

    def moves(self, node):
        graph = self.graph
        if graph.kind[node] == DECISION:
            return 1, ((1, graph.targets[self.chosen_edge[node]]),)
        low, high = graph.offsets[node], graph.offsets[node + 1]
        return graph.data[node], tuple(zip(graph.weights[low:high], graph.targets[low:high]))

    def live_members(self, component) -> list:
        """A component's members that can still reach an end, in node order."""
        return sorted(node for node in component if self.alive[node])

    def solve_loop(self, index, parts):
        """``(numerators, denominator)`` of loop ``index``'s exact solve with right sides
        `summed_parts` of ``parts`` (checked by multiplying back, `solve_block`)."""
        _, rows, matrix = self.cyclic_block(index)
        return solve_block(matrix, rows, summed_parts(parts))

    def block_rows(self, component):
        """(live members, rows of A_C) of a cyclic component (``rows[i]``: column -> entry).

        The transposed system: a column per source. Compiled where the pass's edge loops
        are (`ChainFlows.block_rows`); in Python, a chance node with many edges has them
        screened for targets inside the block by one vectorised lookup (most edges leave
        it), a few edges looked up one by one (numpy costs more there)."""
        live = self.live_members(component)
        if self.flows is not None:
            return live, self.flows.block_rows(live, self.chosen_edge)
        position = {node: i for i, node in enumerate(live)}
        graph = self.graph
        rows = [{i: graph.data[node] if graph.kind[node] == CHANCE else 1} for i, node in enumerate(live)]
        for source, node in enumerate(live):
            for weight, target in self._inside_moves(node, live, position):
                column = position.get(target)
                if column is not None:
                    row = rows[column]
                    row[source] = row.get(source, 0) - weight
        if self._positions is not None:
            self._positions[live] = -1
        return live, rows

    def _inside_moves(self, node, live, position):
        """``(weight, target)`` for the moves of ``node`` that may stay among ``live``."""
        graph = self.graph
        low, high = graph.offsets[node], graph.offsets[node + 1]
        if graph.kind[node] == DECISION or high - low <= _FEW_EDGES:
            return self.moves(node)[1]
        import numpy

        if self._positions is None:
            self._positions = numpy.full(graph.num_states, -1, dtype=numpy.int64)
        positions = self._positions
        if positions[live[0]] < 0:
            positions[live] = numpy.arange(len(live))
        edges = numpy.flatnonzero(positions[self.csr.targets[low:high]] >= 0) + low
        return [(graph.weights[edge], graph.targets[edge]) for edge in edges.tolist()]

    def cyclic_block(self, index):
        """(live members, rows of A_C, A_C as a FLINT matrix) of cyclic component ``index``;
        the matrix only for a small loop (a larger one lifts, `solve_block`). Made when
        the loop is solved and dropped with it: each loop is solved once."""
        live, rows = self.block_rows(self.components[index])
        return live, rows, block_system(rows) if 0 < len(live) <= _SMALL_BLOCK else None


_FEW_EDGES = 32  # up to this many edges a node's moves into a loop are looked up in Python
_systems: dict = {}
_MAX_REMEMBERED_SYSTEMS = 4096


def block_system(rows):
    """``A`` of a small integer matrix (``rows[i]``: column -> entry) as a FLINT
    ``fmpz_mat``, remembered per matrix: the same loop recurs at many chip counts and
    track positions (and then so does its remembered inverse).

    >>> block_system([{0: 2, 1: -1}, {0: -1, 1: 2}]).det()
    3
    """
    key = tuple(tuple(sorted(row.items())) for row in rows)
    found = _systems.get(key)
    if found is None:
        import flint

        size = len(rows)
        found = flint.fmpz_mat(size, size)
        for i, row in enumerate(rows):
            for column, entry in row.items():
                found[i, column] = int(entry)
        if len(_systems) >= _MAX_REMEMBERED_SYSTEMS:
            _systems.clear()
        _systems[key] = found
    return found


def forward_pass(
    graph: StateGraph,
    chosen_edge=None,
    alive=None,
    components=None,
    exact: bool = True,
    workers: int | None = None,
    progress=None,
) -> ForwardResult:
    """The initial state's outcome probabilities, never-ends, expected steps and
    rewards under a fixed strategy (``chosen_edge``: decision node -> edge), exactly
    (``exact=False``: the same pass in floats, vectorised per state: a quick preview,
    not exact).

    ``alive`` (node -> can reach a terminal under the strategy) and ``components``
    (sinks first) are computed when not given. ``workers``: whether a worker process
    may solve loops beside this one on a large graph (`exactdice.markov.loop_pool`);
    None: `exactdice.processes.solve_workers`. ``progress``: a bar of the states passed
    (None: on a terminal, past 200,000 transitions; the exact pass only).
    """
    chosen_edge = chosen_edge or {}
    if any(kind == DECISION for kind in graph.kind) and not chosen_edge:
        raise ValueError("a graph with decisions needs a chosen edge per decision node")
    if components is None:
        components = graph.strongly_connected_components()
    plan = _Plan(graph, chosen_edge, None, components)
    plan.alive = alive if alive is not None else _alive_states(plan)
    if not exact:
        from exactdice.markov.float_pass import float_pass

        return float_pass(plan)
    return _run(plan, workers, progress)


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
                alive[targets[edge]] for node in component for edge in range(offsets[node], offsets[node + 1])
            ):
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
_PROGRESS_MIN_TRANSITIONS = 200_000  # a solve shows its bar on a terminal past this


def solving_bar(graph: StateGraph, progress):
    """The "solving" progress bar over ``graph``'s states, or None: shown when
    ``progress`` is true, or when it is None, stderr is a terminal and the graph has
    more than 200,000 transitions (the backward and the forward pass alike)."""
    if not (
        progress or (progress is None and sys.stderr.isatty() and graph.num_transitions > _PROGRESS_MIN_TRANSITIONS)
    ):
        return None
    from tqdm import tqdm

    return tqdm(total=graph.num_states, unit="states", desc="solving", leave=False)


_SMALL_BLOCK = 32  # up to this size a block is solved by its remembered integer inverse
_block_inverses: dict = {}  # id(matrix) -> (matrix, B, s) of a small loop met again
_seen_matrices: dict = {}  # id(matrix) -> matrix, for small loops met once so far


def solve_block(matrix, rows, sources):
    """``(m, d)`` with ``A (m / d) = sources`` exactly (``rows``: A's entries as
    ``column -> entry`` per row, ``matrix``: A as an ``fmpz_mat``, or None to have it
    built only where a FLINT path needs it), checked by multiplying back:
    ``A m = d * sources`` or an `ArithmeticError`.

    >>> rows = [{0: 2, 1: -1}, {0: -1, 1: 2}]
    >>> numerators, denominator = solve_block(block_system(rows), rows, [30, 0])
    >>> [Fraction(int(m), int(denominator)) for m in numerators]
    [Fraction(20, 1), Fraction(10, 1)]
    """
    small = len(rows) <= _SMALL_BLOCK
    if small and matrix is None:
        matrix = block_system(rows)
    if small and _seen_before(matrix):
        numerators, denominator = _solve_by_inverse(matrix, sources)
    else:
        numerators, denominator = _solve_wide(matrix, rows, sources)
    if not satisfies(rows, sources, numerators, denominator):
        raise ArithmeticError("forward pass: a loop's exact solve does not satisfy its system")
    return numerators, denominator


def _seen_before(matrix) -> bool:
    """Whether a small loop's matrix was met before: its inverse (3 ms for 18 states)
    pays only when the matrix recurs; a first one goes to the wide solve.
    On A4 v C3, W3 P1, 102 of the 145 loops have a matrix of their own."""
    key = id(matrix)
    if _seen_matrices.get(key) is matrix:
        return True
    found = _block_inverses.get(key)
    if found is not None and found[0] is matrix:  # its inverse outlived a clearing of the seen ones
        return True
    if len(_seen_matrices) >= _MAX_REMEMBERED_SYSTEMS:
        _seen_matrices.clear()
    _seen_matrices[key] = matrix
    return False


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


def _solve_wide(matrix, rows, sources):
    """``(numerators, denominator)`` of ``A^-1 sources`` by 2-adic lifting
    (`exactdice.markov.lifting`: about 2x FLINT's chunked solve on A5 v C5's loops), by
    odd lifting where that does not apply (3-5x FLINT on risk=always A2 v C2's 384-state
    loops), or by FLINT's chunked solve."""
    lifted = solve_by_lifting(rows, sources)
    if lifted is None:
        lifted = solve_by_odd_lifting(rows, sources)
    if lifted is not None:
        return lifted
    return _solve_by_chunks(block_system(rows) if matrix is None else matrix, sources)


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


def summed_parts(parts) -> list:
    """``[sum of amount * scale (or amount, scale None) per member]``: a loop's right
    sides from `_Pass.loop_parts`.

    >>> summed_parts([[(2, None), (3, 5)], []])
    [mpz(17), mpz(0)]
    """
    if compiled_parts is not None:
        return compiled_parts(parts)
    sums = []
    for member in parts:
        total = mpz(0)
        for amount, scale in member:
            total += amount if scale is None else amount * scale
        sums.append(total)
    return sums


#: a waiting state's inflow holding more denominator classes than this is gathered into
#: one number over their join (`_Pass.gather`); past `TIGHT_MEMORY` of the memory budget,
#: every waiting state's is, and from then on every second class (slower where the
#: numbers are wide: risk=always A2 v C2, W1 P0 takes twice as long, in 40 % less memory)
MOST_PENDING_CLASSES = 4
TIGHT_MEMORY = 0.75


def _add(amounts: dict, klass: int, amount) -> None:
    amounts[klass] = amounts.get(klass, 0) + amount


class _Pass:
    """The state of one exact forward pass: each state's pending inflow as amounts per
    denominator class, and the same for what the terminals collected, steps and
    rewards (module docstring).

    The loops over edges run in compiled code where the graph's arrays allow it (the
    plan's `ChainFlows`: every total and weight within 64 bits): a chance state's edges
    (`spread`), what leaves a solved loop (`leaving`) and its sending on (`sent`), and a
    loop's steps and rewards (`counted`). The Python below does the same sums in the same
    order, for bigger numbers and for an install without the extension; the tests compare
    the two, Fraction for Fraction.
    """

    def __init__(self, plan: _Plan):
        graph = plan.graph
        self.plan, self.graph = plan, graph
        self.classes = Denominators()
        self.inflow: list = [None] * graph.num_states  # class -> amount, per state
        self.inflow[graph.initial] = {0: mpz(1)}
        self.collected: list[dict] = [{} for _ in range(len(graph.outcomes) + 1)]  # per outcome, then never-ends
        self.steps: dict = {}
        self.rewards: list[dict] = [{} for _ in graph.reward_names]
        self.most_classes = MOST_PENDING_CLASSES
        self._next_reading = 0.0  # when the memory in use is read next (`_mind_memory`)
        flows = plan.flows
        #: a state's steps and rewards summed in compiled code (`ChainFlows.counted`; it
        #: returns the states it leaves to Python), or None
        self.count_compiled = flows.counted if flows is not None and flows.reward_columns == len(self.rewards) else None

    def collect(self, slot, node):
        """A terminal's (or a dead state's, ``slot`` -1) inflow into its outcome."""
        amounts = self.inflow[node]
        self.inflow[node] = None
        if amounts:
            collected = self.collected[slot]
            for klass, amount in amounts.items():
                _add(collected, klass, amount)

    def state(self, node):
        """One acyclic state: collect its inflow, or pass it on to every successor."""
        graph, plan = self.graph, self.plan
        kind = graph.kind[node]
        if not plan.alive[node]:
            self.collect(-1, node)
            return
        if kind == TERMINAL:
            self.collect(graph.data[node], node)
            return
        klass, amount = self.classes.gathered(self.inflow[node])
        self.inflow[node] = None  # each state's number is needed only until it is passed on
        if kind == CHANCE:
            total = graph.data[node]
            own = self.classes.times(klass, total)  # y = amount / (D_in * total)
            if self.count_compiled is None or self.count_compiled([node], [amount], own, self.steps, self.rewards):
                _add(self.steps, klass, amount)  # (the same steps as total * amount over own)
                self.rewarded(graph.chance_reward_mass[node], own, amount)
            if plan.flows is not None:
                crowded = plan.flows.spread(self.inflow, node, own, amount, self.most_classes)
            else:
                crowded = []
                low, high = graph.offsets[node], graph.offsets[node + 1]
                inflow = self.inflow
                for weight, target in zip(graph.weights[low:high], graph.targets[low:high]):
                    amounts = inflow[target]
                    if amounts is None:
                        inflow[target] = {own: weight * amount}
                    else:
                        amounts[own] = amounts.get(own, 0) + weight * amount
                        if len(amounts) > self.most_classes:
                            crowded.append(target)
            for target in crowded or ():
                self.gather(target)
        else:
            edge = plan.chosen_edge[node]
            self.rewarded(graph.action_rewards.get(edge), klass, amount)
            self.send(graph.targets[edge], klass, amount)

    def send(self, target, klass, amount):
        amounts = self.inflow[target]
        if amounts is None:
            self.inflow[target] = {klass: amount}
        else:
            _add(amounts, klass, amount)
            if len(amounts) > self.most_classes:
                self.gather(target)

    def gather(self, target):
        """A waiting state's inflow as one number over its classes' join: it would
        otherwise wait with a number for every class that reached it, where their join is
        often little wider than the widest (A5 v C5, W5 P2, at its peak: 175 MB waiting
        with every class apart, 75 MB with at most four, 34 MB with one)."""
        klass, total = self.classes.gathered(self.inflow[target])
        self.inflow[target] = {klass: total}

    def _mind_memory(self):
        """Past `TIGHT_MEMORY` of the budget (read at most once a second), gather every
        waiting state's inflow, and from then on every second class."""
        if self.most_classes == 1 or time.monotonic() < self._next_reading:
            return
        self._next_reading = time.monotonic() + 1.0
        if memory_in_use() > TIGHT_MEMORY * memory_budget():
            self.most_classes = 1
            for target, amounts in enumerate(self.inflow):
                if amounts and len(amounts) > 1:
                    self.gather(target)

    def rewarded(self, masses, klass, amount):
        """Rewards of ``amount`` (over ``klass``) times the masses per counter."""
        for slot, mass in enumerate(masses or ()):
            if mass:
                _add(self.rewards[slot], klass, mass * amount)

    def loop(self, index):
        """A cyclic component: solve its block, pass on what leaves it, collect the rest."""
        live = self.plan.live_members(self.plan.components[index])
        if live:
            klass, parts = self.loop_parts(live)
            self.loop_solved(live, klass, *self.plan.solve_loop(index, parts))
        self.loop_cleared(index)

    def loop_solved(self, live, klass, numerators, denominator):
        """Count a solved loop's steps and rewards and pass on what leaves it (in compiled
        code where the arrays allow: `ChainFlows.counted`, then `ChainFlows.sent`)."""
        self._mind_memory()
        graph, plan, flows = self.graph, self.plan, self.plan.flows
        own = self.classes.times(klass, denominator)
        places = range(len(live))
        if self.count_compiled is not None:
            places = self.count_compiled(live, numerators, own, self.steps, self.rewards)
        for place in places:
            node, amount = live[place], numerators[place]
            if amount and graph.kind[node] == CHANCE:
                _add(self.steps, own, graph.data[node] * amount)
                self.rewarded(graph.chance_reward_mass[node], own, amount)
            elif amount:
                self.rewarded(graph.action_rewards.get(plan.chosen_edge[node]), own, amount)
        if flows is None:
            for target, amount in self.leaving(live, numerators):
                self.send(target, own, amount)
            return
        leaving = flows.leaving(live, list(numerators), plan.chosen_edge)
        for target in flows.sent(self.inflow, leaving, own, self.most_classes) or ():
            self.gather(target)  # (each target is sent to once: now or at its send is the same)

    def loop_cleared(self, index):
        """A loop's dead members collect their inflow; every member's inflow is spent."""
        for node in self.plan.components[index]:
            if not self.plan.alive[node]:
                self.collect(-1, node)
            self.inflow[node] = None

    def loop_parts(self, live):
        """``(class, parts)``: the live members' inflows over their join, as
        ``parts[i]`` = ``[(amount, scale or None), ...]`` for `summed_parts` (kept apart
        so another process can do the multiplications)."""
        inflow, classes = self.inflow, self.classes
        present = {klass for node in live for klass in (inflow[node] or ())}
        klass = classes.join(present) if present else 0
        parts = [
            [
                (amount, None if source == klass else classes.scale(source, klass))
                for source, amount in (inflow[node] or {}).items()
            ]
            for node in live
        ]
        for node in live:  # the parts hold them now, and nothing enters a loop once it is ready
            inflow[node] = None
        return klass, parts

    def leaving(self, live, values):
        """(target, sum of weight * value) for the states a loop passes visits to: outside
        it, or its dead members. Every edge is added, then the live members dropped
        (cheaper than testing each edge)."""
        graph, plan = self.graph, self.plan
        weights, targets, offsets = graph.weights, graph.targets, graph.offsets
        leaving: dict = {}
        add = leaving.get
        for node, amount in zip(live, values):
            if not amount:
                continue
            if graph.kind[node] == DECISION:
                target = targets[plan.chosen_edge[node]]
                leaving[target] = add(target, 0) + amount
                continue
            low, high = offsets[node], offsets[node + 1]
            for weight, target in zip(weights[low:high], targets[low:high]):
                leaving[target] = add(target, 0) + weight * amount
        for node in live:
            leaving.pop(node, None)
        return leaving.items()

    def result(self) -> ForwardResult:
        """The answers as Fractions over the join ``Q`` of every class met; the
        outcomes and never-ends must sum to exactly ``Q``."""
        graph, classes = self.graph, self.classes
        parts = [*self.collected, self.steps, *self.rewards]
        bound_class = classes.join({klass for amounts in parts for klass in amounts} or {0})
        bound = classes.number(bound_class)

        def at_bound(amounts):
            return sum((amount * classes.scale(klass, bound_class) for klass, amount in amounts.items()), mpz(0))

        collected = [at_bound(amounts) for amounts in self.collected]
        if sum(collected) != bound:
            raise ArithmeticError("forward pass: the outcome probabilities do not sum to exactly 1")

        def share(amount):
            return Fraction(int(amount), int(bound))

        absorption = {name: share(collected[i]) for i, name in enumerate(graph.outcomes)}
        never_ends = share(collected[-1])
        bits = int(bound).bit_length()
        if never_ends:
            return ForwardResult(absorption, never_ends, None, {name: None for name in graph.reward_names}, bits)
        return ForwardResult(
            absorption,
            never_ends,
            share(at_bound(self.steps)),
            {name: share(at_bound(total)) for name, total in zip(graph.reward_names, self.rewards)},
            bits,
        )


def _run(plan: _Plan, workers: int | None = None, progress=None) -> ForwardResult:
    """Push the visits from the initial state through the components, sources first;
    with a worker process solving loops where the graph has many, until the memory nears
    the budget (`exactdice.markov.loop_pool`; ``workers`` None:
    `exactdice.processes.solve_workers`)."""
    from exactdice.markov import loop_pool
    from exactdice.processes import one_blas_thread, solve_workers

    flow = _Pass(plan)
    workers = solve_workers() if workers is None else workers
    graph = plan.graph
    bar = solving_bar(graph, progress)
    with one_blas_thread():  # (its idle threads would spin on the loop worker's core)
        try:
            if not (
                workers
                and graph.num_transitions >= loop_pool.MIN_TRANSITIONS
                and loop_pool.loops_with_flow(plan) >= loop_pool.MIN_LOOPS
                and loop_pool.pass_with_loop_worker(plan, flow, bar)
            ):
                plan.visit(flow, bar)
        finally:
            if bar is not None:
                bar.close()
    return flow.result()
