"""The work the server hands to its worker processes: each task calls one library entry
point (`exactdice.answers`) with the values the page sent, by the parameters' names, and
returns the answer's plain data (exact `Fraction`s: the results store keeps them exact).

`run_task` is what a worker process runs: it sends each `exactdice.progress.Progress` the
entry point reports, then the answer (or the errors) down a pipe.

>>> data = karbon_odds({"player_dice": "d6", "narrator_dice": "d10", "consequence": 1, "pool": "none",
...                     "reserve": "none"})
>>> data["provenance"]["states"], sum(row[1] for row in data["outcomes"])
(100, Fraction(1, 1))
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.progress import Throttled

__all__ = [
    "karbon_odds",
    "karbon_length",
    "what_if",
    "karbon_grid",
    "system_exact",
    "validate",
    "dist_table",
    "TASKS",
    "run_task",
    "task_outcome",
    "MAX_RESULT_BYTES",
    "QUICK_TASKS",
    "WORKER_MODULES",
]

#: the largest answer a worker sends back (pickled); past it, the size is the answer
MAX_RESULT_BYTES = 64 * 2**20


def karbon_odds(values: dict, progress=None) -> dict:
    """A contest's odds (`exactdice.answers.karbon_odds`), with an optimal player's advice in
    words."""
    from exactdice.answers import karbon_odds as odds

    return odds(values, advice=True, progress=progress).to_data()


def karbon_length(values: dict, progress=None) -> dict:
    """How long a contest lasts (`exactdice.answers.karbon_odds` with its ``length`` chart):
    asked apart from the odds, which come first (the chart can take several times the solve)."""
    from exactdice.answers import karbon_odds as odds

    return odds(dict(values, max_seconds=0), length=True, progress=progress).to_data()


def what_if(values: dict, progress=None) -> dict:
    """The what-if strip (`exactdice.answers.karbon_what_if`): P(win) with each stepped setup
    parameter one step down and up, one chart each."""
    from exactdice.answers import chart_data, karbon_what_if

    report, charts = karbon_what_if(values, progress=progress)
    return {
        "kind": "what_if",
        "charts": [chart_data(chart) for chart in charts],
        "base": report.base_values,
        "skipped": [list(pair) for pair in report.skipped],
    }


def karbon_grid(values: dict, axes: dict, progress=None) -> dict:
    """A grid of contests (`exactdice.answers.karbon_table`, the function `karbon table` uses)."""
    from exactdice.answers import karbon_table
    from exactdice.answers.tables import PAGE_MAX_TABLE_CELLS

    grid = karbon_table(values, axes, max_cells=PAGE_MAX_TABLE_CELLS, progress=progress)
    return {"kind": "grid", **grid.to_dict()}


def system_exact(system: str, values: dict, progress=None) -> dict:
    """Another system's exact outcomes and pictures (`exactdice.answers.system_answer`)."""
    from exactdice.answers import system_answer

    return system_answer(system, values, progress=progress).to_data()


def validate(
    system: str, values: dict, samples: str, column: str | None, alpha: float, law=None, progress=None
) -> dict:
    """An uploaded CSV against the exact laws (`exactdice.answers.validate_samples`), as
    ``exactdice validate`` tests a file: a blank column tests every column with a law."""
    from exactdice.answers import validate_samples

    with uploaded(samples) as path:
        try:
            found = validate_samples(
                system, values, samples=path, column=column or None, alpha=alpha, law=law, progress=progress
            )
        except InputError as error:
            if error.field not in ("samples", "column"):
                raise
            raise InputError(error.field, error.message.replace(path, "the uploaded file")) from None
    return found.to_data()


@contextmanager
def uploaded(text: str):
    """The uploaded text in a temporary file, removed afterwards."""
    import tempfile

    handle, path = tempfile.mkstemp(suffix=".csv", prefix="exactdice-upload-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        yield path
    finally:
        os.unlink(path)


def dist_table(expression: str, progress=None) -> dict:
    """A dice expression's exact distribution (`parse_dice`), checked to sum to exactly 1:
    each outcome with P(exactly), P(at least), P(at most) (the last two for integer
    outcomes), and the mean.

    >>> dist_table("d2")["outcomes"][0]
    ['1', Fraction(1, 2), Fraction(1, 1), Fraction(1, 2)]
    """
    from exactdice.core.notation import parse_dice

    distribution = parse_dice(expression, field="expression")
    probabilities = distribution.probabilities()
    if sum(probabilities.values(), Fraction(0)) != 1:
        raise ArithmeticError("the probabilities do not sum to exactly 1")
    integer = all(isinstance(outcome, int) for outcome in probabilities)
    at_least = distribution.survival() if integer else {}
    at_most = distribution.cdf() if integer else {}
    return {
        "kind": "dist",
        "expression": expression,
        "outcomes": [
            [str(outcome), p, at_least.get(outcome), at_most.get(outcome)] for outcome, p in probabilities.items()
        ],
        "mean": distribution.mean() if integer else None,
    }


TASKS = {
    "karbon_odds": karbon_odds,
    "karbon_length": karbon_length,
    "what_if": what_if,
    "karbon_grid": karbon_grid,
    "system_exact": system_exact,
    "validate": validate,
    "dist": dist_table,
}
#: tasks whose work is bounded to seconds before they start: they run in a pool of their own
QUICK_TASKS = frozenset({"dist"})
#: what the tasks import, some only when first called: the server's fork server imports them
#: once, so a job's worker process (a fork of it) starts with them (`exactdice.web.jobs`)
WORKER_MODULES = (
    "exactdice.web.tasks",
    "exactdice.answers.karbon",
    "exactdice.answers.tables",
    "exactdice.karbon.solve",
    "exactdice.karbon.compiled",
    "exactdice.karbon.bounds",
    "exactdice.karbon.system",
    "exactdice.karbon.length",
    "exactdice.karbon.charts",
    "exactdice.karbon.sensitivity",
    "exactdice.karbon.tables",
    "exactdice.markov.loop_pool",
    "exactdice.markov.bounded_split",
    "exactdice.markov.expansion_pool",
    "exactdice.tables.sweep",
    "exactdice.systems",
    "exactdice.output_files",
    "exactdice.processes",
    "exactdice.validation",
    "flint",
    "networkx",
    "psutil",
    "threadpoolctl",
    "tqdm",
)


def _out_of_memory(memory_limit: int | None) -> dict:
    limit = f"{memory_limit / 2**30:.1f} GiB" if memory_limit else "the machine's memory"
    return {
        "max_states": f"the solve ran out of memory (a worker may use {limit}; raise it with "
        "exactdice serve --worker-memory GIB, or lower `max_states`)"
    }


def task_outcome(name: str, arguments: dict, memory_limit: int | None = None, progress=None) -> tuple:
    """``("done", data)``, ``("input_error", {field: message})`` or ``("failed", text)`` of one
    task, run here; an answer past `MAX_RESULT_BYTES` is refused with its size."""
    from exactdice.limits import MEMORY_PARAMETER, ran_out_of_memory

    try:
        result = TASKS[name](**arguments, progress=progress)
    except MemoryError:
        return ("input_error", _out_of_memory(memory_limit))
    except InputError as error:
        if error.field == MEMORY_PARAMETER:  # the worker's budget: the server's advice
            return ("input_error", _out_of_memory(memory_limit))
        return ("input_error", getattr(error, "errors", None) or {error.field or "form": error.message})
    except Exception as error:  # reported on the page as a message, not a traceback
        if ran_out_of_memory(error):
            return ("input_error", _out_of_memory(memory_limit))
        return ("failed", f"{type(error).__name__}: {error}")
    import pickle

    size = len(pickle.dumps(result))
    if size > MAX_RESULT_BYTES:
        return (
            "input_error",
            {
                "form": f"the answer is {size:,} bytes, past the page's limit of "
                f"{MAX_RESULT_BYTES:,}; ask for less (the command line prints any size)"
            },
        )
    return ("done", result)


def run_task(
    connection, name: str, arguments: dict, memory_limit: int | None = None, server: int | None = None
) -> None:
    """Run ``TASKS[name](**arguments)`` in this (worker) process and send the outcome.

    Sends ``("progress", Progress)`` messages (at most five a second), then the outcome of
    `task_outcome`. The worker is set up by `exactdice.processes.start_worker`: it ends with
    the *server*, and its memory is capped at *memory_limit* bytes.
    """
    from exactdice.processes import start_worker

    start_worker(os.getppid(), memory_limit, watch=server)

    def send(progress) -> None:
        try:
            connection.send(("progress", progress))
        except (BrokenPipeError, OSError):
            pass

    try:
        connection.send(task_outcome(name, arguments, memory_limit, Throttled(send)))
    finally:
        connection.close()
