"""The forward pass over one shared denominator (`exactdice.markov.forward`) against the
dense sympy reference and against the backward solver with its own exact expectations
(rationals over per-state denominators): identical Fractions on many random graphs."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from exactdice.markov import Chance, Terminal, explore, solve
from exactdice.markov.arithmetic import ExactArithmetic
from exactdice.markov import forward as forward_module
from exactdice.markov.forward import denominator_bound, forward_pass, small_prime_factors
from exactdice.markov.solver import _Solver

from .reference import dense_evaluate, reachable_nodes
from .test_solver import RandomChain, RandomGame, as_fraction


class RandomDag:
    """Random acyclic chance graph: states lead only to later states or to an end."""

    outcomes = ("win", "loss", "tie")
    reward_names = ("gold",)

    def __init__(self, seed, size=25):
        rng = random.Random(seed)
        self.nodes = {}
        for state in range(size):
            later = list(range(state + 1, size)) + ["win", "loss", "tie"]
            branches = tuple((rng.choice([1, 2, 3, 4, 6, 8, 10, 12, 20, 7, 11]), rng.choice(later),
                              (rng.randint(-3, 3),) if rng.random() < 0.5 else None)
                             for _ in range(rng.randint(1, 5)))
            self.nodes[state] = Chance(branches)

    def initial_state(self):
        return 0

    def expand(self, state):
        return Terminal(state) if isinstance(state, str) else self.nodes[state]


def backward_answers(graph, payoff=None, endless=0):
    """The backward solver's odds and its own (per-state denominator) expectations."""
    numbers = ExactArithmetic()
    payoff = payoff or {graph.outcomes[0]: 1}
    solver = _Solver(graph, numbers, [numbers.number(payoff.get(name, 0)) for name in graph.outcomes],
                     numbers.number(endless))
    solver.run(False)
    nums, den = solver.nums[graph.initial], solver.dens[graph.initial]
    absorption = {name: numbers.fraction(numbers.vector_entry(nums, den, i)) for i, name in enumerate(graph.outcomes)}
    never = numbers.fraction(numbers.vector_entry(nums, den, solver.never_slot))
    steps, rewards = (None, {name: None for name in graph.reward_names}) if never else solver.expectations()
    return absorption, never, steps, rewards, solver


def assert_matches_reference(result, reference):
    assert result.absorption == {k: as_fraction(v) for k, v in reference["absorption"].items()}
    assert result.never_ends == as_fraction(reference["never"])
    if reference["steps"] is None:
        assert result.expected_steps is None
    else:
        assert result.expected_steps == as_fraction(reference["steps"])
        assert list(result.expected_rewards.values()) == [as_fraction(v) for v in reference["rewards"]]


MODELS = ([("chain", seed, size) for seed in range(40) for size in (5, 12, 30)]
          + [("dag", seed, 25) for seed in range(20)])


def make(kind, seed, size):
    return RandomChain(seed, size) if kind == "chain" else RandomDag(seed, size)


@pytest.mark.parametrize("kind, seed, size", MODELS)
def test_forward_pass_matches_dense_solve_and_backward_solver(kind, seed, size):
    model = make(kind, seed, size)
    graph = explore(model)
    result = forward_pass(graph)
    assert_matches_reference(result, dense_evaluate(model, reachable_nodes(model), {}, {"win": 1}))
    absorption, never, steps, rewards, _ = backward_answers(graph)
    assert (result.absorption, result.never_ends, result.expected_steps, result.expected_rewards) == (
        absorption, never, steps, rewards)
    assert sum(result.absorption.values()) + result.never_ends == 1


@pytest.mark.parametrize("seed", range(40))
def test_forward_pass_under_a_chosen_strategy_matches_backward_solver(seed):
    """Decisions (max and min, cycles through them): the solver's strategy, its alive
    marks and components fed to the forward pass give the backward pass's own numbers."""
    model = RandomGame(seed, size=12)
    graph = explore(model)
    payoff = {"win": 1, "tie": Fraction(1, 2)}
    absorption, never, steps, rewards, solver = backward_answers(graph, payoff, Fraction(1, 2))
    result = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components)
    assert (result.absorption, result.never_ends, result.expected_steps, result.expected_rewards) == (
        absorption, never, steps, rewards)
    # and the forward pass works out the alive marks itself
    again = forward_pass(graph, solver.chosen_edge)
    assert (again.absorption, again.expected_steps) == (absorption, steps)
    nodes = reachable_nodes(model)
    policy = {state: [name for name, _, _ in nodes[state].actions].index(action)
              for state, action in solve(graph, payoff=payoff, nonterminating_payoff=Fraction(1, 2)).strategy.items()}
    assert_matches_reference(result, dense_evaluate(model, nodes, policy, payoff, Fraction(1, 2)))


@pytest.mark.parametrize("kind, seed, size", MODELS[::7])
def test_bound_is_a_multiple_of_every_answer_denominator(kind, seed, size):
    graph = explore(make(kind, seed, size))
    plan = forward_module._Plan(graph, {}, None, graph.strongly_connected_components(), forward_module.block_system)
    plan.alive = forward_module._alive_states(plan)
    bound = int(denominator_bound(plan))
    result = forward_pass(graph)
    answers = [*result.absorption.values(), result.never_ends, result.expected_steps,
               *result.expected_rewards.values()]
    assert all(bound % answer.denominator == 0 for answer in answers if answer is not None)
    assert result.denominator_bits == bound.bit_length()


def test_a_bound_missing_a_factor_is_caught_not_returned(monkeypatch):
    """Every division is checked: a bound without a needed factor raises instead of
    returning a wrong Fraction (the check can fail)."""
    graph = explore(RandomDag(3))
    real = denominator_bound

    def short(plan):
        bound = real(plan)
        factor = small_prime_factors(int(bound))[-1][0]
        return bound // factor

    monkeypatch.setattr(forward_module, "denominator_bound", short)
    with pytest.raises(ArithmeticError, match="denominator bound"):
        forward_module.forward_pass(graph)


def test_solve_without_decisions_takes_the_forward_path_and_agrees_with_all_states():
    """``solve`` on a chain skips the backward pass unless per-state values are asked;
    both ways give the same Fractions."""
    model = RandomChain(5, 30)
    fast, full = solve(model), solve(model, all_states=True)
    assert fast.absorption == full.absorption and fast.never_ends == full.never_ends
    assert fast.expected_steps == full.expected_steps and fast.expected_rewards == full.expected_rewards
    assert fast.value == full.value and fast.components == full.components
    assert fast.cyclic_components == full.cyclic_components and fast.largest_component == full.largest_component


def test_small_prime_factors_multiply_back():
    rng = random.Random(1)
    for _ in range(200):
        number = rng.randint(1, 10**12)
        product = 1
        for factor, exponent in small_prime_factors(number):
            product *= factor**exponent
        assert product == number


@pytest.mark.parametrize("kind, seed, size", MODELS[::5])
def test_float_preview_of_the_forward_pass_is_close_to_the_exact_one(kind, seed, size):
    graph = explore(make(kind, seed, size))
    exact, preview = forward_pass(graph), forward_pass(graph, exact=False)
    for name in graph.outcomes:
        assert preview.absorption[name] == pytest.approx(float(exact.absorption[name]), abs=1e-9)
    assert preview.never_ends == pytest.approx(float(exact.never_ends), abs=1e-9)
    if exact.expected_steps is not None:
        assert preview.expected_steps == pytest.approx(float(exact.expected_steps), rel=1e-9)


@pytest.mark.parametrize("path", ["remembered inverse", "chunked FLINT solve"])
def test_block_solve_with_a_right_side_of_many_chunks(path, monkeypatch):
    """Right sides wider than one chunk (and negative) come back exactly by either way
    of solving a loop; a right side that leaves a fraction raises."""
    import flint

    if path == "chunked FLINT solve":
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 0)
    rng = random.Random(7)
    size = 6
    rows = [{j: (rng.randint(20, 40) if i == j else -rng.randint(0, 3)) for j in range(size)} for i in range(size)]
    matrix, _ = forward_module.block_system(rows)
    solution = [rng.choice([-1, 1]) * rng.getrandbits(rng.choice([10, 9000, 30000])) for _ in range(size)]
    sources = [sum(row.get(j, 0) * solution[j] for j in range(size)) for row in rows]
    assert forward_module._solve_block(matrix, sources, None, list(range(size))) == solution
    assert isinstance(matrix, flint.fmpz_mat)

    class Named:
        states = list(range(size))

    sources[0] += 1
    with pytest.raises(ArithmeticError, match="denominator bound"):
        forward_module._solve_block(matrix, sources, Named, list(range(size)))


def test_large_blocks_take_the_chunked_solve_and_agree(monkeypatch):
    """Random chains solved with every loop sent to the chunked FLINT solve give the
    same Fractions as with the remembered inverses."""
    for seed in range(6):
        graph = explore(RandomChain(seed, 30))
        first = forward_pass(graph)
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 0)
        second = forward_pass(graph)
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 32)
        assert (first.absorption, first.never_ends, first.expected_steps, first.expected_rewards) == (
            second.absorption, second.never_ends, second.expected_steps, second.expected_rewards)


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_float_preview_under_a_chosen_strategy_is_close_to_the_exact_one(seed):
    graph = explore(RandomGame(seed, size=12))
    *_, solver = backward_answers(graph, {"win": 1}, 0)
    exact = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components)
    preview = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components, exact=False)
    for name in graph.outcomes:
        assert preview.absorption[name] == pytest.approx(float(exact.absorption[name]), abs=1e-9)
    if exact.expected_steps is not None:
        assert preview.expected_steps == pytest.approx(float(exact.expected_steps), rel=1e-9)
