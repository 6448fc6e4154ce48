"""What each reading of the Contingency rules changes over the canonical difficulty tables.

`rules_sensitivity` gives the `exactdice.tables.sensitivity.RulesSensitivity` of the
canonical grid (`exactdice.contingency.tables`: the 35 three-die pools of d4..d12 x the 11
named difficulties, normal, advantage and disadvantage): every other value of every knob
against the default, P(success) and P(success or success-with-condition) per cell.

>>> spec = rules_sensitivity()
>>> [name for name, _ in spec.readings][:3]
['default', 'luck=always', 'luck=if-failing']
"""

from __future__ import annotations

from exactdice.contingency.ruleset import FAIL_BY_ONE_POLICIES, GM_OMEN_RULES, LUCK_POLICIES, Rules
from exactdice.contingency.tables import NAMED_DIFFICULTIES, ROLL_KINDS, SUCCESS, SUCCESS_OR_CONDITION, difficulty_table
from exactdice.tables.sensitivity import RulesSensitivity, grid_cells

__all__ = ["rules_sensitivity", "READINGS"]

#: every reading other than the default, by knob value (a knob's default comes first in its list)
READINGS = (
    [(f"luck={value}", Rules(luck=value)) for value in LUCK_POLICIES[1:]]
    + [(f"fail_by_one={value}", Rules(fail_by_one=value)) for value in FAIL_BY_ONE_POLICIES[1:]]
    + [("luck_modifier=on", Rules(luck_modifier=True))]
    + [(f"gm_omen={value}", Rules(gm_omen=value)) for value in GM_OMEN_RULES[1:]]
    + [("any_size=on", Rules(any_size=True))]
)


def _solve(rules_list, **_sweep_options) -> list[dict]:
    # exact and cheap (a few ms a table): solved here, no store
    return [
        {
            label: values
            for kind in ROLL_KINDS
            for label, values in grid_cells(difficulty_table(kind, rules), f"{kind}: ").items()
        }
        for rules in rules_list
    ]


def rules_sensitivity() -> RulesSensitivity:
    """Every reading against the default over the three canonical difficulty grids."""
    return RulesSensitivity(
        "Contingency",
        f"the 35 three-die pools of d4..d12 x the {len(NAMED_DIFFICULTIES)} named difficulties, "
        f"{', '.join(ROLL_KINDS)} rolls ({35 * len(NAMED_DIFFICULTIES) * len(ROLL_KINDS)} cells; "
        "cells are labelled roll: pool / difficulty)",
        [("default", Rules())] + READINGS,
        (SUCCESS, SUCCESS_OR_CONDITION),
        _solve,
        (
            "gm_omen only changes the moderator's omens and any_size only allows other pool sizes, "
            "so neither moves a cell of these tables (exactly 0).",
        ),
    )
