"""Solve many table cells on every core, resuming from (and filling) the results store.

A *cell* is a `SweepCell`: the `ResultKey` that identifies its result in the store, and
the picklable *task* handed to the solve function (by default the key itself). The solve
function must be a top-level function (worker processes import it by name) and return a
result the store can hold: dicts, lists, ints, strings and Fractions.

Results already in the store are not solved again; each new result is written to the
store by the parent process as soon as it arrives, one transaction each, so a sweep that
is interrupted resumes where it stopped and a re-run is instant.

>>> cells = [SweepCell(ResultKey("demo", {}, {"n": n})) for n in (2, 3)]
>>> sweep(cells, _reciprocal_of_key, store=None, workers=1, progress=False)
[Fraction(1, 2), Fraction(1, 3)]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdice.errors import InputError
from exactdice.tables.store import ResultKey, ResultStore

__all__ = ["SweepCell", "sweep", "SweepStatistics"]


@dataclass(frozen=True)
class SweepCell:
    """One unit of work: its store key and the argument of the solve function.

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
    """How a sweep went: cells found in the store and cells solved now."""

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
    try:
        return solve_fn(argument)
    except InputError as error:
        return _WorkerInputError(type(error), error.field, error.message)


def sweep(cells: Sequence[SweepCell | ResultKey], solve_fn: Callable, *,
          store: ResultStore | None, workers: int = 2, progress: bool = True,
          description: str = "solving", statistics: SweepStatistics | None = None) -> list:
    """Solve every cell (in parallel across *workers* processes) and return results in order.

    ``store=None`` means no cache (``--no-cache``). ``workers=1`` solves in this process.
    A progress bar goes to stderr when *progress* is true.

    >>> cells = [ResultKey("demo", {}, {"n": n}) for n in (4, 5)]
    >>> sweep(cells, _reciprocal_of_key, store=None, workers=1, progress=False)
    [Fraction(1, 4), Fraction(1, 5)]
    """
    from tqdm import tqdm

    started = time.perf_counter()
    cells = [cell if isinstance(cell, SweepCell) else SweepCell(cell) for cell in cells]
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    results: list = [None] * len(cells)

    # identical keys are solved once
    first_index_of: dict[tuple, int] = {}
    duplicates: dict[int, list[int]] = {}
    for index, cell in enumerate(cells):
        parts = cell.key.parts()
        if parts in first_index_of:
            duplicates.setdefault(first_index_of[parts], []).append(index)
        else:
            first_index_of[parts] = index
    unique = sorted(first_index_of.values())

    missing = []
    for index in unique:
        stored = store.get(cells[index].key) if store is not None else None
        if stored is None:
            missing.append(index)
        else:
            results[index] = stored
    cached = len(unique) - len(missing)

    bar = tqdm(total=len(unique), initial=cached, desc=description, unit="cell",
               disable=not progress, file=sys.stderr, dynamic_ncols=True, leave=False)

    def record(index: int, result) -> None:
        results[index] = result
        if store is not None:
            store.put(cells[index].key, result)
        bar.update(1)

    try:
        if workers == 1 or len(missing) <= 1:
            for index in missing:
                record(index, solve_fn(cells[index].argument))
        else:
            # one task a cell: a long solve is stored the moment it is done, and the two
            # workers never wait for each other's batches
            executor = ProcessPoolExecutor(max_workers=workers)
            try:
                pending = {executor.submit(_solve_one, solve_fn, cells[index].argument): index
                           for index in missing}
                while pending:
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
            finally:
                # on an error or Ctrl-C, drop the queued chunks instead of solving them
                executor.shutdown(wait=True, cancel_futures=True)
    finally:
        bar.close()

    for first, others in duplicates.items():
        for index in others:
            results[index] = results[first]
    if statistics is not None:
        statistics.cached += cached
        statistics.solved += len(missing)
        statistics.seconds += time.perf_counter() - started
    return results


def _reciprocal_of_key(key: ResultKey) -> Fraction:
    # the examples' and tests' solve function
    if key.setup["n"] == 0:
        raise InputError("n", "has no reciprocal")
    return Fraction(1, key.setup["n"])
