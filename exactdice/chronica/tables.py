"""The difficulty table: player pools of two and three dice against static oppositions.

Rows are player pools (d4..d12, two or three dice), columns static oppositions of
three equal dice (3d4 ... 3d12); metrics P(win), P(tie) and expected success dice.

>>> grid = difficulty_table(player_dice=1, sizes=(4, 6))
>>> grid.rows, grid.cell("P(win)", 0, 0)  # d6 against 3d4
(['d6', 'd4'], Fraction(41, 96))
"""

from __future__ import annotations

from itertools import combinations_with_replacement

from exactdice.chronica.contest import solve_contest
from exactdice.chronica.ruleset import Rules, dice_text
from exactdice.errors import InputError
from exactdice.tables.grid import TableGrid
from exactdice.tables.jobs import TableJob

__all__ = ["difficulty_table", "table_jobs", "TABLE_SIZES"]

#: the die sizes of the table (the pages' usual dice)
TABLE_SIZES = (4, 6, 8, 10, 12)


def difficulty_table(
    player_dice: int = 2, rules: Rules | None = None, sizes: tuple[int, ...] = TABLE_SIZES
) -> TableGrid:
    """P(win), P(tie) and expected success dice of the player against 3dN oppositions."""
    if player_dice < 1 or player_dice > 4:
        raise InputError("player_dice", f"must be between 1 and 4, got {player_dice}")
    rules = rules or Rules()
    pools = [
        tuple(sorted(p, reverse=True)) for p in combinations_with_replacement(sorted(sizes, reverse=True), player_dice)
    ]
    metrics = {"P(win)": [], "P(tie)": [], "E[success dice]": []}
    for pool in pools:
        rows = {name: [] for name in metrics}
        for size in sizes:
            result = solve_contest([(pool,), ((size,) * 3,)], rules)
            rows["P(win)"].append(result.win[0])
            rows["P(tie)"].append(result.tie)
            expected = sum((p * len(s) for (w, s), p in result.size_outcomes.items() if w == 0), 0)
            rows["E[success dice]"].append(expected)
        for name in metrics:
            metrics[name].append(rows[name])
    return TableGrid(
        title=f"Chronica: {player_dice} player dice against three equal opposition dice",
        row_label="player pool",
        column_label="opposition",
        rows=[dice_text(pool) for pool in pools],
        columns=[f"3d{size}" for size in sizes],
        metrics=metrics,
        legend={
            "rules": rules.describe(),
            "E[success dice]": "expected success dice of the player (0 when it loses or ties)",
            "policy": "a pool discards its smallest die of a tied value",
        },
        probability_metrics=("P(win)", "P(tie)"),
    )


def table_jobs(rules: Rules | None = None, player_dice=(2, 3)) -> list[TableJob]:
    """One job a player pool size, solving `difficulty_table` through the results store.

    >>> [job.arguments["player_dice"] for job in table_jobs()]
    [2, 3]
    """
    rules = rules or Rules()
    return [
        TableJob(
            system="chronica",
            table="difficulty",
            function="exactdice.chronica.tables:difficulty_table",
            arguments={"player_dice": count, "rules": rules},
            ruleset=rules,
        )
        for count in player_dice
    ]
