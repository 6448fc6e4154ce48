"""Small line charts of exact values: a check's chance by difficulty, a contest's length,
P(win) against a varied parameter.

A `Chart` holds the exact values it shows (`Fraction`s, probabilities unless said
otherwise), so a program (or a test, or the web page) reads what a picture was drawn
from; `chart_png` draws one chart and `charts_png` several side by side (small multiples,
sharing the y axis). matplotlib draws floats: values are converted at that edge only.

>>> from fractions import Fraction
>>> chart = Chart("d6 >= x", "x", "P(success)", (Curve("d6", (1, 2, 3), (1, Fraction(5, 6), Fraction(2, 3))),))
>>> chart.curves[0].points()[1]
(2, Fraction(5, 6))
>>> chart_png(chart)[:4]
b'\\x89PNG'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.output_files import check_output_path, write_output
from exactdice.tables.plots import png_bytes

__all__ = ["Curve", "Chart", "chart_png", "charts_png", "draw_chart", "check_png_path", "write_chart_png"]

_COLOURS = ("#1f5fa8", "#c8553d", "#4f8a3c", "#7b4ea3", "#a3862e")
_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)))


@dataclass(frozen=True)
class Curve:
    """One line: ``ys[i]`` is the exact value at ``xs[i]``; ``colour`` (a CSS colour, "#27ae60")
    where the line stands for something with a colour of its own (an outcome's, as its bar
    has), else the chart's palette picks one."""

    label: str
    xs: tuple
    ys: tuple
    colour: str | None = None

    def __post_init__(self):
        if len(self.xs) != len(self.ys):
            raise ValueError(f"curve {self.label!r}: {len(self.xs)} x values but {len(self.ys)} y values")
        object.__setattr__(self, "xs", tuple(self.xs))
        object.__setattr__(self, "ys", tuple(Fraction(y) for y in self.ys))

    def points(self) -> list[tuple]:
        """``[(x, exact y)]``."""
        return list(zip(self.xs, self.ys))


@dataclass(frozen=True)
class Chart:
    """What one chart shows: curves over one x axis, an optional marked x (the value asked
    about) and a note under the chart (a tail mass, what was held fixed)."""

    title: str
    x_label: str
    y_label: str
    curves: tuple
    marked_x: object = None
    marked_label: str = ""  # what the marked x is ("asked", "base")
    note: str = ""
    probability: bool = True
    steps: bool = False  # draw as steps (a value that holds until the next x)
    full_scale: bool = True  # a probability's axis from 0 to 100 %; else from 0 to a little above the largest
    label_points: bool = False  # write each point's value beside it
    labels: dict = field(default_factory=dict)  # x -> tick label, where x alone does not say it

    def __post_init__(self):
        object.__setattr__(self, "curves", tuple(self.curves))


def _figure(width: float, height: float):
    from exactdice.tables.plots import _figure as figure

    return figure(width, height)


def _value_text(value, probability: bool) -> str:
    from exactdice.core.display import percent_text, significant_text

    return percent_text(value) if probability else significant_text(value)


def draw_chart(axes, chart: Chart, *, y_label: bool = True) -> None:
    """One chart on ``axes``: each curve with points, the marked x, percent axis for probabilities."""
    for index, curve in enumerate(chart.curves):
        _draw_curve(axes, chart, curve, index)
    if chart.marked_x is not None:
        _mark(axes, chart)
    if chart.probability and chart.full_scale:
        axes.set_ylim(-2, 102)
    elif chart.probability:
        highest = max(float(y) for curve in chart.curves for y in curve.ys) * 100
        axes.set_ylim(0, max(axes.get_ylim()[1], min(102.0, highest * 1.25 + 2)))
    axes.grid(True, color="#dddddd", linewidth=0.6)
    axes.set_xlabel(chart.x_label, fontsize=9)
    if y_label:
        axes.set_ylabel(chart.y_label + (" (%)" if chart.probability else ""), fontsize=9)
    _x_ticks(axes, chart)
    axes.tick_params(labelsize=8)
    if len(chart.curves) > 1:
        axes.legend(fontsize=8, frameon=False)


def _draw_curve(axes, chart: Chart, curve: Curve, index: int) -> None:
    """One curve (percentages for probabilities), each point's value beside it when asked."""
    scale = 100 if chart.probability else 1
    xs = [float(x) for x in curve.xs]
    ys = [float(y) * scale for y in curve.ys]
    options = dict(
        color=curve.colour or _COLOURS[index % len(_COLOURS)],
        linestyle=_STYLES[index % len(_STYLES)],
        linewidth=2,
        label=curve.label,
    )
    if chart.steps:
        axes.step(xs, ys, where="post", **options)
    else:
        axes.plot(xs, ys, marker="o", markersize=4, **options)
    if chart.label_points:
        for x, y, exact in zip(xs, ys, curve.ys):
            axes.annotate(
                _value_text(exact, chart.probability),
                (x, y),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=7,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"},
            )
        axes.margins(x=0.22)


def _mark(axes, chart: Chart) -> None:
    """A dotted line at the marked x, with what it is at its top."""
    axes.axvline(float(chart.marked_x), color="#444444", linewidth=1, linestyle=":")
    if chart.marked_label:
        axes.annotate(
            chart.marked_label,
            (float(chart.marked_x), 1),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=7,
            color="#444444",
        )


def _x_ticks(axes, chart: Chart) -> None:
    """A tick at every whole x (when there are few), labelled by ``chart.labels`` where given."""
    xs = sorted({x for curve in chart.curves for x in curve.xs})
    if xs and len(xs) <= 25 and all(float(x).is_integer() for x in xs):
        axes.set_xticks(
            [float(x) for x in xs],
            labels=[chart.labels.get(x, str(x)) for x in xs],
            fontsize=8,
            rotation=30 if chart.labels else 0,
            ha="right" if chart.labels else "center",
        )


def chart_png(chart: Chart, width: float = 7.0, height: float = 4.2) -> bytes:
    """One chart as PNG bytes, its note under it."""
    figure = _figure(width, height)
    axes = figure.add_subplot(1, 1, 1)
    draw_chart(axes, chart)
    axes.set_title(chart.title, fontsize=10, fontweight="bold")
    if chart.note:
        figure.text(0.5, 0.005, chart.note, ha="center", va="bottom", fontsize=8, wrap=True)
        figure.get_layout_engine().set(rect=(0, 0.06, 1, 0.94))
    return png_bytes(figure)


def charts_png(charts, title: str, note: str = "", columns: int = 3) -> bytes:
    """Several charts side by side (rows of ``columns``), one title and one note for all."""
    charts = list(charts)
    if not charts:
        raise InputError("charts", "nothing to draw")
    columns = min(columns, len(charts))
    rows = -(-len(charts) // columns)
    figure = _figure(3.3 * columns, 2.8 * rows + 0.9)
    first = None
    for index, chart in enumerate(charts):
        axes = figure.add_subplot(rows, columns, index + 1, sharey=first)
        first = first or axes
        draw_chart(axes, chart, y_label=index % columns == 0)
        axes.set_title(chart.title, fontsize=9)
    figure.suptitle(title, fontsize=10, fontweight="bold")
    if note:
        figure.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=8, wrap=True)
        figure.get_layout_engine().set(rect=(0, 0.05, 1, 0.95))
    return png_bytes(figure)


def check_png_path(path, field: str = "plot") -> None:
    """Refuse, before any work, a path a chart cannot be written to: one that does not end
    in .png, a folder, a device (an `InputError` naming ``field``)."""
    if not str(path).lower().endswith(".png"):
        raise InputError(field, f"the chart is a PNG: give a path ending in .png, got {path}")
    check_output_path(path, field)


def write_chart_png(picture: bytes, path, field: str = "plot") -> None:
    """Write a chart's PNG bytes to ``path`` (`check_png_path` first)."""
    check_png_path(path, field)
    write_output(path, picture, field)
