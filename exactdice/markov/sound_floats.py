"""Floats that stay on the right side of exact values: payoffs that binary floating point
holds exactly, and how far a chance node's float sum can be from the exact sum (the
outward widening that keeps the float bounds of `exactdice.markov.bounded` sound).
"""

from __future__ import annotations

from fractions import Fraction

from exactdice.errors import InputError

__all__ = ["UNIT_ROUNDOFF", "check_weight", "float_payoffs", "chance_slack"]

#: the relative rounding error of one float operation (round to nearest, 53-bit significand)
UNIT_ROUNDOFF = 2.0**-53


def check_weight(weight) -> None:
    """A branch weight must be a positive int (the probabilities are exact ratios of them)."""
    if not isinstance(weight, int) or weight <= 0:
        raise InputError("weight", f"branch weights must be positive ints, got {weight!r}")


def float_payoffs(outcomes, payoff, nonterminating_payoff) -> tuple[dict, float]:
    """(outcome -> payoff, never-ending play's payoff) as floats, which must be exact
    (``payoff`` None: 1 for the first outcome, 0 for the others)."""
    outcomes = tuple(outcomes)
    if payoff is None:
        payoff = {name: (1 if i == 0 else 0) for i, name in enumerate(outcomes)}
    unknown = set(payoff) - set(outcomes)
    if unknown:
        raise InputError("payoff", f"unknown outcomes {sorted(unknown)}; the model lists {outcomes}")
    pays = {name: float(Fraction(payoff.get(name, 0))) for name in outcomes}
    for name in outcomes:
        if pays[name] != Fraction(payoff.get(name, 0)):
            raise InputError("payoff", f"payoff of {name!r} must be exact in binary floating point")
    endless = float(Fraction(nonterminating_payoff or 0))
    if endless != Fraction(nonterminating_payoff or 0):
        raise InputError("nonterminating_payoff", "must be exact in binary floating point")
    return pays, endless


def chance_slack(branches: int, magnitude: float) -> float:
    """How far a float ``sum(p_i * v_i)`` over ``branches`` terms can be from the exact
    sum when ``|v_i| <= magnitude`` and ``sum p_i = 1``: each ``p_i = w_i / total`` is
    rounded once (relative u), each product once, a left-to-right sum of n terms adds at
    most (n - 1) u of the sum, and the final widening one more rounding. Doubling the
    count of roundings, (2n + 8) u * magnitude covers every term (Higham, "Accuracy and
    Stability of Numerical Algorithms", 2nd ed., section 4.2).

    >>> chance_slack(2, 1.0) < 1e-14
    True
    """
    return (2 * branches + 8) * UNIT_ROUNDOFF * magnitude
