"""`explore` with worker processes expanding states (`exactdice.markov.expansion_pool`):
the same graph as one process builds, array for array, on every kind of node; a
worker's error raised in the caller; a worker that dies reported, not waited for."""

import multiprocessing
import os

import pytest

from exactdice.errors import InputError, InternalError, TooLargeError
from exactdice.karbon import ContestSetup, Rules
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.markov import Chance, Terminal, explore, graph as graph_module
from exactdice.markov.expansion_pool import ExpansionPool
from exactdice.processes import fork_supported, solve_workers
from exactdice.markov.synthetic import ContestChain, GamblersRuin

from .test_graph_keyed import KeyedWalk

pytestmark = pytest.mark.skipif(not fork_supported(), reason="worker processes are forked (Linux only)")

GRAPH_FIELDS = (
    "states",
    "kind",
    "data",
    "offsets",
    "targets",
    "weights",
    "chance_reward_mass",
    "action_names",
    "action_rewards",
    "index",
)


@pytest.fixture
def pool_at_once(monkeypatch):
    """Start the workers with the first state and hand over even a frontier of one; the
    list it gives counts the pools started."""
    monkeypatch.setattr(graph_module, "PARALLEL_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(graph_module, "PARALLEL_MIN_SECONDS_PER_STATE", 0.0)
    monkeypatch.setattr(graph_module, "_PARALLEL_MIN_FRONTIER", 0)
    started = []
    original = ExpansionPool.__init__

    def counted(self, model, workers, reward_width):
        started.append(workers)
        original(self, model, workers, reward_width)

    monkeypatch.setattr(ExpansionPool, "__init__", counted)
    return started


def assert_same_graph(one, other):
    for name in GRAPH_FIELDS:
        assert getattr(one, name) == getattr(other, name), name


def _karbon_model(setup_kwargs, player, narrator, rules=()):
    setup = ContestSetup(**setup_kwargs)
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    start = setup.start(p, n)
    return KarbonModel(start.sizes, start.situation(), Rules().with_rules(list(rules)), p, n)


KARBON_CASES = [
    # fixed chain: round starts as keyed chance nodes, the rounds walked inside them
    (dict(ability=3, challenge=3, consequence=3, peril=1), "fixed", "fixed", ()),
    # both sides optimal: decisions and plain chance nodes inside the round
    (
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={}, consequence=2, peril=1),
        "optimal",
        "optimal",
        (),
    ),
    # the rolls split off (`split_rolls`) and a coin-flipping narrator
    (
        dict(player_dice={6: 1, 8: 1}, narrator_dice={10: 1}, pool={6: 1}, reserve={}, consequence=2, peril=1),
        "risk=always",
        "random",
        ("sudden_death=on",),
    ),
]


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("setup_kwargs,player,narrator,rules", KARBON_CASES)
def test_karbon_graphs_are_the_same_with_workers(
    python_walk, pool_at_once, setup_kwargs, player, narrator, rules, workers
):
    alone = explore(_karbon_model(setup_kwargs, player, narrator, rules), workers=0, progress=False)
    shared = explore(_karbon_model(setup_kwargs, player, narrator, rules), workers=workers, progress=False)
    assert_same_graph(alone, shared)
    assert alone.num_states > 100 and pool_at_once == [workers]
    assert not multiprocessing.active_children()  # the workers are gone


@pytest.mark.parametrize(
    "model",
    [
        GamblersRuin(goal=60, start=30, up=2, down=3),  # a frontier of one or two states
        ContestChain(size=400, branches=12, seed=3),  # plain chance, self-loops, rewards
        ContestChain(size=300, branches=6, seed=5, decision_every=7),  # decisions
        KeyedWalk(40),  # a keyed table of the model's own
        KeyedWalk(40, bad_weight=2**70),  # weights past 64 bits
    ],
    ids=["ruin", "chain", "decisions", "keyed", "big-weights"],
)
def test_synthetic_graphs_are_the_same_with_workers(pool_at_once, model):
    assert_same_graph(explore(model, workers=0), explore(model, workers=2))
    assert pool_at_once == [2]


def test_the_pool_waits_for_its_time(monkeypatch):
    """Small graphs never fork: the workers start only after `PARALLEL_AFTER_SECONDS`."""
    monkeypatch.setattr(
        "exactdice.markov.expansion_pool.ExpansionPool.__init__", lambda *args: pytest.fail("a pool was started")
    )
    explore(ContestChain(size=400, branches=12, seed=3), workers=2)


class _SlowWalk(GamblersRuin):
    """A walk whose states each take ``delay`` seconds to expand."""

    def __init__(self, goal, delay):
        super().__init__(goal=goal, start=goal // 2, up=1, down=1)
        self.delay = delay

    def expand(self, money):
        import time

        if self.delay:
            time.sleep(self.delay)
        return super().expand(money)


@pytest.mark.parametrize(
    "goal, delay, expected", [(100_000, 0.0, []), (2000, 0.0002, [2])], ids=["cheap states", "costly states"]
)
def test_the_pool_starts_only_where_states_cost_enough(pool_at_once, monkeypatch, goal, delay, expected):
    """Past the time limit, workers start only if a state costs `PARALLEL_MIN_SECONDS_PER_STATE`
    or more (what crosses between processes would cost more than cheap expansions); both
    walks explore for longer than the time limit."""
    monkeypatch.setattr(graph_module, "PARALLEL_AFTER_SECONDS", 0.02)
    monkeypatch.setattr(graph_module, "PARALLEL_MIN_SECONDS_PER_STATE", 100e-6)
    explore(_SlowWalk(goal, delay), workers=2)
    assert pool_at_once == expected


class FailsAt:
    """A chain 0 -> 1 -> ... -> size whose state ``bad`` fails in a way ``how`` names."""

    outcomes = ("done",)
    reward_names = ()

    def __init__(self, size, bad, how):
        self.size, self.bad, self.how, self.parent = size, bad, how, os.getpid()

    def initial_state(self):
        return 0

    def expand(self, state):
        if state == self.bad:
            if self.how == "input":
                raise InputError("peril", "must be 0-4, got 9")
            if self.how == "unpicklable":
                raise _Unpicklable("no way back")
            if self.how == "exit" and os.getpid() != self.parent:
                os._exit(3)
        if state >= self.size:
            return Terminal("done")
        return Chance(((1, state + 1, None), (1, min(state + 2, self.size), None)))


class _Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("not picklable")


def test_a_workers_error_is_raised_in_the_caller(pool_at_once):
    with pytest.raises(InputError, match="peril: must be 0-4, got 9"):
        explore(FailsAt(200, 150, "input"), workers=2)
    with pytest.raises(InternalError, match="in a worker process: _Unpicklable: no way back"):
        explore(FailsAt(200, 150, "unpicklable"), workers=2)
    with pytest.raises(InternalError, match="positive ints"):
        explore(KeyedWalk(40, bad_weight=0), workers=2)
    assert not multiprocessing.active_children()


def test_a_worker_that_dies_is_reported(pool_at_once):
    with pytest.raises(InternalError, match=r"\(explore\) ended \(exit code 3\).*EXACTDICE_SOLVE_WORKERS=0"):
        explore(FailsAt(200, 150, "exit"), workers=2)
    assert not multiprocessing.active_children()


def test_the_state_limit_holds_with_workers(pool_at_once):
    with pytest.raises(TooLargeError, match="reached 300 states"):
        explore(ContestChain(size=2000, branches=12, seed=3), workers=2, max_states=300)


def test_workers_from_the_environment(monkeypatch):
    monkeypatch.setenv("EXACTDICE_SOLVE_WORKERS", "3")
    assert solve_workers() == 3
    monkeypatch.setenv("EXACTDICE_SOLVE_WORKERS", "0")
    assert solve_workers() == 0
    monkeypatch.setenv("EXACTDICE_SOLVE_WORKERS", "two")
    with pytest.raises(InputError, match="EXACTDICE_SOLVE_WORKERS: must be a whole number.*'two'"):
        solve_workers()
    with pytest.raises(ValueError, match="workers must be >= 0"):
        explore(GamblersRuin(goal=3, start=1, up=1, down=1), workers=-1)


def _workers_seen_in_a_child(connection):
    connection.send((fork_supported(), solve_workers()))


def test_no_workers_inside_a_worker_process(monkeypatch):
    """A table sweep's or the web server's worker explores alone: they run in parallel already."""
    monkeypatch.delenv("EXACTDICE_SOLVE_WORKERS", raising=False)
    receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_workers_seen_in_a_child, args=(sending,))
    child.start()
    assert receiving.recv() == (False, 0)
    child.join()


_KILLED_PARENT = r"""
import multiprocessing, threading, time
from exactdice.markov import graph, explore
from exactdice.markov.synthetic import GamblersRuin

class Slow(GamblersRuin):
    def expand(self, money):
        time.sleep(0.01)
        return super().expand(money)

graph.PARALLEL_AFTER_SECONDS, graph._PARALLEL_MIN_FRONTIER = 0.0, 0
def report():
    time.sleep(1.0)
    print(" ".join(str(child.pid) for child in multiprocessing.active_children()), flush=True)
threading.Thread(target=report, daemon=True).start()
explore(Slow(goal=100_000, start=50_000, up=1, down=1), workers=2)
"""


def test_workers_end_when_their_parent_is_killed():
    import signal
    import subprocess
    import sys
    import time

    import psutil

    parent = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()

    def alive(pid):
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 10
    while any(map(alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, workers))


def test_exploring_goes_on_alone_when_the_machine_will_not_fork(pool_at_once, monkeypatch):
    def refuse(self, *args):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr("exactdice.processes.ForkedWorkers.__init__", refuse)
    model = ContestChain(size=400, branches=12, seed=3)
    assert_same_graph(explore(model, workers=0), explore(model, workers=2))
    assert pool_at_once == [2]  # it was tried
