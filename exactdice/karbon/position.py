"""`Position`: everything about a Karbon contest that matters between two rounds.

Shared by the exact model, the strategy files and the simulator's strategy replay (a
description of a state, not the rules that change it).

>>> Position((1,), (0,), (0,), (0,), 0, 0, 0, 0, 0, 0, 1, 3).peril
1
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Position", "placement_folded", "STACK_SIZE"]

#: chips that make a completion (spec: five chips in a stack)
STACK_SIZE = 5


class Position(NamedTuple):
    """Everything that matters between two rounds; dice are count tuples (see `DiceSizes`).

    Parameters
    ----------
    player_hand, narrator_hand, pool, reserve : tuple of int
        Dice counts per size in each place.
    player_chips, narrator_chips : int
        Chips in hand.
    player_stack, narrator_stack : int
        Chips on each stack.
    wins, losses : int
        Xs and Os on the track.
    peril : int
        Peril dice.
    track : int
        The track's length W (grows by one in sudden death).
    """

    player_hand: tuple
    narrator_hand: tuple
    pool: tuple
    reserve: tuple
    player_chips: int
    narrator_chips: int
    player_stack: int
    narrator_stack: int
    wins: int  # X
    losses: int  # O
    peril: int
    track: int  # W (grows by one in sudden death)


def placement_folded(position: Position, winner: str, peril_to_stack: bool) -> Position:
    """The position as it is described between the roll and the Test's placement: each
    side that places at this Test (``winner``: "p", "n" or "t" for both) holds its stack
    in hand, stack 0.

    Placement moves hand and stack together (all chips go on; with one reward a Test the
    chips past the first completion come back to hand), so until then only their sum
    matters and one description serves every split: an exact merge of states. The
    narrator's stack stays apart while a peril roll can still add to it
    (``peril_to_stack`` and peril > 0), as the Test's first step counts the stack alone.
    Nothing is folded when both hands are empty and there is no peril: such rounds
    repeat for certain until the player risks, and merging a round with the next one
    would turn the spec's "no risk first" among equal values into a loop that never ends.

    >>> position = Position((1,), (1,), (0,), (0,), 1, 2, 3, 4, 0, 0, 1, 3)
    >>> placement_folded(position, "t", peril_to_stack=True)[4:8]
    (4, 2, 0, 4)
    >>> placement_folded(position, "n", peril_to_stack=False)[4:8]
    (1, 6, 3, 0)
    """
    if not (any(position.player_hand) or any(position.narrator_hand) or position.peril):
        return position
    fold_player = winner != "n" and position.player_stack
    fold_narrator = winner != "p" and position.narrator_stack and not (peril_to_stack and position.peril)
    if not (fold_player or fold_narrator):
        return position
    (player_hand, narrator_hand, pool, reserve, player_chips, narrator_chips, player_stack, narrator_stack, *rest) = (
        position
    )
    if fold_player:
        player_chips, player_stack = player_chips + player_stack, 0
    if fold_narrator:
        narrator_chips, narrator_stack = narrator_chips + narrator_stack, 0
    return Position(
        player_hand, narrator_hand, pool, reserve, player_chips, narrator_chips, player_stack, narrator_stack, *rest
    )
