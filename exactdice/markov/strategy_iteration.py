"""Hoffman-Karp strategy iteration on one strongly connected component with decisions, for
`exactdice.markov.solver` (the component's values solved under each strategy by its
solver, each side improving until neither can).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exactdice.limits import check_memory
from exactdice.markov.graph import DECISION, MAX

if TYPE_CHECKING:
    from exactdice.markov.solver import _Solver

__all__ = ["StrategyIteration"]

#: improvement rounds before a component is declared not to converge (a bug, not a limit)
_MAX_IMPROVEMENT_ROUNDS = 100_000


class StrategyIteration:
    """Hoffman–Karp strategy iteration on one component with decisions.

    The inner player's best response is found with the outer player's policy fixed, then
    the outer player improves; `trap` lets a player who prefers endless play keep it. At
    the end each decision keeps the FIRST action among exactly equal values, when that
    leaves every value unchanged.
    """

    def __init__(self, solver: _Solver, component):
        graph = solver.graph
        self.solver, self.numbers, self.component = solver, solver.numbers, component
        self.members = set(component)
        self.offsets, self.targets, self.kind, self.data = graph.offsets, graph.targets, graph.kind, graph.data
        self.deciders = [node for node in component if self.kind[node] == DECISION]
        self.policy = {node: self.offsets[node] for node in self.deciders}
        self.sides_present = {self.data[node] for node in self.deciders}
        self.outer = MAX if MAX in self.sides_present else -MAX
        self.inner = -self.outer

    def run(self) -> tuple[dict, dict]:
        """The strategy (decision node -> edge) the component is solved under, and the
        component's values under it."""
        values = self.converged_values()
        first_best = {node: self.first_best_edge(values, node) for node in self.deciders}
        if first_best != self.policy:
            check = self.solver.evaluate_values(self.component, self.members, first_best)
            if all(self.equal(check[node], values[node]) for node in self.component):
                return first_best, check
        return self.policy, values

    def converged_values(self) -> dict:
        """Iterate until neither player improves; the values under the final policy."""
        for _ in range(_MAX_IMPROVEMENT_ROUNDS):
            check_memory("while improving the strategy")
            while True:
                values = self.solver.evaluate_values(self.component, self.members, self.policy)
                if self.inner in self.sides_present and (
                    self.improve(self.inner, values) or self.trap(self.inner, values)
                ):
                    continue
                break
            if self.improve(self.outer, values) or self.trap(self.outer, values):
                continue
            return values
        raise RuntimeError("strategy iteration did not converge")

    def edges(self, node) -> range:
        return range(self.offsets[node], self.offsets[node + 1])

    def equal(self, value, other) -> bool:
        """Neither better for the maximiser nor for the minimiser (a float preview's
        comparisons have a tolerance)."""
        better = self.numbers.better
        return not better(MAX, value, other) and not better(-MAX, value, other)

    def action_value(self, values, edge):
        target = self.targets[edge]
        return values[target] if target in self.members else self.solver.value_of(target)

    def ties(self, values, node, edge) -> bool:
        return self.equal(self.action_value(values, edge), values[node])

    def first_best_edge(self, values, node) -> int:
        """The first action whose value equals the node's. Exact values always match the
        chosen action; a float preview may miss it by more than its tolerance, and then
        keeps the chosen action."""
        return next((edge for edge in self.edges(node) if self.ties(values, node, edge)), self.policy[node])

    def improve(self, side, values) -> bool:
        """``side`` switches to strictly better actions; True if the policy changed."""
        changed = False
        for node in self.deciders:
            if self.data[node] != side:
                continue
            best_edge = self.policy[node]
            best = self.action_value(values, best_edge)
            for edge in self.edges(node):
                candidate = self.action_value(values, edge)
                if self.numbers.better(side, candidate, best):
                    best_edge, best = edge, candidate
            if best_edge != self.policy[node]:
                self.policy[node] = best_edge
                changed = True
        return changed

    def trap(self, side, values) -> bool:
        """Let ``side`` keep play inside a set forever when endless play beats its
        current values there; True if the policy changed.

        The inner player (the outer one fixed) may take any action that stays. The
        outer player takes only actions of equal value that stay, and the set must
        hold against every EQUALLY GOOD action of the inner player (the inner best
        response may leave only by a strictly worse action for itself): the values
        then never drop and rise strictly on the set. Without this the iteration
        stopped short where the opponent could leave, but only at a cost."""
        region = self.trap_region(side, values)
        changed = False
        for node in region:
            if self.kind[node] == DECISION and self.data[node] == side:
                if self.stays(side, values, node, self.policy[node], region):
                    continue
                self.policy[node] = next(
                    edge for edge in self.edges(node) if self.stays(side, values, node, edge, region)
                )
                changed = True
        return changed

    def stays(self, side, values, node, edge, region) -> bool:
        """``side`` may take ``edge`` to keep play in ``region``."""
        return self.targets[edge] in region and (side == self.inner or self.ties(values, node, edge))

    def trap_region(self, side, values) -> set:
        """The largest set where ``side`` prefers endless play and can hold play."""
        endless, better = self.solver.endless, self.numbers.better
        region = {node for node in self.component if better(side, endless, values[node])}
        shrinking = True
        while shrinking and region:
            shrinking = False
            for node in list(region):
                if not self.keeps(side, values, node, region):
                    region.discard(node)
                    shrinking = True
        return region

    def keeps(self, side, values, node, region) -> bool:
        """Play at ``node`` stays in ``region`` (see `trap` for who may choose what)."""
        targets, edges = self.targets, self.edges(node)
        if self.kind[node] != DECISION:
            return all(targets[edge] in region for edge in edges)
        if self.data[node] == side:
            return any(self.stays(side, values, node, edge, region) for edge in edges)
        if side == self.inner:
            return targets[self.policy[node]] in region  # the outer player is fixed
        # the inner player's best responses must stay
        return all(targets[edge] in region for edge in edges if self.ties(values, node, edge))
