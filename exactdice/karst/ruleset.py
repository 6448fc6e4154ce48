"""The knobs of Karst rolls (`exactdice.karst.reading`), defaults first.

>>> Rules().describe()
'opposed=totals, aid=0'
"""

from __future__ import annotations

from dataclasses import dataclass

from exactdice.errors import InputError, TooLargeError

__all__ = ["Rules", "OPPOSED_RULES", "MAX_AID"]

#: most aid actions per round (each is an extra death roll every round)
MAX_AID = 20

#: how opposed action rolls are compared
OPPOSED_RULES = ("totals", "success-first")


@dataclass(frozen=True)
class Rules:
    """One reading of the Karst rules; every field is a knob of the spec.

    Parameters
    ----------
    opposed : {"totals", "success-first"}
        How opposed action rolls are compared: the higher total prevails, or a success beats
        a failure first.
    aid : int, default 0
        Ally actions spent on aid each round (each an extra death roll), 0-20.

    Raises
    ------
    InputError
        A value out of its range.

    Examples
    --------
    >>> Rules(aid=-1)
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: aid: must be >= 0 aid actions per round, got -1
    """

    opposed: str = "totals"
    aid: int = 0  # ally actions spent on aid each round, each one an extra death roll

    def __post_init__(self):
        if self.opposed not in OPPOSED_RULES:
            raise InputError("opposed", f"must be one of {', '.join(OPPOSED_RULES)}, got {self.opposed!r}")
        if not isinstance(self.aid, int) or self.aid < 0:
            raise InputError("aid", f"must be >= 0 aid actions per round, got {self.aid!r}")
        if self.aid > MAX_AID:
            raise TooLargeError("aid", f"{self.aid} aid actions per round is more than the limit of {MAX_AID}")

    def to_dict(self) -> dict:
        """The knobs as JSON-ready values (part of every result)."""
        return {"opposed": self.opposed, "aid": self.aid}

    def describe(self) -> str:
        """One line naming every knob, for legends and text output."""
        return ", ".join(f"{name}={value}" for name, value in self.to_dict().items())
