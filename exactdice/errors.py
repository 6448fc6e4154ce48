"""Exceptions that say what was wrong, raised at the boundary of each layer.

Every error a user can cause is an `InputError` naming the parameter at fault (the CLI
maps the parameter to its flag and prints one line, exit code 2); work that would be too
large is a `TooLargeError`, whose message says how big it would be and how to raise the
limit. A broken promise inside exactdice (a model that breaks the `markov.Model`
contract, an invariant check that fails) is an `InternalError`: a bug, never bad input.
"""

from __future__ import annotations

__all__ = ["ExactdiceError", "InputError", "TooLargeError", "InternalError", "check_invariant"]


class ExactdiceError(Exception):
    """Base class of exactdice's own errors."""


class InputError(ExactdiceError, ValueError):
    """Bad input: names the parameter (or file key) at fault and what is allowed.

    A `ValueError`. The command line shows it as one line naming the flag, with exit code 2.

    Parameters
    ----------
    field : str or None
        The Python parameter's name, never a CLI flag; other parameters named in the
        message are written between backquotes, so the CLI can show their flags instead.
    message : str
        What was wrong and what is allowed.

    Examples
    --------
    >>> str(InputError("ability", "must be >= 0, got -1"))
    'ability: must be >= 0, got -1'
    """

    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def __reduce__(self):
        # rebuilt with both arguments, so the error survives a trip from a worker process
        return (type(self), (self.field, self.message))


class TooLargeError(InputError):
    """Work past a size limit; the message says the size and how to raise the limit.

    Parameters
    ----------
    field : str or None
        The parameter or limit at fault (``max_states``, say).
    message : str
        How big the work would be and how to raise the limit.
    """


class InternalError(ExactdiceError, RuntimeError):
    """A bug: a model broke its contract or an invariant check failed (never bad input).

    >>> isinstance(InternalError("weights must sum to 36"), InputError)
    False
    """


def check_invariant(holds: bool, message: str) -> None:
    """Raise `InternalError` with *message* unless *holds* (an ``assert`` that ``-O`` keeps).

    Parameters
    ----------
    holds : bool
        The invariant's value.
    message : str
        What broke, for the error.

    Raises
    ------
    InternalError
        When *holds* is false.

    Examples
    --------
    >>> check_invariant(1 + 1 == 2, "arithmetic")
    >>> check_invariant(False, "weights must sum to 36")
    Traceback (most recent call last):
    exactdice.errors.InternalError: weights must sum to 36
    """
    if not holds:
        raise InternalError(message)
