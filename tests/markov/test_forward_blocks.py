"""The forward pass's loops: solved on their inflow divided by the cofactor of its own
denominator, by either block path (remembered inverse, chunked FLINT solve), and what
leaves them passed on as narrow numerators. Checked against the dense sympy reference
(plain Fractions) and the backward solver: identical Fractions, and every broken
exactness check raises instead of returning."""

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
            later = leads[i + 1:] + clusters[0] + clusters[1]
            self.nodes[state] = Chance(tuple((rng.choice([1, 2, 3, 5, 7, 11, 13]), rng.choice(later), None)
                                             for _ in range(rng.randint(1, 3))))
        for c, cluster in enumerate(clusters):
            onwards = [state for later in clusters[c + 1:] for state in later] + ends
            for i, state in enumerate(cluster):
                branches = [(rng.randint(1, 9), cluster[(i + 1) % len(cluster)], (rng.randint(0, 3),))]
                branches += [(rng.randint(1, 9), rng.choice(cluster), None) for _ in range(rng.randint(0, 2))]
                branches += [(rng.randint(1, 5), rng.choice(onwards), (rng.randint(-2, 2),))
                             for _ in range(rng.randint(1, 2))]
                self.nodes[state] = Chance(tuple(branches))

    def initial_state(self):
        return ("lead", 0)

    def expand(self, state):
        return Terminal(state) if isinstance(state, str) else self.nodes[state]


def _answers(result):
    return result.absorption, result.never_ends, result.expected_steps, result.expected_rewards


@pytest.mark.parametrize("small_block", [32, 0], ids=["remembered inverse", "chunked FLINT solve"])
@pytest.mark.parametrize("seed", range(12))
def test_loops_behind_chance_match_the_reference_by_either_block_path(seed, small_block, monkeypatch):
    monkeypatch.setattr(forward_module, "_SMALL_BLOCK", small_block)
    model = LoopsBehindChance(seed, loop_size=3 + seed % 5)
    graph = explore(model)
    result = forward_pass(graph)
    assert_matches_reference(result, dense_evaluate(model, reachable_nodes(model), {}, {"win": 1}))
    absorption, never, steps, rewards, _ = backward_answers(graph)
    assert _answers(result) == (absorption, never, steps, rewards)


def test_loop_inflow_denominators_are_smaller_than_the_bound_and_divide_it():
    """The bound pass records each loop's inflow denominator: a proper divisor of Q
    here (so the loops really solve narrower right sides)."""
    graph = explore(LoopsBehindChance(3, loops=5, loop_size=5))
    plan = forward_module._Plan(graph, {}, None, graph.strongly_connected_components(), forward_module.block_system)
    plan.alive = forward_module._alive_states(plan)
    bound = forward_module.denominator_bound(plan)
    assert len(plan.block_inflow) == 5
    assert all(bound % inflow == 0 for inflow in plan.block_inflow.values())
    assert any(inflow < bound for inflow in plan.block_inflow.values())


def test_a_loop_inflow_bound_missing_a_factor_is_caught(monkeypatch):
    """Dividing a loop's inflow by a cofactor that does not divide it raises (the check
    can fail): here the recorded inflow denominator is cut short."""
    graph = explore(LoopsBehindChance(1))
    real = forward_module.denominator_bound

    def short(plan):
        bound = real(plan)
        for index, inflow in plan.block_inflow.items():
            if inflow > 1:
                factor = forward_module.small_prime_factors(int(inflow))[0][0]
                plan.block_inflow[index] = inflow // factor
        return bound

    monkeypatch.setattr(forward_module, "denominator_bound", short)
    with pytest.raises(ArithmeticError, match="denominator bound"):
        forward_module.forward_pass(graph)


@pytest.mark.parametrize("small_block", [32, 0], ids=["remembered inverse", "chunked FLINT solve"])
def test_block_solution_with_a_scale_comes_back_exactly(small_block, monkeypatch):
    """``n = factor * m`` solves A n = sources exactly for wide, negative and narrow
    right sides, whether or not the solution's denominator divides the scale; a source
    the scale does not divide raises."""
    monkeypatch.setattr(forward_module, "_SMALL_BLOCK", small_block)
    rng = random.Random(11)
    size = 7
    rows = [{j: (rng.randint(20, 40) if i == j else -rng.randint(0, 3)) for j in range(size)} for i in range(size)]
    matrix, determinant = forward_module.block_system(rows)
    for scale in (1, int(determinant) * 6, 35, 2**70 + 1):
        solution = [scale * rng.choice([-1, 1]) * rng.getrandbits(rng.choice([5, 9000, 20000]))
                    for _ in range(size)]
        sources = [sum(row.get(j, 0) * solution[j] for j in range(size)) for row in rows]
        numerators, factor = forward_module._block_solution(matrix, sources, None, list(range(size)), scale)
        assert [int(factor * m) for m in numerators] == solution
    sources[2] += 1
    with pytest.raises(ArithmeticError, match="denominator bound"):
        forward_module._block_solution(matrix, sources, None, list(range(size)), 2**70 + 1)


def test_float_preview_through_loops_is_close_to_the_exact_pass():
    graph = explore(LoopsBehindChance(5))
    exact, preview = forward_pass(graph), forward_pass(graph, exact=False)
    for name in graph.outcomes:
        assert preview.absorption[name] == pytest.approx(float(exact.absorption[name]), abs=1e-9)
    assert preview.expected_steps == pytest.approx(float(exact.expected_steps), rel=1e-9)
