"""Optimal play past exact reach: certified bounds on a contest's value (spec section 8).

`bounded_odds` runs `exactdice.markov.bounded` on the same model `contest_odds` would
solve exactly, then certifies the lower bound: the player's strategy (greedy on the
lower bounds where explored, the fixed preferences elsewhere) is solved exactly against
the narrator -- a plain chain against a fixed narrator, a one-sided game where an
optimal narrator minimises -- so the lower bound is that strategy's exact value and
P(win), P(loss), P(tie) come with it. The upper bound is the bounded iteration's, in
floats widened outward (`exactdice.markov.bounded`).

Initial bounds (`fixed_play_lower_bounds`): a state also reached when the player follows
the fixed preferences starts with that play's exact value as its lower bound (sound:
the optimal player can always play the fixed way). No cheap relaxed game was found
that gives an upper bound below 1 soundly (a kind narrator or a narrator playing fixed
preferences is no cheaper to solve against an optimal player than the game itself), so
upper bounds start at the greatest payoff, 1.

>>> from exactdice.karbon import ContestSetup, PlayerPolicy
>>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={4: 1},
...                      consequence=1, peril=1)
>>> found = bounded_odds(setup, player=PlayerPolicy(kind="optimal"), precision=1e-4)
>>> found.lower <= found.upper and found.gap <= 1e-4, found.lower_method
(True, 'exact')
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from exactdice.core.display import counted, percent_text
from exactdice.core.exact import directed_decimal_text, fraction_text
from exactdice.errors import InputError, InternalError, TooLargeError
from exactdice.karbon.compiled import compiled_bounded_solver
from exactdice.karbon.dice import dice_text
from exactdice.karbon.draws import DrawSearchModel
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import ContestSetup
from exactdice.karbon.solve import payoffs
from exactdice.limits import MEMORY_FLAG, time_limit
from exactdice.markov.bounded import BoundedSolver, StrategySolvePassedTime, TimeLimitedModel, evaluate_strategy
from exactdice.markov.bounded_split import split_bounded_run
from exactdice.markov.model import Chance
from exactdice.markov.graph import explore
from exactdice.markov.solver import solve

__all__ = [
    "BoundedOdds",
    "bounded_odds",
    "game_model",
    "fixed_play_lower_bounds",
    "explain_bounded_first_round",
    "bounds_apply",
    "narrator_reply_words",
    "interval_text",
    "DEFAULT_CERTIFY_STATES",
    "LOWER_KINDS",
]

DEFAULT_CERTIFY_STATES = 3_000_000
#: the exact check of the strategy found gets at most this long when the request sets no
#: seconds (past it the search's own certified lower bound stands)
DEFAULT_CERTIFY_SECONDS = 10.0
#: what a `BoundedOdds.lower` is: the returned strategy's exact value; that strategy's own
#: value in floats, outward rounded (its game explored, its exact solve out of time); the
#: bounded iteration's float lower bound (unexpanded states at their starting bounds)
LOWER_KINDS = ("exact", "strategy-float", "search-float")
#: where the exact check's solve passes its time, the strategy's own value in floats gets
#: this share of that time more (`exactdice.markov.bounded.sound_lower_value`)
SOUND_SHARE = 0.2
#: why a search stopped short of its precision, and how to give it more
_STOPPED_HINTS = {
    "time": "at the time limit; raise `max_seconds`",
    "states": "at the state budget; raise `max_states`",
    "memory": "at the memory budget; raise `max_memory`",
    "interrupted": "interrupted",
}
_MORE_FOR_THE_CHECK = (
    "to solve it exactly, give the check more: half of `max_seconds` and all of `max_states` "
    "go to it in a request (`exactdice.answers.karbon_bounds`), certify_seconds / "
    "certify_states in `bounded_odds`"
)


def narrator_reply_words(narrator: NarratorPolicy) -> str:
    """What the lower bound is guaranteed against: an optimal narrator's best reply, else
    the narrator's own play.

    >>> narrator_reply_words(NarratorPolicy(kind="random"))
    "the narrator's random play"
    """
    return {"optimal": "the narrator's best reply", "random": "the narrator's random play"}.get(
        narrator.kind, "the narrator's fixed preferences"
    )


def bounds_apply(player: PlayerPolicy, narrator: NarratorPolicy) -> bool:
    """Whether certified bounds can answer for these policies: an optimal player against a
    narrator who does not help (fixed, random or optimal), as `bounded_odds` requires.

    >>> bounds_apply(PlayerPolicy(kind="optimal"), NarratorPolicy(kind="kind"))
    False
    """
    return player.kind == "optimal" and narrator.kind != "kind"


def interval_text(low, high, decimals: int = 4) -> str:
    """Bounds ``[low, high]`` to ``decimals`` places, rounded outward so they stay bounds.

    >>> interval_text(Fraction(1, 3), Fraction(2, 3))
    '[0.3333, 0.6667]'
    """
    return (
        f"[{directed_decimal_text(Fraction(low), decimals, up=False)}, "
        f"{directed_decimal_text(Fraction(high), decimals, up=True)}]"
    )


def float_below(value: Fraction) -> float:
    """The greatest float <= ``value``.

    >>> float_below(Fraction(1, 3)) <= Fraction(1, 3) < Fraction(float_below(Fraction(1, 3))) + 1e-16
    True
    """
    near = float(value)
    return near if Fraction(near) <= value else math.nextafter(near, -math.inf)


@dataclass
class BoundedOdds:
    """Certified bounds on the value (expected score, or P(win) under ``objective=win``).

    ``lower`` is guaranteed by ``strategy`` against every narrator reply: the exact value
    of that strategy (a Fraction) when ``lower_method`` is "exact", else a float made sound
    by outward rounding ("float, outward rounding (...)"): the strategy's own value where
    its game was explored but not solved exactly in time, otherwise the bounded
    iteration's lower bound; ``lower_kind`` names which, for programs: "exact",
    "strategy-float" or "search-float" (`LOWER_KINDS`). ``upper`` is a float no
    play of the player beats. ``win``/``loss``/``tie`` are the strategy's exact odds
    against the narrator's best reply (None when not certified exactly).
    """

    lower: Fraction | float
    upper: float
    precision: float
    lower_method: str
    upper_method: str
    lower_kind: str = field(default="search-float", kw_only=True)
    iteration_lower: float
    explored: int
    touched: int
    trajectories: int
    end_components: int
    seconds: float
    bounded_seconds: float
    certify_seconds: float
    stopped: str
    fixed_value: Fraction | None
    win: Fraction | None = None
    loss: Fraction | None = None
    tie: Fraction | None = None
    never_ends: Fraction | None = None
    strategy_states: int | None = None
    draw_bounds: dict | None = None
    strategy: dict = field(default_factory=dict, repr=False)
    sides: dict = field(default_factory=dict, repr=False)
    history: list = field(default_factory=list, repr=False)
    model: object = field(default=None, repr=False)
    solver: object = field(default=None, repr=False)  # the BoundedSolver: every explored state's bounds
    ruleset: Rules | None = None
    player_policy: PlayerPolicy | None = None
    narrator_policy: NarratorPolicy | None = None

    @property
    def gap(self) -> float:
        return float(Fraction(self.upper) - Fraction(self.lower))

    def best_draws(self) -> tuple[list, bool]:
        """(draws still in contention, certified?): a draw is out once another draw's lower
        bound beats its upper bound; certified when one draw is left."""
        if not self.draw_bounds:
            return [], False
        best_lower = max(low for low, _ in self.draw_bounds.values())
        left = [text for text, (_, high) in self.draw_bounds.items() if high >= best_lower]
        return left, len(left) == 1

    def to_json(self) -> dict:
        def number(value):
            if value is None:
                return None
            return fraction_text(value) if isinstance(value, Fraction) else float(value)

        left, certified = self.best_draws()
        return {
            "lower": number(self.lower),
            "upper": float(self.upper),
            "gap": self.gap,
            "decimal": {"lower": float(self.lower), "upper": float(self.upper)},
            "precision": self.precision,
            "reached": self.gap <= self.precision,
            "stopped": self.stopped,
            "lower_method": self.lower_method,
            "lower_kind": self.lower_kind,
            "upper_method": self.upper_method,
            "strategy_odds": {
                "win": number(self.win),
                "loss": number(self.loss),
                "tie": number(self.tie),
                "never_ends": number(self.never_ends),
            },
            "fixed_preferences_value": number(self.fixed_value),
            "states_explored": self.explored,
            "states_touched": self.touched,
            "strategy_states": self.strategy_states,
            "trajectories": self.trajectories,
            "end_components": self.end_components,
            "seconds": round(self.seconds, 3),
            "draw_bounds": {text: [low, high] for text, (low, high) in (self.draw_bounds or {}).items()},
            "draws_in_contention": left,
            "best_draw_certified": certified,
            "policies": {"player": self.player_policy.text(), "narrator": self.narrator_policy.text()},
            "ruleset": self.ruleset.to_dict(),
        }

    def summary_lines(self, decimals: int = 6, exact: bool = False, policies: bool = True) -> list[str]:
        """The answer in lines of text: the bounds to ``decimals`` places (the lower one
        rounded down, the upper one up, so the printed interval still holds the value);
        ``exact``: every exact number in full (else the lower bound's fraction only when
        short); ``policies``: a last line naming both sides' policies."""
        # a float bound is exact as the rational it stands for
        lower = directed_decimal_text(Fraction(self.lower), decimals, up=False)
        upper = directed_decimal_text(Fraction(self.upper), decimals, up=True)
        shown = exact or (self.lower_kind == "exact" and len(str(self.lower.denominator)) <= 30)
        exact_note = f" = {fraction_text(self.lower)}" if self.lower_kind == "exact" and shown else ""
        lines = [
            f"value ({'P(win)' if self.ruleset.objective == 'win' else 'expected score'}) is in "
            f"[{lower}, {upper}], gap {self.gap:.{decimals}f}"
            + (" <= " if self.gap <= self.precision else " > ")
            + f"precision {self.precision:g}"
            + ("" if self.gap <= self.precision else f" (stopped {_STOPPED_HINTS.get(self.stopped, self.stopped)})"),
            f"lower bound: the returned strategy's value against {narrator_reply_words(self.narrator_policy)}, "
            f"{self.lower_method}{exact_note}",
            f"upper bound: {self.upper_method}",
        ]
        if self.win is not None:
            odds = [("P(win)", self.win), ("P(loss)", self.loss), ("P(tie)", self.tie)]
            odds += [("P(never ends)", self.never_ends)] if self.never_ends else []
            lines.append(
                "strategy's odds: "
                + ", ".join(f"{name} {fraction_text(value) if exact else percent_text(value)}" for name, value in odds)
            )
        if self.fixed_value is not None:
            lines.append(
                "fixed preferences' value (the starting lower bound): "
                + (fraction_text(self.fixed_value) if exact else f"{float(self.fixed_value):.{decimals}f}")
            )
        lines.append(
            f"states explored: {self.explored:,} (touched {self.touched:,}), trajectories "
            f"{self.trajectories:,}, end components {self.end_components}; "
            f"{self.seconds:.1f} s (bounds {self.bounded_seconds:.1f} s, certificate "
            f"{self.certify_seconds:.1f} s"
            + (f" over {self.strategy_states:,} states)" if self.strategy_states else ")")
        )
        if policies:
            lines.append(f"policies: player {self.player_policy.text()}; narrator {self.narrator_policy.text()}")
        return lines


def game_model(setup: ContestSetup, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy):
    """The model `contest_odds` would explore for these policies."""
    searching = player.kind == "optimal" or narrator.kind in ("optimal", "kind")
    if setup.player_dice is None and searching:
        return DrawSearchModel(setup, ruleset, player, narrator)
    start = setup.start(player, narrator)
    return KarbonModel(start.sizes, start.situation(), ruleset, player, narrator)


def fixed_play_lower_bounds(
    setup, ruleset, narrator, *, max_states: int, max_seconds: float | None = None, per_state: bool = True
):
    """(value of the fixed preferences at the start, state -> lower bound function) from
    one exact solve of the fixed player against ``narrator`` (the model `contest_odds`
    solves); (None, None) if exploring it passes ``max_states`` or exploring and solving
    pass ``max_seconds``. A state
    the fixed play reaches gets its exact value there (rounded down to a float); every
    other state None (with ``per_state`` False the function is None: the value alone)."""
    solution, lower_bound = _fixed_play_solution(
        setup, ruleset, narrator, max_states=max_states, max_seconds=max_seconds, per_state=per_state
    )
    return (None if solution is None else solution.value), lower_bound


def _fixed_play_solution(setup, ruleset, narrator, *, max_states: int, max_seconds: float | None, per_state: bool):
    """(the fixed play's exact `Solution`, state -> lower bound function or None), or
    (None, None): `fixed_play_lower_bounds` with the whole solution (its odds, the
    narrator's reply) for when the fixed preferences become the returned strategy."""
    model = game_model(setup, ruleset, PlayerPolicy(), narrator)
    payoff, endless = payoffs(ruleset)
    try:
        with time_limit(max_seconds, "max_seconds", f"the fixed preferences' solve passed {max_seconds} s"):
            graph = explore(
                model if max_seconds is None else TimeLimitedModel(model, max_seconds),
                max_states=max_states,
                progress=False,
            )
            solution = solve(graph, payoff=payoff, nonterminating_payoff=endless, progress=False, all_states=per_state)
    except TooLargeError:
        return None, None
    if not per_state:
        return solution, None
    per_state_value, reached = solution._per_state, graph.index
    cache: dict = {}

    def lower_bound(state):
        if state not in reached:
            return None
        value = per_state_value(state)[1]
        bound = cache.get(value)
        if bound is None:
            bound = cache[value] = float_below(value)
        return (bound, math.inf)

    return solution, lower_bound


def _fixed_draw_text(model) -> str | None:
    """The draw the fixed preferences make (None: no draw to choose, or none they can make)."""
    if not isinstance(model, DrawSearchModel):
        return None
    try:
        return dice_text(model.setup.start(PlayerPolicy(), model.narrator).player_draw)
    except InputError:
        return None


def _default_action(model):
    """The fixed preferences' choice off the explored states (index into the actions)."""
    inner = getattr(model, "inner", model)
    fixed_draw = _fixed_draw_text(model)

    def choose(state, names):
        if state == ("draw",):
            return names.index(fixed_draw) if fixed_draw in names else 0
        try:
            _, options = inner._decision(state)
            chosen = inner._fixed_choice(state, options)
        except (InternalError, KeyError, StopIteration):  # no fixed pick here: the first action
            return 0
        return names.index(chosen[0]) if chosen is not None and chosen[0] in names else 0

    return choose


def _check_request(precision, player: PlayerPolicy, narrator: NarratorPolicy) -> None:
    if not (isinstance(precision, (int, float)) and precision > 0):
        raise InputError("precision", f"must be a number > 0, got {precision!r}")
    if player.kind != "optimal":
        raise InputError("player", "bounds are for an optimal player (a fixed player's odds are exact)")
    if narrator.kind == "kind":
        raise InputError("narrator", "bounds need a narrator that plays fixed, random or optimal, not kind")


def _with_root_bound(model, fixed_value, from_fixed):
    """``from_fixed`` with the fixed preferences' value as the root's lower bound too (the
    fixed draw is one of the optimal player's options at the root of the whole game)."""
    root, root_bound = model.initial_state(), (float_below(fixed_value), math.inf)

    def initial(state):
        return root_bound if state == root else from_fixed(state)

    return initial


def _draw_parts(model, workers: int | None) -> list | None:
    """The player's draws split into one group per worker process for
    `split_bounded_run`, or None where the search stays in this process (one draw, one
    worker, no fork; ``workers`` None: `exactdice.processes.solve_workers`)."""
    from exactdice.processes import fork_supported, solve_workers

    if not isinstance(model, DrawSearchModel) or model.initial_state() != ("draw",):
        return None
    workers = solve_workers() if workers is None else workers
    if workers < 2 or not fork_supported():
        return None
    texts = list(model.draws_by_text)
    count = min(workers, len(texts))
    return [texts[number::count] for number in range(count)]


def _certify(
    result: BoundedOdds, strategy: dict, payoffs_pair, certify_states: int, certify_seconds: float | None
) -> None:
    """Solve the strategy exactly against the narrator's best reply; where that fits, its
    value becomes the lower bound (and its odds and the narrator's reply are kept)."""
    model = result.model
    payoff, endless = payoffs_pair
    try:
        value, solution = evaluate_strategy(
            model,
            strategy,
            default_action=_default_action(model),
            payoff=payoff,
            nonterminating_payoff=endless,
            max_states=certify_states,
            max_seconds=certify_seconds,
            sound_seconds=None if certify_seconds is None else certify_seconds * SOUND_SHARE,
        )
    except StrategySolvePassedTime as error:
        # the strategy's game was explored: its own value in floats, outward rounded, is a
        # guarantee too, usually above the search's (which counts unexpanded states low)
        if error.sound_lower > result.lower:
            result.lower = error.sound_lower
            result.strategy_states = error.states
            result.lower_kind = "strategy-float"
            result.lower_method = (
                f"float, outward rounding (the strategy's own value over its {error.states:,} "
                f"states; its exact solve passed {certify_seconds:g} s; {_MORE_FOR_THE_CHECK})"
            )
        else:
            result.lower_method = (
                f"float, outward rounding (the strategy's exact solve passed "
                f"{certify_seconds:g} s; {_MORE_FOR_THE_CHECK})"
            )
        return
    except TooLargeError as error:
        if error.field == MEMORY_FLAG:
            result.lower_method = (
                "float, outward rounding (solving the strategy's game passed the memory "
                "budget; raise it with `max_memory` to solve it exactly)"
            )
            return
        passed = f"{certify_seconds:g} s" if error.field == "max_seconds" else f"{certify_states:,} states"
        result.lower_method = f"float, outward rounding (the strategy's game passed {passed}; {_MORE_FOR_THE_CHECK})"
        return
    except KeyboardInterrupt:
        result.lower_method = "float, outward rounding (the exact check was interrupted)"
        return
    result.lower, result.lower_method, result.lower_kind = value, "exact", "exact"
    absorption = solution.absorption
    result.win, result.loss, result.tie = (
        absorption.get("win", 0),
        absorption.get("loss", 0),
        absorption.get("tie", 0),
    )
    result.never_ends = solution.never_ends
    result.strategy_states = solution.states
    result.strategy = dict(solution.played)
    result.strategy.update(solution.strategy)  # the narrator's best reply (optimal narrator)


def _return_fixed_preferences(result: BoundedOdds, solution) -> None:
    """Make the fixed preferences the returned strategy: their exact value is a better
    guarantee than the searched strategy's (a search stopped far from its answer)."""
    result.lower, result.lower_kind = solution.value, "exact"
    result.lower_method = (
        "exact (the fixed preferences' value: the search's own strategy guaranteed "
        "less, so the fixed preferences are the strategy returned)"
    )
    absorption = solution.absorption
    result.win, result.loss, result.tie = (
        absorption.get("win", 0),
        absorption.get("loss", 0),
        absorption.get("tie", 0),
    )
    result.never_ends = solution.never_ends
    result.strategy_states = solution.states
    fixed_draw = _fixed_draw_text(result.model)
    result.strategy = {} if fixed_draw is None else {("draw",): fixed_draw}
    result.strategy.update(solution.strategy)  # the narrator's best reply (optimal narrator)


def _search(model, compiled, fixed, payoffs_pair, precision, limits: dict, *, workers, seed):
    """(the search's `BoundedResult`, its solver): the compiled search where it runs, else
    the Python one, in one process or split by draws among ``workers`` (``fixed``: the
    fixed preferences' value and per-state lower bounds, either None)."""
    fixed_value, from_fixed = fixed
    payoff, endless = payoffs_pair
    if compiled is not None:
        root_lower = None if fixed_value is None else float_below(fixed_value)
        return compiled.run(precision, root_lower=root_lower, **limits), compiled
    parts = _draw_parts(model, workers)
    if parts is None:
        initial = from_fixed and _with_root_bound(model, fixed_value, from_fixed)
        solver = BoundedSolver(model, payoff=payoff, nonterminating_payoff=endless, initial_bounds=initial, seed=seed)
        return solver.run(precision, **limits), solver
    fixed_draw = _fixed_draw_text(model)

    def make_solver(part):  # the fixed value bounds only the root of a part with the fixed draw
        initial = from_fixed
        if from_fixed is not None and fixed_draw in part.draws_by_text:
            initial = _with_root_bound(part, fixed_value, from_fixed)
        return BoundedSolver(part, payoff=payoff, nonterminating_payoff=endless, initial_bounds=initial, seed=seed)

    models = [model.with_draws(texts) for texts in parts]
    found, best = split_bounded_run(models, make_solver, precision, root=("draw",), **limits)
    found.strategy.setdefault(("draw",), parts[best][0])  # a part of one draw starts past it
    return found, found.solver


def _draw_bounds(model, solver, fixed_value) -> dict:
    """Each draw's bounds; the fixed preferences' value bounds the draw they take too."""
    bounds = {text: solver.bounds_of(("ndraw", text)) for text in model.draws_by_text}
    fixed_draw = _fixed_draw_text(model)
    if fixed_value is not None and fixed_draw in bounds:
        low, high = bounds[fixed_draw]
        bounds[fixed_draw] = (max(low, float_below(fixed_value)), high)
    return bounds


def _guarantees_more(fixed_value, result: BoundedOdds) -> bool:
    """Whether the fixed preferences' exact value beats the strategy found (or ties a
    guarantee that is only a float)."""
    return fixed_value > result.lower or (fixed_value == result.lower and result.lower_kind != "exact")


def bounded_odds(
    setup: ContestSetup,
    ruleset: Rules | None = None,
    player: PlayerPolicy | None = None,
    narrator: NarratorPolicy | None = None,
    *,
    precision: float = 1e-3,
    max_seconds: float | None = None,
    max_states: int = 3_000_000,
    seed: int = 0,
    progress=None,
    certify: bool = True,
    certify_states: int = DEFAULT_CERTIFY_STATES,
    fixed_start: bool = True,
    fixed_states: int | None = None,
    certify_seconds: float | None = None,
    fixed_seconds: float | None = None,
    workers: int | None = None,
    phase=None,
) -> BoundedOdds:
    """Certified bounds on the contest's value with gap <= ``precision`` (or what
    ``max_seconds`` / ``max_states`` / Ctrl-C allow; ``stopped`` says which).

    ``progress(lower, upper, explored, seconds)`` is called as the gap shrinks, and
    ``phase(text)`` as each step begins (the fixed preferences' value, the search, the check).
    ``certify`` solves the returned strategy exactly (up to ``certify_states`` states and
    ``certify_seconds`` of exploring and solving, default half of ``max_seconds``, or
    `DEFAULT_CERTIFY_SECONDS` without it);
    ``fixed_start`` seeds the lower bounds with the fixed preferences' exact values
    (skipped when exploring their game passes ``fixed_states``, default ``max_states``, or
    ``fixed_seconds``, default a third of ``max_seconds``). With ``workers`` >= 2 (None:
    one per core, `exactdice.processes.solve_workers`) and several draws to choose from,
    the draws are split among worker processes, each searching its own
    (`exactdice.markov.bounded_split`; ``max_states`` is then shared among them).
    """
    ruleset = ruleset or Rules()
    player = player or PlayerPolicy(kind="optimal")
    narrator = narrator or NarratorPolicy()
    _check_request(precision, player, narrator)
    began = time.perf_counter()
    payoff, endless = payoffs(ruleset)
    model = game_model(setup, ruleset, player, narrator)
    phase = phase or (lambda text: None)
    fixed_value, from_fixed, fixed_solution = None, None, None
    compiled = compiled_bounded_solver(model, payoff=payoff, nonterminating_payoff=endless, seed=seed)
    if fixed_start:
        phase("solving the fixed preferences exactly (the starting lower bound)")
        if fixed_seconds is None and max_seconds is not None:
            fixed_seconds = max_seconds / 3
        # the compiled search is seeded at its root only (a per-state look-up from compiled
        # code would cost more than the search gains); the fixed preferences stay the
        # fallback strategy when they guarantee more than the one it returns
        fixed_solution, from_fixed = _fixed_play_solution(
            setup,
            ruleset,
            narrator,
            max_states=fixed_states or max_states,
            max_seconds=fixed_seconds,
            per_state=compiled is None,
        )
        fixed_value = None if fixed_solution is None else fixed_solution.value
    budget = None if max_seconds is None else max(0.0, max_seconds - (time.perf_counter() - began))
    phase("searching for bounds")
    found, solver = _search(
        model,
        compiled,
        (fixed_value, from_fixed),
        (payoff, endless),
        precision,
        dict(max_seconds=budget, max_states=max_states, progress=progress),
        workers=workers,
        seed=seed,
    )
    bounded_done = time.perf_counter()
    result = BoundedOdds(
        lower=found.lower,
        upper=found.upper,
        precision=precision,
        lower_method="float, outward rounding",
        upper_method=(
            "bounded value iteration (KKW end components), "
            + ("compiled, rounded outward" if compiled is not None else "floats widened outward")
        ),
        iteration_lower=found.lower,
        explored=found.expanded,
        touched=found.touched,
        trajectories=found.trajectories,
        end_components=found.end_components,
        seconds=0.0,
        bounded_seconds=found.seconds,
        certify_seconds=0.0,
        stopped=found.stopped,
        fixed_value=fixed_value,
        strategy=found.strategy,
        history=found.history,
        model=model,
        ruleset=ruleset,
        player_policy=player,
        narrator_policy=narrator,
        solver=solver,
    )
    if isinstance(model, DrawSearchModel) and model.initial_state() == ("draw",):
        result.draw_bounds = _draw_bounds(model, solver, fixed_value)
    if certify:
        phase("checking the strategy found exactly")
        if certify_seconds is None:
            certify_seconds = DEFAULT_CERTIFY_SECONDS if max_seconds is None else max_seconds / 2
        _certify(result, found.strategy, (payoff, endless), certify_states, certify_seconds)
    if fixed_solution is not None and _guarantees_more(fixed_solution.value, result):
        _return_fixed_preferences(result, fixed_solution)
    result.sides = {situation: model.who_decides(situation) for situation in result.strategy}
    result.certify_seconds = time.perf_counter() - bounded_done
    result.seconds = time.perf_counter() - began
    return result


def _first_round_position(result: BoundedOdds):
    """(the round start the strategy plays into, draw lines): through the draws as the
    strategy takes them (the narrator's reply: its certified best reply, else the one the
    lower bounds favour)."""
    model, solver, strategy = result.model, result.solver, result.strategy
    state, lines = model.initial_state(), []
    if state == ("draw",):
        state = ("ndraw", strategy.get(state) or max(result.draw_bounds, key=lambda t: result.draw_bounds[t][0]))
        left, certified = result.best_draws()
        lines.append(
            f"Draw: the strategy takes {state[1]}; bounds on the value of each draw: "
            + ", ".join(
                f"{text} {interval_text(low, high)}"
                for text, (low, high) in sorted(result.draw_bounds.items(), key=lambda item: -item[1][0])
            )
            + (f". Certified best: {left[0]}." if certified else f". Still in contention: {', '.join(left)}.")
        )
    if type(state) is tuple and state[0] == "ndraw":
        reply = solver.decision_bounds(state)
        if reply is None:  # one narrator draw (a chance step), or the search never got here
            expanded = model.expand(state)
            state = expanded.branches[0][1] if isinstance(expanded, Chance) else expanded.actions[0][1]
        else:
            name = strategy.get(state) or min(reply[1], key=lambda action: action[1])[0]
            state = next(target for text, target, _ in model.expand(state).actions if text == name)
    return state, lines


def _roll_words(sizes, position, entry) -> str:
    _, winner, gain_p, gain_n, player_hand, _ = entry
    who = {
        "p": f"the player wins the roll with {counted(gain_p, 'hit')}",
        "n": f"the narrator wins the roll with {counted(gain_n, 'hit')}",
        "t": f"a tie, {counted(gain_p, 'hit')} each",
    }[winner]
    if player_hand == position.player_hand:
        return who + ", no Opening"
    moved = [after - before for after, before in zip(player_hand, position.player_hand)]
    return (
        who
        + f", an Opening gives {sizes.text(tuple(abs(m) for m in moved))} to the "
        + ("player" if sum(moved) > 0 else "narrator")
    )


def explain_bounded_first_round(result: BoundedOdds, digits: int = 3) -> list[str]:
    """The strategy's draw and first-round risk choices explained from the bounds: which
    choice it takes, the bounds on each choice's value, and whether the choice is certified
    best (its lower bound at least the other's upper bound).

    >>> from exactdice.karbon import ContestSetup, PlayerPolicy
    >>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={4: 1},
    ...                      consequence=1, peril=1)
    >>> found = bounded_odds(setup, player=PlayerPolicy(kind="optimal"), precision=1e-4)
    >>> explain_bounded_first_round(found)[0].startswith("First round: ")
    True
    """
    position, lines = _first_round_position(result)
    inner = getattr(result.model, "inner", result.model)
    if type(position) is tuple:  # Fallout Glitches first: the first roll is further on
        return lines + ["(Fallout Glitches come before the first round; the explanation starts after them.)"]
    position = inner.round_start(position)
    table, roll_den = inner._roll_table(position.player_hand, position.narrator_hand)
    lines.append(
        "First round: the player's risk choice after each roll, with bounds on the value "
        "(what optimal play maximises) of risking and of not risking."
    )
    for entry in sorted(table, key=lambda entry: -entry[0]):
        weight, winner, gain_p, gain_n, player_hand, narrator_hand = entry
        situation = ("risk", inner.after_roll(position, winner, gain_p, gain_n, player_hand, narrator_hand), winner)
        share = f"{percent_text(Fraction(weight, roll_den), digits)} of first rolls: {_roll_words(inner.sizes, position, entry)}."
        lines.append(share + " " + _risk_words(result, situation))
    return lines


def _risk_words(result: BoundedOdds, situation) -> str:
    decision = result.solver.decision_bounds(situation)
    if decision is None:
        if situation in result.solver.index:
            return "No risk choice here."
        return "The search did not reach this roll; the strategy plays the fixed preferences there (no risk)."
    bounds = {name: (low, high) for name, low, high in decision[1]}
    if set(bounds) != {"yes", "no"}:
        return "No risk choice here."
    chosen = result.strategy.get(situation, "no")
    other = "no" if chosen == "yes" else "yes"
    certified = bounds[chosen][0] >= bounds[other][1]
    words = {"yes": "risking", "no": "not risking"}
    return (
        f"Risk: {chosen} ({'certified best' if certified else 'not certified: the other choice may still be as good'}). "
        f"{words[chosen].capitalize()}: {interval_text(*bounds[chosen])}; "
        f"{words[other]}: {interval_text(*bounds[other])}."
    )
