"""Contingency skill checks as exactdice reads them (``exactdice contingency rules``).

>>> from exactdice.contingency.ruleset import Rules
>>> sorted(KNOBS) == sorted(Rules().to_dict())
True
"""

from __future__ import annotations

__all__ = ["READING", "KNOBS", "SETUP"]

READING = """\
Contingency skill checks, the reading exactdice solves

The pool. Three dice (wellness, attribute, skill), each any dN (N >= 2). A face modifier
(`modifier`, or `modifiers` one per die) is added to each die; "face" means the modified
face below.

The result die. Sort the dice by face, equal faces by die size (smaller first). The result
die is the middle one; with net advantage the highest, with net disadvantage the lowest
(units of advantage and disadvantage cancel one for one).

The outcome. Success when the result reaches the difficulty. A total of exactly
difficulty - 1 can become a success with a condition (the player marks a condition).

The luck die. One more die of the result die's size, added to the result; the player
decides after seeing the roll, before failing by one is considered.

Omens, over every die rolled (the luck die too): a face of 8-9 gives the player 1 omen,
10-11 gives 2, 12 or more gives 3; a face of 1 gives the moderator 1 omen.

Choosing to fail: no roll; the moderator gains 1 omen with disadvantage, 3 with
advantage, 2 otherwise.
"""

KNOBS = {
    "luck": (
        "when the player adds the luck die",
        {"never": "never", "always": "always", "if-failing": "only when the result is below the difficulty"},
    ),
    "fail_by_one": (
        "what the player does with a total of difficulty - 1",
        {"take": "marks a condition and succeeds", "refuse": "fails"},
    ),
    "luck_modifier": ("whether the luck die gets the result die's own modifier", {"off": "no", "on": "yes"}),
    "gm_omen": (
        "which faces give the moderator an omen",
        {"exactly-1": "a face of exactly 1", "at-most-1": "any face of 1 or less (after modifiers)"},
    ),
    "any_size": (
        "which pool sizes are allowed",
        {"off": "three dice, as the rules roll", "on": "any odd number of dice"},
    ),
}

SETUP = "set with `luck`, `fail_by_one`, `luck_modifier`, `gm_omen`, `any_size`"
