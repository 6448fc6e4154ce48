"""exactdice: exact odds for tabletop dice mechanics.

>>> from exactdice import d, Pool
>>> (d(6).sum_of(3)).probability(10)
Fraction(1, 8)
>>> Pool([d(6), d(8), d(10)]).order_statistic(1).mean()
Fraction(173, 40)
"""

from exactdice.core import Distribution, NotationError, Pool, constant, d, evaluate_sorted, parse_dice
from exactdice.errors import ExactdiceError, InputError, TooLargeError

__version__ = "0.1.0"

__all__ = [
    "Distribution",
    "Pool",
    "d",
    "constant",
    "evaluate_sorted",
    "parse_dice",
    "ExactdiceError",
    "InputError",
    "TooLargeError",
    "NotationError",
    "__version__",
]
