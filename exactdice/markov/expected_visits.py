"""`ExpectedVisits`: the solver's forward pass of expected visits under the chosen
strategy (`exactdice.markov.solver`), each state over its own denominator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from exactdice.markov.graph import CHANCE, DECISION, TERMINAL

if TYPE_CHECKING:
    from exactdice.markov.solver import _Solver

try:
    from exactdice.markov._exact_pass import forward_visits, reward_totals
except ImportError:  # an install that could not build the extension: the Python loop
    forward_visits = reward_totals = None  # type: ignore[assignment]

__all__ = ["ExpectedVisits"]


class ExpectedVisits:
    """Expected visits under the chosen strategy, pushed forward component by component
    (sources first, so a node's inflow is complete when it is reached), each state over
    its own denominator: the visits to terminals are the outcome odds, the flow into
    states that cannot end is never-ends, steps are the visits to chance nodes and a
    reward the visits times each node's expected immediate reward.

    ``flow`` is visits / total weight for a live chance node (what each unit of edge
    weight carries to the edge's target), visits for any other node (numerator and
    denominator kept apart). ``inflow`` holds, per node not yet reached, what arrives
    so far as a dict denominator -> numerator (senders mostly share a few denominators).

    `exactdice.markov.forward` does the same over one shared denominator, the better
    choice for long chains with huge numbers (`_Solver.visits` hands it those); on graphs
    with decisions (many small states, short numbers) this pass takes about a quarter of
    its time, most of which goes to the per-state numpy work of its bound
    (scripts/MEASUREMENTS.md, "The MDP solve: before and after").
    """

    def __init__(self, solver: _Solver):
        graph = solver.graph
        self.solver, self.graph, self.numbers = solver, graph, solver.numbers
        self.flow_num: list = [None] * graph.num_states
        self.flow_den: list = [None] * graph.num_states
        self.inflow: dict[int, dict] = {graph.initial: {}}
        self.ends: list[list[int]] = [[] for _ in graph.outcomes]  # terminals reached, per outcome
        self.dead: list[int] = []  # states reached that cannot end

    def run(self):
        """``(absorption, never_ends, steps, rewards)`` (see `_Solver.visits`)."""
        solver = self.solver
        if self.numbers.exact and forward_visits is not None:
            forward_visits(self, solver.components, solver.csr)
        else:
            for component in reversed(solver.components):
                if len(component) == 1 and component[0] not in solver.looping:
                    self.pass_single(component[0])
                else:
                    self.pass_cycle(component)
        absorption = {
            name: self.total([(1, node) for node in ends]) for name, ends in zip(self.graph.outcomes, self.ends)
        }
        never = self.total([(1, node) for node in self.dead])
        if self.numbers.exact and sum(absorption.values()) + never != 1:
            raise ArithmeticError("the forward pass's outcome probabilities do not sum to exactly 1")
        if never:
            return absorption, never, None, {name: None for name in self.graph.reward_names}
        return (absorption, never, *self.totals())

    def push(self, node, members=()) -> None:
        """Record the flow out of ``node`` into its targets, but for the live ones among
        ``members`` (a loop's, solved together)."""
        inflow, alive = self.inflow, self.solver.alive
        num, den = self.flow_num[node], self.flow_den[node]
        for weight, target in self.solver.moves(node, self.solver.chosen_edge)[1]:
            if target in members and alive[target]:
                continue
            sums = inflow.get(target)
            if sums is None:
                inflow[target] = {den: weight * num}
            else:
                sums[den] = sums.get(den, 0) + weight * num

    def arriving(self, node):
        """(numerator, denominator) of the expected visits arriving at ``node`` (the initial
        state is visited once more: the start)."""
        num, den = self.numbers.common_sum(self.inflow.pop(node))
        return (num + den, den) if node == self.graph.initial else (num, den)

    def collect(self, node) -> None:
        """A terminal or a state that cannot end keeps what arrives."""
        self.flow_num[node], self.flow_den[node] = self.arriving(node)
        if self.graph.kind[node] == TERMINAL:
            self.ends[self.graph.data[node]].append(node)
        else:
            self.dead.append(node)

    def pass_single(self, node) -> None:
        """An acyclic node: its visits are what arrives."""
        if node not in self.inflow:
            return
        if self.graph.kind[node] == TERMINAL or not self.solver.alive[node]:
            self.collect(node)
            return
        num, den = self.arriving(node)
        if self.graph.kind[node] == CHANCE:
            num, den = self.numbers.divided(num, den, self.graph.data[node])
        self.flow_num[node], self.flow_den[node] = num, den
        self.push(node)

    def pass_cycle(self, component) -> None:
        """A cyclic component: one linear solve of the transposed system (a column per
        source) over its live nodes; its other nodes keep what arrives."""
        systems = self.solver.compiled_loops(component)
        if systems is not None:
            systems.pass_cycle(self, component)
            return
        solver, numbers, inflow = self.solver, self.numbers, self.inflow
        live = [node for node in component if solver.alive[node]]
        if any(node in inflow for node in live):
            position = {node: i for i, node in enumerate(live)}
            moves = {node: solver.moves(node, solver.chosen_edge) for node in live}
            rows = [{i: moves[node][0]} for i, node in enumerate(live)]
            for node in live:
                for weight, target in moves[node][1]:
                    column = position.get(target)
                    if column is not None:
                        row = rows[column]
                        row[position[node]] = row.get(position[node], 0) - weight
            right_sides = []
            for node in live:
                num, den = self.arriving(node) if node in inflow else (numbers.zero, numbers.one)
                right_sides.append(((num,), den))
            members = set(live)
            for node, (nums, den) in zip(live, numbers.solve_vectors(rows, right_sides)):
                self.flow_num[node], self.flow_den[node] = nums[0], den
                self.push(node, members)
        for node in component:
            if node in inflow:  # a member that cannot end (play never ends here)
                self.collect(node)

    def totals(self):
        """(expected steps, {reward name: expected total}) from the flows (every state
        reached can end)."""
        graph, kind, data = self.graph, self.graph.kind, self.graph.data
        csr = self.solver.csr
        if self.numbers.exact and reward_totals is not None and csr.mass.shape[1] == len(graph.reward_names):
            steps_total, reward_sums = reward_totals(self, csr)
            ratio, fraction = self.numbers.ratio, self.numbers.fraction
            return fraction(ratio(*steps_total)), {
                name: fraction(ratio(*total)) for name, total in zip(graph.reward_names, reward_sums)
            }
        steps, reward_pairs = [], [[] for _ in graph.reward_names]
        for node, num in enumerate(self.flow_num):
            if num is None:
                continue
            if kind[node] == CHANCE:
                steps.append((data[node], node))
                amounts = graph.chance_reward_mass[node]
            elif kind[node] == DECISION:
                amounts = graph.action_rewards.get(self.solver.chosen_edge[node])
            else:  # a terminal
                continue
            for pairs, amount in zip(reward_pairs, amounts or ()):
                if amount:
                    pairs.append((amount, node))
        return self.total(steps), {name: self.total(pairs) for name, pairs in zip(graph.reward_names, reward_pairs)}

    def total(self, pairs):
        numbers = self.numbers
        return numbers.fraction(numbers.ratio(*numbers.scalar_sum(pairs, self.flow_num, self.flow_den)))
