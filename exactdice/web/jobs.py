"""Background solves the server can stop: one worker process per job, at most N at a time.

A `Job` runs `exactdice.web.tasks.run_task` in a process of its own (started by a fork
server that has the solver imported already, so a start costs milliseconds). A thread
of the server reads the job's pipe (progress lines, then the answer), so a slow solve
never blocks a quick one, and ``cancel`` kills the process: the work really stops.

Cancelling sends the worker SIGTERM, whose default action ends it at once: its exit
status (`Job.exit_code`) is then `CANCELLED_EXIT_CODE`, ``-SIGTERM`` (a worker that
outlived a grace period would be killed: ``-SIGKILL``). Only the job's own thread waits
for the process: two threads joining one forkserver process race for its exit status,
and the loser reads 255.

>>> manager = JobManager(workers=1)
>>> job = manager.submit("karbon_odds", {"setup": _tiny_setup()})
>>> job.wait(60) and job.status, job.result["states"]
('done', 100)
>>> manager.shutdown()
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import secrets
import signal
import threading
import time
from collections import OrderedDict

__all__ = ["Job", "JobManager", "JOB_STATUSES", "CANCELLED_EXIT_CODE", "QUICK_TASKS"]

JOB_STATUSES = ("queued", "running", "done", "error", "cancelled")
_KEPT_FINISHED_JOBS = 200
#: tasks whose work is bounded to seconds before they start: they run in their own lane
QUICK_TASKS = frozenset({"dist"})
#: the exit status of a cancelled worker process (ended by SIGTERM)
CANCELLED_EXIT_CODE = -signal.SIGTERM
#: how long a cancelled worker may take to end before it is killed (seconds)
_CANCEL_GRACE_SECONDS = 5.0


def _tiny_setup():
    from exactdice.karbon import ContestSetup

    return ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})


class Job:
    """One background task: its status, latest progress line, and answer or errors."""

    def __init__(self, identifier: str, task: str, arguments: dict, on_done=None):
        self.id = identifier
        self.task = task
        self.arguments = arguments
        self.status = "queued"
        self.progress = "waiting for a free worker"
        self.result = None
        self.errors: dict | None = None
        self.pid: int | None = None
        self.started = time.monotonic()
        self.seconds: float | None = None
        self._on_done = on_done
        self._finished = threading.Event()
        self._process = None
        self._process_ended = threading.Event()
        self.exit_code: int | None = None  # the worker's exit status, once it has ended
        self._lock = threading.Lock()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished (True) or ``timeout`` seconds passed (False)."""
        return self._finished.wait(timeout)

    @property
    def finished(self) -> bool:
        """True once the job is done, failed or cancelled."""
        return self._finished.is_set()

    def _finish(self, status: str, result=None, errors=None) -> None:
        if status == "done" and self._on_done is not None and not self._finished.is_set():
            try:  # stored before anyone hears it is done, so asking again finds it
                self._on_done(result)
            except Exception as error:  # the answer stands even if the cache cannot keep it
                self.progress = f"(not cached: {error})"
        with self._lock:
            if self._finished.is_set():
                return
            self.status, self.result, self.errors = status, result, errors
            self.seconds = time.monotonic() - self.started
            self._finished.set()

    def cancel(self) -> bool:
        """Stop the job: kill its worker process if it runs. False if it had finished."""
        with self._lock:
            if self._finished.is_set():
                return False
            process = self._process
            self.status = "cancelled"
            self.seconds = time.monotonic() - self.started
            self._finished.set()
        if process is not None:
            # the job's thread waits for the process (see the module text); this one signals
            process.terminate()
            if not self._process_ended.wait(_CANCEL_GRACE_SECONDS):
                process.kill()
                self._process_ended.wait(_CANCEL_GRACE_SECONDS)
        return True

    def _ended(self, process) -> None:
        """Called by the job's thread only: wait for the worker to end, keep its exit status."""
        process.join(_CANCEL_GRACE_SECONDS)
        if process.exitcode is None:
            process.kill()
            process.join()
        self.exit_code = process.exitcode
        self._process_ended.set()

    def snapshot(self) -> dict:
        """The job's state as JSON-ready data (the result as it was stored, exact)."""
        return {"job": self.id, "task": self.task, "status": self.status,
                "progress": self.progress, "result": self.result, "errors": self.errors,
                "seconds": None if self.seconds is None else round(self.seconds, 3)}


class JobManager:
    """Runs jobs in worker processes, at most ``workers`` at once (the rest wait their turn),
    and `QUICK_TASKS` in ``quick_workers`` more; each worker's address space is capped at
    ``memory_limit`` bytes when given."""

    def __init__(self, workers: int = 2, memory_limit: int | None = None, quick_workers: int = 2):
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.memory_limit = memory_limit
        # quick tasks (bounded up front to seconds: a dice distribution) run in long-lived
        # workers of their own: they never wait behind long solves, nor for a process to start
        self._quick_workers = max(1, quick_workers)
        self._quick_pool = None
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["exactdice.web.tasks", "exactdice.karbon",
                                              "exactdice.karbon.solve", "exactdice.validation"])
        self._slots = threading.BoundedSemaphore(workers)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def submit(self, task: str, arguments: dict, on_done=None) -> Job:
        """Start ``task`` with ``arguments`` in the background; returns its `Job` at once."""
        identifier = f"{next(self._counter)}-{secrets.token_hex(4)}"
        job = Job(identifier, task, arguments, on_done)
        with self._lock:
            self._jobs[identifier] = job
            finished = [key for key, old in self._jobs.items() if old.finished]
            for key in finished[:max(0, len(finished) - _KEPT_FINISHED_JOBS)]:
                del self._jobs[key]
        if task in QUICK_TASKS:
            self._run_quick(job)
        else:
            threading.Thread(target=self._run, args=(job,), daemon=True,
                             name=f"exactdice-job-{identifier}").start()
        return job

    def _run_quick(self, job: Job) -> None:
        """A quick task in the long-lived pool; its answer finishes the job when it comes."""
        from concurrent.futures import ProcessPoolExecutor

        from exactdice.web.tasks import start_quick_worker, task_outcome

        with self._lock:
            if self._quick_pool is None:
                self._quick_pool = ProcessPoolExecutor(self._quick_workers, mp_context=self._context,
                                                       initializer=start_quick_worker,
                                                       initargs=(self.memory_limit, os.getpid()))
            pool = self._quick_pool
        job.status, job.progress = "running", "started"

        def finished(future):
            try:
                kind, value = future.result()
            except Exception as error:   # the pool broke (a worker died): a new one next time
                with self._lock:
                    if self._quick_pool is pool:
                        self._quick_pool = None
                job._finish("error", errors={"form": self._death_message(f"{type(error).__name__}")})
                return
            if kind == "done":
                job._finish("done", result=value)
            else:
                job._finish("error", errors=value if kind == "input_error" else {"form": value})
            job._process_ended.set()

        pool.submit(task_outcome, job.task, job.arguments, self.memory_limit).add_done_callback(finished)

    def get(self, identifier: str) -> Job | None:
        """The job with this id, or None."""
        with self._lock:
            return self._jobs.get(identifier)

    def running(self) -> list[Job]:
        """Jobs not finished yet."""
        with self._lock:
            return [job for job in self._jobs.values() if not job.finished]

    def _run(self, job: Job) -> None:
        from exactdice.web.tasks import run_task

        with self._quick_slots if job.task in QUICK_TASKS else self._slots:
            if job.finished:  # cancelled while it waited
                return
            receiving, sending = self._context.Pipe(duplex=False)
            process = self._context.Process(target=run_task, daemon=True,
                                            args=(sending, job.task, job.arguments, self.memory_limit, os.getpid()))
            with job._lock:
                if job.finished:
                    return
                process.start()
                job._process, job.pid, job.status = process, process.pid, "running"
                job.progress = "started"
            sending.close()
            try:
                while True:
                    try:
                        message = receiving.recv()
                    except (EOFError, OSError):
                        process.join(_CANCEL_GRACE_SECONDS)
                        job._finish("error", errors={"form": self._death_message(process.exitcode)})
                        break
                    if message[0] == "progress":
                        job.progress = message[1]
                    elif message[0] == "done":
                        job._finish("done", result=message[1])
                        break
                    elif message[0] == "input_error":
                        job._finish("error", errors=message[1])
                        break
                    else:
                        job._finish("error", errors={"form": message[1]})
                        break
            finally:
                receiving.close()
                job._ended(process)

    def _death_message(self, exitcode) -> str:
        if self.memory_limit:
            return (f"the worker process stopped without an answer (exit code {exitcode}); it may "
                    f"have run out of its {self.memory_limit / 2 ** 30:.1f} GiB of memory (exactdice "
                    "serve --worker-memory raises it)")
        return f"the worker process stopped without an answer (exit code {exitcode}; out of memory?)"

    def shutdown(self) -> None:
        """Cancel every unfinished job (their worker processes are killed)."""
        for job in self.running():
            job.cancel()
        with self._lock:
            pool, self._quick_pool = self._quick_pool, None
        if pool is not None:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
