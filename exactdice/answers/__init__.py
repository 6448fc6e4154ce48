"""One library entry point per request: what the command line and the web page both call.

Each takes the parameters by their registry names (`exactdice.systems`), the limits among
them, and a ``progress`` callback (`exactdice.progress`); each decides how to answer (exact,
certified floats, certified bounds) and returns one shape per kind of answer
(`exactdice.answers.shapes`). Errors and stop reasons name parameters, never flags: the
command line shows its flags, the page its labels.

=========================  ==========================================================
request                    entry point
=========================  ==========================================================
a Karbon contest's odds    `karbon_odds` -> `Outcomes` or `Bounds`
optimal play's bounds      `karbon_bounds` -> `Bounds`
a Karbon table             `karbon_table` -> `exactdice.tables.grid.TableGrid`
what moves P(win)          `karbon_what_if` (the strip), `karbon_sensitivity` (every change)
a designer's target        `design` -> `exactdice.design.DesignResult`
any system's answer        `system_answer` -> `Outcomes`
samples against the law    `validate_samples` -> `Validation`
=========================  ==========================================================

>>> from exactdice.answers import system_answer
>>> system_answer("karst-death", {"negative_health": 2}).outcomes
{'death': Fraction(3, 4), 'stable': Fraction(1, 4)}
"""

from __future__ import annotations

from importlib import import_module

from exactdice.answers.shapes import Bounds, Outcomes, Provenance, Stop, Validation, chart_data

__all__ = [
    "karbon_odds",
    "karbon_bounds",
    "karbon_table",
    "karbon_what_if",
    "karbon_sensitivity",
    "design",
    "system_answer",
    "validate_samples",
    "computations",
    "Outcomes",
    "Bounds",
    "Validation",
    "Provenance",
    "Stop",
    "chart_data",
]

_ENTRY_POINTS = {
    "karbon_odds": "exactdice.answers.karbon",
    "karbon_bounds": "exactdice.answers.karbon",
    "karbon_table": "exactdice.answers.tables",
    "karbon_what_if": "exactdice.answers.tables",
    "karbon_sensitivity": "exactdice.answers.tables",
    "design": "exactdice.answers.tables",
    "system_answer": "exactdice.answers.systems",
    "validate_samples": "exactdice.answers.systems",
    "computations": "exactdice.answers.systems",
}


def __getattr__(name):  # the entry points' modules load on first use
    if name in _ENTRY_POINTS:
        return getattr(import_module(_ENTRY_POINTS[name]), name)
    raise AttributeError(f"module 'exactdice.answers' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
