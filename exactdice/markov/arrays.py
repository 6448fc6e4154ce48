"""A `StateGraph` over flat arrays made elsewhere (a compiled explorer), with its states
named on demand.

A compiled explorer (`exactdice.karbon.compiled`) keeps its states as packed integers
and its edges in CSR arrays; `ArrayGraph` hands those arrays to the solvers as they are
and turns a node id into the model's own state (or back) only where a caller asks for it
(a strategy's keys, a per-state answer). Nothing here knows which game made the arrays.

>>> graph = ArrayGraph(("win", "loss"), (), kind=bytes([1, 0, 0]), data=[2, 0, 1],
...                    offsets=[0, 2, 2, 2], targets=[1, 2], weights=[1, 1],
...                    state_of=lambda node: ("s", node), node_of=lambda state: state[1])
>>> graph.num_states, graph.states[2], graph.index[("s", 1)]
(3, ('s', 2), 1)
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

from exactdice.markov.graph import StateGraph

__all__ = ["ArrayGraph"]


class _States(Sequence):
    """``graph.states``: node id -> state, decoded when asked."""

    def __init__(self, count, state_of):
        self._count, self._state_of = count, state_of

    def __len__(self):
        return self._count

    def __getitem__(self, node):
        if isinstance(node, slice):
            return [self._state_of(i) for i in range(*node.indices(self._count))]
        if node < 0:
            node += self._count
        if not 0 <= node < self._count:
            raise IndexError(node)
        return self._state_of(node)


class _Index(Mapping):
    """``graph.index``: state -> node id, encoded when asked."""

    def __init__(self, count, node_of):
        self._count, self._node_of = count, node_of

    def __getitem__(self, state):
        node = self._node_of(state)
        if node is None or node < 0:
            raise KeyError(state)
        return node

    def __iter__(self):
        raise TypeError("the states of an array graph are not listed; iterate over range(graph.num_states)")

    def __len__(self):
        return self._count


class _ByEdge(Mapping):
    """A mapping edge -> value over the few edges that have one (decision edges), sorted."""

    def __init__(self, edges, values):
        self._edges = edges
        self._values = values
        self._where = None

    def _lookup(self):
        if self._where is None:
            self._where = dict(zip(self._edges, range(len(self._edges))))
        return self._where

    def __getitem__(self, edge):
        place = self._lookup().get(edge)
        if place is None:
            raise KeyError(edge)
        value = self._values(place)
        if value is None:
            raise KeyError(edge)
        return value

    def __iter__(self):
        return (edge for place, edge in enumerate(self._edges) if self._values(place) is not None)

    def __len__(self):
        return sum(1 for _ in self)


class _RewardMass(Sequence):
    """``chance_reward_mass``: per node a tuple of reward masses, or None."""

    def __init__(self, has_mass, mass, width, big):
        self._has, self._mass, self._width, self._big = has_mass, mass, width, big

    def __len__(self):
        return len(self._has)

    def __getitem__(self, node):
        if not self._has[node]:
            return None
        big = self._big.get(node)
        if big is not None:
            return big
        return tuple(self._mass[node * self._width:(node + 1) * self._width])


class ArrayGraph(StateGraph):
    """A `StateGraph` whose arrays were made by a compiled explorer.

    Parameters: the model's ``outcomes`` and ``reward_names``; ``kind`` (bytes, one per
    node), ``data``, ``offsets``, ``targets``, ``weights`` (sequences of ints, as in
    `StateGraph`); ``state_of(node)`` and ``node_of(state)`` (None or -1 when it is not
    a node) name states; optional reward masses (``has_mass``, a flat ``mass`` of
    ``len(reward_names)`` ints a node, ``big_mass`` for those past 64 bits) and decision
    edges (``decision_edges`` sorted, ``action_name(place)``, ``action_rewards(place)``).
    ``bookkeeping`` counts nodes that are no state of the game (ends, draws).
    """

    def __init__(self, outcomes, reward_names, *, kind, data, offsets, targets, weights, state_of, node_of,
                 has_mass=None, mass=(), big_mass=None, decision_edges=(), action_name=None,
                 action_rewards=None, bookkeeping=0, provenance=None):
        super().__init__(outcomes, reward_names)
        self.kind = bytearray(kind)
        count = len(self.kind)
        self.data = data
        self.offsets = offsets if isinstance(offsets, array) else array("q", offsets)
        self.targets = targets if isinstance(targets, array) else array("q", targets)
        self.weights = weights
        self.states = _States(count, state_of)
        self.index = _Index(count, node_of)
        width = len(self.reward_names)
        self.chance_reward_mass = _RewardMass(has_mass if has_mass is not None else bytes(count), mass, width,
                                              big_mass or {})
        no_value = (lambda place: None)
        self.action_names = _ByEdge(decision_edges, action_name or no_value)
        self.action_rewards = _ByEdge(decision_edges, action_rewards or no_value)
        self.bookkeeping = bookkeeping
        #: where the arrays came from (the compiled walk, say), for reports
        self.provenance = provenance

    @property
    def num_states(self) -> int:
        return len(self.kind)

    @property
    def num_transitions(self) -> int:
        return len(self.targets)
