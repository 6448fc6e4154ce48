"""Solve an explored state graph: absorption odds, optimal strategies, expectations.

Strongly connected components are solved sinks first. An acyclic state is a direct
substitution of its successors; a cycle without decisions is one exact linear solve;
a component with decisions runs Hoffman–Karp strategy iteration (the minimiser's
best response inside, the maximiser's improvement outside), with a trap step so a
player who prefers endless play can find it (for the outer player: a set it can hold
with equally good actions while the inner player leaves only at a cost to itself),
and a final pass that keeps the FIRST action among exactly equal values.

Choosing needs only values, so the backward pass carries one exact number per state
(its value, as numerator and denominator): one multiply-add per edge, and a component's
last strategy evaluation is already its result. The initial state's outcome odds,
never-ends, expected steps and rewards then come from one forward pass of expected
visits under the chosen strategy (`exactdice.markov.expected_visits.ExpectedVisits`),
and the value they give must equal the backward pass's exactly. Per-state answers
(``all_states``) carry each state's whole outcome vector instead. Graphs without
decisions skip the backward pass (`exactdice.markov.forward`).

>>> from exactdice.markov.synthetic import GamblersRuin
>>> solution = solve(GamblersRuin(goal=3, start=1, up=1, down=1))
>>> solution.absorption["win"], solution.expected_steps
(Fraction(1, 3), Fraction(2, 1))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from exactdice.core.exact import to_fraction
from exactdice.errors import InputError
from exactdice.limits import check_memory
from exactdice.markov.arithmetic import ExactArithmetic, FloatArithmetic
from exactdice.markov.arrays import csr_arrays
from exactdice.markov.forward import forward_pass, solving_bar
from exactdice.markov.model import Model
from exactdice.markov.expected_visits import ExpectedVisits as _ExpectedVisits
from exactdice.markov.named_strategy import Strategy
from exactdice.markov.strategy_iteration import StrategyIteration
from exactdice.markov.graph import (
    CHANCE,
    DECISION,
    TERMINAL,
    StateGraph,
    explore,
    paused_gc,
)

try:
    from exactdice.markov._exact_pass import LoopSystems, backward_values
except ImportError:  # an install that could not build the extension: the Python loop
    backward_values = None  # type: ignore[assignment]
    LoopSystems = None  # type: ignore[assignment,misc]

__all__ = ["Solution", "Strategy", "solve", "Number"]

#: an exact solve's numbers are Fractions; a float preview's are floats
Number = Fraction | float

#: the forward pass of visits over one shared denominator past this many bits in the
#: initial state's value (`_Solver.visits`)
SHARED_DENOMINATOR_BITS = 8_192


@dataclass
class Solution:
    """What `solve` found, at the initial state unless asked per state.

    Exact solves give ``Fraction`` values (``exact`` is True); float previews give floats.

    Attributes
    ----------
    absorption : dict of str to Fraction
        P(play ends with each outcome).
    never_ends : Fraction
        P(play never ends); with ``absorption`` it sums to exactly 1.
    value : Fraction
        The expected payoff (under the strategy found, where sides choose).
    expected_steps : Fraction or None
        Expected chance steps; None when play may never end.
    expected_rewards : dict of str to Fraction or None
        Expected total of each reward counter; None when play may never end.
    strategy : Mapping
        The chosen action's name at every decision state (a `Strategy`).
    states, transitions : int
        The size of the solved graph.
    components, cyclic_components, largest_component : int
        Its strongly connected components: how many, how many with a cycle, the largest.
    seconds : float
        Time the solve took.
    exact : bool
        True for exact arithmetic, False for the float preview.
    outcomes : tuple of str
        The model's outcomes.
    """

    absorption: dict[str, Number]
    never_ends: Number
    value: Number
    expected_steps: Number | None
    expected_rewards: dict[str, Number | None]
    strategy: Mapping[Hashable, str]
    states: int
    transitions: int
    components: int
    cyclic_components: int
    largest_component: int
    seconds: float
    exact: bool
    outcomes: tuple = ()
    _per_state: Callable[[Hashable], tuple[dict[str, Number], Number]] | None = field(default=None, repr=False)

    def state_absorption(self, state) -> dict:
        """Outcome probabilities (plus ``"never_ends"``) from any reachable state
        (needs ``solve(..., all_states=True)``)."""
        return self._lookup(state)[0]

    def state_value(self, state):
        """Expected payoff from any reachable state (needs ``all_states=True``)."""
        return self._lookup(state)[1]

    def _lookup(self, state):
        if self._per_state is None:
            raise InputError("all_states", "per-state results need solve(..., all_states=True)")
        try:
            return self._per_state(state)
        except KeyError:
            raise InputError("state", f"{state!r} is not reachable from the initial state") from None


def solve(
    graph_or_model: StateGraph | Model,
    *,
    payoff: Mapping[str, Any] | None = None,
    nonterminating_payoff: Any = None,
    all_states: bool = False,
    arithmetic: str = "exact",
    progress: bool | None = None,
    components: list | None = None,
) -> Solution:
    """Solve a model (exploring it first) or an explored `StateGraph`, exactly.

    Decisions maximise ("max") or minimise ("min") the expected payoff, by strategy
    iteration; ties between equally good actions go to the first listed. With no decision
    the answers come from one exact forward pass (`exactdice.markov.forward`), and the
    outcome probabilities are checked to sum to exactly 1.

    Parameters
    ----------
    graph_or_model : StateGraph or Model
        What to solve.
    payoff : dict of str to number, optional
        Outcome -> payoff; default 1 for the first outcome, 0 for the others.
    nonterminating_payoff : number, optional
        What never-ending play pays (default 0).
    all_states : bool, default False
        Keep every state's answer, for `Solution.state_absorption` and
        `Solution.state_value`.
    arithmetic : {"exact", "float"}
        Exact rationals, or a float preview.
    progress : bool, optional
        Progress bars on stderr: True always, False never, None (the default) when stderr
        is a terminal and the graph is large.
    components : list, optional
        The graph's strongly connected components, sinks first, if the caller has them
        already (`StateGraph.strongly_connected_components`).

    Returns
    -------
    Solution
        The outcome probabilities, expectations, strategy and the size of the solve.

    Raises
    ------
    InputError
        When *arithmetic* is unknown or *payoff* names an outcome the model does not have.
    TooLargeError
        When exploring passes its state limit.
    InternalError
        When an exactness check fails (a bug, never an answer).

    Examples
    --------
    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> solve(GamblersRuin(goal=4, start=2, up=1, down=1), arithmetic="float").absorption["win"]
    0.5
    """
    started = time.perf_counter()
    numbers: ExactArithmetic | FloatArithmetic
    if arithmetic == "exact":
        numbers = ExactArithmetic()
    elif arithmetic == "float":
        numbers = FloatArithmetic()
    else:
        raise InputError("arithmetic", f"must be 'exact' or 'float', got {arithmetic!r}")
    graph = graph_or_model if isinstance(graph_or_model, StateGraph) else explore(graph_or_model, progress=progress)
    outcomes = graph.outcomes
    if payoff is None:
        payoff = {name: (1 if i == 0 else 0) for i, name in enumerate(outcomes)}
    unknown = set(payoff) - set(outcomes)
    if unknown:
        raise InputError("payoff", f"unknown outcomes {sorted(unknown)}; the model lists {outcomes}")
    payoffs = [numbers.number(payoff.get(name, 0)) for name in outcomes]
    endless = numbers.number(nonterminating_payoff if nonterminating_payoff is not None else 0)
    if not all_states and DECISION not in graph.kind:
        with paused_gc():
            return _forward_only(graph, payoffs, endless, started, numbers.exact, progress, components)
    solver = _Solver(graph, numbers, payoffs, endless, vectors=all_states)
    with paused_gc():
        solver.run(progress, components)
        return solver.solution(all_states, time.perf_counter() - started)


def _forward_only(graph, payoffs, endless, started, exact, progress=None, components=None) -> Solution:
    """The initial state's answers of a graph without decisions, from one forward pass."""
    if components is None:
        components = graph.strongly_connected_components()
    result = forward_pass(graph, components=components, exact=exact, progress=progress)
    public = to_fraction if exact else float
    value = public(endless) * result.never_ends
    for pay, name in zip(payoffs, graph.outcomes):
        value += public(pay) * result.absorption[name]
    cyclic = sum(1 for component in components if len(component) > 1 or component[0] in graph.successors(component[0]))
    return Solution(
        absorption=result.absorption,
        never_ends=result.never_ends,
        value=value,
        expected_steps=result.expected_steps,
        expected_rewards=result.expected_rewards,
        strategy={},
        states=graph.num_states,
        transitions=graph.num_transitions,
        components=len(components),
        cyclic_components=cyclic,
        largest_component=max(map(len, components)),
        seconds=time.perf_counter() - started,
        exact=exact,
        outcomes=graph.outcomes,
    )


class _Solver:
    """The backward pass. With ``vectors`` each state carries its outcome probabilities
    and never-ends (``(numerators, denominator)``, for per-state answers); without, only
    its value ``(numerator, denominator)`` (terminals hold their payoff, dead states the
    endless payoff), which is all that choosing needs: one multiply-add per edge instead
    of one per outcome, and a component's strategy iteration leaves its values solved.
    The initial state's odds then come from the forward pass (`visits`)."""

    def __init__(self, graph: StateGraph, numbers, payoffs, endless, vectors=True):
        self.graph = graph
        self.numbers = numbers
        self.payoffs = payoffs
        self.endless = endless
        self.vectors = vectors
        outcome_count = len(graph.outcomes)
        self.never_slot = outcome_count
        count = graph.num_states
        self.nums: list = [None] * count
        self.dens: list = [None] * count
        self.alive = bytearray(count)  # can reach a terminal under the chosen strategy
        self.chosen_edge: dict[int, int] = {}
        self.value_cache: dict[int, object] = {}
        zero, one = numbers.zero, numbers.one
        if vectors:
            self.width = outcome_count + 1
            self.terminal_vectors = [
                (tuple(one if slot == outcome else zero for slot in range(self.width)), one)
                for outcome in range(outcome_count)
            ]
            self.dead_vector = (tuple(one if slot == self.never_slot else zero for slot in range(self.width)), one)
        else:
            self.width = 1
            self.terminal_vectors = [self.split(pay) for pay in payoffs]
            self.dead_vector = self.split(endless)
        self.component_count = self.cyclic_count = self.largest = 0
        self.looping: set[int] = set()  # one-state components with a self-loop

    @cached_property
    def csr(self):
        """The graph's arrays for the compiled loops (made once, for both passes, which
        read no reward masses)."""
        return csr_arrays(self.graph, masses=False)

    @cached_property
    def loop_systems(self):
        """The compiled builder of the cyclic components' systems (exact values without
        vectors, as `backward_values`), or None."""
        if self.numbers.exact and not self.vectors and LoopSystems is not None:
            return LoopSystems(self, self.csr)
        return None

    def compiled_loops(self, component):
        """`loop_systems` when it serves ``component`` (no weight past 64 bits), else None."""
        systems = self.loop_systems
        return systems if systems is not None and systems.serves(component) else None

    # -- values -------------------------------------------------------------------
    def split(self, value):
        """``(numerator, denominator)`` of a number."""
        return self.numbers.split(value)

    def value_of(self, node):
        cached = self.value_cache.get(node)
        if cached is None:
            nums, den = self.nums[node], self.dens[node]
            if not self.vectors:
                cached = self.value_cache[node] = self.numbers.ratio(nums, den)
                return cached
            entry = self.numbers.vector_entry
            cached = self.endless * entry(nums, den, self.never_slot)
            for slot, pay in enumerate(self.payoffs):
                if pay and nums[slot]:
                    cached += pay * entry(nums, den, slot)
            self.value_cache[node] = cached
        return cached

    # -- main loop ------------------------------------------------------------------
    def run(self, progress, components=None):
        graph = self.graph
        if components is None:
            components = graph.strongly_connected_components()
        self.components = components
        self.component_count = len(components)
        self.largest = 1 if components else 0  # solve_cycle raises it
        bar = solving_bar(graph, progress)
        if self.numbers.exact and not self.vectors and backward_values is not None:
            backward_values(self, components, self.csr, bar)
        else:
            self.run_in_python(components, bar)
        if bar is not None:
            bar.close()

    def run_in_python(self, components, bar):
        """`run`'s loop where the compiled one (`_exact_pass`) does not serve."""
        offsets, targets = self.graph.offsets, self.graph.targets
        for component in components:
            check_memory("while solving")
            if len(component) == 1:
                node = component[0]
                low, high = offsets[node], offsets[node + 1]
                if node not in targets[low:high]:
                    self.solve_single(node)
                    if bar is not None:
                        bar.update(1)
                    continue
            self.solve_cycle(component)
            if bar is not None:
                bar.update(len(component))

    def solve_cycle(self, component):
        """A component with a cycle (one state with a self-loop, or more)."""
        self.largest = max(self.largest, len(component))
        if len(component) == 1:
            self.looping.add(component[0])
        self.cyclic_count += 1
        if any(self.graph.kind[node] == DECISION for node in component):
            self.settle(component, *StrategyIteration(self, component).run())
        else:
            self.settle(component, {}, None)

    def solve_single(self, node):
        graph, numbers = self.graph, self.numbers
        node_kind = graph.kind[node]
        if node_kind == TERMINAL:
            self.nums[node], self.dens[node] = self.terminal_vectors[graph.data[node]]
            self.alive[node] = 1
            return
        if node_kind == CHANCE:
            low, high = graph.offsets[node], graph.offsets[node + 1]
            targets = graph.targets[low:high]
            pairs = zip(graph.weights[low:high], targets)
            if self.vectors:
                pairs = list(pairs)
            combine = numbers.combine if self.vectors else numbers.scalar_combine
            self.nums[node], self.dens[node] = combine(pairs, self.nums, self.dens, graph.data[node])
            self.alive[node] = any(map(self.alive.__getitem__, targets))
            return
        low, high = graph.offsets[node], graph.offsets[node + 1]
        targets = graph.targets
        side = graph.data[node]
        if numbers.exact and not self.vectors:
            self.take_edge(node, self.first_best_value(low, high, side))
            return
        best_edge, best_value = low, self.value_of(targets[low])
        for edge in range(low + 1, high):
            candidate = self.value_of(targets[edge])
            if numbers.better(side, candidate, best_value):
                best_edge, best_value = edge, candidate
        self.take_edge(node, best_edge)

    def first_best_value(self, low, high, side):
        """The first of edges ``low``..``high`` - 1 whose target's exact value is best
        for ``side`` (values compared as numerator * other denominator: no rationals
        built, denominators are positive)."""
        nums, dens, targets = self.nums, self.dens, self.graph.targets
        best_edge, target = low, targets[low]
        best_num, best_den = nums[target], dens[target]
        for edge in range(low + 1, high):
            target = targets[edge]
            num, den = nums[target], dens[target]
            if (num * best_den - best_num * den) * side > 0:
                best_edge, best_num, best_den = edge, num, den
        return best_edge

    def take_edge(self, node, edge):
        target = self.graph.targets[edge]
        self.chosen_edge[node] = edge
        self.nums[node], self.dens[node] = self.nums[target], self.dens[target]
        self.alive[node] = self.alive[target]

    # -- components -------------------------------------------------------------------
    def moves(self, node, policy):
        """``(total, [(weight, target), ...])``: where ``node`` goes when decisions follow
        ``policy`` (node -> edge); a decision is one move of weight 1 out of 1."""
        graph = self.graph
        if graph.kind[node] == DECISION:
            return 1, [(1, graph.targets[policy[node]])]
        low, high = graph.offsets[node], graph.offsets[node + 1]
        return graph.data[node], list(zip(graph.weights[low:high], graph.targets[low:high]))

    def live_states(self, component, members, policy):
        """States of the component that can reach a terminal under ``policy``."""
        systems = self.compiled_loops(component)
        if systems is not None:
            return set(systems.live_states(component, policy))
        predecessors: dict[int, list[int]] = {node: [] for node in component}
        live = set()
        for node in component:
            for _, target in self.moves(node, policy)[1]:
                if target in members:
                    predecessors[target].append(node)
                elif self.alive[target]:
                    live.add(node)
        frontier = list(live)
        while frontier:
            node = frontier.pop()
            for parent in predecessors[node]:
                if parent not in live:
                    live.add(parent)
                    frontier.append(parent)
        return live

    def build_system(self, component, policy, live, inside_values):
        """Rows of (weight*I - P) x = known part over the live states of a component
        (the payoff values during strategy iteration); each known part as ``(numerator,
        denominator)`` (`value_sum`)."""
        numbers = self.numbers
        order = sorted(live)
        position = {node: i for i, node in enumerate(order)}
        rows, right_sides = [], []
        for node in order:
            diagonal, pairs = self.moves(node, policy)
            row = {position[node]: diagonal}
            known = []
            for weight, target in pairs:
                column = position.get(target)
                if column is not None:
                    row[column] = row.get(column, 0) - weight
                elif target in inside_values:  # a dead state of this component
                    known.append((weight, self.endless))
                else:
                    known.append((weight, self.value_of(target)))
            rows.append(row)
            right_sides.append(numbers.value_sum(known))
        return order, rows, right_sides

    def solve_component(self, component, policy):
        """Exact (or float) solve of a component with decisions fixed by ``policy``."""
        members = set(component)
        live = self.live_states(component, members, policy)
        dead = members - live
        for node in dead:
            self.nums[node], self.dens[node] = self.dead_vector
        if live:
            order = sorted(live)
            position = {node: i for i, node in enumerate(order)}
            rows, right_sides = [], []
            numbers = self.numbers
            for node in order:
                diagonal, pairs = self.moves(node, policy)
                row = {position[node]: diagonal}
                outside = []
                for weight, target in pairs:
                    column = position.get(target)
                    if column is None:
                        outside.append((weight, target))
                    else:
                        row[column] = row.get(column, 0) - weight
                rows.append(row)
                right_sides.append(numbers.weighted_sum(outside, self.nums, self.dens, self.width))
            for node, (nums, den) in zip(order, numbers.solve_vectors(rows, right_sides)):
                self.nums[node], self.dens[node] = nums, den
                self.alive[node] = 1
        for node in component:
            if self.graph.kind[node] == DECISION:
                self.chosen_edge[node] = policy[node]

    def evaluate_values(self, component, members, policy, live=None):
        """Every member's value under ``policy``: one exact solve over the live members
        (``live``, found here when not given; `LoopSystems` finds them itself), the
        endless payoff elsewhere."""
        systems = self.compiled_loops(component)
        if systems is not None:
            order, rows, right_sides = systems.system(component, policy, self.endless)
            values = dict.fromkeys(component, self.endless)
        else:
            if live is None:
                live = self.live_states(component, members, policy)
            values = {node: self.endless for node in members - live}
            if not live:
                return values
            order, rows, right_sides = self.build_system(component, policy, live, values)
        if order:
            for node, solved in zip(order, self.numbers.solve_values(rows, right_sides)):
                values[node] = solved
        return values

    def settle(self, component, policy, values):
        """Solve a cyclic component under ``policy`` (its decisions' edges). Without
        vectors its ``values`` (from strategy iteration's last evaluation, else solved
        here) are the component's results."""
        if self.vectors:
            self.solve_component(component, policy)
            return
        members = set(component)
        live = self.live_states(component, members, policy)
        if values is None:
            values = self.evaluate_values(component, members, policy, live)
        for node in component:
            if node in live:
                self.nums[node], self.dens[node] = self.split(values[node])
                self.alive[node] = 1
            else:
                self.nums[node], self.dens[node] = self.dead_vector
            if self.graph.kind[node] == DECISION:
                self.chosen_edge[node] = policy[node]

    # -- the initial state's answers: one forward pass ---------------------------------------
    def visits(self):
        """``(absorption, never_ends, expected steps, expected rewards)`` at the initial
        state under the chosen strategy, from one forward pass of expected visits; steps
        and rewards are None when play may never end.

        `ExpectedVisits` (each state over its own denominator) while the values are
        short; past `SHARED_DENOMINATOR_BITS` in the initial state's value,
        `exactdice.markov.forward` (one shared denominator): there adding flows over
        many distinct huge denominators costs the most (the exact check of a strategy
        on A1 v C1, 223,187 states, a 59,068-digit value: 35 s against 9 s; on 55,530
        states and 1,449 bits they take the same time)."""
        if self.numbers.exact and self.dens[self.graph.initial].bit_length() > SHARED_DENOMINATOR_BITS:
            found = forward_pass(self.graph, self.chosen_edge, self.alive, self.components, progress=False)
            return found.absorption, found.never_ends, found.expected_steps, found.expected_rewards
        return _ExpectedVisits(self).run()

    def expectations(self):
        """Expected steps and rewards from the initial state under the chosen strategy."""
        return self.visits()[2:]

    # -- results ---------------------------------------------------------------------------
    def solution(self, all_states, seconds) -> Solution:
        graph, numbers = self.graph, self.numbers
        if numbers.exact and self.vectors:
            for node in range(graph.num_states):
                if sum(self.nums[node]) != self.dens[node]:
                    raise ArithmeticError(f"probabilities of state {graph.states[node]!r} do not sum to 1")

        def report(node):
            nums, den = self.nums[node], self.dens[node]
            to_public = numbers.fraction
            entry = numbers.vector_entry
            absorption = {name: to_public(entry(nums, den, i)) for i, name in enumerate(graph.outcomes)}
            never = to_public(entry(nums, den, self.never_slot))
            return absorption, never, to_public(self.value_of(node))

        absorption, never, steps, rewards = self.visits()
        value = numbers.fraction(self.value_of(graph.initial))
        if numbers.exact:
            self.check_agreement(absorption, never, value, report)
        strategy = Strategy(graph, self.chosen_edge)
        per_state = None
        if all_states:
            index = graph.index

            def per_state(state):
                node = index[state]
                state_absorption, state_never, state_value = report(node)
                state_absorption["never_ends"] = state_never
                return state_absorption, state_value

        return Solution(
            absorption=absorption,
            never_ends=never,
            value=value,
            expected_steps=steps,
            expected_rewards=rewards,
            strategy=strategy,
            states=graph.num_states,
            transitions=graph.num_transitions,
            components=self.component_count,
            cyclic_components=self.cyclic_count,
            largest_component=self.largest,
            seconds=seconds,
            exact=numbers.exact,
            outcomes=graph.outcomes,
            _per_state=per_state,
        )

    def check_agreement(self, absorption, never, value, report):
        """The forward pass's odds must give the backward pass's value exactly (and, with
        vectors, its very odds): two independent computations of the same numbers."""
        fraction = self.numbers.fraction
        forward_value = fraction(self.endless) * never + sum(
            fraction(pay) * absorption[name] for pay, name in zip(self.payoffs, self.graph.outcomes)
        )
        if forward_value != value:
            raise ArithmeticError("the forward pass and the backward pass disagree on the value")
        if self.vectors and report(self.graph.initial)[:2] != (absorption, never):
            raise ArithmeticError("the forward pass and the backward pass disagree on the outcome odds")
