"""The exact forward pass with a worker process solving loops (`exactdice.markov.loop_pool`):
the same Fractions as the pass in one process, on graphs with many loops, decisions and
Karbon chains; the worker really solves some; its errors are raised in the caller."""

import multiprocessing
import os

import pytest

from exactdice.errors import InternalError
from exactdice.karbon import ContestSetup, Rules
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.markov import explore
from exactdice.markov import forward as forward_module
from exactdice.markov import loop_pool
from exactdice.markov.forward import forward_pass
from exactdice.markov.synthetic import ContestChain
from exactdice.processes import fork_supported

from .test_forward import backward_answers
from .test_forward_blocks import LoopsBehindChance, RecurringLoops
from .test_solver import RandomGame

pytestmark = pytest.mark.skipif(not fork_supported(), reason="worker processes are forked (Linux only)")


@pytest.fixture
def worker_on_any_graph(monkeypatch):
    """Let every graph with a loop take the worker; the list it gives records the loops
    solved in this process (the rest were solved by the worker)."""
    monkeypatch.setattr(loop_pool, "MIN_TRANSITIONS", 0)
    monkeypatch.setattr(loop_pool, "MIN_LOOPS", 1)
    solved_here = []
    real = loop_pool._solve

    def counted(plan, index, parts):
        solved_here.append(os.getpid())
        return real(plan, index, parts)

    monkeypatch.setattr(loop_pool, "_solve", counted)
    return solved_here


def _answers(result):
    # not ``denominator_bits``: a loop solved by another path (a small loop's remembered
    # inverse is per process) may carry an unreduced denominator, so Q's size may differ
    return result.absorption, result.never_ends, result.expected_steps, result.expected_rewards


def _karbon_graph(setup_kwargs, player, narrator):
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    start = ContestSetup(**setup_kwargs).start(p, n)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), p, n), workers=0, progress=False)


GRAPHS = {
    "loops behind chance": lambda: explore(LoopsBehindChance(7, loops=12, loop_size=5)),
    "recurring loops": lambda: explore(RecurringLoops(3)),
    "contest chain": lambda: explore(ContestChain(size=600, branches=10, seed=4)),
    "karbon A3 v C3": lambda: _karbon_graph(dict(ability=3, challenge=3, consequence=3, peril=1), "fixed", "fixed"),
    "karbon A2 v C4, W4 P2": lambda: _karbon_graph(
        dict(ability=2, challenge=4, consequence=4, peril=2), "fixed", "random"
    ),
}


@pytest.mark.parametrize("name", GRAPHS)
def test_the_pass_with_a_loop_worker_gives_the_same_fractions(worker_on_any_graph, name):
    graph = GRAPHS[name]()
    alone = forward_pass(graph, workers=0)
    assert worker_on_any_graph == []
    shared = forward_pass(graph, workers=1)
    assert _answers(shared) == _answers(alone)
    loops = loop_pool.loops_with_flow(
        forward_module._Plan(graph, {}, bytearray([1]) * graph.num_states, graph.strongly_connected_components())
    )
    assert loops >= 5
    assert len(worker_on_any_graph) < loops  # the worker solved some
    assert set(worker_on_any_graph) <= {os.getpid()}
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("seed", range(6))
def test_the_pass_under_a_chosen_strategy_with_a_loop_worker(worker_on_any_graph, seed):
    graph = explore(RandomGame(seed, size=14))
    absorption, never, steps, rewards, solver = backward_answers(graph, {"win": 1}, 0)
    result = forward_pass(graph, solver.chosen_edge, solver.alive, solver.components, workers=1)
    assert (result.absorption, result.never_ends, result.expected_steps, result.expected_rewards) == (
        absorption,
        never,
        steps,
        rewards,
    )


def test_a_wrong_solve_in_the_worker_is_raised_here(worker_on_any_graph, monkeypatch):
    graph = explore(LoopsBehindChance(7, loops=12, loop_size=5))
    real = forward_module._solve_wide

    def cut_short(*args):
        numerators, denominator = real(*args)
        return numerators, denominator + 1

    monkeypatch.setattr(forward_module, "_solve_wide", cut_short)  # before the fork: the worker's too
    monkeypatch.setattr(forward_module, "_SMALL_BLOCK", 0)
    with pytest.raises(ArithmeticError, match="does not satisfy its system"):
        forward_pass(graph, workers=1)
    assert not multiprocessing.active_children()


def test_a_loop_worker_that_dies_is_reported(worker_on_any_graph, monkeypatch):
    graph = explore(LoopsBehindChance(7, loops=12, loop_size=5))
    parent = os.getpid()
    real = loop_pool._LoopSolver.__call__

    def dying(self, task):
        if os.getpid() != parent:
            os._exit(5)
        return real(self, task)

    monkeypatch.setattr(loop_pool._LoopSolver, "__call__", dying)
    with pytest.raises(InternalError, match=r"\(loops\) ended \(exit code 5\)"):
        forward_pass(graph, workers=1)
    assert not multiprocessing.active_children()


def test_small_graphs_keep_to_one_process(monkeypatch):
    monkeypatch.setattr(loop_pool, "pass_with_loop_worker", lambda *args: pytest.fail("a worker was used"))
    graph = explore(LoopsBehindChance(7, loops=12, loop_size=5))
    assert graph.num_transitions < loop_pool.MIN_TRANSITIONS
    forward_pass(graph, workers=1)


def test_components_become_ready_once_everything_entering_them_is_done(monkeypatch):
    """Kahn's order over the condensation: each component is ready exactly once, and only
    after every component with an edge into it; the compiled count-down gives the Python
    loop's order."""
    graph = explore(ContestChain(size=200, branches=10, seed=2))
    plan = forward_module._Plan(graph, {}, bytearray([1]) * graph.num_states, graph.strongly_connected_components())
    component_of = {node: index for index, component in enumerate(plan.components) for node in component}
    entering = [set() for _ in plan.components]
    for node in range(graph.num_states):
        for target in graph.successors(node):
            if component_of[target] != component_of[node]:
                entering[component_of[target]].add(component_of[node])
    waiting = [0] * len(plan.components)  # edges entering each component from another
    for node in range(graph.num_states):
        for target in graph.successors(node):
            if component_of[target] != component_of[node]:
                waiting[component_of[target]] += 1
    orders = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(loop_pool, "entered_ready", None)
        readiness = loop_pool._Readiness(plan)
        assert readiness.compiled == compiled or loop_pool.entered_ready is None
        assert [int(count) for count in readiness.waiting] == waiting
        ready, finished = readiness.first(), []
        assert ready == [component_of[graph.initial]]
        while ready:
            index = ready.pop()
            assert entering[index] <= set(finished)
            finished.append(index)
            ready.extend(readiness.done(index))
        assert sorted(finished) == list(range(len(plan.components)))
        orders.append(finished)
    assert orders[0] == orders[1]
    assert any(len(plan.components[index]) > 1 for index in orders[0])  # loops counted down too


def test_the_pass_goes_on_alone_when_the_machine_will_not_fork(worker_on_any_graph, monkeypatch):
    def refuse(self, *args):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr("exactdice.processes.ForkedWorkers.__init__", refuse)
    graph = explore(LoopsBehindChance(7, loops=12, loop_size=5))
    assert _answers(forward_pass(graph, workers=1)) == _answers(forward_pass(graph, workers=0))


def test_near_the_memory_budget_the_worker_is_ended_and_the_pass_goes_on_alone(worker_on_any_graph, monkeypatch):
    """Once the memory in use passes `SHED_WORKER_AT` of the budget, no loop is handed out
    any more: the worker is ended when its loops are back, this process solves the rest,
    and the Fractions are the same."""
    from exactdice.processes import ForkedWorkers

    graph = explore(LoopsBehindChance(7, loops=12, loop_size=5))
    alone = forward_pass(graph, workers=0)
    readings, closed = [], []
    budget = loop_pool.memory_budget()

    def in_use():
        readings.append(len(worker_on_any_graph))
        return budget if len(readings) > 2 else 0  # the third reading is past the share

    real_close = ForkedWorkers.close

    def close(self):
        closed.append(len(worker_on_any_graph))
        real_close(self)

    monkeypatch.setattr(loop_pool, "memory_in_use", in_use)
    monkeypatch.setattr(loop_pool, "_MEMORY_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(ForkedWorkers, "close", close)
    shed = forward_pass(graph, workers=1)
    assert _answers(shed) == _answers(alone)
    loops = loop_pool.loops_with_flow(
        forward_module._Plan(graph, {}, bytearray([1]) * graph.num_states, graph.strongly_connected_components())
    )
    assert len(readings) == 3  # read until passed, then never again
    assert len(closed) == 1 and closed[0] < len(worker_on_any_graph)  # ended before the pass did
    assert len(worker_on_any_graph) > loops // 2  # this process solved most of the loops
    assert not multiprocessing.active_children()
