"""`explore` with a model that offers ``expand_keyed`` (`KeyedChance` nodes): the same
graph as through the plain ``expand``, and the same checks on what the model returns."""

import pytest

from exactdice.errors import InternalError
from exactdice.markov import Chance, Terminal, explore
from exactdice.markov.model import KeyedChance


class KeyedWalk:
    """A walk on 0..goal: from n, +1 with weight 2 (reward 1), +2 with weight 1, back to 0
    with weight 1; goal and beyond end. Keys name (next state, rewards) pairs."""

    outcomes = ("done",)
    reward_names = ("steps",)

    def __init__(self, goal, bad_weight=None):
        self.goal, self.bad_weight, self.table, self.keys = goal, bad_weight, [], {}

    def initial_state(self):
        return 0

    def _branches(self, state):
        return [
            (2, min(state + 1, self.goal), (1,)),
            (1, min(state + 2, self.goal), None),
            (1 if self.bad_weight is None else self.bad_weight, 0, None),
        ]

    def expand(self, state):
        return Terminal("done") if state >= self.goal else Chance(tuple(self._branches(state)))

    def expand_keyed(self, state):
        if state >= self.goal:
            return Terminal("done")
        keyed = []
        for weight, successor, rewards in self._branches(state):
            key = self.keys.setdefault((successor, rewards), len(self.table))
            if key == len(self.table):
                self.table.append((successor, rewards))
            keyed.append((weight, key))
        return KeyedChance(tuple(keyed), self.table)


class PlainView:
    def __init__(self, model):
        self.outcomes, self.reward_names = model.outcomes, model.reward_names
        self.initial_state, self.expand = model.initial_state, model.expand


@pytest.mark.parametrize("goal", [1, 2, 5])
def test_keyed_and_plain_expansions_give_the_same_graph(goal):
    keyed, plain = explore(KeyedWalk(goal)), explore(PlainView(KeyedWalk(goal)))
    for name in ("states", "kind", "data", "offsets", "targets", "weights", "chance_reward_mass"):
        assert getattr(keyed, name) == getattr(plain, name), name
    assert keyed.num_states == goal + 1


def test_keyed_branches_merge_by_successor():
    # from goal - 1 both steps land on the goal: one edge of weight 3, reward mass 2
    graph = explore(KeyedWalk(2))
    node = graph.index[1]
    edges = range(graph.offsets[node], graph.offsets[node + 1])
    assert {graph.states[graph.targets[e]]: graph.weights[e] for e in edges} == {2: 3, 0: 1}
    assert graph.chance_reward_mass[node] == (2,) and graph.data[node] == 4


@pytest.mark.parametrize("bad", [0, -1])
def test_keyed_weights_must_be_positive(bad):
    with pytest.raises(InternalError, match="positive ints"):
        explore(KeyedWalk(3, bad_weight=bad))


def test_weights_past_64_bits_turn_the_array_into_a_list():
    big = 2**70
    graph = explore(KeyedWalk(3, bad_weight=big))
    assert type(graph.weights) is list and big in graph.weights
    assert type(explore(KeyedWalk(3)).weights) is not list
