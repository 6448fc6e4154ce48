"""What each reading of the Karst rules changes over the canonical tables.

`rules_sensitivity` gives the `exactdice.tables.sensitivity.RulesSensitivity` of the
canonical grid (`exactdice.karst.tables`): the action table, the attack table and the death
roll from negative health 0..6 (modifier 0), read under each rules object. Its knobs: how
opposed rolls compare (no canonical table holds one, so nothing moves) and aid actions per
round (the death table's columns; here aid 1 and 2 against the default 0).

>>> [name for name, _ in rules_sensitivity().readings]
['default', 'opposed=success-first', 'aid=1', 'aid=2']
"""

from __future__ import annotations

from exactdice.karst.death import solve_death
from exactdice.karst.ruleset import OPPOSED_RULES, Rules
from exactdice.karst.tables import AID_LEVELS, NEGATIVE_HEALTH, action_table, attack_table
from exactdice.tables.sensitivity import RulesSensitivity, grid_cells

__all__ = ["rules_sensitivity", "READINGS"]

READINGS = [(f"opposed={value}", Rules(opposed=value)) for value in OPPOSED_RULES[1:]] + [
    (f"aid={aid}", Rules(aid=aid)) for aid in AID_LEVELS[1:]
]


def _cells(rules: Rules) -> dict:
    # the action and attack rolls take no knob; they are in the grid so that it is the canonical one
    cells = {**grid_cells(action_table(), "action: "), **grid_cells(attack_table(), "attack: ")}
    for negative in NEGATIVE_HEALTH:
        cells[f"death: negative health {negative}"] = {"P(death)": solve_death(negative, 0, rules).death}
    for values in cells.values():
        values.setdefault("P(death)", None)
        for metric in ("P(success)", "P(hit)"):
            values.setdefault(metric, None)
    return cells


def _solve(rules_list, **_sweep_options) -> list[dict]:
    return [_cells(rules) for rules in rules_list]


def rules_sensitivity() -> RulesSensitivity:
    """Every reading against the default over the canonical Karst tables."""
    return RulesSensitivity(
        "Karst",
        f"the action table (11 modifiers), the attack table (13 modifiers x 13 defenses) and the "
        f"death roll from negative health {NEGATIVE_HEALTH[0]}..{NEGATIVE_HEALTH[-1]}, modifier 0 "
        f"({11 + 169 + len(NEGATIVE_HEALTH)} cells)",
        [("default", Rules())] + READINGS,
        ("P(success)", "P(hit)", "P(death)"),
        _solve,
        (
            "opposed only changes opposed action rolls, which no canonical table holds (exactly 0); "
            "aid is the death table's column, so aid=1 and aid=2 compare its columns with column 0.",
        ),
    )
