"""Table jobs: a system's table function called by name, cached in the store, run in parallel.

A `TableJob` names a table function (``"module:function"``) with its keyword arguments,
and the parts of its store key (system, ruleset, setup, policies); a `CellGrid` names a
function solving one cell, for grids whose cells are long solves. `solve_tables` turns
jobs into `TableGrid`s through `sweep`, so a set of tables is built on every core, each
grid is stored as soon as it is done, and a re-run reads them back instead of solving.

Functions are named, not passed, so that worker processes can import them, and so that
the store key says which table a result is.

>>> job = TableJob(system="demo", table="reciprocals", function="exactdice.tables.jobs:demo_table",
...                arguments={"size": 2})
>>> solve_tables([job], store=None, workers=1, progress=False)[0].cell("P(x)", 1, 0)
Fraction(1, 2)
"""

from __future__ import annotations

import importlib
from concurrent.futures import Executor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdice.progress import ProgressCallback
from exactdice.tables.grid import TableGrid
from exactdice.tables.store import ResultKey, ResultStore
from exactdice.tables.sweep import SweepCell, SweepStatistics, sweep

__all__ = [
    "TableJob",
    "CellGrid",
    "solve_tables",
    "solve_table_jobs",
    "build_job",
    "run_task",
    "demo_table",
    "demo_cell",
    "ruleset_data",
    "setup_data",
    "GRID_FORMAT",
]

#: version of `TableGrid.to_dict` data kept in the store (part of the key: a change re-solves)
GRID_FORMAT = 3


def ruleset_data(ruleset: Any) -> Any:
    """A ruleset as JSON-ready data: its ``to_dict()`` when it has one.

    >>> ruleset_data({"a": 1})
    {'a': 1}
    """
    if ruleset is None:
        return {}
    if hasattr(ruleset, "to_dict"):
        return ruleset.to_dict()
    return ruleset


def setup_data(setup: Any, arguments: dict) -> Any:
    """The setup part of a store key: *setup* when given, else the function's arguments
    (rules and ruleset left out: they have their own part) as JSON-ready data.

    >>> setup_data(None, {"count": 2, "rules": {"push": True}})
    {'count': 2}
    """
    if setup is not None:
        return setup
    return {name: ruleset_data(value) for name, value in arguments.items() if name not in ("rules", "ruleset")}


@dataclass(frozen=True)
class TableJob:
    """One table (or one list of tables) to build: which function, with what, keyed how.

    Parameters
    ----------
    system : str
        The rules system (part of the store key).
    table : str
        The table's name (part of the store key).
    function : str
        ``"module:function"`` building the grid(s) from *arguments*.
    arguments : dict, optional
        The function's keyword arguments (picklable: ruleset objects are fine).
    ruleset : Any, optional
        The ruleset's JSON-ready description, for the store key.
    setup, policies : Any, optional
        JSON-ready parts of the key; default: the JSON-ready parts of *arguments*.
    """

    system: str
    table: str
    function: str
    arguments: dict = field(default_factory=dict)
    ruleset: Any = None
    setup: Any = None
    policies: Any = None

    def key(self) -> ResultKey:
        """The store key: system, ruleset, setup (table name + arguments), policies."""
        setup = setup_data(self.setup, self.arguments)
        return ResultKey(
            self.system,
            ruleset_data(self.ruleset),
            {"table": self.table, "function": self.function, "setup": setup, "grid_format": GRID_FORMAT},
            self.policies if self.policies is not None else {},
        )


def build_job(job: TableJob) -> list[dict]:
    """Call the job's function; the grid(s) it returns as `TableGrid.to_dict` data.

    Top-level so worker processes can run it.
    """
    produced = _named_function(job.function)(**job.arguments)
    grids = [produced] if isinstance(produced, TableGrid) else list(produced)
    return [grid.to_dict() for grid in grids]


def _named_function(name: str):
    module_name, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


@dataclass(frozen=True)
class CellGrid:
    """A grid solved one cell at a time: each cell is its own sweep task and store row.

    For long solves (a Karbon contest per cell), so that an interrupted sweep loses at
    most the cells in flight. Cell (r, c) is ``function(**arguments, row_argument=row
    value, column_argument=column value)``, which returns ``{metric: exact value}``
    (at least every name in ``metrics``, headline first).

    Parameters
    ----------
    system, table : str
        The rules system and the table's name (part of the store key).
    function : str
        ``"module:function"`` solving one cell.
    row_argument, column_argument : str
        The function's arguments that the rows and columns set.
    rows, columns : tuple of (str, Any)
        ``(label, value)`` pairs; values must be JSON-ready (they are part of the key).
    metrics : tuple of str
        The metrics of the table, headline first.
    title, row_label, column_label : str
        As for `TableGrid`.
    arguments : dict, optional
        The function's other keyword arguments.
    ruleset, policies, setup : Any, optional
        JSON-ready parts of the store key.
    legend : dict, optional
        As for `TableGrid`.
    probability_metrics : tuple of str, optional
        As for `TableGrid`.

    Examples
    --------
    >>> grid = CellGrid(system="demo", table="quotients", function="exactdice.tables.jobs:demo_cell",
    ...                 row_argument="numerator", column_argument="denominator",
    ...                 rows=(("1", 1), ("2", 2)), columns=(("3", 3),), metrics=("P(x)",),
    ...                 title="n / d", row_label="n", column_label="d")
    >>> solve_tables([grid], store=None, workers=1, progress=False)[0].metrics
    {'P(x)': [[Fraction(1, 3)], [Fraction(2, 3)]]}
    """

    system: str
    table: str
    function: str
    row_argument: str
    column_argument: str
    rows: tuple
    columns: tuple
    metrics: tuple
    title: str
    row_label: str
    column_label: str
    arguments: dict = field(default_factory=dict)
    ruleset: Any = None
    policies: Any = None
    setup: Any = None
    legend: dict = field(default_factory=dict)
    probability_metrics: tuple | None = None

    def cell_tasks(self) -> list[tuple[ResultKey, tuple]]:
        """(store key, task) of every cell, row by row."""
        base = setup_data(self.setup, self.arguments)
        tasks = []
        for _, row_value in self.rows:
            for _, column_value in self.columns:
                cell_arguments = dict(self.arguments)
                cell_arguments[self.row_argument] = row_value
                cell_arguments[self.column_argument] = column_value
                setup = {
                    "table": self.table,
                    "function": self.function,
                    "setup": base,
                    "cell": {self.row_argument: row_value, self.column_argument: column_value},
                }
                key = ResultKey(
                    self.system, ruleset_data(self.ruleset), setup, self.policies if self.policies is not None else {}
                )
                tasks.append((key, (self.function, cell_arguments)))
        return tasks

    def assemble(self, results: list[dict]) -> TableGrid:
        """The grid from the cell results (row by row, as `cell_tasks` lists them)."""
        width = len(self.columns)
        metrics = {
            name: [[results[r * width + c].get(name) for c in range(width)] for r in range(len(self.rows))]
            for name in self.metrics
        }
        return TableGrid(
            title=self.title,
            row_label=self.row_label,
            column_label=self.column_label,
            rows=[label for label, _ in self.rows],
            columns=[label for label, _ in self.columns],
            metrics=metrics,
            legend=dict(self.legend),
            probability_metrics=self.probability_metrics,
        )


def run_task(task) -> Any:
    """Solve one sweep task: a whole `TableJob`, or one cell ``(function name, arguments)``.

    Top-level so worker processes can run it.

    >>> run_task(("exactdice.tables.jobs:demo_cell", {"numerator": 1, "denominator": 4}))
    {'P(x)': Fraction(1, 4)}
    """
    if isinstance(task, TableJob):
        return build_job(task)
    function, arguments = task
    result = _named_function(function)(**arguments)
    if not isinstance(result, dict):
        raise TypeError(f"{function} must return a dict of metric -> exact value, got {type(result).__name__}")
    return result


def solve_table_jobs(
    jobs: list[TableJob | CellGrid],
    *,
    store: ResultStore | None,
    workers: int = 2,
    progress: bool | ProgressCallback | None = True,
    description: str = "tables",
    statistics: SweepStatistics | None = None,
    executor: Executor | None = None,
) -> list[list[TableGrid]]:
    """The grids of each job (a list per job, in job order), in one sweep over every core.

    A `TableJob` is one task (its function builds whole grids); a `CellGrid` is one task a
    cell. Everything goes through the store.

    Parameters
    ----------
    jobs : list of TableJob or CellGrid
        The tables.
    store : ResultStore or None
        The results store (None: no cache).
    workers : int, default 2
        Local processes (``1``: this process).
    progress : bool or callable, default True
        A progress callback given a report per cell, or True for a bar on stderr (`sweep`).
    description : str, default "tables"
        The progress reports' stage.
    statistics : SweepStatistics, optional
        Filled with how many cells were cached and solved.
    executor : concurrent.futures.Executor, optional
        See `sweep` (None: a local pool of *workers* processes).

    Returns
    -------
    list of list of TableGrid
        One list of grids per job.

    Examples
    --------
    >>> jobs = [TableJob("demo", "r", "exactdice.tables.jobs:demo_table", {"size": 2})]
    >>> [[grid.rows for grid in grids] for grids in solve_table_jobs(jobs, store=None, workers=1,
    ...                                                              progress=False)]
    [[['1', '2']]]
    """
    cells, spans = [], []
    for job in jobs:
        if isinstance(job, CellGrid):
            tasks = job.cell_tasks()
            spans.append((len(cells), len(tasks)))
            cells += [SweepCell(key, task) for key, task in tasks]
        elif isinstance(job, TableJob):
            spans.append((len(cells), 1))
            cells.append(SweepCell(job.key(), job))
        else:
            raise TypeError(f"expected TableJob or CellGrid, got {type(job).__name__}")
    results = sweep(
        cells,
        run_task,
        store=store,
        workers=workers,
        progress=progress,
        description=description,
        statistics=statistics,
        executor=executor,
    )
    grids = []
    for job, (start, count) in zip(jobs, spans):
        if isinstance(job, CellGrid):
            grids.append([job.assemble(results[start : start + count])])
        else:
            grids.append([TableGrid.from_dict(data) for data in results[start]])
    return grids


def solve_tables(
    jobs: list[TableJob | CellGrid],
    *,
    store: ResultStore | None,
    workers: int = 2,
    progress: bool | ProgressCallback | None = True,
    description: str = "tables",
    statistics: SweepStatistics | None = None,
    executor: Executor | None = None,
) -> list[TableGrid]:
    """Every grid of every job, in job order (a job may give several grids).

    Parameters
    ----------
    jobs, store, workers, progress, description, statistics, executor
        As for `solve_table_jobs`.

    Returns
    -------
    list of TableGrid
        The grids, flattened in job order.

    Examples
    --------
    >>> jobs = [TableJob("demo", "r", "exactdice.tables.jobs:demo_table", {"size": n})
    ...         for n in (1, 3)]
    >>> [len(grid.rows) for grid in solve_tables(jobs, store=None, workers=1, progress=False)]
    [1, 3]
    """
    per_job = solve_table_jobs(
        jobs,
        store=store,
        workers=workers,
        progress=progress,
        description=description,
        statistics=statistics,
        executor=executor,
    )
    return [grid for grids in per_job for grid in grids]


def demo_cell(numerator: int, denominator: int) -> dict:
    """One cell for examples and tests: ``{"P(x)": numerator / denominator}``.

    >>> demo_cell(1, 2)
    {'P(x)': Fraction(1, 2)}
    """
    return {"P(x)": Fraction(numerator, denominator)}


def demo_table(size: int = 3) -> TableGrid:
    """A tiny grid of reciprocals (rows n = 1..size, one column): for examples and tests.

    >>> demo_table(2).metrics["P(x)"]
    [[Fraction(1, 1)], [Fraction(1, 2)]]
    """
    return TableGrid(
        title=f"reciprocals up to {size}",
        row_label="n",
        column_label="-",
        rows=[str(n) for n in range(1, size + 1)],
        columns=["1/n"],
        metrics={"P(x)": [[Fraction(1, n)] for n in range(1, size + 1)]},
        legend={"what": "P(x) = 1/n"},
    )
