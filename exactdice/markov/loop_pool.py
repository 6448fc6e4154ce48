"""The exact forward pass with a worker process solving loops beside it.

A fixed-policy Karbon chain's loops are many and mostly independent (A5 v C5, W3 P1: 106
loops, at most 14 on any path from the start; W5 P2: 356, at most 24), and each loop's
exact solve (2-adic lifting, its check) is a self-contained piece of integer work.
`pass_with_loop_worker` walks the components in an order that follows the graph (a
component once everything that flows into it is done, Kahn's algorithm over the
condensation) instead of one fixed topological order: the main process handles the
acyclic states and what leaves each loop, and hands loops to a forked worker, solving one
itself whenever it has nothing else to do. Exact sums do not depend on their order, so
the answers are the same Fractions as the one-process pass (the tests compare them).

What crosses the process boundary: a loop's members' inflows with the integer scales to
their join (`_Pass.loop_parts`), and back its numerators and denominator.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from exactdice.limits import check_memory, memory_budget, memory_in_use
from exactdice.processes import ForkedWorkers

try:
    from exactdice.markov._exact_pass import entered_ready, entering_counts
except ImportError:  # an install that could not build the extension: the Python loop
    entered_ready = entering_counts = None  # type: ignore[assignment]

__all__ = ["pass_with_loop_worker", "MIN_TRANSITIONS", "MIN_LOOPS", "SHED_WORKER_AT"]

#: a pass forks its worker only for a graph with this many transitions and loops with
#: live members at least (below them the fork and the transfers cost more than they save)
MIN_TRANSITIONS = 1_000_000
MIN_LOOPS = 16
#: past this share of the memory budget the pass hands its worker no more loops and ends
#: it once they are back, going on alone: the worker's own pages (the loops' numbers, the
#: parent's pages it writes to) would take a pass past the budget that one process
#: finishes within (risk=always A3 v C2: 10.5 GB alone; A6 v C8, W7 P0: 8.8 GB alone,
#: past 12 GiB with the worker)
SHED_WORKER_AT = 0.7
# seconds between two readings of the memory in use
_MEMORY_CHECK_SECONDS = 0.5
# loops handed to the worker and not yet back, at most: more would leave the main
# process idle with loops it could solve itself
_IN_FLIGHT = 2


class _Readiness:
    """Which components may be visited: those whose every entering edge comes from a
    component already done (Kahn's algorithm on the condensation, edges counted with
    their multiplicity, so no pair of components needs deduplicating)."""

    def __init__(self, plan):
        import numpy

        graph, components = plan.graph, plan.components
        self.components = components
        component_of = numpy.empty(graph.num_states, dtype=numpy.int64)
        for index, component in enumerate(components):
            component_of[component] = index
        self.offsets, self.targets = plan.csr.offsets, plan.csr.targets
        self.component_of = component_of
        self.compiled = entered_ready is not None
        if self.compiled:
            self.waiting = entering_counts(self.offsets, self.targets, component_of, len(components))
            return
        entering = component_of[self.targets]  # per edge: the component it enters
        leaving = numpy.repeat(component_of, numpy.diff(self.offsets))  # ... and the one it leaves
        self.waiting = numpy.bincount(entering[leaving != entering], minlength=len(components)).tolist()
        self.component_of_list = component_of.tolist()

    def first(self) -> list:
        """The components nothing enters (the initial state's)."""
        return [
            index for index, count in enumerate(self.waiting.tolist() if self.compiled else self.waiting) if not count
        ]

    def done(self, index) -> list:
        """Components that became ready now that ``index`` is done."""
        component, offsets, waiting = self.components[index], self.offsets, self.waiting
        if self.compiled:
            return entered_ready(offsets, self.targets, self.component_of, waiting, index, component)
        ready = []
        if len(component) == 1:
            node = component[0]
            component_of = self.component_of_list
            for target in self.targets[offsets[node] : offsets[node + 1]].tolist():
                entered = component_of[target]
                if entered != index:
                    waiting[entered] -= 1
                    if not waiting[entered]:
                        ready.append(entered)
            return ready
        import numpy

        entered = self.component_of[
            numpy.concatenate([self.targets[offsets[node] : offsets[node + 1]] for node in component])
        ]
        entered, counts = numpy.unique(entered[entered != index], return_counts=True)
        for other, count in zip(entered.tolist(), counts.tolist()):
            waiting[other] -= count
            if not waiting[other]:
                ready.append(other)
        return ready


def loops_with_flow(plan) -> int:
    """How many components are loops with a live member (an upper bound on the solves)."""
    cyclic, alive = plan.cyclic, plan.alive
    return sum(
        1 for index, component in enumerate(plan.components) if cyclic[index] and any(alive[node] for node in component)
    )


def pass_with_loop_worker(plan, flow, bar=None) -> bool:
    """Drive the exact pass ``flow`` (`exactdice.markov.forward._Pass`) through ``plan``'s
    components with one worker process solving loops (module docstring); ``bar``: a
    progress bar counting states passed. False, having done nothing, if the worker could
    not be started (the machine would not fork). Near the memory budget the worker is
    ended and the pass goes on alone (`SHED_WORKER_AT`)."""
    workers: ForkedWorkers | None
    try:
        workers = ForkedWorkers(1, _LoopSolver(plan), "loops")
    except OSError:
        return False
    readiness = _Readiness(plan)
    ready = readiness.first()
    queued: deque = deque()  # loops prepared and not handed out: (index, live, class, parts)
    handed: dict[int, tuple[Any, Any]] = {}  # loops in the worker: index -> (live, class)

    def done(index):
        ready.extend(readiness.done(index))
        check_memory("while solving")
        if bar is not None:
            bar.update(len(plan.components[index]))

    def finish(index, live, klass, solution):
        flow.loop_solved(live, klass, *solution)
        flow.loop_cleared(index)
        done(index)

    near_budget = _NearBudget()
    try:
        while True:
            while handed and workers is not None:
                received = workers.receive(wait=False)
                if received is None:
                    break
                index, solution = received[1]
                finish(index, *handed.pop(index), solution)
            if workers is not None and near_budget():
                if not handed:  # its memory back: the pass goes on in this process
                    workers.close()
                    workers = None
            else:
                while workers is not None and queued and len(handed) < _IN_FLIGHT:
                    index, live, klass, parts = queued.popleft()
                    workers.send(0, (index, parts))
                    handed[index] = (live, klass)
            if ready:
                index = ready.pop()
                _visit(plan, flow, index, queued, done)
            elif queued:  # nothing else to do here: solve one of the loops in this process
                index, live, klass, parts = queued.pop()
                finish(index, live, klass, _solve(plan, index, parts))
            elif handed and workers is not None:
                index, solution = workers.receive()[1]
                finish(index, *handed.pop(index), solution)
            else:
                break
    finally:
        if workers is not None:
            workers.close()
    return True


class _NearBudget:
    """Whether the memory in use has passed `SHED_WORKER_AT` of the budget (read at most
    every `_MEMORY_CHECK_SECONDS`; once passed, it stays passed)."""

    def __init__(self):
        self.passed = False
        self.next_reading = 0.0

    def __call__(self) -> bool:
        if not self.passed and time.monotonic() >= self.next_reading:
            self.next_reading = time.monotonic() + _MEMORY_CHECK_SECONDS
            self.passed = memory_in_use() > SHED_WORKER_AT * memory_budget()
        return self.passed


def _visit(plan, flow, index, queued, done) -> None:
    """One ready component: an acyclic state is passed on at once; a loop that receives
    flow is prepared and queued (`done` when solved); an idle one is done."""
    component, inflow = plan.components[index], flow.inflow
    if not plan.cyclic[index]:
        if inflow[component[0]]:
            flow.state(component[0])
        done(index)
        return
    if any(inflow[node] for node in component):
        live = plan.live_members(component)
        if live:
            klass, parts = flow.loop_parts(live)
            queued.append((index, live, klass, parts))
            return
        flow.loop_cleared(index)
    done(index)


def _solve(plan, index, parts):
    """A loop's exact solve (`_Plan.solve_loop`), in whichever process calls it."""
    return plan.solve_loop(index, parts)


class _LoopSolver:
    """The worker's side: ``(index, parts)`` -> ``(index, (numerators, denominator))``.
    What leaves the loop is summed in the main process: sending those sums back cost
    more than summing them there (A5 v C5, W3 P1: 2.9 s against 2.7 s wall)."""

    def __init__(self, plan):
        self.plan = plan

    def __call__(self, task):
        index, parts = task
        return index, _solve(self.plan, index, parts)
