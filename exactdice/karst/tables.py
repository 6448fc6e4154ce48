"""Karst tables: action success by modifier, attack hit chance, death-roll odds.

>>> grid = attack_table()
>>> len(grid.rows), len(grid.columns), grid.cell("P(hit)", 0, 0)
(13, 13, Fraction(11, 20))
"""

from __future__ import annotations

from fractions import Fraction

from exactdice.karst.death import solve_death
from exactdice.karst.rolls import action_success, attack_hit
from exactdice.karst.ruleset import Rules
from exactdice.tables.grid import TableGrid
from exactdice.tables.jobs import TableJob

__all__ = ["action_table", "attack_table", "death_table", "karst_tables", "table_jobs", "TABLES"]

ACTION_MODIFIERS = range(-5, 6)
ATTACK_MODIFIERS = range(-2, 11)
DEFENSES = range(8, 21)
NEGATIVE_HEALTH = range(0, 7)
AID_LEVELS = range(0, 3)


def action_table() -> TableGrid:
    """P(success) of an action roll for modifiers -5..+5 (one column).

    >>> action_table().cell("P(success)", 5, 0)
    Fraction(1, 6)
    """
    return TableGrid(
        title="Karst action rolls: P(success)",
        row_label="modifier",
        column_label="",
        rows=[f"{m:+d}" for m in ACTION_MODIFIERS],
        columns=["P(success)"],
        metrics={"P(success)": [[action_success(m)] for m in ACTION_MODIFIERS]},
        legend={"system": "Karst", "roll": "d6 + modifier >= 6; a natural 1 fails, a natural 6 succeeds"},
    )


def attack_table() -> TableGrid:
    """P(hit) of an attack roll: modifier -2..+10 (rows) x defense 8..20 (columns)."""
    return TableGrid(
        title="Karst attack rolls: P(hit)",
        row_label="attack modifier",
        column_label="defense",
        rows=[f"{m:+d}" for m in ATTACK_MODIFIERS],
        columns=[str(defense) for defense in DEFENSES],
        metrics={"P(hit)": [[attack_hit(m, defense) for defense in DEFENSES] for m in ATTACK_MODIFIERS]},
        legend={"system": "Karst", "roll": "d20 + modifier >= defense; a natural 20 hits, a natural 1 misses"},
    )


def death_table(modifier: int = 0) -> TableGrid:
    """P(death) and expected rounds of the death roll: negative health 0..6 x aid 0..2.

    >>> death_table().cell("P(death)", 2, 0)
    Fraction(3, 4)
    """
    death: list[list[Fraction]] = []
    rounds: list[list[Fraction]] = []
    for negative in NEGATIVE_HEALTH:
        solutions = [solve_death(negative, modifier, Rules(aid=aid)) for aid in AID_LEVELS]
        death.append([solution.death for solution in solutions])
        rounds.append([solution.expected_rounds for solution in solutions])
    return TableGrid(
        title="Karst death rolls: P(death)",
        row_label="negative health",
        column_label="aid per round",
        rows=[str(h) for h in NEGATIVE_HEALTH],
        columns=[str(aid) for aid in AID_LEVELS],
        metrics={"P(death)": death, "expected rounds": rounds},
        legend={
            "system": "Karst",
            "modifier": f"{modifier:+d}",
            "aid": "each aid action is an extra death roll before the end-of-round roll; "
            "its 1 only lowers health by one",
        },
        probability_metrics=("P(death)",),
    )


def karst_tables() -> list[TableGrid]:
    """Every Karst table."""
    return [action_table(), attack_table(), death_table()]


#: table name -> the function building it
TABLES = {
    "action": "exactdice.karst.tables:action_table",
    "attack": "exactdice.karst.tables:attack_table",
    "death": "exactdice.karst.tables:death_table",
}


def table_jobs(tables=tuple(TABLES), death_modifier: int = 0) -> list[TableJob]:
    """One job a Karst table; only the death table takes a modifier.

    >>> [job.table for job in table_jobs()]
    ['action', 'attack', 'death']
    """
    jobs = []
    for name in tables:
        arguments = {"modifier": death_modifier} if name == "death" else {}
        jobs.append(TableJob(system="karst", table=name, function=TABLES[name], arguments=arguments, ruleset=Rules()))
    return jobs
