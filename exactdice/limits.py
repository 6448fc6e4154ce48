"""Work limits shared by every layer: a memory budget checked while long solves run, and
up-front refusals of work past a size limit.

**Memory budget.** The budget is, in order: what `set_memory_budget` set (the parameter
``max_memory``: the CLI's ``exactdice --max-memory SIZE``), else ``$EXACTDICE_MAX_MEMORY``, else half of the
machine's memory (or of the container's limit, if lower). `check_memory` compares the
resident memory of this process with it; it is cheap enough to call from any loop (it
reads the process size at most every `CHECK_INTERVAL_SECONDS`), and raises `TooLargeError`
naming the size reached and how to raise the budget. The state-graph explorer and the
solver call it; `memory_watchdog` adds a thread that checks the same budget for any other
work of the CLI (and the worker processes, which inherit ``$EXACTDICE_MAX_MEMORY``).

>>> parse_size("1.5G", "max_memory") == 3 * 2**29
True
>>> size_text(3 * 2**29)
'1.5 GiB'
>>> refuse_past_limit(10**7, 10**6, "damage", "the damage distribution would have {estimate} terms")
Traceback (most recent call last):
...
exactdice.errors.TooLargeError: damage: the damage distribution would have 10,000,000 terms (limit 1,000,000)
"""

from __future__ import annotations

import os
import re
import threading
import time
from contextlib import contextmanager

from exactdice.errors import InputError, TooLargeError

__all__ = [
    "ran_out_of_memory",
    "out_of_memory_error",
    "parse_size",
    "size_text",
    "default_memory_budget",
    "memory_budget",
    "set_memory_budget",
    "check_memory",
    "count_workers",
    "memory_in_use",
    "forget_workers",
    "time_limit",
    "memory_watchdog",
    "refuse_past_limit",
    "MEMORY_ENVIRONMENT_VARIABLE",
    "MEMORY_PARAMETER",
    "MEMORY_FLAG",
    "CHECK_INTERVAL_SECONDS",
]

MEMORY_ENVIRONMENT_VARIABLE = "EXACTDICE_MAX_MEMORY"
#: the parameter that sets the budget (named in every message; the CLI's ``--max-memory``)
MEMORY_PARAMETER = "max_memory"
#: the field of a memory error: `MEMORY_PARAMETER` (under the name the solver compares with)
MEMORY_FLAG = MEMORY_PARAMETER
#: `check_memory` reads the process size at most this often
CHECK_INTERVAL_SECONDS = 0.05
#: the default budget: this share of the machine's (or container's) memory
DEFAULT_SHARE = 0.5

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE | re.ASCII)
_MINIMUM_BUDGET = 64 * 2**20

_budget: int | None = None
_next_check = 0.0
_process = None
_deadline: tuple | None = None  # (monotonic time, field, message) of `time_limit`
_worker_pids: set = set()  # `count_workers`
_budget_reported = False  # set when check_memory raised: the watchdog then stands down


def parse_size(text: str, field: str = MEMORY_PARAMETER) -> int:
    """Bytes in a size like ``8G``, ``512M``, ``1.5GiB`` or ``1000000`` (binary units).

    >>> parse_size("512M")
    536870912
    >>> parse_size("lots")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: max_memory: "lots" is not a size; write e.g. 8G, 512M or 1.5GiB
    """
    match = _SIZE.match(str(text))
    if not match:
        raise InputError(field, f'"{text}" is not a size; write e.g. 8G, 512M or 1.5GiB')
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size < _MINIMUM_BUDGET:
        raise InputError(field, f"{size_text(size)} is too small; give at least {size_text(_MINIMUM_BUDGET)}")
    return size


def size_text(size: int) -> str:
    """``"3.2 GiB"``: a byte count for people."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def _machine_memory() -> int:
    import psutil

    total = psutil.virtual_memory().total
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as handle:
                limit = handle.read().strip()
        except OSError:
            continue
        if limit.isdigit() and 0 < int(limit) < total:
            total = int(limit)
    return total


def default_memory_budget() -> int:
    """Half of the machine's memory (or of the container's memory limit, if lower)."""
    return max(_MINIMUM_BUDGET, int(_machine_memory() * DEFAULT_SHARE))


def memory_budget() -> int:
    """The budget in bytes: `set_memory_budget`, else ``$EXACTDICE_MAX_MEMORY``, else the default."""
    global _budget
    if _budget is None:
        given = os.environ.get(MEMORY_ENVIRONMENT_VARIABLE)
        _budget = parse_size(given, MEMORY_ENVIRONMENT_VARIABLE) if given else default_memory_budget()
    return _budget


def set_memory_budget(size: int | str | None, *, export: bool = True) -> int:
    """Set the budget (bytes or a size text; None: back to the environment/default).

    With *export*, ``$EXACTDICE_MAX_MEMORY`` is set too, so worker processes started
    afterwards inherit the budget. Returns the budget in force.
    """
    global _budget, _next_check
    if isinstance(size, str):
        size = parse_size(size)
    _budget = size
    _next_check = 0.0
    if export:
        if size is None:
            os.environ.pop(MEMORY_ENVIRONMENT_VARIABLE, None)
        else:
            os.environ[MEMORY_ENVIRONMENT_VARIABLE] = str(size)
    return memory_budget()


def resident_memory() -> int:
    """This process's resident memory in bytes."""
    global _process
    if _process is None or _process.pid != os.getpid():
        import psutil

        _process = psutil.Process()
    return _process.memory_info().rss


def count_workers(pids) -> None:
    """Count these worker processes' memory in `check_memory` too (until `forget_workers`):
    one solve's workers (`exactdice.processes.ForkedWorkers`) spend the same budget."""
    global _workers_reading
    _worker_pids.update(pids)
    _workers_reading = (0.0, _workers_reading[1])  # read them at the next check


def memory_in_use(force: bool = False) -> int:
    """This process's resident memory plus its counted workers' own (`count_workers`), as
    `check_memory` measures it (the workers' read at most once a second, unless *force*)."""
    return resident_memory() + (_workers_memory(force) if _worker_pids else 0)


def forget_workers(pids) -> None:
    """Stop counting these worker processes (they ended)."""
    _worker_pids.difference_update(pids)


# the workers' private memory is read at most this often, and no more than 1 % of the
# time but at least every 10 s (reading it walks their page tables: about 5 ms a GiB, 25 ms
# a reading for risk=always A3 v C2's loop worker); in between the last reading stands, and
# a worker counted anew is read at once
_WORKERS_CHECK_SECONDS = 1.0
_WORKERS_CHECK_SHARE = 0.01
_WORKERS_CHECK_MOST_SECONDS = 10.0
_workers_reading = (0.0, 0)  # (when the next reading is due, the memory read)


def _workers_memory(force: bool = False) -> int:
    """The workers' own memory: forked workers share this process's pages until they write
    them, so each counts its private pages (USS, from /proc/PID/smaps_rollup), not its
    resident size (which would count every shared page twice); RSS where USS is not known."""
    global _workers_reading
    now = time.monotonic()
    if not force and now < _workers_reading[0]:
        return _workers_reading[1]
    import psutil

    total = 0
    for pid in list(_worker_pids):
        try:
            process = psutil.Process(pid)
            try:
                total += process.memory_full_info().uss
            except (psutil.AccessDenied, AttributeError):
                total += process.memory_info().rss
        except psutil.Error:  # it just ended
            pass
    spent = time.monotonic() - now
    wait = min(_WORKERS_CHECK_MOST_SECONDS, max(_WORKERS_CHECK_SECONDS, spent / _WORKERS_CHECK_SHARE))
    _workers_reading = (now + wait, total)
    return total


def _over_budget_message(size: int, budget: int, doing: str) -> str:
    return (
        f"the process reached {size_text(size)} of memory{' ' if doing else ''}{doing}, past the memory budget of "
        f"{size_text(budget)}; raise it with `{MEMORY_PARAMETER}` (e.g. "
        f"{max(1, round(2 * budget / 2**30))}G) or ${MEMORY_ENVIRONMENT_VARIABLE}, or make the problem smaller"
    )


def ran_out_of_memory(error: BaseException) -> bool:
    """Whether *error* is, or was raised while handling, a `MemoryError` (a progress bar's
    clean-up failing on an object its allocation left half made, say).

    >>> try:
    ...     try:
    ...         raise MemoryError
    ...     finally:
    ...         raise AttributeError("'tqdm' object has no attribute 'fp'")
    ... except AttributeError as error:
    ...     ran_out_of_memory(error)
    True
    """
    seen: BaseException | None = error
    for _ in range(64):  # a chain is short; the bound keeps a cycle from looping
        if seen is None:
            return False
        if isinstance(seen, MemoryError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def out_of_memory_error() -> TooLargeError:
    """What to report when the system refused an allocation (`ran_out_of_memory`) before
    the budget was reached: an address-space limit (``ulimit -v``), or a machine with
    less free memory than the budget assumes.

    >>> out_of_memory_error().field
    'max_memory'
    """
    import resource

    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    refused = (
        f"this process may address {size_text(limit)} (its address-space limit, ulimit -v)"
        if limit != resource.RLIM_INFINITY
        else "the machine had no more to give"
    )
    return TooLargeError(
        MEMORY_PARAMETER,
        f"the system refused memory at {size_text(resident_memory())} in use: {refused}. Set "
        f"`{MEMORY_PARAMETER}` (now {size_text(memory_budget())}) to about half of what this process may use "
        "(it counts memory in use, and a process maps more than it uses), so that work stops at it and says "
        "how far it got, or make the problem smaller",
    )


def check_memory(doing: str | None = None, *, states: int | None = None, force: bool = False) -> None:
    """Raise `TooLargeError` if this process (with the worker processes it counts,
    `count_workers`) uses more memory than the budget.

    Cheap: the process size is read at most every `CHECK_INTERVAL_SECONDS` (unless
    *force*). *doing* says what was going on, for the message ("while exploring"), and
    *states* how far it got (the message is only built when the budget is passed).

    >>> check_memory("in a doctest", force=True)  # far below any budget
    """
    global _next_check
    now = time.monotonic()
    if not force and now < _next_check:
        return
    _next_check = now + CHECK_INTERVAL_SECONDS
    if _deadline is not None and now > _deadline[0]:
        raise TooLargeError(_deadline[1], _deadline[2])
    size = memory_in_use(force)
    budget = memory_budget()
    if size > budget:
        global _budget_reported
        _budget_reported = True
        doing = doing or "while working"
        if states is not None:
            doing += f" ({states:,} states)"
        if _worker_pids:
            doing += f" (with its {len(_worker_pids)} worker processes)"
        raise TooLargeError(MEMORY_PARAMETER, _over_budget_message(size, budget, doing))


@contextmanager
def time_limit(seconds: float | None, field: str, message: str):
    """Within the block, `check_memory` (which exploring and solving call as they go) also
    raises ``TooLargeError(field, message)`` once ``seconds`` have passed: a time limit
    for work whose loops have no clock of their own. None: no limit. One per process (the
    innermost block's).

    >>> with time_limit(0.0, "max_seconds", "passed 0 s"):
    ...     check_memory(force=True)
    Traceback (most recent call last):
    exactdice.errors.TooLargeError: max_seconds: passed 0 s
    """
    global _deadline
    if seconds is None:
        yield
        return
    previous = _deadline
    _deadline = (time.monotonic() + seconds, field, message)
    try:
        yield
    finally:
        _deadline = previous


class memory_watchdog:
    """A context manager running a daemon thread that checks the process tree's memory
    (this process and its children) against the budget every *interval* seconds; past it,
    the main thread is interrupted and `TooLargeError` is raised from the ``with`` block.

    The backstop for work that has no `check_memory` call in its loops.
    """

    def __init__(self, interval: float = 0.5, grace: float = 2.0):
        self.interval = interval
        self.grace = grace
        self.exceeded: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _tree_size(self) -> tuple[int, int]:
        size, children = resident_memory(), 0
        try:
            for child in _process.children(recursive=True):
                try:
                    size += child.memory_info().rss
                    children += 1
                except Exception:  # a child that just ended
                    pass
        except Exception:
            pass
        return size, children

    def _watch(self):
        import _thread

        while not self._stop.wait(self.interval):
            budget = memory_budget()  # the CLI may set it after the thread started
            size, children = self._tree_size()
            if size > budget:
                self.exceeded = _over_budget_message(
                    size, budget, f"(with its {children} worker processes)" if children else ""
                )
                # a loop with its own check_memory usually stops first, with a better message:
                # give it a moment, and interrupt only work that has no check of its own
                if not self._stop.wait(self.grace) and not _budget_reported:
                    _thread.interrupt_main()
                return

    def __enter__(self):
        global _budget_reported
        _budget_reported = False
        memory_budget()  # a bad $EXACTDICE_MAX_MEMORY is an error before any work
        self._thread = threading.Thread(target=self._watch, name="exactdice-memory-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind, error, traceback):
        self._stop.set()
        if self.exceeded and kind is not None and not issubclass(kind, TooLargeError):
            raise TooLargeError(MEMORY_PARAMETER, self.exceeded) from None  # what our interrupt became
        return False


def refuse_past_limit(estimate: int, limit: int, field: str, what: str, how_to_raise: str = "") -> None:
    """Raise `TooLargeError` naming *field* when *estimate* > *limit*: the message is *what*
    with ``{estimate}`` filled in, then the limit, then *how_to_raise*.

    >>> refuse_past_limit(5, 10, "x", "{estimate} steps")  # within the limit: nothing
    """
    if estimate > limit:
        message = f"{what.format(estimate=f'{estimate:,}')} (limit {limit:,})"
        raise TooLargeError(field, message + (f"; {how_to_raise}" if how_to_raise else ""))
