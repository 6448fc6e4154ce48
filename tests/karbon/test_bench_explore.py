"""Benchmarks of exploring Karbon state graphs alone (no solve), for the issue-14 rows
whose exploration finishes in seconds, and for the ``risk=always`` goal rows up to a
state cap (they do not finish in a benchmark's time).

Skipped by default (``--benchmark-skip``); run with
``pytest tests/karbon/test_bench_explore.py --benchmark-only``. ``extra_info`` carries
states and transitions, so states and transitions a second follow from the timings.
"""

import pytest

from exactdice.errors import TooLargeError
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
        "risk=always",
        17984,
    ),
}

#: the goal rows that do not finish here: explored up to this many states
STATE_CAP = 60_000
CAPPED_ROWS = {
    "A3 v C2, W2 P0, F2, Training, risk=always": dict(
        ability=3, challenge=2, consequence=2, peril=0, fortune=2, training=True
    ),
    "A3 v C3, W3 P1, risk=always": dict(ability=3, challenge=3, consequence=3, peril=1),
}


def _model(setup, player, narrator):
    start = setup.start(player, narrator)
    return KarbonModel(start.sizes, start.situation(), Rules(), player, narrator)


def _explore(setup, player, narrator, workers=None):
    return explore(_model(setup, player, narrator), progress=False, workers=workers)


@pytest.mark.parametrize("workers", [0, None], ids=["one process", "worker processes"])
@pytest.mark.parametrize("row", list(ROWS))
def test_benchmark_explore(benchmark, row, workers):
    """Each row in one process and with the default worker processes (one per core)."""
    setup_kwargs, player, states = ROWS[row]
    policy = parse_player_policy(player)
    graph = benchmark.pedantic(
        _explore, args=(ContestSetup(**setup_kwargs), policy, NarratorPolicy(), workers), rounds=1, iterations=1
    )
    benchmark.extra_info.update(states=graph.num_states, transitions=graph.num_transitions)
    assert graph.num_states == states  # the graphs' sizes are pinned by the solve tests too
    assert graph.num_transitions > graph.num_states


class _CountingModel:
    """The model, counting the states `explore` expands."""

    def __init__(self, model):
        self.model, self.expanded = model, 0
        self.outcomes, self.reward_names, self.initial_state = model.outcomes, model.reward_names, model.initial_state

    def expand_keyed(self, state):
        self.expanded += 1
        return self.model.expand_keyed(state)

    expand = expand_keyed


def _explore_to_cap(setup, player, narrator):
    """The states expanded when exploring stops at `STATE_CAP` states found."""
    counting = _CountingModel(_model(setup, player, narrator))
    try:
        explore(counting, max_states=STATE_CAP, progress=False)
    except TooLargeError:
        return counting.expanded
    raise AssertionError(f"the row finished under {STATE_CAP:,} states; benchmark it uncapped")


@pytest.mark.parametrize("row", list(CAPPED_ROWS))
def test_benchmark_explore_risk_always_to_a_state_cap(benchmark, row):
    expanded = benchmark.pedantic(
        _explore_to_cap,
        args=(ContestSetup(**CAPPED_ROWS[row]), parse_player_policy("risk=always"), NarratorPolicy()),
        rounds=1,
        iterations=1,
    )
    benchmark.extra_info.update(states_found=STATE_CAP, states_expanded=expanded)
    assert 0 < expanded < STATE_CAP
