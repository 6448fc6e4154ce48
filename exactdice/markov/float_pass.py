"""The float preview of the forward pass: the same visits, in numpy floats (NOT exact).

A state's edges are one vectorised multiply-add (its targets are distinct, the explorer
merges duplicates), a loop one dense ``numpy.linalg.solve``; steps and rewards are dot
products with the per-state ``y`` at the end. On A5 v C5, W3 P1 it costs a small
fraction of the exact pass (scripts/MEASUREMENTS.md, "The float preview").

>>> from exactdice.markov.graph import explore
>>> from exactdice.markov.forward import forward_pass
>>> from exactdice.markov.synthetic import GamblersRuin
>>> result = forward_pass(explore(GamblersRuin(goal=3, start=1, up=1, down=1)), exact=False)
>>> round(result.absorption["win"], 12), round(result.expected_steps, 12)
(0.333333333333, 2.0)
"""

from __future__ import annotations

import numpy

from exactdice.markov.graph import CHANCE, DECISION, TERMINAL

__all__ = ["float_pass"]

_ENDLESS_TOLERANCE = 1e-12


class _FloatFlow:
    """Visits in floats: ``inflow`` per state, ``y`` = visits / total per passing state."""

    def __init__(self, plan):
        graph = plan.graph
        self.plan, self.graph = plan, graph
        count = graph.num_states
        self.targets, self.offsets = plan.csr.targets, plan.csr.offsets
        self.weights = numpy.array(graph.weights, dtype=float)
        self.inflow = numpy.zeros(count)
        self.inflow[graph.initial] = 1.0
        self.y = numpy.zeros(count)
        self.position = numpy.full(count, -1, dtype=numpy.int64)  # a loop member's column, else -1

    def push(self, node, value):
        """Pass ``value`` (``y`` of ``node``) along its edges under the strategy."""
        graph, plan = self.graph, self.plan
        self.y[node] = value
        if graph.kind[node] == DECISION:
            self.inflow[graph.targets[plan.chosen_edge[node]]] += value
            return
        low, high = self.offsets[node], self.offsets[node + 1]
        self.inflow[self.targets[low:high]] += self.weights[low:high] * value

    def state(self, node):
        graph = self.graph
        if self.plan.alive[node] and graph.kind[node] != TERMINAL:
            total = graph.data[node] if graph.kind[node] == CHANCE else 1
            self.push(node, self.inflow[node] / total)

    def loop(self, index):
        live = [node for node in self.plan.components[index] if self.plan.alive[node]]
        if not live:
            return
        values = numpy.linalg.solve(self.block(live), self.inflow[live])
        for node, value in zip(live, values.tolist()):
            self.push(node, value)
        self.inflow[live] = 0.0  # what the members sent each other is inside the solve

    def block(self, live):
        """A_C (``diag(t) - W^T`` among the live members) as a dense float matrix, one
        vectorised lookup of each member's targets."""
        graph, plan = self.graph, self.plan
        position = self.position
        position[live] = numpy.arange(len(live))
        matrix = numpy.zeros((len(live), len(live)))
        for source, node in enumerate(live):
            if graph.kind[node] == DECISION:
                matrix[source, source] += 1.0
                column = position[graph.targets[plan.chosen_edge[node]]]
                if column >= 0:
                    matrix[column, source] -= 1.0
                continue
            matrix[source, source] += graph.data[node]
            low, high = self.offsets[node], self.offsets[node + 1]
            columns = position[self.targets[low:high]]
            inside = columns >= 0
            matrix[columns[inside], source] -= self.weights[low:high][inside]
        position[live] = -1
        return matrix


def float_pass(plan):
    """The `ForwardResult` of ``plan`` in floats."""
    from exactdice.markov.forward import ForwardResult

    flow = _FloatFlow(plan)
    plan.visit(flow)
    graph, inflow = plan.graph, flow.inflow
    kind = numpy.frombuffer(bytes(graph.kind), dtype=numpy.uint8)
    alive = numpy.frombuffer(bytes(plan.alive), dtype=numpy.uint8).astype(bool)
    data = numpy.array(graph.data, dtype=float)
    terminal = (kind == TERMINAL) & alive
    collected = numpy.bincount(
        data[terminal].astype(numpy.int64), weights=inflow[terminal], minlength=len(graph.outcomes)
    )
    absorption = {name: float(collected[i]) for i, name in enumerate(graph.outcomes)}
    never_ends = float(inflow[~alive].sum())
    if never_ends > _ENDLESS_TOLERANCE:
        return ForwardResult(absorption, never_ends, None, {name: None for name in graph.reward_names}, 0)
    chance = (kind == CHANCE) & alive
    steps = float((data[chance] * flow.y[chance]).sum())
    return ForwardResult(absorption, never_ends, steps, dict(zip(graph.reward_names, _rewards(plan, flow.y))), 0)


def _rewards(plan, y):
    """Expected reward per counter: chance nodes' masses and chosen actions' rewards
    times their ``y`` (a decision's visits)."""
    graph = plan.graph
    totals = [0.0] * len(graph.reward_names)
    for node in numpy.flatnonzero(y).tolist():
        if graph.kind[node] == CHANCE:
            masses = graph.chance_reward_mass[node]
        else:
            masses = graph.action_rewards.get(plan.chosen_edge.get(node))
        for slot, mass in enumerate(masses or ()):
            totals[slot] += mass * y[node]
    return totals
