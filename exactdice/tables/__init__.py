"""Printable tables: a grid of exact values over two setup axes, its exporters, and the
machinery that solves many grids on every core through a results store.

* `TableGrid` (`grid`): the data of one table.
* `render_table` / `write_table` (`export`): md, csv, json, html, pdf, png.
* `TableJob`, `CellGrid`, `solve_tables` (`jobs`): tables solved by name, whole or cell by cell.
* `ResultStore` (`store`) and `sweep` (`sweep`): the SQLite cache and the parallel sweep.
"""

from exactdice.tables.export import FORMATS, render_table, write_table
from exactdice.tables.grid import TableGrid
from exactdice.tables.jobs import CellGrid, TableJob, solve_table_jobs, solve_tables
from exactdice.tables.store import ResultKey, ResultStore, default_store_path, open_store
from exactdice.tables.sweep import SweepCell, SweepStatistics, sweep

__all__ = [
    "TableGrid",
    "FORMATS",
    "render_table",
    "write_table",
    "TableJob",
    "CellGrid",
    "solve_tables",
    "solve_table_jobs",
    "ResultKey",
    "ResultStore",
    "default_store_path",
    "open_store",
    "SweepCell",
    "SweepStatistics",
    "sweep",
]
