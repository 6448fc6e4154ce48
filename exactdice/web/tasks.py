"""The work the web server hands to its worker processes, and the exact results it keeps.

Each task is a plain function of picklable arguments returning JSON-ready data with exact
numbers as `Fraction` (the results store keeps them exact); it calls the same library
functions as the CLI. `run_task` is what a worker process runs: it sends the progress
lines of the solver's tqdm bars and then the answer (or the `InputError`) down a pipe.

>>> from exactdice.karbon import ContestSetup
>>> result = karbon_odds(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1,
...                                   pool={}, reserve={}))
>>> result["states"], result["win"] + result["loss"] + result["tie"] + result["never_ends"]
(100, Fraction(1, 1))
"""

from __future__ import annotations

import io
import re
import sys
import time
from contextlib import contextmanager
from fractions import Fraction

from exactdice.errors import InputError

__all__ = ["dist_table", "sample_counts", "MAX_RESULT_BYTES", "karbon_odds", "karbon_bounds", "worker_memory_budget", "validate_karbon", "validate_system", "system_exact", "fit_report", "karbon_law", "run_task", "TASKS", "EXPECTATIONS", "WIDE_BOUNDS"]

#: the expectations of a contest, in the order the page shows them
EXPECTATIONS = ("rounds", "breaks", "glitches", "injuries", "conditions")


def karbon_odds(setup, ruleset=None, player=None, narrator=None, max_states=None, max_seconds=None) -> dict:
    """A contest's exact odds and expectations (`contest_odds`), checked to sum to exactly 1;
    under an optimal player also the first-round advice in words. An optimal player's game
    past ``max_states``, or past a tenth of ``max_seconds`` of exploring
    (`exactdice.karbon.attempt`), is answered with certified bounds searched for
    ``max_seconds`` (`karbon_bounds`) when that is given and not 0, as the CLI does."""
    from exactdice.errors import TooLargeError
    from exactdice.karbon.attempt import attempt_words, exact_attempt_seconds
    from exactdice.karbon.bounds import bounds_apply
    from exactdice.karbon.dice import dice_text
    from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
    from exactdice.karbon.solve import DEFAULT_MAX_STATES, contest_odds, explain_first_round
    from exactdice.limits import MEMORY_FLAG

    player, narrator = player or PlayerPolicy(), narrator or NarratorPolicy()
    optimal = player.kind == "optimal"
    progress = isinstance(sys.stderr, _ProgressPipe)   # only in a worker process
    began = time.perf_counter()
    max_states = max_states or DEFAULT_MAX_STATES
    can_bound = bool(max_seconds) and bounds_apply(player, narrator)
    try:
        odds = contest_odds(setup, ruleset, player, narrator, max_states=max_states,
                            explore_seconds=exact_attempt_seconds(max_seconds) if can_bound else None,
                            progress=progress, all_states=optimal,
                            draw_values=optimal and setup.player_dice is None)
    except TooLargeError as error:
        if not can_bound:
            raise
        too_large = {"max_states": f"past Max states, {max_states:,}",
                     "explore_seconds": f"{error.message}, {attempt_words(max_seconds, 'Bounds seconds')}",
                     MEMORY_FLAG: "past this worker's memory budget"}.get(error.field, error.message)
    else:
        too_large = None
    if too_large is not None:  # outside the except: the partly explored graph is freed first
        _progress("the exact game is too large; searching for certified bounds")
        result = karbon_bounds(setup, ruleset, player, narrator, max_states, max_seconds)
        return dict(result, too_large=too_large, seconds=round(time.perf_counter() - began, 1))
    total = odds.win + odds.loss + odds.tie + odds.never_ends
    if total != 1:
        raise ArithmeticError(f"the outcome probabilities sum to {total}, not exactly 1")
    result = {"win": odds.win, "loss": odds.loss, "tie": odds.tie, "never_ends": odds.never_ends,
              "states": odds.states, "transitions": odds.transitions,
              "solve_ms": round(1000 * (time.perf_counter() - began)),
              "draws": {"player": dice_text(odds.player_draw), "narrator": dice_text(odds.narrator_draw)},
              "ruleset": odds.ruleset.to_dict(),
              "policies": {"player": odds.player_policy.text(), "narrator": odds.narrator_policy.text()},
              "advice": explain_first_round(odds) if optimal else []}
    for name in EXPECTATIONS:
        result[f"expected_{name}"] = getattr(odds, f"expected_{name}")
    return result


#: certified bounds further apart than this say too little to act on: the calculator flags
#: them, the tables page hatches them instead of shading them by their lower bound
WIDE_BOUNDS = Fraction(1, 5)
#: why a bounds search stopped short of its precision, in the page's words
_BOUNDS_STOPPED = {"time": "the time given ran out (raise Bounds seconds)",
                   "states": "it reached Max states (raise it)",
                   "memory": "it reached this worker's memory budget (exactdice serve --worker-memory raises it)",
                   "interrupted": "it was interrupted"}


def karbon_bounds(setup, ruleset, player, narrator, max_states: int, max_seconds: float) -> dict:
    """Certified bounds on an optimal player's value (`bounded_odds`, in this process), named
    as the CLI's ``--json`` names them: ``lower`` (rounded down to 4 places, with its exact
    fraction when it is exact) and ``upper`` (rounded up), the strategy's exact odds where its
    game was solved (``strategy_odds``), the first round's choices in words (``advice``).

    >>> from exactdice.karbon import ContestSetup, PlayerPolicy, NarratorPolicy
    >>> found = karbon_bounds(ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 1},
    ...                                    reserve={}, consequence=1), None,
    ...                       PlayerPolicy(kind="optimal"), NarratorPolicy(), 10_000, 10)
    >>> found["kind"], found["reached"], float(found["lower"]["decimal"]) <= float(found["upper"]["decimal"])
    ('bounds', True, True)
    """
    from exactdice.core.exact import directed_decimal_text, fraction_text
    from exactdice.karbon.bounds import bounded_odds, explain_bounded_first_round, interval_text
    from exactdice.karbon.dice import dice_text

    def report(lower, upper, explored, seconds):
        if isinstance(sys.stderr, _ProgressPipe):  # throttled there
            sys.stderr.write(f"bounds after {seconds:.0f} s: {interval_text(lower, upper)}, {explored:,} states\n")

    found = bounded_odds(setup, ruleset, player, narrator, max_seconds=max_seconds, max_states=max_states,
                         certify_states=max_states, progress=report, workers=0,
                         phase=lambda text: _progress(f"{text}\u2026"))
    result = {"kind": "bounds",
              "objective": "P(win)" if found.ruleset.objective == "win" else "expected score (win 1, tie 1/2)",
              "lower": {"decimal": directed_decimal_text(Fraction(found.lower), 4, up=False),
                        "exact": fraction_text(found.lower) if found.lower_kind == "exact" else None},
              "upper": {"decimal": directed_decimal_text(Fraction(found.upper), 4, up=True)},
              "lower_kind": found.lower_kind, "gap": f"{found.gap:.4f}", "precision": found.precision,
              "wide": Fraction(found.upper) - Fraction(found.lower) > WIDE_BOUNDS,
              "reached": found.gap <= found.precision,
              "stopped": None if found.gap <= found.precision else _BOUNDS_STOPPED.get(found.stopped, found.stopped),
              "states_explored": found.explored, "seconds": round(found.seconds, 1),
              "fixed_preferences_value": found.fixed_value,
              "draws": None if setup.player_dice is None else {"player": dice_text(setup.player_dice),
                                                                "narrator": dice_text(setup.narrator_dice)},
              "policies": {"player": found.player_policy.text(), "narrator": found.narrator_policy.text()},
              "ruleset": found.ruleset.to_dict(),
              "advice": explain_bounded_first_round(found)}
    if found.win is not None:  # exact, against the narrator's best reply
        result["strategy_odds"] = {"win": found.win, "loss": found.loss, "tie": found.tie,
                                   "never_ends": found.never_ends}
    return result


def karbon_law(exact: dict) -> dict:
    """The exact P(outcome) of the simulator's outcome column, from a `karbon_odds` result."""
    return {"win": exact["win"], "loss": exact["loss"], "tie": exact["tie"], "unfinished": exact["never_ends"]}


def fit_report(law: dict, counts: dict, alpha: float) -> dict:
    """`goodness_of_fit` of the counts against the exact law, with the law (a list of pairs)."""
    from exactdice.validation import goodness_of_fit

    report = goodness_of_fit(law, counts, alpha=alpha, field="samples")
    return {"report": report.to_json(), "law": [[name, p] for name, p in law.items()]}


def validate_karbon(samples: str, column: str, setup, ruleset, player, narrator, max_states=None,
                    alpha: float = 0.01, exact=None, all_columns: bool = False) -> dict:
    """Test a sample CSV against a contest's exact laws: its *column* (the outcome) against
    P(outcome), and with *all_columns* every count column it has (rounds, Breaks, ...) as
    ``exactdice validate karbon`` does (`fit_sample_columns`). ``exact`` is the contest's
    `karbon_odds` result (the server keeps it, and passes it back to skip the solve)."""
    exact = exact or karbon_odds(setup, ruleset, player, narrator, max_states)

    def column_laws(header):
        from exactdice.karbon.count_laws import COUNT_COLUMNS, column_distributions

        if not set(header) & set(COUNT_COLUMNS):
            return {}
        return column_distributions(setup, ruleset, player, narrator)

    return dict(_fit_samples(samples, column, karbon_law(exact), column_laws if all_columns else None, alpha),
                exact=exact)


def validate_system(samples: str, column: str, system: str, values: dict, alpha: float = 0.01,
                    exact=None, all_columns: bool = False) -> dict:
    """Test a sample CSV against another system's exact laws, its outcome column and (with
    *all_columns*) every further column the system gives a law for, as the CLI does."""
    exact = exact or system_exact(system, values)

    def column_laws(header):
        from exactdice.web.systems import SYSTEM_PAGES

        page = SYSTEM_PAGES[system]
        declared = page.rules_system()
        setup, rules = page.build(values)
        both = getattr(declared, "exact_laws", None)
        if both is not None:
            return dict(both(setup, rules)[1])
        columns = getattr(declared, "column_distributions", None)
        return dict(columns(setup, rules)) if columns is not None else {}

    return dict(_fit_samples(samples, column, outcomes_law(exact), column_laws if all_columns else None, alpha),
                exact=exact)


def _fit_samples(samples: str, column: str, law: dict, column_laws, alpha: float) -> dict:
    """The page's fit report of an uploaded CSV: the *column* against *law*, and where
    *column_laws* (header -> {column: law}) is given, every further column with a law, each
    at alpha / k (`fit_sample_columns`, as ``exactdice validate``)."""
    from exactdice.validation import fit_sample_columns

    with _uploaded(samples) as path:
        try:
            if column_laws is None:
                return fit_report(law, sample_counts_of(path, column), alpha)
            reports = fit_sample_columns(path, column, law, column_laws(_header(path)), alpha=alpha, field="samples")
        except InputError as error:
            raise InputError("samples", error.message.replace(path, "the uploaded file")) from None
    return {"report": reports[column].to_json(), "law": [[name, p] for name, p in law.items()],
            "columns": {name: report.to_json() for name, report in reports.items()},
            "fits": all(report.fits for report in reports.values())}


def _header(path) -> list[str]:
    import csv

    with open(path, encoding="utf-8", newline="") as handle:
        return [name.strip() for name in next(csv.reader([handle.readline(1_000_000)]), [])]


def sample_counts(text: str, column: str) -> dict:
    """Outcome counts of one column of an uploaded CSV, read by the CLI's own reader (via a
    temporary file, in the worker: a large upload is counted off the server's event loop)."""
    with _uploaded(text) as path:
        try:
            return sample_counts_of(path, column)
        except InputError as error:
            raise InputError("samples", error.message.replace(path, "the uploaded file")) from None


def sample_counts_of(path, column: str) -> dict:
    """Counts of one column of the CSV file *path* (`read_sample_column`)."""
    from exactdice.validation import read_sample_column

    return dict(read_sample_column(path, column, field="samples"))


@contextmanager
def _uploaded(text: str):
    """The uploaded text in a temporary file, removed afterwards."""
    import os
    import tempfile

    handle, path = tempfile.mkstemp(suffix=".csv", prefix="exactdice-upload-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        yield path
    finally:
        os.unlink(path)


def outcomes_law(result: dict) -> dict:
    """{outcome: exact probability} of a `system_exact` result (its rows also carry words)."""
    return {row[0]: row[1] for row in result["outcomes"]}


def system_exact(system: str, values: dict) -> dict:
    """Another system's exact outcome distribution (`exactdice.web.systems.exact_outcomes`)."""
    from exactdice.web.systems import SYSTEM_PAGES, exact_outcomes

    words = getattr(SYSTEM_PAGES[system].rules_system(), "outcome_words", None) or str
    # a list of [outcome, p, in words]: the store sorts mapping keys, and the order is the system's
    return {"outcomes": [[name, p, words(name)] for name, p in exact_outcomes(system, values).items()]}


def dist_table(expression: str) -> dict:
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
    return {"expression": expression,
            "outcomes": [[str(outcome), p, at_least.get(outcome), at_most.get(outcome)]
                         for outcome, p in probabilities.items()],
            "mean": distribution.mean() if integer else None}


def karbon_grid(row_axis, rows, column_axis, columns, fixed, player, narrator, rules) -> dict:
    """A grid of contests, one `contest_cell` (the function `karbon table` uses) per cell,
    with a progress line per cell; {metric: rows of exact values}."""
    from exactdice.karbon.tables import METRICS, contest_cell

    cells = {metric: [[None] * len(columns) for _ in rows] for metric in METRICS}
    total = len(rows) * len(columns)
    done = 0
    for r, row in enumerate(rows):
        for c, column in enumerate(columns):
            _progress(f"cell {done + 1} of {total}: {row_axis} {row}, {column_axis} {column}")
            arguments = dict(fixed, **{row_axis: row, column_axis: column})
            result = contest_cell(**arguments, player=player, narrator=narrator, rules=tuple(rules))
            if result["P(win)"] + result["P(tie)"] + result["P(loss)"] > 1:
                raise ArithmeticError("a cell's outcome probabilities sum past 1")
            for metric in METRICS:
                cells[metric][r][c] = result[metric]
            done += 1
    return {"row_axis": row_axis, "rows": list(rows), "column_axis": column_axis, "columns": list(columns),
            "metrics": [[metric, cells[metric]] for metric in METRICS]}


def _progress(text: str) -> None:
    """Send a progress line to the server (in a worker; elsewhere nothing)."""
    if isinstance(sys.stderr, _ProgressPipe):
        sys.stderr.send(text)


TASKS = {"karbon_grid": karbon_grid, "validate_system": validate_system, "karbon_odds": karbon_odds,
         "validate_karbon": validate_karbon, "system_exact": system_exact, "dist": dist_table}


_TQDM_LINE = re.compile(r"^(?P<desc>[^:|]+):\s+\d+%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s+\[(?P<elapsed>[\d:]+)")
#: the exploring bar's own line (`exactdice.markov.graph`: states found against the limit, no ETA)
_EXPLORING_LINE = re.compile(r"^exploring: (?P<n>\d+) states \(limit (?P<total>\d+)\) \[(?P<elapsed>[\d:]+)")


def _plain_progress(line: str) -> str:
    """A tqdm bar's line in words for the page: the exploring bar's total is the state
    limit, not the work to do, so it shows no percentage or time left.

    >>> _plain_progress("exploring:   0%|          | 13106/3000000 [00:02<10:00, 4977.70states/s]")
    'exploring: 13,106 states so far (limit 3,000,000), 00:02'
    >>> _plain_progress("exploring: 13106 states (limit 3000000) [00:02, 4977.70states/s]")
    'exploring: 13,106 states so far (limit 3,000,000), 00:02'
    >>> _plain_progress("cell 2 of 4: ability 1, challenge 2")
    'cell 2 of 4: ability 1, challenge 2'
    """
    match = _EXPLORING_LINE.match(line)
    if match is not None:
        return f"exploring: {int(match['n']):,} states so far (limit {int(match['total']):,}), {match['elapsed']}"
    match = _TQDM_LINE.match(line)
    if match is None:
        return line
    desc, done, total = match["desc"].strip(), int(match["n"]), int(match["total"])
    if desc == "exploring":
        return f"exploring: {done:,} states so far (limit {total:,}), {match['elapsed']}"
    return f"{desc}: {done:,} of {total:,}, {match['elapsed']}"


class _ProgressPipe(io.TextIOBase):
    """A stand-in for stderr in a worker: sends tqdm's latest status line, at most 5 a second."""

    def __init__(self, connection):
        self._connection = connection
        self._last = 0.0

    def writable(self):
        return True

    def write(self, text):
        lines = [_plain_progress(part.strip()) for part in text.replace("\r", "\n").split("\n") if part.strip()]
        now = time.monotonic()
        if lines and now - self._last >= 0.2:
            self._last = now
            try:
                self._connection.send(("progress", lines[-1]))
            except (BrokenPipeError, OSError):
                pass
        return len(text)

    def isatty(self):
        return False

    def send(self, text: str) -> None:
        """Send one line now (not throttled)."""
        try:
            self._connection.send(("progress", text))
        except (BrokenPipeError, OSError):
            pass


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


def _out_of_memory(memory_limit: int | None) -> dict:
    limit = f"{memory_limit / 2 ** 30:.1f} GiB" if memory_limit else "the machine's memory"
    return {"max_states": f"the solve ran out of memory (a worker may use {limit}; raise it with "
                          "exactdice serve --worker-memory GIB, or lower max_states)"}


#: the largest answer a worker sends back (pickled); past it, the size is the answer
MAX_RESULT_BYTES = 64 * 2**20


def _watch_server(server: int) -> None:
    """End this worker when the server process is gone, even by SIGKILL (which no clean-up
    sees): the worker's parent is the fork server, so the parent-death signal does not
    tell; a thread looks every half second (`exactdice.processes.die_with_parent` ends it
    with the fork server too)."""
    import os
    import threading

    from exactdice.processes import WATCHDOG_SECONDS, die_with_parent

    die_with_parent(os.getppid())

    def watch():
        while True:
            try:
                os.kill(server, 0)
            except ProcessLookupError:
                os._exit(1)
            except OSError:
                pass
            time.sleep(WATCHDOG_SECONDS)

    threading.Thread(target=watch, name="exactdice-server-watchdog", daemon=True).start()


def run_task(connection, name: str, arguments: dict, memory_limit: int | None = None,
             server: int | None = None) -> None:
    """Run ``TASKS[name](**arguments)`` in this (worker) process and send the outcome.

    Sends ``("progress", text)`` messages, then ``("done", result)`` or
    ``("input_error", errors)`` or ``("failed", text)``. ``memory_limit`` (bytes) caps this
    process's address space, so one huge solve stops with a message instead of starving
    the machine, and sets the memory budget below it (`worker_memory_budget`).
    """
    _start_worker(memory_limit, server)
    sys.stderr = _ProgressPipe(connection)
    try:
        connection.send(task_outcome(name, arguments, memory_limit))
    finally:
        connection.close()


def _start_worker(memory_limit: int | None, server: int | None) -> None:
    """A worker's set-up: it ends with the server, its memory is capped (`run_task`)."""
    import threading

    from tqdm import tqdm

    from exactdice.limits import memory_budget, set_memory_budget

    if server is not None:
        _watch_server(server)
    tqdm.set_lock(threading.RLock())  # not a process-shared semaphore: Cancel kills this process
    if memory_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        set_memory_budget(min(memory_budget(), worker_memory_budget(memory_limit)), export=False)


def start_quick_worker(memory_limit: int | None, server: int | None) -> None:
    """The set-up of a long-lived worker of quick tasks (`exactdice.web.jobs.QUICK_TASKS`)."""
    _start_worker(memory_limit, server)


def task_outcome(name: str, arguments: dict, memory_limit: int | None = None) -> tuple:
    """``("done", result)``, ``("input_error", errors)`` or ``("failed", text)`` of one task,
    run here; an answer past `MAX_RESULT_BYTES` is refused with its size."""
    from exactdice.limits import MEMORY_FLAG

    try:
        result = TASKS[name](**arguments)
    except MemoryError:
        return ("input_error", _out_of_memory(memory_limit))
    except InputError as error:
        if error.field == MEMORY_FLAG:  # the budget above: the server's advice, not the CLI's flag
            return ("input_error", _out_of_memory(memory_limit))
        errors = getattr(error, "errors", None)
        return ("input_error", errors or {error.field or "form": error.message})
    except Exception as error:  # reported on the page as a message, not a traceback
        return ("failed", f"{type(error).__name__}: {error}")
    import pickle

    size = len(pickle.dumps(result))
    if size > MAX_RESULT_BYTES:
        return ("input_error", {"form": f"the answer is {size:,} bytes, past the page's limit of "
                                        f"{MAX_RESULT_BYTES:,}; ask for less (the command line prints any size)"})
    return ("done", result)
