"""Printable PDF tables (fpdf2): one table a landscape A4 page, shaded like the other formats.

Each page has the grid's title, the metric, the table (numbers as text, each cell filled
on the panel's own scale, `exactdice.tables.shading`, bold from 50 % for probabilities),
then a colour key drawn as swatches from one end of the scale to the other, the bounds
note where cells hold bounds, and the legend. Fixed metadata (creation date, producer),
so the same grids give the same file.

>>> from fractions import Fraction
>>> from exactdice.tables.grid import TableGrid
>>> render_pdf([TableGrid("t", "r", "c", ["1"], ["1"], {"P(win)": [[Fraction(1, 4)]]})])[:5]
b'%PDF-'
"""

from __future__ import annotations

import datetime
from fractions import Fraction
from pathlib import Path

from exactdice.tables.export import BOUNDS_NOTE, cell_text, corner_label, shading_value, title_without_metrics
from exactdice.tables.grid import TableGrid
from exactdice.tables.shading import PanelScale, panel_scale

__all__ = ["render_pdf"]

_FIXED_DATE = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
#: (font size, line height in mm) by how crowded a table is
_ROOMY, _MIDDLE, _CROWDED = (11, 6.5), (9, 5.0), (7, 3.6)


def render_pdf(grids: list[TableGrid]) -> bytes:
    """Every metric of every grid, one page each."""
    document = _TablePages(grids[0].title)
    for grid in grids:
        for metric in grid.metrics:
            document.page(grid, metric)
    return bytes(document.pdf.output())


def _unicode_font_path() -> str | None:
    import matplotlib

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    return str(path) if path.exists() else None


def _hex_rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


class _TablePages:
    """The PDF being written: its fonts, and one method per part of a page."""

    def __init__(self, title: str):
        from fpdf import FPDF

        self.pdf = pdf = FPDF(orientation="landscape", unit="mm", format="A4")
        pdf.set_creation_date(_FIXED_DATE)
        pdf.set_producer("exactdice")
        pdf.set_creator("exactdice")
        pdf.set_title(title)
        pdf.set_auto_page_break(auto=True, margin=10)
        pdf.set_margins(10, 10, 10)
        font_path = _unicode_font_path()
        self.unicode = font_path is not None
        if font_path:
            pdf.add_font("DejaVu", "", font_path)
            bold_path = font_path.replace("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
            pdf.add_font("DejaVu", "B", bold_path if Path(bold_path).exists() else font_path)
        self.family = "DejaVu" if font_path else "Helvetica"

    def text(self, value: str) -> str:
        """``value`` as the font can print it (Latin-1 without the Unicode font)."""
        return value if self.unicode else value.encode("latin-1", "replace").decode("latin-1")

    def page(self, grid: TableGrid, metric: str) -> None:
        """One table: headings, the shaded table, its colour key, the notes and the legend."""
        pdf = self.pdf
        pdf.add_page()
        pdf.set_font(self.family, "B", 13)
        pdf.multi_cell(0, 6, self.text(title_without_metrics(grid) or grid.title), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font(self.family, "B", 10)
        suffix = " (percent)" if grid.is_probability(metric) else ""
        pdf.cell(0, 6, self.text(metric + suffix), new_x="LMARGIN", new_y="NEXT")
        scale = panel_scale(grid, metric)
        self.table(grid, metric, scale)
        pdf.ln(3)
        self.key(scale)
        pdf.set_font(self.family, "", 8)
        if grid.has_bounds(metric):
            pdf.multi_cell(0, 4, self.text(BOUNDS_NOTE), new_x="LMARGIN", new_y="NEXT")
        self.legend(grid)

    def table(self, grid: TableGrid, metric: str, scale: PanelScale) -> None:
        """The table itself, as wide as its columns need (never wider than the page)."""
        from fpdf.fonts import FontFace

        pdf = self.pdf
        font_size, line_height = self._crowding(grid)
        pdf.set_font(self.family, "", font_size)
        widths = self._column_widths(grid, metric)
        with pdf.table(
            col_widths=widths,
            width=sum(widths),
            align="LEFT",
            line_height=line_height,
            text_align="RIGHT",
            headings_style=FontFace(emphasis="BOLD", fill_color=(235, 235, 235)),
            first_row_as_headings=True,
            repeat_headings=1,
        ) as table:
            heading = table.row()
            heading.cell(self.text(corner_label(grid)), align="LEFT")
            for column in grid.columns:
                heading.cell(self.text(column))
            for label, values in zip(grid.rows, grid.metrics[metric]):
                row = table.row()
                row.cell(self.text(label), align="LEFT")
                for value in values:
                    row.cell(cell_text(grid, metric, value), style=_cell_style(value, scale))

    @staticmethod
    def _crowding(grid: TableGrid) -> tuple[int, float]:
        columns = len(grid.columns) + 1
        if len(grid.rows) <= 15 and columns <= 10:
            return _ROOMY
        if len(grid.rows) <= 25 and columns <= 14:
            return _MIDDLE
        return _CROWDED

    def _column_widths(self, grid: TableGrid, metric: str) -> tuple:
        pdf = self.pdf
        usable_width = pdf.w - pdf.l_margin - pdf.r_margin
        label_width = min(
            70.0,
            5 + 1.15 * max(pdf.get_string_width(self.text(label)) for label in list(grid.rows) + [corner_label(grid)]),
        )
        # a hair under the page width: fpdf2 refuses a table wider than the page by rounding
        widest = 34.0 if grid.has_bounds(metric) else 24.0  # "lower-upper" needs more room
        column_width = min(widest, (usable_width - label_width - 0.01) / len(grid.columns))
        return (label_width,) + (column_width,) * len(grid.columns)

    def key(self, scale: PanelScale) -> None:
        """The colour key: the scale in words, then swatches from one end to the other."""
        pdf = self.pdf
        pdf.set_font(self.family, "", 8)
        bold = " 50% and above is also printed bold." if scale.probability and not scale.empty else ""
        pdf.multi_cell(
            0, 4, self.text(scale.legend() + bold + " Exact fractions: JSON/CSV export."), new_x="LMARGIN", new_y="NEXT"
        )
        pdf.set_font(self.family, "", 7)
        swatch_width, swatch_height = 16.0, 5.0
        top = pdf.get_y() + 1
        for index, (value, fill) in enumerate(scale.samples()):
            left = pdf.l_margin + index * swatch_width
            pdf.set_fill_color(*_hex_rgb(fill))
            pdf.set_text_color(*_hex_rgb(scale.text(value)))
            pdf.set_xy(left, top)
            pdf.cell(swatch_width, swatch_height, self.text(scale.end_text(value)), border=1, align="C", fill=True)
        pdf.set_text_color(0, 0, 0)
        pdf.set_fill_color(255, 255, 255)  # the next table's plain cells take the current fill
        pdf.set_xy(pdf.l_margin, top + swatch_height + 2)

    def legend(self, grid: TableGrid) -> None:
        """The grid's legend, one "key: value" line each."""
        pdf = self.pdf
        for key, value in grid.legend.items():
            pdf.set_font(self.family, "B", 8)
            pdf.write(4, self.text(f"{key}: "))
            pdf.set_font(self.family, "", 8)
            pdf.write(4, self.text(str(value)))
            pdf.ln(4)


def _cell_style(value, scale: PanelScale):
    """A cell's fill, text colour and weight (None for a cell with no value)."""
    from fpdf.fonts import FontFace

    shade = shading_value(value, scale.probability)
    if shade is None:
        return None
    bold = scale.probability and shade >= Fraction(1, 2)
    return FontFace(
        emphasis="BOLD" if bold else None, color=_hex_rgb(scale.text(shade)), fill_color=_hex_rgb(scale.fill(shade))
    )
