"""The exact passes' compiled loops (`exactdice.markov._exact_pass`) against the solver's
Python loops: the same integers at every state, hence the same answers, on games with
decisions, loops and endless play, on Karbon's optimal play, and where a weight passes
64 bits (handed back to Python)."""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy
import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules, parse_player_policy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.solve import payoffs
from exactdice.markov import Chance, Decision, Terminal, explore, solve
from exactdice.markov import arithmetic, expected_visits
from exactdice.markov import solver as solver_module
from exactdice.markov.arithmetic import ExactArithmetic
from exactdice.markov.arrays import ArrayGraph, csr_arrays

from .test_solver import PAYOFF, RandomChain, TiedGame, answers

pytestmark = pytest.mark.skipif(solver_module.backward_values is None, reason="the compiled loops are not built")


def solved_in_both(graph, payoff, endless, monkeypatch):
    """``(solver, visits, answers)`` after the backward pass and the forward pass of
    visits, compiled and then in Python (loops solved by FLINT and Python elimination)."""
    numbers = ExactArithmetic()
    pays = [numbers.number(payoff.get(name, 0)) for name in graph.outcomes]
    components = graph.strongly_connected_components()
    passes = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(solver_module, "backward_values", None)
            monkeypatch.setattr(solver_module, "LoopSystems", None)
            monkeypatch.setattr(expected_visits, "forward_visits", None)
            monkeypatch.setattr(expected_visits, "reward_totals", None)
            monkeypatch.setattr(arithmetic, "_exact_systems", None)
        solver = solver_module._Solver(graph, numbers, pays, numbers.number(endless), vectors=False)
        solver.run(progress=False, components=components)
        visits = solver_module._ExpectedVisits(solver)
        passes.append((solver, visits, visits.run()))
    monkeypatch.undo()
    return passes


def typed(values) -> list:
    """The values with their types: an int where the Python loop has an mpz differs."""
    return [(type(value), value) for value in values]


def assert_same_integers(compiled, python):
    (fast, fast_visits, fast_answers), (slow, slow_visits, slow_answers) = compiled, python
    assert typed(fast.nums) == typed(slow.nums) and typed(fast.dens) == typed(slow.dens)
    assert list(fast.chosen_edge.items()) == list(slow.chosen_edge.items()) and fast.alive == slow.alive
    assert (fast.largest, fast.cyclic_count, fast.looping) == (slow.largest, slow.cyclic_count, slow.looping)
    assert typed(fast_visits.flow_num) == typed(slow_visits.flow_num)
    assert typed(fast_visits.flow_den) == typed(slow_visits.flow_den)
    assert (fast_visits.ends, fast_visits.dead) == (slow_visits.ends, slow_visits.dead)
    assert fast_visits.inflow == slow_visits.inflow
    assert fast_answers == slow_answers


@pytest.mark.parametrize("endless", [Fraction(0), Fraction(1, 2)])
@pytest.mark.parametrize("seed", range(12))
def test_compiled_loops_keep_the_python_loops_integers_on_random_games(seed, endless, monkeypatch):
    graph = explore(TiedGame(seed, size=8 + 4 * (seed % 5), one_sided=seed % 3 == 0))
    assert_same_integers(*solved_in_both(graph, PAYOFF, endless, monkeypatch))


def karbon_optimal_graph(narrator="fixed"):
    """An optimal player's Karbon contest, explored by the compiled walk: thousands of
    acyclic states, a few loops."""
    setup = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1)
    player, narrator_policy = PlayerPolicy(kind="optimal"), NarratorPolicy(kind=narrator)
    start = setup.start(player, narrator_policy)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator_policy), progress=False)


@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
def test_compiled_loops_keep_the_python_loops_integers_on_karbon_optimal_play(narrator, monkeypatch):
    graph = karbon_optimal_graph(narrator)
    assert isinstance(graph, ArrayGraph)  # the compiled walk's arrays, as the solver reads them
    payoff, endless = payoffs(Rules())
    both = solved_in_both(graph, payoff, endless, monkeypatch)
    assert len(both[0][0].chosen_edge) > 1000
    assert_same_integers(*both)


class HugeWeights:
    """An acyclic one-sided game whose chance weights pass 64 bits in every other
    state: those states go back to the Python loop, the others stay compiled."""

    outcomes = ("win", "loss")
    reward_names = ("steps",)

    def initial_state(self):
        return 0

    def expand(self, state):
        if isinstance(state, str):
            return Terminal(state)
        if state == 9:
            return Chance(((1, "win", None), (1, "loss", None)))
        if state == 6:
            return Decision("max", (("stop", "loss", None), ("go", 7, (1,)), ("skip", 9, None)))
        if state % 2:
            return Chance(((2**70 + state, state + 1, (1,)), (3**45, "win", None), (1, "loss", None)))
        return Chance(((state + 1, state + 1, (1,)), (2, "loss", None)))


def test_states_with_weights_past_64_bits_go_back_to_python(monkeypatch):
    graph = explore(HugeWeights())
    assert len(csr_arrays(graph).big) == 4
    assert all(len(component) == 1 for component in graph.strongly_connected_components())
    assert_same_integers(*solved_in_both(graph, {"win": 1}, 0, monkeypatch))
    solution = solve(graph)
    assert sum(solution.absorption.values()) + solution.never_ends == 1


class HugeLoop:
    """A loop through a decision whose chance states' totals and reward masses pass 64
    bits (one reward negative), beside a loop of small weights."""

    outcomes = ("win", "loss")
    reward_names = ("steps", "debt")

    def initial_state(self):
        return 0

    def expand(self, state):
        if isinstance(state, str):
            return Terminal(state)
        if state == 0:
            return Decision("max", (("go", 1, None), ("stop", 3, (0, 1))))
        if state == 1:
            return Chance(((2**62, 2, (1, 0)), (2**62 + 5, 0, (1, -3)), (3, "win", None)))
        if state == 2:
            return Chance(((1, 0, (1, 0)), (1, "win", (0, 2)), (2, "loss", None)))
        return Chance(((1, 3, (1, 0)), (2, 4, None), (1, "loss", (0, -1))))  # states 3 and 4


def as_array_graph(graph):
    """The same graph as an `ArrayGraph` (with its reward masses in arrays, as the compiled
    walk gives them): its expected rewards are summed by the compiled `reward_totals`."""
    csr = csr_arrays(graph)
    edges = sorted(graph.action_names)
    return ArrayGraph(
        graph.outcomes,
        graph.reward_names,
        kind=csr.kind,
        data=csr.data,
        offsets=csr.offsets,
        targets=csr.targets,
        weights=csr.weights,
        state_of=graph.states.__getitem__,
        node_of=graph.index.get,
        mass=csr.mass,
        has_mass=numpy.array([bool(graph.chance_reward_mass[node]) for node in range(graph.num_states)]),
        big=csr.big,
        big_mass=csr.big_mass,
        decision_edges=numpy.array(edges, dtype=numpy.int64),
        action_name=lambda place: graph.action_names[edges[place]],
        action_rewards=lambda place: graph.action_rewards.get(edges[place]),
    )


def test_an_array_graphs_solvers_read_its_own_arrays():
    """The exact passes read an array graph's edges where the walk left them (no second
    copy, items as Python ints); where a number passes 64 bits, that array is a list of
    the exact numbers instead."""
    graph = explore(RandomChain(3, 20))
    arrays = as_array_graph(graph)
    for name in ("offsets", "targets", "weights", "data"):
        seen = getattr(arrays, name)
        assert numpy.shares_memory(numpy.asarray(seen), getattr(arrays.csr, name))
        assert list(seen) == list(getattr(graph, name)) and all(type(value) is int for value in seen)
    huge = explore(HugeWeights())
    huge_arrays = as_array_graph(huge)
    assert isinstance(huge_arrays.weights, list) and max(huge_arrays.weights) > 2**64
    assert huge_arrays.weights == list(huge.weights) and huge_arrays.data == list(huge.data)
    assert answers(solve(huge_arrays, payoff={"win": 1})) == answers(solve(huge, payoff={"win": 1}))


def test_loops_with_totals_past_64_bits_go_back_to_python(monkeypatch):
    graph = explore(HugeLoop())
    assert any(len(component) > 1 for component in graph.strongly_connected_components())
    assert csr_arrays(graph).big and csr_arrays(graph).big_mass
    assert_same_integers(*solved_in_both(graph, {"win": 1}, Fraction(1, 3), monkeypatch))


def test_reward_totals_read_big_totals_and_masses_as_python_does():
    graph = explore(HugeLoop())
    arrays = as_array_graph(graph)
    assert arrays.csr.big_mass and arrays.csr.mass.shape[1] == 2
    from_arrays, from_lists = solve(arrays, payoff={"win": 1}), solve(graph, payoff={"win": 1})
    assert from_arrays.expected_rewards == from_lists.expected_rewards
    assert from_arrays.expected_rewards["debt"] < 0  # a negative mass is a mass, not a marker
    assert answers(from_arrays) == answers(from_lists)


def test_the_strategy_names_states_when_asked_and_pickles_as_a_dict():
    model = TiedGame(4, size=12)
    solution = solve(model, payoff=PAYOFF)
    graph = explore(model)
    named = {graph.states[node]: graph.action_names[edge] for node, edge in solution.strategy._chosen_edge.items()}
    assert dict(solution.strategy) == named and len(solution.strategy) == len(named)
    for state, action in named.items():
        assert solution.strategy[state] == action and solution.strategy.get(state) == action
    assert "no such state" not in solution.strategy
    copy = pickle.loads(pickle.dumps(solution.strategy))
    assert type(copy) is dict and copy == named
    assert answers(solve(model, payoff=PAYOFF)) == answers(solution)


@pytest.mark.parametrize("graph_of", [karbon_optimal_graph, lambda: explore(TiedGame(6, size=12))])
def test_the_compiled_loops_check_memory_and_time(graph_of, monkeypatch):
    """The memory budget and time limits (`check_memory`) are checked in the compiled loops
    too: every few thousand acyclic states, and before each loop."""
    from exactdice.errors import TooLargeError
    from exactdice.markov import _exact_pass

    graph = graph_of()
    calls = []

    def past_the_budget(doing=None, **_):
        calls.append(doing)
        raise TooLargeError("max_memory", "past the budget")

    monkeypatch.setattr(_exact_pass, "check_memory", past_the_budget)
    with pytest.raises(TooLargeError, match="past the budget"):
        solve(graph, payoff=PAYOFF if "tie" in graph.outcomes else None)
    assert calls == ["while solving"]


# ----- the chain's forward pass (`exactdice.markov.forward`) and GMP's sums in place -----


def forward_in_both(graph, monkeypatch, chosen_edge=None):
    """The chain's forward pass compiled (sums grown in place by GMP, then making new
    numbers), and in Python: its edge loops, right sides and checks all Python's."""
    from exactdice.markov import _exact_pass
    from exactdice.markov import denominators as denominators_module
    from exactdice.markov import forward as forward_module
    from exactdice.markov import lifting as lifting_module

    def passed():
        # each pass meets every loop for the first time (a loop met again takes another
        # way to the same Fractions, whose denominators may not be reduced)
        for remembered in (forward_module._block_inverses, forward_module._seen_matrices, forward_module._systems):
            remembered.clear()
        return forward_module.forward_pass(graph, chosen_edge, workers=0)

    results = []
    for gmp in (True, False):
        assert _exact_pass.use_gmp(gmp) == gmp
        try:
            results.append(passed())
        finally:
            _exact_pass.use_gmp(True)
    with monkeypatch.context() as python:
        python.setattr(forward_module, "ChainFlows", None)
        python.setattr(forward_module, "cyclic_components", None)
        python.setattr(lifting_module, "row_total", None)
        python.setattr(forward_module, "compiled_parts", None)
        python.setattr(denominators_module, "summed_parts", None)
        results.append(passed())
    return results


def chain_karbon_graph(policy=None, **setup):
    player, narrator = parse_player_policy(policy), NarratorPolicy()
    start = ContestSetup(**setup).start(player, narrator)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator), progress=False)


def test_an_array_graphs_edges_outlive_the_graph_and_cannot_be_changed():
    """What the compiled walk's arrays are read through keeps the walk alive: the edges
    taken from a graph stay as they were after the graph (and its walk) is dropped and
    the memory reused; and they are read-only."""
    import gc

    graph = chain_karbon_graph(None, ability=3, challenge=3, consequence=3, peril=1)
    assert isinstance(graph, ArrayGraph) and graph.owner is not None
    targets, weights, csr_targets = graph.targets, graph.weights, graph.csr.targets
    expected = (list(targets), list(weights), csr_targets.tolist())
    del graph
    gc.collect()
    churn = [bytearray(1 << 20) for _ in range(64)]  # reuse what was freed
    assert (list(targets), list(weights), csr_targets.tolist()) == expected
    del churn
    with pytest.raises(TypeError):
        targets[0] = 7


@pytest.mark.parametrize("seed", range(8))
def test_the_chains_compiled_pass_gives_pythons_fractions_on_random_chains(seed, monkeypatch):
    from .test_forward_blocks import LoopsBehindChance

    for model in (LoopsBehindChance(seed, loops=2 + seed % 4, loop_size=3 + seed), RandomChain(seed, 12 + 4 * seed)):
        gmp, new_numbers, python = forward_in_both(explore(model), monkeypatch)
        assert gmp == new_numbers == python


@pytest.mark.parametrize(
    "policy, setup",
    [
        (None, dict(ability=2, challenge=2, consequence=2, peril=1)),
        ("risk=always", dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 2}, consequence=2)),
    ],
)
def test_the_chains_compiled_pass_gives_pythons_fractions_on_karbon(policy, setup, monkeypatch):
    graph = chain_karbon_graph(policy, **setup)
    assert isinstance(graph, ArrayGraph) and graph.num_transitions > 1000
    gmp, new_numbers, python = forward_in_both(graph, monkeypatch)
    assert gmp == new_numbers == python
    assert sum(gmp.absorption.values()) + gmp.never_ends == 1


def test_the_chains_compiled_pass_follows_a_chosen_strategy_and_leaves_big_weights_to_python(monkeypatch):
    from exactdice.markov import forward as forward_module

    for model in (HugeLoop(), HugeWeights()):
        graph = explore(model)
        chosen = {node: graph.offsets[node] for node in range(graph.num_states) if graph.kind[node] == 2}
        gmp, new_numbers, python = forward_in_both(graph, monkeypatch, chosen)
        assert gmp == new_numbers == python
    assert forward_module._Plan(explore(HugeWeights()), {}, None, []).flows is None  # weights past 64 bits


def test_sums_grow_in_place_only_numbers_nothing_else_holds():
    """A sum grows in place (the same object, its cached hash dropped) only where nothing
    but its container holds it; a number also held elsewhere is left as it was."""
    from array import array

    from gmpy2 import mpz

    from exactdice.markov import _exact_pass

    class Graph:  # node 0 -> 1 (weight 2), 2 (weight 3)
        kind, data = bytearray([1, 1, 1]), array("q", [5, 0, 0])
        offsets, targets, weights = array("q", [0, 2, 2, 2]), array("i", [1, 2]), array("q", [2, 3])

    assert _exact_pass.use_gmp(True), "GMP's sums in place were not found in gmpy2's library"
    flows = _exact_pass.ChainFlows(Graph())
    big = mpz(5) ** 100
    shared = big + 0
    alone = big + 0
    hash(alone)  # a cached hash that must not outlive the change
    inflow = [None, {7: shared}, {7: alone}]
    alone_id = id(alone)
    del alone
    assert flows.spread(inflow, 0, 7, mpz(10), 4) is None
    assert shared == big and inflow[1][7] == big + 20 and inflow[1][7] is not shared
    assert id(inflow[2][7]) == alone_id and inflow[2][7] == big + 30
    assert hash(inflow[2][7]) == hash(big + 30)
    assert _exact_pass.row_total({0: 3, 1: -(2**62)}, [big, big]) == 3 * big - 2**62 * big
    assert _exact_pass.row_total({0: -(2**63), 1: 2**63 - 1, 2: 2**64}, [big, big, big]) == (2**64 - 1) * big
    assert _exact_pass.summed_parts([[(big, None), (big, big)], [(2, 3)]]) == [big + big * big, 6]
    # a loop's exits sent on: the exit itself is kept where the target waited with nothing,
    # and never grown in place while the caller holds it
    exit_sum, held_elsewhere = big + 0, big + 0
    alone = big + 0
    alone_id = id(alone)
    inflow = [None, None, {7: held_elsewhere}, {7: alone}]
    del alone
    assert flows.sent(inflow, [(1, exit_sum), (2, mpz(1)), (3, mpz(2))], 7, 4) is None
    assert inflow[1][7] is exit_sum and held_elsewhere == big and inflow[2][7] == big + 1
    assert id(inflow[3][7]) == alone_id and inflow[3][7] == big + 2
    assert flows.sent(inflow, [(1, mpz(3))], 7, 4) is None
    assert exit_sum == big and inflow[1][7] == big + 3
    assert flows.sent(inflow, [(1, mpz(1)), (2, mpz(1))], 8, 1) == [1, 2]


def test_sums_of_numbers_that_are_not_mpz_are_summed_as_python_sums_them():
    """A running sum that is a Python int, a fraction or a float is never grown in place
    (a reviewer's reproducers: they crashed or came back corrupted)."""
    from array import array

    from gmpy2 import mpz

    from exactdice.markov import _exact_pass

    class Graph:  # nodes 0 and 1 -> 2; node 0 a decision in the second case
        kind, data = bytearray([1, 1, 1]), array("q", [7, 5, 0])
        offsets, targets, weights = array("q", [0, 1, 2, 2]), array("i", [2, 2]), array("q", [7, 5])

    assert _exact_pass.use_gmp(True)
    flows = _exact_pass.ChainFlows(Graph())
    assert flows.leaving([0, 1], [12345, mpz(3)], {}) == [(2, 7 * 12345 + 15)]
    Graph.kind = bytearray([2, 1, 1])
    assert _exact_pass.ChainFlows(Graph()).leaving([0, 1], [300, mpz(3)], {0: 0}) == [(2, 315)]
    assert _exact_pass.summed_parts([[(1.5, None), (mpz(5), None)]]) == [6.5]
    assert _exact_pass.summed_parts([[(Fraction(1, 3), None), (mpz(5), None)]]) == [Fraction(16, 3)]
    assert _exact_pass.summed_parts([[(mpz(2), Fraction(1, 2)), (mpz(5), mpz(2))]]) == [11]
    assert _exact_pass.row_total({0: 1, 1: 2}, [Fraction(1, 3), mpz(5)]) == Fraction(31, 3)


def test_the_compiled_modules_examples():
    """pytest's doctest collection skips compiled modules: their examples are run here."""
    import doctest

    from exactdice.markov import _exact_pass

    results = doctest.testmod(_exact_pass)
    assert results.attempted >= 4 and results.failed == 0


def test_a_solved_loops_steps_and_rewards_counted_in_compiled_code():
    """`ChainFlows.counted`: a chance member's steps (its total times its value) and its
    reward masses times its value, over the loop's class; decisions, members without a
    value and members whose masses pass 64 bits are left to the caller."""
    from array import array

    import numpy
    from gmpy2 import mpz

    from exactdice.markov import _exact_pass

    class Graph:  # 0, 1 chance (totals 6 and 4), 2 a decision, 3 chance with a big mass
        kind, data = bytearray([1, 1, 2, 1]), array("q", [6, 4, 1, 2])
        offsets, targets, weights = array("q", [0, 0, 0, 0, 0]), array("i"), array("q")
        mass = numpy.array([[6, 0], [4, -3], [0, 0], [-1, -1]], dtype=numpy.int64)
        big_mass = {3: (2**70, 0)}

    flows = _exact_pass.ChainFlows(Graph())
    assert flows.reward_columns == 2
    steps, rewards = {9: mpz(1)}, [{}, {9: mpz(5)}]
    left = flows.counted([0, 1, 2, 3], [mpz(10), mpz(7), mpz(3), mpz(2)], 9, steps, rewards)
    assert left == [2, 3]
    assert steps == {9: 1 + 6 * 10 + 4 * 7}
    assert rewards == [{9: 6 * 10 + 4 * 7}, {9: 5 - 3 * 7}]
    assert flows.counted([0], [0], 9, steps, rewards) == []  # no value: nothing counted
    with pytest.raises(ValueError, match="3 rewards summed over 2 mass columns"):
        flows.counted([0], [mpz(1)], 9, {}, [{}, {}, {}])


@pytest.mark.parametrize("policy", [None, "risk=always"])
def test_the_loops_are_found_as_numpy_finds_them(policy):
    """`cyclic_components` (one compiled sweep) and `loops_of` (numpy) agree on every
    component of a Karbon graph: its loops, self-loops and single states."""
    from exactdice.markov._exact_pass import cyclic_components
    from exactdice.markov.arrays import loops_of

    graph = chain_karbon_graph(policy, player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 2}, consequence=2)
    csr = csr_arrays(graph, masses=False)
    components = graph.strongly_connected_components()
    found = cyclic_components(csr.offsets, csr.targets, components)
    assert found == loops_of(csr.offsets, csr.targets, components)
    assert 0 < sum(found) < len(components)


def test_gmps_loops_chosen_for_the_cpu_give_the_same_fractions():
    """GMP's Broadwell loops swapped in (`_gmp_cpu.use_cpu_loops`, where the CPU and GMP
    allow it, as on the machine the figures come from) and its generic ones give the same
    answers, and the loops check out on random limbs either way."""
    from exactdice.markov import _gmp_cpu

    graph = chain_karbon_graph("risk=always", player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 2}, consequence=2)
    results = []
    try:
        for wanted in (True, False):
            swapped = _gmp_cpu.use_cpu_loops(wanted)
            assert swapped == (_gmp_cpu.available() if wanted else [])  # (not turned off by its own check)
            assert set(swapped) <= {"addmul_1", "submul_1", "mul_1"}
            assert _gmp_cpu._agrees()
            results.append(solve(graph, payoff=PAYOFF, arithmetic="exact", progress=False).absorption)
    finally:
        _gmp_cpu.use_cpu_loops(True)
    assert results[0] == results[1]
