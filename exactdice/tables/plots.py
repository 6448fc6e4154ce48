"""PNG pictures: table heatmaps, each panel on its own continuous colour scale, and dice distributions.

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
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.output_files import check_output_path, write_output

__all__ = ["heatmap_png", "panel_title", "plot_distribution", "distribution_png", "png_bytes"]


def _figure(width, height):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def panel_title(grid, metric: str) -> str:
    """A panel's title: its own metric first, then the grid's title with every metric name
    taken out (`exactdice.tables.export.title_without_metrics`)."""
    from exactdice.tables.export import title_without_metrics

    context = title_without_metrics(grid)
    return f"{metric}\n{context}" if context else metric


def _wrapped(title: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.fill(line, width) for line in title.splitlines())


def heatmap_png(grids) -> bytes:
    """One heatmap panel per grid and metric, with each cell's value written in it.

    Each panel is coloured on its own continuous scale (`exactdice.tables.shading`):
    diverging around 50 % for a probability panel with values on both sides of it,
    else from its smallest value (lightest) to its largest (darkest); the colour bar's
    label says which. Numbers are black or white, whichever reads better on the cell.
    A cell of certified bounds reads "lower-upper" and is coloured by its lower bound
    (the panel's title says so).
    """
    panels = [(grid, metric) for grid in grids for metric in grid.metrics]
    columns = min(len(panels), max(len(grid.metrics) for grid in grids), 2)
    rows = -(-len(panels) // columns)
    panel_width = max(4.5, 0.8 * max(len(grid.columns) for grid, _ in panels) + 2.8)
    if any(grid.has_bounds(metric) for grid, metric in panels):
        panel_width *= 1.6  # "lower-upper" is twice as wide as one value
    panel_height = max(3.2, 0.36 * max(len(grid.rows) for grid, _ in panels) + 2.0)
    figure = _figure(panel_width * columns, panel_height * rows)
    for index, (grid, metric) in enumerate(panels):
        _heatmap_panel(figure.add_subplot(rows, columns, index + 1), figure, grid, metric, panel_width)
    return png_bytes(figure)


def _scale_bar(figure, axes, scale) -> None:
    """The panel's colour bar, labelled with the kind of scale (none when every cell is equal)."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize

    if scale.low == scale.high:
        return
    steps = 256
    values = [scale.low + (scale.high - scale.low) * Fraction(step, steps - 1) for step in range(steps)]
    mappable = ScalarMappable(
        Normalize(float(scale.low), float(scale.high)), ListedColormap([scale.rgb(value) for value in values])
    )
    bar = figure.colorbar(
        mappable, ax=axes, shrink=0.85, format=(lambda x, _: f"{x:.0%}") if scale.probability else None
    )
    bar.set_label("diverging around 50%" if scale.kind == "diverging" else "this panel's own range", fontsize=8)
    bar.ax.tick_params(labelsize=8)


def _heatmap_panel(axes, figure, grid, metric: str, panel_width: float) -> None:
    from exactdice.tables.export import cell_text, shading_value
    from exactdice.tables.shading import panel_scale

    matrix = grid.metrics[metric]
    scale = panel_scale(grid, metric)
    shades = [[shading_value(value, scale.probability) for value in row] for row in matrix]
    colours = [[(1.0, 1.0, 1.0) if shade is None else scale.rgb(shade) for shade in row] for row in shades]
    axes.imshow(colours, aspect="auto")
    _scale_bar(figure, axes, scale)
    long_labels = max(len(label) for label in grid.columns) > 4
    axes.set_xticks(
        range(len(grid.columns)),
        labels=grid.columns,
        fontsize=8,
        rotation=35 if long_labels else 0,
        ha="right" if long_labels else "center",
        rotation_mode="anchor",
    )
    axes.set_yticks(range(len(grid.rows)), labels=grid.rows, fontsize=8)
    axes.set_xlabel(grid.column_label)
    axes.set_ylabel(grid.row_label)
    title = panel_title(grid, metric)
    if grid.has_bounds(metric):
        title += "\ncells: certified bounds lower-upper; colour: the lower bound"
    if scale.range_text():
        title += f"\n({scale.range_text()})"
    axes.set_title(_wrapped(title, int(panel_width * 11)), fontsize=9)
    font_size = 8.5 if len(grid.columns) <= 12 else 6.5
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            shade = shades[r][c]
            axes.text(
                c,
                r,
                cell_text(grid, metric, value),
                ha="center",
                va="center",
                fontsize=font_size,
                color="black" if shade is None else scale.text(shade),
                fontweight="bold" if scale.probability and shade is not None and shade >= Fraction(1, 2) else "normal",
            )


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
    axes.bar(xs, [float(probabilities[o]) * 100 for o in outcomes], width=0.8, color="#4c72b0", label="exactly x")
    curves = axes.twinx()
    curves.step(
        xs, [float(at_least[o]) * 100 for o in outcomes], where="mid", color="#dd8452", linewidth=2, label="at least x"
    )
    curves.step(
        xs,
        [float(at_most[o]) * 100 for o in outcomes],
        where="mid",
        color="#55a868",
        linewidth=2,
        linestyle="--",
        label="at most x",
    )
    curves.set_ylim(0, 102)
    curves.set_ylabel("at least / at most (%)")
    axes.set_ylim(0, max(float(p) for p in probabilities.values()) * 100 * 1.15)
    axes.set_ylabel("exactly x (%)")
    axes.set_xlabel("outcome x")
    mean = distribution.mean()
    axes.set_title(f"{title}: mean {float(mean):.4g}", fontsize=11, fontweight="bold")
    handles = axes.get_legend_handles_labels()
    more = curves.get_legend_handles_labels()
    axes.legend(
        handles[0] + more[0],
        handles[1] + more[1],
        loc="upper center",
        fontsize=8,
        bbox_to_anchor=(0.5, -0.13),
        ncol=3,
        frameon=False,
    )
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
