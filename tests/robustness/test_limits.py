"""The memory budget and the size parser of `exactdice.limits`."""

from __future__ import annotations

import pytest

from exactdice import limits
from exactdice.errors import InputError, TooLargeError
from exactdice.limits import check_memory, parse_size, set_memory_budget
from exactdice.processes import fork_supported


@pytest.fixture
def small_budget(monkeypatch):
    """A budget below this process's size: half of what it uses now."""
    monkeypatch.delenv(limits.MEMORY_ENVIRONMENT_VARIABLE, raising=False)
    set_memory_budget(limits.resident_memory() // 2, export=False)
    yield
    set_memory_budget(None, export=False)


def test_sizes_read_binary_units_and_refuse_nonsense():
    assert parse_size("8G") == 8 * 2**30
    assert parse_size("512m") == 512 * 2**20
    assert parse_size("1.5GiB") == 3 * 2**29
    assert parse_size(str(2**30)) == 2**30
    for text in ("lots", "", "-1G", "8Q", "１G"):
        with pytest.raises(InputError, match="max_memory: .* is not a size"):
            parse_size(text)
    with pytest.raises(InputError, match="too small; give at least 64.0 MiB"):
        parse_size("1M")


def test_the_default_is_half_the_machine(monkeypatch):
    monkeypatch.delenv(limits.MEMORY_ENVIRONMENT_VARIABLE, raising=False)
    set_memory_budget(None, export=False)
    import psutil

    assert limits.memory_budget() <= psutil.virtual_memory().total // 2 + 1
    assert limits.memory_budget() >= 64 * 2**20


def test_the_environment_variable_sets_the_budget(monkeypatch):
    monkeypatch.setenv(limits.MEMORY_ENVIRONMENT_VARIABLE, "3G")
    set_memory_budget(None, export=False)
    try:
        assert limits.memory_budget() == 3 * 2**30
    finally:
        monkeypatch.delenv(limits.MEMORY_ENVIRONMENT_VARIABLE)
        set_memory_budget(None, export=False)


def test_check_memory_names_the_size_and_how_to_raise_it(small_budget):
    with pytest.raises(TooLargeError) as error:
        check_memory("while testing", force=True)
    message = str(error.value)
    assert message.startswith("max_memory: the process reached ")  # the parameter; the CLI shows its flag
    assert "while testing, past the memory budget of " in message
    assert "raise it with `max_memory` (e.g. " in message and "EXACTDICE_MAX_MEMORY" in message


def test_the_explorer_stops_at_the_budget_with_the_states_reached(small_budget):
    from exactdice.markov import explore
    from exactdice.markov.synthetic import GamblersRuin

    limits._next_check = 0.0
    with pytest.raises(TooLargeError, match=r"while exploring \([0-9,]+ states\), past the memory budget"):
        explore(GamblersRuin(goal=1000, start=500, up=1, down=1))


def test_within_the_budget_nothing_happens():
    set_memory_budget(2**40, export=False)
    try:
        check_memory("while testing", force=True)
    finally:
        set_memory_budget(None, export=False)


@pytest.mark.parametrize("workers", [0, 1])
def test_the_exact_pass_stops_past_the_budget(small_budget, monkeypatch, workers):
    """A fixed chain's forward pass checks the budget as it goes (with the loops in this
    process or in a worker), and stops with the budget's message."""
    from exactdice.markov import explore, loop_pool
    from exactdice.markov.forward import forward_pass
    from exactdice.markov.synthetic import ContestChain
    from exactdice.processes import fork_supported

    if workers and not fork_supported():
        pytest.skip("the loop worker is forked (Linux only)")
    monkeypatch.setattr(loop_pool, "MIN_TRANSITIONS", 0)
    monkeypatch.setattr(loop_pool, "MIN_LOOPS", 1)
    set_memory_budget(None, export=False)
    graph = explore(ContestChain(size=300, branches=8, seed=1), workers=0)
    set_memory_budget(limits.resident_memory() // 2, export=False)
    with pytest.raises(TooLargeError, match="while solving"):
        forward_pass(graph, workers=workers)


def test_counted_worker_processes_spend_the_budget(monkeypatch):
    """`check_memory` adds the worker processes one solve counts (`count_workers`); here
    this process stands in for a worker, so it is counted twice."""
    import os

    monkeypatch.delenv(limits.MEMORY_ENVIRONMENT_VARIABLE, raising=False)
    set_memory_budget(int(limits.resident_memory() * 1.5), export=False)
    try:
        check_memory(force=True)
        limits.count_workers([os.getpid()])
        with pytest.raises(TooLargeError, match="with its 1 worker processes"):
            check_memory(force=True)
        limits.forget_workers([os.getpid()])
        check_memory(force=True)
    finally:
        limits.forget_workers([os.getpid()])
        set_memory_budget(None, export=False)


def test_forked_workers_are_counted_while_they_run():
    from exactdice.processes import ForkedWorkers, fork_supported

    if not fork_supported():
        pytest.skip("workers are forked (Linux only)")
    workers = ForkedWorkers(2, abs, "test")
    pids = {process.pid for process in workers._processes}
    assert len(pids) == 2 and pids <= limits._worker_pids
    workers.send(1, -4)
    assert workers.receive() == (1, 4)
    workers.close()
    assert not pids & limits._worker_pids


def test_a_bounded_search_stops_at_the_budget_with_the_bounds_it_has(small_budget):
    """Like its time limit: the search returns sound bounds, stopped "memory"."""
    from exactdice.markov.bounded import bounded_solve
    from exactdice.markov.synthetic import GamblersRuin

    limits._next_check = 0.0
    found = bounded_solve(GamblersRuin(goal=200, start=100, up=1, down=1), precision=1e-12)
    assert found.stopped == "memory" and found.lower <= 0.5 <= found.upper


@pytest.mark.skipif(not fork_supported(), reason="the searches run in forked worker processes")
def test_a_split_bounded_search_stops_at_the_budget_with_the_bounds_it_has(small_budget):
    from exactdice.markov.bounded import BoundedSolver
    from exactdice.markov.bounded_split import split_bounded_run
    from exactdice.markov.synthetic import GamblersRuin

    limits._next_check = 0.0
    parts = [GamblersRuin(goal=200, start=100, up=1, down=1), GamblersRuin(goal=200, start=20, up=1, down=1)]
    found, best = split_bounded_run(parts, BoundedSolver, precision=1e-12)
    assert found.stopped == "memory" and found.lower <= 0.5 <= found.upper
