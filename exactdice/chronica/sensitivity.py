"""What each reading of the Chronica rules changes over the canonical difficulty tables.

`rules_sensitivity` gives the `exactdice.tables.sensitivity.RulesSensitivity` of the
canonical grid (`exactdice.chronica.tables`: player pools of two and three dice of d4..d12
against 3d4 ... 3d12): every other value of every knob against the default, P(win) and
P(tie) per cell. ``push`` is read with one push and no push dice (its defaults when on).

>>> [name for name, _ in rules_sensitivity().readings]
['default', 'tie_rule=four-ties', 'push=on', 'physical=on']
"""

from __future__ import annotations

from exactdice.chronica.ruleset import TIE_RULES, Rules
from exactdice.chronica.tables import difficulty_table
from exactdice.tables.sensitivity import RulesSensitivity, grid_cells

__all__ = ["rules_sensitivity", "READINGS", "PLAYER_DICE"]

READINGS = [(f"tie_rule={value}", Rules(tie_rule=value)) for value in TIE_RULES[1:]] + [
    ("push=on", Rules(push=True)),
    ("physical=on", Rules(physical=True)),
]
#: the canonical tables' player pool sizes
PLAYER_DICE = (2, 3)


def _solve(rules_list, **_sweep_options) -> list[dict]:
    # exact and cheap (seconds for all readings): solved here, no store
    return [
        {
            label: values
            for count in PLAYER_DICE
            for label, values in grid_cells(difficulty_table(count, rules), f"{count} dice: ").items()
        }
        for rules in rules_list
    ]


def rules_sensitivity() -> RulesSensitivity:
    """Every reading against the default over the two canonical difficulty grids."""
    return RulesSensitivity(
        "Chronica Mutanis Mundi",
        "player pools of two and three dice of d4..d12 (15 and 35 pools) against 3d4 ... 3d12 "
        "(250 cells, labelled N dice: pool / opposition)",
        [("default", Rules())] + READINGS,
        ("P(win)", "P(tie)"),
        _solve,
        (
            "physical=on changes nothing here: every die of these tables exists as a physical die, so "
            "none is replaced and the first side's instant win on a first tie never applies (exactly 0). "
            "tie_rule=four-ties cannot act either: three dice a side allow at most three discards.",
        ),
    )
