"""The strategy the bounded search offers: at each "max" state reached, an action best for
the lower bounds, ties broken toward the end of play.
"""

from __future__ import annotations

from exactdice.markov.bounded_states import CHANCE, FRONTIER, MAX, MIN, TERMINAL, ExpandedStates

__all__ = ["GreedyStrategy"]


class GreedyStrategy(ExpandedStates):
    """The "max" side's strategy read off the bounds, for `exactdice.markov.bounded.BoundedSolver`."""

    def strategy(self) -> dict:
        """Expanded "max" state -> action name, among the actions best for the lower bounds,
        for the states play reaches from the initial state when "max" takes only such
        actions; past an unexpanded state play takes the default (`evaluate_strategy`'s
        ``default_action``) wherever this names nothing.

        Greedy alone can circle forever among equally valued states (an end component
        whose exit is worth the same), so ties go to an action that moves toward the end:
        walking backward from terminal and unexpanded states, a state joins once one of
        its successors has (a "max" state through one of its best actions, which it then
        takes); a "max" state that never joins takes its first best action.
        """
        names = self.names
        best_actions, reached = self._best_actions_reached()
        chosen_index = self._toward_the_end(best_actions, reached)
        return {
            self.states[node]: names[node][chosen_index.get(node, actions[0])] for node, actions in best_actions.items()
        }

    def _best_actions_reached(self) -> tuple[dict, list]:
        """("max" state -> indices of its actions best for the lower bounds, every state
        reached from the initial one through those and through every chance or "min" branch,
        in increasing order)."""
        lo, kind, targets = self.lo, self.kind, self.targets
        best_actions = {}
        seen = bytearray(len(self.states))
        seen[self.initial] = 1
        stack = [self.initial]
        while stack:
            node = stack.pop()
            node_kind = kind[node]
            if node_kind == MAX:
                options = targets[node]
                best = max([lo[t] for t in options])
                actions = best_actions[node] = [i for i, t in enumerate(options) if lo[t] == best]
                following = [options[i] for i in actions]
            elif node_kind == CHANCE or node_kind == MIN:
                following = targets[node]
            else:
                continue
            for target in following:
                if not seen[target]:
                    seen[target] = 1
                    stack.append(target)
        return best_actions, [node for node in range(len(seen)) if seen[node]]

    def _toward_the_end(self, best_actions: dict, reached: list) -> dict:
        """ "max" state -> index of the best action through which it first joins the states
        that lead to a terminal or unexpanded state (walking backward from those, over the
        ``reached`` states only: no other state leads into them this way)."""
        kind, targets = self.kind, self.targets
        predecessors: dict = {node: [] for node in reached}
        for node in reached:
            node_kind = kind[node]
            if node_kind == CHANCE or node_kind == MIN:
                for t in targets[node]:
                    predecessors[t].append((node, -1))
            elif node_kind == MAX:
                for i in best_actions[node]:
                    predecessors[targets[node][i]].append((node, i))
        joined = set()
        chosen_index = {}
        queue = [node for node in reached if kind[node] in (TERMINAL, FRONTIER)]
        joined.update(queue)
        while queue:
            for node, action in predecessors[queue.pop()]:
                if node in joined:
                    continue
                joined.add(node)
                if action >= 0:
                    chosen_index[node] = action
                queue.append(node)
        return chosen_index
