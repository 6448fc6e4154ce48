"""How long an optimal player's exact game may be explored before certified bounds answer:
the request-level decision of `karbon odds` and the web calculator.

An optimal player's game on the default pool passes millions of states (A1 v C1, W1 P0
has 7 million). So the exact attempt gets a short time-box, a tenth of the time the
request gives (``max_seconds``: the bounds search's limit), or `DEFAULT_ATTEMPT_SECONDS`
when it gives none (the command line's default search runs to its precision): a game that
explores within it is answered exactly, one past it by bounds, having spent at most a
tenth more than the search itself. (The compiled walk explores a few hundred thousand
states a second, and an exact solve of a game of optimal play costs far more than
exploring it: past a few seconds of exploring, bounds answer sooner.)

>>> exact_attempt_seconds(20), exact_attempt_seconds(None)
(2.0, 3.0)
"""

from __future__ import annotations

__all__ = ["exact_attempt_seconds", "ATTEMPT_SHARE", "DEFAULT_ATTEMPT_SECONDS", "attempt_words"]

#: the share of a request's seconds the exact attempt may explore
ATTEMPT_SHARE = 0.1
#: the exact attempt's exploring time when the request sets no seconds
DEFAULT_ATTEMPT_SECONDS = 3.0


def exact_attempt_seconds(max_seconds: float | None) -> float:
    """Seconds an optimal player's exact game may explore before bounds answer instead."""
    return DEFAULT_ATTEMPT_SECONDS if max_seconds is None else max_seconds * ATTEMPT_SHARE


def attempt_words(max_seconds: float | None, seconds_name: str) -> str:
    """Where the attempt's time came from, for the message that bounds answer instead.

    >>> print(attempt_words(None, "--max-seconds"))
    the exact attempt's 3 s (give --max-seconds S for a tenth of S)
    """
    if max_seconds is None:
        return f"the exact attempt's {DEFAULT_ATTEMPT_SECONDS:g} s (give {seconds_name} S for a tenth of S)"
    return f"a tenth of {seconds_name}"
