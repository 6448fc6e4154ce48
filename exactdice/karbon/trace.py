"""One Karbon contest told round by round in plain words, for a group learning the rules.

It runs the simulator's own engine (`exactdice.karbon.simulate.ContestEngine`) on a single
contest with a notebook attached, so the words follow exactly the rules the simulator plays.

>>> from exactdice.karbon.setup import ContestSetup
>>> lines = trace_contest(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1,
...                                    pool={}, reserve={}), seed=3)
>>> lines[0]
'Start: the player holds d6, the narrator holds d10; pool none, reserve none; track of 1, peril 0.'
>>> lines[-1].startswith("Result: the player ")
True
"""

from __future__ import annotations

import numpy as np

from exactdice.errors import InputError
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.simulate import MAX_ROUNDS, ContestEngine, contest_start

__all__ = ["trace_contest"]

_RESULT_WORDS = {"win": "wins the contest", "loss": "loses the contest", "tie": "ties the contest",
                 "unfinished": "has not finished the contest"}


def trace_contest(setup, ruleset: Rules | None = None, player: PlayerPolicy | None = None,
                  narrator: NarratorPolicy | None = None, seed: int = 0,
                  max_rounds: int = MAX_ROUNDS, strategy=None) -> list[str]:
    """Play one contest with ``seed`` and return its account, one line per event.

    ``strategy`` (a strategy file or table) plays optimal/kind sides, as in
    `exactdice.karbon.simulate.simulate`.

    >>> from exactdice.karbon.setup import ContestSetup
    >>> lines = trace_contest(ContestSetup(ability=2, challenge=1, consequence=1), seed=1)
    >>> lines[1]
    'Draw: the player draws 2d8, the narrator draws d8 (chips from the draw: player 0, narrator 0).'
    """
    ruleset = ruleset or Rules()
    player = player or PlayerPolicy()
    narrator = narrator or NarratorPolicy()
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError("seed", f"must be a whole number >= 0, got {seed!r}")
    start, replay = contest_start(setup, ruleset, player, narrator, strategy)
    sizes, position = start.sizes, start.position
    lines = [f"Start: the player holds {sizes.text(position.player_hand)}, the narrator holds "
             f"{sizes.text(position.narrator_hand)}; pool {sizes.text(position.pool)}, reserve "
             f"{sizes.text(position.reserve)}; track of {position.track}, peril {position.peril}."]
    if setup.player_dice is None:
        lines.append(f"Draw: the player draws {sizes.text(position.player_hand)}, the narrator draws "
                     f"{sizes.text(position.narrator_hand)} (chips from the draw: player "
                     f"{position.player_chips}, narrator {position.narrator_chips}).")
    engine = ContestEngine(start, ruleset, player, narrator, 1,
                           np.random.Generator(np.random.PCG64(seed)), notes=lines, replay=replay)
    result = engine.run(max_rounds)
    outcome = ("unfinished", "win", "loss", "tie")[int(result["outcome"][0])]
    lines.append(f"Result: the player {_RESULT_WORDS[outcome]} after {result['rounds'][0]} round(s): "
                 f"{result['breaks'][0]} Break(s), {result['glitches'][0]} Glitch(es), "
                 f"{result['injuries'][0]} injury(ies), {result['conditions'][0]} condition(s).")
    return lines
