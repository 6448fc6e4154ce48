"""Strategy files: the action chosen at every decision state, in a documented JSON format.

``karbon odds --strategy FILE.json`` writes one; ``karbon simulate --strategy FILE``
replays it without the exact model. The file is one JSON object::

    {"format": "exactdice-karbon-strategy/2",
     "ruleset": {...}, "policies": {"player": "optimal", "narrator": "optimal"},
     "dice_sizes": [6, 8, 10],
     "decisions": [
        {"point": "risk", "side": "player",
         "state": {<the keys of a --state file>},
         "context": {"roll_winner": "player"},
         "action": "no"}, ...]}

``state`` has the `--state` file's keys (``player_dice``, ``narrator_dice``, ``pool``,
``reserve`` as dice strings; ``player_chips``, ``narrator_chips``, ``player_stack``,
``narrator_stack``, ``wins``, ``losses``, ``peril``, ``consequence``). ``point`` is where
in the round the decision falls, and ``context`` what else it depends on:

=============  ========  ============================================================
point          side      context / actions
=============  ========  ============================================================
draw           player    {} / the dice drawn, e.g. ``"2d8,d10"``
narrator_draw  narrator  {"player_draw"} / the dice drawn
risk           player    {"roll_winner"} / ``"no"``, ``"yes"``
take           player    {"roll_winner", "take"} / the dice taken from the pool
break          player    {"queue"} / ``security``, ``footing-discard``, ``footing-dice``, ``advantage``
swap           player    {"queue"} / ``"<out>-><in>"``, e.g. ``"d10->d6"``
give           narrator  {"queue"} / the dice given (footing-dice)
glitch         player    {"queue"} / ``hurt``, ``plans``, ``sideswipe``
hurt           narrator  {"queue"} / ``injury``, ``condition``
plans          narrator  {"queue"} / ``dice``, ``peril``
planstake      narrator  {"queue"} / the dice taken from the pool
sideswipe      player    {"queue"} / ``chips``, ``dice``
swipedice      picker    {"queue"} / the dice taken (the picker is the ruleset's sideswipe_picker)
=============  ========  ============================================================

``roll_winner`` is ``player``, ``narrator`` or ``tie``; ``queue`` lists what is still
to resolve in this Test after the current reward: ``"B"`` (a Break), ``"G"`` (a
Glitch) and ``"place:<roll_winner>"`` (the placement step, after Peril's Glitches).
The ``state`` is the position *after* everything already resolved (the roll's chips
and Opening, risk, peril, marks on the track). Chips in hand are written as the exact
model keeps them: at the start of each round (the first included) each hand is cut to
the chips that can still make a difference (``KarbonModel._capped``: with track W, X
wins and O losses, at most ``b = W - X - O`` Breaks can still be resolved, so the player
keeps at most ``5 b - player_stack`` chips and the narrator at most
``max(5 (W - O) - narrator_stack, 5 b if W - O >= 2 else 0, 1)``); chips gained later in
the round are added to the cut amounts. Between the roll and the Test's placement
(``risk``, ``take``, and Glitches from Peril, whose ``queue`` still holds
``place:<roll_winner>``), each side that places at this Test is written with its stack
in hand and ``*_stack`` 0, as only the sum of the two matters until placement
(`exactdice.karbon.position.placement_folded`); the narrator's stack stays apart when a
peril roll can still add to it (``peril_chips`` = ``stack`` and peril > 0), and nothing
is folded when both hands are empty and there is no peril. A replayer describes its
positions the same way (`written_chip_limits` gives the cut) while playing every chip it
holds (`exactdice.karbon.replay.WrittenView`).

>>> key = decision_key("risk", {"wins": 0}, {"roll_winner": "tie"})
>>> key == decision_key("risk", {"wins": 0}, {"roll_winner": "tie"})
True
"""

from __future__ import annotations

import json

import numpy as np

from exactdice.errors import InputError
from exactdice.input_files import read_json_file
from exactdice.output_files import write_output
from exactdice.karbon.dice import DiceSizes
from exactdice.karbon.position import STACK_SIZE, Position

__all__ = [
    "FORMAT",
    "describe_position",
    "describe_decision",
    "decision_context",
    "decision_key",
    "write_strategy",
    "load_strategy",
    "written_chip_limits",
]

FORMAT = "exactdice-karbon-strategy/2"  # /2: stacks held in hand before placement
_WINNER_WORD = {"p": "player", "n": "narrator", "t": "tie"}


def describe_position(sizes: DiceSizes, position: Position) -> dict:
    """A position in the `--state` file's keys."""
    return {
        "player_dice": sizes.text(position.player_hand),
        "narrator_dice": sizes.text(position.narrator_hand),
        "pool": sizes.text(position.pool),
        "reserve": sizes.text(position.reserve),
        "player_chips": position.player_chips,
        "narrator_chips": position.narrator_chips,
        "player_stack": position.player_stack,
        "narrator_stack": position.narrator_stack,
        "wins": position.wins,
        "losses": position.losses,
        "peril": position.peril,
        "consequence": position.track,
    }


def _queue_words(queue: tuple) -> list[str]:
    words, index = [], 0
    while index < len(queue):
        token = queue[index]
        if token == "place":
            words.append(f"place:{_WINNER_WORD[queue[index + 1]]}")
            index += 2
        else:
            words.append(token)
            index += 1
    return words


def describe_decision(sizes: DiceSizes, situation) -> tuple[str, dict, dict]:
    """(point, state, context) of a model decision situation."""
    point = situation[0]
    if point == "draw":
        return "draw", {}, {}
    if point == "ndraw":
        return "narrator_draw", {}, {"player_draw": situation[1]}
    state = describe_position(sizes, situation[1])
    return point, state, decision_context(point, *situation[2:])


def decision_context(point: str, *detail) -> dict:
    """The file's ``context`` of a decision at *point* (not a draw), from the model's terms:
    the roll winner (``"p"``, ``"n"`` or ``"t"``) for risk, the winner and the dice to take
    for take, else the queue still to resolve (a tuple like ``("G", "place", "t")``).

    >>> decision_context("take", "t", 1), decision_context("glitch", ("G", "place", "t"))
    ({'roll_winner': 'tie', 'take': 1}, {'queue': ['G', 'place:tie']})
    """
    if point == "risk":
        return {"roll_winner": _WINNER_WORD[detail[0]]}
    if point == "take":
        return {"roll_winner": _WINNER_WORD[detail[0]], "take": detail[1]}
    return {"queue": _queue_words(detail[0])}


def written_chip_limits(track, wins, losses, player_stack, narrator_stack):
    """(player, narrator): the most chips in hand a state is written with at a round's start.

    The cut of the format above, for a replayer that maps its own positions to the file's
    keys (the simulator plays every chip and cuts only its description). Takes numbers or
    numpy arrays (one entry per position).

    >>> [int(limit) for limit in written_chip_limits(2, 0, 0, 1, 0)]
    [9, 10]
    """
    breaks = track - wins - losses
    player = np.maximum(0, STACK_SIZE * breaks - player_stack)
    narrator = np.maximum(
        np.maximum(
            STACK_SIZE * (track - losses) - narrator_stack, np.where(track - losses >= 2, STACK_SIZE * breaks, 0)
        ),
        1,
    )
    return player, narrator


def decision_key(point: str, state: dict, context: dict) -> str:
    """A canonical string key for looking a decision up (used by the simulator)."""
    return json.dumps([point, state, context], sort_keys=True, separators=(",", ":"))


def write_strategy(
    path, sizes: DiceSizes, strategy: dict, sides: dict, ruleset: dict, policies: dict, setup: dict | None = None
) -> int:
    """Write the strategy JSON; returns how many decisions it holds.

    ``strategy`` maps model situations to action names, ``sides`` maps them to
    "player"/"narrator" (who decides there); ``setup`` (`ContestSetup.to_dict`), when
    given, is written too, so a replay of another setup is refused before it starts.
    """
    decisions = []
    for situation, action in strategy.items():
        point, state, context = describe_decision(sizes, situation)
        decisions.append(
            {
                "point": point,
                "side": sides.get(situation, "player"),
                "state": state,
                "context": context,
                "action": action,
            }
        )
    decisions.sort(key=lambda entry: decision_key(entry["point"], entry["state"], entry["context"]))
    document = {
        "format": FORMAT,
        "ruleset": ruleset,
        "policies": policies,
        "dice_sizes": list(sizes.sizes),
        "decisions": decisions,
    }
    if setup is not None:
        document["setup"] = setup
    write_output(path, json.dumps(document, indent=1), "strategy")
    return len(decisions)


def load_strategy(path) -> dict:
    """Read a strategy file into {decision_key: action} (plus the file's header under None)."""
    document = read_json_file(path, "strategy")
    written = document.get("format") if isinstance(document, dict) else None
    if isinstance(written, str) and written.startswith(FORMAT.rsplit("/", 1)[0] + "/") and written != FORMAT:
        raise InputError(
            "strategy",
            f"{path} is in the older format {written}; this exactdice reads {FORMAT}: "
            "write it again with karbon odds and `strategy` FILE",
        )
    if written != FORMAT:
        raise InputError("strategy", f"{path} is not an exactdice strategy file (format {FORMAT})")
    decisions = document.get("decisions")
    if not isinstance(decisions, list):
        raise InputError("strategy", f'{path}: "decisions" must be a list of decisions, got {type(decisions).__name__}')
    table = {}
    for number, entry in enumerate(decisions):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("point"), str)
            and isinstance(entry.get("state"), dict)
            and isinstance(entry.get("context"), dict)
            and isinstance(entry.get("action"), str)
        ):
            raise InputError(
                "strategy",
                f"{path}: decision {number} must be an object with "
                '"point" (text), "state" (object), "context" (object) '
                'and "action" (text)',
            )
        table[decision_key(entry["point"], entry["state"], entry["context"])] = entry["action"]
    table[None] = {k: v for k, v in document.items() if k != "decisions"}
    return table
