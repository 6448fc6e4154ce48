"""Expand a model's states in worker processes while `explore` interns and stores them.

Exploring a large graph is mostly the model's own ``expand`` (for Karbon, walking the
rules through each roll outcome); interning successors and storing edges is the rest.
`ExpansionPool` forks worker processes (`exactdice.processes.ForkedWorkers`) that expand
the states the explorer hands them, merge each chance node's branches by successor and
send back the sums, so expanding and merging run on the machine's other cores. The
explorer still takes every expansion in node-id order and interns successors where one
process would have, so the graph is the one a single process builds, array for array.

What crosses the process boundary is kept small: a worker numbers the successors it
meets itself and sends each one's state once; a chance node travels as its successors'
numbers, their summed weights and its reward mass.
"""

from __future__ import annotations

from exactdice.markov.model import Chance, KeyedChance, keyed_expander
from exactdice.processes import ForkedWorkers

__all__ = ["ExpansionPool"]

# states handed to a worker in one message, at most; a message per state would cost more
# in pickling and waking than small Karbon expansions take
_BATCH_STATES = 32


class ExpansionPool:
    """``workers`` forked processes expanding states of ``model`` for the explorer.

    `submit` hands a state (by node id) to the worker its shard key (the model's
    ``shard_key(state)`` where it has one) names, so states that share the model's
    caches meet in one process; `add_next` records a node id's expansion in the
    explorer, waiting for it. `close` ends the workers.
    """

    def __init__(self, model, workers: int, reward_width: int):
        shard_key = getattr(model, "shard_key", None)
        self._shard_key = shard_key if shard_key is not None else (lambda state: state)
        self._count = workers
        self._pending: list[list] = [[] for _ in range(workers)]
        self._in_flight = [0] * workers  # states sent to each worker and not yet back
        # per worker: its successors by its own number, and their node ids once interned
        self._states: list[list] = [[] for _ in range(workers)]
        self._node_ids: list[list] = [[] for _ in range(workers)]
        self._ready: dict = {}
        self._workers = ForkedWorkers(workers, _BatchExpander(model, reward_width), "explore")

    def submit(self, node: int, state) -> None:
        """Queue ``state`` (node id ``node``) for expansion; sent in batches."""
        worker = hash(self._shard_key(state)) % self._count
        pending = self._pending[worker]
        pending.append((node, state))
        # a full batch goes at once; so does any while the worker has little left to do
        if len(pending) >= _BATCH_STATES or self._in_flight[worker] < _BATCH_STATES:
            self._send(worker)

    def _send(self, worker: int) -> None:
        pending = self._pending[worker]
        self._workers.send(worker, pending)
        self._in_flight[worker] += len(pending)
        self._pending[worker] = []

    def add_next(self, explorer, node: int) -> None:
        """Record the expansion of ``node`` (the explorer's next) once a worker sent it."""
        ready = self._ready
        if node not in ready:
            for worker, pending in enumerate(self._pending):  # it may wait for a full batch
                if pending:
                    self._send(worker)
        while node not in ready:
            worker, (new_states, expansions) = self._workers.receive()
            self._states[worker].extend(new_states)
            self._node_ids[worker].extend([None] * len(new_states))
            self._in_flight[worker] -= len(expansions)
            for expanded_node, merged, payload in expansions:
                ready[expanded_node] = (worker, merged, payload)
        worker, merged, payload = ready.pop(node)
        if merged:
            numbers, weights, mass = payload
            explorer.add_merged(numbers, weights, mass, self._states[worker], self._node_ids[worker])
        else:
            explorer.add(node, payload)

    def close(self) -> None:
        """Stop the workers."""
        self._workers.close()


class _BatchExpander:
    """A worker's side: expands a batch of ``(node id, state)`` into ``(new successors'
    states, [(node id, merged?, expansion), ...])``, a chance node merged by successor
    (`exactdice.markov.graph.BranchMerger` under the worker's own numbering), any other
    node as the model gave it. Made before the fork; each worker mutates its own copy."""

    def __init__(self, model, reward_width: int):
        from exactdice.markov.graph import BranchMerger

        self.expand = keyed_expander(model)
        self.numbers: dict = {}  # successor -> this worker's number for it
        self.new_states: list = []  # successors numbered since the last batch
        self.merger = BranchMerger(reward_width, self._number_of)

    def _number_of(self, state) -> int:
        number = self.numbers.get(state)
        if number is None:
            number = self.numbers[state] = len(self.numbers)
            self.new_states.append(state)
        return number

    def __call__(self, batch):
        expansions = []
        for node, state in batch:
            expanded = self.expand(state)
            if isinstance(expanded, (Chance, KeyedChance)):
                merged, mass = self.merger.merge(expanded, state)
                expansions.append((node, True, (tuple(merged), list(merged.values()), mass)))
            else:
                expansions.append((node, False, expanded))
        new_states, self.new_states = self.new_states, []
        return new_states, expansions
