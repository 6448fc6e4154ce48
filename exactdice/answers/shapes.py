"""The shapes of the answers: one per kind, whatever the system.

* `Outcomes`: an exact law of outcomes (summing to exactly 1) with exact expectations, or
  certified floats of it, and pictures drawn from exact values;
* `Bounds`: certified bounds on the value of optimal play past exact reach, with the
  strategy's exact odds where its game was solved;
* `Validation`: a simulator's samples against the exact laws, column by column.

Each says where it came from (`Provenance`) and, where work stopped short of what was
asked, why (`Stop`: the reason and the parameter whose limit it reached, in words that name
parameters, never a command line's flags). ``to_data()`` gives the answer as plain data with
exact `Fraction`s (what the results store keeps and the web page shows); ``detail`` holds the
library's own object (`exactdice.karbon.ContestOdds`, ...) for a richer report.

>>> from fractions import Fraction
>>> coin = Outcomes({"heads": Fraction(1, 2), "tails": Fraction(1, 2)}, Provenance("coin"))
>>> coin.to_data()["outcomes"]
[['heads', Fraction(1, 2), 'heads'], ['tails', Fraction(1, 2), 'tails']]
>>> Outcomes({"heads": Fraction(1, 3)}, Provenance("coin"))
Traceback (most recent call last):
...
ArithmeticError: the outcome probabilities sum to 1/3, not exactly 1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

__all__ = ["Stop", "Provenance", "Outcomes", "Bounds", "Validation", "chart_data"]


@dataclass(frozen=True)
class Stop:
    """Why work stopped short, in words that name parameters (quoted in single backquotes,
    for an edge to show as flags or labels).

    Attributes
    ----------
    reason : str
        ``states``, ``time``, ``memory`` or ``interrupted``.
    parameter : str or None
        The parameter whose limit it reached (``max_states``).
    message : str
        What happened and how to go further.
    """

    reason: str
    parameter: str | None
    message: str

    def to_data(self) -> dict:
        """As plain data."""
        return {"reason": self.reason, "parameter": self.parameter, "message": self.message}


@dataclass
class Provenance:
    """Where an answer came from.

    Attributes
    ----------
    system : str
        The computation (``karbon``, ``karst-attack``).
    method : str
        How it was found: ``exact``, ``certified floats`` or ``certified bounds``.
    setup, rules, policies : dict
        What was solved, as plain data.
    states, transitions : int or None
        The size of the solved game.
    seconds : float
        The time it took.
    """

    system: str
    method: str = "exact"
    setup: dict = field(default_factory=dict)
    rules: dict = field(default_factory=dict)
    policies: dict = field(default_factory=dict)
    states: int | None = None
    transitions: int | None = None
    seconds: float = 0.0

    def to_data(self) -> dict:
        """As plain data."""
        return {
            "system": self.system,
            "method": self.method,
            "setup": self.setup,
            "rules": self.rules,
            "policies": self.policies,
            "states": self.states,
            "transitions": self.transitions,
            "milliseconds": round(1000 * self.seconds),
        }


def _exact(number):
    """A float as the exact rational it stands for (the data holds no floats: a results store
    keeps exact values only); an infinite one as None."""
    if number is None or number in (float("inf"), float("-inf")):
        return None
    return Fraction(number)


def chart_data(chart: Any) -> dict:
    """A chart as plain data with its exact values.

    Parameters
    ----------
    chart : exactdice.tables.charts.Chart
        The chart.

    Returns
    -------
    dict
        Its title, axes, marked x, note and curves, each point's value a `Fraction`.
    """
    return {
        "title": chart.title,
        "x_label": chart.x_label,
        "y_label": chart.y_label,
        "probability": chart.probability,
        "marked_x": chart.marked_x,
        "marked_label": chart.marked_label,
        "note": chart.note,
        "steps": chart.steps,
        "full_scale": chart.full_scale,
        "label_points": chart.label_points,
        "labels": {str(x): text for x, text in chart.labels.items()},
        "curves": [
            {"label": curve.label, "xs": list(curve.xs), "ys": list(curve.ys), "colour": curve.colour}
            for curve in chart.curves
        ],
    }


@dataclass
class Outcomes:
    """An exact law of outcomes, checked to sum to exactly 1.

    Attributes
    ----------
    outcomes : dict
        {outcome: exact probability}, in the system's order; with certified floats, a float
        inside each interval of ``intervals``.
    provenance : Provenance
        Where it came from.
    expectations : dict
        {name: exact expected value, None where play may never end}.
    words : dict
        Each outcome as a person reads it.
    intervals : dict or None
        Certified floats: name -> ``(low, high)`` holding the exact value.
    tolerance : float or None
        The widest interval asked for.
    charts : dict
        Pictures of it (`exactdice.tables.charts.Chart`), drawn from exact values.
    advice : list of str
        An optimal player's first choices in words.
    draws : dict or None
        The hands drawn (``player``, ``narrator``).
    detail : Any
        The library's own answer (a `exactdice.karbon.ContestOdds`).
    kind : str
        ``outcomes``.
    """

    outcomes: dict
    provenance: Provenance
    expectations: dict = field(default_factory=dict)
    words: dict = field(default_factory=dict)
    intervals: dict | None = None
    tolerance: float | None = None
    charts: dict = field(default_factory=dict)
    advice: list = field(default_factory=list)
    draws: dict | None = None
    detail: Any = field(default=None, repr=False)
    kind: str = "outcomes"

    def __post_init__(self):
        if self.intervals is None:
            total = sum(self.outcomes.values(), Fraction(0))
            if total != 1:
                raise ArithmeticError(f"the outcome probabilities sum to {total}, not exactly 1")

    @property
    def exact(self) -> bool:
        """True for exact fractions, False for certified floats."""
        return self.intervals is None

    def to_data(self) -> dict:
        """Plain data: ``outcomes`` as ``[outcome, p, words]`` rows in the system's order."""
        return {
            "kind": self.kind,
            "exact": self.exact,
            "outcomes": [[name, p, self.words.get(name, name)] for name, p in self.outcomes.items()],
            "expectations": dict(self.expectations),
            "intervals": None
            if self.intervals is None
            else {
                name: None if pair is None else [_exact(pair[0]), _exact(pair[1])]
                for name, pair in self.intervals.items()
            },
            "tolerance": _exact(self.tolerance),
            "draws": self.draws,
            "advice": list(self.advice),
            "charts": {name: chart_data(chart) for name, chart in self.charts.items()},
            "provenance": self.provenance.to_data(),
        }


@dataclass
class Bounds:
    """Certified bounds on what optimal play achieves.

    Attributes
    ----------
    objective : str
        What is bounded: P(win) or the expected score (win 1, tie 1/2).
    lower, upper : Fraction or float
        The returned strategy guarantees ``lower``; no play beats ``upper``.
    lower_kind : str
        ``exact`` (the strategy's exact value), else a sound float.
    precision : float
        The gap asked for.
    provenance : Provenance
        Where it came from.
    stopped : Stop or None
        Why the gap is above ``precision`` (None: it is within).
    strategy_outcomes : dict or None
        The strategy's exact odds against `against`, where its game was solved.
    against : str
        What the lower bound holds against, in words: the narrator's best reply (an
        optimal narrator) or its own play.
    fixed_value : Fraction or None
        The fixed preferences' exact value (where the search started).
    explored : int
        States the search explored.
    advice : list of str
        The strategy's first choices, with their bounds.
    draws : dict or None
        Explicit hands, where given.
    too_large : Stop or None
        Why the exact game was not solved.
    detail : Any
        The library's own answer (`exactdice.karbon.bounds.BoundedOdds`).
    kind : str
        ``bounds``.
    """

    objective: str
    lower: Fraction | float
    upper: float
    lower_kind: str
    precision: float
    provenance: Provenance
    stopped: Stop | None = None
    strategy_outcomes: dict | None = None
    against: str = "the narrator's best reply"
    fixed_value: Fraction | None = None
    explored: int = 0
    advice: list = field(default_factory=list)
    draws: dict | None = None
    too_large: Stop | None = None
    detail: Any = field(default=None, repr=False)
    kind: str = "bounds"

    @property
    def gap(self) -> float:
        """``upper - lower``."""
        return float(Fraction(self.upper) - Fraction(self.lower))

    @property
    def reached(self) -> bool:
        """Whether the gap is within the precision asked."""
        return self.gap <= self.precision

    def to_data(self) -> dict:
        """Plain data (the lower bound a `Fraction` where exact, else the float as a fraction)."""
        return {
            "kind": self.kind,
            "objective": self.objective,
            "lower": Fraction(self.lower),
            "upper": Fraction(self.upper),
            "lower_kind": self.lower_kind,
            "precision": _exact(self.precision),
            "reached": self.reached,
            "stopped": None if self.stopped is None else self.stopped.to_data(),
            "strategy_outcomes": self.strategy_outcomes,
            "against": self.against,
            "fixed_value": self.fixed_value,
            "explored": self.explored,
            "advice": list(self.advice),
            "draws": self.draws,
            "too_large": None if self.too_large is None else self.too_large.to_data(),
            "provenance": self.provenance.to_data(),
        }


@dataclass
class Validation:
    """Samples against the exact laws.

    Attributes
    ----------
    system : str
        The computation.
    headline : str
        The outcome column.
    reports : dict
        {column: `exactdice.validation.FitReport`}, the outcome column first, each tested
        at alpha / k for k columns.
    law : dict
        The outcome column's exact law.
    detail : Any
        Nothing more, for now.
    kind : str
        ``validation``.
    """

    system: str
    headline: str
    reports: dict
    law: dict
    detail: Any = field(default=None, repr=False)
    kind: str = "validation"

    @property
    def fits(self) -> bool:
        """Whether every column tested fits its law."""
        return all(report.fits for report in self.reports.values())

    def to_data(self) -> dict:
        """Plain data: each column's report as JSON, the law as ``[outcome, p]`` pairs."""
        return {
            "kind": self.kind,
            "system": self.system,
            "headline": self.headline,
            "fits": self.fits,
            "columns": {name: report.to_json() for name, report in self.reports.items()},
            "law": [[name, p] for name, p in self.law.items()],
        }
