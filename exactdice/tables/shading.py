"""How printed tables colour their cells: one continuous scale per panel, over its own range.

Every format that shades cells (the HTML page, the PDF, the PNG heatmap) asks
`panel_scale` for a panel's scale and uses the same colours:

* a probability panel with values on both sides of 50 % is **diverging around 50 %**:
  white at 50 %, red below, blue above, symmetric (equal distances from 50 % get equal
  depth), reaching full depth at the value farthest from 50 %;
* any other panel (probabilities all on one side of 50 %, expected rounds, ...) is
  **sequential over its own range**: lightest at its smallest value, darkest at its
  largest, so a panel spanning 4.9-21.6 % uses the whole scale.

The cell's text is black or white, whichever contrasts more with its fill (WCAG contrast
ratio, at least 4.5 on every shade: `contrast_ratio`). A cell of certified bounds is
shaded by its lower bound. The colours are computed from floats: display only, the
values themselves stay exact.

>>> from fractions import Fraction
>>> scale = PanelScale.over([Fraction(1, 20), Fraction(1, 5)], probability=True)
>>> scale.kind, scale.fill(Fraction(1, 5)), scale.text(Fraction(1, 5))
('sequential', '#08306b', '#ffffff')
>>> PanelScale.over([Fraction(2, 5), Fraction(7, 10)], probability=True).fill(Fraction(1, 2))
'#f6f7f7'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdice.core.exact import decimal_text

__all__ = [
    "PanelScale",
    "panel_scale",
    "contrast_ratio",
    "relative_luminance",
    "DIVERGING_COLOURS",
    "PROBABILITY_COLOURS",
    "VALUE_COLOURS",
]

#: matplotlib colour maps: diverging around 50 %, and sequential for probabilities and other values
DIVERGING_COLOURS = "RdBu"
PROBABILITY_COLOURS = "Blues"
VALUE_COLOURS = "Purples"
#: the part of a sequential colour map in use: its first shade is nearly the paper's white
_SEQUENTIAL_SPAN = (0.08, 1.0)
_HALF = Fraction(1, 2)


@dataclass(frozen=True)
class PanelScale:
    """A panel's colour scale: ``kind`` "diverging" (around 50 %) or "sequential", the
    matplotlib colour map, and the values at its two ends (``low`` lightest or reddest)."""

    kind: str
    colour_map: str
    low: Fraction
    high: Fraction
    probability: bool
    empty: bool = False  # no cell has a value

    @classmethod
    def over(cls, values, probability: bool) -> "PanelScale":
        """The scale of a panel holding ``values`` (exact; None cells left out)."""
        present = [Fraction(value) for value in values if value is not None]
        low, high = (min(present), max(present)) if present else (Fraction(0), Fraction(0))
        if probability and low < _HALF < high:
            reach = max(_HALF - low, high - _HALF)
            return cls("diverging", DIVERGING_COLOURS, _HALF - reach, _HALF + reach, True)
        return cls(
            "sequential",
            PROBABILITY_COLOURS if probability else VALUE_COLOURS,
            low,
            high,
            probability,
            empty=not present,
        )

    def position(self, value) -> float:
        """Where ``value`` falls on the colour map, 0.0-1.0."""
        if self.high == self.low:
            return _SEQUENTIAL_SPAN[0] if self.kind == "sequential" else 0.5
        share = min(max(float((Fraction(value) - self.low) / (self.high - self.low)), 0.0), 1.0)
        if self.kind == "diverging":
            return share
        start, end = _SEQUENTIAL_SPAN
        return start + share * (end - start)

    def rgb(self, value) -> tuple[float, float, float]:
        """The fill of a cell holding ``value`` as (red, green, blue), each 0.0-1.0."""
        from matplotlib import colormaps

        return tuple(float(channel) for channel in colormaps[self.colour_map](self.position(value))[:3])

    def fill(self, value) -> str:
        """The fill of a cell holding ``value``, as ``#rrggbb``."""
        return "#" + "".join(f"{round(channel * 255):02x}" for channel in self.rgb(value))

    def text(self, value) -> str:
        """Black or white, whichever reads better on this cell's fill."""
        fill = self.rgb(value)
        return "#000000" if contrast_ratio(fill, (0, 0, 0)) >= contrast_ratio(fill, (1, 1, 1)) else "#ffffff"

    def range_text(self) -> str:
        """What a panel's title adds when its scale has no range ("" when it has one)."""
        if self.empty:
            return "no cell has a value"
        return f"every cell {self.end_text(self.low)}" if self.low == self.high else ""

    def end_text(self, value) -> str:
        """A value at one end of the scale, as the panel prints it."""
        if self.probability:
            return decimal_text(value * 100, 1) + "%"
        return decimal_text(value, 2)

    def legend(self) -> str:
        """One sentence saying how the panel is coloured.

        >>> PanelScale.over([Fraction(2, 5), Fraction(7, 10)], probability=True).legend()
        'Colour: diverging around 50% (white): red below, blue above, full depth at 30.0% and 70.0%.'
        """
        if self.empty:
            return "No cell has a value."
        if self.kind == "diverging":
            return (
                f"Colour: diverging around 50% (white): red below, blue above, full depth at "
                f"{self.end_text(self.low)} and {self.end_text(self.high)}."
            )
        if self.low == self.high:
            return f"Colour: every cell is {self.end_text(self.low)}."
        return (
            f"Colour: continuous over this table's own range, lightest at {self.end_text(self.low)}, "
            f"darkest at {self.end_text(self.high)}."
        )

    def samples(self, count: int = 9) -> list[tuple[Fraction, str]]:
        """``count`` evenly spaced values from ``low`` to ``high`` with their fills (a key;
        one value when the two are equal, none when no cell has a value)."""
        if self.empty:
            return []
        if self.low == self.high:
            return [(self.low, self.fill(self.low))]
        steps = max(count - 1, 1)
        values = [self.low + (self.high - self.low) * Fraction(step, steps) for step in range(steps + 1)]
        return [(value, self.fill(value)) for value in values]


def panel_scale(grid, metric: str) -> PanelScale:
    """The scale of one panel of a `TableGrid` (bounds shaded by their lower end)."""
    from exactdice.tables.export import shading_value

    probability = grid.is_probability(metric)
    values = [shading_value(value, probability) for row in grid.metrics[metric] for value in row]
    return PanelScale.over(values, probability)


def relative_luminance(rgb) -> float:
    """WCAG 2 relative luminance of an sRGB colour given as channels 0.0-1.0."""

    def linear(channel):
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(channel) for channel in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(first, second) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; 4.5 is the bar for small text).

    >>> round(contrast_ratio((0, 0, 0), (1, 1, 1)), 1)
    21.0
    """
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
