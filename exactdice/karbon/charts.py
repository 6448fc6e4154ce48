"""Karbon's pictures: what moves the odds (a what-if strip and a tornado), and how long a
contest lasts.

Each picture is built from exact values the library computed (`exactdice.tables.charts.Chart`
holds them), so a program reads what a picture shows:

* `what_if_charts`: P(win) (or another metric) against each stepped setup parameter
  (Ability, Challenge, Consequence W, Peril P, Fortune F, Fallout K) one step down, at the
  base and one step up, from a `exactdice.karbon.sensitivity.SensitivityReport`;
* `sensitivity_png`: those charts in a row above the tornado of every change's effect;
* `length_chart`: P(the contest has ended by round n) from `exactdice.karbon.length`.
"""

from __future__ import annotations

from exactdice.core.display import percent_text
from exactdice.tables.charts import Chart, Curve, draw_chart

__all__ = ["what_if_charts", "sensitivity_png", "length_chart", "STEPPED_LABELS"]

#: setup parameter -> its name on a chart, in the order the charts are drawn
STEPPED_LABELS = {
    "ability": "Ability",
    "challenge": "Challenge",
    "consequence": "Consequence W",
    "peril": "Peril P",
    "fortune": "Fortune F",
    "fallout": "Fallout K",
}
#: the outcome bars' colours on the page (``static/style.css``), so a curve and its bar match
OUTCOME_COLOURS = {"win": "#27ae60", "loss": "#c0392b", "tie": "#f39c12", "any": "#1f5fa8"}
_GROUP_COLOURS = {"setup": "#1f77b4", "rule": "#d62728", "player": "#2ca02c", "narrator": "#9467bd"}


def what_if_charts(report, metric: str = "P(win)") -> list[Chart]:
    """One chart per stepped setup parameter with at least one neighbour solved: *metric*
    at the base value and at each step that was solved, each point labelled with its value
    (a step below the parameter's least value does not exist; one the setup could not take,
    or past the state budget, is said in the chart's note)."""
    from exactdice.karbon.sensitivity import STEPPED_LEAST

    probability = metric != "expected rounds"
    charts = []
    for parameter, label in STEPPED_LABELS.items():
        base_value = report.base[parameter]
        points = {base_value: report.base_values[metric]}
        for row in report.rows:
            if row.setting and row.setting[0] == parameter and row.values[metric] is not None:
                points[row.setting[1]] = row.values[metric]
        if len(points) < 2:
            continue
        xs = tuple(sorted(points))
        missing = [
            str(base_value + step)
            for step in (-1, 1)
            if base_value + step not in points and base_value + step >= STEPPED_LEAST[parameter]
        ]
        charts.append(
            Chart(
                label,
                "",
                metric,
                (Curve(metric, xs, tuple(points[x] for x in xs)),),
                marked_x=base_value,
                marked_label="base",
                probability=probability,
                full_scale=False,
                label_points=True,
                note=f"{', '.join(missing)}: not solved" if missing else "",
            )
        )
    return charts


def _base_text(report) -> str:
    base = report.base
    return (
        f"A{base['ability']} C{base['challenge']} W{base['consequence']} P{base['peril']} "
        f"F{base['fortune']} K{base['fallout']}{' Training' if base['training'] else ''}"
    )


def sensitivity_png(report, *, metric: str = "P(win)", top: int = 25) -> bytes:
    """The what-if strip (`what_if_charts`, the base marked by a dotted line) above the
    tornado: the change of *metric* for the *top* changes that move it most, largest at
    the top; changes of exactly zero are left out and counted under it."""
    from matplotlib.gridspec import GridSpec

    from exactdice.tables.plots import _figure, png_bytes

    strip = what_if_charts(report, metric)
    moving = [row for row in report.rows if row.deltas[metric] is not None and row.deltas[metric] != 0]
    rows = sorted(moving, key=lambda row: (-abs(row.deltas[metric]), row.name))[:top]
    strip_height, tornado_height = (2.6 if strip else 0.0), 1.4 + 0.3 * max(1, len(rows))
    figure = _figure(11, strip_height + tornado_height)
    grid = GridSpec(
        2 if strip else 1,
        max(len(strip), 1),
        figure=figure,
        height_ratios=[strip_height, tornado_height] if strip else [1],
    )
    first = None
    for index, chart in enumerate(strip):
        axes = figure.add_subplot(grid[0, index], sharey=first)
        first = first or axes
        draw_chart(axes, chart, y_label=index == 0)
        axes.set_title(chart.title + (f"\n({chart.note})" if chart.note else ""), fontsize=9)
    _tornado(figure.add_subplot(grid[-1, :]), report, metric, rows)
    figure.suptitle(f"Karbon, what moves {metric}: {_base_text(report)}", fontsize=11, fontweight="bold")
    return png_bytes(figure, dpi=110)


def _tornado(axes, report, metric: str, rows) -> None:
    """Horizontal bars of each change's effect on *metric*, coloured by the kind of change."""
    from matplotlib.patches import Rectangle

    unchanged = sum(1 for row in report.rows if row.deltas[metric] == 0)
    scale = 1 if metric == "expected rounds" else 100
    axes.barh(
        range(len(rows)),
        [scale * float(row.deltas[metric]) for row in rows][::-1],
        color=[_GROUP_COLOURS[row.group] for row in rows][::-1],
    )
    axes.set_yticks(range(len(rows)), [row.name for row in rows][::-1], fontsize=8)
    axes.axvline(0, color="black", linewidth=0.8)
    base_value = report.base_values[metric]
    unit = "" if metric == "expected rounds" else " percentage points"
    shown = f"{float(base_value):.3f}" if metric == "expected rounds" else f"{100 * float(base_value):.2f} %"
    axes.set_xlabel(
        f"change of {metric},{unit} (base: {shown}); {unchanged} change(s) move it by exactly 0", fontsize=9
    )
    axes.set_title("every change, largest effect first", fontsize=9)
    handles = [Rectangle((0, 0), 1, 1, color=colour) for colour in _GROUP_COLOURS.values()]
    axes.legend(handles, list(_GROUP_COLOURS), fontsize=8, loc="lower right")


def length_chart(length) -> Chart:
    """The chart of a `exactdice.karbon.length.ContestLength`: P(ended by round n) and how
    it ended, with the tail stated."""
    curves = [Curve("ended (any outcome)", length.rounds, length.ended_by, OUTCOME_COLOURS["any"])]
    curves += [
        Curve(f"ended in a {outcome}", length.rounds, values, OUTCOME_COLOURS.get(outcome))
        for outcome, values in length.ended_in.items()
        if any(values)
    ]
    expected = "" if length.expected_rounds is None else f"; expected rounds {float(length.expected_rounds):.2f}"
    note = (
        f"Exact values. Not ended by round {length.rounds[-1]}: {percent_text(length.tail)} "
        f"(a longer contest, or one that never ends){expected}."
    )
    return Chart(f"How long it lasts: {length.description}", "round n", "P(ended by round n)", tuple(curves), note=note)
