"""One roll of a Chronica contest, exactly: a dynamic program over face values, top down.

Spec steps 2-4, the comparison:

    "2. Each pool announces its highest remaining die (a pool with no dice left has 0);
    a side's high die is the highest among its pools.
    3. If one side alone holds the greatest high die, it wins. Otherwise, among the sides
    tied at that value, every pool showing it discards one die of that value (one per
    pool, even if it has several), and step 2 repeats. Sides below the top keep their dice.
    4. As soon as every side's high die is 0, the contest is a true tie."

Walking the faces from the highest down (`exactdice.chronica.walk`), every higher die
was discarded in ties before a winner exists, so the state is only `Undecided` (how many
discard rounds so far) plus the dice not yet placed. At a face, each side showing it
stays at the top for as many discard rounds as its pool with the most dice of that face
has dice there (its *rounds at the top*); the side that stays longest alone wins after
the others' rounds of discards. From then on the candidate is the winner: its success
dice are settled in closed form (step 5, `exactdice.chronica.success_dice`) and its
concession dice walked on (step 6, `exactdice.chronica.concessions`).

One pass per candidate winner keeps the states few: it tracks die sizes only for the
candidate's side (success sizes are bought with them) and merges every other side's
dice per pool (a side's rounds at the top depend on its pools, not its sizes); after
the decision only each side's count of dice matters.

>>> sizes, concessions = roll_outcomes([((4,),), ((4,),)])
>>> sizes.probability((-1, ())), concessions.probability((0, (0, 1)))
(Fraction(1, 4), Fraction(3, 8))
"""

from __future__ import annotations

from collections.abc import Sequence

from collections import defaultdict
from itertools import product
from math import prod
from typing import NamedTuple

from exactdice.chronica.concessions import ConcessionWalk, Winning
from exactdice.chronica.ruleset import MAX_CONTEST_DICE
from exactdice.chronica.success_dice import SuccessSizes, WinnerDice
from exactdice.chronica.walk import OTHER_WINS, TIED, CandidateFrame, join_dice, joining_faces, ways_to_show
from exactdice.core.distribution import Distribution
from exactdice.errors import InputError, TooLargeError, check_invariant
from exactdice.limits import check_memory

__all__ = ["TIE", "MAX_STATES", "MAX_WORK", "roll_outcomes", "Undecided", "DiceCounters", "CandidatePass"]

#: the winner index of a tie in outcome tuples
TIE = -1

#: most dice-left states one solve may need (see `_state_bound`); 10 mixed dice a side is ~10**4
MAX_STATES = 2_000_000


class Undecided(NamedTuple):
    """No winner yet: every higher die was discarded in ``rounds`` rounds of ties (capped at
    what the rules need: 4 with `four-ties`, 1 for the physical-dice instant win, else 0)."""

    rounds: int


class Showing(NamedTuple):
    """One way a side's dice can show the current face: ``shown`` and ``left`` (in play
    below it) per counter, in ``ways`` ways."""

    shown: tuple
    ways: int
    left: tuple


class DiceCounters:
    """Where the undecided walk counts the dice not yet placed: the candidate's dice per
    (pool, size), every other pool in one counter (only its count matters).

    ``of_side[s]`` lists side s's counters; per counter, ``pool`` is its pool within its
    side, ``size`` its die size (None for a merged pool) and ``joining`` the dice that join
    the walk at each face.

    >>> counters = DiceCounters([((8, 6, 6),), ((10,), (4, 4))], candidate=0)
    >>> counters.of_side, counters.joining
    ([[0, 1], [2, 3]], [{8: 1}, {6: 2}, {10: 1}, {4: 2}])
    """

    def __init__(self, sides, candidate: int):
        self.of_side: list[list[int]] = []
        self.pool: list[int] = []
        self.size: list[int | None] = []
        self.joining: list[dict] = []
        for side_index, side in enumerate(sides):
            counters = []
            for pool_index, pool in enumerate(side):
                sizes = sorted(set(pool), reverse=True) if side_index == candidate else [None]
                for size in sizes:
                    counters.append(len(self.joining))
                    self.joining.append({size: pool.count(size)} if size else joining_faces(pool))
                    self.pool.append(pool_index)
                    self.size.append(size)
            self.of_side.append(counters)

    def side_left(self, dice_left, side: int) -> tuple:
        """The dice left in side ``side``'s counters."""
        return tuple(dice_left[counter] for counter in self.of_side[side])


class CandidatePass:
    """The walk for one candidate winner ``c``: the weights of its outcomes, of ties and of the rest.

    A layer maps ``(state, dice left per counter)`` to a weight. Each face is one step of
    every state (`_undecided_step` here; `Winning` and `Conceding` in `ConcessionWalk`);
    settled outcomes leave the walk with the weight of the dice not yet placed.
    """

    def __init__(self, sides, candidate, four_ties, instant_first_side, concessions=True):
        self.frame = CandidateFrame(sides, candidate)
        self.candidate = candidate
        self.four_ties = four_ties
        self.instant_first_side = instant_first_side
        self.with_concessions = concessions
        self.round_cap = 4 if four_ties else (1 if instant_first_side else 0)
        self.counters = DiceCounters(sides, candidate)
        own = self.counters.of_side[candidate]
        loser_dice = [size for loser in self.frame.losers for size in self.frame.dice[loser]]
        self.success = SuccessSizes(self.frame.dice[candidate], loser_dice)
        self.winner = WinnerDice(
            [self.counters.pool[c] for c in own], [self.counters.size[c] for c in own], self.success.code
        )
        # after the decision: the winner in one counter, then one counter per loser
        joining = [joining_faces(self.frame.dice[side]) for side in [candidate] + self.frame.losers]
        self.concession_walk = ConcessionWalk(self.frame, joining)
        self._showings_cache: dict = {}
        self._winner_split_cache: dict = {}

    def run(self):
        """Walk every face; returns (sizes weights, concession weights), ties under `TIED`."""
        layer = {(Undecided(0), (0,) * len(self.counters.joining)): 1}
        for face in range(self.frame.top_face, 0, -1):
            layer = self._walk_face(layer, face)
        self._close(layer)
        frame = self.frame
        for table in (frame.sizes, frame.concessions) if self.with_concessions else (frame.sizes,):
            check_invariant(sum(table.values()) == frame.total, "weights must sum to prod N")
        return dict(frame.sizes), dict(frame.concessions)

    def _walk_face(self, layer, face):
        """One face value: every state's step, then the queued `Conceding` steps."""
        next_layer: dict = defaultdict(int)
        check_memory("while solving the contest")
        for (state, dice_left), weight in layer.items():
            kind = type(state)
            if kind is Undecided:
                self._undecided_step(state.rounds, dice_left, face, weight, next_layer)
            elif kind is Winning:
                self.concession_walk.winning_step(dice_left, face, weight, next_layer)
            else:
                self.concession_walk.conceding_step(state, dice_left, face, weight, next_layer)
        self.concession_walk.apply_queued(face, next_layer)
        return next_layer

    def _close(self, layer):
        """Below face 1 the states left are outcomes: still undecided is step 4's true tie."""
        for (state, dice_left), weight in layer.items():
            check_invariant(not any(dice_left), "every die must be placed by face 1")
            if type(state) is Undecided:
                self.frame.settle(TIED, weight)
            else:
                self.concession_walk.close(state, weight)
        for sizes, weight in self.success.settle().items():
            self.frame.sizes[(self.candidate, sizes)] += weight

    # --- spec steps 2-4: before a winner exists ---

    def _undecided_step(self, rounds, dice_left, face, weight, out):
        """Steps 2-4 at ``face``, for every way each side's dice can show it."""
        dice_left = join_dice(dice_left, self.counters.joining, face)
        own_left = self.counters.side_left(dice_left, self.candidate)
        per_side = [
            self._showings(side, self.counters.side_left(dice_left, side), face)
            for side in range(len(self.counters.of_side))
        ]
        for at_top in product(*(tuple(showings) for showings in per_side)):
            showings = [per_side[side][rounds_at_top] for side, rounds_at_top in enumerate(at_top)]
            if self._first_side_wins_at_once(rounds, at_top):
                self._instant_tie(showings, face, weight)
                continue
            longest, second = sorted(at_top, reverse=True)[:2]
            if longest == second:  # nobody shows this face, or the sides stay tied through it
                self._tied_through(rounds + longest, showings, face, weight, out)
            elif self.four_ties and rounds + second >= 4:
                self._settle_all(TIED, weight, showings, face)
            elif at_top.index(longest) != self.candidate:
                self._settle_all(OTHER_WINS, weight, showings, face)
            else:  # "if one side alone holds the greatest high die, it wins", after `second` discards
                self._decide(showings, (own_left, face, at_top[self.candidate]), second, weight, out)

    def _showings(self, side, side_left, face) -> dict:
        """How side ``side``'s dice can show ``face``: rounds at the top -> [`Showing`].

        A side stays at the top for as many discard rounds as its pool with the most dice
        showing the face has of them ("every pool showing it discards one die").
        """
        key = (side, side_left, face)
        cached = self._showings_cache.get(key)
        if cached is not None:
            return cached
        counters = self.counters.of_side[side]
        by_rounds: dict = defaultdict(list)
        for choice in product(*(ways_to_show(left, face) for left in side_left)):
            shown = tuple(count for count, _ in choice)
            per_pool: dict = defaultdict(int)
            for counter, count in zip(counters, shown):
                per_pool[self.counters.pool[counter]] += count
            left = tuple(before - count for before, count in zip(side_left, shown))
            by_rounds[max(per_pool.values(), default=0)].append(Showing(shown, prod(w for _, w in choice), left))
        self._showings_cache[key] = by_rounds
        return by_rounds

    def _tied_through(self, rounds, showings, face, weight, out):
        """Every side at the top discarded all its dice of this face: still undecided, or
        step 4 under `four-ties` ("also a tie as soon as four successive rounds of step 3
        ended in discards")."""
        if self.four_ties and rounds >= 4:
            self._settle_all(TIED, weight, showings, face)
            return
        state = Undecided(min(rounds, self.round_cap))
        for choice in product(*showings):
            ways = weight * prod(showing.ways for showing in choice)
            out[(state, sum((showing.left for showing in choice), ()))] += ways

    def _settle_all(self, outcome, weight, showings, face):
        """The roll is settled here (a tie, or another side won): every die left falls anywhere."""
        total = weight * self.frame.waiting[face]
        for side_showings in showings:
            total *= sum(ways * (face - 1) ** sum(left) for _, ways, left in side_showings)
        self.frame.settle(outcome, total)

    # --- the candidate wins: into steps 5 and 6 ---

    def _decide(self, showings, own_key, discards, weight, out):
        """``c`` outlasted the others after ``discards`` rounds at this face (``own_key``:
        its dice left, the face and its rounds at the top; see `_winner_split`)."""
        face = own_key[1]
        losers_left: dict = defaultdict(int)  # each loser's dice left -> ways
        for choice in product(*self._loser_totals(showings)):
            losers_left[tuple(left for (_, left), _ in choice)] += prod(ways for _, ways in choice)
        losers_in_play: dict = defaultdict(int)  # all losers' dice left -> ways
        for left, ways in losers_left.items():
            losers_in_play[sum(left)] += ways
        by_success, by_left = self._winner_split(own_key, discards)
        for (kept, winner_in_play), ways in by_success.items():
            for in_play, loser_ways in losers_in_play.items():
                self.success.add(face, winner_in_play, in_play, kept, weight * ways * loser_ways)
        if not self.with_concessions:  # the sizes above are all that is asked: stop here
            return
        for winner_left, ways in by_left.items():
            for left, loser_ways in losers_left.items():
                self.concession_walk.enter((winner_left,) + left, weight * ways * loser_ways, out)

    def _winner_split(self, own_key, discards):
        """The winner's showings grouped by (kept success dice, dice in play per size) and
        by its count of dice left. ``own_key`` is ``(dice left per counter, face, rounds at
        the top)`` of the candidate; the dice it keeps at this face are success dice."""
        key = (own_key, discards)
        cached = self._winner_split_cache.get(key)
        if cached is not None:
            return cached
        own_left, face, rounds_at_top = own_key
        by_success: dict = defaultdict(int)
        by_left: dict = defaultdict(int)
        for shown, ways, left in self._showings(self.candidate, own_left, face)[rounds_at_top]:
            by_success[(self.winner.kept_code(shown, discards), self.winner.in_play_per_size(left))] += ways
            by_left[sum(left)] += ways
        self._winner_split_cache[key] = (by_success, by_left)
        return by_success, by_left

    def _loser_totals(self, showings):
        """Each loser's showings merged by counts: ``[((shown, left), ways)]`` per loser."""
        merged = []
        for loser in self.frame.losers:
            table: dict = defaultdict(int)
            for shown, ways, left in showings[loser]:
                table[(sum(shown), sum(left))] += ways
            merged.append(list(table.items()))
        return merged

    # --- spec point 8: the physical-dice instant win ---

    def _first_side_wins_at_once(self, rounds, at_top) -> bool:
        """Point 8: "if the first side holds a substituted die and ties the top value at
        the first comparison, it wins at once with one success die"."""
        return (
            self.instant_first_side
            and rounds == 0
            and at_top[0] > 0
            and sum(1 for rounds_at_top in at_top if rounds_at_top) >= 2
        )

    def _instant_tie(self, showings, face, weight):
        if self.candidate == 0:
            self._instant_win(showings, face, weight)
        else:
            self._settle_all(OTHER_WINS, weight, showings, face)

    def _instant_win(self, showings, face, weight):
        """The first side wins with one success die, the largest of its dice showing the
        top value; its other dice showing it count towards concessions."""
        first_counters = self.counters.of_side[0]
        losers = self._loser_totals(showings)
        for shown, ways, left in showings[0]:
            largest = max(self.counters.size[counter] for counter, count in zip(first_counters, shown) if count)
            for choice in product(*losers):
                losers_shown = tuple(loser_shown for (loser_shown, _), _ in choice)
                dice_left = (sum(left),) + tuple(loser_left for (_, loser_left), _ in choice)
                branch = weight * ways * prod(loser_ways for _, loser_ways in choice)
                self.frame.sizes[(0, (largest,))] += branch * self.frame.unplaced_weight(sum(dice_left), face)
                if self.with_concessions:
                    self.concession_walk.queue_first(sum(shown) - 1, losers_shown, dice_left, branch)


def _state_bound(sides, candidate) -> int:
    """Most dice-left states the undecided walk can hold for one candidate (a work bound)."""
    bound = 1
    for side_index, side in enumerate(sides):
        for pool in side:
            if side_index == candidate:
                bound *= prod(pool.count(size) + 1 for size in set(pool))
            else:
                bound *= len(pool) + 1
    return bound


def roll_outcomes(
    sides: Sequence[Sequence[Sequence[int]]],
    *,
    four_ties: bool = False,
    instant_first_side: bool = False,
    concessions: bool = True,
) -> tuple[Distribution, Distribution | None]:
    """Exact outcome distributions of one roll: ``(winner, success sizes)`` and ``(winner, concessions)``.

    Parameters
    ----------
    sides : sequence
        Pools of die sizes per side.
    four_ties : bool, default False
        The ``four-ties`` tie rule.
    instant_first_side : bool, default False
        The physical-dice rule: the first side wins a first-comparison tie.
    concessions : bool, default True
        False skips the concession dice (faster).

    Returns
    -------
    tuple of (Distribution, Distribution or None)
        Over ``(winner, success sizes)`` (``winner`` a side index or `TIE`, -1; sizes largest
        first) and over ``(winner, concessions)`` (one count per side; None without
        *concessions*).

    Examples
    --------
    >>> sizes, concessions = roll_outcomes([((4,),), ((4,),)])
    >>> sizes.probability((-1, ())), concessions.probability((0, (0, 1)))
    (Fraction(1, 4), Fraction(3, 8))
    """
    sides = _checked_sides(sides)
    size_weights: dict = defaultdict(int)
    concession_weights: dict = defaultdict(int)
    tie_weight = None
    for candidate in range(len(sides)):
        found_sizes, found_concessions = CandidatePass(
            sides, candidate, four_ties, instant_first_side, concessions
        ).run()
        this_tie = found_sizes.pop(TIED, 0)
        if concessions:
            check_invariant(found_concessions.pop(TIED, 0) == this_tie, "the concession pass must count the same ties")
        check_invariant(tie_weight is None or tie_weight == this_tie, "every pass must agree on ties")
        tie_weight = this_tie
        _add_candidate_outcomes(found_sizes, size_weights)
        _add_candidate_outcomes(found_concessions, concession_weights)
    if tie_weight:
        size_weights[(TIE, ())] += tie_weight
        concession_weights[(TIE, (0,) * len(sides))] += tie_weight
    total = prod(size for side in sides for pool in side for size in pool)
    result = (Distribution(size_weights), Distribution(concession_weights) if concessions else None)
    check_invariant(
        all(law.denominator == total for law in result if law), "the outcomes must cover every roll exactly once"
    )
    return result


def _checked_sides(sides) -> list:
    """The sides as tuples without empty pools, or a clear error when the contest is not solvable."""
    sides = [tuple(tuple(pool) for pool in side if pool) for side in sides]
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    empty = [index for index, side in enumerate(sides) if not side]
    if empty:
        raise InputError("sides", f"side {empty[0]} has no dice")
    dice = sum(len(pool) for side in sides for pool in side)
    if dice > MAX_CONTEST_DICE:
        raise TooLargeError("sides", f"{dice} dice in the contest is more than the limit of {MAX_CONTEST_DICE}")
    states = max(_state_bound(sides, candidate) for candidate in range(len(sides)))
    if states > MAX_STATES:
        raise TooLargeError(
            "sides",
            f"this contest needs up to {states:,} dice-left states per face, "
            f"more than the limit of {MAX_STATES:,} (use fewer or more alike dice)",
        )
    work = _work_estimate(sides)
    if work > MAX_WORK:
        raise TooLargeError(
            "sides",
            f"this contest of {len(sides)} sides and {dice} dice would take about "
            f"{work:,} units of work, more than the limit of {MAX_WORK:,} (a few "
            "seconds): use fewer sides, fewer dice or more alike dice",
        )
    return sides


#: most work one solve may take (`_work_estimate`): ten dice a side up to d20 (two sides)
#: is 5.2 x 10^8 (~16 s loaded), seven sides of one d6 10^8 (3 s)
MAX_WORK = 600_000_000


def _work_estimate(sides) -> int:
    """The solve's work before it starts, per candidate winner and face: its undecided
    states squared (each meets the others' options), plus the concession walk, which grows
    with every side's dice together (the cube of the product of (dice + 1) over the sides
    fits the timed solves). Calibrated: 12 sides of one d8 (past 60 s and 1.8 GB unchecked)
    is 6.6 x 10^12; 8 of them (23 s loaded) 1.1 x 10^9; four sides of 4d10, five of 3d8,
    three of six mixed dice (each past 50 s) 1.4 x 10^9 to 4 x 10^10.

    >>> _work_estimate([((8,),)] * 12) > MAX_WORK > _work_estimate([((6,),)] * 7)
    True
    """
    faces = max(size for side in sides for pool in side for size in pool)
    together = prod(sum(len(pool) for pool in side) + 1 for side in sides)
    return faces * sum(_state_bound(sides, candidate) ** 2 + together**3 for candidate in range(len(sides)))


def _add_candidate_outcomes(found: dict, target: dict) -> None:
    """Add one candidate pass's outcomes (its own wins: other sides' wins are under `OTHER_WINS`)."""
    found.pop(OTHER_WINS, None)
    for outcome, weight in found.items():
        target[outcome] += weight
