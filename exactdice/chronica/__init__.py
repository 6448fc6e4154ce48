"""Chronica Mutanis Mundi contests: exact odds for any number of sides and pools.

>>> from exactdice.chronica import solve_contest, parse_side
>>> result = solve_contest([parse_side("d6"), parse_side("d6")])
>>> result.tie, result.win
(Fraction(1, 6), (Fraction(5, 12), Fraction(5, 12)))
"""

from exactdice.chronica.contest import (
    OUTCOME_COLUMN,
    TIE,
    ContestResult,
    apply_physical,
    apply_target,
    expected_distribution,
    roll_outcomes,
    sizes_text,
    solve_contest,
)
from exactdice.chronica.ruleset import (
    MAX_CONTEST_DICE,
    PHYSICAL_DICE,
    TIE_RULES,
    Rules,
    dice_text,
    parse_dice_list,
    parse_die,
    parse_side,
    side_text,
)

__all__ = [
    "Rules",
    "TIE_RULES",
    "PHYSICAL_DICE",
    "MAX_CONTEST_DICE",
    "parse_die",
    "parse_dice_list",
    "parse_side",
    "side_text",
    "ContestResult",
    "solve_contest",
    "roll_outcomes",
    "expected_distribution",
    "OUTCOME_COLUMN",
    "TIE",
    "sizes_text",
    "apply_target",
    "apply_physical",
    "dice_text",
]
