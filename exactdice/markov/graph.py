"""Explore a model's reachable states once into a compact integer graph.

States are interned to ids 0..n-1 in breadth-first order (the initial state is 0);
successors, weights and rewards live in flat arrays indexed by edge (CSR layout), so
solving never calls the model again.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> graph = explore(GamblersRuin(goal=3, start=1, up=1, down=1))
>>> graph.num_states, graph.num_transitions
(4, 4)
"""

from __future__ import annotations

import gc
import sys
import time
from array import array
from contextlib import contextmanager

from exactdice.errors import InternalError, TooLargeError
from exactdice.limits import check_memory
from exactdice.markov.model import Chance, Decision, KeyedChance, KeySlots, Model, Terminal, keyed_expander
from exactdice.processes import solve_workers

__all__ = ["StateGraph", "explore", "BranchMerger", "paused_gc", "TERMINAL", "CHANCE", "DECISION", "MAX", "MIN"]

TERMINAL, CHANCE, DECISION = 0, 1, 2
MAX, MIN = 1, -1
_PROGRESS_MIN_STATES = 20_000
_LARGEST_ARRAY_WEIGHT = 2**63 - 1
# exploring starts worker processes only after this long in one process (small graphs,
# most of them, never pay for a fork), and only if a state has cost this much on average
# to expand and store: below it (optimal play's small expansions, about 27 us) what
# crosses between the processes costs more than the expansions they share out
PARALLEL_AFTER_SECONDS = 0.05
PARALLEL_MIN_SECONDS_PER_STATE = 50e-6
# ... and only with this many states found and not yet expanded, to hand out at once
_PARALLEL_MIN_FRONTIER = 64


class StateGraph:
    """Reachable states of a model as flat arrays (what `explore` returns and `solve` reads).

    Per node: ``kind`` (TERMINAL/CHANCE/DECISION), ``data`` (outcome index for a
    terminal, total weight for a chance node, MAX/MIN for a decision node) and
    ``chance_reward_mass`` (per chance node: sum of weight*reward per counter, or None).
    Per edge (node i owns ``offsets[i]:offsets[i+1]``): ``targets``, ``weights``
    (chance; duplicate successors merged), ``action_names`` and ``action_rewards``
    (decision edges). ``weights`` is a signed 64-bit ``array`` (8 bytes an edge, not
    the ~40 of a list of ints) until a weight does not fit; then it becomes a list.
    ``states[i]`` is node i's state and ``initial`` the initial state's node.

    Parameters
    ----------
    outcomes : tuple of str
        The model's outcomes.
    reward_names : tuple of str
        The model's reward counters.
    """

    def __init__(self, outcomes, reward_names):
        self.outcomes = tuple(outcomes)
        self.reward_names = tuple(reward_names)
        self.states: list = []
        self.index: dict = {}
        self.kind = bytearray()
        self.data: list = []
        self.offsets = array("q", [0])
        self.targets = array("q")
        self.weights: array | list = array("q")
        self.chance_reward_mass: list = []
        self.action_names: dict[int, str] = {}
        self.action_rewards: dict[int, tuple] = {}
        self.initial = 0

    @property
    def num_states(self) -> int:
        return len(self.states)

    @property
    def num_transitions(self) -> int:
        return len(self.targets)

    def successors(self, node: int):
        """Successor ids of ``node`` (in stored order)."""
        return self.targets[self.offsets[node] : self.offsets[node + 1]]

    def to_networkx(self):
        """The graph as a ``networkx.DiGraph`` (edge attribute ``weight``; decision
        edges carry ``action``), for analysis and drawing.

        >>> from exactdice.markov.synthetic import GamblersRuin
        >>> explore(GamblersRuin(goal=3, start=1, up=1, down=1)).to_networkx().number_of_edges()
        4
        """
        import networkx as nx

        digraph = nx.DiGraph()
        digraph.add_nodes_from(range(self.num_states))
        offsets, targets, weights = self.offsets, self.targets, self.weights
        for node in range(self.num_states):
            for edge in range(offsets[node], offsets[node + 1]):
                if self.kind[node] == DECISION:
                    digraph.add_edge(node, targets[edge], action=self.action_names[edge])
                else:
                    digraph.add_edge(node, targets[edge], weight=weights[edge])
        return digraph

    def strongly_connected_components(self) -> list[list[int]]:
        """Strongly connected components, sinks first (reverse topological order),
        by an iterative Tarjan over the flat arrays.

        >>> from exactdice.markov.synthetic import GamblersRuin
        >>> sorted(map(sorted, explore(GamblersRuin(3, 1, 1, 1)).strongly_connected_components()))
        [[0, 1], [2], [3]]
        """
        offsets, targets = self.offsets, self.targets
        count = self.num_states
        low = [0] * count
        order = [-1] * count
        on_stack = bytearray(count)
        stack: list[int] = []
        components: list[list[int]] = []
        counter = 0
        for root in range(count):
            if order[root] != -1:
                continue
            order[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack[root] = 1
            work = [(root, offsets[root])]
            while work:
                node, edge = work[-1]
                end = offsets[node + 1]
                descended = False
                while edge < end:
                    child = targets[edge]
                    edge += 1
                    if order[child] == -1:
                        work[-1] = (node, edge)
                        order[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack[child] = 1
                        work.append((child, offsets[child]))
                        descended = True
                        break
                    if on_stack[child] and order[child] < low[node]:
                        low[node] = order[child]
                if descended:
                    continue
                work.pop()
                if work:
                    parent = work[-1][0]
                    if low[node] < low[parent]:
                        low[parent] = low[node]
                if low[node] == order[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack[member] = 0
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
        return components


def _progress_bar(progress, total_hint):
    if progress is False:
        return None
    if progress is None and not (sys.stderr.isatty() and total_hint >= _PROGRESS_MIN_STATES):
        return None
    from tqdm import tqdm

    # the bar counts what the limit counts (states found); the limit is no estimate of the
    # work, so no percentage and no time left (an ETA against --max-states read 49:42 for a
    # job under a minute)
    return tqdm(
        total=total_hint,
        unit="states",
        desc="exploring",
        leave=False,
        bar_format="{desc}: {n_fmt} states (limit {total_fmt}) [{elapsed}, {rate_fmt}]",
    )


@contextmanager
def paused_gc():
    """Pause Python's cycle collector: exploring and solving allocate millions of
    tuples that hold no reference cycles, and the collector's scans of them cost about
    a quarter of the time (measured on Karbon graphs). Reference counting still frees
    everything acyclic; cycles a model's ``expand`` makes wait for the collector, which
    resumes afterwards if it was on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def explore(
    model: Model, *, max_states: int = 2_000_000, progress: bool | None = None, workers: int | None = None
) -> StateGraph:
    """Visit every state reachable from ``model.initial_state()`` once, breadth first.

    The graph is the same, array for array, with any number of workers.
    A model may explore itself in compiled code: ``model.explore_compiled(max_states=...,
    progress=...)`` returning a `StateGraph` (an `exactdice.markov.arrays.ArrayGraph`), or
    None to be explored here.

    Parameters
    ----------
    model : Model
        The game.
    max_states : int, default 2,000,000
        Stop with `TooLargeError` past this many states.
    progress : bool, optional
        A progress bar on stderr: True always, False never, None (the default) when
        stderr is a terminal and the state limit is large.
    workers : int, optional
        Processes that expand states beside this one (`exactdice.markov.expansion_pool`),
        started only once exploring has taken `PARALLEL_AFTER_SECONDS` at
        `PARALLEL_MIN_SECONDS_PER_STATE` or more a state; None: one per core where they can
        be forked, or ``$EXACTDICE_SOLVE_WORKERS`` (`exactdice.processes.solve_workers`).

    Returns
    -------
    StateGraph
        Every reachable state, its node kind and its edges.

    Raises
    ------
    TooLargeError
        Past *max_states* states (the message says how to raise the limit).
    ValueError
        When *workers* is negative.
    InternalError
        When the model breaks the protocol (a weight that is not a positive int, say).

    Examples
    --------
    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> graph = explore(GamblersRuin(goal=4, start=2, up=1, down=1))
    >>> graph.states[graph.initial], graph.num_states
    (2, 5)
    """
    workers = solve_workers() if workers is None else workers
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    compiled = getattr(model, "explore_compiled", None)
    if compiled is not None:
        graph = compiled(max_states=max_states, progress=progress)
        if graph is not None:
            return graph
    with paused_gc():
        return _explore(model, max_states, progress, workers)


def _explore(model, max_states, progress, workers) -> StateGraph:
    from exactdice.markov.expansion_pool import ExpansionPool

    explorer = _Explorer(model, max_states)
    graph = explorer.graph
    states = graph.states
    explorer.intern(model.initial_state())
    bar = _progress_bar(progress, max_states)
    expand = keyed_expander(model)
    pool = None
    started = time.perf_counter()
    pool_from = started + PARALLEL_AFTER_SECONDS if workers else None
    current = 0
    try:
        while current < len(states):
            if pool is None:
                explorer.add(current, expand(states[current]))
                if (
                    pool_from is not None
                    and not current & 63
                    and time.perf_counter() >= pool_from
                    and len(states) - current > _PARALLEL_MIN_FRONTIER
                    and time.perf_counter() - started >= (current + 1) * PARALLEL_MIN_SECONDS_PER_STATE
                ):
                    try:
                        pool, handed_over = ExpansionPool(model, workers, explorer.merger.reward_width), current + 1
                    except OSError:  # the machine would not fork: go on in this process
                        pool_from = None
            else:
                while handed_over < len(states):
                    pool.submit(handed_over, states[handed_over])
                    handed_over += 1
                pool.add_next(explorer, current)
            current += 1
            if not current & 7:
                check_memory("while exploring", states=current)
            if bar is not None and current % 1000 == 0:
                bar.update(len(states) - bar.n)
        if bar is not None:
            bar.update(len(states) - bar.n)
    finally:  # closed before an error (the state limit, memory) is printed, not on its line
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.close()
    return graph


class _Explorer:
    """Builds a `StateGraph` one expanded node at a time: interns successors and
    checks what the model returned (one method per node kind)."""

    def __init__(self, model, max_states):
        outcomes = tuple(model.outcomes)
        reward_names = tuple(getattr(model, "reward_names", ()) or ())
        self.graph = StateGraph(outcomes, reward_names)
        self.outcome_index = {name: i for i, name in enumerate(outcomes)}
        self.max_states = max_states
        self.merger = BranchMerger(len(reward_names), self.intern)

    def intern(self, state) -> int:
        """The id of ``state``, new ids in order of first sight."""
        graph = self.graph
        node = graph.index.get(state)
        if node is None:
            node = len(graph.states)
            if node >= self.max_states:
                raise TooLargeError(
                    "max_states",
                    f"reached {node:,} states (limit {self.max_states:,}) while exploring; "
                    f"raise the limit with `max_states`",
                )
            graph.index[state] = node
            graph.states.append(state)
        return node

    def add(self, current: int, node) -> None:
        """Record the expansion of state ``current`` (the next one in order)."""
        graph = self.graph
        if isinstance(node, (Chance, KeyedChance)):
            merged, mass = self.merger.merge(node, graph.states[current])
            self._store_chance(merged.keys(), list(merged.values()), mass)
        elif isinstance(node, Terminal):
            if node.outcome not in self.outcome_index:
                raise InternalError(f"unknown outcome {node.outcome!r}; the model lists {graph.outcomes}")
            graph.kind.append(TERMINAL)
            graph.data.append(self.outcome_index[node.outcome])
            graph.chance_reward_mass.append(None)
        elif isinstance(node, Decision):
            self._add_decision(current, node)
        else:
            raise InternalError(f"expand() must return Terminal, Chance or Decision, got {type(node).__name__}")
        graph.offsets.append(len(graph.targets))

    def add_merged(self, numbers, weights: list, mass, states: list, node_ids: list) -> None:
        """Record the next expansion as a worker merged it (`BranchMerger` with its own
        numbering): successors by the worker's numbers, ``states[number]`` the state and
        ``node_ids[number]`` its node id once known (filled in here, in the order a
        single process would have interned them)."""
        targets = [node_ids[number] for number in numbers]
        if None in targets:  # successors seen for the first time: interned in order
            for place, number in enumerate(numbers):
                if targets[place] is None:
                    targets[place] = node_ids[number] = self.intern(states[number])
        self._store_chance(targets, weights, mass)
        self.graph.offsets.append(len(self.graph.targets))

    def _store_chance(self, targets, weights: list, mass) -> None:
        graph = self.graph
        graph.kind.append(CHANCE)
        graph.data.append(sum(weights))
        graph.chance_reward_mass.append(mass)
        graph.targets.extend(targets)
        if type(graph.weights) is array and max(weights) > _LARGEST_ARRAY_WEIGHT:
            graph.weights = list(graph.weights)
        graph.weights.extend(weights)

    def _add_decision(self, current, node) -> None:
        graph = self.graph
        if node.side not in ("max", "min"):
            raise InternalError(f"decision side must be 'max' or 'min', got {node.side!r}")
        if not node.actions:
            raise InternalError(f"decision of state {graph.states[current]!r} has no actions")
        graph.kind.append(DECISION)
        graph.data.append(MAX if node.side == "max" else MIN)
        graph.chance_reward_mass.append(None)
        for name, successor, rewards in node.actions:
            edge = len(graph.targets)
            graph.targets.append(self.intern(successor))
            graph.weights.append(1)
            graph.action_names[edge] = name
            self.merger.check_rewards(rewards, f"action {name!r}")
            if rewards is not None and any(rewards):
                graph.action_rewards[edge] = tuple(rewards)


class BranchMerger:
    """Sums a chance node's branches by successor, with its reward mass: what `explore`
    stores for it. ``number_of(state)`` names a successor by an int (the explorer's node
    id, interning it; an exploring worker's own numbering). Checks what the model gave.

    >>> numbers = {}
    >>> merger = BranchMerger(1, lambda state: numbers.setdefault(state, len(numbers)))
    >>> merger.merge(Chance(((1, "a", (2,)), (2, "b", None), (3, "a", None))), "start")
    ({0: 4, 1: 2}, (2,))
    """

    def __init__(self, reward_width: int, number_of):
        self.reward_width = reward_width
        self.number_of = number_of
        # by `KeyedChance` key: (number, rewards) or None, for the one table the model keeps
        self.keyed_slots = KeySlots()
        self._distinct_rewards: list = [None]  # by `_rewards_number`
        self._rewards_numbers: dict = {}

    def merge(self, node, state) -> tuple[dict, tuple | None]:
        """``({successor number: summed weight}, reward mass)`` of a `Chance` or
        `KeyedChance` expanded from ``state`` (named in errors); successors in the order
        they first appear."""
        if type(node) is KeyedChance:
            merged, by_rewards = self._merge_keyed(node)
        else:
            merged, by_rewards = self._merge(node.branches)
        if not merged:
            raise InternalError(f"chance node of state {state!r} has no branches")
        return merged, self._reward_mass(by_rewards)

    def _merge(self, branches) -> tuple[dict, dict]:
        number_of = self.number_of
        merged: dict[int, int] = {}
        merged_get = merged.get
        # weight by rewards tuple: the reward mass is summed once per distinct tuple
        by_rewards: dict = {}
        for weight, successor, rewards in branches:
            if type(weight) is not int and not isinstance(weight, int) or weight <= 0:
                raise InternalError(f"branch weights must be positive ints, got {weight!r}")
            target = number_of(successor)
            merged[target] = merged_get(target, 0) + weight
            if rewards is not None:
                by_rewards[rewards] = by_rewards.get(rewards, 0) + weight
        return merged, by_rewards

    def _merge_keyed(self, node) -> tuple[dict, dict]:
        """`_merge` for a `KeyedChance`: a key's successor is numbered (its state hashed)
        the first time the key is seen; later its number is a list look-up."""
        table = node.table
        known = self.keyed_slots.for_table(table)
        number_of = self.number_of
        merged: dict[int, int] = {}
        merged_get = merged.get
        by_number: dict[int, int] = {}  # weight by `_rewards_number`
        by_number_get = by_number.get
        for weight, key in node.branches:
            if type(weight) is not int and not isinstance(weight, int) or weight <= 0:
                raise InternalError(f"branch weights must be positive ints, got {weight!r}")
            target_rewards = known[key]
            if target_rewards is None:
                successor, rewards = table[key]
                target_rewards = known[key] = (number_of(successor), self._rewards_number(rewards))
            target, rewards = target_rewards
            merged[target] = merged_get(target, 0) + weight
            by_number[rewards] = by_number_get(rewards, 0) + weight
        distinct = self._distinct_rewards
        return merged, {distinct[number]: weight for number, weight in by_number.items() if number}

    def _rewards_number(self, rewards) -> int:
        """A small int naming a rewards tuple (0: none), so a keyed branch's rewards are
        summed by an int rather than by hashing the tuple each time."""
        if rewards is None:
            return 0
        number = self._rewards_numbers.get(rewards)
        if number is None:
            number = self._rewards_numbers[rewards] = len(self._distinct_rewards)
            self._distinct_rewards.append(rewards)
        return number

    def check_rewards(self, rewards, where: str) -> None:
        """Raise `InternalError` unless ``rewards`` is None or one value per counter."""
        if rewards is not None and len(rewards) != self.reward_width:
            raise InternalError(f"{where}: expected {self.reward_width} reward values, got {len(rewards)}")

    def _reward_mass(self, by_rewards: dict):
        """Sum of weight*reward per counter (None when every reward is zero)."""
        mass = None
        for rewards, weight in by_rewards.items():
            self.check_rewards(rewards, "chance branch")
            if any(rewards):
                if mass is None:
                    mass = [0] * self.reward_width
                for slot, amount in enumerate(rewards):
                    mass[slot] += weight * amount
        return tuple(mass) if mass is not None else None
