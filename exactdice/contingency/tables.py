"""Difficulty tables: P(success) for every 3-die pool of d4..d12 against the named difficulties.

Three grids (normal, advantage, disadvantage); rows are pools like ``d4,d6,d8``
(35 multisets), columns the seed's named difficulties 1 Automatic .. 11 Near Impossible.

>>> grid = difficulty_table("normal")
>>> len(grid.rows), len(grid.columns), grid.rows[0]
(35, 11, 'd4,d4,d4')
"""

from __future__ import annotations

from itertools import combinations_with_replacement

from exactdice.contingency.check import skill_check, solve_check
from exactdice.contingency.ruleset import Rules
from exactdice.errors import InputError
from exactdice.tables.grid import TableGrid
from exactdice.tables.jobs import TableJob

__all__ = [
    "NAMED_DIFFICULTIES",
    "STANDARD_DICE",
    "ROLL_KINDS",
    "standard_pools",
    "difficulty_table",
    "difficulty_tables",
    "table_jobs",
]

#: the seed's "Typical Difficulty Targets"
NAMED_DIFFICULTIES = {
    1: "Automatic",
    2: "Very Easy",
    3: "Easy",
    4: "Moderate",
    5: "Tricky",
    6: "Hard",
    7: "Difficult",
    8: "Very Difficult",
    9: "Improbable",
    10: "Inconceivable",
    11: "Near Impossible",
}
STANDARD_DICE = (4, 6, 8, 10, 12)
#: roll kind -> (advantage units, disadvantage units)
ROLL_KINDS = {"normal": (0, 0), "advantage": (1, 0), "disadvantage": (0, 1)}

SUCCESS = "P(success)"
SUCCESS_OR_CONDITION = "P(success or success-with-condition)"


def standard_pools() -> list[tuple[int, int, int]]:
    """The 35 pools of three dice from d4, d6, d8, d10, d12 (sizes ascending).

    >>> len(standard_pools()), standard_pools()[-1]
    (35, (12, 12, 12))
    """
    return list(combinations_with_replacement(STANDARD_DICE, 3))


def difficulty_table(kind: str = "normal", rules: Rules = Rules()) -> TableGrid:
    """One grid: P(success) and P(success or success-with-condition), pools x difficulties.

    >>> difficulty_table("advantage").cell("P(success)", 0, 0)
    Fraction(1, 1)
    """
    if kind not in ROLL_KINDS:
        raise InputError("kind", f"must be one of {', '.join(ROLL_KINDS)}, got {kind!r}")
    advantage, disadvantage = ROLL_KINDS[kind]
    success_rows, condition_rows = [], []
    for pool in standard_pools():
        solution = solve_check(skill_check(pool, advantage=advantage, disadvantage=disadvantage, difficulty=1), rules)
        success_rows.append([solution.p_at_least.get(level, 0) for level in NAMED_DIFFICULTIES])
        condition_rows.append([solution.p_at_least_with_condition.get(level, 0) for level in NAMED_DIFFICULTIES])
    return TableGrid(
        title=f"Contingency skill checks: P(success), {kind} roll",
        row_label="pool",
        column_label="difficulty",
        rows=[",".join(f"d{size}" for size in pool) for pool in standard_pools()],
        columns=[f"{level} {name}" for level, name in NAMED_DIFFICULTIES.items()],
        metrics={SUCCESS: success_rows, SUCCESS_OR_CONDITION: condition_rows},
        legend={
            "system": "Contingency",
            "roll": kind,
            "rules": rules.describe(),
            "success": "the result die (plus any luck die) is at least the difficulty",
            "success-with-condition": "a total of exactly difficulty - 1, when fail_by_one=take",
        },
    )


def difficulty_tables(rules: Rules = Rules()) -> list[TableGrid]:
    """The three difficulty grids: normal, advantage, disadvantage."""
    return [difficulty_table(kind, rules) for kind in ROLL_KINDS]


def table_jobs(rules: Rules = Rules(), kinds=tuple(ROLL_KINDS)) -> list[TableJob]:
    """One job a roll kind, solving `difficulty_table` through the results store.

    >>> [job.arguments["kind"] for job in table_jobs(kinds=("advantage",))]
    ['advantage']
    """
    return [
        TableJob(
            system="contingency",
            table="difficulty",
            function="exactdice.contingency.tables:difficulty_table",
            arguments={"kind": kind, "rules": rules},
            ruleset=rules,
        )
        for kind in kinds
    ]
