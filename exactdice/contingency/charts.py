"""Contingency's picture: a skill check's chance against difficulty.

>>> from exactdice.contingency.check import skill_check, solve_check
>>> chart = success_chart(solve_check(skill_check([6, 8, 10], difficulty=6)))
>>> chart.curves[0].points()[5], chart.marked_x
((6, Fraction(13, 48)), 6)
"""

from __future__ import annotations

from exactdice.contingency.tables import NAMED_DIFFICULTIES
from exactdice.tables.charts import Chart, Curve

__all__ = ["success_chart"]


def success_chart(solution) -> Chart:
    """P(success) and P(success, a condition allowed) at every difficulty of a solved check
    (`exactdice.contingency.check.CheckSolution`), its own difficulty marked; the named
    difficulties are labelled by name."""
    levels = tuple(solution.p_at_least)
    curves = (
        Curve("success", levels, tuple(solution.p_at_least[level] for level in levels)),
        Curve(
            "success, a condition allowed", levels, tuple(solution.p_at_least_with_condition[level] for level in levels)
        ),
    )
    labels = {level: f"{level} {name}" for level, name in NAMED_DIFFICULTIES.items() if level in levels}
    return Chart(
        f"Contingency check: {solution.check.describe()}",
        "difficulty",
        "P(success)",
        curves,
        marked_x=solution.check.difficulty,
        marked_label="asked",
        labels=labels,
        note=f"Exact values; rules: {solution.rules.describe()}.",
    )
