"""A bounded search split over worker processes at a "max" root.

When the initial state is a decision of the "max" side (a draw: which dice to take), the
game's value is the greatest of its actions' values, and the subgames below different
actions can be searched apart: each worker process runs `BoundedSolver` on a model
whose root offers only some of the actions, and the root's bounds are the greatest of
the workers' lower and of their upper bounds. On a draw between two close choices the
single search shares one core between both subgames; split, each gets a core.

The workers publish their root bounds in shared memory as they go; a worker stops once
its upper bound is within ``precision`` of the best lower bound any worker has (nothing
it could still find changes the root's gap by more), so the root's gap is <= precision
when all have stopped. Ctrl-C in this process, or all of them together passing the
memory budget, stops them with the bounds reached.
It knows nothing of any game: the caller builds the restricted models.

>>> from exactdice.markov.bounded import BoundedSolver
>>> from exactdice.markov.synthetic import TugOfWar
>>> found, best = split_bounded_run([TugOfWar(reach=2), TugOfWar(reach=3)], BoundedSolver,
...                                 precision=1e-6, in_processes=False)
>>> found.gap <= 1e-6, best in (0, 1)
(True, True)
"""

from __future__ import annotations

import signal
import time

from exactdice.markov.bounded import BoundedResult, BoundsView, _past_memory_budget
from exactdice.markov.graph import paused_gc

__all__ = ["split_bounded_run"]

#: how often a worker publishes its root bounds and reads the others' (seconds)
PUBLISH_SECONDS = 0.1
#: how often this process reports the joined bounds (seconds)
REPORT_SECONDS = 0.5
#: why this process stops the workers (the shared flag holds the index; 0: go on)
_STOP_REASONS = (None, "interrupted", "memory")

# what the forked workers run: set in this process just before they are forked
_job: dict = {}
_found: list = []  # in a worker: its search's result, for the "strategy" request


def split_bounded_run(
    models: list,
    make_solver,
    precision: float,
    *,
    max_seconds: float | None = None,
    max_states: int | None = None,
    progress=None,
    view_depth: int = 6,
    in_processes: bool = True,
    root=None,
) -> tuple[BoundedResult, int]:
    """(the joined `BoundedResult`, the index of the model whose lower bound is best).

    ``models[i]`` offers some of the root's actions (together: all of them, so the root
    is worth the greatest of their values); ``make_solver(model)`` gives its
    `BoundedSolver`. ``max_states`` bounds the states expanded in all; ``progress`` is
    called as in `BoundedSolver.run`. The result's ``strategy`` is the best model's,
    its ``solver`` a `BoundsView` of every search's states up to ``view_depth`` steps from
    its root, where ``root`` (the whole game's initial state, whose name a model's root
    may share with fewer actions) has the joined bounds. ``in_processes=False`` runs the
    searches one after another in this process, each knowing the earlier ones' bounds.
    """
    with paused_gc():  # the workers' results (bounds views, a strategy) arrive as many small tuples
        return _split_run(
            models, make_solver, precision, max_seconds, max_states, progress, view_depth, in_processes, root
        )


def _split_run(models, make_solver, precision, max_seconds, max_states, progress, view_depth, in_processes, root):
    share = None if max_states is None else max(1, max_states // len(models))
    if not in_processes:
        return _run_here(models, make_solver, precision, max_seconds, share, progress, view_depth, root)
    import multiprocessing

    from exactdice.processes import ForkedWorkers

    context = multiprocessing.get_context("fork")
    published = context.RawArray("d", [float("-inf"), float("inf"), 0.0] * len(models))
    stop = context.RawValue("b", 0)  # set here: an index into _STOP_REASONS
    _job.update(
        models=models,
        make_solver=make_solver,
        precision=precision,
        max_seconds=max_seconds,
        max_states=share,
        published=published,
        stop=stop,
        view_depth=view_depth,
    )
    started = time.perf_counter()
    pool = ForkedWorkers(len(models), _serve_search, "bounds")
    try:
        for number in range(len(models)):
            pool.send(number, ("search", number))
        done: dict = {}
        history = []
        next_report = started
        while len(done) < len(models):
            try:
                got = pool.receive(wait=False)
                if got is not None:
                    done[got[0]] = got[1]
                    continue
                now = time.perf_counter()
                if now >= next_report and min(published[0::3]) > float("-inf"):  # every search has begun
                    lower, upper, expanded = _joined(published, len(models))
                    history.append((now - started, lower, upper, expanded))
                    if progress is not None:
                        progress(lower, upper, expanded, now - started)
                    next_report = now + REPORT_SECONDS
                if not stop.value and _past_memory_budget():
                    stop.value = _STOP_REASONS.index("memory")
                pool.check_alive()
                time.sleep(0.02)
            except KeyboardInterrupt:  # the workers ignore SIGINT: they stop at this flag
                stop.value = _STOP_REASONS.index("interrupted")
        best = max(done, key=lambda number: done[number]["lower"])
        pool.send(best, ("strategy",))
        _, strategy = pool.receive()
    finally:
        pool.close()
        _job.clear()
    found = _joined_result(
        [done[number] for number in range(len(models))], strategy, time.perf_counter() - started, history, root
    )
    if progress is not None:
        progress(found.lower, found.upper, found.expanded, found.seconds)
    return found, best


def _joined(published, count: int) -> tuple[float, float, int]:
    lowers = [published[3 * number] for number in range(count)]
    uppers = [published[3 * number + 1] for number in range(count)]
    expanded = sum(int(published[3 * number + 2]) for number in range(count))
    return max(lowers), max(uppers), expanded


def _serve_search(task):
    """A worker's side: ("search", number) runs that model's search; ("strategy",) sends
    the strategy of the search it ran."""
    if task[0] == "strategy":
        return _found[0].strategy
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the parent decides
    number = task[1]
    job = _job
    published, count, precision = job["published"], len(job["models"]), job["precision"]
    solver = job["make_solver"](job["models"][number])

    def publish(lower, upper, expanded, _seconds):
        published[3 * number : 3 * number + 3] = [lower, upper, float(expanded)]

    def stop_check(lower, upper):
        if job["stop"].value:
            return _STOP_REASONS[job["stop"].value]
        return _precision_stop(lower, upper, max(published[3 * other] for other in range(count)), precision)

    found = solver.run(
        precision,
        max_seconds=job["max_seconds"],
        max_states=job["max_states"],
        progress=publish,
        progress_every=PUBLISH_SECONDS,
        stop_check=stop_check,
    )
    publish(found.lower, found.upper, found.expanded, found.seconds)
    _found[:] = [found]
    return _summary(found, solver, job["view_depth"])


def _precision_stop(lower: float, upper: float, others_lower: float, precision: float) -> str | None:
    """ "precision" once this part's upper bound is within ``precision`` of the best lower
    bound of any part (its own included): searching it further cannot narrow the root's gap."""
    return "precision" if upper - max(others_lower, lower) <= precision else None


def _summary(found: BoundedResult, solver, view_depth: int) -> dict:
    return dict(
        lower=found.lower,
        upper=found.upper,
        expanded=found.expanded,
        touched=found.touched,
        trajectories=found.trajectories,
        end_component_passes=found.end_component_passes,
        end_components=found.end_components,
        stopped=found.stopped,
        sweeps=found.sweeps,
        view=solver.top_view(view_depth),
    )


def _run_here(models, make_solver, precision, max_seconds, share, progress, view_depth, root):
    """The same searches one after another in this process (each with the whole time)."""
    started = time.perf_counter()
    summaries, results = [], []
    for model in models:
        solver = make_solver(model)
        best_lower = max((summary["lower"] for summary in summaries), default=float("-inf"))
        found = solver.run(
            precision,
            max_seconds=max_seconds,
            max_states=share,
            progress_every=PUBLISH_SECONDS,
            stop_check=lambda lower, upper: _precision_stop(lower, upper, best_lower, precision),
        )
        results.append(found)
        summaries.append(_summary(found, solver, view_depth))
    best = max(range(len(models)), key=lambda number: summaries[number]["lower"])
    found = _joined_result(summaries, results[best].strategy, time.perf_counter() - started, [], root)
    if progress is not None:
        progress(found.lower, found.upper, found.expanded, found.seconds)
    return found, best


def _joined_result(summaries: list, strategy: dict, seconds: float, history: list, root) -> BoundedResult:
    """The root's result: the greatest lower and upper bounds, the work summed."""
    lower = max(summary["lower"] for summary in summaries)
    upper = max(summary["upper"] for summary in summaries)
    reasons = {summary["stopped"] for summary in summaries}
    stopped = next((reason for reason in ("interrupted", "memory", "time", "states") if reason in reasons), "precision")
    history = history + [(seconds, lower, upper, sum(summary["expanded"] for summary in summaries))]
    view = BoundsView.merged([summary["view"] for summary in summaries])
    if root is not None:
        view.decisions.pop(root, None)  # a model's root of that name offered only some actions
        view.index[root] = (lower, upper)
    return BoundedResult(
        lower=lower,
        upper=upper,
        expanded=sum(summary["expanded"] for summary in summaries),
        touched=sum(summary["touched"] for summary in summaries),
        trajectories=sum(summary["trajectories"] for summary in summaries),
        end_component_passes=sum(summary["end_component_passes"] for summary in summaries),
        end_components=sum(summary["end_components"] for summary in summaries),
        seconds=seconds,
        stopped=stopped,
        sweeps=sum(summary["sweeps"] for summary in summaries),
        strategy=strategy,
        history=history,
        solver=view,
        parts=[{key: summary[key] for key in ("lower", "upper", "expanded", "stopped")} for summary in summaries],
    )
