"""`TableGrid`: the data of one printable table, independent of any format.

A grid has row and column labels (two setup axes) and one or more *metrics*, each a
matrix of exact values (`Fraction`, or None where a cell does not apply). The first
metric is the headline (P(win), P(success), ...). The legend records the ruleset,
policies and anything else a reader needs to trust the numbers.

>>> from fractions import Fraction
>>> grid = TableGrid(title="demo", row_label="A", column_label="C", rows=["1"],
...                  columns=["1", "2"], metrics={"P(win)": [[Fraction(1, 2), None]]})
>>> grid.cell("P(win)", 0, 0)
Fraction(1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["TableGrid"]


@dataclass(frozen=True)
class TableGrid:
    """One table: ``metrics[name][row][column]`` is an exact value or None."""

    title: str
    row_label: str
    column_label: str
    rows: list[str]
    columns: list[str]
    metrics: dict[str, list[list[Fraction | None]]]
    legend: dict[str, str] = field(default_factory=dict)
    # metrics that are probabilities (shown as percentages); others (expected rounds) as numbers
    probability_metrics: tuple[str, ...] | None = None

    def __post_init__(self):
        for name, matrix in self.metrics.items():
            if len(matrix) != len(self.rows) or any(len(row) != len(self.columns) for row in matrix):
                raise ValueError(f"metric {name!r} must be {len(self.rows)} x {len(self.columns)}")

    def cell(self, metric: str, row: int, column: int) -> Fraction | None:
        """The exact value of one cell."""
        return self.metrics[metric][row][column]

    def is_probability(self, metric: str) -> bool:
        """True when the metric is a probability (shown as a percentage)."""
        if self.probability_metrics is None:
            return metric.startswith("P(")
        return metric in self.probability_metrics
