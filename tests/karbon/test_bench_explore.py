"""Benchmarks of exploring Karbon state graphs alone (no solve), for the issue-14 rows
whose exploration finishes in seconds.

Skipped by default (``--benchmark-skip``); run with
``pytest tests/karbon/test_bench_explore.py --benchmark-only``. ``extra_info`` carries
states and transitions, so transitions a second follow from the timings.
"""

import pytest

from exactdice.karbon import ContestSetup, NarratorPolicy, parse_player_policy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.ruleset import Rules
from exactdice.markov import explore

ROWS = {
    "A3 v C3, W3 P1": (dict(ability=3, challenge=3, consequence=3, peril=1), "fixed", 2461),
    "A4 v C3, W3 P1": (dict(ability=4, challenge=3, consequence=3, peril=1), "fixed", 3345),
    "A5 v C5, W3 P1": (dict(ability=5, challenge=5, consequence=3, peril=1), "fixed", 9906),
    "d8 v d8, pool d6,d8, W2 P1, risk=always": (
        dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=2, peril=1),
        "risk=always", None),
}


def _explore(setup, player, narrator):
    start = setup.start(player, narrator)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator), progress=False)


@pytest.mark.parametrize("row", list(ROWS))
def test_benchmark_explore(benchmark, row):
    setup_kwargs, player, states = ROWS[row]
    policy = parse_player_policy(player)
    graph = benchmark.pedantic(_explore, args=(ContestSetup(**setup_kwargs), policy, NarratorPolicy()),
                               rounds=1, iterations=1)
    benchmark.extra_info.update(states=graph.num_states, transitions=graph.num_transitions)
    if states is not None:  # the fixed chains' graphs are pinned by the solve tests
        assert graph.num_states == states
    assert graph.num_transitions > graph.num_states
