"""Chronica Mutanis Mundi contests as exactdice reads them (``exactdice chronica rules``).

>>> from exactdice.chronica.ruleset import Rules
>>> sorted(KNOBS) == sorted(Rules().to_dict())
True
"""

from __future__ import annotations

__all__ = ["READING", "KNOBS", "SETUP"]

READING = """\
Chronica Mutanis Mundi contests, the reading exactdice solves

Sides. Two or more sides; a side is one pool of dice or several co-operating pools
(written d8,d6/d10). Any dN is allowed.

Comparing. Every die is rolled. Each side's high die is the highest die of its pools.
If one side alone holds the greatest high die, it wins. Otherwise every pool of the sides
tied at the top discards one die of that value, and the comparison repeats; sides below
the top keep their dice. When no side has a die left, the contest is a true tie.

Success dice. The winner's remaining dice that are higher than every die the losing
sides still hold.

Concession dice. With the success dice set aside, the winner and each loser compare their
highest remaining dice: the higher side gains as concession dice its dice above the
other's highest (nothing on equal dice). With three or more sides, this pairwise reading
is exactdice's own: the text does not settle it.

Target dice (`target` dN, condition and penalty contests). Every side but the first
replaces up to three of its smallest dice below dN with dN, adding dN while it has fewer
than three dice.

Not modelled: spending success dice, and building pools from a character.
"""

KNOBS = {
    "tie_rule": (
        "when a contest is a true tie",
        {
            "all-discarded": "only once every die is discarded",
            "four-ties": "also once four comparisons in a row ended in discards",
        },
    ),
    "push": (
        "what happens on a tie",
        {"off": "the tie stands", "on": "the contest is rolled again (at most max_pushes times)"},
    ),
    "push_dice": (
        "dice added to every side's first pool at each push (they accumulate)",
        {"none": "no dice added (the default)", "e.g. 5d6": "five d6 more at each push"},
    ),
    "max_pushes": ("most re-rolls after ties with push on", {"1": "the default; any number >= 1"}),
    "physical": (
        "whether the player rolls real dice only",
        {
            "off": "every die as given",
            "on": "the first side rolls a die with no physical counterpart as the nearest smaller "
            "d4/d6/d8/d10/d12/d20, and wins a first-comparison tie with one success die",
        },
    ),
}

SETUP = "set with `tie_rule`, `push`, `push_dice`, `max_pushes`, `physical`"
