"""Distributions over a number of rounds, which have no last value, cut by the spec's rule.

The spec lists such a distribution exactly up to the first round past which less than
10^-12 of the mass remains, and gives that remaining mass (``rest``) exactly.

>>> cut = RoundsDistribution({0: Fraction(1, 2), 1: Fraction(1, 4)}, rest=Fraction(1, 4))
>>> cut.to_json()["rest"]
'1/4'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdice.errors import check_invariant
from exactdice.core.exact import fraction_text

__all__ = ["RoundsDistribution", "TAIL_MASS", "MAX_ROUNDS", "tail_is_small"]

#: stop listing rounds once less than this much probability remains
TAIL_MASS = Fraction(1, 10**12)
#: most rounds any iteration may list before giving up (a TooLargeError)
MAX_ROUNDS = 200_000


def tail_is_small(remaining_weight: int, denominator: int) -> bool:
    """True when ``remaining_weight / denominator`` is below `TAIL_MASS` (integers only).

    >>> tail_is_small(1, 10**13), tail_is_small(1, 10**12)
    (True, False)
    """
    return remaining_weight * TAIL_MASS.denominator < denominator * TAIL_MASS.numerator


@dataclass(frozen=True)
class RoundsDistribution:
    """``probabilities[r]`` = P(exactly r rounds) for the listed rounds; ``rest`` = P(more)."""

    probabilities: dict
    rest: Fraction

    def __post_init__(self):
        check_invariant(
            sum(self.probabilities.values()) + self.rest == 1, "a rounds distribution must sum to exactly 1"
        )

    def within(self, rounds: int) -> Fraction:
        """P(at most ``rounds`` rounds) (exact for every listed round).

        >>> RoundsDistribution({1: Fraction(1, 2)}, Fraction(1, 2)).within(1)
        Fraction(1, 2)
        """
        return sum((p for r, p in self.probabilities.items() if r <= rounds), Fraction(0))

    def to_json(self) -> dict:
        """``{round: "p/q", ..., "rest": "p/q"}``."""
        payload = {str(r): fraction_text(p) for r, p in self.probabilities.items()}
        payload["rest"] = fraction_text(self.rest)
        return payload
