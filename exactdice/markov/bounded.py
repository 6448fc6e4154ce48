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
`_chance_slack`), so the float bounds stay on the right side of the exact ones.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> found = bounded_solve(GamblersRuin(goal=3, start=1, up=1, down=1), precision=1e-9)
>>> found.lower <= 1 / 3 <= found.upper, found.gap <= 1e-9, found.stopped
(True, True, 'precision')
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from operator import mul

from exactdice.errors import InputError, InternalError, TooLargeError
from exactdice.markov.graph import paused_gc
from exactdice.markov.model import Chance, Decision, KeyedChance, KeySlots, Terminal, keyed_expander

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

_FRONTIER, _TERMINAL, _CHANCE, _MAX, _MIN = range(5)
_UNIT_ROUNDOFF = 2.0**-53
_MAX_TRAJECTORY = 100_000
_FIRST_SWEEP = 2_000
_MAX_SOUND_SWEEPS = 100_000  # a loop's passes in `sound_lower_value` (any stop is sound)


def _check_weight(weight) -> None:
    """A branch weight must be a positive int (the probabilities are exact ratios of them)."""
    if not isinstance(weight, int) or weight <= 0:
        raise InputError("weight", f"branch weights must be positive ints, got {weight!r}")


def _float_payoffs(outcomes, payoff, nonterminating_payoff) -> tuple[dict, float]:
    """(outcome -> payoff, never-ending play's payoff) as floats, which must be exact
    (``payoff`` None: 1 for the first outcome, 0 for the others)."""
    outcomes = tuple(outcomes)
    if payoff is None:
        payoff = {name: (1 if i == 0 else 0) for i, name in enumerate(outcomes)}
    unknown = set(payoff) - set(outcomes)
    if unknown:
        raise InputError("payoff", f"unknown outcomes {sorted(unknown)}; the model lists {outcomes}")
    pays = {name: float(Fraction(payoff.get(name, 0))) for name in outcomes}
    for name in outcomes:
        if pays[name] != Fraction(payoff.get(name, 0)):
            raise InputError("payoff", f"payoff of {name!r} must be exact in binary floating point")
    endless = float(Fraction(nonterminating_payoff or 0))
    if endless != Fraction(nonterminating_payoff or 0):
        raise InputError("nonterminating_payoff", "must be exact in binary floating point")
    return pays, endless


def _chance_slack(branches: int, magnitude: float) -> float:
    """How far a float ``sum(p_i * v_i)`` over ``branches`` terms can be from the exact
    sum when ``|v_i| <= magnitude`` and ``sum p_i = 1``: each ``p_i = w_i / total`` is
    rounded once (relative u), each product once, a left-to-right sum of n terms adds at
    most (n - 1) u of the sum, and the final widening one more rounding. Doubling the
    count of roundings, (2n + 8) u * magnitude covers every term (Higham, "Accuracy and
    Stability of Numerical Algorithms", 2nd ed., section 4.2).

    >>> _chance_slack(2, 1.0) < 1e-14
    True
    """
    return (2 * branches + 8) * _UNIT_ROUNDOFF * magnitude


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


class BoundedSolver:
    """The explored part of a game with per-state float bounds.

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
        self.model = model
        self.sweep_growth = sweep_growth
        self.payoff, self.endless = _float_payoffs(model.outcomes, payoff, nonterminating_payoff)
        values = list(self.payoff.values()) + [self.endless]
        self.least, self.greatest = min(values), max(values)
        self.magnitude = max(abs(self.least), abs(self.greatest))
        self.initial_bounds = initial_bounds
        self.random = random.Random(seed)
        self.index: dict = {}
        self.states: list = []
        self.kind = bytearray()
        self.targets: list = []  # per state: tuple of successor ids (actions' targets for decisions)
        self.probs: list = []  # per chance state: tuple of float probabilities
        self.names: list = []  # per decision state: tuple of action names
        self.slack: list = []
        self.lo: list = []
        self.hi: list = []
        self.expanded = 0
        self.trajectories = 0
        self.end_component_passes = 0
        self.end_components = 0
        self.sweeps = 0
        # a model's `expand_keyed` names a chance node's successors by int keys into one
        # table it only appends to: a key's node id is kept, so its state is hashed once
        self._expand_model = keyed_expander(model)
        self._keyed_nodes = KeySlots()
        self.initial = self._intern(model.initial_state())
        self._cycle_seen = False

    # ----- states ----------------------------------------------------------------------

    def _intern(self, state) -> int:
        node = self.index.get(state)
        if node is None:
            node = len(self.states)
            self.index[state] = node
            self.states.append(state)
            self.kind.append(_FRONTIER)
            self.targets.append(None)
            self.probs.append(None)
            self.names.append(None)
            self.slack.append(0.0)
            low, high = self.least, self.greatest
            if self.initial_bounds is not None:
                given = self.initial_bounds(state)
                if given is not None:
                    low, high = max(low, given[0]), min(high, given[1])
            self.lo.append(low)
            self.hi.append(high)
            if low > high:
                self._crossed(node)
        return node

    def _expand(self, node: int) -> None:
        expanded = self._expand_model(self.states[node])
        self.expanded += 1
        if type(expanded) is KeyedChance:
            self._store_chance(node, self._keyed_merged(expanded))
            return
        if isinstance(expanded, Terminal):
            value = self.payoff[expanded.outcome]
            self.kind[node] = _TERMINAL
            self.lo[node] = self.hi[node] = value
            self.targets[node] = ()
            return
        if isinstance(expanded, Chance):
            merged: dict = {}
            for weight, successor, _ in expanded.branches:
                if type(weight) is not int or weight <= 0:
                    _check_weight(weight)
                target = self._intern(successor)
                merged[target] = merged.get(target, 0) + weight
            self._store_chance(node, merged)
            return
        if isinstance(expanded, Decision):
            if expanded.side not in ("max", "min"):
                raise InputError("side", f"decision side must be 'max' or 'min', got {expanded.side!r}")
            self.kind[node] = _MAX if expanded.side == "max" else _MIN
            self.targets[node] = tuple(self._intern(successor) for _, successor, _ in expanded.actions)
            self.names[node] = tuple(name for name, _, _ in expanded.actions)
            return
        raise InputError("expand", f"expand() must return Terminal, Chance or Decision, got {type(expanded).__name__}")

    def _keyed_merged(self, expanded: KeyedChance) -> dict:
        """Successor node id -> summed integer weight of a `KeyedChance`: a key seen
        before is a list look-up, a new key interns its state once."""
        table = expanded.table
        known = self._keyed_nodes.for_table(table)
        merged: dict = {}
        get = merged.get
        for weight, key in expanded.branches:
            if type(weight) is not int or weight <= 0:
                _check_weight(weight)
            target = known[key]
            if target is None:
                target = known[key] = self._intern(table[key][0])
            merged[target] = get(target, 0) + weight
        return merged

    def _store_chance(self, node: int, merged: dict) -> None:
        """A chance state's successors and their probabilities, as floats computed once
        from the integer weights (the rounding is in `_chance_slack`)."""
        if not merged:
            raise InputError("expand", f"chance node of {self.states[node]!r} has no branches")
        total = sum(merged.values())
        self.kind[node] = _CHANCE
        self.targets[node] = tuple(merged)
        self.probs[node] = tuple([weight / total for weight in merged.values()])
        self.slack[node] = _chance_slack(len(merged), self.magnitude)

    def _backup(self, node: int) -> bool:
        kind, targets, lo, hi = self.kind[node], self.targets[node], self.lo, self.hi
        if kind == _CHANCE:
            # float sums of the products, widened by their error bound (`_chance_slack`)
            probs, slack = self.probs[node], self.slack[node]
            low = sum(map(mul, probs, map(lo.__getitem__, targets))) - slack
            high = sum(map(mul, probs, map(hi.__getitem__, targets))) + slack
        elif kind == _MAX:
            low = max(map(lo.__getitem__, targets))
            high = max(map(hi.__getitem__, targets))
        elif kind == _MIN:
            low = min(map(lo.__getitem__, targets))
            high = min(map(hi.__getitem__, targets))
        else:
            return False
        moved = False
        if low > lo[node]:
            lo[node] = low
            moved = True
        if high < hi[node]:
            hi[node] = high
            moved = True
        if moved and lo[node] > hi[node]:
            self._crossed(node)
        return moved

    def _crossed(self, node: int):
        raise InternalError(
            f"the bounds crossed at {self.states[node]!r} ([{self.lo[node]!r}, "
            f"{self.hi[node]!r}]): an initial bound is unsound (backups of sound bounds "
            "stay sound)"
        )

    # ----- trajectories ----------------------------------------------------------------

    def _trajectory(self, stop_gap: float) -> None:
        lo, hi, kind, targets = self.lo, self.hi, self.kind, self.targets
        node = self.initial
        path: list = []
        on_path = set()
        while len(path) < _MAX_TRAJECTORY:
            if kind[node] == _FRONTIER:
                self._expand(node)
            path.append(node)
            on_path.add(node)
            k = kind[node]
            if k == _TERMINAL or hi[node] - lo[node] <= stop_gap:
                break
            options = targets[node]
            if k == _MAX or k == _MIN:
                nxt = self._choose(options, k == _MAX)
            else:
                weights = [p * (hi[t] - lo[t]) for p, t in zip(self.probs[node], options)]
                total = sum(weights)
                if total <= stop_gap:  # what the successors could still gain is below the gap sought
                    break
                pick = self.random.random() * total
                nxt = options[-1]
                for t, w in zip(options, weights):
                    pick -= w
                    if pick < 0:
                        nxt = t
                        break
            if nxt in on_path:
                self._cycle_seen = True
                break
            node = nxt
        for node in reversed(path):
            self._backup(node)
        self.trajectories += 1

    def _choose(self, options, maximise: bool) -> int:
        """The action a trajectory follows: among the actions best for the upper bounds
        ("max") or the lower bounds ("min"), one drawn with weight proportional to its gap
        (KKW sample among the best actions; a fixed tie-break can circle an end component
        forever and never look at an equally good exit)."""
        lo, hi = self.lo, self.hi
        if maximise:
            best = max([hi[t] for t in options])
            tied = [t for t in options if hi[t] == best]
        else:
            best = min([lo[t] for t in options])
            tied = [t for t in options if lo[t] == best]
        if len(tied) == 1:
            return tied[0]
        gaps = [hi[t] - lo[t] for t in tied]
        total = sum(gaps)
        if total <= 0:
            return tied[0]
        pick = self.random.random() * total
        for t, gap in zip(tied, gaps):
            pick -= gap
            if pick < 0:
                return t
        return tied[-1]

    def sweep(self, passes: int = 3) -> int:
        """Back up every expanded state, last expanded first, ``passes`` times (or until
        no bound moves): a trajectory backs up only its own path, so a state whose
        successors improved through other paths keeps stale bounds until swept. Sound
        like any backup; costs one look at every touched successor a pass. Returns the
        passes made.

        >>> from exactdice.markov.synthetic import GamblersRuin
        >>> solver = BoundedSolver(GamblersRuin(goal=3, start=1, up=1, down=1))
        >>> solver.sweep()  # nothing expanded yet: one pass finds nothing to move
        1
        """
        kind, lo, hi, backup = self.kind, self.lo, self.hi, self._backup
        # a state whose bounds have met cannot move (bounds only tighten): left out
        order = [node for node in range(len(self.states) - 1, -1, -1) if kind[node] >= _CHANCE and lo[node] < hi[node]]
        made = 0
        for made in range(1, passes + 1):
            moved = False
            for node in order:
                if backup(node):
                    moved = True
            if not moved:
                break
        self.sweeps += made
        return made

    # ----- end components --------------------------------------------------------------

    def _end_components(self, for_upper: bool) -> list[list[int]]:
        """Maximal end components of the expanded states' game with the "min" side
        restricted to its actions optimal for the lower bounds (``for_upper``), or the
        "max" side to its actions optimal for the upper bounds (otherwise)."""
        allowed = {
            node: actions
            for node in range(len(self.states))
            if (actions := self._allowed_actions(node, for_upper)) is not None
        }
        while True:
            component_of = _strongly_connected(allowed)
            changed = False
            for node in list(allowed):
                mine = component_of[node]
                kept = [action for action in allowed[node] if all(component_of.get(t) == mine for t in action)]
                if len(kept) != len(allowed[node]):
                    changed = True
                    if kept:
                        allowed[node] = kept
                    else:
                        del allowed[node]
            if not changed:
                break
        groups: dict[int, list] = {}
        for node in allowed:
            groups.setdefault(component_of[node], []).append(node)
        return list(groups.values())

    def _allowed_actions(self, node: int, for_upper: bool) -> list[tuple] | None:
        """The actions (tuples of targets: a chance state's one action holds all its
        branches) an end component may use at ``node``; None for terminal and unexpanded
        states. The side being restricted keeps only its actions best for its bounds."""
        k = self.kind[node]
        targets = self.targets[node]
        if k == _CHANCE:
            return [targets]
        if k == _MIN and for_upper:
            best = min(self.lo[t] for t in targets)
            return [(t,) for t in targets if self.lo[t] == best]
        if k == _MAX and not for_upper:
            best = max(self.hi[t] for t in targets)
            return [(t,) for t in targets if self.hi[t] == best]
        if k == _MAX or k == _MIN:
            return [(t,) for t in targets]
        return None

    def settle_end_components(self) -> int:
        """Pull the upper bounds of end components down and push the lower bounds up.

        Upper: in an end component T where every "min" state keeps an action inside T,
        the "min" side can keep play inside T until "max" leaves it, so no state of T is
        worth more than max(best exit of a "max" state, the payoff of endless play) --
        sound for ANY such T; taking T among the "min" side's lower-optimal actions (KKW)
        makes the bounds converge. Lower: the mirror image with the sides swapped.
        Returns the number of end components found.
        """
        lo, hi, kind, targets = self.lo, self.hi, self.kind, self.targets
        found = 0
        for for_upper in (True, False):
            for members in self._end_components(for_upper):
                inside = set(members)
                found += 1
                if for_upper:
                    exits = [hi[t] for node in members if kind[node] == _MAX for t in targets[node] if t not in inside]
                    cap = max(exits + [self.endless])
                    for node in members:
                        if cap < hi[node]:
                            hi[node] = cap
                else:
                    exits = [lo[t] for node in members if kind[node] == _MIN for t in targets[node] if t not in inside]
                    floor = min(exits + [self.endless])
                    for node in members:
                        if floor > lo[node]:
                            lo[node] = floor
        self.end_component_passes += 1
        self.end_components = found
        return found

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

    def strategy(self) -> dict:
        """Expanded "max" state -> action name, among the actions best for the lower bounds,
        for the states play reaches from the initial state when "max" takes only such
        actions; past an unexpanded state play takes the default (`evaluate_strategy`'s
        ``default_action``) wherever this names nothing.

        Greedy alone can circle forever among equally valued states (an end component
        whose exit is worth the same), so ties go to an action that moves toward the end:
        walking backward from terminal and unexpanded states, a state joins once one of
        its successors has (a "max" state through one of its best actions, which it then
        takes); a "max" state that never joins takes its first best action.
        """
        names = self.names
        best_actions, reached = self._best_actions_reached()
        chosen_index = self._toward_the_end(best_actions, reached)
        return {
            self.states[node]: names[node][chosen_index.get(node, actions[0])] for node, actions in best_actions.items()
        }

    def _best_actions_reached(self) -> tuple[dict, list]:
        """("max" state -> indices of its actions best for the lower bounds, every state
        reached from the initial one through those and through every chance or "min" branch,
        in increasing order)."""
        lo, kind, targets = self.lo, self.kind, self.targets
        best_actions = {}
        seen = bytearray(len(self.states))
        seen[self.initial] = 1
        stack = [self.initial]
        while stack:
            node = stack.pop()
            node_kind = kind[node]
            if node_kind == _MAX:
                options = targets[node]
                best = max([lo[t] for t in options])
                actions = best_actions[node] = [i for i, t in enumerate(options) if lo[t] == best]
                following = [options[i] for i in actions]
            elif node_kind == _CHANCE or node_kind == _MIN:
                following = targets[node]
            else:
                continue
            for target in following:
                if not seen[target]:
                    seen[target] = 1
                    stack.append(target)
        return best_actions, [node for node in range(len(seen)) if seen[node]]

    def _toward_the_end(self, best_actions: dict, reached: list) -> dict:
        """ "max" state -> index of the best action through which it first joins the states
        that lead to a terminal or unexpanded state (walking backward from those, over the
        ``reached`` states only: no other state leads into them this way)."""
        kind, targets = self.kind, self.targets
        predecessors: dict = {node: [] for node in reached}
        for node in reached:
            node_kind = kind[node]
            if node_kind == _CHANCE or node_kind == _MIN:
                for t in targets[node]:
                    predecessors[t].append((node, -1))
            elif node_kind == _MAX:
                for i in best_actions[node]:
                    predecessors[targets[node][i]].append((node, i))
        joined = set()
        chosen_index = {}
        queue = [node for node in reached if kind[node] in (_TERMINAL, _FRONTIER)]
        joined.update(queue)
        while queue:
            for node, action in predecessors[queue.pop()]:
                if node in joined:
                    continue
                joined.add(node)
                if action >= 0:
                    chosen_index[node] = action
                queue.append(node)
        return chosen_index

    def decision_bounds(self, state):
        """(side, [(action name, lower, upper), ...]) at an expanded decision state, None at
        any other state (a chance or terminal state, or one not expanded yet).

        >>> from exactdice.markov.synthetic import TugOfWar
        >>> solver = BoundedSolver(TugOfWar(reach=2))
        >>> solver.decision_bounds(solver.model.initial_state()) is None  # not expanded yet
        True
        """
        node = self.index.get(state)
        if node is None or self.kind[node] not in (_MAX, _MIN):
            return None
        side = "max" if self.kind[node] == _MAX else "min"
        return side, [(name, self.lo[t], self.hi[t]) for name, t in zip(self.names[node], self.targets[node])]

    def bounds_of(self, state):
        """(lower, upper) of a state (its initial bounds if never touched)."""
        node = self.index.get(state)
        if node is None:
            low, high = self.least, self.greatest
            if self.initial_bounds is not None and (given := self.initial_bounds(state)) is not None:
                low, high = max(low, given[0]), min(high, given[1])
            return low, high
        return self.lo[node], self.hi[node]

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
                if self.kind[node] in (_MAX, _MIN):
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


def _strongly_connected(adjacency: dict) -> dict:
    """node -> component number over ``adjacency`` (node -> list of target tuples; targets
    outside the dict are ignored), by scipy's strongly connected components.

    >>> parts = _strongly_connected({1: [(2,)], 2: [(1, 7)], 3: [(1,)]})
    >>> parts[1] == parts[2] != parts[3]
    True
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    nodes = list(adjacency)
    position = {node: i for i, node in enumerate(nodes)}
    rows, columns = [], []
    for node, actions in adjacency.items():
        here = position[node]
        for action in actions:
            for target in action:
                there = position.get(target)
                if there is not None:
                    rows.append(here)
                    columns.append(there)
    size = len(nodes)
    matrix = csr_matrix(([1] * len(rows), (rows, columns)), shape=(size, size), dtype="int8")
    _, labels = connected_components(matrix, directed=True, connection="strong")
    return {node: int(label) for node, label in zip(nodes, labels)}


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


class StrategyModel:
    """``model`` with the "max" side's decisions fixed: ``strategy[state]`` names the action
    where given, else ``default_action(state, names)`` returns the index of the action to
    take (default the first). The "min" side still chooses, so solving this model exactly
    gives the value the strategy guarantees against the best reply.

    A model may offer ``expand_choosing(state, choose)``: its ``expand_keyed`` (or
    ``expand``), except that at a "max" decision it calls ``choose(state, names)`` and
    returns a `Chance` of the one action named, without building the others (for Karbon,
    each action is a walk through the rules). Only the chosen action is then paid for.

    >>> from exactdice.markov.model import Decision, Terminal
    >>> class Pick:
    ...     outcomes, reward_names = ("win", "loss"), ()
    ...     def initial_state(self): return "start"
    ...     def expand(self, state):
    ...         if state == "start":
    ...             return Decision("max", (("lose", "loss", None), ("win", "win", None)))
    ...         return Terminal(state)
    >>> StrategyModel(Pick(), {"start": "win"}).expand("start").branches[0][1]
    'win'
    """

    def __init__(self, model, strategy: dict, default_action=None):
        self.model = model
        self.strategy = strategy
        self.default_action = default_action
        self.outcomes = model.outcomes
        self.reward_names = getattr(model, "reward_names", ())
        self.defaulted = 0
        self.chosen: dict = {}  # every "max" state expanded -> the action taken there
        self._expand_choosing = getattr(model, "expand_choosing", None)

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        return choosing(state, self.model.expand(state), self.choose)

    def expand_keyed(self, state):
        """`expand` passing the model's `KeyedChance` nodes through (for `explore`)."""
        if self._expand_choosing is not None:
            return self._expand_choosing(state, self.choose)
        return choosing(state, keyed_expander(self.model)(state), self.choose)

    def choose(self, state, names) -> str:
        """The name of the action the strategy (or the default) takes at ``state``."""
        name = self.strategy.get(state)
        if name is None:
            self.defaulted += 1
            name = names[self.default_action(state, names) if self.default_action is not None else 0]
        elif name not in names:
            raise InputError("strategy", f"action {name!r} is not available at {state!r}")
        self.chosen[state] = name
        return name


def choosing(state, node, choose):
    """``node``, or where it is a "max" `Decision`, a one-branch `Chance` of the action
    ``choose(state, names)`` names (a model's ``expand_choosing`` for nodes it builds whole).

    >>> choosing("s", Decision("max", (("a", 1, None), ("b", 2, None))), lambda state, names: "b")
    Chance(branches=((1, 2, None),))
    """
    if not isinstance(node, Decision) or node.side != "max":
        return node
    name = choose(state, [action[0] for action in node.actions])
    action = next(action for action in node.actions if action[0] == name)
    return Chance(((1, action[1], action[2]),))


class TimeLimitedModel:
    """``model`` whose ``expand`` raises `TooLargeError` (field "max_seconds") once
    ``seconds`` have passed since it was made: a time limit for an exact exploration.

    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> TimeLimitedModel(GamblersRuin(goal=3, start=1, up=1, down=1), 0).expand(1)
    Traceback (most recent call last):
    exactdice.errors.TooLargeError: max_seconds: exploring passed 0 s; give it more time
    """

    def __init__(self, model, seconds: float):
        self.model = model
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds
        self.outcomes = model.outcomes
        self.reward_names = getattr(model, "reward_names", ())

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        self._check_time()
        return self.model.expand(state)

    def expand_keyed(self, state):
        """`expand` passing the model's `KeyedChance` nodes through (for `explore`)."""
        self._check_time()
        return keyed_expander(self.model)(state)

    def explore_compiled(self, *, max_states: int, progress=None):
        """The model's own compiled exploring (`exactdice.markov.graph.explore`), within the
        time left (it checks the clock as it goes; past the deadline it raises here too);
        None where the model has none."""
        compiled = getattr(self.model, "explore_compiled", None)
        if compiled is None:
            return None
        self._check_time()
        graph = compiled(max_states=max_states, progress=progress)
        self._check_time()
        return graph

    def _check_time(self):
        if time.perf_counter() > self.deadline:
            raise TooLargeError("max_seconds", f"exploring passed {self.seconds:g} s; give it more time")


class StrategySolvePassedTime(TooLargeError):
    """`evaluate_strategy` explored the strategy's game but its exact solve passed the
    time: ``sound_lower`` is a float lower bound on the strategy's value, outward rounded
    (`sound_lower_value`), over the ``states`` of that game."""

    def __init__(self, field: str, message: str, sound_lower: float, states: int):
        super().__init__(field, message)
        self.sound_lower = sound_lower
        self.states = states


def evaluate_strategy(
    model,
    strategy: dict,
    *,
    default_action=None,
    payoff=None,
    nonterminating_payoff=0,
    max_states: int = 2_000_000,
    max_seconds: float | None = None,
    sound_seconds: float | None = None,
):
    """The exact value (a Fraction) the "max" strategy guarantees against the best reply of
    the "min" side, with the `Solution` (``played``: every "max" state reached -> its action;
    ``defaulted``: how many took the default); raises `TooLargeError` past ``max_states``
    (or when exploring and solving pass ``max_seconds``). With ``sound_seconds``, a solve
    that passes ``max_seconds`` after the exploring finished raises
    `StrategySolvePassedTime`, carrying a float lower bound on the value found in up to
    ``sound_seconds`` more.

    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> evaluate_strategy(GamblersRuin(goal=3, start=1, up=1, down=1), {})[0]
    Fraction(1, 3)
    """
    from exactdice.markov.graph import explore
    from exactdice.markov.solver import solve

    from exactdice.limits import time_limit

    fixed = StrategyModel(model, strategy, default_action)
    limited = fixed if max_seconds is None else TimeLimitedModel(fixed, max_seconds)
    passed = f"solving the strategy's game passed {max_seconds} s; give it more time"
    graph = components = None
    try:
        with time_limit(max_seconds, "max_seconds", passed):
            # in this process: the choices are recorded here (exploring workers would keep them)
            graph = explore(limited, max_states=max_states, progress=False, workers=0)
            components = graph.strongly_connected_components()
            solution = solve(
                graph, payoff=payoff, nonterminating_payoff=nonterminating_payoff, progress=False, components=components
            )
    except TooLargeError as error:
        if sound_seconds is None or graph is None or error.field != "max_seconds":
            raise
        with paused_gc():
            lower = sound_lower_value(
                graph,
                payoff=payoff,
                nonterminating_payoff=nonterminating_payoff,
                max_seconds=sound_seconds,
                components=components,
            )
        raise StrategySolvePassedTime(error.field, str(error).partition(": ")[2], lower, graph.num_states) from error
    solution.played = fixed.chosen  # type: ignore[attr-defined]  # what the strategy chose, for the caller
    solution.defaulted = fixed.defaulted  # type: ignore[attr-defined]
    return solution.value, solution


def sound_lower_value(
    graph, *, payoff=None, nonterminating_payoff=0, max_seconds: float | None = None, components=None
) -> float:
    """A float lower bound on the value of an explored game at its initial state, sound
    despite rounding: value iteration from below, component by component (sinks first),
    each chance sum widened downward by its rounding error bound (`_chance_slack`). Every
    iterate stays below the value (the backup is monotone and the value its fixed point),
    so it may stop at any time (``max_seconds``); within a loop it stops once no state
    gains more than a few roundings (or after `_MAX_SOUND_SWEEPS` passes). Play that
    never ends counts at the least payoff here, which can only lower the bound.
    ``components``: the graph's strongly connected components, sinks first, if known.

    >>> from exactdice.markov.graph import explore
    >>> from exactdice.markov.synthetic import GamblersRuin
    >>> value = sound_lower_value(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
    >>> value <= 1 / 3 and 1 / 3 - value < 1e-12
    True
    """
    from exactdice.markov.graph import CHANCE, DECISION, MAX, TERMINAL

    by_outcome, endless = _float_payoffs(graph.outcomes, payoff, nonterminating_payoff)
    pays = [by_outcome[name] for name in graph.outcomes]
    least = min(pays + [endless])
    magnitude = max(abs(value) for value in pays + [least])
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    kind, data, offsets, targets, weights = graph.kind, graph.data, graph.offsets, graph.targets, graph.weights
    values = [least] * graph.num_states

    def move(node):
        """(targets, probabilities, slack) of a chance node; (targets, data) of another."""
        low, high = offsets[node], offsets[node + 1]
        if kind[node] == CHANCE:
            total = data[node]
            return (
                targets[low:high],
                [weight / total for weight in weights[low:high]],
                _chance_slack(high - low, magnitude),
            )
        return targets[low:high], data[node]

    def backup(node, found):
        if kind[node] == TERMINAL:
            return pays[data[node]]
        if kind[node] == DECISION:
            chosen = max if found[1] == MAX else min
            return chosen([values[t] for t in found[0]])
        successors, probabilities, slack = found
        return max(least, sum(map(mul, probabilities, map(values.__getitem__, successors))) - slack)

    if components is None:
        components = graph.strongly_connected_components()
    for component in components:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if len(component) == 1 and component[0] not in graph.successors(component[0]):
            node = component[0]
            values[node] = max(values[node], backup(node, move(node)))
            continue
        moves = [(node, move(node)) for node in component]  # a loop's moves, built once for its passes
        for _ in range(_MAX_SOUND_SWEEPS):  # from below toward the component's least fixed point
            gained = 0.0
            for node, found in moves:
                new = backup(node, found)
                if new > values[node]:
                    gained = max(gained, new - values[node])
                    values[node] = new
            if gained <= 64 * _UNIT_ROUNDOFF * magnitude or (deadline is not None and time.perf_counter() > deadline):
                break
    return values[graph.initial]
