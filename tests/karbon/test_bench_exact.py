"""Benchmarks of exact Karbon solves (fixed chains and optimal play), explore included.

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/karbon/test_bench_exact.py --benchmark-only``. The peers' side-by-side
figures come from ``scripts/bench_karbon_peers.py`` (Storm) and
``scripts/bench_karbon_optimal.py`` (state counts under optimal play).
"""

import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, contest_odds

ISSUE_CASE = dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1)


def _solve(setup, player, narrator):
    return contest_odds(setup, player=player, narrator=narrator, progress=False)


def test_benchmark_fixed_a3_c3_w3_p1(benchmark):
    setup = ContestSetup(ability=3, challenge=3, consequence=3, peril=1)
    result = benchmark.pedantic(_solve, args=(setup, PlayerPolicy(), NarratorPolicy()), rounds=3, iterations=1)
    assert result.states == 2459 and result.win + result.loss + result.tie == 1


@pytest.mark.parametrize("narrator_kind", ["fixed", "optimal"])
def test_benchmark_optimal_player_d8_v_d8(benchmark, narrator_kind):
    setup = ContestSetup(**ISSUE_CASE)
    result = benchmark.pedantic(
        _solve, args=(setup, PlayerPolicy(kind="optimal"), NarratorPolicy(kind=narrator_kind)), rounds=3, iterations=1
    )
    benchmark.extra_info["states"] = result.states
    assert result.win + result.loss + result.tie + result.never_ends == 1


# -- issue 14's goal rows (one round each: the large ones take minutes) ----------------------

GOAL_ROWS = {
    "A5 v C5, W3 P1": (dict(ability=5, challenge=5, consequence=3, peril=1), "fixed"),
    "A5 v C5, W5 P2": (dict(ability=5, challenge=5, consequence=5, peril=2), "fixed"),
    "A3 v C2, W2 P0, F2, Training, risk=always": (
        dict(ability=3, challenge=2, consequence=2, peril=0, fortune=2, training=True),
        "risk=always",
    ),
    "A3 v C3, W3 P1, risk=always": (dict(ability=3, challenge=3, consequence=3, peril=1), "risk=always"),
}


@pytest.mark.parametrize("row", list(GOAL_ROWS))
def test_benchmark_goal_row(benchmark, row):
    from exactdice.karbon import parse_player_policy

    setup_kwargs, player = GOAL_ROWS[row]
    setup = ContestSetup(**setup_kwargs)
    result = benchmark.pedantic(
        _solve, args=(setup, parse_player_policy(player), NarratorPolicy()), rounds=1, iterations=1
    )
    benchmark.extra_info.update(
        states=result.states, transitions=result.transitions, digits=len(str(result.win.denominator))
    )
    assert result.win + result.loss + result.tie + result.never_ends == 1


def test_benchmark_float_preview_a5_c5_w3_p1(benchmark):
    """The float preview (``--float``) of the first goal row: exploring plus the numpy pass."""
    setup = ContestSetup(ability=5, challenge=5, consequence=3, peril=1)
    result = benchmark.pedantic(
        contest_odds, args=(setup,), kwargs=dict(arithmetic="float", progress=False), rounds=1, iterations=1
    )
    assert abs(result.win + result.loss + result.tie + result.never_ends - 1) < 1e-9


@pytest.mark.parametrize("path", ["exact", "exact, loops in this process", "float"])
def test_benchmark_forward_pass_alone_a5_c5_w3_p1(benchmark, path):
    """The forward pass alone (exact with a loop worker where it pays, exact in one
    process, or the float preview) on one explored A5 v C5, W3 P1 graph: what the solve
    costs beside exploring."""
    from exactdice.markov.forward import forward_pass

    graph = _explore_fixed(dict(ability=5, challenge=5, consequence=3, peril=1))
    options = dict(exact=path != "float", workers=0 if path == "exact, loops in this process" else None)
    result = benchmark.pedantic(forward_pass, args=(graph,), kwargs=options, rounds=1, iterations=1)
    benchmark.extra_info.update(
        states=graph.num_states, transitions=graph.num_transitions, denominator_bits=result.denominator_bits
    )
    total = sum(result.absorption.values()) + result.never_ends
    assert total == 1 if path != "float" else abs(total - 1) < 1e-9


def _explore_fixed(setup_kwargs):
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.ruleset import Rules
    from exactdice.markov import explore

    setup = ContestSetup(**setup_kwargs)
    player, narrator = PlayerPolicy(), NarratorPolicy()
    start = setup.start(player, narrator)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator), progress=False)


@pytest.mark.parametrize("path", ["forward pass alone", "backward + forward"])
def test_benchmark_solve_paths_a4_c3(benchmark, path):
    """The fixed chain A4 v C3, W3 P1 solved both ways on one explored graph (the
    backward pass is what per-state values and optimal play still use)."""
    from exactdice.markov import solve

    graph = _explore_fixed(dict(ability=4, challenge=3, consequence=3, peril=1))
    solution = benchmark.pedantic(
        solve, args=(graph,), kwargs=dict(all_states=path != "forward pass alone"), rounds=3, iterations=1
    )
    assert sum(solution.absorption.values()) + solution.never_ends == 1
