"""Rules sensitivity tables: each reading of a system's rules against the default, over a grid.

A system describes its canonical comparison as a `RulesSensitivity`: the readings (the
default first, then every other value of every knob), and how to solve the grid's cells
under all of them (a cell is a label and its exact probabilities). `compare_readings`
then says, for every reading and probability, how many cells move by more than a
threshold (1 percentage point by default) and which cell moves most, from what to what.
Every number underneath is exact; the Markdown shows percentages, the JSON fractions.

>>> default = {"a": {"P(x)": Fraction(1, 2)}, "b": {"P(x)": Fraction(1, 4)}}
>>> other = {"a": {"P(x)": Fraction(1, 2)}, "b": {"P(x)": Fraction(1, 3)}}
>>> [effect] = compare_readings(default, {"knob=on": other}, ("P(x)",))
>>> effect.moved, effect.largest_cell, effect.largest_from, effect.largest_to
(1, 'b', Fraction(1, 4), Fraction(1, 3))
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from exactdice.core.exact import fraction_text

__all__ = [
    "RulesSensitivity",
    "ReadingEffect",
    "SensitivityTable",
    "compare_readings",
    "grid_cells",
    "rules_sensitivity_table",
    "sensitivity_markdown",
    "sensitivity_json",
    "write_sensitivity",
    "THRESHOLD",
    "FORMAT",
    "FOLDER",
    "STEM",
]

#: a cell "moves" when a probability changes by more than this (1 percentage point)
THRESHOLD = Fraction(1, 100)
#: the JSON document's format name
FORMAT = "exactdice-sensitivity/1"

Cells = dict[str, dict[str, Fraction]]


@dataclass(frozen=True)
class RulesSensitivity:
    """A system's canonical comparison of its readings.

    - ``readings``: (name, rules) pairs, the default first (its name is ``"default"``);
    - ``solve(rules_list, **sweep options)``: the cells under each rules object, in order;
    - ``metrics``: the probabilities compared; ``grid``: the grid, in words.
    """

    system: str
    grid: str
    readings: list[tuple[str, object]]
    metrics: tuple[str, ...]
    solve: Callable[..., list[Cells]]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadingEffect:
    """How one reading moves one probability over the grid."""

    reading: str
    metric: str
    cells: int
    moved: int
    largest_cell: str | None
    largest_from: Fraction | None
    largest_to: Fraction | None

    @property
    def largest_move(self) -> Fraction:
        """The largest change (to minus from), 0 when nothing moves."""
        return Fraction(0) if self.largest_cell is None else self.largest_to - self.largest_from


@dataclass(frozen=True)
class SensitivityTable:
    """The comparison of every reading (`ReadingEffect` rows) and the default's description."""

    spec: RulesSensitivity
    effects: list[ReadingEffect]
    default_rules: str
    seconds: float = 0.0


def grid_cells(grid, prefix: str = "") -> Cells:
    """A `TableGrid`'s probability cells as ``{label: {metric: value}}``.

    >>> from exactdice.tables.grid import TableGrid
    >>> grid_cells(TableGrid("t", "r", "c", ["1"], ["x"], {"P(win)": [[Fraction(1, 2)]]}), "t: ")
    {'t: 1 / x': {'P(win)': Fraction(1, 2)}}
    """
    metrics = grid.probability_metrics or tuple(grid.metrics)
    return {
        f"{prefix}{row} / {column}": {metric: grid.cell(metric, i, j) for metric in metrics}
        for i, row in enumerate(grid.rows)
        for j, column in enumerate(grid.columns)
    }


def compare_readings(
    default: Cells, readings: dict[str, Cells], metrics, threshold: Fraction = THRESHOLD
) -> list[ReadingEffect]:
    """One `ReadingEffect` per reading and metric, in the readings' order (see the module)."""
    effects = []
    for name, cells in readings.items():
        if set(cells) != set(default):
            raise ValueError(f"reading {name!r} has other cells than the default")
        for metric in metrics:
            moves = [
                (abs(cells[label][metric] - before[metric]), label)
                for label, before in default.items()
                if before[metric] is not None and cells[label][metric] is not None
            ]
            moved = sum(1 for move, _ in moves if move > threshold)
            largest, label = max(moves, key=lambda pair: pair[0], default=(0, None))
            if not largest:
                effects.append(ReadingEffect(name, metric, len(moves), moved, None, None, None))
                continue
            effects.append(
                ReadingEffect(name, metric, len(moves), moved, label, default[label][metric], cells[label][metric])
            )
    return effects


def rules_sensitivity_table(spec: RulesSensitivity, **sweep_options) -> SensitivityTable:
    """Solve the grid under every reading and compare each with the default."""
    import time

    started = time.perf_counter()
    names = [name for name, _ in spec.readings]
    solved = spec.solve([rules for _, rules in spec.readings], **sweep_options)
    for name, cells in zip(names, solved):
        for label, values in cells.items():
            for metric in spec.metrics:
                if values[metric] is not None and not 0 <= values[metric] <= 1:
                    raise ValueError(f"{name}, {label}: {metric} = {values[metric]} is not a probability")
    effects = compare_readings(solved[0], dict(zip(names[1:], solved[1:])), spec.metrics)
    default = spec.readings[0][1]
    default_rules = (
        default.describe()
        if hasattr(default, "describe")
        else ", ".join(f"{name}={value}" for name, value in default.to_dict().items())
    )
    return SensitivityTable(spec, effects, default_rules, time.perf_counter() - started)


def _percent(value: Fraction) -> str:
    return f"{100 * float(value):.2f} %"


def sensitivity_markdown(table: SensitivityTable) -> str:
    """The table as Markdown: one row per reading and probability."""
    spec = table.spec
    lines = [
        f"# {spec.system}: what each reading of the rules changes",
        "",
        f"Grid: {spec.grid}.",
        f"Default reading: {table.default_rules}.",
        f"A cell moves when the probability changes by more than {_percent(THRESHOLD)[:-2]} "
        "percentage point; the largest move is exact (the `.json` has the fractions).",
        "",
    ]
    lines += [f"{note}" for note in spec.notes]
    if spec.notes:
        lines.append("")
    lines += [
        "| reading | metric | cells moved > 1 point | largest move | cell | from | to |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    for effect in table.effects:
        if effect.largest_cell is None:
            lines.append(f"| {effect.reading} | {effect.metric} | 0 of {effect.cells} | exactly 0 | | | |")
            continue
        lines.append(
            f"| {effect.reading} | {effect.metric} | {effect.moved} of {effect.cells} | "
            f"{100 * float(effect.largest_move):+.2f} points | {effect.largest_cell} | "
            f"{_percent(effect.largest_from)} | {_percent(effect.largest_to)} |"
        )
    return "\n".join(lines) + "\n"


def sensitivity_json(table: SensitivityTable) -> dict:
    """The table as JSON-ready data, exact values as ``"p/q"`` strings."""

    def exact(value):
        return None if value is None else fraction_text(value)

    spec = table.spec
    return {
        "format": FORMAT,
        "system": spec.system,
        "grid": spec.grid,
        "default": table.default_rules,
        "threshold": exact(THRESHOLD),
        "notes": list(spec.notes),
        "effects": [
            {
                "reading": e.reading,
                "metric": e.metric,
                "cells": e.cells,
                "moved": e.moved,
                "largest_move": exact(e.largest_move),
                "cell": e.largest_cell,
                "from": exact(e.largest_from),
                "to": exact(e.largest_to),
            }
            for e in table.effects
        ],
    }


#: where a system's table goes, under its tables folder: a folder of its own, so that
#: ``tables/<system>/*.json`` stays the grids (the web page lists those)
FOLDER, STEM = "sensitivity", "rules"


def write_sensitivity(table: SensitivityTable, folder) -> list[str]:
    """Write ``sensitivity/rules.md`` and ``sensitivity/rules.json`` under a system's
    tables *folder*; their paths."""
    folder = Path(folder) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    markdown, document = folder / f"{STEM}.md", folder / f"{STEM}.json"
    markdown.write_text(sensitivity_markdown(table), encoding="utf-8")
    document.write_text(json.dumps(sensitivity_json(table), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [str(markdown), str(document)]
