"""One Karbon contest told round by round in plain words, for a group learning the rules.

It runs the simulator's own engine (`exactdice.karbon.simulate.ContestEngine`) on a single
contest with a `Narrator` listening to its events, so the words follow exactly the rules
the simulator plays.

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

from exactdice.core.display import counted
from exactdice.errors import InputError
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.simulate import MAX_ROUNDS, RISK_DICE, ContestEngine, contest_start

__all__ = ["trace_contest", "Narrator", "EventRecorder"]

_RESULT_WORDS = {
    "win": "wins the contest",
    "loss": "loses the contest",
    "tie": "ties the contest",
    "unfinished": "has not finished the contest",
}
_OUTCOME_WORDS = ("unfinished", "win", "loss", "tie")  # the engine's outcome codes


class Narrator:
    """An observer of a `ContestEngine` that tells contest 0 of the batch in words.

    Each event of `ContestEngine.EVENTS` has a method of the same name; it is told only
    when the event concerns contest 0 (``engine.trial[rows[0]] == 0``) and receives that
    contest's values. ``lines`` holds the account.
    """

    def __init__(self, lines: list[str] | None = None):
        self.lines = [] if lines is None else lines

    def notice(self, event: str, engine, rows: np.ndarray, values: dict) -> None:
        if len(rows) and rows[0] == 0 and engine.trial[0] == 0:
            words = getattr(self, event)(engine, {name: _entry(value, 0) for name, value in values.items()})
            if words is not None:
                self.lines.append(words)

    # ----- the round ----------------------------------------------------------------------

    def fallout(self, engine, values):
        return (
            f"Fallout: {counted(values['count'], 'Glitch', 'Glitches')} "
            f"{'is' if values['count'] == 1 else 'are'} thrown before the first round."
        )

    def round(self, engine, values):
        return f"Round {values['number']}:"

    def roll(self, engine, values):
        shown = [f"d{sides}:{face}" for sides, faces, counts in values["rolled"] for face in faces[0, : counts[0]]]
        rolled_text = " ".join(shown) if shown else "nothing (no dice)"
        return (
            f"  The {values['side']} rolls {rolled_text}: {counted(values['hits'], 'hit')}, "
            f"{counted(values['turncoats'].sum(), 'turncoat')}."
        )

    def roll_won(self, engine, values):
        player, narrator = values["player_hits"], values["narrator_hits"]
        if player > narrator:
            return f"  The player wins the roll ({player} to {narrator} hits) and gains {counted(player, 'chip')}."
        if narrator > player:
            return f"  The narrator wins the roll ({narrator} to {player} hits) and gains {counted(narrator, 'chip')}."
        return f"  A tie ({player} hits each): each side gains its own hits."

    def opening(self, engine, values):
        player, narrator = values["player_turncoats"], values["narrator_turncoats"]
        if player.sum() > narrator.sum():
            return (
                f"  Opening: the player has more turncoats ({player.sum()} to {narrator.sum()}); "
                f"its set-aside {_dice(engine, player)} will go to the narrator."
            )
        if narrator.sum() > player.sum():
            return (
                f"  Opening: the narrator has more turncoats ({narrator.sum()} to {player.sum()}); "
                f"its set-aside {_dice(engine, narrator)} will go to the player."
            )
        return f"  No Opening ({player.sum()} turncoats each); set-aside dice go back."

    def extra_dice(self, engine, values):
        if values["counts"]:
            return (
                f"  The {values['purpose']} dice show "
                f"{' '.join(str(face) for face in values['faces'][: values['counts']])}."
            )
        return None

    def risk(self, engine, values):
        who = "Risk (strategy): the player" if values["strategic"] else "Risk: the player"
        if not values["risking"]:
            return f"  {who} does not risk."
        return (
            f"  {who} puts it all on the line: {counted(values['hits'], 'hit')} take {_dice(engine, values['taken'])} "
            f"from the pool; the narrator gains {counted(RISK_DICE - values['hits'], 'chip')}."
        )

    def peril(self, engine, values):
        if not values["dice"]:
            return None
        where = "on the narrator's stack" if engine.ruleset.peril_chips == "stack" else "into the narrator's hand"
        return f"  Peril: {values['dice']} d8, {counted(values['hits'], 'hit')} put {counted(values['hits'], 'chip')} {where}."

    def round_over(self, engine, values):
        return (
            f"  Track [{_track(engine)}]; player {_dice(engine, engine.player_hand[0])}, "
            f"{counted(engine.player_chips[0], 'chip')} in hand, stack {engine.player_stack[0]}; narrator "
            f"{_dice(engine, engine.narrator_hand[0])}, {counted(engine.narrator_chips[0], 'chip')}, "
            f"stack {engine.narrator_stack[0]}; pool {_dice(engine, engine.pool[0])}; "
            f"peril {engine.peril[0]}."
        )

    def unfinished(self, engine, values):
        return f"After {values['max_rounds']} rounds the contest has not ended: unfinished."

    # ----- the Test -------------------------------------------------------------------------

    def peril_glitches(self, engine, values):
        if not values["count"]:
            return None
        return f"  Test: the narrator's stack completes {counted(values['count'], 'time')} from Peril."

    def placed(self, engine, values):
        placed = values["chips"] - values["left"]
        completions = values["completions"]
        return (
            f"  Test: the {values['side']} places {counted(placed, 'chip')} on its stack "
            f"(height {values['stack'] + placed})"
            + (f": {counted(completions, 'completion')}." if completions else ".")
        )

    def mark(self, engine, values):
        if values["kind"] == "break":
            return "  Break: the player marks an X."
        return "  Glitch: the narrator marks an O."

    def sudden_death(self, engine, values):
        return (
            "  The track is full with a tie: sudden death, the track gets one more place; "
            "chips in hand and stacks are emptied."
        )

    def contest_over(self, engine, values):
        return f"  The track is full ({_track(engine)}): the contest ends in a {_OUTCOME_WORDS[values['outcome']]}."

    # ----- Break and Glitch options ---------------------------------------------------------

    def security(self, engine, values):
        return "  Option security: one peril die is removed."

    def footing_discard(self, engine, values):
        return f"  Option footing: the narrator discards its {counted(values['chips'], 'chip')}."

    def footing_dice(self, engine, values):
        return f"  Option footing: the narrator gives the player {_dice(engine, values['given'])}."

    def advantage(self, engine, values):
        before, after = _dice(engine, values["before"]), _dice(engine, values["after"])
        if values["swaps"] is not None:
            return (
                f"  Option advantage (strategy): the player swaps {values['swaps'].replace('->', ' for ')} "
                f"({before} becomes {after})."
            )
        return f"  Option advantage: the player swaps its {before} for {after} with the reserve."

    def hurt(self, engine, values):
        if not values["injury"]:
            return "  Option hurt: the narrator gives the Agent a condition."
        return "  Option hurt: the narrator gives the Agent an injury and the player 2 chips" + (
            " (and one peril die)." if engine.ruleset.injury_peril == "on" else "."
        )

    def plans(self, engine, values):
        if values["dice"]:
            return f"  Option plans: the narrator takes {_dice(engine, values['taken'])} from the pool."
        return "  Option plans: the narrator adds one peril die."

    def sideswipe_chips(self, engine, values):
        return f"  Option sideswipe: one X is removed; the narrator gives the player its {counted(values['chips'], 'chip')}."

    def sideswipe_dice(self, engine, values):
        return f"  Option sideswipe: one X is removed; the narrator gives the player {_dice(engine, values['given'])}."


class EventRecorder:
    """An observer of a `ContestEngine` that keeps every event of every contest:
    ``events`` lists (event, contest number, that contest's values).

    >>> from exactdice.karbon.setup import ContestSetup
    >>> from exactdice.karbon.simulate import contest_start
    >>> start, _ = contest_start(ContestSetup(ability=1, challenge=1, consequence=1), Rules(), PlayerPolicy(),
    ...                          NarratorPolicy())
    >>> recorder = EventRecorder()
    >>> _ = ContestEngine(start, Rules(), PlayerPolicy(), NarratorPolicy(), 3, np.random.default_rng(1),
    ...                   observers=[recorder]).run()
    >>> recorder.events[0]
    ('round', 0, {'number': np.int64(1)})
    """

    def __init__(self):
        self.events: list[tuple[str, int, dict]] = []

    def notice(self, event: str, engine, rows: np.ndarray, values: dict) -> None:
        for position, trial in enumerate(engine.trial[rows]):
            self.events.append((event, int(trial), {name: _entry(value, position) for name, value in values.items()}))


def _entry(value, position: int):
    """One contest's entry of an event value (see `ContestEngine`: arrays are aligned with the rows)."""
    return value[position] if isinstance(value, np.ndarray) and value.ndim else value


def _dice(engine, counts) -> str:
    return engine.sizes.text(tuple(int(c) for c in counts))


def _track(engine) -> str:
    x, o, w = int(engine.wins[0]), int(engine.losses[0]), int(engine.track[0])
    return " ".join(["X"] * x + ["O"] * o + ["."] * (w - x - o))


def trace_contest(
    setup,
    ruleset: Rules | None = None,
    player: PlayerPolicy | None = None,
    narrator: NarratorPolicy | None = None,
    seed: int = 0,
    max_rounds: int = MAX_ROUNDS,
    strategy=None,
) -> list[str]:
    """Play one contest with ``seed`` and return its account, one line per event.

    ``strategy`` (a strategy file or table) plays optimal/kind sides, as in
    `exactdice.karbon.simulate.simulate`.

    >>> from exactdice.karbon.setup import ContestSetup
    >>> lines = trace_contest(ContestSetup(ability=2, challenge=1, consequence=1), seed=1)
    >>> lines[0]
    'Draw: the player draws 2d8, the narrator draws d8 (chips from the draw: player 0, narrator 0).'
    """
    ruleset = ruleset or Rules()
    player = player or PlayerPolicy()
    narrator = narrator or NarratorPolicy()
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError("seed", f"must be a whole number >= 0, got {seed!r}")
    start, replay = contest_start(setup, ruleset, player, narrator, strategy)
    sizes, position = start.sizes, start.position
    lines = []
    if setup.player_dice is None:  # the draw first: the start is what it leaves
        lines.append(
            f"Draw: the player draws {sizes.text(position.player_hand)}, the narrator draws "
            f"{sizes.text(position.narrator_hand)} (chips from the draw: player "
            f"{position.player_chips}, narrator {position.narrator_chips})."
        )
    lines.append(
        f"Start: the player holds {sizes.text(position.player_hand)}, the narrator holds "
        f"{sizes.text(position.narrator_hand)}; pool {sizes.text(position.pool)}, reserve "
        f"{sizes.text(position.reserve)}; track of {position.track}, peril {position.peril}."
    )
    engine = ContestEngine(
        start,
        ruleset,
        player,
        narrator,
        1,
        np.random.Generator(np.random.PCG64(seed)),
        observers=[Narrator(lines)],
        replay=replay,
    )
    result = engine.run(max_rounds)
    outcome = _OUTCOME_WORDS[int(result["outcome"][0])]
    lines.append(
        f"Result: the player {_RESULT_WORDS[outcome]} after {counted(result['rounds'][0], 'round')}: "
        f"{counted(result['breaks'][0], 'Break')}, {counted(result['glitches'][0], 'Glitch', 'Glitches')}, "
        f"{counted(result['injuries'][0], 'injury', 'injuries')}, {counted(result['conditions'][0], 'condition')}."
    )
    return lines
