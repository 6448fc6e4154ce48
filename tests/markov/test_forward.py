"""The forward pass over one shared denominator (`exactdice.markov.forward`) against the
dense sympy reference and against the backward solver with its own exact expectations
(rationals over per-state denominators): identical Fractions on many random graphs."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from exactdice.markov import Chance, Terminal, explore, solve
from exactdice.markov.arithmetic import ExactArithmetic
from exactdice.markov import forward as forward_module
from exactdice.markov.forward import Denominators, forward_pass, small_prime_factors
from exactdice.markov.solver import _Solver
from exactdice.markov.synthetic import ContestChain, GamblersRuin, TugOfWar

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
            branches = tuple(
                (
                    rng.choice([1, 2, 3, 4, 6, 8, 10, 12, 20, 7, 11]),
                    rng.choice(later),
                    (rng.randint(-3, 3),) if rng.random() < 0.5 else None,
                )
                for _ in range(rng.randint(1, 5))
            )
            self.nodes[state] = Chance(branches)

    def initial_state(self):
        return 0

    def expand(self, state):
        return Terminal(state) if isinstance(state, str) else self.nodes[state]


def backward_answers(graph, payoff=None, endless=0):
    """The backward solver's odds and its own (per-state denominator) expectations."""
    numbers = ExactArithmetic()
    payoff = payoff or {graph.outcomes[0]: 1}
    solver = _Solver(
        graph, numbers, [numbers.number(payoff.get(name, 0)) for name in graph.outcomes], numbers.number(endless)
    )
    solver.run(False)
    nums, den = solver.nums[graph.initial], solver.dens[graph.initial]
    absorption = {name: numbers.fraction(numbers.vector_entry(nums, den, i)) for i, name in enumerate(graph.outcomes)}
    never = numbers.fraction(numbers.vector_entry(nums, den, solver.never_slot))
    steps, rewards = (None, {name: None for name in graph.reward_names}) if never else solver.expectations()
    return absorption, never, steps, rewards, solver


def assert_forward_matches_backward(graph, payoff=None, endless=0):
    """The forward pass under the backward solver's strategy gives its Fractions exactly,
    the float preview close to them; returns the backward answers and the solver."""
    absorption, never, steps, rewards, solver = backward_answers(graph, payoff, endless)
    result = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components)
    assert (result.absorption, result.never_ends, result.expected_steps, result.expected_rewards) == (
        absorption,
        never,
        steps,
        rewards,
    )
    preview = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components, exact=False)
    assert preview.absorption == pytest.approx({key: float(value) for key, value in absorption.items()}, abs=1e-9)
    if steps is not None:
        assert preview.expected_steps == pytest.approx(float(steps), rel=1e-9)
        assert preview.expected_rewards == pytest.approx(
            {key: float(value) for key, value in rewards.items()}, rel=1e-9, abs=1e-9
        )
    return (absorption, never, steps, rewards), solver


def assert_matches_reference(result, reference):
    assert result.absorption == {k: as_fraction(v) for k, v in reference["absorption"].items()}
    assert result.never_ends == as_fraction(reference["never"])
    if reference["steps"] is None:
        assert result.expected_steps is None
    else:
        assert result.expected_steps == as_fraction(reference["steps"])
        assert list(result.expected_rewards.values()) == [as_fraction(v) for v in reference["rewards"]]


MODELS = [("chain", seed, size) for seed in range(40) for size in (5, 12, 30)] + [
    ("dag", seed, 25) for seed in range(20)
]


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
        absorption,
        never,
        steps,
        rewards,
    )
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
        absorption,
        never,
        steps,
        rewards,
    )
    # and the forward pass works out the alive marks itself
    again = forward_pass(graph, solver.chosen_edge)
    assert (again.absorption, again.expected_steps) == (absorption, steps)
    nodes = reachable_nodes(model)
    policy = {
        state: [name for name, _, _ in nodes[state].actions].index(action)
        for state, action in solve(graph, payoff=payoff, nonterminating_payoff=Fraction(1, 2)).strategy.items()
    }
    assert_matches_reference(result, dense_evaluate(model, nodes, policy, payoff, Fraction(1, 2)))


@pytest.mark.parametrize("kind, seed, size", MODELS[::7])
def test_the_join_of_the_classes_is_a_multiple_of_every_answer_denominator(kind, seed, size):
    """The pass's final denominator ``Q`` (the join of every class met) is a multiple of
    every answer's denominator, and its size is reported."""
    graph = explore(make(kind, seed, size))
    seen = []
    real = forward_module._Pass.result

    def result(flow):
        answer = real(flow)
        parts = [*flow.collected, flow.steps, *flow.rewards]
        seen.append(flow.classes.number(flow.classes.join({k for amounts in parts for k in amounts} or {0})))
        return answer

    forward_module._Pass.result = result
    try:
        answer = forward_pass(graph)
    finally:
        forward_module._Pass.result = real
    bound = int(seen[0])
    values = [*answer.absorption.values(), answer.never_ends, answer.expected_steps, *answer.expected_rewards.values()]
    assert all(bound % value.denominator == 0 for value in values if value is not None)
    assert answer.denominator_bits == bound.bit_length()


def test_denominator_classes_agree_with_plain_integers():
    """Products, joins and scales of classes against plain integer products and lcms."""
    rng = random.Random(3)
    classes = Denominators()
    numbers = {0: 1}
    for _ in range(300):
        klass = rng.choice(list(numbers))
        if rng.random() < 0.6:
            factor = rng.choice([2, 3, 4, 6, 8, 10, 12, 20, 7 * 11, 1000003, 2 * 1000003, 999983**2])
            product = classes.times(klass, factor)
            numbers[product] = numbers[klass] * factor
        else:
            other = rng.choice(list(numbers))
            joined = classes.join((klass, other))
            numbers[joined] = math.lcm(numbers[klass], numbers[other])
            assert classes.scale(klass, joined) * numbers[klass] == classes.number(joined)
            assert classes.scale(other, joined) * numbers[other] == classes.number(joined)
    for klass, number in numbers.items():
        assert classes.number(klass) % number == 0  # a join of cofactors may hold more than the lcm
        if all(p < 1000 for p, _ in small_prime_factors(number)):
            assert classes.number(klass) == number
    for low, high in ((7, 2), (4, 2), (2 * 1000003, 4 * 999983**2)):
        with pytest.raises(ArithmeticError, match="does not divide"):
            classes.scale(classes.times(0, low), classes.times(0, high))


def test_a_wrong_scale_is_caught_not_returned(monkeypatch):
    """A scale between classes that misses a factor (a corrupted divisor) breaks the
    exact sum of the odds, and the pass raises instead of returning wrong Fractions."""
    graph = explore(RandomDag(3))
    real = Denominators.scale

    def short(classes, source, target):
        scale = real(classes, source, target)
        return scale // small_prime_factors(int(scale))[0][0] if scale > 1 else scale

    monkeypatch.setattr(Denominators, "scale", short)
    with pytest.raises(ArithmeticError, match="sum to exactly 1"):
        forward_pass(graph)


def test_a_wrong_class_is_caught_not_returned(monkeypatch):
    """A state's class that drops its total's factor (a corrupted divisor) is caught."""
    graph = explore(RandomChain(4, 12))
    real = Denominators.times

    def dropping(classes, klass, number):
        return real(classes, klass, number // 2 if number % 2 == 0 else number)

    monkeypatch.setattr(Denominators, "times", dropping)
    with pytest.raises(ArithmeticError, match="sum to exactly 1"):
        forward_pass(graph)


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


def _no_lifting(monkeypatch):
    """Every wide loop to FLINT's chunked solve: both liftings decline."""
    for lifting in ("solve_by_lifting", "solve_by_odd_lifting"):
        monkeypatch.setattr(forward_module, lifting, lambda rows, sources: None)


@pytest.mark.parametrize("path", ["remembered inverse", "chunked FLINT solve"])
def test_block_solve_with_a_right_side_of_many_chunks(path, monkeypatch):
    """Right sides wider than one chunk (and negative) come back exactly by either way
    of solving a loop; a solution that does not satisfy the system raises."""
    import flint

    if path == "chunked FLINT solve":
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 0)
        _no_lifting(monkeypatch)
    else:  # a matrix met for the first time goes to the chunked solve
        monkeypatch.setattr(forward_module, "_seen_before", lambda matrix: True)
    rng = random.Random(7)
    size = 6
    rows = [{j: (rng.randint(20, 40) if i == j else -rng.randint(0, 3)) for j in range(size)} for i in range(size)]
    matrix = forward_module.block_system(rows)
    solution = [
        Fraction(rng.choice([-1, 1]) * rng.getrandbits(rng.choice([10, 9000, 30000])), rng.randint(1, 50))
        for _ in range(size)
    ]
    sources = [sum(row.get(j, 0) * solution[j] for j in range(size)) for row in rows]
    common = math.lcm(*(source.denominator for source in sources))
    sources = [int(source * common) for source in sources]
    numerators, denominator = forward_module.solve_block(matrix, rows, sources)
    assert [Fraction(int(m), int(denominator) * common) for m in numerators] == solution
    assert isinstance(matrix, flint.fmpz_mat)

    solver = "_solve_by_chunks" if path == "chunked FLINT solve" else "_solve_by_inverse"
    real = getattr(forward_module, solver)

    def corrupted(*args):
        values, scale = real(*args)
        return values, scale * 3  # a wrong divisor

    monkeypatch.setattr(forward_module, solver, corrupted)
    with pytest.raises(ArithmeticError, match="does not satisfy"):
        forward_module.solve_block(matrix, rows, sources)


def test_large_blocks_take_the_chunked_solve_and_agree(monkeypatch):
    """Random chains solved with every loop sent to the chunked FLINT solve give the
    same Fractions as with every small loop by its remembered inverse."""
    for seed in range(6):
        graph = explore(RandomChain(seed, 30))
        with monkeypatch.context() as patched:
            patched.setattr(forward_module, "_seen_before", lambda matrix: True)
            first = forward_pass(graph)
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 0)
        _no_lifting(monkeypatch)
        second = forward_pass(graph)
        monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 32)
        assert (first.absorption, first.never_ends, first.expected_steps, first.expected_rewards) == (
            second.absorption,
            second.never_ends,
            second.expected_steps,
            second.expected_rewards,
        )


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


SYNTHETIC = {
    "contest chain": lambda: ContestChain(size=80, branches=12, seed=2, reach=20),
    "contest chain with decisions": lambda: ContestChain(size=60, branches=8, seed=3, reach=15, decision_every=5),
    "tug of war": lambda: TugOfWar(reach=5),
    "gambler's ruin": lambda: GamblersRuin(goal=9, start=4, up=2, down=3),
}


@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_forward_pass_on_the_synthetic_models_matches_the_backward_solver(name):
    """The models the benchmarks use (self-loops, 2-cycles, long chains, decisions):
    identical Fractions to the backward solver's own expectations, and the float
    preview close to them."""
    assert_forward_matches_backward(explore(SYNTHETIC[name]()))
