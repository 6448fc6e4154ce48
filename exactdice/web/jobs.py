"""Background work the server can stop: one worker process per job, at most N at a time,
and quick tasks (`exactdice.web.tasks.QUICK_TASKS`) in a pool of their own.

A `Job` runs `exactdice.web.tasks.run_task` in a process of its own, started by a fork
server that has the library imported already (a start costs milliseconds); a thread of the
server reads the job's pipe (progress reports, then the answer), so a slow solve never
blocks a quick one, and ``cancel`` stops the process: the work really stops. The workers
are `exactdice.processes`' (set up, stopped and reported on as every worker is).

Cancelling sends the worker SIGTERM, whose default action ends it at once: its exit status
(`Job.exit_code`) is then `CANCELLED_EXIT_CODE`, ``-SIGTERM`` (one that outlived the grace
period would be killed: ``-SIGKILL``). Only the job's own thread waits for the process: two
threads joining one forkserver process race for its exit status, and the loser reads 255.

>>> manager = JobManager(workers=1)
>>> job = manager.submit("dist", {"expression": "d2"})
>>> job.wait(60) and job.status, job.result["outcomes"][0][1]
('done', Fraction(1, 2))
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
from dataclasses import asdict

from exactdice.processes import GRACE_SECONDS, death_message, process_pool, stop_pool, stop_processes
from exactdice.progress import Progress, progress_words
from exactdice.web.tasks import WORKER_MODULES

__all__ = ["Job", "JobManager", "JOB_STATUSES", "CANCELLED_EXIT_CODE"]

JOB_STATUSES = ("queued", "running", "done", "error", "cancelled")
_KEPT_FINISHED_JOBS = 200
#: the exit status of a cancelled worker process (ended by SIGTERM)
CANCELLED_EXIT_CODE = -signal.SIGTERM
_WAITING = Progress("waiting for a free worker")
_STARTED = Progress("started")


class Job:
    """One background task: its status, latest progress, and answer or errors."""

    def __init__(self, identifier: str, task: str, arguments: dict, on_done=None, fields=()):
        self.id, self.task, self.arguments = identifier, task, arguments
        self.fields = tuple(fields)  # the form's fields, which its errors may name
        self.status = "queued"
        self.progress: Progress = _WAITING
        self.result = None
        self.errors: dict | None = None
        self.pid: int | None = None
        self.started = time.monotonic()
        self.seconds: float | None = None
        self.exit_code: int | None = None  # the worker's exit status, once it has ended
        self._on_done = on_done
        self._finished = threading.Event()
        self._process = None
        self._process_ended = threading.Event()
        self._lock = threading.Lock()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished (True) or ``timeout`` seconds passed (False)."""
        return self._finished.wait(timeout)

    @property
    def finished(self) -> bool:
        """True once the job is done, failed or cancelled."""
        return self._finished.is_set()

    def finish(self, outcome: tuple) -> None:
        """End the job with a task's outcome (`exactdice.web.tasks.task_outcome`)."""
        kind, value = outcome
        if kind == "done":
            self._finish("done", result=value)
        else:
            self._finish("error", errors=value if kind == "input_error" else {"form": value})

    def _finish(self, status: str, result=None, errors=None) -> None:
        if status == "done" and self._on_done is not None and not self._finished.is_set():
            try:  # stored before anyone hears it is done, so asking again finds it
                self._on_done(result)
            except Exception as error:  # the answer stands even if the cache cannot keep it
                self.progress = Progress(f"(not cached: {error})")
        with self._lock:
            if self._finished.is_set():
                return
            self.status, self.result, self.errors = status, result, errors
            self.seconds = time.monotonic() - self.started
            self._finished.set()

    def cancel(self) -> bool:
        """Stop the job: stop its worker process if it runs. False if it had finished."""
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
            if not self._process_ended.wait(GRACE_SECONDS):
                process.kill()
                self._process_ended.wait(GRACE_SECONDS)
        return True

    def snapshot(self) -> dict:
        """The job's state as JSON-ready data (the result as it was stored, exact)."""
        return {
            "job": self.id,
            "task": self.task,
            "status": self.status,
            "progress": progress_words(self.progress),
            "progress_data": asdict(self.progress),
            "result": self.result,
            "errors": self.errors,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
        }


class JobManager:
    """Runs jobs in worker processes, at most ``workers`` at once (the rest wait their turn),
    and quick tasks in ``quick_workers`` more; each worker's address space is capped at
    ``memory_limit`` bytes when given."""

    def __init__(self, workers: int = 2, memory_limit: int | None = None, quick_workers: int = 2):
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.memory_limit = memory_limit
        self._quick_workers = max(1, quick_workers)
        self._quick_pool = None
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(WORKER_MODULES))
        self._slots = threading.BoundedSemaphore(workers)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def submit(self, task: str, arguments: dict, on_done=None, fields=()) -> Job:
        """Start ``task`` with ``arguments`` in the background; returns its `Job` at once
        (*fields*: the form's fields, which its errors may name)."""
        from exactdice.web.tasks import QUICK_TASKS

        identifier = f"{next(self._counter)}-{secrets.token_hex(4)}"
        job = Job(identifier, task, arguments, on_done, fields)
        with self._lock:
            self._jobs[identifier] = job
            finished = [key for key, old in self._jobs.items() if old.finished]
            for key in finished[: max(0, len(finished) - _KEPT_FINISHED_JOBS)]:
                del self._jobs[key]
        if task in QUICK_TASKS:
            self._run_quick(job)
        else:
            threading.Thread(target=self._run, args=(job,), daemon=True, name=f"exactdice-job-{identifier}").start()
        return job

    def get(self, identifier: str) -> Job | None:
        """The job with this id, or None."""
        with self._lock:
            return self._jobs.get(identifier)

    def running(self) -> list[Job]:
        """Jobs not finished yet."""
        with self._lock:
            return [job for job in self._jobs.values() if not job.finished]

    def _run_quick(self, job: Job) -> None:
        """A quick task in the long-lived pool (its workers never wait for a process to start,
        nor behind long solves); its answer finishes the job when it comes."""
        from exactdice.web.tasks import task_outcome

        with self._lock:
            if self._quick_pool is None:
                self._quick_pool = process_pool(
                    self._quick_workers, context=self._context, memory_limit=self.memory_limit, watch=os.getpid()
                )
            pool = self._quick_pool
        job.status, job.progress = "running", _STARTED

        def finished(future):
            try:
                job.finish(future.result())
            except Exception as error:  # the pool broke (a worker died): a new one next time
                with self._lock:
                    if self._quick_pool is pool:
                        self._quick_pool = None
                job.finish(("failed", death_message(type(error).__name__, self.memory_limit)))
            job._process_ended.set()

        pool.submit(task_outcome, job.task, job.arguments, self.memory_limit).add_done_callback(finished)

    def _run(self, job: Job) -> None:
        with self._slots:
            if job.finished:  # cancelled while it waited
                return
            try:
                receiving, process = self._start(job)
            except Exception as error:  # no process (out of memory, or of processes): said, not hung
                job.finish(("failed", f"no worker process could start ({type(error).__name__}: {error})"))
                return
            if process is None:
                return
            try:
                self._follow(job, receiving, process)
            finally:
                receiving.close()
                process.join(GRACE_SECONDS)  # only this thread waits for it (the module text)
                if process.exitcode is None:
                    stop_processes([process], 0)
                job.exit_code = process.exitcode
                job._process_ended.set()

    def _start(self, job: Job):
        """The job's worker process and the end of its pipe this side reads (None: cancelled)."""
        from exactdice.web.tasks import run_task

        receiving, sending = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=run_task, daemon=True, args=(sending, job.task, job.arguments, self.memory_limit, os.getpid())
        )
        with job._lock:
            if job.finished:
                receiving.close()
                sending.close()
                return receiving, None
            process.start()
            job._process, job.pid, job.status, job.progress = process, process.pid, "running", _STARTED
        sending.close()
        return receiving, process

    def _follow(self, job: Job, receiving, process) -> None:
        """Read the job's pipe: progress reports, then the outcome (or the worker's death)."""
        while True:
            try:
                kind, value = receiving.recv()
            except (EOFError, OSError):
                process.join(GRACE_SECONDS)
                job.finish(
                    (
                        "failed",
                        death_message(process.exitcode, self.memory_limit)
                        + (" (exactdice serve --worker-memory raises it)" if self.memory_limit else ""),
                    )
                )
                return
            if kind == "progress":
                job.progress = value
                continue
            job.finish((kind, value))
            return

    def start_worker_server(self) -> None:
        """Start the fork server (it imports `WORKER_MODULES`, about half a second) in the
        background, so the first job does not wait for it; a job starts it otherwise."""
        import multiprocessing.forkserver

        def start():
            try:
                multiprocessing.forkserver.ensure_running()
            except OSError:  # (no process could start: the first job says so)
                pass

        threading.Thread(target=start, daemon=True, name="exactdice-fork-server").start()

    def shutdown(self) -> None:
        """Cancel every unfinished job (their worker processes are stopped), and the quick pool."""
        for job in self.running():
            job.cancel()
        with self._lock:
            pool, self._quick_pool = self._quick_pool, None
        if pool is not None:
            stop_pool(pool)
