"""Exact absorption by a reward counter's value: P(play ends in outcome o with total k).

For a chain (a model without decisions, or a game with a strategy fixed), the solver
gives each outcome's probability and a reward's expected total. How the two are joined
(how likely the contest has ended by round n, and how) needs the mass that ends at each
value of the reward's total. `absorption_by_reward` walks the explored graph in *layers*,
one per value of the total: the layer-k mass flows along branches that earn nothing (a
loop of those is one exact linear solve), a branch that earns r moves its mass to layer
k + r, and a terminal state absorbs it as (outcome, k). Nothing is truncated or rounded:
each layer is exact, and what has not ended by the last layer asked for is the exact
tail, ``1 - sum``.

It never builds the product of the graph and the counter (`exactdice.markov.reward_counts`
does, for a capped total, by solving that product again): the graph is explored once,
with each rewarded branch passing through a marker state so that merging branches by
successor keeps what each one earns.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> layers = absorption_by_reward(GamblersRuin(goal=4, start=2, up=1, down=1), "bets", up_to=4)
>>> [str(p) for p in layers.ended_by()], str(layers.tail)
(['0', '0', '1/2', '1/2', '3/4'], '1/4')
>>> {outcome: str(p) for outcome, p in layers.by_total[2].items()}
{'win': '1/4', 'loss': '1/4'}
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from gmpy2 import mpq

from exactdice.errors import InputError, check_invariant
from exactdice.markov.arithmetic import ExactArithmetic
from exactdice.markov.graph import CHANCE, TERMINAL, explore
from exactdice.markov.model import Chance, Decision, Terminal
from exactdice.markov.reward_counts import HasDecisions

__all__ = ["AbsorptionByReward", "absorption_by_reward", "RewardLayers", "FixedStrategy"]

_AT, _EARNED = "at", "earned"


@dataclass(frozen=True)
class AbsorptionByReward:
    """``by_total[k][outcome]``: the exact probability that play ends in ``outcome`` with
    the reward's total exactly ``k`` (k = 0 .. up_to); ``tail`` is what has not ended by
    then (a larger total, or play that never ends), so everything sums to exactly 1."""

    reward: str
    outcomes: tuple
    by_total: tuple
    tail: Fraction

    def ended_by(self) -> list[Fraction]:
        """P(play has ended with a total of at most k), k = 0 .. up_to (nondecreasing)."""
        cumulative, total = [], Fraction(0)
        for ended in self.by_total:
            total += sum(ended.values(), Fraction(0))
            cumulative.append(total)
        return cumulative


def absorption_by_reward(
    model, reward: str, up_to: int, *, strategy=None, max_states: int = 2_000_000
) -> AbsorptionByReward:
    """The exact law of (outcome, reward total) for totals 0 .. ``up_to``, and the tail.

    ``model`` must be a chain; a game's decisions can be fixed by ``strategy`` (state ->
    action name, as `exactdice.markov.Solution.strategy` gives). Rewards must be whole
    numbers >= 0.
    """
    if isinstance(up_to, bool) or not isinstance(up_to, int) or up_to < 0:
        raise InputError("up_to", f"must be a whole number >= 0, got {up_to!r}")
    layers = RewardLayers(model, reward, strategy=strategy, max_states=max_states)
    by_total = tuple(layers.next_layer() for _ in range(up_to + 1))
    ended = sum((sum(layer.values(), Fraction(0)) for layer in by_total), Fraction(0))
    check_invariant(ended + layers.never_ends + layers.mass_ahead() == 1, "the layers' mass must sum to exactly 1")
    return AbsorptionByReward(reward, layers.outcomes, by_total, 1 - ended)


class FixedStrategy:
    """``model`` with each decision replaced by the action ``strategy`` chooses there: a chain.

    >>> from exactdice.markov.model import Decision
    >>> class Choice:
    ...     outcomes, reward_names = ("a", "b"), ()
    ...     def initial_state(self): return 0
    ...     def expand(self, state):
    ...         return Decision("max", (("left", 1, None), ("right", 2, None))) if state == 0 else Terminal("ab"[state - 1])
    >>> FixedStrategy(Choice(), {0: "right"}).expand(0)
    Chance(branches=((1, 2, None),))
    """

    def __init__(self, model, strategy: dict):
        self.model, self.strategy = model, strategy
        self.outcomes = tuple(model.outcomes)
        self.reward_names = tuple(getattr(model, "reward_names", ()) or ())

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        node = self.model.expand(state)
        if not isinstance(node, Decision):
            return node
        chosen = self.strategy.get(state)
        for name, successor, rewards in node.actions:
            if name == chosen:
                return Chance(((1, successor, rewards),))
        raise HasDecisions("strategy", f"the strategy chooses no action of the decision at {state!r}")


class _MarkedRewards:
    """``model`` with each branch that earns the reward passing through a marker state
    ``("earned", amount, successor)``, so the explored graph keeps what each branch earns."""

    reward_names = ()

    def __init__(self, model, reward: str):
        names = tuple(getattr(model, "reward_names", ()) or ())
        if reward not in names:
            raise InputError("reward", f"the model has no reward {reward!r} (its rewards: {', '.join(names)})")
        self.model, self.slot = model, names.index(reward)
        self.outcomes = tuple(model.outcomes)

    def initial_state(self):
        return (_AT, self.model.initial_state())

    def expand(self, state):
        if state[0] == _EARNED:
            return Chance(((1, (_AT, state[2]), None),))
        node = self.model.expand(state[1])
        if isinstance(node, Terminal):
            return node
        if isinstance(node, Decision):
            raise HasDecisions(
                "model", "absorption by a reward's total needs a chain: fix the decisions with a strategy (`strategy`)"
            )
        return Chance(
            tuple(
                (weight, self._through_marker(successor, rewards), None) for weight, successor, rewards in node.branches
            )
        )

    def _through_marker(self, successor, rewards):
        earned = rewards[self.slot] if rewards else 0
        if earned < 0:
            raise InputError("reward", f"counts only rewards >= 0, a branch earns {earned}")
        return (_AT, successor) if earned == 0 else (_EARNED, earned, successor)


class RewardLayers:
    """The layers of one chain, one value of the reward's total at a time (`next_layer`).

    Explores the model once; then each call moves the mass of the next total through the
    branches that earn nothing, in the topological order of their strongly connected
    components (`_order`), and returns what ended there.
    """

    def __init__(self, model, reward: str, *, strategy=None, max_states: int = 2_000_000):
        if strategy is not None:
            model = FixedStrategy(model, strategy)
        self.graph = graph = explore(_MarkedRewards(model, reward), max_states=max_states, progress=False)
        self.outcomes = graph.outcomes
        self.alive = _reaches_a_terminal(graph)
        self.components = _order(graph)
        self.total = 0
        self.never_ends = Fraction(0)
        self.pending: dict = defaultdict(dict)  # total -> {node: mass arriving with it}
        self.pending[0][graph.initial] = mpq(1)
        self.numbers = ExactArithmetic()

    def next_layer(self) -> dict:
        """``{outcome: P(play ends there with the total exactly this layer's)}``, then the next total."""
        mass = self.pending.pop(self.total, {})
        ended: dict = {outcome: mpq(0) for outcome in self.outcomes}
        for members in self.components:
            if any(node in mass for node in members):
                self._flow(members, mass, ended)
        self.total += 1
        return {outcome: Fraction(int(p.numerator), int(p.denominator)) for outcome, p in ended.items()}

    def mass_ahead(self) -> Fraction:
        """The mass waiting in later layers (it has not ended yet)."""
        ahead = sum((sum(layer.values(), mpq(0)) for layer in self.pending.values()), mpq(0))
        return Fraction(int(ahead.numerator), int(ahead.denominator))

    def _flow(self, members, mass, ended) -> None:
        """Move the mass arriving at one component on: absorb, mark for a later layer, or pass."""
        graph = self.graph
        if len(members) > 1 or self._loops(members[0]):
            self._flow_through_loop(members, mass)
            return
        node = members[0]
        arriving = mass.pop(node)
        if not self.alive[node]:
            self.never_ends += Fraction(int(arriving.numerator), int(arriving.denominator))
        elif graph.kind[node] == TERMINAL:
            ended[graph.outcomes[graph.data[node]]] += arriving
        elif graph.states[node][0] == _EARNED:
            later = self.pending[self.total + graph.states[node][1]]
            target = graph.successors(node)[0]
            later[target] = later.get(target, 0) + arriving
        else:
            self._send(node, arriving / graph.data[node], mass)

    def _send(self, node, per_weight, mass, skip=()) -> None:
        """Pass ``per_weight`` times each edge's weight from ``node`` to its successors."""
        graph = self.graph
        for edge in range(graph.offsets[node], graph.offsets[node + 1]):
            target = graph.targets[edge]
            if target not in skip:
                mass[target] = mass.get(target, 0) + per_weight * graph.weights[edge]

    def _loops(self, node) -> bool:
        """True for a chance state with a branch back to itself (one that earns nothing)."""
        graph = self.graph
        return graph.kind[node] == CHANCE and graph.states[node][0] != _EARNED and node in graph.successors(node)

    def _flow_through_loop(self, members, mass) -> None:
        """A loop of branches that earn nothing: solve ``total[v] y[v] - sum w(u, v) y[u] =
        arriving[v]`` exactly over its members (y: the flow per unit of edge weight), then
        pass ``y[u] w(u, t)`` to every target t outside it."""
        graph = self.graph
        if not self.alive[members[0]]:  # a loop that cannot end: what enters it never ends
            for node in members:
                if node in mass:
                    arriving = mass.pop(node)
                    self.never_ends += Fraction(int(arriving.numerator), int(arriving.denominator))
            return
        position = {node: index for index, node in enumerate(members)}
        rows = [{index: graph.data[node]} for index, node in enumerate(members)]
        for node in members:
            for edge in range(graph.offsets[node], graph.offsets[node + 1]):
                inside = position.get(graph.targets[edge])
                if inside is not None:
                    rows[inside][position[node]] = rows[inside].get(position[node], 0) - graph.weights[edge]
        arriving = [[mass.pop(node, mpq(0))] for node in members]
        flows = self.numbers.solve_linear(rows, arriving)
        members_set = set(members)
        for node, (per_weight,) in zip(members, flows):
            self._send(node, per_weight, mass, skip=members_set)


def _reaches_a_terminal(graph) -> bytearray:
    """Per node: 1 when some path leads from it to a terminal state."""
    predecessors = defaultdict(list)
    for node in range(graph.num_states):
        for target in graph.successors(node):
            predecessors[target].append(node)
    alive = bytearray(graph.num_states)
    stack = [node for node in range(graph.num_states) if graph.kind[node] == TERMINAL]
    for node in stack:
        alive[node] = 1
    while stack:
        for source in predecessors[stack.pop()]:
            if not alive[source]:
                alive[source] = 1
                stack.append(source)
    return alive


def _order(graph) -> list[list[int]]:
    """The strongly connected components of the branches that earn nothing (a marker state
    ends its path), sources first: the order a layer's mass is passed on in."""
    import networkx as nx

    unrewarded = nx.DiGraph()
    unrewarded.add_nodes_from(range(graph.num_states))
    for node in range(graph.num_states):
        if graph.kind[node] == CHANCE and graph.states[node][0] != _EARNED:
            unrewarded.add_edges_from((node, target) for target in graph.successors(node))
    condensed = nx.condensation(unrewarded)
    return [sorted(condensed.nodes[component]["members"]) for component in nx.topological_sort(condensed)]
