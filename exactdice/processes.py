"""Worker processes: forked for one solve (`ForkedWorkers`), ending with the process that
started them.

Table sweeps, exploring and the exact pass's loops start worker processes; if their
parent is killed (even by SIGKILL, which no clean-up sees) they must not live on,
waiting for work.

>>> import os
>>> os.getppid() > 0
True
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from exactdice.limits import count_workers, forget_workers

__all__ = ["die_with_parent", "ForkedWorkers", "fork_supported", "usable_cores", "solve_workers",
           "WORKERS_ENVIRONMENT_VARIABLE"]

#: how often a worker's watchdog checks that its parent is alive (seconds)
WATCHDOG_SECONDS = 0.5


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
                process = context.Process(target=_serve, args=(handle, self._tasks[number], self._results, number,
                                                               os.getpid()),
                                          name=f"exactdice-{name}-{number}", daemon=True)
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
                worker, failed, result = (self._results.get(timeout=_POLL_SECONDS) if wait
                                          else self._results.get_nowait())
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
                raise InternalError(f"a worker process ({self.name}) ended (exit code {process.exitcode}) before "
                                    f"it sent its work; run again with ${WORKERS_ENVIRONMENT_VARIABLE}=0 to work "
                                    "in this process alone")

    def close(self) -> None:
        """Stop the workers now (what they were doing is no longer wanted)."""
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(5)
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

    return (sys.platform.startswith("linux")
            and "fork" in multiprocessing.get_all_start_methods()
            and multiprocessing.parent_process() is None)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


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

            raise InputError(WORKERS_ENVIRONMENT_VARIABLE,
                             f"must be a whole number of worker processes (0 works in one process), got {text!r}")
        return int(text) if fork_supported() else 0
    cores = usable_cores()
    return cores if cores > 1 and fork_supported() else 0
