"""A toy rules system in one module: a single die against a target.

It exists to show (and test) what a new system needs: a `Rules` type, declared setup
parameters, an exact distribution, an independent simulator returning columns, an
outcome column and a table, wrapped in one `exactdice.systems.DeclaredSystem` (which fits
`exactdice.systems.RulesSystem`). Registering it (``register("toy-die", SYSTEM)``) is all
it takes for ``exactdice toy-die exact|simulate|table`` and ``exactdice validate toy-die``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from exactdice.core import d
from exactdice.errors import InputError
from exactdice.systems import DeclaredSystem, Parameter, TableSet
from exactdice.tables.grid import TableGrid
from exactdice.tables.jobs import TableJob

OUTCOME_COLUMN = "outcome"


@dataclass(frozen=True)
class Rules:
    """One knob: a natural 1 always fails (even against a target of 1)."""

    one_fails: bool = False


PARAMETERS = (
    Parameter("sides", int, 6, "Sides of the die.", minimum=1, maximum=1000),
    Parameter("target", int, 4, "Success when the die shows at least this.", required=True),
    Parameter("one_fails", bool, False, "A natural 1 always fails.", role="rules"),
)


def success(sides: int, target: int, rules: Rules = Rules()) -> Fraction:
    """Exact P(success) of one dN against a target.

    >>> success(6, 4), success(6, 1, Rules(one_fails=True))
    (Fraction(1, 2), Fraction(5, 6))
    """
    if sides < 1:
        raise InputError("sides", f"must be >= 1, got {sides}")
    lowest = max(target, 2 if rules.one_fails else 1)
    return d(sides).at_least(lowest) if lowest <= sides else Fraction(0)


def simulate(sides: int, target: int, rules: Rules, *, n: int, seed: int) -> dict:
    """``n`` seeded rolls as columns ``trial``, ``face``, ``outcome`` (no exact code used)."""
    if n < 1:
        raise InputError("n", f"must be >= 1, got {n}")
    faces = np.random.Generator(np.random.PCG64(seed)).integers(1, sides + 1, size=n)
    hit = (faces >= target) & ~((faces == 1) & rules.one_fails)
    return {"trial": np.arange(n), "face": faces, OUTCOME_COLUMN: np.where(hit, "success", "failure")}


def target_table(rules: Rules = Rules()) -> TableGrid:
    """P(success) for d4..d12 (rows) against targets 1..12 (columns)."""
    sizes, targets = (4, 6, 8, 10, 12), range(1, 13)
    return TableGrid(
        title="Toy die: P(success)",
        row_label="die",
        column_label="target",
        rows=[f"d{size}" for size in sizes],
        columns=[str(t) for t in targets],
        metrics={"P(success)": [[success(size, t, rules) for t in targets] for size in sizes]},
    )


def _exact(setup: Mapping, rules: Rules) -> dict:
    p = success(setup["sides"], setup["target"], rules)
    return {"success": p, "failure": 1 - p}


def _simulate(setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
    return simulate(setup["sides"], setup["target"], rules, n=n, seed=seed)


def _table_sets() -> list[TableSet]:
    job = TableJob(
        system="toy-die",
        table="targets",
        function="toy_die:target_table",
        arguments={"rules": Rules()},
        ruleset={"one_fails": "off"},
    )
    return [
        TableSet("toy-die", "targets", "P(success) of d4..d12 against targets 1..12", "exactdice toy-die table", (job,))
    ]


SYSTEM = DeclaredSystem(
    "toy-die",
    "Toy: one die against a target (success | failure).",
    Rules,
    PARAMETERS,
    exact=_exact,
    simulate=_simulate,
    outcome=OUTCOME_COLUMN,
    table_sets=_table_sets,
)
