"""Karst rolls as exactdice reads them (``exactdice karst rules``).

>>> from exactdice.karst.ruleset import Rules
>>> sorted(KNOBS) == sorted(Rules().to_dict())
True
"""

from __future__ import annotations

__all__ = ["READING", "KNOBS", "SETUP"]

READING = """\
Karst rolls, the reading exactdice solves

Action rolls. d6 + modifier: a natural 1 fails, a natural 6 succeeds, otherwise a total
of 6 or more succeeds. Opposed rolls compare two action rolls (see the knob opposed).

Attack rolls. d20 + modifier against the target's defense: a natural 20 hits, a natural 1
misses, otherwise a total of at least the defense hits. A hit deals the weapon's damage
(a dice expression), at least 1, doubled on the first attack against an unaware target.
Knock-out: one attack a round until the target's health is 0 or less; exactdice gives the
rounds this takes and the negative health left, which feeds the death roll.

Death rolls. With negative health h, roll d6 - h + modifier, at least 1. A natural 6, or
a result of 6 or more, is stable; otherwise a result of 1 is death; anything else rolls
again at the end of the next round, and each round after. Rounds count from the first of
those rounds (0 when the first roll settles it). Each aid action in a round is an extra
death roll before the round's own: stable on a 6 (natural or result), and a result of 1
only raises h by one.

Order rolls. d6 + order modifier each; higher acts first; equal scores share the better
place (two tied first are both 1st, the next is 3rd). Taking two actions subtracts 3 from
a score of 4 or more. A surprised combatant does not act in the opening round.

Rounds have no last value: the JSON lists them until less than 10^-12 of the mass is
left and gives that rest exactly.
"""

KNOBS = {
    "opposed": (
        "how opposed action rolls are compared",
        {
            "totals": "the higher total prevails; equal totals prevail for neither",
            "success-first": "a success beats a failure; otherwise the higher total prevails",
        },
    ),
    "aid": (
        "ally actions spent on aid each round (each an extra death roll)",
        {"0": "the default; any whole number up to 20"},
    ),
}

SETUP = "set with `opposed` (opposed rolls) and `aid` (death rolls and knock-outs)"
