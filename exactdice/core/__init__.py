"""The dice core: exact distributions, pools of mixed dice, dice notation (no game knowledge)."""

from exactdice.core.distribution import MAX_FACES, Distribution, constant, d
from exactdice.core.exact import decimal_text, fraction_text, parse_fraction, to_fraction
from exactdice.core.notation import MAX_NOTATION_DICE, NotationError, parse_dice
from exactdice.core.pool import MAX_POOL_DICE, Pool, evaluate_sorted

__all__ = [
    "Distribution",
    "d",
    "constant",
    "Pool",
    "evaluate_sorted",
    "parse_dice",
    "NotationError",
    "fraction_text",
    "parse_fraction",
    "decimal_text",
    "to_fraction",
    "MAX_FACES",
    "MAX_NOTATION_DICE",
    "MAX_POOL_DICE",
]
