"""Karbon as exactdice reads it, in plain words, with every knob (``exactdice karbon rules``).

>>> from exactdice.karbon.ruleset import RULE_CHOICES
>>> sorted(KNOBS) == sorted(RULE_CHOICES)
True
"""

from __future__ import annotations

__all__ = ["READING", "KNOBS", "SETUP"]

READING = """\
Karbon contests, the reading exactdice solves

Dice. A die shows 1..N. A 1-3 is a hit, a 4-5 a miss, a 6 or more a turncoat: a d6
is hit 1/2, turncoat 1/6; a d8 hit 3/8, turncoat 3/8; a d10 hit 3/10, turncoat 1/2.

Where dice are. Every die is in the player's hand, the narrator's hand, the main pool
(default 7d6, 5d8, 3d10), the reserve (default 5d6), or set aside during a round.

Setup. The player draws A dice from the pool (each d6 costs one Fortune; with Training
each d8 gives a chip), then the narrator draws C dice (each d10 gives the narrator a
chip, each d6 gives the player one). Fallout K throws K Glitches before the first round.
Both stacks start empty, the track (W places) is empty, peril is P.

A round.
  1. Both sides roll their hands. More hits wins the roll and gains that many chips;
     on equal hits each side gains its own hits.
  2. Turncoats are set aside. The side with more turncoats gives them to the other
     side after the round (an Opening); otherwise each side gets its own back.
  3. Risk (the player's choice): roll 3 extra d8; each hit takes a die of the player's
     choice from the pool into its hand, each miss or turncoat gives the narrator a chip.
  4. Peril: roll P extra d8; each hit puts a chip on the narrator's stack.
  5. The Test: 5 chips on the narrator's stack from peril are Glitches; then the roll's
     winner (both on a tie) places every chip in hand on its stack, and every 5 chips
     on a stack is a completion: the player's are Breaks, the narrator's Glitches.

Rewards. A Break marks an X; then the player takes the first option that applies:
security (remove a peril die), footing-discard (the narrator drops its chips),
footing-dice (the narrator gives two dice), advantage (swap up to two dice with the
reserve). A Glitch marks an O; then: hurt (an injury, the player gains 2 chips, or a
condition: the narrator chooses), plans (the narrator takes two pool dice or adds a
peril die), sideswipe (remove an X; the player takes the narrator's chips or two of its
dice).

The end. As soon as X + O fills the track: more X wins, more O loses, equal is a tie.
Play that can never end (no chips can ever be won) is reported as "never ends".

Policies. Each side plays by fixed preferences (the default: the habits of a table that
plays by the book), optimally (`player_policy` optimal: the expected score, win 1, tie
1/2, or P(win) with objective=win), and the narrator also kind or random. The policies
line of an answer says them in words; the help of `player_policy` and `narrator_policy`
lists the keys.
"""

#: knob -> (what it decides, {value: what the value means}); the first value is the default
KNOBS = {
    "peril_chips": (
        "where peril hits go",
        {"stack": "straight onto the narrator's stack", "hand": "into the narrator's hand"},
    ),
    "rewards_per_test": (
        "completions a side may earn in one Test",
        {"unlimited": "every 5 chips placed is a completion", "1": "at most one; the side keeps the rest in hand"},
    ),
    "tie_order": (
        "whose rewards resolve first when both sides complete",
        {"player_first": "the player's", "narrator_first": "the narrator's"},
    ),
    "sideswipe_picker": (
        "who picks the two dice a sideswipe takes",
        {"player": "the player", "narrator": "the narrator"},
    ),
    "injury_peril": ("whether an injury also adds a peril die", {"off": "no", "on": "yes"}),
    "sudden_death": (
        "what follows a tie",
        {"off": "the tie stands", "on": "a one-place sudden-death contest (chips and stacks emptied), so no ties"},
    ),
    "objective": (
        "what optimal play maximises",
        {"score": "the expected score: win 1, tie 1/2, loss 0", "win": "P(win) alone"},
    ),
}

SETUP = "set with `rules` NAME=VALUE, repeatable: `rules` sudden_death=on"
