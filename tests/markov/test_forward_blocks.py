"""The forward pass's loops: solved on their inflow divided by the cofactor of its own
denominator, by every block path (remembered inverse, 2-adic lifting, odd lifting,
chunked FLINT solve), and what leaves them passed on as narrow numerators. Checked against the dense
sympy reference (plain Fractions) and the backward solver: identical Fractions, and
every broken exactness check raises instead of returning."""

from __future__ import annotations

import random

import pytest

from exactdice.markov import Chance, Terminal, explore
from exactdice.markov import forward as forward_module
from exactdice.markov.forward import forward_pass

from .reference import dense_evaluate, reachable_nodes
from .test_forward import assert_matches_reference, backward_answers


class LoopsBehindChance:
    """Acyclic chance states with varied totals feeding loops of several sizes that feed
    later loops: each loop's inflow has a denominator of its own, well below the bound's."""

    outcomes = ("win", "loss", "tie")
    reward_names = ("gold",)

    def __init__(self, seed, loops=4, loop_size=6, lead=6):
        rng = random.Random(seed)
        self.nodes = {}
        clusters = [[("loop", c, i) for i in range(loop_size)] for c in range(loops)]
        leads = [("lead", i) for i in range(lead)]
        ends = ["win", "loss", "tie"]
        for i, state in enumerate(leads):  # a chain of chance states into the first loops
            later = leads[i + 1 :] + clusters[0] + clusters[1]
            self.nodes[state] = Chance(
                tuple((rng.choice([1, 2, 3, 5, 7, 11, 13]), rng.choice(later), None) for _ in range(rng.randint(1, 3)))
            )
        for c, cluster in enumerate(clusters):
            onwards = [state for later in clusters[c + 1 :] for state in later] + ends
            for i, state in enumerate(cluster):
                branches = [(rng.randint(1, 9), cluster[(i + 1) % len(cluster)], (rng.randint(0, 3),))]
                branches += [(rng.randint(1, 9), rng.choice(cluster), None) for _ in range(rng.randint(0, 2))]
                branches += [
                    (rng.randint(1, 5), rng.choice(onwards), (rng.randint(-2, 2),)) for _ in range(rng.randint(1, 2))
                ]
                self.nodes[state] = Chance(tuple(branches))

    def initial_state(self):
        return ("lead", 0)

    def expand(self, state):
        return Terminal(state) if isinstance(state, str) else self.nodes[state]


def _answers(result):
    return result.absorption, result.never_ends, result.expected_steps, result.expected_rewards


BLOCK_PATHS = ["remembered inverse", "2-adic lifting", "odd lifting", "chunked FLINT solve"]
_LIFTINGS = {"2-adic lifting": "solve_by_lifting", "odd lifting": "solve_by_odd_lifting"}


def _take_block_path(path, monkeypatch) -> list:
    """Send every loop down one block path; returns a list that records each lifting
    that applied (so a test can check the path it names was taken)."""
    lifted = []

    def recorded(real):
        def lifting(rows, sources):
            found = real(rows, sources)
            if found is not None:
                lifted.append(len(rows))
            return found

        return lifting

    monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 32 if path == "remembered inverse" else 0)
    for name, function in _LIFTINGS.items():
        real = getattr(forward_module, function)
        monkeypatch.setattr(forward_module, function, recorded(real) if path == name else lambda rows, sources: None)
    return lifted


@pytest.mark.parametrize("path", BLOCK_PATHS)
@pytest.mark.parametrize("seed", range(12))
def test_loops_behind_chance_match_the_reference_by_every_block_path(seed, path, monkeypatch):
    _take_block_path(path, monkeypatch)
    monkeypatch.setattr(forward_module, "_seen_before", lambda matrix: True)  # not only on a matrix's return
    model = LoopsBehindChance(seed, loop_size=3 + seed % 5)
    graph = explore(model)
    result = forward_pass(graph)
    assert_matches_reference(result, dense_evaluate(model, reachable_nodes(model), {}, {"win": 1}))
    absorption, never, steps, rewards, _ = backward_answers(graph)
    assert _answers(result) == (absorption, never, steps, rewards)


@pytest.mark.parametrize("path, least", [("2-adic lifting", 8), ("odd lifting", 12)])
def test_the_liftings_apply_to_most_of_those_models(path, least, monkeypatch):
    """The lifting paths above are not all fallbacks: the 2-adic lifting applies in most
    of the seeds (it refuses a loop whose matrix is singular mod 2, which random weights
    sometimes give, as do risk=always's loops), the odd lifting in all of them."""
    lifted = _take_block_path(path, monkeypatch)
    applied = 0
    for seed in range(12):
        lifted.clear()
        forward_pass(explore(LoopsBehindChance(seed, loop_size=3 + seed % 5)))
        applied += bool(lifted)
    assert applied >= least


class RecurringLoops:
    """The same loop (same weights, same rewards) at several levels, each entered at
    two or three of its states (one of two patterns) with inflows that differ from level
    to level, leaving to the next level and to the outcomes (a loop's matrix recurs, so the
    small-loop inverse is reused with other right sides)."""

    outcomes = ("win", "loss")
    reward_names = ("gold",)

    def __init__(self, seed, levels=6, size=5):
        rng = random.Random(seed)
        self.levels, self.size = levels, size
        self.inside = [
            [(rng.randint(1, 6), (i + 1) % size, (rng.randint(0, 3),))]
            + [(rng.randint(1, 4), rng.randrange(size), (1,)) for _ in range(rng.randint(0, 2))]
            for i in range(size)
        ]
        self.out = [(rng.randint(1, 3), rng.randrange(size), (rng.randint(-1, 2),)) for _ in range(size)]
        patterns = [rng.sample(range(size), rng.randint(2, 3)) for _ in range(2)]
        self.feeds = [[(rng.randint(1, 9), entry) for entry in patterns[level % 2]] for level in range(levels)]

    def initial_state(self):
        return ("feed", 0)

    def expand(self, state):
        if isinstance(state, str):
            return Terminal(state)
        if state[0] == "feed":
            level = state[1]
            return Chance(tuple((weight, ("loop", level, entry), None) for weight, entry in self.feeds[level]))
        _, level, i = state
        later = ("feed", level + 1) if level + 1 < self.levels else "loss"
        weight, _, reward = self.out[i]
        leaving = (weight, "win" if i == 0 else later if i % 2 else "loss", reward)
        return Chance(tuple((w, ("loop", level, j), r) for w, j, r in self.inside[i]) + (leaving,))


@pytest.mark.parametrize("path", BLOCK_PATHS)
@pytest.mark.parametrize("seed", range(8))
def test_recurring_loops_entered_at_several_states_match_the_reference(seed, path, monkeypatch):
    """Levels of one loop entered at two or three states with inflows that differ from
    level to level, rewards on the loop's edges: identical Fractions to the reference and
    the backward solver by every block path."""
    _take_block_path(path, monkeypatch)
    forward_module._seen_matrices.clear()
    forward_module._block_inverses.clear()
    model = RecurringLoops(seed)
    graph = explore(model)
    result = forward_pass(graph)
    assert_matches_reference(result, dense_evaluate(model, reachable_nodes(model), {}, {"win": 1}))
    absorption, never, steps, rewards, _ = backward_answers(graph)
    assert _answers(result) == (absorption, never, steps, rewards)
    if path == "remembered inverse":  # the loop's matrix recurred: later levels took the inverse
        assert forward_module._block_inverses


def test_loop_right_sides_are_narrower_than_the_final_denominator(monkeypatch):
    """Each loop solves over the join of its own inflows' classes: a divisor of the final
    ``Q``, and here a proper one (so the loops really solve narrower right sides)."""
    graph = explore(LoopsBehindChance(3, loops=5, loop_size=5))
    seen = []
    real = forward_module._Pass.loop_parts

    def recording(flow, live):
        klass, parts = real(flow, live)
        seen.append((flow, klass))
        return klass, parts

    monkeypatch.setattr(forward_module._Pass, "loop_parts", recording)
    result = forward_pass(graph)
    flow = seen[0][0]
    bound = 2 ** (result.denominator_bits - 1)  # Q's size
    numbers = [int(flow.classes.number(klass)) for _, klass in seen]
    assert len(numbers) == 5
    parts = [*flow.collected, flow.steps, *flow.rewards]
    final = int(flow.classes.number(flow.classes.join({k for amounts in parts for k in amounts})))
    assert final.bit_length() == result.denominator_bits and final >= bound
    assert all(final % number == 0 for number in numbers)
    assert any(number < final for number in numbers)


def test_a_loop_denominator_cut_short_is_caught(monkeypatch):
    """A loop whose solution's denominator loses a factor (a corrupted divisor) fails the
    multiply-back check instead of returning (the check can fail), by every path."""
    graph = explore(LoopsBehindChance(1))
    for solver in ("_solve_by_inverse", "_solve_wide"):
        real = getattr(forward_module, solver)

        def short(*args, _real=real):
            numerators, denominator = _real(*args)
            factor = forward_module.small_prime_factors(int(denominator))[0][0] if denominator > 1 else 1
            return numerators, denominator // factor if factor > 1 else denominator + 1

        with monkeypatch.context() as patched:
            patched.setattr(forward_module, solver, short)
            patched.setattr(forward_module, "_SMALL_BLOCK", 32 if solver == "_solve_by_inverse" else 0)
            patched.setattr(forward_module, "_seen_before", lambda matrix: True)
            forward_module._block_inverses.clear()
            with pytest.raises(ArithmeticError, match="does not satisfy"):
                forward_module.forward_pass(graph)


@pytest.mark.parametrize("path", BLOCK_PATHS)
def test_block_solve_comes_back_exactly(path, monkeypatch):
    """``m / d`` solves A x = sources exactly for wide, negative and narrow right sides
    (one that leaves a fraction included); a wrong right side is no solution."""
    from fractions import Fraction

    lifted = _take_block_path(path, monkeypatch)
    monkeypatch.setattr(forward_module, "_seen_before", lambda matrix: True)
    rng = random.Random(11)
    size = 7
    rows = [{j: (rng.randint(20, 40) if i == j else -rng.randint(0, 3)) for j in range(size)} for i in range(size)]
    matrix = forward_module.block_system(rows)
    for _ in range(4):
        sources = [rng.choice([-1, 1]) * rng.getrandbits(rng.choice([5, 9000, 20000])) for _ in range(size)]
        numerators, denominator = forward_module.solve_block(matrix, rows, sources)
        values = [Fraction(int(m), int(denominator)) for m in numerators]
        assert [sum(row.get(j, 0) * values[j] for j in range(size)) for row in rows] == sources
    if path in _LIFTINGS:
        assert lifted, "the lifting path fell back to FLINT"


def test_float_preview_through_loops_is_close_to_the_exact_pass():
    graph = explore(LoopsBehindChance(5))
    exact, preview = forward_pass(graph), forward_pass(graph, exact=False)
    for name in graph.outcomes:
        assert preview.absorption[name] == pytest.approx(float(exact.absorption[name]), abs=1e-9)
    assert preview.expected_steps == pytest.approx(float(exact.expected_steps), rel=1e-9)


def test_a_small_loop_takes_its_inverse_only_when_its_matrix_recurs(monkeypatch):
    """The first sight of a small loop's matrix goes to the wide solve, a return to the
    remembered inverse; both give the same exact solution."""
    calls = []
    for name in ("_solve_by_inverse", "_solve_wide"):
        real = getattr(forward_module, name)

        def recording(*args, _real=real, _name=name):
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(forward_module, name, recording)
    rows = [{0: 5, 1: -2}, {0: -1, 1: 7, 2: -3}, {1: -1, 2: 4}]
    matrix = forward_module.block_system(rows)
    forward_module._seen_matrices.pop(id(matrix), None)
    forward_module._block_inverses.pop(id(matrix), None)
    first = forward_module.solve_block(matrix, rows, [10**40, 3, -7])
    second = forward_module.solve_block(matrix, rows, [10**40, 3, -7])
    assert calls == ["_solve_wide", "_solve_by_inverse"]
    assert [m * second[1] for m in first[0]] == [m * first[1] for m in second[0]]


def _fresh_pass(graph):
    """The forward pass meeting every loop for the first time (a loop met again may take
    another way to the same Fractions, with a denominator not reduced)."""
    for remembered in (forward_module._block_inverses, forward_module._seen_matrices, forward_module._systems):
        remembered.clear()
    return forward_pass(graph, workers=0)


@pytest.mark.parametrize("seed", range(3))
def test_waiting_inflows_gathered_change_nothing(seed, monkeypatch):
    """A waiting state's inflow gathered into one class (past one, two or no classes
    apart; compiled and in Python; every state's at once past the memory share) gives
    the identical result, its denominator's bits included."""
    graph = explore(LoopsBehindChance(seed, loops=10, loop_size=4, lead=8))
    expected = _fresh_pass(graph)
    gathered: list = []
    real = forward_module._Pass.gather
    monkeypatch.setattr(
        forward_module._Pass, "gather", lambda flow, target: (gathered.append(target), real(flow, target))
    )
    for most, compiled in [(1, True), (1, False), (2, True), (1000, True)]:
        with monkeypatch.context() as python:
            python.setattr(forward_module, "MOST_PENDING_CLASSES", most)
            if not compiled:
                python.setattr(forward_module, "ChainFlows", None)
            gathered.clear()
            assert _fresh_pass(graph) == expected
            assert bool(gathered) == (most < 1000)
    monkeypatch.setattr(forward_module, "MOST_PENDING_CLASSES", 1000)
    monkeypatch.setattr(forward_module, "TIGHT_MEMORY", 0.0)  # past the share from the first loop on
    gathered.clear()
    assert _fresh_pass(graph) == expected and gathered
