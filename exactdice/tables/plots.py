"""PNG pictures: table heatmaps on a continuous colour scale, and dice distributions.

matplotlib draws floats, so every value here is converted at the display edge only; the
numbers printed in the cells come from the exact fractions (`exactdice.tables.export.cell_text`).

>>> from fractions import Fraction
>>> from exactdice.tables.grid import TableGrid
>>> grid = TableGrid("Karst death rolls: P(death)", "h", "aid", ["0"], ["0"],
...                  {"P(death)": [[Fraction(1, 3)]], "expected rounds": [[Fraction(2)]]})
>>> panel_title(grid, "expected rounds")
'expected rounds\\nKarst death rolls'
>>> heatmap_png([grid])[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io
import re
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.output_files import check_output_path, write_output

__all__ = ["heatmap_png", "panel_title", "plot_distribution", "distribution_png",
           "png_bytes", "PROBABILITY_COLOURS", "VALUE_COLOURS"]

#: matplotlib colour maps: probabilities on a fixed 0-100 % scale, other values on their own range
PROBABILITY_COLOURS = "viridis"
VALUE_COLOURS = "cividis"


def _figure(width, height):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def panel_title(grid, metric: str) -> str:
    """A panel's title: its own metric first, then the grid's title with every metric name taken out
    (a grid title such as "Karbon P(win): A x C" names only its headline metric)."""
    context = grid.title
    for name in grid.metrics:
        context = context.replace(name, "")
    context = re.sub(r"\s+([:,])", r"\1", context)
    context = re.sub(r"([:,])\s*([:,])", r"\1", context)
    context = re.sub(r"\s{2,}", " ", context).strip(" :,")
    return f"{metric}\n{context}" if context else metric


def _wrapped(title: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.fill(line, width) for line in title.splitlines())


def _text_colour(rgba) -> str:
    """Black or white, whichever reads better on a cell of this colour (relative luminance)."""
    red, green, blue = rgba[:3]
    return "black" if 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.45 else "white"


def heatmap_png(grids) -> bytes:
    """One heatmap panel per grid and metric, with each cell's value written in it.

    Probabilities share one continuous scale from 0 % to 100 % (so equal colours mean
    equal odds across panels); other metrics use a second colour map over their own range.
    A cell of certified bounds reads "lower-upper" and is coloured by its lower bound
    (the panel's title says so).
    """
    panels = [(grid, metric) for grid in grids for metric in grid.metrics]
    columns = min(len(panels), max(len(grid.metrics) for grid in grids), 2)
    rows = -(-len(panels) // columns)
    panel_width = max(4.0, 0.75 * max(len(grid.columns) for grid, _ in panels) + 2.5)
    if any(grid.has_bounds(metric) for grid, metric in panels):
        panel_width *= 1.6  # "lower-upper" is twice as wide as one value
    panel_height = max(3.0, 0.32 * max(len(grid.rows) for grid, _ in panels) + 1.9)
    figure = _figure(panel_width * columns, panel_height * rows)
    for index, (grid, metric) in enumerate(panels):
        _heatmap_panel(figure.add_subplot(rows, columns, index + 1), figure, grid, metric, panel_width)
    return png_bytes(figure)


def _colour_scale(numbers, is_probability: bool):
    """(colour map, norm): probabilities on 0-100 %, other values on their own range."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    if is_probability:
        return colormaps[PROBABILITY_COLOURS], Normalize(0.0, 1.0)
    present = [x for row in numbers for x in row if x == x]
    low, high = (min(present), max(present)) if present else (0.0, 1.0)
    return colormaps[VALUE_COLOURS], Normalize(low, high if high > low else low + 1)


def _heatmap_panel(axes, figure, grid, metric: str, panel_width: float) -> None:
    from exactdice.tables.export import cell_text, shading_value

    matrix = grid.metrics[metric]
    is_probability = grid.is_probability(metric)
    shades = [[shading_value(value) for value in row] for row in matrix]
    numbers = [[float("nan") if v is None else float(v) for v in row] for row in shades]
    colours, norm = _colour_scale(numbers, is_probability)
    image = axes.imshow(numbers, cmap=colours, norm=norm, aspect="auto")
    figure.colorbar(image, ax=axes, shrink=0.8,
                    format=(lambda x, _: f"{x:.0%}") if is_probability else None)
    long_labels = max(len(label) for label in grid.columns) > 4
    axes.set_xticks(range(len(grid.columns)), labels=grid.columns, fontsize=8,
                    rotation=35 if long_labels else 0, ha="right" if long_labels else "center",
                    rotation_mode="anchor")
    axes.set_yticks(range(len(grid.rows)), labels=grid.rows, fontsize=8)
    axes.set_xlabel(grid.column_label)
    axes.set_ylabel(grid.row_label)
    title = panel_title(grid, metric)
    if grid.has_bounds(metric):
        title += "\ncells: certified bounds lower-upper; colour: the lower bound"
    axes.set_title(_wrapped(title, int(panel_width * 11)), fontsize=9)
    font_size = 7 if len(grid.columns) <= 12 else 5.5
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            shade = shades[r][c]
            colour = "black" if shade is None else _text_colour(colours(norm(float(shade))))
            axes.text(c, r, cell_text(grid, metric, value), ha="center", va="center",
                      fontsize=font_size, color=colour)


def png_bytes(figure, **savefig_options) -> bytes:
    """*figure* as PNG bytes (without the matplotlib version, so the same chart gives the
    same bytes), to write with `exactdice.output_files.write_output`."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None}, **savefig_options)
    return buffer.getvalue()


def distribution_png(distribution, title: str) -> bytes:
    """A numeric distribution as bars of P(exactly x), with the "at least" and "at most"
    curves on the same 0-100 % axis (the view AnyDice shows).

    >>> from exactdice.core.distribution import d
    >>> distribution_png(d(6).sum_of(2), "2d6")[:4]
    b'\\x89PNG'
    """
    outcomes = list(distribution.probabilities())
    if not all(isinstance(outcome, (int, Fraction)) for outcome in outcomes):
        raise InputError("plot", "plots need numeric outcomes (this expression gives tuples)")
    probabilities = distribution.probabilities()
    at_least, at_most = distribution.survival(), distribution.cdf()
    xs = [float(outcome) for outcome in outcomes]
    figure = _figure(max(6.0, min(14.0, 0.12 * len(xs) + 5)), 4.2)
    axes = figure.add_subplot(1, 1, 1)
    axes.bar(xs, [float(probabilities[o]) * 100 for o in outcomes], width=0.8, color="#4c72b0",
             label="exactly x")
    curves = axes.twinx()
    curves.step(xs, [float(at_least[o]) * 100 for o in outcomes], where="mid", color="#dd8452",
                linewidth=2, label="at least x")
    curves.step(xs, [float(at_most[o]) * 100 for o in outcomes], where="mid", color="#55a868",
                linewidth=2, linestyle="--", label="at most x")
    curves.set_ylim(0, 102)
    curves.set_ylabel("at least / at most (%)")
    axes.set_ylim(0, max(float(p) for p in probabilities.values()) * 100 * 1.15)
    axes.set_ylabel("exactly x (%)")
    axes.set_xlabel("outcome x")
    mean = distribution.mean()
    axes.set_title(f"{title}: mean {float(mean):.4g}", fontsize=11, fontweight="bold")
    handles = axes.get_legend_handles_labels()
    more = curves.get_legend_handles_labels()
    axes.legend(handles[0] + more[0], handles[1] + more[1], loc="upper center", fontsize=8,
                bbox_to_anchor=(0.5, -0.13), ncol=3, frameon=False)
    if len(xs) <= 40:
        axes.set_xticks(xs, labels=[str(o) for o in outcomes], fontsize=7 if len(xs) > 20 else 8)
    return png_bytes(figure)


def plot_distribution(distribution, title: str, path, field: str = "plot") -> None:
    """Write `distribution_png` to ``path`` by `exactdice.output_files.write_output` (only a
    regular file; a path that cannot be written is an InputError)."""
    if not str(path).lower().endswith(".png"):
        raise InputError(field, f"writes PNG files; give a path ending in .png, got {path}")
    check_output_path(path, field)  # a device, FIFO or folder is refused before drawing
    write_output(path, distribution_png(distribution, title), field)
