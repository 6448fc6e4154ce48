"""Karbon inverse design: which setups give a target P(win), P(loss), P(tie), score or rounds.

`karbon_design_problem` builds the `exactdice.design.DesignProblem` of a grid of Karbon
setups: each point is one exact contest (`exactdice.karbon.tables.contest_cell`), and its
screen is a seeded simulation (`exactdice.karbon.simulate`, an independent implementation
of the rules) whose counts give a Hoeffding interval for each probability metric. Expected
rounds are unbounded, so a ``rounds`` target has no screen: every point is solved. Optimal
and kind play cannot be simulated without a strategy, so they are solved exhaustively too.

Targets: ``win``, ``loss``, ``tie`` (probabilities), ``score`` (P(win) + P(tie)/2, what
optimal play maximises by default) and ``rounds`` (expected rounds).

>>> problem = karbon_design_problem({"challenge": [1, 2]}, {"ability": 1, "consequence": 1},
...                                 metric="win")
>>> found = design_search(problem, target=Fraction(1, 2), best=1, store=None, workers=1)
>>> [candidate.point for candidate in found.candidates]
[{'challenge': 1}]
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

from exactdice.design import DesignProblem, check_axes, check_every_point, design_search, hoeffding_half_width
from exactdice.errors import InputError
from exactdice.karbon.dice import dice_text
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE, setup_from_cell
from exactdice.tables.jobs import ruleset_data
from exactdice.tables.store import ResultKey, canonical_json
from exactdice.tables.sweep import SweepCell

__all__ = [
    "METRICS",
    "VARIABLE_PARAMETERS",
    "karbon_design_problem",
    "solve_design_task",
    "design_search",
    "DEFAULT_SAMPLES",
]

#: target name -> (what it is, the contest_cell metric(s) it comes from)
METRICS = {
    "win": "P(win)",
    "loss": "P(loss)",
    "tie": "P(tie)",
    "score": "P(win) + P(tie)/2",
    "rounds": "expected rounds",
}
#: setup parameters a design may vary
VARIABLE_PARAMETERS = ("ability", "challenge", "consequence", "peril", "fortune", "fallout")
#: contests simulated to screen one point
DEFAULT_SAMPLES = 50_000


def metric_value(cell: dict, metric: str) -> Fraction:
    """The exact value of a target metric from a `contest_cell` result.

    >>> metric_value({"P(win)": Fraction(1, 2), "P(tie)": Fraction(1, 4)}, "score")
    Fraction(5, 8)
    """
    if metric == "score":
        return cell["P(win)"] + cell["P(tie)"] / 2
    if metric == "rounds":
        return cell["expected rounds"]
    return cell[f"P({metric})"]


def karbon_design_problem(
    axes: dict[str, list],
    fixed: dict,
    *,
    metric: str = "win",
    player: str = "fixed",
    narrator: str = "fixed",
    rules: tuple = (),
    samples: int = DEFAULT_SAMPLES,
) -> DesignProblem:
    """The design grid over *axes* (parameter -> values), the rest of the setup from *fixed*.

    *fixed* holds the other `contest_cell` arguments (ability, consequence, pool, ...);
    every point is checked as a setup before anything is solved.
    """
    if metric not in METRICS:
        raise InputError("metric", f"unknown target {metric!r}; choose from {', '.join(METRICS)}")
    check_axes(axes, fixed, VARIABLE_PARAMETERS, only_axes=True)
    if samples < 100:
        raise InputError("samples", f"must be >= 100, got {samples}")
    ruleset = Rules().with_rules(rules)
    player_policy, narrator_policy = parse_player_policy(player), parse_narrator_policy(narrator)
    base = {
        "consequence": 2,
        "peril": 0,
        "fortune": 0,
        "fallout": 0,
        "training": False,
        "pool": dice_text(DEFAULT_POOL),
        "reserve": dice_text(DEFAULT_RESERVE),
        **fixed,
    }
    policies = {"player": player_policy.text(), "narrator": narrator_policy.text()}

    def arguments(point: dict) -> dict:
        return {**base, **point}

    # every point must be a valid setup before anything runs
    problem_axes = {name: list(values) for name, values in axes.items()}
    probe = DesignProblem(problem_axes, cell=None, metric=None, solve_fn=None)
    check_every_point(probe.points(), lambda point: setup_from_cell(arguments(point)))

    def cell(point: dict) -> SweepCell:
        kwargs = arguments(point)
        key = ResultKey("karbon", ruleset_data(ruleset), {"design": "contest", "setup": kwargs}, policies)
        return SweepCell(key, ("exact", dict(kwargs, player=player, narrator=narrator, rules=tuple(rules))))

    simulable = player_policy.kind not in ("optimal", "kind") and narrator_policy.kind not in ("optimal", "kind")
    screen = interval = None
    if metric != "rounds" and simulable:

        def screen(point: dict) -> SweepCell:
            kwargs = arguments(point)
            seed = int.from_bytes(hashlib.sha256(canonical_json(kwargs).encode()).digest()[:4], "big")
            key = ResultKey(
                "karbon",
                ruleset_data(ruleset),
                {"design": "simulation-screen", "setup": kwargs, "samples": samples, "seed": seed},
                policies,
            )
            return SweepCell(
                key,
                (
                    "screen",
                    dict(kwargs, player=player, narrator=narrator, rules=tuple(rules), samples=samples, seed=seed),
                ),
            )

        def interval(counts: dict, risk: Fraction) -> dict:
            return screen_interval(counts, metric, risk)

    return DesignProblem(
        axes=problem_axes,
        cell=cell,
        metric=lambda result: metric_value(result, metric),
        solve_fn=solve_design_task,
        screen=screen,
        interval=interval,
    )


def screen_interval(counts: dict, metric: str, risk: Fraction) -> dict:
    """A Hoeffding interval for a probability metric from simulation counts.

    A contest still unfinished after the simulator's round limit may end either way, so
    it widens the interval upwards: the simulated indicator is at most the true one, and
    the indicator plus "unfinished" at least.

    >>> interval = screen_interval({"samples": 100, "win": 50, "loss": 50, "tie": 0,
    ...                             "unfinished": 0}, "win", Fraction(1, 20))
    >>> interval["estimate"], interval["low"] < Fraction(1, 2) < interval["high"]
    (Fraction(1, 2), True)
    """
    n = counts["samples"]
    if metric == "score":
        hits = Fraction(2 * counts["win"] + counts["tie"], 2)
    else:
        hits = Fraction(counts[metric])
    half = hoeffding_half_width(n, risk)
    low = max(Fraction(0), hits / n - half)
    high = min(Fraction(1), (hits + counts["unfinished"]) / n + half)
    return {"low": low, "high": high, "estimate": hits / n}


def solve_design_task(task) -> dict:
    """Run one design task in a worker: ``("exact", arguments)`` or ``("screen", arguments)``.

    >>> cell = solve_design_task(("exact", {"ability": 1, "challenge": 1, "consequence": 1, "peril": 0,
    ...                                     "fortune": 0, "fallout": 0, "training": False,
    ...                                     "pool": "d8,d8", "reserve": "none"}))
    >>> cell["P(win)"] + cell["P(tie)"] + cell["P(loss)"]
    Fraction(1, 1)
    """
    from exactdice.karbon.tables import contest_cell

    kind, kwargs = task
    kwargs = dict(kwargs)
    if kind == "exact":
        return contest_cell(**kwargs)
    from exactdice.karbon.simulate import simulate

    samples, seed = kwargs.pop("samples"), kwargs.pop("seed")
    player, narrator = kwargs.pop("player", "fixed"), kwargs.pop("narrator", "fixed")
    rules = kwargs.pop("rules", ())
    rows = simulate(
        setup_from_cell(kwargs),
        Rules().with_rules(rules),
        parse_player_policy(player),
        parse_narrator_policy(narrator),
        n=samples,
        seed=seed,
    )
    outcomes = rows["outcome"]
    return {
        "samples": samples,
        "win": int((outcomes == "win").sum()),
        "loss": int((outcomes == "loss").sum()),
        "tie": int((outcomes == "tie").sum()),
        "unfinished": int((outcomes == "unfinished").sum()),
    }
