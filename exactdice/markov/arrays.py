"""A `StateGraph` over flat arrays made elsewhere (a compiled explorer), with its states
named on demand; and the CSR arrays of any `StateGraph` as numpy arrays.

A compiled explorer (`exactdice.karbon.compiled`) keeps its states as packed integers
and its edges in CSR arrays; `ArrayGraph` hands those arrays to the solvers as they are
(numpy views, no copy) and turns a node id into the model's own state (or back) only
where a caller asks for it (a strategy's keys, a per-state answer). The exact solvers read
the same arrays through memoryviews (a list only where a number passes 64 bits): the
edges are held once. Nothing here knows which game made the arrays.

>>> import numpy
>>> graph = ArrayGraph(("win", "loss"), (), kind=numpy.array([1, 0, 0], numpy.uint8),
...                    data=numpy.array([2, 0, 1]), offsets=numpy.array([0, 2, 2, 2]),
...                    targets=numpy.array([1, 2], numpy.int32), weights=numpy.array([1, 1]),
...                    state_of=lambda node: ("s", node), node_of=lambda state: state[1])
>>> graph.num_states, graph.states[2], graph.index[("s", 1)], list(graph.targets)
(3, ('s', 2), 1, [1, 2])
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy

from exactdice.markov.graph import StateGraph

__all__ = ["ArrayGraph", "Csr", "csr_arrays", "loops_of"]


@dataclass
class Csr:
    """A graph's arrays for compiled solvers: ``kind`` (uint8), ``data``, ``offsets``,
    ``weights`` (int64) and ``targets`` (int32); ``data`` or ``weights`` hold -1 where the
    number passes 64 bits, given exactly in ``big`` (node -> (total, [weights])), and
    ``mass`` (nodes x reward counters, int64, -1 likewise, ``big_mass`` node -> masses).
    """

    kind: numpy.ndarray
    data: numpy.ndarray
    offsets: numpy.ndarray
    targets: numpy.ndarray
    weights: numpy.ndarray
    mass: numpy.ndarray
    big: dict = field(default_factory=dict)
    big_mass: dict = field(default_factory=dict)


def _int64(values) -> tuple[numpy.ndarray, list]:
    """Values as int64, with -1 for those past 64 bits (listed by position)."""
    if isinstance(values, numpy.ndarray):
        return values.astype(numpy.int64, copy=False), []
    if isinstance(values, array) and values.typecode == "q":
        return numpy.frombuffer(values, dtype=numpy.int64) if len(values) else numpy.zeros(0, numpy.int64), []
    big = [place for place, value in enumerate(values) if not -(2**63) <= value < 2**63]
    past = set(big)
    result = numpy.array(
        [0 if place in past else value for place, value in enumerate(values)] if big else values, dtype=numpy.int64
    )
    result[big] = -1
    return result, big


def csr_arrays(graph: StateGraph, *, masses: bool = True) -> Csr:
    """The graph's arrays as `Csr` (an `ArrayGraph`'s own, without a copy); without
    ``masses``, a graph of lists gets no reward columns (``mass`` of width 0), for the
    passes that read none (its masses are the one part made node by node).

    >>> from exactdice.markov.graph import explore
    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> graph = explore(GamblersRuin(goal=3, start=1, up=1, down=1))
    >>> csr_arrays(graph).targets.dtype, csr_arrays(graph).mass.shape, csr_arrays(graph, masses=False).mass.shape
    (dtype('int32'), (4, 1), (4, 0))
    """
    own = getattr(graph, "csr", None)
    if isinstance(own, Csr):  # an ArrayGraph: its own arrays
        return own
    count = graph.num_states
    kind = numpy.frombuffer(bytes(graph.kind), dtype=numpy.uint8)
    data, big_data = _int64(graph.data)
    offsets, _ = _int64(graph.offsets)
    weights, big_weights = _int64(graph.weights)
    targets = numpy.asarray(graph.targets, dtype=numpy.int64).astype(numpy.int32)
    width = len(graph.reward_names) if masses else 0
    mass = numpy.zeros((count, width), dtype=numpy.int64)
    big_mass = {}
    for node in range(count if masses else 0):
        amounts = graph.chance_reward_mass[node]
        if amounts:
            if all(-(2**63) <= amount < 2**63 for amount in amounts):
                mass[node] = amounts
            else:
                mass[node] = -1
                big_mass[node] = tuple(amounts)
    big = {}
    starts = (numpy.searchsorted(offsets, big_weights, side="right") - 1).tolist() if big_weights else []
    for node in set(big_data) | {int(node) for node in starts}:
        low, high = offsets[node], offsets[node + 1]
        big[node] = (graph.data[node], [graph.weights[edge] for edge in range(low, high)])
    return Csr(kind, data, offsets, targets, weights, mass, big, big_mass)


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
        return self._state_of(int(node))


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


_UNKNOWN = object()


class _ByEdge(Mapping):
    """A mapping edge -> value over the few edges that have one (decision edges). A value
    is made once and kept while the graph lives: the solvers ask for the same edges again
    (at most one entry a decision edge)."""

    def __init__(self, edges, values):
        self._edges = edges
        self._values = values
        self._where = None
        self._known: dict = {}

    def _lookup(self):
        if self._where is None:
            self._where = dict(zip(self._edges.tolist(), range(len(self._edges))))
        return self._where

    def __getitem__(self, edge):
        value = self.get(edge)
        if value is None:
            raise KeyError(edge)
        return value

    def get(self, edge, default=None):
        place = self._lookup().get(edge)
        if place is None:
            return default
        value = self._known.get(place, _UNKNOWN)
        if value is _UNKNOWN:
            value = self._known[place] = self._values(place)
        return default if value is None else value

    def __iter__(self):
        return (edge for place, edge in enumerate(self._edges.tolist()) if self._values(place) is not None)

    def __len__(self):
        return sum(1 for _ in self)


class _RewardMass(Sequence):
    """``chance_reward_mass``: per node a tuple of reward masses, or None."""

    def __init__(self, has_mass, mass, big):
        self._has, self._mass, self._big = has_mass, mass, big

    def __len__(self):
        return len(self._has)

    def __getitem__(self, node):
        if not self._has[node]:
            return None
        big = self._big.get(node)
        if big is not None:
            return big
        return tuple(self._mass[node].tolist())


def _no_value(place):
    return None


class _Held:
    """An array's memory as numpy sees it, with what owns that memory (a compiled walk)
    held alive: an array made from this, and any view or memoryview of it, keeps the
    owner alive as long as it lives."""

    def __init__(self, array, owner):
        self.__array_interface__ = array.__array_interface__
        self._array, self._owner = array, owner


def _held(array, owner):
    return numpy.asarray(_Held(array, owner)) if isinstance(array, numpy.ndarray) else array


class ArrayGraph(StateGraph):
    """A `StateGraph` whose arrays were made by a compiled explorer.

    Parameters
    ----------
    outcomes, reward_names : tuple of str
        As the model lists them.
    kind, data, offsets, targets, weights : numpy.ndarray
        The CSR arrays (`Csr`): uint8, int64, int64, int32, int64; -1 marks a number past
        64 bits, given in ``big``.
    state_of : callable
        Node id -> the model's state.
    node_of : callable
        The model's state -> node id (None or -1 when it is no node).
    mass : numpy.ndarray, optional
        Reward mass per node and counter (int64; -1: in ``big_mass``); ``has_mass`` says
        which nodes have one.
    decision_edges : numpy.ndarray, optional
        The decision edges, sorted; ``action_name(place)`` and ``action_rewards(place)``
        give each one's name and rewards (None: none).
    bookkeeping : int
        Nodes that are no state of the game (ends, draws), for reports.
    owner : object
        What holds the memory the arrays view: kept alive with the graph, and with any
        array or memoryview taken from it.
    """

    def __init__(
        self,
        outcomes,
        reward_names,
        *,
        kind,
        data,
        offsets,
        targets,
        weights,
        state_of: Callable,
        node_of: Callable,
        mass=None,
        has_mass=None,
        big=None,
        big_mass=None,
        decision_edges=None,
        action_name=None,
        action_rewards=None,
        bookkeeping: int = 0,
        owner=None,
        provenance: str | None = None,
    ):
        self.outcomes = tuple(outcomes)
        self.reward_names = tuple(reward_names)
        count = len(kind)
        width = len(self.reward_names)
        if owner is not None:
            kind, data, offsets, targets, weights, mass = (
                _held(array, owner) for array in (kind, data, offsets, targets, weights, mass)
            )
        if mass is None:
            mass = numpy.zeros((count, width), dtype=numpy.int64)
        self.csr = Csr(
            numpy.asarray(kind, dtype=numpy.uint8),
            numpy.asarray(data, dtype=numpy.int64),
            numpy.asarray(offsets, dtype=numpy.int64),
            numpy.asarray(targets, dtype=numpy.int32),
            numpy.asarray(weights, dtype=numpy.int64),
            mass.reshape(count, width),
            big or {},
            big_mass or {},
        )
        self.kind = bytearray(self.csr.kind.tobytes())
        # read-only views where StateGraph keeps a list and a dict (the explorer appends)
        self.states = _States(count, state_of)  # type: ignore[assignment]
        self.index = _Index(count, node_of)  # type: ignore[assignment]
        has_mass = numpy.zeros(count, bool) if has_mass is None else has_mass
        self.chance_reward_mass = _RewardMass(has_mass, self.csr.mass, self.csr.big_mass)  # type: ignore[assignment]
        edges = numpy.zeros(0, numpy.int64) if decision_edges is None else numpy.asarray(decision_edges)
        self.action_names = _ByEdge(edges, action_name or _no_value)  # type: ignore[assignment]
        self.action_rewards = _ByEdge(edges, action_rewards or _no_value)  # type: ignore[assignment]
        self.initial = 0
        self.bookkeeping = bookkeeping
        self.owner = owner
        #: where the arrays came from (the compiled walk, say), for reports
        self.provenance = provenance
        self._lists: dict = {}

    def _listed(self, name):
        """The exact solvers' form of an array (made once): a memoryview of the array
        itself (no copy; its items read as Python ints), or a list where some number
        passes 64 bits."""
        made = self._lists.get(name)
        if made is None:
            values = getattr(self.csr, name)
            big = self.csr.big if name in ("data", "weights") else None
            if not big:
                made = memoryview(values).toreadonly()
            elif name == "data":
                made = values.tolist()
                for node, (total, _) in big.items():
                    made[node] = total
            else:
                made = values.tolist()
                for node, (_, node_weights) in big.items():
                    made[self.csr.offsets[node] : self.csr.offsets[node + 1]] = node_weights
            self._lists[name] = made
        return made

    # made on first use, then plain attributes (the exact solvers read them per node)
    data = cached_property(lambda self: self._listed("data"))
    offsets = cached_property(lambda self: self._listed("offsets"))
    targets = cached_property(lambda self: self._listed("targets"))
    weights = cached_property(lambda self: self._listed("weights"))

    def strongly_connected_components(self) -> list[list[int]]:
        """`StateGraph.strongly_connected_components`, compiled where it is built."""
        try:
            from exactdice.markov._interval import strongly_connected
        except ImportError:
            return super().strongly_connected_components()
        return strongly_connected(self.csr.offsets, self.csr.targets)

    @property
    def num_states(self) -> int:
        return len(self.csr.kind)

    @property
    def num_transitions(self) -> int:
        return len(self.csr.targets)


def loops_of(offsets, targets, components) -> bytearray:
    """Per component, 1 where it is a loop (more than one state, or a state with an edge
    to itself), else 0: `exactdice.markov._exact_pass.cyclic_components` in numpy, for an
    install without the extension.

    >>> loops_of(numpy.array([0, 1, 2, 3]), numpy.array([1, 1, 0]), [[0], [1], [2]])
    bytearray(b'\\x00\\x01\\x00')
    """
    return bytearray(
        len(component) > 1 or bool((targets[offsets[component[0]] : offsets[component[0] + 1]] == component[0]).any())
        for component in components
    )
