"""Karbon's requests: a contest's odds, certified bounds on optimal play, and the request
checks both share. The command line (``exactdice karbon odds``) and the web page's
calculator both call `karbon_odds`.

Values are Karbon's registry parameters by name (`exactdice.karbon.system.PARAMETERS`:
setup, rules and limits); a value left out takes its default. `karbon_odds` decides how to
answer: the exact game; certified floats where asked; or, for an optimal player whose exact
game passes ``max_states`` or explores past its time-box, certified bounds.

The time-box: an optimal player's game on the default pool passes millions of states (A1 v
C1, W1 P0 has 7 million). So the exact attempt explores for a tenth of the request's
``max_seconds`` (the bounds search's time), or `DEFAULT_ATTEMPT_SECONDS` without it: a game
that explores within that is answered exactly, one past it by bounds, having spent at most a
tenth more than the search itself. (The compiled walk explores a few hundred thousand states
a second, and an exact solve of a game of optimal play costs far more than exploring it:
past a few seconds of exploring, bounds answer sooner.) ``max_seconds`` 0 asks for no bounds
at all.

>>> answer = karbon_odds({"player_dice": "d6", "narrator_dice": "d10", "consequence": 1,
...                       "pool": "none", "reserve": "none"})
>>> answer.kind, answer.provenance.states, sum(answer.outcomes.values())
('outcomes', 100, Fraction(1, 1))
>>> attempt_seconds(20), attempt_seconds(None)
(2.0, 3.0)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from exactdice.answers.shapes import Bounds, Outcomes, Provenance, Stop
from exactdice.errors import InputError, TooLargeError
from exactdice.progress import ProgressCallback, report, solver_bars

__all__ = [
    "karbon_odds",
    "karbon_bounds",
    "KarbonRequest",
    "karbon_request",
    "attempt_seconds",
    "ATTEMPT_SHARE",
    "DEFAULT_ATTEMPT_SECONDS",
    "EXPECTATIONS",
]

#: the share of a request's seconds the exact attempt may explore
ATTEMPT_SHARE = 0.1
#: the exact attempt's exploring time when the request sets no seconds
DEFAULT_ATTEMPT_SECONDS = 3.0
#: the expectations of a contest, in the order they are shown
EXPECTATIONS = ("rounds", "breaks", "glitches", "injuries", "conditions")
#: why a bounds search stopped short of its precision: (the parameter to raise, words)
_STOPPED = {
    "time": ("max_seconds", "the time given ran out (raise `max_seconds`)"),
    "states": ("max_states", "it reached `max_states` (raise it)"),
    "memory": ("max_memory", "it reached the memory budget (raise `max_memory`)"),
    "interrupted": (None, "it was interrupted"),
}


def attempt_seconds(max_seconds: float | None) -> float:
    """Seconds an optimal player's exact game may explore before bounds answer instead."""
    return DEFAULT_ATTEMPT_SECONDS if max_seconds is None else max_seconds * ATTEMPT_SHARE


@dataclass(frozen=True)
class KarbonRequest:
    """One checked Karbon request: the contest, its reading, both policies and the limits."""

    setup: Any
    ruleset: Any
    player: Any
    narrator: Any
    limits: dict

    @property
    def optimal(self) -> bool:
        """Whether the player plays optimally."""
        return self.player.kind == "optimal"


def karbon_request(values: Mapping[str, Any]) -> KarbonRequest:
    """The checked request of Karbon parameter *values* (any left out take their defaults):
    every value against the registry, then what the values say together.

    >>> karbon_request({"ability": 2, "challenge": 1}).setup.ability
    2
    >>> karbon_request({"ability": 2, "challenge": 1, "objective": "win"})
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: objective: is what optimal play maximises: it needs `player_policy` optimal or `narrator_policy` optimal or kind (with fixed policies nobody chooses, so it would change nothing)
    """
    from exactdice.karbon.system import DRAW_PARAMETERS, SYSTEM, contest_from_values
    from exactdice.systems import limit_values

    if values.get("state_file"):
        given = [name for name in DRAW_PARAMETERS if values.get(name) not in (None, ())]
        if given:
            raise InputError(
                "state_file",
                "a state file replaces the setup; drop "
                + ", ".join(f"`{name}`" for name in given)
                + " (or the state file)",
            )
    for name in ("player_policy", "narrator_policy"):
        if values.get(name) is not None and not str(values[name]).strip():
            raise InputError(
                name,
                'is empty; give "optimal", "fixed", key=value preferences or leave it out '
                "for the default" + (' ("kind" and "random" too)' if name == "narrator_policy" else ""),
            )
    setup = SYSTEM.setup(values)
    ruleset = SYSTEM.rules(values)
    contest, player, narrator = contest_from_values(setup)
    by_rule = any(str(rule).replace(" ", "").startswith("objective=") for rule in values.get("rules") or ())
    if (values.get("objective") or by_rule) and player.kind != "optimal" and narrator.kind not in ("optimal", "kind"):
        raise InputError(
            "objective" if values.get("objective") else "rules",
            "is what optimal play maximises: it needs `player_policy` optimal or `narrator_policy` "
            "optimal or kind (with fixed policies nobody chooses, so it would change nothing)",
        )
    return KarbonRequest(contest, ruleset, player, narrator, limit_values(SYSTEM, values))


def karbon_odds(
    values: Mapping[str, Any],
    *,
    arithmetic: str = "exact",
    bounds: bool = False,
    advice: bool = False,
    draw_values: bool = False,
    length: bool = False,
    progress: ProgressCallback | None = None,
) -> Outcomes | Bounds:
    """A contest's odds and expectations, exact where they can be.

    Parameters
    ----------
    values : mapping
        Karbon's parameters by name (setup, rules, limits); missing ones take their defaults.
    arithmetic : {"exact", "float"}
        Exact fractions, or certified floats (each number an interval holding the exact value).
    bounds : bool, default False
        Certified bounds on optimal play straight away (`karbon_bounds`), not the exact game.
    advice : bool, default False
        An optimal player's first choices in words (the draw, each first roll's risk).
    draw_values : bool, default False
        The value of every draw an optimal player could make (in ``detail.draw_values``).
    length : bool, default False
        Also how long the contest lasts: the chart ``length`` of P(ended by round n).
    progress : callable, optional
        Given a `exactdice.progress.Progress` as the work goes on.

    Returns
    -------
    Outcomes or Bounds
        The exact law (or certified floats), or bounds where an optimal player's exact game
        was too large (``too_large`` says why).

    Raises
    ------
    InputError
        A bad value, naming its parameter; `TooLargeError` past a limit bounds cannot answer.
    """
    request = karbon_request(values)
    if arithmetic not in ("exact", "float"):
        raise InputError("arithmetic", f"must be exact or float, got {arithmetic!r}")
    if bounds:
        if arithmetic == "float":
            raise InputError(
                "arithmetic",
                "certified floats certify the whole game's numbers; bounds compute bounds instead (drop one)",
            )
        if not _bounds_apply(request):
            raise InputError(
                "bounds",
                "needs `player_policy` optimal against a narrator who plays fixed, random "
                "or optimal (a fixed player's odds are exact; a kind narrator helps)",
            )
        return karbon_bounds(values, advice=advice, progress=progress, request=request)
    max_seconds = request.limits["max_seconds"]
    can_bound = _bounds_apply(request) and arithmetic == "exact" and max_seconds != 0
    began = time.perf_counter()
    try:
        with solver_bars(progress) as bars:
            odds = _contest_odds(
                request, arithmetic, bars, attempt_seconds(max_seconds) if can_bound else None, advice, draw_values
            )
    except TooLargeError as error:
        if not can_bound:
            raise
        too_large = _too_large(error, request)
    else:
        too_large = None
    if too_large is not None:  # outside the except: the partly explored graph is freed first
        report(progress, "the exact game is too large; searching for certified bounds")
        found = karbon_bounds(values, advice=advice, progress=progress, request=request, too_large=too_large)
        found.provenance.seconds = time.perf_counter() - began
        return found
    return _outcomes(odds, request, advice and request.optimal, length)


def _outcome_words() -> dict:
    from exactdice.karbon.system import OUTCOME_WORDS

    return OUTCOME_WORDS


def _bounds_apply(request: KarbonRequest) -> bool:
    from exactdice.karbon.bounds import bounds_apply

    return bounds_apply(request.player, request.narrator)


def _contest_odds(
    request: KarbonRequest, arithmetic: str, bars: bool, explore_seconds, advice: bool, draw_values: bool
):
    from exactdice.karbon.solve import contest_odds

    explained = advice and request.optimal
    return contest_odds(
        request.setup,
        request.ruleset,
        request.player,
        request.narrator,
        arithmetic=arithmetic,
        max_states=request.limits["max_states"],
        explore_seconds=explore_seconds,
        progress=bars,
        all_states=explained,
        draw_values=draw_values or (explained and request.setup.player_dice is None),
    )


def _too_large(error: TooLargeError, request: KarbonRequest) -> Stop:
    """Why the exact attempt stopped, naming the parameter to raise."""
    max_seconds = request.limits["max_seconds"]
    if error.field == "explore_seconds":
        source = (
            "a tenth of `max_seconds`"
            if max_seconds is not None
            else f"the exact attempt's {DEFAULT_ATTEMPT_SECONDS:g} s (give `max_seconds` S for a tenth of S)"
        )
        return Stop("time", "max_seconds", f"{error.message}, {source}")
    if error.field == "max_states":
        return Stop("states", "max_states", error.message)
    from exactdice.limits import MEMORY_PARAMETER

    if error.field == MEMORY_PARAMETER:
        return Stop("memory", "max_memory", error.message)
    return Stop("states", error.field, error.message)


def _outcomes(odds, request: KarbonRequest, advice: bool, length: bool) -> Outcomes:
    """The `Outcomes` of a solved contest."""
    from exactdice.karbon.dice import dice_text

    charts = {}
    if length and odds.exact:
        from exactdice.karbon.charts import length_chart
        from exactdice.karbon.length import contest_length

        charts["length"] = length_chart(contest_length(odds))
    explanation = []
    if advice:
        from exactdice.karbon.solve import explain_first_round

        explanation = explain_first_round(odds)
    names = ("win", "loss", "tie", "never_ends")
    return Outcomes(
        outcomes={name: getattr(odds, name) for name in names},
        expectations={name: getattr(odds, f"expected_{name}") for name in EXPECTATIONS},
        words=dict(_outcome_words()),
        intervals=None if odds.bounds is None else {name: odds.bounds.get(name) for name in odds.bounds},
        tolerance=odds.tolerance,
        charts=charts,
        advice=explanation,
        draws={"player": dice_text(odds.player_draw), "narrator": dice_text(odds.narrator_draw)},
        provenance=_provenance(
            request, "exact" if odds.exact else "certified floats", odds.states, odds.transitions, odds.seconds
        ),
        detail=odds,
    )


def _provenance(request: KarbonRequest, method: str, states, transitions, seconds: float) -> Provenance:
    return Provenance(
        "karbon",
        method,
        request.setup.to_dict(),
        request.ruleset.to_dict(),
        {"player": request.player.text(), "narrator": request.narrator.text()},
        states,
        transitions,
        seconds,
    )


def karbon_bounds(
    values: Mapping[str, Any],
    *,
    advice: bool = False,
    progress: ProgressCallback | None = None,
    request: KarbonRequest | None = None,
    too_large: Stop | None = None,
    workers: int | None = None,
) -> Bounds:
    """Certified bounds on an optimal player's value (`exactdice.karbon.bounds.bounded_odds`),
    searched for ``max_seconds`` (none: until ``precision``, ``max_states``, the memory budget
    or Ctrl-C), within ``max_states``; the strategy found is checked exactly within
    ``max_states`` too.

    Parameters
    ----------
    values : mapping
        Karbon's parameters by name; the player must play optimally, the narrator not kind.
    advice : bool, default False
        The strategy's draw and first-round risk choices in words, with their bounds.
    progress : callable, optional
        Given a `exactdice.progress.Progress` as the search goes on (the gap so far).
    request : KarbonRequest, optional
        The values already checked (`karbon_request`).
    too_large : Stop, optional
        Why the exact game was not solved, kept in the answer.
    workers : int, optional
        Processes searching the draws apart (None: one per core where they can be forked;
        0: this process alone).

    Returns
    -------
    Bounds
        The bounds, the strategy's exact odds where its game was solved, and why the search
        stopped short of ``precision`` if it did.

    Examples
    --------
    >>> found = karbon_bounds({"player_dice": "d6", "narrator_dice": "d8", "pool": "d4", "reserve": "none",
    ...                        "consequence": 1, "player_policy": "optimal", "max_seconds": 10})
    >>> found.kind, found.reached, found.lower <= found.upper
    ('bounds', True, True)
    """
    from exactdice.karbon.bounds import bounded_odds, explain_bounded_first_round, interval_text, narrator_reply_words
    from exactdice.karbon.dice import dice_text

    request = request or karbon_request(values)
    if not request.optimal:
        raise InputError(
            "player_policy",
            "certified bounds are for an optimal player (a fixed player's odds are "
            "exact): give `player_policy` optimal",
        )
    if request.narrator.kind == "kind":
        raise InputError(
            "narrator_policy", "certified bounds need a narrator that plays fixed, random or optimal, not kind"
        )
    limits = request.limits

    def gap(lower, upper, explored, seconds):
        report(progress, "bounds", done=explored, unit="states", seconds=seconds, note=interval_text(lower, upper))

    found = bounded_odds(
        request.setup,
        request.ruleset,
        request.player,
        request.narrator,
        precision=limits["precision"],
        max_seconds=limits["max_seconds"] or None,
        max_states=limits["max_states"],
        certify_states=limits["max_states"],
        progress=gap if progress is not None else None,
        workers=workers,
        phase=lambda text: report(progress, text),
    )
    stopped = None
    if found.gap > found.precision:
        parameter, words = _STOPPED.get(found.stopped, (None, str(found.stopped)))
        stopped = Stop(found.stopped, parameter, words)
    strategy = (
        None
        if found.win is None
        else {"win": found.win, "loss": found.loss, "tie": found.tie, "never_ends": found.never_ends}
    )
    setup = request.setup
    return Bounds(
        objective="P(win)" if found.ruleset.objective == "win" else "expected score (win 1, tie 1/2)",
        lower=found.lower,
        upper=found.upper,
        lower_kind=found.lower_kind,
        precision=found.precision,
        stopped=stopped,
        strategy_outcomes=strategy,
        against=narrator_reply_words(found.narrator_policy),
        fixed_value=found.fixed_value,
        explored=found.explored,
        advice=explain_bounded_first_round(found) if advice else [],
        draws=None
        if setup.player_dice is None
        else {"player": dice_text(setup.player_dice), "narrator": dice_text(setup.narrator_dice)},
        too_large=too_large,
        provenance=_provenance(request, "certified bounds", found.explored, None, found.seconds),
        detail=found,
    )
