"""Karst's picture: an attack's chance to hit against the target's defense.

>>> chart = hit_chart(modifier=3, defense=12)
>>> chart.curves[0].points()[0], chart.curves[0].points()[-1], chart.marked_x
((4, Fraction(19, 20)), (24, Fraction(1, 20)), 12)
"""

from __future__ import annotations

from exactdice.karst.rolls import attack_hit
from exactdice.tables.charts import Chart, Curve

__all__ = ["hit_chart"]


def hit_chart(modifier: int, defense: int | None = None) -> Chart:
    """P(hit) of d20 + ``modifier`` at every defense where it changes (from where only a
    natural 1 misses to where only a natural 20 hits), ``defense`` marked and included."""
    low, high = modifier + 1, modifier + 21
    if defense is not None:
        low, high = min(low, defense), max(high, defense)
    defenses = tuple(range(low, high + 1))
    curve = Curve(f"d20{modifier:+d}", defenses, tuple(attack_hit(modifier, value) for value in defenses))
    return Chart(
        f"Karst attack d20{modifier:+d}: P(hit) by defense",
        "defense",
        "P(hit)",
        (curve,),
        marked_x=defense,
        marked_label="asked",
        note="Exact values: a natural 20 always hits, a natural 1 always misses.",
    )
