"""Benchmarks of the exact solve alone under optimal play (the MDP rows of
``scripts/bench_karbon_peers.py``, whose Storm figures are in the README).

Skipped by default (``--benchmark-skip`` in the pytest options); run with
``pytest tests/karbon/test_bench_optimal_solve.py --benchmark-only``. The graph is
explored once per case; each round solves it again (values only, the default, or with
every state's outcome vector, as ``--explain`` asks).
"""

import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.solve import payoffs
from exactdice.markov import explore, solve

CASES = {
    "d6 v d10, pool d4, reserve d4, W1 P1": dict(
        player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1
    ),
    "d8 v d8, pool d6, reserve d6, W2 P1": dict(
        player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1
    ),
}
_graphs: dict = {}


def _graph(case, narrator_kind):
    key = (case, narrator_kind)
    if key not in _graphs:
        player, narrator = PlayerPolicy(kind="optimal"), NarratorPolicy(kind=narrator_kind)
        start = ContestSetup(**CASES[case]).start(player, narrator)
        _graphs[key] = explore(
            KarbonModel(start.sizes, start.situation(), Rules(objective="win"), player, narrator), progress=False
        )
    return _graphs[key]


@pytest.mark.parametrize("all_states", [False, True], ids=["values only", "state vectors"])
@pytest.mark.parametrize("narrator_kind", ["fixed", "optimal"])
@pytest.mark.parametrize("case", list(CASES))
def test_benchmark_optimal_solve(benchmark, case, narrator_kind, all_states):
    graph = _graph(case, narrator_kind)
    payoff, endless = payoffs(Rules(objective="win"))
    solution = benchmark.pedantic(
        solve,
        args=(graph,),
        rounds=3,
        iterations=1,
        kwargs=dict(payoff=payoff, nonterminating_payoff=endless, progress=False, all_states=all_states),
    )
    benchmark.extra_info.update(states=graph.num_states, transitions=graph.num_transitions)
    assert sum(solution.absorption.values()) + solution.never_ends == 1 and solution.strategy
