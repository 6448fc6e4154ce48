"""Small grids shared by the tables tests (probabilities, a non-probability metric, gaps)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from exactdice.tables.grid import TableGrid


def sample_grid(seed: int = 1, rows: int = 4, columns: int = 5, title: str = "Sample: P(win) — A × C") -> TableGrid:
    """A grid with P(win), P(tie), P(loss) summing to 1 per cell, E[rounds], and one gap."""
    generator = random.Random(seed)
    win, tie, loss, rounds = [], [], [], []
    for _ in range(rows):
        win_row, tie_row, loss_row, rounds_row = [], [], [], []
        for _ in range(columns):
            denominator = generator.randint(2, 10**6)
            a = generator.randint(0, denominator)
            b = generator.randint(0, denominator - a)
            win_row.append(Fraction(a, denominator))
            tie_row.append(Fraction(b, denominator))
            loss_row.append(Fraction(denominator - a - b, denominator))
            rounds_row.append(Fraction(generator.randint(10, 10**5), generator.randint(1, 997)))
        win.append(win_row)
        tie.append(tie_row)
        loss.append(loss_row)
        rounds.append(rounds_row)
    win[0][0] = tie[0][0] = loss[0][0] = rounds[0][0] = None
    return TableGrid(
        title=title,
        row_label="Ability",
        column_label="Challenge",
        rows=[str(r + 1) for r in range(rows)],
        columns=[str(c + 1) for c in range(columns)],
        metrics={"P(win)": win, "P(tie)": tie, "P(loss)": loss, "E[rounds]": rounds},
        legend={"ruleset": "tie_order=player_first", "policies": "player optimal | narrator fixed"},
    )


@pytest.fixture
def make_grid():
    """The `sample_grid` factory."""
    return sample_grid
