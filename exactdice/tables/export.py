"""Write `TableGrid`s as Markdown, CSV, JSON, printable HTML, PDF or a PNG heatmap.

The data formats (md, csv, json, html) are deterministic: the same grids give the
same bytes, with no timestamps. PDF and PNG carry fixed metadata (a fixed creation
date, no software stamp) so that re-runs differ at most in incidental bytes.

Every format carries every metric of every grid: the headline metric first, then
the others (P(tie), P(loss), expected rounds, ...) as further tables or pages.

* ``md``: per grid and metric a table of percentages (or decimals), then the exact
  values as ``p/q`` in a second table (when none is longer than `EXACT_TEXT_LIMIT`
  characters; else a pointer to the JSON/CSV, where every exact value is).
* ``csv``: one row per cell and metric ("tidy"): columns `CSV_COLUMNS`.
* ``json``: ``{"exactdice_version", "format", "tables": [{"title", "row_label",
  "column_label", "rows", "columns", "legend", "metrics": [{"name", "probability",
  "exact", "decimal"}]}]}``; ``exact`` holds ``"p/q"`` strings, ``decimal`` strings
  with `DECIMAL_DIGITS` digits, ``null`` where a cell does not apply.
* ``html``: a print-ready page, one table a printed page, each cell shaded on the
  table's own continuous scale (`exactdice.tables.shading`: diverging around 50 % for
  probabilities on both sides of it, else over the table's range; the key under each
  table says which), bold text from 50 %, and the exact value of each cell in its
  ``data-exact`` attribute and tooltip.
* ``pdf``: the same tables typeset with fpdf2, one table a page, shaded alike, numbers as text.
* ``png``: matplotlib heatmaps shaded alike, each cell annotated and each panel titled
  with its own metric (`exactdice.tables.plots`).

A cell known only within certified bounds (`exactdice.tables.grid.Bounds`, optimal play
past exact reach) reads "lower-upper" (rounded outward: down, up), is shaded by its
lower bound (what the returned strategy guarantees), carries both exact ends in the
JSON (``{"lower": "p/q", "upper": "r/s"}``) and in four more CSV columns
(`CSV_BOUNDS_COLUMNS`, present only when a table has such cells); every format says so.

>>> from fractions import Fraction
>>> grid = TableGrid(title="demo", row_label="A", column_label="C", rows=["1"],
...                  columns=["1", "2"], metrics={"P(win)": [[Fraction(1, 2), None]]})
>>> print(render_table(grid, "csv").splitlines()[1])
demo,P(win),A,1,C,1,1/2,0.5000000000
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path

from exactdice.core.exact import decimal_text, directed_decimal_text, fraction_text
from exactdice.errors import InputError
from exactdice.output_files import check_output_path, write_output
from exactdice.tables.grid import Bounds, TableGrid, cell_to_data
from exactdice.tables.shading import PanelScale, panel_scale

__all__ = [
    "FORMATS",
    "TEXT_FORMATS",
    "CSV_COLUMNS",
    "DECIMAL_DIGITS",
    "render_table",
    "write_table",
    "format_from_path",
    "cell_text",
    "EXACT_TEXT_LIMIT",
    "CSV_BOUNDS_COLUMNS",
    "BOUNDS_NOTE",
    "UNCERTIFIED_GAP",
    "shading_value",
    "bounds_text",
    "corner_label",
    "title_without_metrics",
]

#: every output format, and the ones that are text (the others are bytes)
FORMATS = ("md", "csv", "json", "html", "pdf", "png")
TEXT_FORMATS = ("md", "csv", "json", "html")
CSV_COLUMNS = ("table", "metric", "row_axis", "row", "column_axis", "column", "exact", "decimal")
#: added when a cell holds bounds: each cell's exact lower and upper ends (equal for an exact cell)
CSV_BOUNDS_COLUMNS = ("lower", "upper", "lower_decimal", "upper_decimal")
#: certified bounds further apart than this say too little to print: the cell reads
#: "not certified" (its bounds stay in the JSON and CSV)
UNCERTIFIED_GAP = Fraction(1, 20)
#: what every format says about interval cells
BOUNDS_NOTE = (
    'A cell "a-b" holds certified bounds on optimal play (the game is too large to solve '
    "exactly): no play does better than b, and the returned strategy guarantees a; the "
    "ends are rounded outward and the cell is shaded by its lower bound a. A cell whose "
    'bounds are more than 0.05 apart reads "not certified" and is not shaded (its bounds '
    "are in the JSON and CSV files)."
)
DECIMAL_DIGITS = 10
#: exact fractions longer than this are left to the JSON/CSV (md tables, html tooltips)
EXACT_TEXT_LIMIT = 60
JSON_FORMAT_NAME = "exactdice-tables/1"


def _as_grids(grid_or_grids) -> list[TableGrid]:
    if isinstance(grid_or_grids, TableGrid):
        return [grid_or_grids]
    grids = list(grid_or_grids)
    if not grids or not all(isinstance(grid, TableGrid) for grid in grids):
        raise TypeError("expected a TableGrid or a non-empty sequence of TableGrids")
    return grids


def format_from_path(path, fmt: str | None = None, field: str = "fmt") -> str:
    """The output format: *fmt* when given, else the suffix of *path*, else ``md``.

    >>> format_from_path("odds.html"), format_from_path(None), format_from_path("x.txt", "csv")
    ('html', 'md', 'csv')
    """
    if fmt:
        fmt = fmt.lower()
        if fmt not in FORMATS:
            raise InputError(field, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    if path is None or str(path) == "-":
        return "md"
    suffix = Path(str(path)).suffix.lower().lstrip(".")
    if suffix == "markdown":
        suffix = "md"
    if suffix == "htm":
        suffix = "html"
    if suffix not in FORMATS:
        raise InputError(
            field, f"cannot tell the format from the file name {str(path)!r}; give `fmt` ({', '.join(FORMATS)})"
        )
    return suffix


def bounds_text(value: Bounds, percent: bool) -> str:
    """Bounds as "lower-upper", rounded outward: percentages with one decimal (no sign) or
    numbers with two.

    >>> bounds_text(Bounds(Fraction(1, 3), Fraction(2, 3)), percent=True)
    '33.3-66.7'
    """
    if percent:
        return (
            directed_decimal_text(value.lower * 100, 1, up=False)
            + "-"
            + directed_decimal_text(value.upper * 100, 1, up=True)
        )
    return directed_decimal_text(value.lower, 2, up=False) + "-" + directed_decimal_text(value.upper, 2, up=True)


def cell_text(grid: TableGrid, metric: str, value: Fraction | Bounds | None) -> str:
    """What a person reads in a cell: a percentage for probabilities, else a decimal.

    A probability that is neither 0 nor 1 never reads as "0.0%" or "100.0%"; bounds read
    "lower-upper", rounded outward, or for a probability "not certified" more than
    `UNCERTIFIED_GAP` apart.

    >>> grid = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 3)]]})
    >>> cell_text(grid, "P(win)", Fraction(1, 3)), cell_text(grid, "E[rounds]", Fraction(7, 2))
    ('33.3%', '3.50')
    >>> cell_text(grid, "P(win)", Fraction(1, 10**5)), cell_text(grid, "P(win)", 1 - Fraction(1, 10**5))
    ('<0.1%', '>99.9%')
    >>> cell_text(grid, "P(win)", Bounds(Fraction(1, 3), Fraction(34, 100)))
    '33.3-34.0%'
    >>> cell_text(grid, "P(win)", Bounds(Fraction(0), Fraction(1)))
    'not certified'
    """
    if value is None:
        return "-"
    if isinstance(value, Bounds) and grid.is_probability(metric) and value.upper - value.lower > UNCERTIFIED_GAP:
        return "not certified"
    if isinstance(value, Bounds):
        percent = grid.is_probability(metric)
        return bounds_text(value, percent) + ("%" if percent else "")
    if grid.is_probability(metric):
        if 0 < value < Fraction(1, 2000):
            return "<0.1%"
        if Fraction(1999, 2000) <= value < 1:
            return ">99.9%"
        return decimal_text(value * 100, 1) + "%"
    return decimal_text(value, 2)


def shading_value(value: Fraction | Bounds | None, probability: bool = True) -> Fraction | None:
    """The number a cell is shaded by: its value, or for bounds the lower bound (what the
    returned strategy guarantees); None (no shade) for a probability's bounds too wide to
    print (`UNCERTIFIED_GAP`).

    >>> shading_value(Bounds(Fraction(1, 4), Fraction(1, 4))), shading_value(Bounds(0, 1)), shading_value(None)
    (Fraction(1, 4), None, None)
    """
    if isinstance(value, Bounds):
        return value.lower if not probability or value.upper - value.lower <= UNCERTIFIED_GAP else None
    return value


def title_without_metrics(grid: TableGrid) -> str:
    """The grid's title with every metric name taken out: what a panel or page of one
    metric is titled by beside its own metric (a grid title such as "Karbon P(win): A x C"
    names only its headline metric).

    >>> title_without_metrics(TableGrid("Karbon P(win): A x C", "A", "C", ["1"], ["1"],
    ...                                 {"P(win)": [[Fraction(1, 2)]], "P(tie)": [[0]]}))
    'Karbon: A x C'
    """
    context = grid.title
    for name in grid.metrics:
        context = context.replace(name, "")
    context = re.sub(r"\s+([:,])", r"\1", context)
    context = re.sub(r"([:,])\s*([:,])", r"\1", context)
    return re.sub(r"\s{2,}", " ", context).strip(" :,")


def corner_label(grid: TableGrid) -> str:
    """The top-left heading: ``rows \\ columns`` (just the row label when columns have none)."""
    if not grid.column_label:
        return grid.row_label
    return f"{grid.row_label} \\ {grid.column_label}"


def _metric_names(grid: TableGrid) -> list[str]:
    return list(grid.metrics)


def _exact(value: Fraction | Bounds | None) -> str | None:
    if isinstance(value, Bounds):
        return f"[{fraction_text(value.lower)}, {fraction_text(value.upper)}]"
    return None if value is None else fraction_text(value)


def _decimal(value: Fraction | None) -> str | None:
    return None if value is None else decimal_text(value, DECIMAL_DIGITS)


def _decimal_data(value: Fraction | Bounds | None):
    if isinstance(value, Bounds):
        return {"lower": _decimal(value.lower), "upper": _decimal(value.upper)}
    return _decimal(value)


def _any_bounds(grids: list[TableGrid]) -> bool:
    return any(grid.has_bounds() for grid in grids)


# ----- Markdown ---------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_grid(grid: TableGrid, cells: list[list[str]]) -> list[str]:
    lines = [
        "| " + " | ".join([_md_escape(corner_label(grid))] + [_md_escape(c) for c in grid.columns]) + " |",
        "|" + "---|" * (len(grid.columns) + 1),
    ]
    for label, row in zip(grid.rows, cells):
        lines.append("| " + " | ".join([_md_escape(label)] + row) + " |")
    return lines


def _render_md(grids: list[TableGrid]) -> str:
    lines: list[str] = []
    for grid in grids:
        lines += [f"## {grid.title}", ""]
        for metric in _metric_names(grid):
            matrix = grid.metrics[metric]
            lines += [f"### {metric}", ""]
            lines += _md_grid(grid, [[cell_text(grid, metric, v) for v in row] for row in matrix])
            lines.append("")
        lines += ["### Exact values", ""]
        for metric in _metric_names(grid):
            exact = [[_exact(v) or "-" for v in row] for row in grid.metrics[metric]]
            longest = max((len(text) for row in exact for text in row), default=0)
            if longest > EXACT_TEXT_LIMIT:
                lines += [
                    f"{metric}: fractions of up to {longest} characters; see the JSON or "
                    "CSV export of this table for every exact value.",
                    "",
                ]
                continue
            lines += [f"{metric}:", ""]
            lines += _md_grid(grid, exact)
            lines.append("")
        if grid.has_bounds():
            lines += [BOUNDS_NOTE, ""]
        if grid.legend:
            lines += ["### Legend", ""]
            lines += [f"- **{_md_escape(key)}**: {_md_escape(value)}" for key, value in grid.legend.items()]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# ----- CSV --------------------------------------------------------------------------------


def _render_csv(grids: list[TableGrid]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    with_bounds = _any_bounds(grids)
    writer.writerow(CSV_COLUMNS + (CSV_BOUNDS_COLUMNS if with_bounds else ()))
    for grid in grids:
        for metric in _metric_names(grid):
            for row_label, row in zip(grid.rows, grid.metrics[metric]):
                for column_label, value in zip(grid.columns, row):
                    exact = None if isinstance(value, Bounds) else value
                    cells = [
                        grid.title,
                        metric,
                        grid.row_label,
                        row_label,
                        grid.column_label,
                        column_label,
                        _exact(exact) or "",
                        _decimal(exact) or "",
                    ]
                    if with_bounds:
                        cells += _csv_bounds(value)
                    writer.writerow(cells)
    return buffer.getvalue()


def _csv_bounds(value: Fraction | Bounds | None) -> list[str]:
    """The `CSV_BOUNDS_COLUMNS` of a cell: an exact value is its own lower and upper bound."""
    if value is None:
        return ["", "", "", ""]
    low, high = (value.lower, value.upper) if isinstance(value, Bounds) else (value, value)
    return [fraction_text(low), fraction_text(high), _decimal(low), _decimal(high)]


# ----- JSON -------------------------------------------------------------------------------


def grids_to_json(grids) -> dict:
    """The JSON document of `render_table` (before serialisation), fractions as ``"p/q"``.

    >>> grid = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 4)]]})
    >>> grids_to_json(grid)["tables"][0]["metrics"][0]["exact"]
    [['1/4']]
    """
    from exactdice import __version__

    tables = []
    for grid in _as_grids(grids):
        table = {
            "title": grid.title,
            "row_label": grid.row_label,
            "column_label": grid.column_label,
            "rows": list(grid.rows),
            "columns": list(grid.columns),
            "legend": dict(grid.legend),
            "metrics": [_json_metric(grid, metric) for metric in _metric_names(grid)],
        }
        if grid.has_bounds():
            table["bounds_note"] = BOUNDS_NOTE
        tables.append(table)
    return {"format": JSON_FORMAT_NAME, "exactdice_version": __version__, "tables": tables}


__all__.append("grids_to_json")


def _json_metric(grid: TableGrid, metric: str) -> dict:
    matrix = grid.metrics[metric]
    entry = {
        "name": metric,
        "probability": grid.is_probability(metric),
        "exact": [[cell_to_data(v) for v in row] for row in matrix],
        "decimal": [[_decimal_data(v) for v in row] for row in matrix],
    }
    if grid.has_bounds(metric):
        entry["bounds"] = True
    return entry


def _render_json(grids: list[TableGrid]) -> str:
    return json.dumps(grids_to_json(grids), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# ----- HTML -------------------------------------------------------------------------------

_HTML_STYLE = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; font-size: 10pt; margin: 1.5em; }
h1 { font-size: 14pt; margin: 0 0 0.4em 0; }
h2 { font-size: 11pt; margin: 0.8em 0 0.3em 0; }
section.table-page { page-break-after: always; break-after: page; }
section.table-page:last-of-type { page-break-after: auto; break-after: auto; }
table.grid { border-collapse: collapse; margin: 0.3em 0 0.8em 0; }
table.grid th, table.grid td { border: 1px solid #555; padding: 2px 6px; text-align: right; }
table.grid th { background: #eee; }
table.grid th.corner { text-align: left; font-weight: normal; font-style: italic; }
td.strong { font-weight: bold; }
td.na { color: #777; text-align: center; }
dl.legend { display: grid; grid-template-columns: max-content auto; gap: 0 1em; font-size: 9pt; }
dl.legend dt { font-weight: bold; }
dl.legend dd { margin: 0; }
p.key { font-size: 8.5pt; }
p.key span.swatch { display: inline-block; padding: 0 0.4em; border: 1px solid #555; margin-right: 0.15em; }
@media print {
  @page { size: A4 landscape; margin: 12mm; }
  body { margin: 0; }
  td, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _html_key(scale: PanelScale) -> str:
    """The table's colour key: what the scale is, and swatches from one end to the other."""
    swatches = "".join(
        f'<span class="swatch" style="background:{fill};color:{scale.text(value)}">'
        f"{html.escape(scale.end_text(value))}</span>"
        for value, fill in scale.samples()
    )
    bold = " 50% and above is also printed bold." if scale.probability and not scale.empty else ""
    return f'<p class="key">{html.escape(scale.legend())} {swatches}{bold}</p>'


def _html_table(grid: TableGrid, metric: str, scale: PanelScale) -> str:
    parts = [
        '<table class="grid" data-metric="' + html.escape(metric) + '">',
        "<thead><tr>",
        f'<th class="corner">{html.escape(corner_label(grid))}</th>',
    ]
    parts += [f'<th scope="col">{html.escape(column)}</th>' for column in grid.columns]
    parts.append("</tr></thead><tbody>")
    for label, row in zip(grid.rows, grid.metrics[metric]):
        parts.append(f'<tr><th scope="row">{html.escape(label)}</th>')
        for value in row:
            if value is None:
                parts.append('<td class="na">-</td>')
                continue
            shade = shading_value(value, scale.probability)
            classes = ["bounds"] if isinstance(value, Bounds) else []
            if shade is None:  # bounds too wide to say much: no shade, the bounds in the tooltip
                classes.append("uncertified")
            elif scale.probability and shade >= Fraction(1, 2):
                classes.append("strong")
            exact = html.escape(_exact(value))
            class_attr = f' class="{" ".join(classes)}"' if classes else ""
            tooltip = f' title="{exact}"' if len(exact) <= EXACT_TEXT_LIMIT else ""
            if shade is None:
                tooltip = (
                    f' title="certified bounds {html.escape(bounds_text(value, scale.probability))}'
                    f'{"%" if scale.probability else ""}, too far apart to print"'
                )
            style = "" if shade is None else f' style="background:{scale.fill(shade)};color:{scale.text(shade)}"'
            parts.append(
                f"<td{class_attr}{style} "
                f'data-exact="{exact}"{tooltip}>{html.escape(cell_text(grid, metric, value))}</td>'
            )
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _html_legend(grid: TableGrid) -> str:
    if not grid.legend:
        return ""
    items = "".join(
        f"<dt>{html.escape(str(key))}</dt><dd>{html.escape(str(value))}</dd>" for key, value in grid.legend.items()
    )
    return f'<dl class="legend">{items}</dl>'


def _render_html(grids: list[TableGrid]) -> str:
    title = grids[0].title if len(grids) == 1 else f"{grids[0].title} and {len(grids) - 1} more"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_HTML_STYLE}</style>",
        "</head>",
        "<body>",
    ]
    for grid in grids:
        for metric in _metric_names(grid):
            parts.append('<section class="table-page">')
            parts.append(f"<h1>{html.escape(title_without_metrics(grid) or grid.title)}</h1>")
            parts.append(f"<h2>{html.escape(metric)}" + (" (percent)" if grid.is_probability(metric) else "") + "</h2>")
            scale = panel_scale(grid, metric)
            parts.append(_html_table(grid, metric, scale))
            parts.append(_html_key(scale))
            if grid.has_bounds(metric):
                parts.append(f'<p class="key">{html.escape(BOUNDS_NOTE)}</p>')
            parts.append(_html_legend(grid))
            parts.append(
                '<p class="key">Exact fractions: in each cell\'s data-exact attribute '
                "(short ones also on hover), and in the JSON/CSV export of the same "
                "table.</p>"
            )
            parts.append("</section>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


# ----- PDF --------------------------------------------------------------------------------


def _render_pdf(grids: list[TableGrid]) -> bytes:
    from exactdice.tables.pdf import render_pdf

    return render_pdf(grids)


# ----- PNG --------------------------------------------------------------------------------


def _render_png(grids: list[TableGrid]) -> bytes:
    from exactdice.tables.plots import heatmap_png

    return heatmap_png(grids)


_RENDERERS = {
    "md": _render_md,
    "csv": _render_csv,
    "json": _render_json,
    "html": _render_html,
    "pdf": _render_pdf,
    "png": _render_png,
}


def render_table(grids: TableGrid | Iterable[TableGrid], fmt: str) -> str | bytes:
    """Render one grid or several in *fmt*.

    Parameters
    ----------
    grids : TableGrid or iterable of TableGrid
        The tables.
    fmt : {"md", "csv", "json", "html", "pdf", "png"}
        The format.

    Returns
    -------
    str or bytes
        ``str`` for md, csv, json and html; ``bytes`` for pdf and png.

    Raises
    ------
    InputError
        An unknown format.

    Examples
    --------
    >>> grid = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 4)]]})
    >>> render_table(grid, "md").splitlines()[6]
    '| 1 | 25.0% |'
    >>> render_table(grid, "pdf")[:5]
    b'%PDF-'
    """
    if fmt not in _RENDERERS:
        raise InputError("fmt", f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return _RENDERERS[fmt](_as_grids(grids))


def write_table(grid_or_grids: TableGrid | Sequence[TableGrid], fmt: str | None, path: str | Path) -> Path:
    """Render and write to *path* atomically (`exactdice.output_files.write_output`).

    Only a regular file is written, through a symlink; a device, FIFO or folder is refused
    before anything is rendered.

    Parameters
    ----------
    grid_or_grids : TableGrid or sequence of TableGrid
        The tables.
    fmt : str or None
        The format; None means: from the file's suffix.
    path : str or Path
        Where to write.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    InputError
        An unknown format or suffix, or a path that is not a regular file.

    Examples
    --------
    >>> import tempfile, os
    >>> grid = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 4)]]})
    >>> folder = tempfile.mkdtemp()
    >>> write_table(grid, None, os.path.join(folder, "t.json")).read_text().count("1/4")
    1
    """
    path = Path(path)
    fmt = format_from_path(path, fmt)
    check_output_path(path, "output")  # refuse a device, FIFO or folder before rendering
    content = render_table(grid_or_grids, fmt)
    write_output(path, content, "output")
    return path
