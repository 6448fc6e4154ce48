"""`Strategy`: the strategy a solve chose, as a mapping from decision states to action
names, each state named from the graph only when it is asked for."""

from __future__ import annotations

from collections.abc import Mapping

from exactdice.markov.graph import StateGraph

__all__ = ["Strategy"]


class Strategy(Mapping):
    """Decision state -> the chosen action's name, each state named when it is asked
    for: naming every decision state of a large graph costs more than solving it (on a
    one-sided graph of 107,677 decisions, 0.5 s against 1.4 s), and callers mostly read
    a few. It keeps the solved graph alive; ``dict(strategy)`` is a copy that does not,
    and a pickled copy is a plain dict.

    Parameters
    ----------
    graph : StateGraph
        The solved graph (its states and action names).
    chosen_edge : dict of int to int
        Decision node -> the edge chosen there.

    Examples
    --------
    >>> from exactdice.markov import Decision, Terminal, solve
    >>> class Pick:
    ...     outcomes, reward_names = ("win", "loss"), ()
    ...     def initial_state(self):
    ...         return "start"
    ...     def expand(self, state):
    ...         if state == "start":
    ...             return Decision("max", (("stay", "loss", None), ("go", "win", None)))
    ...         return Terminal(state)
    >>> strategy = solve(Pick()).strategy
    >>> strategy["start"], dict(strategy)
    ('go', {'start': 'go'})
    """

    def __init__(self, graph: StateGraph, chosen_edge: dict[int, int]):
        self._graph, self._chosen_edge = graph, chosen_edge

    def __getitem__(self, state) -> str:
        edge = self._chosen_edge.get(self._graph.index[state])
        if edge is None:
            raise KeyError(state)
        return self._graph.action_names[edge]

    def __iter__(self):
        states = self._graph.states
        return (states[node] for node in self._chosen_edge)

    def __len__(self) -> int:
        return len(self._chosen_edge)

    def items(self):
        """(state, action name) pairs, each state named once (no look-up back)."""
        states, names = self._graph.states, self._graph.action_names
        return {states[node]: names[edge] for node, edge in self._chosen_edge.items()}.items()

    def __reduce__(self):
        return dict, (dict(self.items()),)

    def __repr__(self) -> str:
        return f"Strategy({dict(self.items())!r})"
