"""Every format is written and read back; the data formats are deterministic."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from html.parser import HTMLParser

import pytest

from exactdice.core.exact import decimal_text, fraction_text
from exactdice.errors import InputError
from exactdice.tables.export import (
    CSV_COLUMNS,
    DECIMAL_DIGITS,
    FORMATS,
    TEXT_FORMATS,
    cell_text,
    format_from_path,
    render_table,
    title_without_metrics,
    write_table,
)
from exactdice.tables.grid import TableGrid
from exactdice.tables.shading import PanelScale


def _all_cells(grids):
    for grid in grids:
        for metric, matrix in grid.metrics.items():
            for r, row in enumerate(matrix):
                for c, value in enumerate(row):
                    yield grid, metric, r, c, value


def test_csv_reads_back_exactly(make_grid):
    grids = [make_grid(1), make_grid(2, rows=2, columns=3, title="second, with a comma")]
    rows = list(csv.DictReader(io.StringIO(render_table(grids, "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    expected = list(_all_cells(grids))
    assert len(rows) == len(expected)
    for row, (grid, metric, r, c, value) in zip(rows, expected):
        assert (row["table"], row["metric"], row["row"], row["column"]) == (
            grid.title,
            metric,
            grid.rows[r],
            grid.columns[c],
        )
        if value is None:
            assert row["exact"] == row["decimal"] == ""
        else:
            assert Fraction(row["exact"]) == value
            assert row["decimal"] == decimal_text(value, DECIMAL_DIGITS)


def test_json_reads_back_exactly(make_grid):
    grids = [make_grid(3), make_grid(4, rows=1, columns=1)]
    document = json.loads(render_table(grids, "json"))
    assert set(document) == {"format", "exactdice_version", "tables"}
    assert len(document["tables"]) == 2
    for table, grid in zip(document["tables"], grids):
        assert table["title"] == grid.title and table["rows"] == grid.rows
        assert table["columns"] == grid.columns and table["legend"] == grid.legend
        # the headline metric first, the others after it, in the grid's order
        assert [metric["name"] for metric in table["metrics"]] == list(grid.metrics)
        for metric in table["metrics"]:
            assert metric["probability"] == grid.is_probability(metric["name"])
            matrix = grid.metrics[metric["name"]]
            assert [[None if v is None else Fraction(v) for v in row] for row in metric["exact"]] == matrix
            for decimals, values in zip(metric["decimal"], matrix):
                for text, value in zip(decimals, values):
                    assert text == (None if value is None else decimal_text(value, DECIMAL_DIGITS))


class _TableReader(HTMLParser):
    """Collects every <table data-metric=...>: header, and each cell's text and data-exact."""

    def __init__(self):
        super().__init__()
        self.tables, self.sections, self._cell = [], 0, None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "section":
            self.sections += 1
        if tag == "table":
            self.tables.append({"metric": attributes["data-metric"], "rows": []})
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = {
                "text": "",
                "exact": attributes.get("data-exact"),
                "class": attributes.get("class", ""),
                "style": attributes.get("style", ""),
            }

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(self._cell)
            self._cell = None


def test_html_table_equals_json(make_grid):
    grids = [make_grid(5), make_grid(6, rows=3, columns=2)]
    page = render_table(grids, "html")
    document = json.loads(render_table(grids, "json"))
    reader = _TableReader()
    reader.feed(page)
    json_tables = [(table, metric) for table in document["tables"] for metric in table["metrics"]]
    assert len(reader.tables) == len(json_tables) == reader.sections  # one table a page
    assert page.count("page-break-after: always") == 1 and "@media print" in page
    for html_table, (table, metric) in zip(reader.tables, json_tables):
        assert html_table["metric"] == metric["name"]
        values = [Fraction(exact) for row in metric["exact"] for exact in row if exact is not None]
        scale = PanelScale.over(values, metric["probability"])
        header, *body = html_table["rows"]
        assert [cell["text"] for cell in header[1:]] == table["columns"]
        assert [row[0]["text"] for row in body] == table["rows"]
        for row, exact_row in zip(body, metric["exact"]):
            for cell, exact in zip(row[1:], exact_row):
                assert cell["exact"] == exact
                if exact is not None and metric["probability"]:
                    value = Fraction(exact)
                    assert cell["text"] == cell_text(grids[0], metric["name"], value)
                    assert ("strong" in cell["class"]) == (value >= Fraction(1, 2))
                if exact is not None:  # every metric's cells are shaded on the table's own scale
                    value = Fraction(exact)
                    assert cell["style"] == f"background:{scale.fill(value)};color:{scale.text(value)}"
    for key, value in grids[0].legend.items():
        assert f"<dt>{key}</dt><dd>{value}</dd>" in page


def test_markdown_has_every_metric_percentages_and_exact_values(make_grid):
    grid = make_grid(7)
    text = render_table(grid, "md")
    for metric in grid.metrics:
        assert f"### {metric}" in text
    for _, metric, _, _, value in _all_cells([grid]):
        if value is not None:
            assert cell_text(grid, metric, value) in text
            assert fraction_text(value) in text
    assert "| Ability \\ Challenge | 1 | 2 | 3 | 4 | 5 |" in text


def test_pdf_is_a_real_pdf_with_the_numbers_as_text(make_grid, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    grids = [make_grid(8), make_grid(9, rows=2, columns=2, title="second grid")]
    path = write_table(grids, "pdf", tmp_path / "odds.pdf")
    reader = pypdf.PdfReader(str(path))
    pages = [(grid, metric) for grid in grids for metric in grid.metrics]
    assert len(reader.pages) == len(pages)  # one table a page
    for page, (grid, metric) in zip(reader.pages, pages):
        text = page.extract_text()
        assert title_without_metrics(grid) in text and metric in text
        for key, value in grid.legend.items():
            assert key in text and value in text
        for value in (v for row in grid.metrics[metric] for v in row if v is not None):
            assert cell_text(grid, metric, value) in text
    assert str(reader.metadata["/CreationDate"]).startswith("D:2000")


def test_png_is_a_heatmap_image_without_a_timestamp(make_grid, tmp_path):
    from matplotlib.image import imread

    grid = make_grid(10)
    path = write_table(grid, "png", tmp_path / "odds.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"Software" not in data and b"Creation Time" not in data
    image = imread(str(path))
    assert image.shape[0] > 200 and image.shape[1] > 200
    # a heatmap, not a blank page: many distinct colours
    assert len({tuple(pixel) for pixel in image[::7, ::7].reshape(-1, image.shape[2]).tolist()}) > 20


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_data_formats_are_byte_identical_on_a_re_render(make_grid, tmp_path, fmt):
    first = write_table([make_grid(11), make_grid(12)], fmt, tmp_path / f"a.{fmt}").read_bytes()
    second = write_table([make_grid(11), make_grid(12)], fmt, tmp_path / f"b.{fmt}").read_bytes()
    assert first == second


def test_pdf_re_render_differs_at_most_in_the_file_id(make_grid):
    first = render_table(make_grid(13), "pdf")
    second = render_table(make_grid(13), "pdf")
    assert len(first) == len(second)
    differing = [i for i, (a, b) in enumerate(zip(first, second)) if a != b]
    assert len(differing) <= 64  # at most the random /ID of the trailer


def test_format_from_suffix_and_errors(tmp_path, make_grid):
    assert format_from_path("x.CSV") == "csv" and format_from_path("-") == "md"
    with pytest.raises(InputError, match="fmt: cannot tell the format"):
        format_from_path("table.txt")
    with pytest.raises(InputError, match="fmt: unknown format 'xls'"):
        format_from_path("t.csv", "xls")
    with pytest.raises(InputError, match="output: folder"):
        write_table(make_grid(1), "md", tmp_path / "missing" / "t.md")


def test_write_leaves_no_temporary_files(make_grid, tmp_path):
    for fmt in FORMATS:
        write_table(make_grid(1, rows=2, columns=2), fmt, tmp_path / f"t.{fmt}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"t.{fmt}" for fmt in FORMATS)


def test_non_probability_metric_is_a_plain_number(make_grid):
    grid = make_grid(14)
    value = grid.cell("E[rounds]", 1, 1)
    assert cell_text(grid, "E[rounds]", value) == decimal_text(value, 2)
    assert not grid.is_probability("E[rounds]")
    explicit = TableGrid(
        "t", "r", "c", ["1"], ["1"], {"win rate": [[Fraction(1, 3)]]}, probability_metrics=("win rate",)
    )
    assert cell_text(explicit, "win rate", Fraction(1, 3)) == "33.3%"


def test_grid_round_trips_through_dict(make_grid):
    grid = make_grid(15)
    again = TableGrid.from_dict(json.loads(json.dumps(grid.to_dict(), sort_keys=True)))
    assert again == grid and list(again.metrics) == list(grid.metrics)
    assert list(again.legend) == list(grid.legend)


def test_huge_fractions_stay_exact_in_json_csv_html_and_out_of_the_markdown():
    huge = Fraction(3**200 + 1, 2 * 3**200)  # 96 digits a side
    grid = TableGrid("huge", "r", "c", ["1"], ["1", "2"], {"P(win)": [[huge, Fraction(1, 3)]]})
    markdown = render_table(grid, "md")
    assert fraction_text(huge) not in markdown and "see the JSON or CSV export" in markdown
    assert "50.0%" in markdown
    document = json.loads(render_table(grid, "json"))
    assert Fraction(document["tables"][0]["metrics"][0]["exact"][0][0]) == huge
    assert fraction_text(huge) in render_table(grid, "csv")
    page = render_table(grid, "html")
    assert f'data-exact="{fraction_text(huge)}">' in page and 'title="1/3"' in page


def test_an_unwritable_output_is_an_input_error(make_grid, tmp_path):
    with pytest.raises(InputError, match="output: .* is a directory, not a file"):
        write_table(make_grid(1), "md", tmp_path)
    assert list(tmp_path.iterdir()) == []
