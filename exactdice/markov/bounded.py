"""Bounded value iteration with learning for turn-based stochastic games.

For a model too large to explore whole, `bounded_solve` keeps a lower and an upper
bound on the value of every state it has expanded and samples trajectories from the
initial state toward the largest gap (BRTDP: McMahan, Likhachev, Gordon, ICML 2005),
backing the bounds up along each trajectory; unexpanded states sit at their initial
bounds (default: the least and greatest payoff). End components, where play can stay
forever, get the treatment of Kelmendi, Kretinsky, Weininger (CAV 2018, "Value
iteration for simple stochastic games: stopping criterion and learning algorithm")
so both bounds converge: see `BoundedSolver.settle_end_components`. It knows nothing
of any game.

Soundness. The Bellman operator is monotone and the value is one of its fixpoints,
so a backup of sound bounds gives sound bounds; each chance backup is computed in
floats and then widened outward by an error bound of the float sum (see
`exactdice.markov.sound_floats.chance_slack`), so the float bounds stay on the right side of the exact ones.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> found = bounded_solve(GamblersRuin(goal=3, start=1, up=1, down=1), precision=1e-9)
>>> found.lower <= 1 / 3 <= found.upper, found.gap <= 1e-9, found.stopped
(True, True, 'precision')
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from exactdice.errors import InputError, TooLargeError
from exactdice.markov.bounded_states import MAX, MIN
from exactdice.markov.bounded_strategy import GreedyStrategy
from exactdice.markov.bounded_trajectories import Trajectories
from exactdice.markov.end_components import EndComponents
from exactdice.markov.graph import paused_gc
from exactdice.markov.strategy_value import (
    StrategyModel,
    StrategySolvePassedTime,
    TimeLimitedModel,
    choosing,
    evaluate_strategy,
    sound_lower_value,
)

__all__ = [
    "BoundedResult",
    "BoundedSolver",
    "BoundsView",
    "bounded_solve",
    "choosing",
    "StrategyModel",
    "StrategySolvePassedTime",
    "TimeLimitedModel",
    "evaluate_strategy",
    "sound_lower_value",
]

_FIRST_SWEEP = 2_000


@dataclass
class BoundedResult:
    """Bounds on the value at the initial state and how they were reached.

    ``lower``/``upper`` are floats made sound by outward rounding; ``strategy`` maps each
    expanded state where the "max" side chooses to its action name (greedy on the lower
    bounds). ``stopped`` is "precision", "time", "states", "memory" or "interrupted"; ``history``
    lists ``(seconds, lower, upper, expanded)`` as the gap shrank.
    """

    lower: float
    upper: float
    expanded: int
    touched: int
    trajectories: int
    end_component_passes: int
    end_components: int
    seconds: float
    stopped: str
    sweeps: int = 0
    #: a split search's parts (`exactdice.markov.bounded_split`): lower, upper, expanded, stopped
    parts: list = field(repr=False, default_factory=list)
    strategy: dict = field(repr=False, default_factory=dict)
    history: list = field(repr=False, default_factory=list)
    solver: object = field(repr=False, default=None)

    @property
    def gap(self) -> float:
        return self.upper - self.lower


class BoundedSolver(Trajectories, EndComponents, GreedyStrategy):
    """The explored part of a game with per-state float bounds (`ExpandedStates`), searched
    by trajectories (`Trajectories`) with its end components settled (`EndComponents`).

    ``payoff`` maps outcome -> payoff (default 1 for the first outcome, 0 otherwise),
    ``nonterminating_payoff`` is what play that never ends pays (default 0), and
    ``initial_bounds(state)`` gives (lower, upper) for a state not yet expanded (default
    the least and greatest payoff). ``seed`` fixes the trajectory sampling.
    ``sweep_growth``: during `run`, `sweep` every state each time the states expanded
    grow by this factor, and once at the end (None: never).

    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> solver = BoundedSolver(GamblersRuin(goal=3, start=1, up=1, down=1))
    >>> solver.run(precision=1e-6).stopped
    'precision'
    """

    def __init__(
        self,
        model,
        *,
        payoff=None,
        nonterminating_payoff=0,
        initial_bounds=None,
        seed: int = 0,
        sweep_growth: float | None = 1.5,
    ):
        super().__init__(
            model, payoff=payoff, nonterminating_payoff=nonterminating_payoff, initial_bounds=initial_bounds
        )
        self.sweep_growth = sweep_growth
        self.random = random.Random(seed)
        self.trajectories = 0
        self.end_component_passes = 0
        self.end_components = 0
        self.sweeps = 0
        self._cycle_seen = False

    # ----- the run ---------------------------------------------------------------------

    def run(
        self,
        precision: float,
        *,
        max_seconds: float | None = None,
        max_states: int | None = None,
        progress=None,
        progress_every: float = 0.5,
        stop_check=None,
    ) -> BoundedResult:
        """Sample trajectories until the gap at the initial state is <= ``precision``, or
        ``max_seconds`` pass, or ``max_states`` states are expanded, or KeyboardInterrupt;
        returns the bounds reached (after a last `sweep` when a limit stopped it).
        ``progress(lower, upper, expanded, seconds)`` is called about every
        ``progress_every`` seconds, and ``stop_check(lower, upper)`` too: a reason
        ("precision", "interrupted", ...) it returns stops the run with that reason. Past
        the memory budget (`exactdice.limits.check_memory`) it stops too ("memory").
        Python's cycle collector is paused meanwhile (`paused_gc`): its scans of the
        states and bounds the search allocates cost about a sixth of the search."""
        if not precision > 0:
            raise InputError("precision", f"must be > 0, got {precision}")
        with paused_gc():
            return self._run(precision, max_seconds, max_states, progress, progress_every, stop_check)

    def _limit_passed(self, seconds: float, max_seconds, max_states) -> str | None:
        """ "time" or "states" when that limit is reached, else None."""
        if max_seconds is not None and seconds >= max_seconds:
            return "time"
        if max_states is not None and self.expanded >= max_states:
            return "states"
        return None

    def _run(self, precision, max_seconds, max_states, progress, progress_every, stop_check) -> BoundedResult:
        started = time.perf_counter()
        history = []
        root = self.initial
        lo, hi = self.lo, self.hi
        stop_gap = precision / 100
        next_report = started
        since_settle = 0
        # sweeps spaced geometrically in the states expanded cost a bounded multiple of
        # one last sweep, and keep a seeded run reproducible
        next_sweep = max(_FIRST_SWEEP, self.expanded * (self.sweep_growth or 1))
        stopped = "precision"
        try:
            while hi[root] - lo[root] > precision:
                now = time.perf_counter()
                passed = self._limit_passed(now - started, max_seconds, max_states)
                if passed is not None:
                    stopped = passed
                    break
                if now >= next_report:
                    history.append((now - started, lo[root], hi[root], self.expanded))
                    if progress is not None:
                        progress(lo[root], hi[root], self.expanded, now - started)
                    next_report = now + progress_every
                    if stop_check is not None and (reason := stop_check(lo[root], hi[root])):
                        stopped = reason
                        break
                    if _past_memory_budget():
                        stopped = "memory"
                        break
                self._trajectory(stop_gap)
                since_settle += 1
                # a pass costs time in proportion to the states touched: spacing the passes
                # by trajectories in that proportion keeps them a bounded share of the run
                # (and, unlike a clock, keeps a seeded run reproducible)
                if self._cycle_seen and since_settle >= max(16, len(self.states) // 20):
                    self.settle_end_components()
                    self._cycle_seen = False
                    since_settle = 0
                if self.sweep_growth and self.expanded >= next_sweep:
                    self.sweep()
                    next_sweep = self.expanded * self.sweep_growth
            if self.sweep_growth and stopped not in ("precision", "interrupted"):
                self.sweep()
        except KeyboardInterrupt:
            stopped = "interrupted"
        seconds = time.perf_counter() - started
        history.append((seconds, lo[root], hi[root], self.expanded))
        if progress is not None:
            try:
                progress(lo[root], hi[root], self.expanded, seconds)
            except KeyboardInterrupt:  # a Ctrl-C during the last report still returns the bounds
                stopped = "interrupted"
        return BoundedResult(
            lower=lo[root],
            upper=hi[root],
            expanded=self.expanded,
            touched=len(self.states),
            trajectories=self.trajectories,
            end_component_passes=self.end_component_passes,
            end_components=self.end_components,
            seconds=seconds,
            stopped=stopped,
            sweeps=self.sweeps,
            strategy=self.strategy(),
            history=history,
            solver=self,
        )

    def top_view(self, depth: int) -> "BoundsView":
        """The bounds of the touched states at most ``depth`` steps from the initial state,
        and the decisions among them: what an explanation of the first moves reads, small
        enough to send from a worker process (`exactdice.markov.bounded_split`).

        >>> from exactdice.markov.synthetic import TugOfWar
        >>> solver = BoundedSolver(TugOfWar(reach=2))
        >>> _ = solver.run(precision=1e-6)
        >>> view = solver.top_view(1)
        >>> view.bounds_of(solver.model.initial_state()) == solver.bounds_of(solver.model.initial_state())
        True
        """
        bounds, decisions, layer = {}, {}, [self.initial]
        seen = {self.initial}
        for level in range(depth + 1):
            following = []
            for node in layer:
                state = self.states[node]
                bounds[state] = (self.lo[node], self.hi[node])
                if self.kind[node] in (MAX, MIN):
                    decisions[state] = self.decision_bounds(state)
                if level < depth and self.targets[node]:
                    for target in self.targets[node]:
                        if target not in seen:
                            seen.add(target)
                            following.append(target)
            layer = following
        return BoundsView(bounds, decisions, self.least, self.greatest, self.sweeps)


class BoundsView:
    """Bounds of some states of a bounded search (`BoundedSolver.top_view`, or several
    searches' views joined by `merged`), answering what `BoundedSolver` answers about them:
    ``bounds_of``, ``decision_bounds`` and ``index`` (membership)."""

    def __init__(self, bounds: dict, decisions: dict, least: float, greatest: float, sweeps: int = 0):
        self.index, self.decisions = bounds, decisions
        self.least, self.greatest, self.sweeps = least, greatest, sweeps

    def bounds_of(self, state):
        """(lower, upper) of a state; the least and greatest payoff outside the view."""
        return self.index.get(state, (self.least, self.greatest))

    def decision_bounds(self, state):
        """As `BoundedSolver.decision_bounds`, for the decisions in the view."""
        return self.decisions.get(state)

    @staticmethod
    def merged(views: list) -> "BoundsView":
        """One view of several searches' (each state's bounds intersected: each is sound)."""
        bounds: dict = {}
        decisions: dict = {}
        for view in views:
            for state, (low, high) in view.index.items():
                known = bounds.get(state)
                bounds[state] = (low, high) if known is None else (max(known[0], low), min(known[1], high))
            decisions.update(view.decisions)
        return BoundsView(
            bounds,
            decisions,
            min(view.least for view in views),
            max(view.greatest for view in views),
            sum(view.sweeps for view in views),
        )


def _past_memory_budget(doing: str = "while searching for bounds") -> bool:
    """Whether this process (with the workers it counts) is past the memory budget: a
    search then stops with the bounds it has, as at its time limit."""
    from exactdice.limits import MEMORY_FLAG, check_memory

    try:
        check_memory(doing)
    except TooLargeError as error:
        if error.field != MEMORY_FLAG:  # a time limit's deadline: not ours to absorb
            raise
        return True
    return False


def bounded_solve(
    model,
    precision: float,
    *,
    payoff=None,
    nonterminating_payoff=0,
    initial_bounds=None,
    seed: int = 0,
    max_seconds: float | None = None,
    max_states: int | None = None,
    progress=None,
) -> BoundedResult:
    """Bounds on the value of ``model`` with gap <= ``precision`` (or what a limit allows).

    >>> from exactdice.markov.synthetic import TugOfWar
    >>> found = bounded_solve(TugOfWar(reach=3), precision=1e-6)
    >>> round(found.lower, 4), found.gap <= 1e-6
    (0.5, True)
    """
    solver = BoundedSolver(
        model, payoff=payoff, nonterminating_payoff=nonterminating_payoff, initial_bounds=initial_bounds, seed=seed
    )
    return solver.run(precision, max_seconds=max_seconds, max_states=max_states, progress=progress)
