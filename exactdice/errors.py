"""Exceptions that say what was wrong, raised at the boundary of each layer.

Every error a user can cause is an `InputError` (the CLI turns it into one line and
exit code 2); work that would be too large is a `TooLargeError`, whose message says
how big it would be and how to raise the limit.
"""

from __future__ import annotations

__all__ = ["ExactdiceError", "InputError", "TooLargeError"]


class ExactdiceError(Exception):
    """Base class of exactdice's own errors."""


class InputError(ExactdiceError, ValueError):
    """Bad input: names the field (flag, key or argument) and what is allowed.

    >>> str(InputError("--ability", "must be >= 0, got -1"))
    '--ability: must be >= 0, got -1'
    """

    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def __reduce__(self):
        # rebuilt with both arguments, so the error survives a trip from a worker process
        return (type(self), (self.field, self.message))


class TooLargeError(InputError):
    """Work past a size limit; the message says the size and how to raise the limit."""
