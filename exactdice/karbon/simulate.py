"""An independent Monte Carlo simulator of Karbon contests (spec sections 3-7).

It shares only the ruleset, the policy objects, the setup (its draw and first position)
and the dice helpers (`die_classes`, `DiceSizes`) with the exact model, never its
transition code nor its structure: every die is rolled one by one with
``numpy.random.Generator(PCG64(seed))`` and the contests are played step by step from the
spec, all contests of a batch advancing one round at a time (numpy arrays over contests,
finished ones dropped after each round).

The engine (`ContestEngine`) holds the rules only. It tells observers what happens
(`ContestEngine.EVENTS`): `exactdice.karbon.trace` narrates one contest from them.

Optimal and kind play is *replayed* from a strategy table (`StrategyReplay`, in
`exactdice.karbon.replay`: a file of ``karbon odds --strategy``, read with
`exactdice.karbon.strategy.load_strategy`): at each decision of such a side the simulator
describes its position as the file writes it, looks the action up and plays it after
checking it is legal. The play keeps every chip: the file's cut of the chips in hand is
applied to the description only (`exactdice.karbon.replay.WrittenView`), so a wrong cut in
the exact model shows as a disagreement with the simulated odds, not as a shared mistake.

One row per contest (`COLUMNS`):

- ``trial``: the contest's number, from 0
- ``outcome``: ``win`` | ``loss`` | ``tie`` | ``unfinished`` (still going after
  `MAX_ROUNDS` rounds: a contest where nobody can ever gain a chip)
- ``rounds``: rounds played (0 if the Fallout Glitches ended it)
- ``breaks``, ``glitches``: Break and Glitch marks made (Fallout and Peril Glitches included;
  rewards voided by the end of the contest are not counted)
- ``injuries``, ``conditions``: taken through ``hurt``

>>> from exactdice.karbon.setup import ContestSetup
>>> rows = simulate(ContestSetup(ability=2, challenge=1, consequence=1), n=4, seed=7)
>>> sorted(rows), len(rows["outcome"])
(['breaks', 'conditions', 'glitches', 'injuries', 'outcome', 'rounds', 'trial'], 4)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from exactdice.errors import InputError
from exactdice.karbon.dice import DiceSizes, die_classes, parse_dice_list
from exactdice.karbon.policies import BREAK_OPTIONS, GLITCH_OPTIONS, NarratorPolicy, PlayerPolicy
from exactdice.karbon.replay import (
    COUNTERS,
    QUEUE_CODES,
    DicePick,
    NamedChoice,
    StrategyReplay,
    SwapChoice,
    context_words,
)
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.samples import COLUMNS, OUTCOMES, summarize, write_samples_csv
from exactdice.karbon.strategy import describe_position, load_strategy

__all__ = [
    "simulate",
    "write_samples_csv",
    "summarize",
    "contest_start",
    "StrategyReplay",
    "COLUMNS",
    "OUTCOMES",
    "OUTCOME_COLUMN",
    "MAX_ROUNDS",
    "MAX_CONTESTS",
    "ContestEngine",
]

#: the categorical column `exactdice.karbon.solve.expected_distribution` gives the exact law of
OUTCOME_COLUMN = "outcome"
MAX_ROUNDS = 10_000
MAX_CONTESTS = 100_000_000
BATCH = 200_000  # contests advanced together (bounds memory)
STACK = 5  # chips that make a completion
RISK_DICE = 3  # d8 rolled when the player puts it all on the line
EXTRA_DIE = 8  # risk and peril dice are d8
EXTRA_HIT_TOP = die_classes(EXTRA_DIE)[0]  # their hits: faces 1 to this

_UNFINISHED, _WIN, _LOSS, _TIE = 0, 1, 2, 3
_OUTCOME_NAMES = np.array(["unfinished", "win", "loss", "tie"])


class ContestEngine:
    """A batch of ``n`` contests from the same start, played round by round.

    State is a set of numpy arrays over contests (dice are count matrices aligned with
    the contest's `DiceSizes`). ``replay`` plays the decisions of optimal/kind sides from
    a strategy (`StrategyReplay`). ``observers`` hear every event (`EVENTS`) through
    ``observer.notice(event, engine, rows, values)``: ``rows`` are the batch rows the
    event concerns (ascending; ``engine.trial[rows]`` are their contest numbers) and
    ``values`` holds arrays aligned with ``rows`` (and plain words or flags).
    """

    #: every event an observer can hear, with its values (arrays aligned with ``rows``)
    EVENTS = {
        "fallout": "count: Glitches thrown before the first round",
        "round": "number: the round about to be played",
        "roll": "side; rolled: (sides, faces matrix, dice rolled) per die size; hits; turncoats",
        "roll_won": "player_hits, narrator_hits: chips go to the winner (both on a tie)",
        "opening": "player_turncoats, narrator_turncoats: the dice set aside",
        "extra_dice": "purpose (risk, peril); faces; counts: the extra d8 shown",
        "risk": "risking; hits; taken: dice taken from the pool (both None when nobody risks); strategic",
        "peril": "dice, hits: the peril roll (on the narrator's stack or in its hand)",
        "peril_glitches": "count: completions of the narrator's stack before placement",
        "placed": "side; chips, stack: before; left, new_stack, completions: after",
        "mark": "kind: break (an X) or glitch (an O)",
        "sudden_death": "the track was full with a tie: one more place, chips and stacks emptied",
        "contest_over": "outcome: the result code (win, loss, tie)",
        "security": "a peril die is removed",
        "footing_discard": "chips: the narrator's chips, discarded",
        "footing_dice": "given: the dice the narrator gives the player",
        "advantage": "before, after: the player's hand; swaps: the strategy's swap texts or None",
        "hurt": "injury: an injury (else a condition)",
        "plans": "dice: the narrator takes dice (else adds a peril die); taken",
        "sideswipe_chips": "chips: the narrator's chips given to the player",
        "sideswipe_dice": "given: the dice the narrator gives the player",
        "round_over": "the round's end (state as it stands)",
        "unfinished": "max_rounds: the contests still going are stopped",
    }

    def __init__(
        self,
        start,
        ruleset: Rules,
        player: PlayerPolicy,
        narrator: NarratorPolicy,
        n: int,
        rng: np.random.Generator,
        observers=(),
        replay: StrategyReplay | None = None,
    ):
        self.ruleset, self.player, self.narrator = ruleset, player, narrator
        self.rng = rng
        self.replay = replay
        self.observers = tuple(observers)
        self.player_replays = replay is not None and replay.player_strategic
        self.narrator_replays = replay is not None and replay.narrator_strategic
        self.picker_replays = self.player_replays if ruleset.sideswipe_picker == "player" else self.narrator_replays
        self.view = None
        if replay is not None:
            self.view = replay.written_view(n)
            self.observers += (self.view,)
        self.sizes: DiceSizes = start.sizes
        sizes = self.sizes.sizes
        self.k = len(sizes)
        classes = [die_classes(s) for s in sizes]
        self.hit_top = np.array([h for h, _, _ in classes])
        self.miss_top = np.array([h + m for h, m, _ in classes])
        self.best_first = list(self.sizes.best_first)
        # chance class of each size (equal hit and turncoat chances share a class; lower is better)
        chances = [(-Fraction(h, s), Fraction(t, s)) for (h, _, t), s in zip(classes, sizes)]
        ordered = sorted(set(chances))
        self.quality = np.array([ordered.index(c) for c in chances])
        self.risk_take = list(self.sizes.order_from_preference(player.risk_take))
        self.plans_take = list(self.sizes.order_from_preference(narrator.plans_take))
        self.give = list(self.sizes.order_from_preference(narrator.give))
        self._set_state(start.position, n)
        self.fallout = start.fallout
        self.results = {name: np.zeros(n, dtype=np.int64) for name in COLUMNS if name != "outcome"}
        self.results["outcome"] = np.zeros(n, dtype=np.int8)

    def _set_state(self, position, n: int) -> None:
        """Every contest of the batch at ``position``, before its first round."""

        def vector(value):
            return np.full(n, value, dtype=np.int64)

        def matrix(counts):
            return np.tile(np.array(counts, dtype=np.int64).reshape(1, self.k), (n, 1))

        self.trial = np.arange(n)
        self.player_hand, self.narrator_hand = matrix(position.player_hand), matrix(position.narrator_hand)
        self.pool, self.reserve = matrix(position.pool), matrix(position.reserve)
        self.player_chips, self.narrator_chips = vector(position.player_chips), vector(position.narrator_chips)
        self.player_stack, self.narrator_stack = vector(position.player_stack), vector(position.narrator_stack)
        self.wins, self.losses = vector(position.wins), vector(position.losses)
        self.peril, self.track = vector(position.peril), vector(position.track)
        self.rounds, self.breaks, self.glitches = vector(0), vector(0), vector(0)
        self.injuries, self.conditions = vector(0), vector(0)
        self.outcome = np.zeros(n, dtype=np.int8)
        self.void = np.zeros(n, dtype=bool)  # a sudden-death restart voided the rest of this Test

    _STATE = (
        "trial",
        "player_hand",
        "narrator_hand",
        "pool",
        "reserve",
        "player_chips",
        "narrator_chips",
        "player_stack",
        "narrator_stack",
        "wins",
        "losses",
        "peril",
        "track",
        "rounds",
        "breaks",
        "glitches",
        "injuries",
        "conditions",
        "outcome",
        "void",
    )

    def _tell(self, event: str, rows: np.ndarray | None = None, **values) -> None:
        """Tell the observers an event (``rows`` None: every contest still going)."""
        if not self.observers:
            return
        if rows is None:
            rows = np.arange(len(self.trial))
        for observer in self.observers:
            observer.notice(event, self, rows, values)

    # ----- the whole contest ------------------------------------------------------------

    def run(self, max_rounds: int = MAX_ROUNDS) -> dict:
        """Play every contest to its end (or `max_rounds`); return the result columns."""
        if self.fallout:
            self._tell("fallout", count=self.fallout)
            self._resolve_rewards(np.full(len(self.trial), self.fallout), "glitch")
            self._retire()
        while len(self.trial) and self.rounds[0] < max_rounds:
            self.play_round()
            self._retire()
        if len(self.trial):
            self._tell("unfinished", max_rounds=max_rounds)
            self._retire(everything=True)
        return self.results

    def _retire(self, everything: bool = False) -> None:
        """Copy finished contests into the results and drop them from the batch."""
        finished = np.ones(len(self.trial), dtype=bool) if everything else self.outcome != _UNFINISHED
        if not finished.any():
            return
        ids = self.trial[finished]
        for name in ("rounds", "breaks", "glitches", "injuries", "conditions", "outcome"):
            self.results[name][ids] = getattr(self, name)[finished]
        self.results["trial"][ids] = ids
        keep = ~finished
        for name in self._STATE:
            setattr(self, name, getattr(self, name)[keep])

    # ----- one round (spec 4.1-4.7) -----------------------------------------------------

    def play_round(self) -> None:
        """Roll, winner, opening, risk, peril, set-aside dice moving, then the Test."""
        self.rounds += 1
        self._tell("round", number=self.rounds)
        player_hits, player_turncoats = self._roll_hand(self.player_hand, "player")
        narrator_hits, narrator_turncoats = self._roll_hand(self.narrator_hand, "narrator")
        player_won, narrator_won = player_hits > narrator_hits, narrator_hits > player_hits
        self.player_chips += np.where(narrator_won, 0, player_hits)
        self.narrator_chips += np.where(player_won, 0, narrator_hits)
        self._tell("roll_won", player_hits=player_hits, narrator_hits=narrator_hits)
        # 4.3 Opening: turncoat dice are set aside until the round is over
        self.player_hand -= player_turncoats
        self.narrator_hand -= narrator_turncoats
        player_count, narrator_count = player_turncoats.sum(axis=1), narrator_turncoats.sum(axis=1)
        player_opens, narrator_opens = player_count > narrator_count, narrator_count > player_count
        self._tell("opening", player_turncoats=player_turncoats, narrator_turncoats=narrator_turncoats)
        # where the set-aside dice go (4.6): the side that did not open gets the opener's
        to_player = np.where(narrator_opens[:, None], narrator_turncoats, 0) + np.where(
            player_opens[:, None], 0, player_turncoats
        )
        to_narrator = np.where(player_opens[:, None], player_turncoats, 0) + np.where(
            narrator_opens[:, None], 0, narrator_turncoats
        )
        winner = np.where(player_won, 0, np.where(narrator_won, 1, 2))
        self._risk(winner, to_player, to_narrator)
        self._peril()
        self.player_hand += to_player
        self.narrator_hand += to_narrator
        self._test(winner != 1, winner != 0)
        self._tell("round_over")

    def _risk(self, winner: np.ndarray, to_player: np.ndarray, to_narrator: np.ndarray) -> None:
        """4.4: the player rolls 3 d8 or not; hits take dice from the pool, misses are the
        narrator's chips. A replayed decision sees the hands with the Opening's dice moved."""
        n = len(self.trial)
        hands = None
        if self.player_replays:
            hands = (self.player_hand + to_player, self.narrator_hand + to_narrator)
            risking = (
                self._decide("risk", np.arange(n), winner[:, None], lambda i: NamedChoice(("no", "yes")), hands)
                == "yes"
            )
        else:
            risking = np.full(n, self.player.risk == "always")
        if not risking.any():
            self._tell("risk", risking=risking, hits=None, taken=None, strategic=self.player_replays)
            return
        hits = self._roll_extra(np.where(risking, RISK_DICE, 0), "risk")
        self.narrator_chips += np.where(risking, RISK_DICE - hits, 0)
        take = np.where(risking, np.minimum(hits, self.pool.sum(axis=1)), 0)
        if self.player_replays:
            takers = np.nonzero(take)[0]
            taken = np.zeros_like(self.pool)
            pools = self.pool[takers]
            taken[takers] = self._dice_matrix(
                self._decide(
                    "take",
                    takers,
                    np.column_stack([winner, take])[takers],
                    lambda i: DicePick(self.sizes, pools[i], take[takers[i]]),
                    hands,
                )
            )
        else:
            taken = _take_in_order(self.pool, take, self.risk_take)
        self.pool -= taken
        self.player_hand += taken
        self._tell("risk", risking=risking, hits=hits, taken=taken, strategic=self.player_replays)

    def _peril(self) -> None:
        """4.5: the peril dice's hits are the narrator's chips, on its stack or in its hand."""
        hits = self._roll_extra(self.peril, "peril")
        if self.ruleset.peril_chips == "stack":
            self.narrator_stack += hits
        else:
            self.narrator_chips += hits
        self._tell("peril", dice=self.peril, hits=hits)

    def _test(self, player_places: np.ndarray, narrator_places: np.ndarray) -> None:
        """4.7: Peril Glitches, placement, then the rewards in tie order."""
        self.void[:] = False
        peril_glitches = self.narrator_stack // STACK
        self.narrator_stack %= STACK
        self._tell("peril_glitches", count=peril_glitches)
        # the roll's winner code (0 player, 1 narrator, 2 tie) for the queue's "place:<winner>"
        winner = np.where(narrator_places, np.where(player_places, 2, 1), 0)
        self._resolve_rewards(peril_glitches, "glitch", "place", winner)
        going = (self.outcome == _UNFINISHED) & ~self.void
        breaks = self._place(going & player_places, "player")
        glitches = self._place(going & narrator_places, "narrator")
        if self.ruleset.tie_order == "player_first":
            self._resolve_rewards(breaks, "break", "G", glitches)
            self._resolve_rewards(glitches, "glitch")
        else:
            self._resolve_rewards(glitches, "glitch", "B", breaks)
            self._resolve_rewards(breaks, "break")

    def placement(self, chips: np.ndarray, stack: np.ndarray):
        """(completions, chips left in hand, stack) when a side puts ``chips`` on ``stack``:
        all of them, or, with one reward a Test, the chips past the first completion go
        back to hand."""
        height = stack + chips
        if self.ruleset.rewards_per_test == "1":
            done = height >= STACK
            return done.astype(np.int64), np.where(done, height - STACK, 0), np.where(done, 0, height)
        return height // STACK, np.zeros_like(height), height % STACK

    def _place(self, places: np.ndarray, side: str) -> np.ndarray:
        """Move the placing sides' chips onto their stacks; return the completions earned."""
        rows = np.nonzero(places)[0]
        chips, stack = getattr(self, f"{side}_chips"), getattr(self, f"{side}_stack")
        before_chips, before_stack = chips[rows], stack[rows]
        completions, left, new_stack = self.placement(before_chips, before_stack)
        self._tell(
            "placed",
            rows,
            side=side,
            chips=before_chips,
            stack=before_stack,
            left=left,
            new_stack=new_stack,
            completions=completions,
        )
        chips[rows], stack[rows] = left, new_stack
        earned = np.zeros(len(places), dtype=np.int64)
        earned[rows] = completions
        return earned

    # ----- rewards (spec 5 and 6) -------------------------------------------------------

    def _resolve_rewards(
        self, pending: np.ndarray, kind: str, tail_kind: str | None = None, tail: np.ndarray | None = None
    ) -> None:
        """Resolve ``pending`` Breaks or Glitches per contest, one at a time, until the end.

        What follows them in this Test (for the decisions' ``queue``) is ``tail``: per
        contest a count of ``"B"``/``"G"`` rewards, or the winner code of the placement
        step (``tail_kind`` ``"place"``).
        """
        pending = pending.copy()
        head = QUEUE_CODES["B" if kind == "break" else "G"]
        choose = self._break_option if kind == "break" else self._glitch_option
        while True:
            rows = np.nonzero((pending > 0) & (self.outcome == _UNFINISHED) & ~self.void)[0]
            if not len(rows):
                return
            pending[rows] -= 1
            rows = self._mark(rows, kind)
            if len(rows):
                choose(rows, _TestQueue(head, pending, QUEUE_CODES[tail_kind], tail))

    def _mark(self, rows: np.ndarray, kind: str) -> np.ndarray:
        """An X (a Break) or an O (a Glitch) on the track; return the rows that go on."""
        if kind == "break":
            self.wins[rows] += 1
            self.breaks[rows] += 1
        else:
            self.losses[rows] += 1
            self.glitches[rows] += 1
        self._tell("mark", rows, kind=kind)
        return self._check_track(rows)

    def _check_track(self, rows: np.ndarray) -> np.ndarray:
        """End the contests whose track is full; return the rows that go on."""
        full = self.wins[rows] + self.losses[rows] == self.track[rows]
        if not full.any():
            return rows
        ended = rows[full]
        wins, losses = self.wins[ended], self.losses[ended]
        result = np.where(wins > losses, _WIN, np.where(losses > wins, _LOSS, _TIE)).astype(np.int8)
        if self.ruleset.sudden_death == "on":
            again = ended[result == _TIE]
            self.track[again] += 1
            for name in ("player_chips", "narrator_chips", "player_stack", "narrator_stack"):
                getattr(self, name)[again] = 0
            self.void[again] = True
            self._tell("sudden_death", again)
            result[result == _TIE] = _UNFINISHED
        self.outcome[ended] = result
        over = result != _UNFINISHED
        self._tell("contest_over", ended[over], outcome=result[over])
        return rows[~full]

    def _break_option(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """5: the player's Break option (security, footing, advantage), by preference or strategy."""
        applicable = {
            "security": self.peril[rows] > 0,
            "footing-discard": self.narrator_chips[rows] > 0,
            "footing-dice": self.narrator_hand[rows].sum(axis=1) > 0,
            # an optimal player may swap any hand die for a reserve die of another size;
            # a fixed one only swaps when it improves the hand
            "advantage": (
                _other_size_held(self.player_hand[rows], self.reserve[rows])
                if self.player_replays
                else self._improving_swap(self.player_hand[rows], self.reserve[rows])[0]
            ),
        }
        if self.player_replays:
            choice = self._decide("break", rows, queue.columns(rows), _named_choice(applicable, "none"))
            groups = [(option, choice == option) for option in BREAK_OPTIONS]
        else:
            groups = _first_applicable(self.player.break_order, applicable)
        for option, chosen in groups:
            picked = rows[chosen]
            if len(picked):
                self._BREAK_ACTIONS[option](self, picked, queue)

    def _security(self, rows: np.ndarray, queue: _TestQueue) -> None:
        self.peril[rows] -= 1
        self._tell("security", rows)

    def _footing_discard(self, rows: np.ndarray, queue: _TestQueue) -> None:
        self._tell("footing_discard", rows, chips=self.narrator_chips[rows])
        self.narrator_chips[rows] = 0

    def _footing_dice(self, rows: np.ndarray, queue: _TestQueue) -> None:
        given = self._narrator_gives(rows, queue, "give", self.narrator_replays, self.give)
        self.narrator_hand[rows] -= given
        self.player_hand[rows] += given
        self._tell("footing_dice", rows, given=given)

    def _advantage(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """One or two hand dice for reserve dice: the strategy's swap, or the worst hand die
        for the best reserve die while that improves the hand (twice at most)."""
        hand, reserve = self.player_hand[rows], self.reserve[rows]
        before, swaps = hand.copy(), None
        if self.player_replays:
            hands, reserves = hand.copy(), reserve.copy()
            swaps = self._decide(
                "swap", rows, queue.columns(rows), lambda i: SwapChoice(self.sizes, hands[i], reserves[i])
            )
            out, into = (self._dice_matrix(np.array([swap.split("->")[side] for swap in swaps])) for side in (0, 1))
            hand += into - out
            reserve += out - into
        else:
            for _ in range(2):
                swap, out_index, in_index = self._improving_swap(hand, reserve)
                rows_swapping = np.nonzero(swap)[0]
                hand[rows_swapping, out_index[swap]] -= 1
                reserve[rows_swapping, out_index[swap]] += 1
                hand[rows_swapping, in_index[swap]] += 1
                reserve[rows_swapping, in_index[swap]] -= 1
        self.player_hand[rows], self.reserve[rows] = hand, reserve
        self._tell("advantage", rows, before=before, after=hand, swaps=swaps)

    _BREAK_ACTIONS = {
        "security": _security,
        "footing-discard": _footing_discard,
        "footing-dice": _footing_dice,
        "advantage": _advantage,
    }

    def _narrator_gives(self, rows: np.ndarray, queue: _TestQueue, point: str, replayed: bool, order) -> np.ndarray:
        """Two dice (or all, if fewer) of the narrator's hand per row: from the strategy or in ``order``."""
        if replayed:
            hands = self.narrator_hand[rows]
            return self._dice_matrix(
                self._decide(
                    point, rows, queue.columns(rows), lambda i: DicePick(self.sizes, hands[i], min(2, hands[i].sum()))
                )
            )
        return _take_in_order(self.narrator_hand[rows], np.full(len(rows), 2), order)

    def _glitch_option(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """6: the player's Glitch option (hurt, plans, sideswipe), by preference or strategy."""
        always = np.ones(len(rows), dtype=bool)
        applicable = {"hurt": always, "plans": always, "sideswipe": self.wins[rows] >= 1}
        if self.player_replays:
            choice = self._decide("glitch", rows, queue.columns(rows), _named_choice(applicable))
            groups = [(option, choice == option) for option in GLITCH_OPTIONS]
        else:
            groups = _first_applicable(self.player.glitch_order, applicable)
        for option, chosen in groups:
            picked = rows[chosen]
            if len(picked):
                self._GLITCH_ACTIONS[option](self, picked, queue)

    def _hurt(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """The narrator gives the Agent an injury (the player gains 2 chips) or a condition."""
        injury = self._narrator_picks("hurt", rows, queue, ("injury", "condition"), self.narrator.hurt)
        hurt = rows[injury]
        self.injuries[hurt] += 1
        self.player_chips[hurt] += 2
        if self.ruleset.injury_peril == "on":
            self.peril[hurt] += 1
        self.conditions[rows[~injury]] += 1
        self._tell("hurt", rows, injury=injury)

    def _plans(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """The narrator takes two dice from the pool (fewer if it holds fewer) or adds a peril die."""
        dice = self._narrator_picks("plans", rows, queue, ("dice", "peril"), self.narrator.plans)
        taker = rows[dice]
        if self.narrator_replays:
            pools = self.pool[taker]
            taken = self._dice_matrix(
                self._decide(
                    "planstake",
                    taker,
                    queue.columns(taker),
                    lambda i: DicePick(self.sizes, pools[i], min(2, pools[i].sum())),
                )
            )
        else:
            taken = _take_in_order(self.pool[taker], np.full(len(taker), 2), self.plans_take)
        self.pool[taker] -= taken
        self.narrator_hand[taker] += taken
        self.peril[rows[~dice]] += 1
        taken_by_row = np.zeros((len(rows), self.k), dtype=np.int64)
        taken_by_row[dice] = taken
        self._tell("plans", rows, dice=dice, taken=taken_by_row)

    def _sideswipe(self, rows: np.ndarray, queue: _TestQueue) -> None:
        """One X removed; the player takes the narrator's chips, or two of its dice."""
        self.wins[rows] -= 1
        if self.player_replays:
            takes_chips = (
                self._decide("sideswipe", rows, queue.columns(rows), lambda i: NamedChoice(("chips", "dice")))
                == "chips"
            )
        else:
            takes_chips = np.full(len(rows), self.player.sideswipe_take == "chips")
        chipped, diced = rows[takes_chips], rows[~takes_chips]
        if len(chipped):
            self._tell("sideswipe_chips", chipped, chips=self.narrator_chips[chipped])
            self.player_chips[chipped] += self.narrator_chips[chipped]
            self.narrator_chips[chipped] = 0
        if len(diced):
            order = self.best_first if self.ruleset.sideswipe_picker == "player" else self.give
            given = self._narrator_gives(diced, queue, "swipedice", self.picker_replays, order)
            self.narrator_hand[diced] -= given
            self.player_hand[diced] += given
            self._tell("sideswipe_dice", diced, given=given)

    _GLITCH_ACTIONS = {"hurt": _hurt, "plans": _plans, "sideswipe": _sideswipe}

    def _narrator_picks(
        self, point: str, rows: np.ndarray, queue: _TestQueue, options: tuple, preference: str
    ) -> np.ndarray:
        """The narrator's two-way choice per row (True: ``options[0]``): from the strategy,
        a fair coin (random narrator) or its fixed preference."""
        if self.narrator_replays:
            return self._decide(point, rows, queue.columns(rows), lambda i: NamedChoice(options)) == options[0]
        if self.narrator.kind == "random":
            return self.rng.random(len(rows)) < 0.5
        return np.full(len(rows), preference == options[0])

    # ----- replayed decisions (a strategy table) ------------------------------------------

    def _decide(self, point: str, rows: np.ndarray, context: np.ndarray, choice_at: Callable, hands=None) -> np.ndarray:
        """The strategy's action at ``point`` for each row (an array of action names).

        Each row is described as the strategy file writes it (`WrittenView`: chips cut,
        stacks folded before placement; ``hands`` replaces the hands when the decision sees
        them moved); ``context`` holds int columns (`replay.context_words`). Rows in the
        same state and context share one look-up; ``choice_at(i)`` is what the rules allow
        at ``rows[i]``.
        """
        if not len(rows):
            return np.array([], dtype=object)
        player_hand, narrator_hand = hands if hands is not None else (self.player_hand, self.narrator_hand)
        context = context.reshape(len(rows), -1)
        if point not in ("risk", "take"):
            context = self.view.queue(self, rows, context)
        written = np.hstack(
            [
                player_hand[rows],
                narrator_hand[rows],
                self.pool[rows],
                self.reserve[rows],
                self.view.counters(self, rows),
                context,
            ]
        )
        # the simulator's own counters decide what is legal, so they are part of the group
        columns = np.hstack([written, np.column_stack([getattr(self, name)[rows] for name in COUNTERS])])
        unique, first, inverse = np.unique(columns, axis=0, return_index=True, return_inverse=True)
        seen, replay = self.replay.seen, self.replay
        actions = []
        for packed, index in zip(unique, first):
            key = (point, packed.tobytes())
            action = seen.get(key)
            if action is None:
                extra = [int(value) for value in context[index]]
                position = self.view.position(self.k, written[index], point, extra)
                action = replay.decide(
                    point, describe_position(self.sizes, position), context_words(point, extra), choice_at(index)
                )
                seen[key] = action
            actions.append(action)
        return np.array(actions, dtype=object)[inverse.reshape(-1)]

    def _dice_matrix(self, names: np.ndarray) -> np.ndarray:
        """Dice texts like ``"2d8,d10"`` -> count rows aligned with the contest's die sizes."""
        if not len(names):
            return np.zeros((0, self.k), dtype=np.int64)
        unique, inverse = np.unique(names.astype(str), return_inverse=True)
        counts = np.array([self.sizes.counts(parse_dice_list(text, "strategy")) for text in unique], dtype=np.int64)
        return counts[inverse.reshape(-1)]

    def _improving_swap(self, hand: np.ndarray, reserve: np.ndarray):
        """(improves, hand index out, reserve index in): the worst hand die for the best reserve die."""
        order = np.array(self.best_first)
        in_hand, in_reserve = hand[:, order] > 0, reserve[:, order] > 0
        worst = len(order) - 1 - np.argmax(in_hand[:, ::-1], axis=1)
        best = np.argmax(in_reserve, axis=1)
        quality = self.quality[order]
        improves = in_hand.any(axis=1) & in_reserve.any(axis=1) & (quality[best] < quality[worst])
        return improves, order[worst], order[best]

    # ----- dice -------------------------------------------------------------------------

    def _roll_hand(self, hand: np.ndarray, side: str):
        """Roll every die of each hand: (hits, turncoats per die size)."""
        n = len(hand)
        hits = np.zeros(n, dtype=np.int64)
        turncoats = np.zeros_like(hand)
        rolled_sizes = []
        for index, sides in enumerate(self.sizes.sizes):
            counts = hand[:, index]
            most = int(counts.max()) if n else 0
            if most == 0:
                continue
            faces = self.rng.integers(1, sides + 1, size=(n, most))
            rolled = np.arange(most) < counts[:, None]
            hits += ((faces <= self.hit_top[index]) & rolled).sum(axis=1)
            turncoats[:, index] = ((faces > self.miss_top[index]) & rolled).sum(axis=1)
            rolled_sizes.append((sides, faces, counts))
        self._tell("roll", side=side, rolled=rolled_sizes, hits=hits, turncoats=turncoats)
        return hits, turncoats

    def _roll_extra(self, counts: np.ndarray, purpose: str) -> np.ndarray:
        """Hits among ``counts`` extra d8 per contest (risk or peril dice)."""
        most = int(counts.max()) if len(counts) else 0
        if most == 0:
            return np.zeros(len(counts), dtype=np.int64)
        faces = self.rng.integers(1, EXTRA_DIE + 1, size=(len(counts), most))
        self._tell("extra_dice", purpose=purpose, faces=faces, counts=counts)
        return ((faces <= EXTRA_HIT_TOP) & (np.arange(most) < counts[:, None])).sum(axis=1)


class _TestQueue(NamedTuple):
    """What is left of a Test after the reward being resolved, for the decisions' ``queue``:
    ``pending`` rewards of the ``head`` kind, then ``tail`` (per contest a count of B/G
    rewards, or the roll winner's code of the placement step), codes of `QUEUE_CODES`."""

    head: int
    pending: np.ndarray
    tail_code: int
    tail: np.ndarray | None

    def columns(self, rows: np.ndarray) -> np.ndarray:
        """The queue of ``rows`` as int columns (see `exactdice.karbon.replay.context_words`)."""
        tail = self.tail[rows] if self.tail is not None else np.zeros(len(rows), dtype=np.int64)
        return np.column_stack(
            [np.full(len(rows), self.head), self.pending[rows], np.full(len(rows), self.tail_code), tail]
        )


def _other_size_held(hand: np.ndarray, reserve: np.ndarray) -> np.ndarray:
    """Per row: the hand holds a die of some size and the reserve one of another size."""
    held, kept = hand > 0, reserve > 0
    sizes_held, sizes_kept = held.sum(axis=1), kept.sum(axis=1)
    shared = (held & kept).sum(axis=1)
    # some (hand size, reserve size) pair differs unless both hold just the one same size
    return (sizes_held > 0) & (sizes_kept > 0) & ~((sizes_held == 1) & (sizes_kept == 1) & (shared == 1))


def _named_choice(applicable: Mapping[str, np.ndarray], otherwise: str | None = None) -> Callable:
    """``choice_at`` for `ContestEngine._decide`: the options applicable at a row."""

    def choice_at(index: int) -> NamedChoice:
        names = [name for name, mask in applicable.items() if mask[index]]
        return NamedChoice(names or [otherwise])

    return choice_at


def _take_in_order(source: np.ndarray, counts: np.ndarray, order) -> np.ndarray:
    """Per row, take up to ``counts`` dice from ``source``, die sizes in ``order`` of preference."""
    taken = np.zeros_like(source)
    left = counts.astype(np.int64).copy()
    for index in order:
        take = np.minimum(left, source[:, index])
        taken[:, index] = take
        left -= take
    return taken


def _first_applicable(order, applicable: Mapping[str, np.ndarray]):
    """(option, mask) pairs: each row gets the first option of ``order`` that applies to it."""
    unassigned = np.ones(len(next(iter(applicable.values()))), dtype=bool)
    for option in order:
        chosen = unassigned & applicable[option]
        unassigned &= ~chosen
        yield option, chosen


def contest_start(setup, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy, strategy=None):
    """(start, replay): the contest's start and the `StrategyReplay` (None without a strategy).

    ``strategy`` is a strategy file's path or a table from `load_strategy`; optimal and
    kind sides need one (the simulator never solves).

    >>> from exactdice.karbon.setup import ContestSetup
    >>> start, replay = contest_start(ContestSetup(ability=1, challenge=1), Rules(), PlayerPolicy(),
    ...                               NarratorPolicy())
    >>> start.sizes.text(start.position.player_hand), replay
    ('d8', None)
    """
    for policy, flag in ((player, "player_policy"), (narrator, "narrator_policy")):
        if policy.kind in ("optimal", "kind") and strategy is None:
            raise InputError(
                flag,
                f"the simulator plays '{policy.kind}' by replaying a strategy: give one "
                "written by karbon odds (`strategy` FILE; karbon simulate without "
                "`strategy` solves for it first)",
            )
    if strategy is None:
        return setup.start(player, narrator), None
    table = strategy if isinstance(strategy, Mapping) else load_strategy(strategy)
    replay = StrategyReplay(table, setup, ruleset, player, narrator)
    return replay.start(setup), replay


def simulate(
    setup,
    ruleset: Rules | None = None,
    player: PlayerPolicy | None = None,
    narrator: NarratorPolicy | None = None,
    n: int = 100_000,
    seed: int = 0,
    strategy=None,
    max_rounds: int = MAX_ROUNDS,
) -> dict[str, np.ndarray]:
    """Play ``n`` contests of a setup; return the columns of `COLUMNS` (one entry per contest).

    The draw follows the setup (fixed preferences); everything after it is rolled.
    ``outcome`` holds strings, the other columns integers. ``strategy`` (a file of
    ``karbon odds --strategy`` or a `load_strategy` table) replays optimal/kind sides,
    draws included.

    >>> from exactdice.karbon.setup import ContestSetup
    >>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})
    >>> rows = simulate(setup, n=1000, seed=7)
    >>> bool(0.6 < (rows["outcome"] == "win").mean() < 0.72)
    True
    """
    ruleset = ruleset or Rules()
    player = player or PlayerPolicy()
    narrator = narrator or NarratorPolicy()
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_CONTESTS:
        raise InputError("n", f"must be a whole number from 1 to {MAX_CONTESTS:,}, got {n!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError("seed", f"must be a whole number >= 0, got {seed!r}")
    start, replay = contest_start(setup, ruleset, player, narrator, strategy)
    rng = np.random.Generator(np.random.PCG64(seed))
    parts = []
    for first in range(0, n, BATCH):
        count = min(BATCH, n - first)
        engine = ContestEngine(start, ruleset, player, narrator, count, rng, replay=replay)
        columns = engine.run(max_rounds)
        columns["trial"] = columns["trial"] + first
        parts.append(columns)
    result = {name: np.concatenate([part[name] for part in parts]) for name in COLUMNS}
    result["outcome"] = _OUTCOME_NAMES[result["outcome"]]
    return result
