"""`Position`: everything about a Karbon contest that matters between two rounds.

Shared by the exact model, the strategy files and the simulator's strategy replay (a
description of a state, not the rules that change it).

>>> Position((1,), (0,), (0,), (0,), 0, 0, 0, 0, 0, 0, 1, 3).peril
1
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Position"]


class Position(NamedTuple):
    """Everything that matters between two rounds; dice are count tuples (see `DiceSizes`)."""

    player_hand: tuple
    narrator_hand: tuple
    pool: tuple
    reserve: tuple
    player_chips: int
    narrator_chips: int
    player_stack: int
    narrator_stack: int
    wins: int      # X
    losses: int    # O
    peril: int
    track: int     # W (grows by one in sudden death)
