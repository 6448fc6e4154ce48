"""The difficulty table agrees with single solves."""

from __future__ import annotations

import sys
from pathlib import Path

from exactdice.chronica import Rules, solve_contest
from exactdice.chronica.tables import difficulty_table

sys.path.insert(0, str(Path(__file__).parent))
from chronica_reference import brute_force  # noqa: E402


def test_table_cells_are_single_contests():
    grid = difficulty_table(player_dice=2, sizes=(4, 8))
    assert grid.rows == ["2d8", "d8,d4", "2d4"] and grid.columns == ["3d4", "3d8"]
    result = solve_contest([((8, 4),), ((8, 8, 8),)])
    assert grid.cell("P(win)", 1, 1) == result.win[0]
    assert grid.cell("P(tie)", 1, 1) == result.tie
    assert grid.cell("E[success dice]", 1, 1) == sum(p * n for n, p in result.successes[0].items())
    assert grid.is_probability("P(win)") and not grid.is_probability("E[success dice]")


def test_table_rules_knob_reaches_the_cells():
    plain = difficulty_table(player_dice=3, sizes=(4,))
    pushed = difficulty_table(player_dice=3, rules=Rules(push=True, max_pushes=1), sizes=(4,))
    assert pushed.cell("P(tie)", 0, 0) == plain.cell("P(tie)", 0, 0) ** 2
    assert "push on" in pushed.legend["rules"]


def test_default_table_shape():
    grid = difficulty_table(player_dice=1)
    assert len(grid.rows) == 5 and len(grid.columns) == 5
    assert grid.cell("P(win)", 4, 4) == solve_contest([((4,),), ((12, 12, 12),)]).win[0]
    assert all(0 <= value <= 1 for row in grid.metrics["P(win)"] for value in row)
    reference = brute_force([((12,),), ((4, 4, 4),)])
    assert grid.cell("P(win)", 0, 0) == sum(p for (winner, _, _), p in reference.items() if winner == 0)
