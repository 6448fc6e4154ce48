"""Contest setups (spec section 3): Ability/Challenge draws, explicit hands, mid-contest states.

>>> setup = ContestSetup(ability=2, challenge=1, consequence=1)
>>> start = setup.start(PlayerPolicy(), NarratorPolicy())
>>> start.sizes.text(start.position.player_hand), start.sizes.text(start.position.narrator_hand)
('2d8', 'd8')
"""

from __future__ import annotations

import json

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from exactdice.errors import InputError, TooLargeError
from exactdice.input_files import read_json_file
from exactdice.karbon.dice import DiceCounts, DiceSizes, compositions, dice_counts, dice_text, parse_dice_list
from exactdice.karbon.position import STACK_SIZE, Position
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy

__all__ = [
    "ContestSetup",
    "ContestStart",
    "DEFAULT_POOL",
    "DEFAULT_RESERVE",
    "read_state_file",
    "setup_from_cell",
    "STATE_KEYS",
]

DEFAULT_POOL = {6: 7, 8: 5, 10: 3}
DEFAULT_RESERVE = {6: 5}

#: most starting peril dice, and most Fallout Glitches: each round rolls P d8 (P + 1 outcomes,
#: up to P / 5 Glitches each), so the work of one round grows with P**2 (P = 500: 12 s for
#: -a 1 -c 1; 100,000 ran for hours)
MAX_PERIL = 200
MAX_FALLOUT = 200
#: longest victory track: the states grow with it (W = 20 with -a 1 -c 1: 14 s on a busy machine)
MAX_CONSEQUENCE = 20
#: most dice in one hand (Ability, Challenge or an explicit hand): a hand's roll table grows
#: with its outcomes (20 d6 against a d6: 5.5 s on a loaded machine; 1000 d6 ran for minutes)
MAX_HAND_DICE = 20

STATE_KEYS = (
    "player_dice",
    "narrator_dice",
    "pool",
    "reserve",
    "player_chips",
    "narrator_chips",
    "player_stack",
    "narrator_stack",
    "wins",
    "losses",
    "peril",
    "consequence",
)


@dataclass(frozen=True)
class ContestStart:
    """Where the exact model starts: the dice sizes, the first position, the fallout glitches,
    and what the draw did (for the report)."""

    sizes: DiceSizes
    position: Position
    fallout: int = 0
    player_draw: dict = field(default_factory=dict)
    narrator_draw: dict = field(default_factory=dict)

    def situation(self):
        """The model's initial situation (fallout glitches are thrown before the first round)."""
        if self.fallout:
            return ("test", self.position, ("G",) * self.fallout)
        return self.position


@dataclass(frozen=True)
class ContestSetup:
    """A contest as the rules set it up: drawn hands, explicit hands, or a mid-contest state.

    Dice are {sides: count} mappings (or dice text such as ``"7d6,5d8,3d10"``, or counts),
    kept as read-only `DiceCounts`, so a setup is immutable and hashable. With
    ``player_dice``/``narrator_dice`` no draw happens.

    Parameters
    ----------
    ability : int, optional
        Dice the player draws from the pool (A >= 0); needed unless hands are given.
    challenge : int, optional
        Dice the narrator draws (C >= 1); needed unless hands are given.
    consequence : int, default 2
        The victory track's length (W >= 1).
    peril : int, default 0
        Starting peril dice (P >= 0).
    fortune : int, default 0
        The player's Fortune: each d6 it draws costs one.
    training : bool, default False
        The player gains a chip for each d8 drawn.
    fallout : int, default 0
        Glitches thrown before the first round.
    player_dice, narrator_dice : dice, optional
        Explicit hands instead of a draw.
    draw_chips : bool, default False
        With explicit hands, pay the draw's chips as if the hands were drawn.
    pool : dice, default 7d6, 5d8, 3d10
        The main pool.
    reserve : dice, default 5d6
        The reserve.
    player_chips, narrator_chips : int, default 0
        Chips in hand (a mid-contest state).
    player_stack, narrator_stack : int, default 0
        Chips on each stack, 0-4 (a mid-contest state).
    wins, losses : int, default 0
        Xs and Os already on the track (a mid-contest state).

    Raises
    ------
    InputError
        Naming the parameter: a negative or missing count, bad dice text, a pool that cannot
        supply the draw, a full track, a stack of 5 or more.

    Examples
    --------
    >>> hash(ContestSetup(ability=1, challenge=1)) == hash(ContestSetup(ability=1, challenge=1))
    True
    """

    ability: int | None = None
    challenge: int | None = None
    consequence: int = 2
    peril: int = 0
    fortune: int = 0
    training: bool = False
    fallout: int = 0
    player_dice: Mapping[int, int] | None = None
    narrator_dice: Mapping[int, int] | None = None
    draw_chips: bool = False
    pool: Mapping[int, int] = field(default_factory=lambda: DiceCounts(DEFAULT_POOL))
    reserve: Mapping[int, int] = field(default_factory=lambda: DiceCounts(DEFAULT_RESERVE))
    # mid-contest extras (from a state file)
    player_chips: int = 0
    narrator_chips: int = 0
    player_stack: int = 0
    narrator_stack: int = 0
    wins: int = 0
    losses: int = 0

    def __post_init__(self):
        self._freeze_dice()
        self._check_counts()
        self._check_sizes()
        self._check_position()
        self._check_hands()

    def _check_counts(self) -> None:
        """Every count is a whole number at or above its least value."""
        checks = [
            ("consequence", self.consequence, 1),
            ("peril", self.peril, 0),
            ("fortune", self.fortune, 0),
            ("fallout", self.fallout, 0),
            ("player_chips", self.player_chips, 0),
            ("narrator_chips", self.narrator_chips, 0),
            ("player_stack", self.player_stack, 0),
            ("narrator_stack", self.narrator_stack, 0),
            ("wins", self.wins, 0),
            ("losses", self.losses, 0),
        ]
        if self.ability is not None:
            checks.append(("ability", self.ability, 0))
        if self.challenge is not None:
            checks.append(("challenge", self.challenge, 1))
        for name, value, least in checks:
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise InputError(name, f"must be a whole number >= {least}, got {value!r}")

    def _check_sizes(self) -> None:
        """Peril, Fallout and the track within the limits that keep the work bounded."""
        for name, value, most in (("peril", self.peril, MAX_PERIL), ("fallout", self.fallout, MAX_FALLOUT)):
            if value > most:
                raise TooLargeError(
                    name,
                    f"{value:,} is more than the limit of {most} (every round rolls the "
                    "peril dice and every 5 hits throw a Glitch: the work grows with the "
                    "square of the count)",
                )
        if self.consequence > MAX_CONSEQUENCE:
            raise TooLargeError(
                "consequence",
                f"{self.consequence:,} is more than the limit of {MAX_CONSEQUENCE} "
                "(the contest's states grow with the track's length)",
            )
        for name, count in (
            ("ability", self.ability),
            ("challenge", self.challenge),
            ("player_dice", sum((self.player_dice or {}).values())),
            ("narrator_dice", sum((self.narrator_dice or {}).values())),
        ):
            if count is not None and count > MAX_HAND_DICE:
                raise TooLargeError(
                    name,
                    f"{count:,} dice in a hand is more than the limit of {MAX_HAND_DICE} (a "
                    "hand's roll table grows with the outcomes of its dice)",
                )

    def _check_position(self) -> None:
        """A mid-contest position that can be: stacks below a completion, the track not full."""
        for name, value in (("player_stack", self.player_stack), ("narrator_stack", self.narrator_stack)):
            if value >= STACK_SIZE:
                raise InputError(
                    name, f"a stack holds at most {STACK_SIZE - 1} chips (5 make a completion), got {value}"
                )
        if self.wins + self.losses >= self.consequence:
            raise InputError(
                "wins",
                f"X + O = {self.wins + self.losses} must be below the consequence "
                f"{self.consequence} (the track would be full)",
            )

    def _check_hands(self) -> None:
        """Either a draw (Ability and Challenge) or both explicit hands; draw chips only with hands."""
        explicit = self.player_dice is not None or self.narrator_dice is not None
        if explicit:
            if self.player_dice is None or self.narrator_dice is None:
                raise InputError("player_dice", "give both `player_dice` and `narrator_dice` (or neither)")
            if self.ability is not None or self.challenge is not None:
                raise InputError("ability", "give either `ability`/`challenge` (a draw) or explicit hands, not both")
        else:
            if self.ability is not None and self.challenge is None:
                raise InputError(
                    "challenge",
                    "give `challenge` too: a draw needs both `ability` and `challenge` "
                    "(or give explicit `player_dice` and `narrator_dice`)",
                )
            if self.ability is None and self.challenge is not None:
                raise InputError(
                    "ability",
                    "give `ability` too: a draw needs both `ability` and `challenge` "
                    "(or give explicit `player_dice` and `narrator_dice`)",
                )
            if self.ability is None:
                raise InputError(
                    "ability", "give `ability` and `challenge` (or explicit `player_dice` and `narrator_dice`)"
                )
        if self.draw_chips and not explicit:
            raise InputError("draw_chips", "only applies to explicit hands")

    def _freeze_dice(self) -> None:
        for name in ("player_dice", "narrator_dice", "pool", "reserve"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, DiceCounts):
                object.__setattr__(self, name, DiceCounts(dice_counts(value, name)))

    # ----- the draw ---------------------------------------------------------------------

    def sizes(self) -> DiceSizes:
        """All die sizes this contest can see."""
        found = set(self.pool) | set(self.reserve)
        for hand in (self.player_dice, self.narrator_dice):
            found |= set(hand or {})
        return DiceSizes(found or {6})

    def player_draws(self) -> list[dict]:
        """Every composition the player may draw: A dice from the pool, at most F d6.

        >>> [dice_text(x) for x in ContestSetup(ability=1, challenge=1, fortune=1).player_draws()]
        ['d6', 'd8', 'd10']
        """
        sizes = self.sizes()
        pool = sizes.counts(self.pool)
        draws = []
        for counts in compositions(pool, self.ability):
            drawn = sizes.mapping(counts)
            if drawn.get(6, 0) <= self.fortune:
                draws.append(drawn)
        return draws

    def narrator_draws(self, player_draw: dict) -> list[dict]:
        """Every composition the narrator may draw after the player's draw."""
        sizes = self.sizes()
        left = tuple(a - b for a, b in zip(sizes.counts(self.pool), sizes.counts(player_draw)))
        return [sizes.mapping(counts) for counts in compositions(left, self.challenge)]

    def _fixed_draw(self, available: dict, count: int, preference, limit_d6: int | None, who: str) -> dict:
        sizes = self.sizes()
        order = [sizes.sizes[i] for i in sizes.order_from_preference(tuple(preference))]
        drawn: dict = {}
        left = count
        for sides in order:
            can = available.get(sides, 0)
            if sides == 6 and limit_d6 is not None:
                can = min(can, limit_d6)
            take = min(can, left)
            if take:
                drawn[sides] = take
                left -= take
        if left:
            field_name = "ability" if who == "player" else "challenge"
            fortune_limits = (
                limit_d6 is not None and available.get(6, 0) > limit_d6 and sum(available.values()) >= count
            )
            extra = " (d6 cost one Fortune each; raise `fortune`)" if fortune_limits else ""
            raise InputError(
                field_name, f"the pool ({dice_text(available)}) cannot supply {count} dice for the {who}'s draw{extra}"
            )
        return drawn

    def start(
        self,
        player: PlayerPolicy,
        narrator: NarratorPolicy,
        player_draw: dict | None = None,
        narrator_draw: dict | None = None,
    ) -> ContestStart:
        """The first position: draws made (by the given compositions or the fixed preferences)."""
        sizes = self.sizes()
        pool = dict(self.pool)
        player_chips, narrator_chips = self.player_chips, self.narrator_chips
        if self.player_dice is not None:
            player_hand, narrator_hand = dict(self.player_dice), dict(self.narrator_dice)
            if self.draw_chips:
                player_chips += self._draw_chips_player(player_hand, narrator_hand)
                narrator_chips += narrator_hand.get(10, 0)
        else:
            if player_draw is None:
                player_draw = self._fixed_draw(pool, self.ability, player.draw, self.fortune, "player")
            _check_draw(pool, player_draw, self.ability, "ability", "player")
            if player_draw.get(6, 0) > self.fortune:
                raise InputError("fortune", f"drawing {player_draw[6]} d6 needs Fortune {player_draw[6]}")
            pool = _minus(pool, player_draw)
            if narrator_draw is None:
                narrator_draw = self._fixed_draw(pool, self.challenge, narrator.draw, None, "narrator")
            _check_draw(pool, narrator_draw, self.challenge, "challenge", "narrator")
            pool = _minus(pool, narrator_draw)
            player_hand, narrator_hand = dict(player_draw), dict(narrator_draw)
            player_chips += self._draw_chips_player(player_hand, narrator_hand)
            narrator_chips += narrator_hand.get(10, 0)
        position = Position(
            player_hand=sizes.counts(player_hand),
            narrator_hand=sizes.counts(narrator_hand),
            pool=sizes.counts(pool),
            reserve=sizes.counts(self.reserve),
            player_chips=player_chips,
            narrator_chips=narrator_chips,
            player_stack=self.player_stack,
            narrator_stack=self.narrator_stack,
            wins=self.wins,
            losses=self.losses,
            peril=self.peril,
            track=self.consequence,
        )
        return ContestStart(sizes, position, self.fallout, player_hand, narrator_hand)

    def _draw_chips_player(self, player_hand: dict, narrator_hand: dict) -> int:
        return (player_hand.get(8, 0) if self.training else 0) + narrator_hand.get(6, 0)

    def to_dict(self) -> dict:
        """A JSON-ready description (part of result and cache keys)."""
        result = {
            "ability": self.ability,
            "challenge": self.challenge,
            "consequence": self.consequence,
            "peril": self.peril,
            "fortune": self.fortune,
            "training": self.training,
            "fallout": self.fallout,
            "pool": dice_text(self.pool),
            "reserve": dice_text(self.reserve),
        }
        if self.player_dice is not None:
            result.update(
                player_dice=dice_text(self.player_dice),
                narrator_dice=dice_text(self.narrator_dice),
                draw_chips=self.draw_chips,
            )
        extras = {
            k: getattr(self, k)
            for k in ("player_chips", "narrator_chips", "player_stack", "narrator_stack", "wins", "losses")
        }
        if any(extras.values()):
            result.update(extras)
        return result


def setup_from_cell(arguments: Mapping) -> ContestSetup:
    """The contest of a table, design or sensitivity cell: its arguments as the results store
    keeps them (numbers, and the pool and reserve as dice text).

    >>> setup_from_cell({"ability": 2, "challenge": 1, "consequence": 1, "peril": 0,
    ...                  "pool": "d6,d6,d8", "reserve": "d10"}).reserve
    DiceCounts({10: 1})
    """
    return ContestSetup(
        ability=arguments["ability"],
        challenge=arguments["challenge"],
        consequence=arguments["consequence"],
        peril=arguments["peril"],
        fortune=arguments.get("fortune", 0),
        fallout=arguments.get("fallout", 0),
        training=arguments.get("training", False),
        pool=parse_dice_list(arguments.get("pool", dice_text(DEFAULT_POOL)), "pool"),
        reserve=parse_dice_list(arguments.get("reserve", dice_text(DEFAULT_RESERVE)), "reserve"),
    )


def _minus(pool: dict, taken: dict) -> dict:
    return {
        sides: pool.get(sides, 0) - taken.get(sides, 0)
        for sides in pool
        if pool.get(sides, 0) - taken.get(sides, 0) > 0
    }


def _check_draw(pool: dict, drawn: dict, count: int, field_name: str, who: str) -> None:
    if sum(drawn.values()) != count or any(drawn[s] > pool.get(s, 0) for s in drawn):
        raise InputError(field_name, f"the pool ({dice_text(pool)}) cannot supply the {who}'s draw {dice_text(drawn)}")


def read_state_file(path: str | Path) -> ContestSetup:
    """Read a mid-contest state (one JSON object with `STATE_KEYS`) into a setup.

    Parameters
    ----------
    path : str or Path
        The JSON file (the format: the documentation's formats reference, "The state file").

    Returns
    -------
    ContestSetup
        The setup whose odds are the odds "from here".

    Raises
    ------
    InputError
        Naming the key: an unknown or repeated key, a missing required one, an impossible
        value (a stack of 5 or more, a full track, a negative number), or a file that cannot
        be read as JSON.
    """
    field_name = "state"
    data = read_json_file(path, "state_file")  # the parameter (the CLI shows --state)
    if not isinstance(data, dict):
        raise InputError(field_name, f"{path} must hold one JSON object with keys {', '.join(STATE_KEYS)}")
    unknown = sorted(set(data) - set(STATE_KEYS))
    if unknown:
        raise InputError(field_name, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(STATE_KEYS)}")
    missing = [k for k in ("player_dice", "narrator_dice", "pool", "reserve", "consequence") if k not in data]
    if missing:
        raise InputError(field_name, f"missing key(s) {', '.join(missing)}")
    dice = {}
    for key in ("player_dice", "narrator_dice", "pool", "reserve"):
        value = data[key]
        if not isinstance(value, str):
            raise InputError(
                f"{field_name} {key}", f'must be a dice string like "2d8,d10" or "none", got {json.dumps(value)}'
            )
        dice[key] = parse_dice_list(value, f"{field_name} {key}")
    numbers = {}
    for key in (
        "player_chips",
        "narrator_chips",
        "player_stack",
        "narrator_stack",
        "wins",
        "losses",
        "peril",
        "consequence",
    ):
        value = data.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool):
            raise InputError(f"{field_name} {key}", f"must be a whole number, got {json.dumps(value)}")  # as written
        numbers[key] = value
    try:
        return ContestSetup(
            player_dice=dice["player_dice"],
            narrator_dice=dice["narrator_dice"],
            pool=dice["pool"],
            reserve=dice["reserve"],
            **numbers,
        )
    except InputError as error:
        raise InputError(f"{field_name} {error.field}", error.message) from None
