"""Worker processes, one layer for all of them: started the same way, capped the same way,
stopped the same way, their deaths reported the same way.

Three kinds of work start them: one solve's forked helpers (`ForkedWorkers`: exploring,
the exact pass's loops, a bounds search split by draw); a sweep's pool of cells
(`process_pool`, `exactdice.tables.sweep`); the web server's jobs (`exactdice.web.jobs`: a
process per long job, a pool for quick ones). Each worker calls `start_worker` first: it
ends with the process that started it (even one killed by SIGKILL, which no clean-up sees)
and with a server it watches, ignores Ctrl-C (the terminal sends it to the whole process
group: its parent stops it), draws no progress bars, and has its memory capped where
asked (`cap_memory`). `stop_processes` and `stop_pool` end workers now (SIGTERM, then
SIGKILL after a grace period); `death_message` says why one ended without an answer.

>>> pool = process_pool(1)
>>> pool.submit(abs, -3).result()
3
>>> stop_pool(pool)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from exactdice.limits import count_workers, forget_workers

__all__ = [
    "die_with_parent",
    "ForkedWorkers",
    "fork_supported",
    "usable_cores",
    "solve_workers",
    "one_blas_thread",
    "WORKERS_ENVIRONMENT_VARIABLE",
    "start_worker",
    "cap_memory",
    "worker_memory_budget",
    "process_pool",
    "stop_processes",
    "stop_pool",
    "death_message",
    "GRACE_SECONDS",
    "NotATerminal",
]

#: how often a worker's watchdog checks that its parent is alive (seconds)
WATCHDOG_SECONDS = 0.5
#: how long a worker asked to stop (SIGTERM) may take before it is killed (seconds)
GRACE_SECONDS = 5.0


class NotATerminal:
    """A worker's stderr that says it is not a terminal, so the solvers' automatic progress
    bars stay off in workers (whoever started them reports progress)."""

    def __init__(self, stream):
        self._stream = stream

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name):
        return getattr(self._stream, name)


def start_worker(parent: int | None = None, memory_limit: int | None = None, watch: int | None = None) -> None:
    """The set-up of every worker process: it ends with its *parent* (None: the process that
    started it, a fork server's child) and with the process *watch* (the server whose fork
    server started it), ignores Ctrl-C, takes SIGTERM's default action, draws no bars, and
    with *memory_limit* (bytes) has its address space capped (`cap_memory`)."""
    import threading

    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not isinstance(sys.stderr, NotATerminal):
        sys.stderr = NotATerminal(sys.stderr)
    tqdm.set_lock(threading.RLock())  # not a semaphore shared with others: a worker may be killed
    die_with_parent(os.getppid() if parent is None else parent)
    if watch is not None:
        _watch_process(watch)
    if memory_limit:
        cap_memory(memory_limit)


def _watch_process(pid: int) -> None:
    """End this process once process *pid* is gone (checked every `WATCHDOG_SECONDS`)."""

    def watch():
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except OSError:
                pass
            time.sleep(WATCHDOG_SECONDS)

    threading.Thread(target=watch, name="exactdice-watchdog", daemon=True).start()


def worker_memory_budget(memory_limit: int) -> int:
    """The library's memory budget (resident bytes, `exactdice.limits`) in a worker whose
    address space is capped at ``memory_limit``: below the cap by a fifth, at least 512 MiB
    (what the address space holds beyond the resident memory), but never under half of it.
    Long work then stops itself with its message first, and a bounds search with the
    bounds it reached, instead of a `MemoryError` that loses them.

    >>> [round(worker_memory_budget(int(gib * 2**30)) / 2**30, 2) for gib in (4, 1, 0.5)]
    [3.2, 0.5, 0.25]
    """
    return max(memory_limit // 2, memory_limit - max(memory_limit // 5, 512 * 2**20))


def cap_memory(memory_limit: int) -> None:
    """Cap this process's address space at *memory_limit* bytes, and the library's memory
    budget below it (`worker_memory_budget`)."""
    import resource

    from exactdice.limits import memory_budget, set_memory_budget

    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    set_memory_budget(min(memory_budget(), worker_memory_budget(memory_limit)), export=False)


def process_pool(workers: int, *, context=None, memory_limit: int | None = None, watch: int | None = None):
    """A `concurrent.futures.ProcessPoolExecutor` of *workers* processes, each set up by
    `start_worker` (*context*: a multiprocessing context, default the platform's)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    forked = (context or multiprocessing.get_context()).get_start_method() == "fork"
    # a forked worker's parent is this process; a fork server's child's is the fork server
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=start_worker,
        initargs=(os.getpid() if forked else None, memory_limit, watch),
    )


def stop_processes(processes, grace: float = GRACE_SECONDS) -> None:
    """End *processes* now: SIGTERM, then SIGKILL for any still running after *grace*
    seconds; each is waited for."""
    processes = list(processes)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


def stop_pool(pool, grace: float = 0.5) -> None:
    """End a `process_pool` now: queued work is dropped, running workers are stopped."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    stop_processes(processes, grace)


def death_message(exitcode, memory_limit: int | None = None) -> str:
    """Why a worker ended without an answer, as far as can be told.

    >>> death_message(-9, 2**30)
    'the worker process stopped without an answer (exit code -9); it may have run out of its 1.0 GiB of memory'
    """
    if memory_limit:
        return (
            f"the worker process stopped without an answer (exit code {exitcode}); it may have run out "
            f"of its {memory_limit / 2**30:.1f} GiB of memory"
        )
    return f"the worker process stopped without an answer (exit code {exitcode}; out of memory?)"


def die_with_parent(parent: int) -> None:
    """Make this worker process exit when ``parent`` (its parent's pid) dies: Linux's
    parent-death signal, and a watchdog thread for platforms without it."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(WATCHDOG_SECONDS)

    threading.Thread(target=watch, name="exactdice-parent-watchdog", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the watch began
        os._exit(1)


class ForkedWorkers:
    """``count`` worker processes forked from this one: each calls ``handle(task)`` on
    every task sent to it and sends back the result. Forked, they start with this
    process's objects as they are (a model with warm caches, an explored graph), and
    nothing is pickled to start them; they end with this process even when it is
    killed, and their memory counts in `exactdice.limits.check_memory`. A worker's
    exception is raised again by `receive`, and a worker that died is reported rather
    than waited for.

    >>> workers = ForkedWorkers(1, abs, "doctest") if fork_supported() else None
    >>> if workers: workers.send(0, -3); print(workers.receive()); workers.close()
    ... else: print((0, 3))
    (0, 3)
    """

    def __init__(self, count: int, handle, name: str):
        if count < 1:
            raise ValueError(f"workers must be >= 1, got {count}")
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.name = name
        self._results = context.Queue()
        self._tasks = [context.Queue() for _ in range(count)]
        self._processes = []
        try:
            for number in range(count):
                process = context.Process(
                    target=_serve,
                    args=(handle, self._tasks[number], self._results, number, os.getpid()),
                    name=f"exactdice-{name}-{number}",
                    daemon=True,
                )
                process.start()
                self._processes.append(process)
        except BaseException:  # no fork (out of memory or processes): none is left behind
            self.close()
            raise
        count_workers([process.pid for process in self._processes])

    def send(self, worker: int, task) -> None:
        """Queue ``task`` for worker number ``worker`` (never blocks)."""
        self._tasks[worker].put(task)

    def receive(self, wait: bool = True):
        """``(worker, result)`` of the next task done, waiting for it (or None at once
        if none is done and not ``wait``)."""
        import queue

        while True:
            try:
                worker, failed, result = (
                    self._results.get(timeout=_POLL_SECONDS) if wait else self._results.get_nowait()
                )
            except queue.Empty:
                if not wait:
                    return None
                self.check_alive()
                continue
            if failed:
                raise result
            return worker, result

    def check_alive(self) -> None:
        """Raise `InternalError` if a worker has ended (it would never send its work)."""
        from exactdice.errors import InternalError

        for process in self._processes:
            if not process.is_alive():
                raise InternalError(
                    f"a worker process ({self.name}) ended (exit code {process.exitcode}) before "
                    f"it sent its work; run again with ${WORKERS_ENVIRONMENT_VARIABLE}=0 to work "
                    "in this process alone"
                )

    def close(self) -> None:
        """Stop the workers now (what they were doing is no longer wanted)."""
        stop_processes(self._processes)
        forget_workers([process.pid for process in self._processes])
        for channel in (*self._tasks, self._results):
            channel.cancel_join_thread()
            channel.close()


#: seconds between checks that the workers are still alive while waiting for a result
_POLL_SECONDS = 1.0
#: the environment variable that sets how many worker processes one solve may use
WORKERS_ENVIRONMENT_VARIABLE = "EXACTDICE_SOLVE_WORKERS"


def _serve(handle, tasks, results, worker: int, parent: int) -> None:
    die_with_parent(parent)
    try:
        while True:
            task = tasks.get()
            try:
                result = handle(task)
            except Exception as error:  # noqa: BLE001 - handed to the parent, raised there
                results.put((worker, True, _picklable(error)))
                return
            results.put((worker, False, result))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent reports it
        pass


def _picklable(error: Exception) -> Exception:
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any failure to carry it means: describe it instead
        from exactdice.errors import InternalError

        return InternalError(f"in a worker process: {type(error).__name__}: {error}")


def fork_supported() -> bool:
    """Whether worker processes can be forked from here: Linux, and the main process (a
    table sweep's or the web server's worker runs beside others already, and a daemonic
    worker may not start children)."""
    import multiprocessing

    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and multiprocessing.parent_process() is None
    )


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def one_blas_thread():
    """A context in which numpy's BLAS runs in one thread (threadpoolctl): a solve with a
    worker process on the other core, where BLAS's idle threads would spin (13 % of an
    exact solve's CPU time before), or nothing where threadpoolctl is missing.

    >>> with one_blas_thread():
    ...     pass
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def solve_workers() -> int:
    """Worker processes one solve may start (exploring, the exact pass's loops):
    ``$EXACTDICE_SOLVE_WORKERS`` when set (0: work in this process alone), else one
    per usable core where they can be forked, else none.

    >>> solve_workers() >= 0
    True
    """
    text = os.environ.get(WORKERS_ENVIRONMENT_VARIABLE, "").strip()
    if text:
        if not text.isdigit():
            from exactdice.errors import InputError

            raise InputError(
                WORKERS_ENVIRONMENT_VARIABLE,
                f"must be a whole number of worker processes (0 works in one process), got {text!r}",
            )
        return int(text) if fork_supported() else 0
    cores = usable_cores()
    return cores if cores > 1 and fork_supported() else 0
