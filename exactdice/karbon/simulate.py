"""An independent Monte Carlo simulator of Karbon contests (spec sections 3-7).

It shares only the ruleset, the policy objects, the setup's draw and the dice helpers
(`die_classes`, `DiceSizes`) with the exact model, never its transition code: every die
is rolled one by one with ``numpy.random.Generator(PCG64(seed))`` and the contests are
played step by step from the spec, all contests of a batch advancing one round at a
time (numpy arrays over contests, finished ones dropped after each round).

Optimal and kind play is *replayed* from a strategy table (`StrategyReplay`: a file of
``karbon odds --strategy``, read with `exactdice.karbon.strategy.load_strategy`): at each
decision of such a side the simulator describes its own position in the file's keys,
looks the action up (`exactdice.karbon.strategy.decision_key`) and plays it. Decisions
with a single legal option are forced and never looked up, as in the exact model. A
replay also drops, at each round's start, the chips in hand that can no longer make a
difference, since the file's states are written with them dropped
(`ContestEngine._drop_excess_chips`).

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

import csv
import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path

import numpy as np

from exactdice.errors import InputError
from exactdice.output_files import open_output
from exactdice.karbon.dice import DiceSizes, dice_text, die_classes, parse_dice_list
from exactdice.karbon.policies import BREAK_OPTIONS, NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules
from exactdice.karbon.position import Position, placement_folded
from exactdice.karbon.strategy import decision_key, describe_position, load_strategy

__all__ = ["simulate", "write_samples_csv", "summarize",
           "contest_start", "StrategyReplay", "COLUMNS", "OUTCOMES", "OUTCOME_COLUMN", "MAX_ROUNDS",
           "MAX_CONTESTS", "ContestEngine"]

COLUMNS = ("trial", "outcome", "rounds", "breaks", "glitches", "injuries", "conditions")
OUTCOMES = ("win", "loss", "tie", "unfinished")
#: the categorical column `exactdice.karbon.solve.expected_distribution` gives the exact law of
OUTCOME_COLUMN = "outcome"
MAX_ROUNDS = 10_000
MAX_CONTESTS = 100_000_000
BATCH = 200_000          # contests advanced together (bounds memory)
STACK = 5                # chips that make a completion
RISK_DICE = 3            # d8 rolled when the player puts it all on the line
EXTRA_DIE = 8            # risk and peril dice are d8

_UNFINISHED, _WIN, _LOSS, _TIE = 0, 1, 2, 3
_OUTCOME_NAMES = np.array(["unfinished", "win", "loss", "tie"])
_WINNER_WORDS = ("player", "narrator", "tie")   # roll_winner codes 0, 1, 2


class ContestEngine:
    """A batch of ``n`` contests from the same start, played round by round.

    State is a set of numpy arrays over contests (dice are count matrices aligned with
    the contest's `DiceSizes`). ``notes``, when a list, receives a plain-words account
    of contest 0 (used by `exactdice.karbon.trace`). ``replay`` plays the decisions of
    optimal/kind sides from a strategy (`StrategyReplay`).
    """

    def __init__(self, start, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy,
                 n: int, rng: np.random.Generator, notes: list[str] | None = None,
                 replay: StrategyReplay | None = None):
        self.ruleset, self.player, self.narrator = ruleset, player, narrator
        self.rng, self.notes = rng, notes
        self.replay = replay
        self.player_replays = replay is not None and replay.player_strategic
        self.narrator_replays = replay is not None and replay.narrator_strategic
        picker_replays = self.player_replays if ruleset.sideswipe_picker == "player" else self.narrator_replays
        self.picker_replays = picker_replays
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
        position = start.position

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
        self.void = np.zeros(n, dtype=bool)   # a sudden-death restart voided the rest of this Test
        self.fallout = start.fallout
        self.results = {name: np.zeros(n, dtype=np.int64) for name in COLUMNS if name != "outcome"}
        self.results["outcome"] = np.zeros(n, dtype=np.int8)

    _STATE = ("trial", "player_hand", "narrator_hand", "pool", "reserve", "player_chips",
              "narrator_chips", "player_stack", "narrator_stack", "wins", "losses", "peril", "track",
              "rounds", "breaks", "glitches", "injuries", "conditions", "outcome", "void")

    # ----- the whole contest ------------------------------------------------------------

    def run(self, max_rounds: int = MAX_ROUNDS) -> dict:
        """Play every contest to its end (or `max_rounds`); return the result columns."""
        if self.fallout:
            self._say(f"Fallout: {self.fallout} Glitch(es) are thrown before the first round.")
            self._resolve_rewards(np.full(len(self.trial), self.fallout), "glitch")
            self._retire()
        while len(self.trial) and self.rounds[0] < max_rounds:
            self.play_round()
            self._retire()
        if len(self.trial):
            self._say(f"After {max_rounds} rounds the contest has not ended: unfinished.")
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
        n = len(self.trial)
        self.rounds += 1
        self._say(f"Round {self.rounds[0]}:")
        if self.replay is not None:
            self._drop_excess_chips()
        player_hits, player_turncoats = self._roll_hand(self.player_hand, "player")
        narrator_hits, narrator_turncoats = self._roll_hand(self.narrator_hand, "narrator")
        player_won, narrator_won = player_hits > narrator_hits, narrator_hits > player_hits
        tie = ~player_won & ~narrator_won
        self.player_chips += np.where(narrator_won, 0, player_hits)
        self.narrator_chips += np.where(player_won, 0, narrator_hits)
        if self.notes is not None:
            if player_won[0]:
                self._say(f"  The player wins the roll ({player_hits[0]} to {narrator_hits[0]} hits) "
                          f"and gains {player_hits[0]} chip(s).")
            elif narrator_won[0]:
                self._say(f"  The narrator wins the roll ({narrator_hits[0]} to {player_hits[0]} hits) "
                          f"and gains {narrator_hits[0]} chip(s).")
            else:
                self._say(f"  A tie ({player_hits[0]} hits each): each side gains its own hits.")
        # 4.3 Opening: turncoat dice are set aside until the round is over
        self.player_hand -= player_turncoats
        self.narrator_hand -= narrator_turncoats
        player_count, narrator_count = player_turncoats.sum(axis=1), narrator_turncoats.sum(axis=1)
        player_opens, narrator_opens = player_count > narrator_count, narrator_count > player_count
        if self.notes is not None:
            if player_opens[0]:
                self._say(f"  Opening: the player has more turncoats ({player_count[0]} to {narrator_count[0]}); "
                          f"its set-aside {self.sizes.text(tuple(player_turncoats[0]))} will go to the narrator.")
            elif narrator_opens[0]:
                self._say(f"  Opening: the narrator has more turncoats ({narrator_count[0]} to {player_count[0]}); "
                          f"its set-aside {self.sizes.text(tuple(narrator_turncoats[0]))} will go to the player.")
            else:
                self._say(f"  No Opening ({player_count[0]} turncoats each); set-aside dice go back.")
        # 4.4 Risk
        if self.player_replays:
            self._replayed_risk(player_won, narrator_won, player_turncoats, narrator_turncoats,
                                player_opens, narrator_opens)
        elif self.player.risk == "always":
            risk_hits = self._roll_extra(np.full(n, RISK_DICE), "risk")
            taken = _take_in_order(self.pool, risk_hits, self.risk_take)
            self.pool -= taken
            self.player_hand += taken
            self.narrator_chips += RISK_DICE - risk_hits
            self._say(f"  Risk: the player puts it all on the line: {risk_hits[0]} hit(s) take "
                      f"{self.sizes.text(tuple(taken[0]))} from the pool; the narrator gains "
                      f"{RISK_DICE - risk_hits[0]} chip(s).")
        else:
            self._say("  Risk: the player does not risk.")
        # 4.5 Peril
        if self.peril.any():
            peril_hits = self._roll_extra(self.peril, "peril")
            if self.ruleset.peril_chips == "stack":
                self.narrator_stack += peril_hits
            else:
                self.narrator_chips += peril_hits
            if self.notes is not None and self.peril[0]:
                where = "on the narrator's stack" if self.ruleset.peril_chips == "stack" else "into the narrator's hand"
                self._say(f"  Peril: {self.peril[0]} d8, {peril_hits[0]} hit(s) put {peril_hits[0]} chip(s) {where}.")
        # 4.6 the set-aside dice move
        self.player_hand += np.where(narrator_opens[:, None], narrator_turncoats, 0) + \
            np.where(player_opens[:, None], 0, player_turncoats)
        self.narrator_hand += np.where(player_opens[:, None], player_turncoats, 0) + \
            np.where(narrator_opens[:, None], 0, narrator_turncoats)
        self._test(player_won | tie, narrator_won | tie)
        self._say(f"  {self._status_text()}")

    def _replayed_risk(self, player_won, narrator_won, player_turncoats, narrator_turncoats,
                       player_opens, narrator_opens) -> None:
        """4.4 played from the strategy: risk or not, then which dice the hits take."""
        rows = np.arange(len(self.trial))
        # the decision sees the hands as they stand once the Opening's dice have moved
        hands = (self.player_hand + np.where(narrator_opens[:, None], narrator_turncoats, 0)
                 + np.where(player_opens[:, None], 0, player_turncoats),
                 self.narrator_hand + np.where(player_opens[:, None], player_turncoats, 0)
                 + np.where(narrator_opens[:, None], 0, narrator_turncoats))
        winner = np.where(player_won, 0, np.where(narrator_won, 1, 2))
        risking = self._decide("risk", rows, winner[:, None], _winner_context, _risk_options, hands) == "yes"
        risk_hits = self._roll_extra(np.where(risking, RISK_DICE, 0), "risk")
        self.narrator_chips += np.where(risking, RISK_DICE - risk_hits, 0)
        take = np.where(risking, np.minimum(risk_hits, self.pool.sum(axis=1)), 0)
        takers = np.nonzero(take)[0]
        taken = self._dice_matrix(self._decide("take", takers, np.column_stack([winner, take])[takers],
                                               _take_context, _take_options, hands))
        self.pool[takers] -= taken
        self.player_hand[takers] += taken
        if self.notes is not None:
            if risking[0]:
                first_taken = tuple(taken[0]) if len(takers) and takers[0] == 0 else self.sizes.empty
                self._say(f"  Risk (strategy): the player puts it all on the line: {risk_hits[0]} hit(s) take "
                          f"{self.sizes.text(first_taken)} from the pool; the narrator gains "
                          f"{RISK_DICE - risk_hits[0]} chip(s).")
            else:
                self._say("  Risk (strategy): the player does not risk.")

    def _test(self, player_places: np.ndarray, narrator_places: np.ndarray) -> None:
        """4.7: Peril Glitches, placement, then the rewards in tie order."""
        self.void[:] = False
        peril_glitches = self.narrator_stack // STACK
        self.narrator_stack %= STACK
        if self.notes is not None and peril_glitches[0]:
            self._say(f"  Test: the narrator's stack completes {peril_glitches[0]} time(s) from Peril.")
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

    def _place(self, places: np.ndarray, side: str) -> np.ndarray:
        """Move chips from hand onto the stack; return the completions earned."""
        chips = getattr(self, f"{side}_chips")
        stack = getattr(self, f"{side}_stack")
        height = stack + np.where(places, chips, 0)
        if self.ruleset.rewards_per_test == "1":
            completions = (height >= STACK).astype(np.int64)
            left_in_hand = np.where(completions > 0, height - STACK, 0)
            new_stack = np.where(completions > 0, 0, height)
        else:
            completions = height // STACK
            left_in_hand = np.zeros_like(height)
            new_stack = height % STACK
        if self.notes is not None and places[0]:
            placed = chips[0] - left_in_hand[0]
            self._say(f"  Test: the {side} places {placed} chip(s) on its stack (height {stack[0] + placed})"
                      + (f": {completions[0]} completion(s)." if completions[0] else "."))
        setattr(self, f"{side}_chips", np.where(places, left_in_hand, chips))
        setattr(self, f"{side}_stack", np.where(places, new_stack, stack))
        return np.where(places, completions, 0)

    # ----- rewards (spec 5 and 6) -------------------------------------------------------

    def _resolve_rewards(self, pending: np.ndarray, kind: str, tail_kind: str | None = None,
                         tail: np.ndarray | None = None) -> None:
        """Resolve ``pending`` Breaks or Glitches per contest, one at a time, until the end.

        What follows them in this Test (for the decisions' ``queue``) is ``tail``: per
        contest a count of ``"B"``/``"G"`` rewards, or the winner code of the placement
        step (``tail_kind`` ``"place"``).
        """
        pending = pending.copy()
        head = _QUEUE_CODES["B" if kind == "break" else "G"]
        tail_code = _QUEUE_CODES[tail_kind]
        while True:
            rows = np.nonzero((pending > 0) & (self.outcome == _UNFINISHED) & ~self.void)[0]
            if not len(rows):
                return
            pending[rows] -= 1
            if kind == "break":
                self.wins[rows] += 1
                self.breaks[rows] += 1
                self._say("  Break: the player marks an X.", rows)
                rows = self._check_track(rows)
            else:
                self.losses[rows] += 1
                self.glitches[rows] += 1
                self._say("  Glitch: the narrator marks an O.", rows)
                rows = self._check_track(rows)
            # the rest of the Test after this reward, as columns (see `_queue_context`)
            queue = np.zeros((len(self.trial), 4), dtype=np.int64)
            if self.replay is not None and len(rows):
                queue[rows, 0], queue[rows, 1], queue[rows, 2] = head, pending[rows], tail_code
                if tail is not None:
                    queue[rows, 3] = tail[rows]
            if kind == "break":
                self._break_option(rows, queue)
            else:
                self._glitch_option(rows, queue)

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
            self._say("  The track is full with a tie: sudden death, the track gets one more place; "
                      "chips in hand and stacks are emptied.", again)
            result[result == _TIE] = _UNFINISHED
        self.outcome[ended] = result
        if self.notes is not None and len(ended) and ended[0] == 0 and result[0] != _UNFINISHED:
            self._say(f"  The track is full ({self._track_text()}): the contest ends in a "
                      f"{_OUTCOME_NAMES[result[0]]}.")
        return rows[~full]

    def _break_option(self, rows: np.ndarray, queue: np.ndarray) -> None:
        if not len(rows):
            return
        if self.player_replays:
            choice = self._decide("break", rows, queue[rows], _queue_context, _break_options)
            groups = [(option, choice == option) for option in BREAK_OPTIONS]
        else:
            applicable = {
                "security": self.peril[rows] > 0,
                "footing-discard": self.narrator_chips[rows] > 0,
                "footing-dice": self.narrator_hand[rows].sum(axis=1) > 0,
                "advantage": self._improving_swap(self.player_hand[rows], self.reserve[rows])[0],
            }
            groups = _first_applicable(self.player.break_order, applicable)
        for option, chosen in groups:
            picked = rows[chosen]
            if not len(picked):
                continue
            if option == "security":
                self.peril[picked] -= 1
                self._say("  Option security: one peril die is removed.", picked)
            elif option == "footing-discard":
                self._say(f"  Option footing: the narrator discards its {self.narrator_chips[0]} chip(s).", picked)
                self.narrator_chips[picked] = 0
            elif option == "footing-dice":
                given = self._narrator_gives(picked, queue, "give", self.narrator_replays, self.give)
                self.narrator_hand[picked] -= given
                self.player_hand[picked] += given
                self._say(f"  Option footing: the narrator gives the player {self.sizes.text(tuple(given[0]))}.",
                          picked)
            elif self.player_replays:
                before = self.player_hand[picked[0]].copy()
                swaps = self._decide("swap", picked, queue[picked], _queue_context, _swap_options)
                out, into = (self._dice_matrix(np.array([swap.split("->")[side] for swap in swaps]))
                             for side in (0, 1))
                self.player_hand[picked] += into - out
                self.reserve[picked] += out - into
                self._say(f"  Option advantage (strategy): the player swaps {swaps[0].replace('->', ' for ')} "
                          f"({self.sizes.text(tuple(before))} becomes "
                          f"{self.sizes.text(tuple(self.player_hand[picked[0]]))}).", picked)
            else:
                hand, reserve = self.player_hand[picked], self.reserve[picked]
                before = hand[0].copy()
                for _ in range(2):
                    swap, out_index, in_index = self._improving_swap(hand, reserve)
                    rows_swapping = np.nonzero(swap)[0]
                    hand[rows_swapping, out_index[swap]] -= 1
                    reserve[rows_swapping, out_index[swap]] += 1
                    hand[rows_swapping, in_index[swap]] += 1
                    reserve[rows_swapping, in_index[swap]] -= 1
                self.player_hand[picked], self.reserve[picked] = hand, reserve
                self._say(f"  Option advantage: the player swaps its {self.sizes.text(tuple(before))} for "
                          f"{self.sizes.text(tuple(hand[0]))} with the reserve.", picked)

    def _narrator_gives(self, rows: np.ndarray, queue: np.ndarray, point: str, replayed: bool,
                        order) -> np.ndarray:
        """Two dice (or all, if fewer) of the narrator's hand per row: from the strategy or in ``order``."""
        if replayed:
            return self._dice_matrix(self._decide(point, rows, queue[rows], _queue_context, _give_options))
        return _take_in_order(self.narrator_hand[rows], np.full(len(rows), 2), order)

    def _glitch_option(self, rows: np.ndarray, queue: np.ndarray) -> None:
        if not len(rows):
            return
        if self.player_replays:
            choice = self._decide("glitch", rows, queue[rows], _queue_context, _glitch_options)
            groups = [(option, choice == option) for option in ("hurt", "plans", "sideswipe")]
        else:
            always = np.ones(len(rows), dtype=bool)
            applicable = {"hurt": always, "plans": always, "sideswipe": self.wins[rows] >= 1}
            groups = _first_applicable(self.player.glitch_order, applicable)
        for option, chosen in groups:
            picked = rows[chosen]
            if not len(picked):
                continue
            if option == "hurt":
                if self.narrator_replays:
                    injury = self._decide("hurt", picked, queue[picked], _queue_context, _hurt_options) == "injury"
                else:
                    injury = self._narrator_coin(picked, self.narrator.hurt == "injury")
                hurt = picked[injury]
                self.injuries[hurt] += 1
                self.player_chips[hurt] += 2
                if self.ruleset.injury_peril == "on":
                    self.peril[hurt] += 1
                self.conditions[picked[~injury]] += 1
                if self.notes is not None and picked[0] == 0:
                    self._say("  Option hurt: the narrator gives the Agent an injury and the player 2 chips"
                              + (" (and one peril die)." if self.ruleset.injury_peril == "on" else ".")
                              if injury[0] else "  Option hurt: the narrator gives the Agent a condition.")
            elif option == "plans":
                if self.narrator_replays:
                    dice = self._decide("plans", picked, queue[picked], _queue_context, _plans_options) == "dice"
                else:
                    dice = self._narrator_coin(picked, self.narrator.plans == "dice")
                taker, adder = picked[dice], picked[~dice]
                if self.narrator_replays:
                    taker = taker[self.pool[taker].sum(axis=1) > 0]   # an empty pool gives nothing to take
                    taken = self._dice_matrix(self._decide("planstake", taker, queue[taker], _queue_context,
                                                           _planstake_options))
                else:
                    taken = _take_in_order(self.pool[taker], np.full(len(taker), 2), self.plans_take)
                self.pool[taker] -= taken
                self.narrator_hand[taker] += taken
                self.peril[adder] += 1
                if self.notes is not None and picked[0] == 0:
                    first_taken = tuple(taken[0]) if len(taker) and taker[0] == 0 else self.sizes.empty
                    self._say(f"  Option plans: the narrator takes {self.sizes.text(first_taken)} from the pool."
                              if dice[0] else "  Option plans: the narrator adds one peril die.")
            else:
                self.wins[picked] -= 1
                if self.player_replays:
                    takes_chips = self._decide("sideswipe", picked, queue[picked], _queue_context,
                                               _sideswipe_options) == "chips"
                else:
                    takes_chips = np.full(len(picked), self.player.sideswipe_take == "chips")
                chipped, diced = picked[takes_chips], picked[~takes_chips]
                if len(chipped):
                    self._say(f"  Option sideswipe: one X is removed; the narrator gives the player its "
                              f"{self.narrator_chips[0]} chip(s).", chipped)
                    self.player_chips[chipped] += self.narrator_chips[chipped]
                    self.narrator_chips[chipped] = 0
                if len(diced):
                    if self.picker_replays:
                        diced = diced[self.narrator_hand[diced].sum(axis=1) > 0]  # nothing to give: no choice
                    order = self.best_first if self.ruleset.sideswipe_picker == "player" else self.give
                    given = self._narrator_gives(diced, queue, "swipedice", self.picker_replays, order)
                    self.narrator_hand[diced] -= given
                    self.player_hand[diced] += given
                    self._say(f"  Option sideswipe: one X is removed; the narrator gives the player "
                              f"{self.sizes.text(tuple(given[0]))}.", diced)

    # ----- replayed decisions (a strategy table) ------------------------------------------

    def _drop_excess_chips(self) -> None:
        """Cut chips in hand, at a round's start, to what can still make a difference, as
        the exact model does (`KarbonModel._capped`; the strategy format documents it).

        Only when replaying a strategy: its decision states hold the cut chips, and the
        chips a hand places decide its stack afterwards, so the replay must carry the same
        chips to find later decisions. Past the cut, chips change no event and no outcome
        (with track W, X wins and O losses, at most ``b = W - X - O`` Breaks remain: the
        player keeps ``5 b - stack``, the narrator ``max(5 (W - O) - stack, 5 b if a
        sideswipe can still happen, 1)``), so the outcomes' law is unchanged.
        """
        breaks = self.track - self.wins - self.losses
        sideswipe_possible = self.track - self.losses >= 2
        player_cap = np.maximum(0, STACK * breaks - self.player_stack)
        narrator_cap = np.maximum.reduce([STACK * (self.track - self.losses) - self.narrator_stack,
                                          np.where(sideswipe_possible, STACK * breaks, 0), np.ones_like(breaks)])
        self.player_chips = np.minimum(self.player_chips, player_cap)
        self.narrator_chips = np.minimum(self.narrator_chips, narrator_cap)

    def _decide(self, point: str, rows: np.ndarray, context: np.ndarray,
                describe_context: Callable, options: Callable, hands=None) -> np.ndarray:
        """The strategy's action at ``point`` for each row (an array of action names).

        Rows in the same state and context share one look-up: the state columns (the
        ``--state`` keys; ``hands`` replaces the hands when the decision sees them moved)
        and ``context`` (int columns that ``describe_context`` turns into the file's
        context) are made unique first.
        """
        if not len(rows):
            return np.array([], dtype=object)
        player_hand, narrator_hand = hands if hands is not None else (self.player_hand, self.narrator_hand)
        columns = np.hstack([player_hand[rows], narrator_hand[rows], self.pool[rows], self.reserve[rows],
                             np.column_stack([getattr(self, name)[rows] for name in _COUNTERS]),
                             context.reshape(len(rows), -1)])
        unique, inverse = np.unique(columns, axis=0, return_inverse=True)
        seen, replay = self.replay.seen, self.replay
        actions = []
        for packed in unique:
            key = (point, packed.tobytes())
            action = seen.get(key)
            if action is None:
                state = Position(*(tuple(int(c) for c in packed[i * self.k:(i + 1) * self.k]) for i in range(4)),
                              *(int(value) for value in packed[4 * self.k:4 * self.k + len(_COUNTERS)]))
                extra = [int(value) for value in packed[4 * self.k + len(_COUNTERS):]]
                placing = _placing_winner(point, extra)
                described = state if placing is None else placement_folded(
                    state, placing, self.ruleset.peril_chips == "stack")  # as the strategy format says
                action = replay.decide(point, describe_position(self.sizes, described), describe_context(extra),
                                       options(state, extra, self.sizes))
                seen[key] = action
            actions.append(action)
        return np.array(actions, dtype=object)[inverse.reshape(-1)]

    def _dice_matrix(self, names: np.ndarray) -> np.ndarray:
        """Dice texts like ``"2d8,d10"`` -> count rows aligned with the contest's die sizes."""
        if not len(names):
            return np.zeros((0, self.k), dtype=np.int64)
        unique, inverse = np.unique(names.astype(str), return_inverse=True)
        counts = np.array([self.sizes.counts(parse_dice_list(text, "strategy")) for text in unique],
                          dtype=np.int64)
        return counts[inverse.reshape(-1)]

    def _narrator_coin(self, rows: np.ndarray, fixed_choice: bool) -> np.ndarray:
        """The narrator's two-way choice per row: its fixed preference, or a fair coin (random)."""
        if self.narrator.kind == "random":
            return self.rng.random(len(rows)) < 0.5
        return np.full(len(rows), fixed_choice)

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
        shown = []
        for index, sides in enumerate(self.sizes.sizes):
            counts = hand[:, index]
            most = int(counts.max()) if n else 0
            if most == 0:
                continue
            faces = self.rng.integers(1, sides + 1, size=(n, most))
            rolled = np.arange(most) < counts[:, None]
            hits += ((faces <= self.hit_top[index]) & rolled).sum(axis=1)
            turncoats[:, index] = ((faces > self.miss_top[index]) & rolled).sum(axis=1)
            if self.notes is not None:
                shown += [f"d{sides}:{face}" for face in faces[0, :counts[0]]]
        if self.notes is not None:
            rolled_text = " ".join(shown) if shown else "nothing (no dice)"
            self._say(f"  The {side} rolls {rolled_text}: {hits[0]} hit(s), {turncoats[0].sum()} turncoat(s).")
        return hits, turncoats

    def _roll_extra(self, counts: np.ndarray, purpose: str) -> np.ndarray:
        """Hits among ``counts`` extra d8 per contest (risk or peril dice)."""
        most = int(counts.max()) if len(counts) else 0
        if most == 0:
            return np.zeros(len(counts), dtype=np.int64)
        faces = self.rng.integers(1, EXTRA_DIE + 1, size=(len(counts), most))
        hit_top = die_classes(EXTRA_DIE)[0]
        if self.notes is not None and counts[0]:
            self._say(f"  The {purpose} dice show {' '.join(str(f) for f in faces[0, :counts[0]])}.")
        return ((faces <= hit_top) & (np.arange(most) < counts[:, None])).sum(axis=1)

    # ----- words (the trace) ------------------------------------------------------------

    def _say(self, text: str, rows: np.ndarray | None = None) -> None:
        if self.notes is not None and (rows is None or (len(rows) and rows[0] == 0)):
            self.notes.append(text)

    def _track_text(self) -> str:
        x, o, w = int(self.wins[0]), int(self.losses[0]), int(self.track[0])
        return " ".join(["X"] * x + ["O"] * o + ["."] * (w - x - o))

    def _status_text(self) -> str:
        return (f"Track [{self._track_text()}]; player {self.sizes.text(tuple(self.player_hand[0]))}, "
                f"{self.player_chips[0]} chip(s) in hand, stack {self.player_stack[0]}; narrator "
                f"{self.sizes.text(tuple(self.narrator_hand[0]))}, {self.narrator_chips[0]} chip(s), "
                f"stack {self.narrator_stack[0]}; pool {self.sizes.text(tuple(self.pool[0]))}; "
                f"peril {self.peril[0]}.")


# ----- what a replayed decision sees: the position, its context and the legal options --------

_COUNTERS = ("player_chips", "narrator_chips", "player_stack", "narrator_stack", "wins", "losses",
             "peril", "track")
_QUEUE_CODES = {None: 0, "B": 1, "G": 2, "place": 3}


def _multisets(available: tuple, count: int) -> list[tuple]:
    """Every multiset of ``count`` dice out of ``available`` (count tuples).

    >>> _multisets((2, 1), 2)
    [(1, 1), (2, 0)]
    """
    if not available:
        return [()] if count == 0 else []
    found = []
    for first in range(min(available[0], count) + 1):
        found += [(first,) + rest for rest in _multisets(available[1:], count - first)]
    return found


def _placing_winner(point: str, extra) -> str | None:
    """Whose chips go on the stack at this round's placement ("p", "n", "t") when the
    decision comes before it (risk, take, or a Glitch from Peril), else None."""
    if point in ("risk", "take"):
        return "pnt"[extra[0]]
    if len(extra) == 4 and extra[2] == _QUEUE_CODES["place"]:
        return "pnt"[extra[3]]
    return None


def _winner_context(extra) -> dict:
    return {"roll_winner": _WINNER_WORDS[extra[0]]}


def _take_context(extra) -> dict:
    return {"roll_winner": _WINNER_WORDS[extra[0]], "take": extra[1]}


def _queue_context(extra) -> dict:
    """Queue columns (head code, rewards of the head's kind left, tail code, tail value) -> words.

    >>> _queue_context([2, 1, 3, 2])
    {'queue': ['G', 'place:tie']}
    """
    head, left, tail_code, tail = extra
    words = ["B" if head == _QUEUE_CODES["B"] else "G"] * left
    if tail_code == _QUEUE_CODES["place"]:
        words.append(f"place:{_WINNER_WORDS[tail]}")
    elif tail_code:
        words += ["B" if tail_code == _QUEUE_CODES["B"] else "G"] * tail
    return {"queue": words}


def _risk_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return ["no", "yes"]


def _take_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return [sizes.text(taken) for taken in _multisets(state.pool, extra[1])]


def _break_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    """The Break options open to a deciding player (advantage: some hand die differs from a reserve die)."""
    options = []
    if state.peril > 0:
        options.append("security")
    if state.narrator_chips > 0:
        options.append("footing-discard")
    if sum(state.narrator_hand) > 0:
        options.append("footing-dice")
    hand_types = [i for i, count in enumerate(state.player_hand) if count]
    reserve_types = [i for i, count in enumerate(state.reserve) if count]
    if any(h != r for h in hand_types for r in reserve_types):
        options.append("advantage")
    return options or ["none"]


def _swap_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    """Every swap of one or two hand dice for as many reserve dice of other types, as ``"out->in"``."""
    names = []
    for size in (1, 2):
        for out in _multisets(state.player_hand, size):
            for into in _multisets(state.reserve, size):
                if not any(o and i for o, i in zip(out, into)):
                    names.append(f"{sizes.text(out)}->{sizes.text(into)}")
    return names


def _give_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    hand = state.narrator_hand
    return [sizes.text(given) for given in _multisets(hand, min(2, sum(hand)))]


def _glitch_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return ["hurt", "plans"] + (["sideswipe"] if state.wins >= 1 else [])


def _hurt_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return ["injury", "condition"]


def _plans_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return ["dice", "peril"]


def _planstake_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return [sizes.text(taken) for taken in _multisets(state.pool, min(2, sum(state.pool)))]


def _sideswipe_options(state: Position, extra, sizes: DiceSizes) -> list[str]:
    return ["chips", "dice"]


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


class StrategyReplay:
    """The actions of a strategy table for the sides that play ``optimal`` / ``kind``.

    ``table`` is what `exactdice.karbon.strategy.load_strategy` returns ({decision key:
    action}, the file's header under ``None``); the header must match the simulation's
    ruleset, policies and die sizes. A decision the table lacks, or an action that is
    not legal where it is played, is an `InputError` naming the decision.

    >>> from exactdice.karbon.setup import ContestSetup
    >>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, consequence=1, pool={}, reserve={})
    >>> header = {"ruleset": Rules().to_dict(), "dice_sizes": [6, 8],
    ...           "policies": {"player": "optimal", "narrator": NarratorPolicy().text()}}
    >>> replay = StrategyReplay({None: header}, setup, Rules(), PlayerPolicy(kind="optimal"),
    ...                         NarratorPolicy())
    >>> replay.player_strategic, replay.narrator_strategic
    (True, False)
    >>> replay.decide("risk", {"wins": 0}, {"roll_winner": "tie"}, ["no", "yes"])
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: strategy: the strategy has no decision for point 'risk' at state {"wins": 0} with context {"roll_winner": "tie"}: it was written for another setup, ruleset or policies
    """

    def __init__(self, table: Mapping, setup, ruleset: Rules, player: PlayerPolicy,
                 narrator: NarratorPolicy):
        self.table = table
        self.player, self.narrator = player, narrator
        self.player_strategic = player.kind == "optimal"
        self.narrator_strategic = narrator.kind in ("optimal", "kind")
        self.seen: dict = {}   # (point, packed state and context) -> action, filled by the engine
        header = table.get(None)
        if not isinstance(header, Mapping):
            raise InputError("strategy", "the strategy table has no header (ruleset, policies, dice_sizes)")
        expected = {"ruleset": ruleset.to_dict(),
                    "policies": {"player": player.text(), "narrator": narrator.text()},
                    "dice_sizes": list(setup.sizes().sizes)}
        for name, value in expected.items():
            written = header.get(name)
            if written != value:
                raise InputError("strategy", f"the strategy was written for {name} {json.dumps(written)} but "
                                               f"this simulation has {json.dumps(value)}; write a strategy for "
                                               "these settings with `karbon odds ... --strategy FILE`")

    def decide(self, point: str, state: dict, context: dict, options: list[str]) -> str:
        """The action at one decision: the only option when it is forced, else the table's."""
        if len(options) == 1:
            return options[0]
        action = self.table.get(decision_key(point, state, context))
        if action is None:
            raise InputError("strategy", f"the strategy has no decision for point '{point}' at state "
                                           f"{json.dumps(state)} with context {json.dumps(context)}: it was "
                                           "written for another setup, ruleset or policies")
        if action not in options:
            raise InputError("strategy", f"the strategy plays '{action}' at point '{point}' (state "
                                           f"{json.dumps(state)}, context {json.dumps(context)}), where the "
                                           f"legal actions are {', '.join(options)}")
        return action

    def start(self, setup):
        """The contest's start with the draws the strategy makes (fixed sides draw by preference)."""
        player_draw = narrator_draw = None
        if setup.player_dice is None and (self.player_strategic or self.narrator_strategic):
            if self.player_strategic:
                by_text = {dice_text(draw): draw for draw in setup.player_draws()}
                if by_text:
                    player_draw = by_text[self.decide("draw", {}, {}, list(by_text))]
            if self.narrator_strategic:
                if player_draw is None:
                    player_draw = setup.start(self.player, self.narrator).player_draw
                by_text = {dice_text(answer): answer for answer in setup.narrator_draws(player_draw)}
                if by_text:
                    narrator_draw = by_text[self.decide("narrator_draw", {}, {"player_draw": dice_text(player_draw)},
                                                        list(by_text))]
        return setup.start(self.player, self.narrator, player_draw, narrator_draw)


def contest_start(setup, ruleset: Rules, player: PlayerPolicy, narrator: NarratorPolicy,
                  strategy=None):
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
            raise InputError(flag, f"the simulator plays '{policy.kind}' by replaying a strategy: give one "
                                   "written by `karbon odds ... --strategy FILE` (`karbon simulate` without "
                                   "--strategy solves for it first)")
    if strategy is None:
        return setup.start(player, narrator), None
    table = strategy if isinstance(strategy, Mapping) else load_strategy(strategy)
    replay = StrategyReplay(table, setup, ruleset, player, narrator)
    return replay.start(setup), replay


def simulate(setup, ruleset: Rules | None = None, player: PlayerPolicy | None = None,
                      narrator: NarratorPolicy | None = None, n: int = 100_000, seed: int = 0,
                      strategy=None, max_rounds: int = MAX_ROUNDS) -> dict[str, np.ndarray]:
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


def write_samples_csv(result: Mapping[str, np.ndarray], path: str | Path) -> None:
    """Write the columns of `simulate` as CSV with a header row (`COLUMNS`).

    >>> import tempfile, os
    >>> rows = {"trial": np.array([0]), "outcome": np.array(["win"]), "rounds": np.array([3]),
    ...         "breaks": np.array([1]), "glitches": np.array([0]), "injuries": np.array([0]),
    ...         "conditions": np.array([0])}
    >>> path = os.path.join(tempfile.mkdtemp(), "s.csv"); write_samples_csv(rows, path)
    >>> open(path).read().splitlines()
    ['trial,outcome,rounds,breaks,glitches,injuries,conditions', '0,win,3,1,0,0,0']
    """
    with open_output(path, "out") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(zip(*(result[name].tolist() for name in COLUMNS)))


def summarize(result: Mapping[str, np.ndarray]) -> dict:
    """Counts and shares of each outcome, and the mean (with standard error) of each count column.

    >>> summarize({"outcome": np.array(["win", "loss"]), "rounds": np.array([2, 4]),
    ...            "breaks": np.array([1, 0]), "glitches": np.array([0, 1]),
    ...            "injuries": np.array([0, 0]), "conditions": np.array([0, 1])})["outcomes"]["win"]
    {'count': 1, 'share': 0.5}
    """
    outcome = result["outcome"]
    total = len(outcome)
    summary = {"contests": total, "outcomes": {}, "means": {}}
    for name in OUTCOMES:
        count = int((outcome == name).sum())
        summary["outcomes"][name] = {"count": count, "share": count / total if total else 0.0}
    for name in ("rounds", "breaks", "glitches", "injuries", "conditions"):
        values = np.asarray(result[name], dtype=float)
        error = float(values.std(ddof=1) / np.sqrt(total)) if total > 1 else 0.0
        summary["means"][name] = {"mean": float(values.mean()) if total else 0.0, "standard_error": error}
    return summary
