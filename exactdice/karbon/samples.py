"""The simulator's samples: one row per contest (`COLUMNS`), written as CSV, summarised.

>>> summarize({"outcome": np.array(["win", "tie"]), "rounds": np.array([2, 4]),
...            "breaks": np.array([1, 0]), "glitches": np.array([0, 1]),
...            "injuries": np.array([0, 0]), "conditions": np.array([0, 1])})["means"]["rounds"]["mean"]
3.0
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from exactdice.output_files import open_output

__all__ = ["COLUMNS", "OUTCOMES", "write_samples_csv", "summarize"]

#: the columns of `exactdice.karbon.simulate.simulate`, one row per contest
COLUMNS = ("trial", "outcome", "rounds", "breaks", "glitches", "injuries", "conditions")
#: the values of its ``outcome`` column
OUTCOMES = ("win", "loss", "tie", "unfinished")


def write_samples_csv(result: Mapping[str, np.ndarray], path: str | Path) -> None:
    """Write the columns of `simulate` as CSV with a header row (`COLUMNS`).

    >>> import tempfile, os
    >>> rows = {"trial": np.array([0]), "outcome": np.array(["win"]), "rounds": np.array([3]),
    ...         "breaks": np.array([1]), "glitches": np.array([0]), "injuries": np.array([0]),
    ...         "conditions": np.array([0])}
    >>> path = os.path.join(tempfile.mkdtemp(), "s.csv"); write_samples_csv(rows, path)
    >>> open(path).read().splitlines()
    ['trial,outcome,rounds,breaks,glitches,injuries,conditions', '0,win,3,1,0,0,0']
    """
    with open_output(path, "out") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(zip(*(result[name].tolist() for name in COLUMNS)))


def summarize(result: Mapping[str, np.ndarray]) -> dict:
    """Counts and shares of each outcome, and the mean (with standard error) of each count column.

    >>> summarize({"outcome": np.array(["win", "loss"]), "rounds": np.array([2, 4]),
    ...            "breaks": np.array([1, 0]), "glitches": np.array([0, 1]),
    ...            "injuries": np.array([0, 0]), "conditions": np.array([0, 1])})["outcomes"]["win"]
    {'count': 1, 'share': 0.5}
    """
    outcome = result["outcome"]
    total = len(outcome)
    summary = {"contests": total, "outcomes": {}, "means": {}}
    for name in OUTCOMES:
        count = int((outcome == name).sum())
        summary["outcomes"][name] = {"count": count, "share": count / total if total else 0.0}
    for name in ("rounds", "breaks", "glitches", "injuries", "conditions"):
        values = np.asarray(result[name], dtype=float)
        error = float(values.std(ddof=1) / np.sqrt(total)) if total > 1 else 0.0
        summary["means"][name] = {"mean": float(values.mean()) if total else 0.0, "standard_error": error}
    return summary
