"""`TableGrid`: the data of one printable table, independent of any format.

A grid has row and column labels (two setup axes) and one or more *metrics*, each a
matrix of exact values (`Fraction`, or None where a cell does not apply, or `Bounds`
where only certified bounds are known, as for optimal play past exact reach). The first
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

__all__ = ["TableGrid", "Bounds", "cell_to_data", "cell_from_data"]


@dataclass(frozen=True)
class Bounds:
    """A cell known only to lie in ``[lower, upper]``: certified bounds, both exact rationals
    (a float bound is kept as the exact value of that float).

    >>> cell = Bounds(Fraction(1, 4), Fraction(1, 2))
    >>> cell.gap, cell.midpoint
    (Fraction(1, 4), Fraction(3, 8))
    """

    lower: Fraction
    upper: Fraction

    def __post_init__(self):
        lower, upper = Fraction(self.lower), Fraction(self.upper)
        if lower > upper:
            raise ValueError(f"bounds need lower <= upper, got [{lower}, {upper}]")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @property
    def gap(self) -> Fraction:
        return self.upper - self.lower

    @property
    def midpoint(self) -> Fraction:
        return (self.lower + self.upper) / 2


def cell_to_data(value):
    """A cell as JSON-ready data: ``"p/q"``, ``{"lower": "p/q", "upper": "r/s"}`` or None.

    >>> cell_to_data(Fraction(1, 2)), cell_to_data(Bounds(0, Fraction(1, 3)))
    ('1/2', {'lower': '0', 'upper': '1/3'})
    """
    from exactdice.core.exact import fraction_text

    if value is None:
        return None
    if isinstance(value, Bounds):
        return {"lower": fraction_text(value.lower), "upper": fraction_text(value.upper)}
    return fraction_text(value)


def cell_from_data(data):
    """The inverse of `cell_to_data`.

    >>> cell_from_data({"lower": "0", "upper": "1/3"}), cell_from_data("1/2")
    (Bounds(lower=Fraction(0, 1), upper=Fraction(1, 3)), Fraction(1, 2))
    """
    if data is None:
        return None
    if isinstance(data, dict):
        return Bounds(Fraction(data["lower"]), Fraction(data["upper"]))
    return Fraction(data)


@dataclass(frozen=True)
class TableGrid:
    """One table: ``metrics[name][row][column]`` is an exact value, `Bounds` or None.

    Parameters
    ----------
    title : str
        The table's title.
    row_label, column_label : str
        The axes' names.
    rows, columns : list of str
        The axes' values as printed.
    metrics : dict of str to list of list
        Metric name -> its grid of cells (a `fractions.Fraction`, certified `Bounds`, or
        None for no value); the first metric is the headline.
    legend : dict of str to str, optional
        What was held fixed, printed with the table.
    probability_metrics : tuple of str, optional
        The metrics shown as percentages (default: names starting with ``P(``); the others
        (expected rounds) print as numbers.

    Raises
    ------
    ValueError
        A metric's grid whose shape is not rows x columns.
    """

    title: str
    row_label: str
    column_label: str
    rows: list[str]
    columns: list[str]
    metrics: dict[str, list[list[Fraction | Bounds | None]]]
    legend: dict[str, str] = field(default_factory=dict)
    # metrics that are probabilities (shown as percentages); others (expected rounds) as numbers
    probability_metrics: tuple[str, ...] | None = None

    def __post_init__(self):
        for name, matrix in self.metrics.items():
            if len(matrix) != len(self.rows) or any(len(row) != len(self.columns) for row in matrix):
                raise ValueError(f"metric {name!r} must be {len(self.rows)} x {len(self.columns)}")

    def cell(self, metric: str, row: int, column: int) -> Fraction | Bounds | None:
        """The exact value of one cell."""
        return self.metrics[metric][row][column]

    def to_dict(self) -> dict:
        """The grid as JSON-ready data, exact values as ``"p/q"`` strings (inverse: `from_dict`).

        Metrics and legend are lists, so their order survives a JSON round trip with sorted keys.

        >>> TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 2)]]}).to_dict()["metrics"]
        [{'name': 'P(win)', 'values': [['1/2']]}]
        """
        return {
            "title": self.title,
            "row_label": self.row_label,
            "column_label": self.column_label,
            "rows": list(self.rows),
            "columns": list(self.columns),
            "metrics": [
                {"name": name, "values": [[cell_to_data(value) for value in row] for row in matrix]}
                for name, matrix in self.metrics.items()
            ],
            "legend": [[str(key), str(value)] for key, value in self.legend.items()],
            "probability_metrics": (None if self.probability_metrics is None else list(self.probability_metrics)),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TableGrid":
        """Rebuild a grid from `to_dict` output.

        >>> grid = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 2)]]})
        >>> TableGrid.from_dict(grid.to_dict()) == grid
        True
        """
        probability_metrics = data.get("probability_metrics")
        return cls(
            title=data["title"],
            row_label=data["row_label"],
            column_label=data["column_label"],
            rows=list(data["rows"]),
            columns=list(data["columns"]),
            metrics={
                metric["name"]: [[cell_from_data(value) for value in row] for row in metric["values"]]
                for metric in data["metrics"]
            },
            legend={key: value for key, value in data.get("legend", [])},
            probability_metrics=None if probability_metrics is None else tuple(probability_metrics),
        )

    def is_probability(self, metric: str) -> bool:
        """True when the metric is a probability (shown as a percentage)."""
        if self.probability_metrics is None:
            return metric.startswith("P(")
        return metric in self.probability_metrics

    def has_bounds(self, metric: str | None = None) -> bool:
        """True when a cell (of ``metric``, or of any metric) holds `Bounds`."""
        names = self.metrics if metric is None else [metric]
        return any(isinstance(value, Bounds) for name in names for row in self.metrics[name] for value in row)
