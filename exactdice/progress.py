"""Progress of long work as data: a `Progress` report handed to a callback.

Every request's entry point (`exactdice.answers`) takes ``progress``, a callable given one
`Progress` at a time: the stage (``exploring``, ``solving``, ``bounds``, a sweep's cells),
how far it got, its limit or total, and the seconds spent. The command line draws them as
tqdm bars (`TerminalBars`); the web page's workers send them to the page, which words them
(`progress_words`). Nothing is read back from text.

The state-graph solver draws tqdm bars of its own; while `solver_bars` is active they are
drawn into a sink that hands each bar's numbers (tqdm's ``n``, ``total``, ``desc``) to the
callback instead of printing them.

>>> seen = []
>>> with solver_bars(seen.append) as wanted:
...     from tqdm import tqdm
...     bar = tqdm(total=10, desc="solving", unit="states", mininterval=0)
...     _ = bar.update(4)
...     bar.close()
>>> wanted, seen[-1].stage, seen[-1].done, seen[-1].total
(True, 'solving', 4, 10)
>>> progress_words(Progress("exploring", 13106, limit=3_000_000, seconds=2.4, unit="states"))
'exploring: 13,106 states so far (limit 3,000,000), 2 s'
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Progress", "ProgressCallback", "solver_bars", "progress_words", "Throttled", "TerminalBars", "report"]


@dataclass(frozen=True)
class Progress:
    """How far one stage of a request got.

    Parameters
    ----------
    stage : str
        What is being done: ``exploring``, ``solving``, ``bounds``, ``cells``, or a phase
        in words ("checking the strategy found exactly").
    done : int, optional
        How many units are done (None: a phase with no count).
    total : int, optional
        The units of the whole stage, where known.
    limit : int, optional
        A limit that stops the stage (exploring's ``max_states``): no estimate of the work.
    unit : str, default ""
        What ``done`` counts (``states``, ``cells``).
    seconds : float, default 0.0
        Seconds the stage has run.
    note : str, default ""
        More, in words (the bounds found so far).
    """

    stage: str
    done: int | None = None
    total: int | None = None
    limit: int | None = None
    unit: str = ""
    seconds: float = 0.0
    note: str = ""


#: what every entry point's ``progress`` is
ProgressCallback = Callable[[Progress], None]


def report(progress: ProgressCallback | None, stage: str, **numbers: Any) -> None:
    """Call *progress* (when given) with a `Progress` of *stage*.

    Parameters
    ----------
    progress : callable or None
        The callback (None: nothing to do).
    stage : str
        The stage.
    **numbers
        The rest of the `Progress` (``done``, ``total``, ...).
    """
    if progress is not None:
        progress(Progress(stage, **numbers))


def progress_words(progress: Progress) -> str:
    """A progress report as a person reads it (the web page's status line).

    Parameters
    ----------
    progress : Progress
        The report.

    Returns
    -------
    str
        The stage, how far it got against its total or limit, and the time.

    Examples
    --------
    >>> progress_words(Progress("solving", 20, 80, unit="states", seconds=61))
    'solving: 20 of 80 states, 1 min 1 s'
    >>> progress_words(Progress("searching for bounds"))
    'searching for bounds\u2026'
    """
    parts = [progress.stage]
    if progress.done is not None:
        unit = f" {progress.unit}" if progress.unit else ""
        if progress.total is not None:
            parts.append(f": {progress.done:,} of {progress.total:,}{unit}")
        elif progress.limit is not None:
            parts.append(f": {progress.done:,}{unit} so far (limit {progress.limit:,})")
        else:
            parts.append(f": {progress.done:,}{unit}")
        parts.append(f", {_seconds_text(progress.seconds)}")
    else:
        parts.append("\u2026")
    if progress.note:
        parts.append(f"; {progress.note}")
    return "".join(parts)


def _seconds_text(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


class Throttled:
    """A callback passing at most one report every *interval* seconds to *callback* (a new
    stage always passes), for a receiver that pays per report (a pipe to the server).

    Parameters
    ----------
    callback : callable
        The receiver.
    interval : float, default 0.2
        Seconds between two reports of one stage.
    """

    def __init__(self, callback: ProgressCallback, interval: float = 0.2):
        self.callback, self.interval = callback, interval
        self._last, self._stage = 0.0, None

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.stage != self._stage or now - self._last >= self.interval:
            self._last, self._stage = now, progress.stage
            self.callback(progress)


class _BarSink(io.TextIOBase):
    """What the solver's tqdm bars draw into while `solver_bars` is active: each draw hands
    the live bars' numbers to the callback; other text (a warning) goes on to the real
    stderr, and a closing bar's last redraw nowhere."""

    def __init__(self, callback: ProgressCallback, original):
        self.callback, self.original = callback, original
        # tqdm wraps its file and passes attribute lookups through: a bar drawing here says so
        self.exactdice_sink = self

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        bars = self._bars()
        if bars:
            for bar in bars:
                self.callback(_bar_progress(bar))
        elif text.strip() and not text.startswith("\r") and self.original is not None:
            self.original.write(text)  # not a bar's redraw (those start with a carriage return)
        return len(text)

    def flush(self) -> None:
        pass

    def _bars(self) -> list:
        from tqdm import tqdm

        try:
            live = list(tqdm._instances)  # the bars not closed yet (tqdm's own registry)
        except RuntimeError:  # changed while copied: the next draw reports
            return []
        # a bar whose making ran out of memory stays registered without its file
        return [bar for bar in live if getattr(getattr(bar, "fp", None), "exactdice_sink", None) is self]


def _bar_progress(bar) -> Progress:
    """A solver bar's numbers: the exploring bar counts states against the limit
    (`exactdice.markov.graph`), not against the work to do."""
    started = getattr(bar, "start_t", None)  # not yet set while the bar draws itself first
    seconds = 0.0 if started is None else bar._time() - started
    stage = (bar.desc or "working").rstrip(": ")
    if stage == "exploring":
        return Progress(stage, int(bar.n), limit=bar.total, unit=bar.unit, seconds=seconds)
    return Progress(stage, int(bar.n), total=bar.total, unit=bar.unit, seconds=seconds)


@contextmanager
def solver_bars(progress: ProgressCallback | None) -> Iterator[bool]:
    """Within the block the solver's own tqdm bars report to *progress* instead of drawing.

    Parameters
    ----------
    progress : callable or None
        The callback; without one nothing changes and no bars are asked for.

    Yields
    ------
    bool
        Whether to ask the solver for bars (``progress=`` of `contest_odds`, `explore`, `solve`).
    """
    if progress is None:
        yield False
        return
    original = sys.stderr
    sys.stderr = _BarSink(progress, original)
    try:
        yield True
    finally:
        sys.stderr = original


class TerminalBars:
    """A progress callback drawing tqdm bars on the terminal's stderr: one bar per stage,
    shown after *delay* seconds (quick work draws nothing), closed when the next stage starts.

    Parameters
    ----------
    file : file-like, optional
        Where to draw (default: the real stderr).
    delay : float, default 0.5
        Seconds a stage runs before its bar shows.

    Examples
    --------
    >>> bars = TerminalBars(file=io.StringIO(), delay=0)
    >>> bars(Progress("cells", 1, 4, unit="cells")); bars(Progress("cells", 2, 4, unit="cells")); bars.close()
    """

    def __init__(self, file=None, delay: float = 0.5):
        self.file = file
        self.delay = delay
        self._bar = None
        self._stage = None

    def __call__(self, progress: Progress) -> None:
        if progress.stage != self._stage:
            self.close()
            self._stage = progress.stage
            self._bar = self._new_bar(progress)
        bar = self._bar
        if progress.done is not None:
            bar.total = progress.total
            bar.n = progress.done
        if progress.note:
            bar.set_postfix_str(progress.note, refresh=False)
        bar.refresh()

    def _new_bar(self, progress: Progress):
        from tqdm import tqdm

        file = self.file if self.file is not None else getattr(sys.stderr, "original", sys.stderr)
        if progress.limit is not None:  # a limit is no estimate: no percentage, no time left
            form = f"{{desc}}: {{n_fmt}} {progress.unit} (limit {progress.limit:,}) [{{elapsed}}, {{rate_fmt}}]"
            return tqdm(
                total=None,
                desc=progress.stage,
                unit=progress.unit,
                file=file,
                leave=False,
                delay=self.delay,
                bar_format=form,
            )
        if progress.done is None:
            return tqdm(
                total=None,
                desc=progress.stage,
                file=file,
                leave=False,
                delay=self.delay,
                bar_format="{desc}\u2026 [{elapsed}]{postfix}",
            )
        return tqdm(
            total=progress.total,
            desc=progress.stage,
            unit=progress.unit,
            file=file,
            leave=False,
            delay=self.delay,
            dynamic_ncols=True,
        )

    def close(self) -> None:
        """Close the bar drawn last."""
        if self._bar is not None:
            self._bar.close()
        self._bar, self._stage = None, None
