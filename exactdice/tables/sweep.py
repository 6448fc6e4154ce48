"""Solve many cells on a `concurrent.futures`-style executor, resuming from (and filling) the store.

A *cell* is a `SweepCell`: the `ResultKey` that identifies its result in the store, and
the picklable *task* handed to the solve function (by default the key itself). The solve
function must be a top-level function (worker processes import it by name) and return a
result the store can hold: dicts, lists, ints, strings and Fractions.

One code path runs every sweep: cells are submitted to an executor and their results
collected as they finish. The executor is

- a local process pool (`local_process_pool`, the default, ``workers`` processes), or
- a Dask cluster's executor (``distributed.Client(address).get_executor()``, see
  `cluster_executor` and the ``scheduler`` address of a request), or
- this process itself when ``workers=1`` (no pickling: handy for tests and tiny sweeps).

Only this process opens the store: each result is written by it as soon as it arrives,
one transaction each, with Ctrl-C and SIGTERM held off during the write, so a sweep that
is interrupted keeps every finished cell and a re-run resumes where it stopped.

Interrupts: Ctrl-C and SIGTERM both raise `KeyboardInterrupt` in this process (the CLI
exits with 130); the sweep then cancels what is queued and kills its local workers, so
nothing is left running. Local workers also watch their parent: if it dies (SIGKILL) they
exit within a second (``PR_SET_PDEATHSIG`` on Linux, and a watchdog thread everywhere).
Workers ignore Ctrl-C themselves and draw no progress bars: the sweep draws one bar, for
the cells.

>>> cells = [SweepCell(ResultKey("demo", {}, {"n": n})) for n in (2, 3)]
>>> sweep(cells, _reciprocal_of_key, store=None, workers=1, progress=False)
[Fraction(1, 2), Fraction(1, 3)]
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdice.errors import InputError
from exactdice.processes import NotATerminal, process_pool, stop_pool
from exactdice.progress import ProgressCallback, TerminalBars, report
from exactdice.tables.store import ResultKey, ResultStore, open_store

__all__ = [
    "SweepCell",
    "sweep",
    "SweepStatistics",
    "local_process_pool",
    "cluster_executor",
    "executor_for",
    "store_and_executor",
    "shared_local_pool",
]


@dataclass(frozen=True)
class SweepCell:
    """One unit of work: its store key and the argument of the solve function.

    Parameters
    ----------
    key : ResultKey
        Where its result is stored.
    task : Any, optional
        The solve function's argument (default: the key itself).

    Examples
    --------
    >>> SweepCell(ResultKey("karst", {}, {"m": 1})).argument.system
    'karst'
    """

    key: ResultKey
    task: Any = None

    @property
    def argument(self) -> Any:
        """What the solve function receives: the task, or the key when there is none."""
        return self.key if self.task is None else self.task


@dataclass
class SweepStatistics:
    """How a sweep went: cells found in the store and cells solved now.

    Parameters
    ----------
    cached : int, default 0
        Cells found in the store.
    solved : int, default 0
        Cells solved by this sweep.
    seconds : float, default 0.0
        Wall-clock time of the sweep.
    """

    cached: int = 0
    solved: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _WorkerInputError:
    """An `InputError` raised in a worker, carried back field by field.

    (`InputError` takes two arguments, which pickling an exception does not replay.)
    """

    kind: type
    field: str | None
    message: str

    def rebuild(self) -> InputError:
        return self.kind(self.field, self.message)


def _solve_one(solve_fn: Callable, argument):
    # runs where the cell is solved (a local worker, a Dask worker, or this process with
    # workers=1): the solvers' own bars stay off while it runs, the sweep reports the cells
    stderr = sys.stderr
    sys.stderr = NotATerminal(stderr)
    try:
        return solve_fn(argument)
    except InputError as error:
        return _WorkerInputError(type(error), error.field, error.message)
    finally:
        sys.stderr = stderr


# ----- local workers ------------------------------------------------------------------


def local_process_pool(workers: int):
    """A process pool whose workers ignore Ctrl-C, draw no bars and die with this process
    (`exactdice.processes.process_pool`).

    >>> pool = local_process_pool(1)
    >>> pool.submit(abs, -3).result()
    3
    >>> stop_pool(pool)
    """
    return process_pool(workers)


class _InlineExecutor:
    """Runs each submitted call at once in this process (``workers=1``)."""

    def submit(self, fn, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(error)
        return future


# ----- Dask -----------------------------------------------------------------------------


def cluster_executor(address: str, *, field: str = "scheduler", timeout: float = 10.0):
    """(client, executor) for the Dask scheduler at *address* (``tcp://host:8786``).

    Needs the ``cluster`` extra (``pip install 'exactdice[cluster]'``); a missing Dask or
    an unreachable scheduler (after *timeout* seconds) is an `InputError` naming *field*.
    Close the client when done.
    """
    try:
        from distributed import Client
    except ImportError:
        raise InputError(field, "needs Dask: pip install 'exactdice[cluster]' (dask and distributed)") from None
    try:
        client = Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError, ValueError) as error:
        raise InputError(
            field,
            f"cannot reach the Dask scheduler at {address!r} ({error}); start one (dask scheduler) or drop `{field}`",
        ) from None
    return client, client.get_executor()


@contextlib.contextmanager
def executor_for(scheduler: str | None = None) -> Iterator[Any]:
    """The executor a sweep should use: None (a local pool) or a Dask cluster's executor.

    >>> with executor_for(None) as executor:
    ...     executor is None
    True
    """
    if not scheduler:
        yield None
        return
    client, executor = cluster_executor(scheduler)
    try:
        yield executor
    finally:
        client.close()


@contextlib.contextmanager
def store_and_executor(
    store_path=None, *, no_cache: bool = False, scheduler: str | None = None
) -> Iterator[tuple[ResultStore | None, Any]]:
    """(the results store, or None with *no_cache*; the executor of *scheduler*, or None for
    local processes), both closed when the block ends, however it ends.

    >>> with store_and_executor(no_cache=True) as (store, executor):
    ...     store, executor
    (None, None)
    """
    store = open_store(store_path, no_cache=no_cache)
    try:
        with executor_for(scheduler) as executor:
            yield store, executor
    finally:
        if store is not None:
            store.close()


@contextlib.contextmanager
def shared_local_pool(workers: int, executor=None) -> Iterator[Any]:
    """The executor for several sweeps in a row: *executor* when given (a cluster's), None
    when *workers* is 1 (each sweep solves in this process), else one local pool of
    *workers* processes that every sweep of the block reuses (instead of starting its own).

    The pool ends with the block: waited for when the block finishes, stopped at once (queued
    cells dropped, workers terminated) when it stops by an error, Ctrl-C or SIGTERM.

    >>> with shared_local_pool(1) as executor:
    ...     executor is None
    True
    """
    if executor is not None or workers == 1:
        yield executor
        return
    pool = local_process_pool(workers)
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


# ----- interrupts ------------------------------------------------------------------------


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the sweep runs, SIGTERM stops it exactly as Ctrl-C does (but in a worker
    process, which takes SIGTERM's default action: its parent stops it so)."""
    import multiprocessing

    if threading.current_thread() is not threading.main_thread() or multiprocessing.parent_process() is not None:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM off while a result is written; one that came meanwhile
    is raised right after, so a row is never left half written by an interrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def remember(signum, frame):
        arrived.append(signum)

    previous = {signum: signal.signal(signum, remember) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if arrived:
        raise KeyboardInterrupt(f"signal {arrived[0]}")


# ----- the sweep -------------------------------------------------------------------------


def sweep(
    cells: Sequence[SweepCell | ResultKey],
    solve_fn: Callable,
    *,
    store: ResultStore | None,
    workers: int = 2,
    executor: Executor | None = None,
    progress: bool | ProgressCallback | None = True,
    description: str = "solving",
    statistics: SweepStatistics | None = None,
) -> list:
    """Solve every cell and return the results in order.

    Finished cells go into the store as they arrive, so an interrupted sweep resumes;
    Ctrl-C stops it within about 2 s, local workers killed.

    Parameters
    ----------
    cells : sequence of SweepCell or ResultKey
        The work.
    solve_fn : callable
        A top-level (picklable) function of a cell's task.
    store : ResultStore or None
        The results store (None: no cache).
    workers : int, default 2
        Local processes (``1``: this process).
    executor : concurrent.futures.Executor, optional
        Any `concurrent.futures`-style executor (a Dask cluster's, for one); None means a
        local pool of *workers* processes.
    progress : bool or callable, default True
        A `exactdice.progress.Progress` callback given a report per cell, or True for a
        progress bar of the cells on stderr (`exactdice.progress.TerminalBars`).
    description : str, default "solving"
        The progress reports' stage.
    statistics : SweepStatistics, optional
        Filled with how many cells were cached and solved.

    Returns
    -------
    list
        The results, in the order of *cells*.

    Raises
    ------
    ValueError
        *workers* below 1.

    Examples
    --------
    >>> cells = [ResultKey("demo", {}, {"n": n}) for n in (4, 5)]
    >>> sweep(cells, _reciprocal_of_key, store=None, workers=1, progress=False)
    [Fraction(1, 4), Fraction(1, 5)]
    """
    started = time.perf_counter()
    cells = [cell if isinstance(cell, SweepCell) else SweepCell(cell) for cell in cells]
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    results: list = [None] * len(cells)
    unique, duplicates = _unique_cells(cells)
    missing = []
    for index in unique:
        stored = store.get(cells[index].key) if store is not None else None
        if stored is None:
            missing.append(index)
        else:
            results[index] = stored
    cached = len(unique) - len(missing)

    bars = TerminalBars() if progress is True else None
    callback = bars or (progress if callable(progress) else None)
    done = [cached]
    report(callback, description, done=cached, total=len(unique), unit="cells")

    def record(index: int, result) -> None:
        results[index] = result
        if store is not None:
            with _interrupts_held():
                store.put(cells[index].key, result)
        done[0] += 1
        report(
            callback, description, done=done[0], total=len(unique), unit="cells", seconds=time.perf_counter() - started
        )

    own_pool = None
    if executor is None:
        if workers == 1 or len(missing) <= 1:
            executor = _InlineExecutor()
        else:
            executor = own_pool = local_process_pool(min(workers, len(missing)))
    pending: dict[Future, int] = {}
    finished_cleanly = False
    try:
        with _sigterm_as_interrupt():
            _run_cells(executor, solve_fn, [(index, cells[index].argument) for index in missing], pending, record)
        finished_cleanly = True
    finally:
        _stop(own_pool, pending, finished_cleanly)
        if bars is not None:
            bars.close()

    for first, others in duplicates.items():
        for index in others:
            results[index] = results[first]
    if statistics is not None:
        statistics.cached += cached
        statistics.solved += len(missing)
        statistics.seconds += time.perf_counter() - started
    return results


def _unique_cells(cells: Sequence[SweepCell]) -> tuple[list[int], dict[int, list[int]]]:
    """(the index of each key's first cell, first index -> the later cells with its key):
    identical keys are solved once."""
    first_index_of: dict[tuple, int] = {}
    duplicates: dict[int, list[int]] = {}
    for index, cell in enumerate(cells):
        parts = cell.key.parts()
        if parts in first_index_of:
            duplicates.setdefault(first_index_of[parts], []).append(index)
        else:
            first_index_of[parts] = index
    return sorted(first_index_of.values()), duplicates


def _run_cells(
    executor, solve_fn: Callable, tasks: list[tuple[int, Any]], pending: dict, record: Callable[[int, Any], None]
) -> None:
    """Submit the (index, argument) tasks and record each result as it arrives; *pending*
    holds the futures not yet done (the caller cancels them if this stops early)."""
    # this process solves one cell at a time; any other executor gets every cell at once
    in_flight_limit = 1 if isinstance(executor, _InlineExecutor) else len(tasks)
    queue = iter(tasks)
    exhausted = False
    while True:
        while not exhausted and len(pending) < in_flight_limit:
            task = next(queue, None)
            if task is None:
                exhausted = True
                break
            pending[executor.submit(_solve_one, solve_fn, task[1])] = task[0]
        if not pending:
            return
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        error = None
        # keep every finished result before reporting an error
        for future in sorted(finished, key=pending.get):
            index = pending.pop(future)
            result = future.result()
            if isinstance(result, _WorkerInputError):
                error = error or result.rebuild()
            else:
                record(index, result)
        if error is not None:
            raise error


def _stop(own_pool, pending: dict, finished_cleanly: bool) -> None:
    """After the cells: wait for our own pool, or (an error, Ctrl-C or SIGTERM) drop what is
    queued and end our own workers now."""
    if finished_cleanly:
        if own_pool is not None:
            own_pool.shutdown(wait=True)
        return
    for future in pending:
        future.cancel()
    if own_pool is not None:
        stop_pool(own_pool)


def _reciprocal_of_key(key: ResultKey) -> Fraction:
    # the examples' and tests' solve function
    if key.setup["n"] == 0:
        raise InputError("n", "has no reciprocal")
    return Fraction(1, key.setup["n"])


def _slow_reciprocal(task: tuple) -> Fraction:
    # the tests' slow solve function: (n, folder, seconds) records the solving process's
    # pid in *folder* (one file per attempt), waits *seconds*, then returns 1/n; it lives
    # here because a cluster's workers import a solve function by its module's name
    n, folder, seconds = task
    from pathlib import Path

    Path(folder, f"n{n}-pid{os.getpid()}").touch()
    time.sleep(seconds)
    return _reciprocal_of_key(ResultKey("demo", {}, {"n": n}))
