"""The knobs of a Contingency skill check (`exactdice.contingency.reading`), defaults first.

>>> Rules().describe()
'luck=never, fail_by_one=take, luck_modifier=off, gm_omen=exactly-1, any_size=off'
"""

from __future__ import annotations

from dataclasses import dataclass

from exactdice.errors import InputError

__all__ = ["Rules", "LUCK_POLICIES", "FAIL_BY_ONE_POLICIES", "GM_OMEN_RULES"]

#: when the player adds the luck die: never, always, or only when the result is below the difficulty
LUCK_POLICIES = ("never", "always", "if-failing")
#: whether a total of exactly difficulty - 1 becomes a success with a condition
FAIL_BY_ONE_POLICIES = ("take", "refuse")
#: which faces give the moderator an omen
GM_OMEN_RULES = ("exactly-1", "at-most-1")


@dataclass(frozen=True)
class Rules:
    """One reading of the Contingency rules; every field is a knob of the spec.

    Parameters
    ----------
    luck : {"never", "always", "if-failing"}
        When the player adds the luck die.
    fail_by_one : {"take", "refuse"}
        Whether a total of difficulty - 1 becomes a success with a condition.
    luck_modifier : bool, default False
        Whether the luck die gets the result die's own modifier.
    gm_omen : {"exactly-1", "at-most-1"}
        Which faces give the moderator an omen.
    any_size : bool, default False
        Allow any odd number of dice, not only three.

    Raises
    ------
    InputError
        A value that is not one of the knob's choices.

    Examples
    --------
    >>> Rules(luck="always").luck
    'always'
    >>> Rules(luck="sometimes")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: luck: must be one of never, always, if-failing, got 'sometimes'
    """

    luck: str = "never"
    fail_by_one: str = "take"
    luck_modifier: bool = False  # on: the luck die gets the result die's own face modifier
    gm_omen: str = "exactly-1"
    any_size: bool = False  # allow pools of any odd size, not just three dice

    def __post_init__(self):
        for value, allowed, flag in (
            (self.luck, LUCK_POLICIES, "luck"),
            (self.fail_by_one, FAIL_BY_ONE_POLICIES, "fail_by_one"),
            (self.gm_omen, GM_OMEN_RULES, "gm_omen"),
        ):
            if value not in allowed:
                raise InputError(flag, f"must be one of {', '.join(allowed)}, got {value!r}")

    def to_dict(self) -> dict:
        """The knobs as JSON-ready strings (part of every result).

        >>> Rules().to_dict()["gm_omen"]
        'exactly-1'
        """
        return {
            "luck": self.luck,
            "fail_by_one": self.fail_by_one,
            "luck_modifier": "on" if self.luck_modifier else "off",
            "gm_omen": self.gm_omen,
            "any_size": "on" if self.any_size else "off",
        }

    def describe(self) -> str:
        """One line naming every knob, for legends and text output."""
        return ", ".join(f"{name}={value}" for name, value in self.to_dict().items())
