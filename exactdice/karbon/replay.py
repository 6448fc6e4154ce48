"""Replaying a strategy file in the Karbon simulator: the looked-up actions, what is legal
where they are played, and the file's view of the simulator's positions.

The simulator plays every chip it holds. A strategy file writes a position as the exact
model keeps it (the format is in `exactdice.karbon.strategy`): chips in hand cut at each
round's start to what can still make a difference, and, before the Test's placement, the
placing sides' stacks held in hand. `WrittenView` turns the simulator's position into that
description for the look-up only, so the play itself never depends on the cut: if the cut
were wrong, the replayed contests would follow the rules and disagree with the exact odds
(tests/karbon/test_strategy_replay.py shows it).

Legality is the simulator's own reading of the rules, checked on the action the file names
(`NamedChoice`, `DicePick`, `SwapChoice`): no list of options is built. A decision the file
lacks is played only when the rules leave one move (`forced`), as the exact model writes no
decision there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from exactdice.errors import InputError
from exactdice.karbon.dice import DiceSizes, dice_text, parse_dice_list
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.position import Position, placement_folded
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.strategy import decision_context, decision_key, written_chip_limits

__all__ = [
    "StrategyReplay",
    "WrittenView",
    "NamedChoice",
    "DicePick",
    "SwapChoice",
    "QUEUE_CODES",
    "COUNTERS",
    "context_words",
]

#: the counters of a position, in `Position` order after the four dice fields
COUNTERS = ("player_chips", "narrator_chips", "player_stack", "narrator_stack", "wins", "losses", "peril", "track")
#: what is left of a Test, as int columns: (head code, rewards of the head's kind left,
#: tail code, tail value: a count of B/G rewards, or the roll winner code of "place")
QUEUE_CODES = {None: 0, "B": 1, "G": 2, "place": 3}
_WINNERS = "pnt"  # roll winner codes 0, 1, 2: player, narrator, tie
_SIDE = {"player": 0, "narrator": 1}


# ----- what is legal where a looked-up action is played -----------------------------------


class NamedChoice:
    """One of a few named options (risk, break, glitch, hurt, plans, sideswipe).

    >>> NamedChoice(["hurt", "plans"]).allows("sideswipe"), NamedChoice(["none"]).forced()
    (False, 'none')
    """

    def __init__(self, names):
        self.names = tuple(names)

    def allows(self, action: str) -> bool:
        return action in self.names

    def forced(self) -> str | None:
        return self.names[0] if len(self.names) == 1 else None

    def __str__(self) -> str:
        return ", ".join(self.names)


def _dice_counts(sizes: DiceSizes, text: str) -> tuple | None:
    """A dice text as counts of the contest's sizes (None if it is not one)."""
    try:
        dice = parse_dice_list(text, "strategy")
    except InputError:
        return None
    if any(sides not in sizes.position for sides in dice):
        return None
    return sizes.counts(dice)


class DicePick:
    """``count`` dice taken out of ``source`` (count tuple): the pool's take, gifts, plans.

    The pick is forced when the count is 0 or all of ``source``, or when ``source`` holds
    one die size: with two sizes and 0 < count < total, one die of a taken size can be
    swapped for one of an untaken or partly taken size, so there are at least two picks.

    >>> sizes = DiceSizes([6, 8])
    >>> pick = DicePick(sizes, (1, 2), 2)
    >>> pick.allows("d6,d8"), pick.allows("2d6"), pick.forced(), DicePick(sizes, (0, 3), 2).forced()
    (True, False, None, '2d8')
    """

    def __init__(self, sizes: DiceSizes, source: tuple, count: int):
        self.sizes, self.source, self.count = sizes, tuple(int(c) for c in source), int(count)

    def allows(self, action: str) -> bool:
        taken = _dice_counts(self.sizes, action)
        return taken is not None and sum(taken) == self.count and all(t <= s for t, s in zip(taken, self.source))

    def forced(self) -> str | None:
        kinds = [index for index, count in enumerate(self.source) if count]
        if self.count == sum(self.source):
            return self.sizes.text(self.source)
        if self.count == 0 or len(kinds) == 1:
            taken = [0] * len(self.source)
            for index in kinds:
                taken[index] = self.count
            return self.sizes.text(tuple(taken))
        return None

    def __str__(self) -> str:
        return f"{self.count} dice out of {self.sizes.text(self.source)}"


class SwapChoice:
    """An advantage swap ``"<out>-><in>"``: one or two hand dice for as many reserve dice,
    no die size both out and in.

    Forced when exactly one pair (hand size h, reserve size r, h != r) exists and not both
    hold two dice: every swap's out sizes and in sizes form such pairs, so with one pair the
    swaps are ``h->r`` and, with two of each, ``2h->2r``.

    >>> sizes = DiceSizes([6, 8, 10])
    >>> SwapChoice(sizes, (0, 1, 0), (1, 1, 0)).forced(), SwapChoice(sizes, (0, 2, 0), (2, 0, 0)).forced()
    ('d8->d6', None)
    >>> SwapChoice(sizes, (0, 2, 0), (2, 0, 0)).allows("2d8->2d6"), SwapChoice(sizes, (1, 1, 0), (1, 0, 0)).allows("d6->d6")
    (True, False)
    """

    def __init__(self, sizes: DiceSizes, hand: tuple, reserve: tuple):
        self.sizes = sizes
        self.hand, self.reserve = tuple(int(c) for c in hand), tuple(int(c) for c in reserve)

    def allows(self, action: str) -> bool:
        out_text, arrow, in_text = action.partition("->")
        out, into = _dice_counts(self.sizes, out_text), _dice_counts(self.sizes, in_text)
        if not arrow or out is None or into is None or not 1 <= sum(out) == sum(into) <= 2:
            return False
        return (
            all(o <= h for o, h in zip(out, self.hand))
            and all(i <= r for i, r in zip(into, self.reserve))
            and not any(o and i for o, i in zip(out, into))
        )

    def forced(self) -> str | None:
        pairs = [
            (h, r) for h, held in enumerate(self.hand) if held for r, kept in enumerate(self.reserve) if kept and r != h
        ]
        if len(pairs) != 1:
            return None
        h, r = pairs[0]
        if self.hand[h] >= 2 and self.reserve[r] >= 2:
            return None
        one = [0] * len(self.hand)
        out, into = list(one), list(one)
        out[h], into[r] = 1, 1
        return f"{self.sizes.text(tuple(out))}->{self.sizes.text(tuple(into))}"

    def __str__(self) -> str:
        return f"swaps of 1 or 2 dice from {self.sizes.text(self.hand)} for {self.sizes.text(self.reserve)}"


# ----- the context of a decision, in the file's words ---------------------------------------


def _queue(head: int, left: int, tail_code: int, tail: int) -> tuple:
    """Queue columns -> the model's queue (the file words it by `decision_context`).

    >>> _queue(2, 1, 3, 2)
    ('G', 'place', 't')
    """
    queue = ("B" if head == QUEUE_CODES["B"] else "G",) * left
    if tail_code == QUEUE_CODES["place"]:
        return queue + ("place", _WINNERS[tail])
    if tail_code:
        return queue + ("B" if tail_code == QUEUE_CODES["B"] else "G",) * tail
    return queue


def context_words(point: str, extra: list[int]) -> dict:
    """A decision's context columns -> the file's ``context``: (winner) for risk, (winner,
    dice to take) for take, the queue columns for the Test's decisions.

    >>> context_words("take", [2, 1]), context_words("glitch", [2, 0, 1, 1])
    ({'roll_winner': 'tie', 'take': 1}, {'queue': ['B']})
    """
    if point == "risk":
        return decision_context(point, _WINNERS[extra[0]])
    if point == "take":
        return decision_context(point, _WINNERS[extra[0]], extra[1])
    return decision_context(point, _queue(*extra))


def _placing_winner(point: str, extra: list[int]) -> str | None:
    """Whose chips go on the stack at this round's placement ("p", "n", "t") when the
    decision comes before it (risk, take, or a Glitch from Peril), else None."""
    if point in ("risk", "take"):
        return _WINNERS[extra[0]]
    if extra[2] == QUEUE_CODES["place"]:
        return _WINNERS[extra[3]]
    return None


# ----- the file's view of the simulator's positions -----------------------------------------


class WrittenView:
    """Per contest of a batch, how the simulator's chips and stacks differ from the file's.

    An observer of the `ContestEngine` (it follows the events that move chips in ways the
    cut does not simply carry: the round's start, placement, footing-discard, a sideswipe
    of chips, sudden death). Columns are (player, narrator):

    - ``chips``: chips in hand past the written ones (the cut at the round's start, kept
      through additive gains; discarded with the chips; passed on with a sideswipe);
    - ``stack``: the simulator's stack minus the written stack, after a placement of
      cut chips (the file's stack is the written height modulo 5);
    - ``completions``: completions of that placement past the written ones, so the Test's
      ``queue`` shows the written count of rewards still to come.

    With the model's cut, a placement of cut chips completes every place left on the track,
    so ``stack`` and ``completions`` matter only until that Test ends the contest.
    """

    def __init__(self, n: int, peril_to_stack: bool):
        self.peril_to_stack = peril_to_stack
        self.chips = np.zeros((n, 2), dtype=np.int64)
        self.stack = np.zeros((n, 2), dtype=np.int64)
        self.completions = np.zeros((n, 2), dtype=np.int64)

    def notice(self, event: str, engine, rows: np.ndarray, values: dict) -> None:
        handler = self._HANDLERS.get(event)
        if handler is not None:
            handler(self, engine, engine.trial[rows], rows, values)

    def _round(self, engine, ids, rows, values) -> None:
        """The round's start: cut the written chips as the file does."""
        written = self.counters(engine, rows)
        limits = written_chip_limits(written[:, 7], written[:, 4], written[:, 5], written[:, 2], written[:, 3])
        chips = np.column_stack([engine.player_chips[rows], engine.narrator_chips[rows]])
        self.chips[ids] = chips - np.minimum(written[:, :2], np.column_stack(limits))
        self.completions[ids] = 0

    def _placed(self, engine, ids, rows, values) -> None:
        side = _SIDE[values["side"]]
        written_chips = values["chips"] - self.chips[ids, side]
        written_stack = values["stack"] - self.stack[ids, side]
        completions, left, stack = engine.placement(written_chips, written_stack)
        self.chips[ids, side] = values["left"] - left
        self.stack[ids, side] = values["new_stack"] - stack
        self.completions[ids, side] = values["completions"] - completions

    def _discarded(self, engine, ids, rows, values) -> None:
        self.chips[ids, 1] = 0

    def _swiped(self, engine, ids, rows, values) -> None:
        self.chips[ids, 0] += self.chips[ids, 1]
        self.chips[ids, 1] = 0

    def _emptied(self, engine, ids, rows, values) -> None:
        for columns in (self.chips, self.stack, self.completions):
            columns[ids] = 0

    _HANDLERS = {
        "round": _round,
        "placed": _placed,
        "footing_discard": _discarded,
        "sideswipe_chips": _swiped,
        "sudden_death": _emptied,
    }

    def counters(self, engine, rows: np.ndarray) -> np.ndarray:
        """The `COUNTERS` of ``rows`` as the file writes them (one row per contest)."""
        ids = engine.trial[rows]
        columns = np.column_stack([getattr(engine, name)[rows] for name in COUNTERS])
        columns[:, 0:2] -= self.chips[ids]
        columns[:, 2:4] -= self.stack[ids]
        return columns

    def queue(self, engine, rows: np.ndarray, queue: np.ndarray) -> np.ndarray:
        """Queue columns of ``rows`` with the written count of rewards still to come."""
        ids = engine.trial[rows]
        written = queue.copy()
        for code_column, count_column in ((0, 1), (2, 3)):
            for code, side in ((QUEUE_CODES["B"], 0), (QUEUE_CODES["G"], 1)):
                is_code = written[:, code_column] == code
                written[is_code, count_column] -= self.completions[ids[is_code], side]
        return written

    def position(self, sizes_count: int, packed: np.ndarray, point: str, extra: list[int]) -> Position:
        """The written `Position` of one packed row (dice, then `COUNTERS`), with the placing
        sides' stacks in hand before the placement (`placement_folded`)."""
        k = sizes_count
        dice = (tuple(int(c) for c in packed[i * k : (i + 1) * k]) for i in range(4))
        position = Position(*dice, *(int(value) for value in packed[4 * k : 4 * k + len(COUNTERS)]))
        placing = _placing_winner(point, extra)
        return position if placing is None else placement_folded(position, placing, self.peril_to_stack)


# ----- the strategy ------------------------------------------------------------------------------


class StrategyReplay:
    """The actions of a strategy table for the sides that play ``optimal`` / ``kind``.

    ``table`` is what `exactdice.karbon.strategy.load_strategy` returns ({decision key:
    action}, the file's header under ``None``); the header must match the simulation's
    ruleset, policies and die sizes. A decision the table lacks where the rules leave a
    choice, or an action that is not legal where it is played, is an `InputError` naming
    the decision.

    >>> from exactdice.karbon.setup import ContestSetup
    >>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, consequence=1, pool={}, reserve={})
    >>> header = {"ruleset": Rules().to_dict(), "dice_sizes": [6, 8],
    ...           "policies": {"player": "optimal", "narrator": NarratorPolicy().text()}}
    >>> replay = StrategyReplay({None: header}, setup, Rules(), PlayerPolicy(kind="optimal"),
    ...                         NarratorPolicy())
    >>> replay.player_strategic, replay.narrator_strategic
    (True, False)
    >>> replay.decide("risk", {"wins": 0}, {"roll_winner": "tie"}, NamedChoice(["no", "yes"]))
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: strategy: the strategy has no decision for point 'risk' at state {"wins": 0} with context {"roll_winner": "tie"}: it was written for another setup, ruleset or policies
    """

    def __init__(self, table: Mapping, setup, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy):
        self.table = table
        self.ruleset, self.player, self.narrator = ruleset, player, narrator
        self.player_strategic = player.kind == "optimal"
        self.narrator_strategic = narrator.kind in ("optimal", "kind")
        self.seen: dict = {}  # (point, packed state and context) -> action, filled by the engine
        header = table.get(None)
        if not isinstance(header, Mapping):
            raise InputError("strategy", "the strategy table has no header (ruleset, policies, dice_sizes)")
        expected = {
            "ruleset": ruleset.to_dict(),
            "policies": {"player": player.text(), "narrator": narrator.text()},
            "dice_sizes": list(setup.sizes().sizes),
        }
        if "setup" in header:  # files written before the setup was kept lack it
            expected["setup"] = setup.to_dict()
        for name, value in expected.items():
            written = header.get(name)
            if written != value:
                if isinstance(written, dict) and isinstance(value, dict):  # name only what differs
                    differ = [key for key in {**written, **value} if written.get(key) != value.get(key)]
                    written = {key: written.get(key) for key in differ}
                    value = {key: value.get(key) for key in differ}
                raise InputError(
                    "strategy",
                    f"the strategy was written for {name} {json.dumps(written)} but "
                    f"this simulation has {json.dumps(value)}; write a strategy for "
                    "these settings (karbon odds writes one: `strategy` FILE)",
                )

    def written_view(self, n: int) -> WrittenView:
        """A fresh `WrittenView` for a batch of ``n`` contests."""
        return WrittenView(n, self.ruleset.peril_chips == "stack")

    def decide(self, point: str, state: dict, context: dict, choice) -> str:
        """The table's action at one decision, checked against ``choice``; the only move
        when the table has none and the rules leave one."""
        action = self.table.get(decision_key(point, state, context))
        if action is None:
            action = choice.forced()
            if action is None:
                raise InputError(
                    "strategy",
                    f"the strategy has no decision for point '{point}' at state "
                    f"{json.dumps(state)} with context {json.dumps(context)}: it was "
                    "written for another setup, ruleset or policies",
                )
            return action
        if not choice.allows(action):
            raise InputError(
                "strategy",
                f"the strategy plays '{action}' at point '{point}' (state "
                f"{json.dumps(state)}, context {json.dumps(context)}), where the "
                f"legal actions are {choice}",
            )
        return action

    def start(self, setup):
        """The contest's start with the draws the strategy makes (fixed sides draw by preference)."""
        player_draw = narrator_draw = None
        if setup.player_dice is None and (self.player_strategic or self.narrator_strategic):
            if self.player_strategic:
                by_text = {dice_text(draw): draw for draw in setup.player_draws()}
                if by_text:
                    player_draw = by_text[self.decide("draw", {}, {}, NamedChoice(by_text))]
            if self.narrator_strategic:
                if player_draw is None:
                    player_draw = setup.start(self.player, self.narrator).player_draw
                by_text = {dice_text(answer): answer for answer in setup.narrator_draws(player_draw)}
                if by_text:
                    narrator_draw = by_text[
                        self.decide("narrator_draw", {}, {"player_draw": dice_text(player_draw)}, NamedChoice(by_text))
                    ]
        return setup.start(self.player, self.narrator, player_draw, narrator_draw)
