"""Interval cells (`Bounds`: certified bounds on optimal play) in the grid, the store and every export format."""

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from exactdice.tables.export import BOUNDS_NOTE, CSV_BOUNDS_COLUMNS, CSV_COLUMNS, cell_text, grids_to_json, render_table
from exactdice.tables.grid import Bounds, TableGrid, cell_from_data
from exactdice.tables.shading import PanelScale
from exactdice.tables.store import ResultKey, ResultStore

TABLES = Path(__file__).resolve().parents[2] / "tables"
# a lower bound just under 28.7 %, which rounds to nearest as 28.7 % but outward as 28.6 %
LOW = Fraction(28697, 100000)
HIGH = Fraction(31613, 100000)


def _grid() -> TableGrid:
    return TableGrid(
        title="bounds demo",
        row_label="A",
        column_label="C",
        rows=["1", "2"],
        columns=["1", "2"],
        metrics={
            "value": [[Bounds(LOW, HIGH), Bounds(Fraction(1, 3), Fraction(2, 3))], [Fraction(1, 2), None]],
            "P(win)": [[LOW, Fraction(1, 3)], [Fraction(1, 2), None]],
        },
        legend={"what": "demo"},
        probability_metrics=("value", "P(win)"),
    )


def test_bounds_check_their_order_and_keep_exact_ends():
    with pytest.raises(ValueError, match="lower <= upper"):
        Bounds(Fraction(2, 3), Fraction(1, 3))
    cell = Bounds(0.25, 0.5)  # a float end is kept as the exact rational it stands for
    assert cell.lower == Fraction(1, 4) and isinstance(cell.upper, Fraction) and cell.gap == Fraction(1, 4)


def test_cell_text_rounds_bounds_outward():
    grid = _grid()
    assert cell_text(grid, "value", Bounds(LOW, HIGH)) == "28.6-31.7%"
    assert cell_text(grid, "P(win)", LOW) == "28.7%"  # an exact value still rounds to nearest
    plain = TableGrid("t", "r", "c", ["1"], ["1"], {"E": [[Bounds(Fraction(1, 3), Fraction(5, 3))]]})
    assert cell_text(plain, "E", Bounds(Fraction(1, 3), Fraction(5, 3))) == "0.33-1.67"


def test_grid_and_store_round_trip_bounds(tmp_path):
    grid = _grid()
    assert TableGrid.from_dict(json.loads(json.dumps(grid.to_dict()))) == grid
    store = ResultStore(tmp_path / "s.sqlite")
    key = ResultKey("demo", {}, {"cell": 1}, {})
    store.put(key, {"value": Bounds(LOW, HIGH), "P(win)": LOW, "stopped": "time"})
    assert store.get(key) == {"value": Bounds(LOW, HIGH), "P(win)": LOW, "stopped": "time"}
    store.close()


def test_markdown_shows_bounds_and_says_what_they_mean():
    text = render_table(_grid(), "md")
    assert "| 1 | 28.6-31.7% | not certified |" in text
    assert "| 2 | 50.0% | - |" in text
    assert BOUNDS_NOTE in text
    assert "[28697/100000, 31613/100000]" in text  # the exact ends, where short


def test_csv_gives_both_exact_ends():
    rows = list(csv.DictReader(io.StringIO(render_table(_grid(), "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS + CSV_BOUNDS_COLUMNS
    first = rows[0]
    assert first["exact"] == first["decimal"] == ""
    assert (Fraction(first["lower"]), Fraction(first["upper"])) == (LOW, HIGH)
    assert first["lower_decimal"] == "0.2869700000"
    exact = [row for row in rows if row["metric"] == "value" and row["row"] == "2" and row["column"] == "1"][0]
    assert exact["exact"] == exact["lower"] == exact["upper"] == "1/2"
    # a table without bounds keeps the columns it always had
    plain = TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 4)]]})
    assert render_table(plain, "csv").splitlines()[0] == ",".join(CSV_COLUMNS)


def test_json_gives_both_exact_ends_and_flags_the_metric():
    data = grids_to_json([_grid()])
    table = data["tables"][0]
    value, win = table["metrics"]
    assert value["bounds"] is True and "bounds" not in win
    assert value["exact"][0][0] == {"lower": "28697/100000", "upper": "31613/100000"}
    assert value["decimal"][0][1] == {"lower": "0.3333333333", "upper": "0.6666666667"}
    assert cell_from_data(value["exact"][0][0]) == Bounds(LOW, HIGH)
    assert value["exact"][1] == ["1/2", None]
    assert table["bounds_note"] == BOUNDS_NOTE


def test_html_shades_bounds_by_their_lower_end():
    text = render_table(_grid(), "html")
    # the "value" panel's scale runs over the lower ends (28.697 %, 1/3 and 1/2), whatever
    # the upper ones; below 50 %: not bold
    scale = PanelScale.over([LOW, Fraction(1, 3), Fraction(1, 2)], probability=True)
    assert (
        f'class="bounds" style="background:{scale.fill(LOW)};color:{scale.text(LOW)}" '
        'data-exact="[28697/100000, 31613/100000]"'
    ) in text
    assert ">28.6-31.7%</td>" in text
    assert BOUNDS_NOTE.replace('"', "&quot;") in text


def test_pdf_prints_bounds_and_the_note():
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(render_table(_grid(), "pdf")))
    first_page = reader.pages[0].extract_text()
    assert "28.6-31.7%" in first_page and "not certified" in first_page
    assert "certified bounds" in first_page


def test_png_colours_a_bounds_cell_by_its_lower_end():
    """The same picture with a cell of bounds and with that cell at its lower bound: the
    colour of the cell (sampled away from its text) is the same; at its upper bound it is not."""

    def picture(value):  # beside cells of 0 and 1: the panel's scale is the same in every picture
        return render_table(
            TableGrid("t", "r", "c", ["1"], ["1", "2", "3"], {"P(win)": [[value, Fraction(0), Fraction(1)]]}), "png"
        )

    with_bounds = picture(Bounds(Fraction(1, 10), Fraction(3, 20)))
    at_lower, at_upper = picture(Fraction(1, 10)), picture(Fraction(3, 20))
    import matplotlib.image

    def corner(png):
        """The colour just inside the cell's left edge (the bounds picture is wider, so the
        cell is found by scanning the middle row for the first coloured pixel)."""
        image = matplotlib.image.imread(io.BytesIO(png), format="png")
        height, width = image.shape[:2]
        middle = height // 2
        for x in range(width):
            red, green, blue = image[middle, x][:3]
            if abs(red - green) > 0.05 or abs(green - blue) > 0.05:
                return tuple(image[middle, x + 3][:3])
        raise AssertionError("no coloured cell found")

    assert corner(with_bounds) == corner(at_lower) != corner(at_upper)


@pytest.mark.parametrize("name", ["ability_challenge_w1_p0_fixed", "ability_challenge_w3_p1_fixed"])
def test_committed_exact_tables_render_byte_identically(name):
    """The exporters' interval support leaves tables without bounds as they were: the
    committed fixed tables, rebuilt from their JSON, render to the same bytes."""
    folder = TABLES / "karbon"
    tables = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))["tables"]
    order = ("ruleset", "player policy", "narrator policy", "pool", "reserve")  # JSON sorts the legend
    grids = [
        TableGrid(
            title=t["title"],
            row_label=t["row_label"],
            column_label=t["column_label"],
            rows=t["rows"],
            columns=t["columns"],
            legend={k: t["legend"][k] for k in order},
            metrics={m["name"]: [[cell_from_data(v) for v in row] for row in m["exact"]] for m in t["metrics"]},
            probability_metrics=tuple(m["name"] for m in t["metrics"] if m["probability"]),
        )
        for t in tables
    ]
    for fmt in ("md", "csv", "html"):
        assert render_table(grids, fmt) == (folder / f"{name}.{fmt}").read_text(encoding="utf-8"), fmt
    rendered = json.loads(render_table(grids, "json"))
    committed = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    rendered.pop("exactdice_version"), committed.pop("exactdice_version")
    assert rendered == committed


def test_web_page_shows_bounds_cells_from_a_tables_file(tmp_path):
    """The web page's table view reads interval cells: "lower-upper" where the page reads a
    percentage (it shades by the number the text starts with: the lower bound)."""
    from exactdice.tables.export import write_table
    from exactdice.web.present import table_file_json as _present_table_file

    path = write_table([_grid()], "json", tmp_path / "set.json")
    shown = _present_table_file(path)["tables"][0]["metrics"]
    cell = shown[0]["cells"][0][0]
    assert cell["percent"] == "28.6-31.7" and float(cell["percent"].split("-")[0]) == 28.6
    assert (Fraction(cell["lower"]), Fraction(cell["upper"])) == (LOW, HIGH)
    assert shown[0]["cells"][1][0]["exact"] == "1/2" and shown[0]["cells"][1][1] is None
