"""The exact Chronica contest: a dynamic program over face values, top down.

Walking the faces from the highest down, the dice not yet placed are uniform below the
current face, so "k of the m dice of a slot show v" weighs C(m, k) (the integer-weight
scheme of `exactdice.core.evaluate_sorted`, over the fixed total prod N). Nothing
ever enumerates rolls. Before a winner exists, every higher die was discarded in ties,
so the state is only `Undecided` (how many discard rounds) plus the dice not yet placed;
at the face where one side outlasts the others it becomes the winner: `Winning` while its
dice are success dice, then `Conceding`, one `PairStatus` and count per (winner, loser)
pair (spec steps 3, 5 and 6 in that order).

It does not run on `exactdice.core.evaluate_sorted` itself: that walk keeps a count per
die group in every state and sums dice out only once the whole state is settled, while
this one merges counts per pool (a side's life depends on its pools, not its sizes),
sums out a settled loser's dice mid-walk and settles success sizes in closed form.

To keep states few, one pass per candidate winner ``c`` tracks die sizes only for side
``c`` (success sizes are bought with them) and merges the other sides' dice per pool;
after the decision, losers' pools and the winner's pools merge (only counts matter).
Dice of every size >= the current face are interchangeable, so a slot is one count.

Policies the text leaves open (see `exactdice.chronica.reading`): a pool that discards one
of several dice showing the tied value discards its smallest die (its larger ones are
worth more as success dice); a physical-dice instant win's success die is the largest
die of the first side showing the top value. Concession dice a winner gains from
several losers add up.

>>> solve_contest([((6,),), ((6,),)]).successes[0]
{1: Fraction(5, 12)}
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import IntEnum
from fractions import Fraction
from itertools import product
from math import comb, prod
from typing import NamedTuple

from exactdice.chronica.ruleset import MAX_CONTEST_DICE, PHYSICAL_DICE, Rules, read_sides, side_text
from exactdice.core.distribution import Distribution
from exactdice.core.exact import fraction_text
from exactdice.errors import InputError, TooLargeError, check_invariant
from exactdice.limits import check_memory

__all__ = ["ContestResult", "solve_contest", "roll_outcomes", "expected_distribution", "column_distributions",
           "apply_target", "apply_physical", "physical_size", "sizes_text", "TIE", "OUTCOME_COLUMN", "MAX_STATES",
           "MAX_WORK"]

#: the winner index of a tie in outcome tuples
TIE = -1

#: most dice-left states one solve may need (see `_state_bound`); 10 mixed dice a side is ~10**4
MAX_STATES = 2_000_000

#: the simulator's CSV column that `expected_distribution` describes
OUTCOME_COLUMN = "winner"

_OTHER = ("other",)
_TIED = ("tie",)


# ----- setup transforms -----------------------------------------------------------------


def apply_target(sides, target: int | None):
    """Condition / penalty contest: every side but the first takes up to three dN.

    Smallest dice smaller than dN are replaced first (first pool first among equals);
    while a side has fewer than three dice, dN dice are added to its first pool.

    >>> apply_target([((8,),), ((10, 4),)], 6)
    [((8,),), ((10, 6, 6),)]
    """
    if target is None:
        return [tuple(tuple(pool) for pool in side) for side in sides]
    result = [tuple(tuple(pool) for pool in sides[0])]
    for side in sides[1:]:
        pools = [list(pool) for pool in side]
        total = sum(len(pool) for pool in pools)
        missing = max(0, 3 - total)
        pools[0] += [target] * missing
        replace = 3 - missing
        candidates = sorted((size, pool_index, position)
                            for pool_index, pool in enumerate(side)
                            for position, size in enumerate(pool) if size < target)
        for size, pool_index, position in candidates[:replace]:
            pools[pool_index][position] = target
        result.append(tuple(tuple(sorted(pool, reverse=True)) for pool in pools))
    return result


def physical_size(size: int) -> int:
    """The die actually rolled for a dN with physical dice (spec point 8).

    >>> physical_size(11), physical_size(3), physical_size(20), physical_size(30)
    (10, 3, 20, 20)
    """
    smaller = [p for p in PHYSICAL_DICE if p <= size]
    return max(smaller) if smaller else size


def apply_physical(side):
    """The first side rolled with physical dice, and whether any die was substituted.

    >>> apply_physical(((11, 6), (3,)))
    (((10, 6), (3,)), True)
    """
    rolled = tuple(tuple(sorted((physical_size(s) for s in pool), reverse=True)) for pool in side)
    substituted = any(physical_size(s) != s for pool in side for s in pool)
    return rolled, substituted


# ----- one roll of a contest --------------------------------------------------------------

# The walk's states are named tuples (hashed as fast as tuples); their lengths differ (1, 0
# and 2 fields), so two kinds never compare equal as layer keys.


class Undecided(NamedTuple):
    """No winner yet: every higher die was discarded in ``rounds`` rounds of ties (capped at
    what the rules need: 4 with `four-ties`, 1 for the physical-dice instant win, else 0)."""

    rounds: int


class Winning(NamedTuple):
    """The candidate has won and no loser's die has shown yet: its dice showing now are
    success dice (spec step 5; their sizes are settled in closed form, see `_success_sizes`)."""


class Conceding(NamedTuple):
    """A loser's die has shown: spec step 6, one ``(PairStatus, count)`` per loser in ``pairs``;
    ``gains[0]`` is the winner's concession dice so far, ``gains[1 + j]`` loser ``j``'s."""

    pairs: tuple
    gains: tuple


class PairStatus(IntEnum):
    """Where one (winner, loser) pair of the concession count stands, walking the faces down."""

    OPEN = 0  #: neither has shown a die since the success dice
    WINNER_COUNTING = 1  #: the winner's highest is higher: it counts its dice above the loser's highest
    LOSER_COUNTING = 2  #: the loser's highest is higher: the loser counts
    SETTLED = 3  #: the other's highest has shown (or both showed the same): nothing more changes


OPEN, WINNER_COUNTING, LOSER_COUNTING, SETTLED = PairStatus
_WINNING = Winning()


def _pair_step(status, count, winner_shown, loser_shown):
    """One face of step 6 for one pair: ``(status, count, winner's gain, loser's gain)``.

    >>> _pair_step(OPEN, 0, 2, 0), _pair_step(WINNER_COUNTING, 2, 1, 1)
    ((<PairStatus.WINNER_COUNTING: 1>, 2, 0, 0), (<PairStatus.SETTLED: 3>, 0, 2, 0))
    """
    if status == OPEN:
        if winner_shown and loser_shown:  # equal highest dice: no concession
            return SETTLED, 0, 0, 0
        if winner_shown:
            return WINNER_COUNTING, winner_shown, 0, 0
        if loser_shown:
            return LOSER_COUNTING, loser_shown, 0, 0
        return OPEN, count, 0, 0
    if status == WINNER_COUNTING:
        return (SETTLED, 0, count, 0) if loser_shown else (WINNER_COUNTING, count + winner_shown, 0, 0)
    if status == LOSER_COUNTING:
        return (SETTLED, 0, 0, count) if winner_shown else (LOSER_COUNTING, count + loser_shown, 0, 0)
    return SETTLED, 0, 0, 0


def _close_pairs(pairs, gains):
    """Gains once every die is placed: counting pairs keep what they counted."""
    gains = list(gains)
    for j, (status, count) in enumerate(pairs):
        if status == WINNER_COUNTING:
            gains[0] += count
        elif status == LOSER_COUNTING:
            gains[1 + j] += count
    return tuple(gains[1:]), gains[0]


def _binomial_options(m: int, face: int):
    if face == 1:
        return ((m, 1),)
    return tuple((k, comb(m, k)) for k in range(m + 1))


class _SuccessCode:
    """The winner's success dice counted per die size, packed in one int (mixed radix) so
    adding counts is one ``+``.

    >>> code = _SuccessCode([8, 6, 6])
    >>> code.decode(code.unit[8] + 2 * code.unit[6])
    (8, 6, 6)
    """

    def __init__(self, win_dice):
        self.sizes = sorted(set(win_dice), reverse=True)
        self.count = {size: win_dice.count(size) for size in self.sizes}
        self.unit = {}
        unit = 1
        for size in self.sizes:
            self.unit[size] = unit
            unit *= self.count[size] + 1

    def decode(self, code) -> tuple:
        """The sizes of the success dice, largest first."""
        sizes = []
        for size in self.sizes:
            sizes += [size] * ((code // self.unit[size]) % (self.count[size] + 1))
        return tuple(sizes)


class _Slots:
    """The undecided walk's dice-left counters: the candidate's dice per (pool, size), every
    other pool one counter (only its count matters)."""

    def __init__(self, sides, candidate):
        self.of_side: list[list[int]] = []  # slot indices of each side
        self.pool: list[int] = []  # pool index (within its side) of each slot
        self.size: list[int | None] = []  # die size of each candidate slot (None: a merged pool)
        self.schedule: list[dict] = []  # per slot: dice of each size (they join at that face)
        for s, side in enumerate(sides):
            indices = []
            for p, pool in enumerate(side):
                for size in (sorted(set(pool), reverse=True) if s == candidate else [None]):
                    indices.append(len(self.schedule))
                    self.schedule.append({size: pool.count(size)} if size else _schedule(pool))
                    self.pool.append(p)
                    self.size.append(size)
            self.of_side.append(indices)

    def winner_pools(self, candidate, pools, code: _SuccessCode):
        """Per pool of the candidate: (position in its slots, success unit), smallest size first."""
        own = self.of_side[candidate]
        by_size = sorted(enumerate(own), key=lambda item: self.size[item[1]])
        return [[(position, code.unit[self.size[slot]]) for position, slot in by_size if self.pool[slot] == p]
                for p in range(pools)]

    def size_index(self, candidate, code: _SuccessCode):
        """Per candidate slot, the index of its size in ``code.sizes`` (None when they are the same)."""
        indices = [code.sizes.index(self.size[slot]) for slot in self.of_side[candidate]]
        return None if indices == list(range(len(code.sizes))) else indices


def _inactive_factors(sizes) -> dict:
    """Face v -> product of the sizes below v: the weight of the dice not yet in play at v.

    >>> _inactive_factors([6, 4, 2])
    {1: 1, 2: 1, 3: 2, 4: 2, 5: 8, 6: 8}
    """
    return {v: prod(s for s in sizes if s < v) for v in range(1, max(sizes) + 1)}


class _CandidatePass:
    """The DP for one candidate winner ``c``: weights of its outcomes, of ties and of the rest.

    A layer maps ``(state, dice left per slot)`` to a weight; the state is `Undecided`, then,
    once ``c`` wins, `Winning` until a loser's die shows, then `Conceding`. Each face value
    is one step (`_undecided`, `_winning`, `_conceding`); outcomes that are settled leave
    the walk into ``final_sizes`` / ``final_gains`` with the weight of the dice not yet placed.
    """

    def __init__(self, sides, candidate, four_ties, instant_first_side, concessions=True):
        self.sides = sides
        self.concessions = concessions
        self.count = len(sides)
        self.c = candidate
        self.four_ties = four_ties
        self.instant = instant_first_side
        self.round_cap = 4 if four_ties else (1 if instant_first_side else 0)
        dice = [[s for pool in side for s in pool] for side in sides]  # per side, pools merged
        all_sizes = [s for side_dice in dice for s in side_dice]
        self.top = max(all_sizes)
        self.inactive_factor = _inactive_factors(all_sizes)
        self.total = prod(all_sizes)
        self.losers = [s for s in range(self.count) if s != candidate]
        self.loser_dice = sorted(s for j in self.losers for s in dice[j])
        self.code = _SuccessCode(dice[candidate])
        self.slots = _Slots(sides, candidate)
        self.win_pool_slots = self.slots.winner_pools(candidate, len(sides[candidate]), self.code)
        self.win_size_of_slot = self.slots.size_index(candidate, self.code)
        # after the decision: the winner in one slot, then one slot per loser side
        self.decided_schedule = [_schedule(dice[j]) for j in [candidate] + self.losers]
        self.final_sizes: dict = defaultdict(int)
        self.final_gains: dict = defaultdict(int)
        self.pending: dict = defaultdict(int)  # Conceding steps to apply at this face
        self.pending_sizes: dict = defaultdict(int)  # (face, active per size, losers' left, kept)
        self._side_cache: dict = {}
        self._sizes_cache: dict = {}
        self._winner_cache: dict = {}
        self._step_cache: dict = {}
        self._loser_cache: dict = {}

    # --- helpers ---
    @staticmethod
    def _activate(rem, schedule, face):
        return tuple(m + sched.get(face, 0) for m, sched in zip(rem, schedule))

    def _future(self, remaining_active, face):
        """Total weight of every way the dice not yet placed can fall (faces below ``face``)."""
        return (face - 1) ** remaining_active * self.inactive_factor[face]

    def _gains(self, loser_gains, winner_gain):
        gains = [0] * self.count
        gains[self.c] = winner_gain
        for j, gain in zip(self.losers, loser_gains):
            gains[j] = gain
        return (self.c, tuple(gains))

    def _side_options(self, side, rem_side, face):
        """Options of one side at ``face``: lifetime -> [(ks per slot, weight, after)]."""
        key = (side, rem_side, face)
        cached = self._side_cache.get(key)
        if cached is not None:
            return cached
        slots = self.slots.of_side[side]
        by_life: dict = defaultdict(list)
        for choice in product(*(_binomial_options(m, face) for m in rem_side)):
            ks = tuple(k for k, _ in choice)
            pool_counts: dict = defaultdict(int)
            for slot, k in zip(slots, ks):
                pool_counts[self.slots.pool[slot]] += k
            life = max(pool_counts.values(), default=0)  # rounds this side stays at the top
            after = tuple(m - k for m, k in zip(rem_side, ks))
            by_life[life].append((ks, prod(w for _, w in choice), after))
        self._side_cache[key] = by_life
        return by_life

    def _success_sizes(self, face, win_active, loser_active):
        """Weights of the success dice (packed counts) once ``c`` won at ``face``.

        Every die not yet placed is uniform: active dice on 1..face-1, the others on
        1..N. Given the losers' highest die L = l, each winner die is a success when it
        shows more than l, independently; L itself depends only on the losers' dice.
        """
        key = (face, win_active, loser_active)
        cached = self._sizes_cache.get(key)
        if cached is not None:
            return cached
        below = face - 1
        win_groups = []  # (unit, number of dice, top face)
        for size, active in zip(self.code.sizes, win_active):
            if size >= face:
                win_groups.append((self.code.unit[size], active, below))
            else:
                win_groups.append((self.code.unit[size], self.code.count[size], size))
        result: dict = defaultdict(int)
        for highest, weight_l in self._losers_highest(face, loser_active):
            table = {0: weight_l}
            for group in win_groups:
                step = self._step(highest, *group)
                table = {code + extra: w * x for code, w in table.items() for extra, x in step}
            for code, w in table.items():
                result[code] += w
        result = dict(result)
        self._sizes_cache[key] = result
        return result

    def _losers_highest(self, face, loser_active):
        """[(l, weight of "the losers' highest die is l")] for the dice they have left."""
        key = (face, loser_active)
        cached = self._loser_cache.get(key)
        if cached is None:
            tops = [face - 1] * loser_active + [s for s in self.loser_dice if s < face]
            cached, previous = [], 0
            for highest in range(0, max(tops, default=0) + 1):
                cdf = prod(min(highest, top) for top in tops)
                if cdf - previous:
                    cached.append((highest, cdf - previous))
                previous = cdf
            self._loser_cache[key] = cached
        return cached

    def _step(self, highest, unit, n, top):
        """[(packed count, weight)] of how many of ``n`` dice on 1..top show more than ``highest``."""
        key = (highest, unit, n, top)
        cached = self._step_cache.get(key)
        if cached is None:
            above, at_most = max(top - highest, 0), min(highest, top)
            cached = [(k * unit, comb(n, k) * above ** k * at_most ** (n - k)) for k in range(n + 1)]
            cached = [(code, x) for code, x in cached if x]
            self._step_cache[key] = cached
        return cached

    # --- the walk ---
    def run(self):
        """Walk every face; returns (sizes weights, concession weights), ties under `_TIED`."""
        layer = {(Undecided(0), tuple(0 for _ in self.slots.schedule)): 1}
        for face in range(self.top, 0, -1):
            layer = self._walk_face(layer, face)
        self._close(layer)
        for table in (self.final_sizes, self.final_gains) if self.concessions else (self.final_sizes,):
            check_invariant(sum(table.values()) == self.total, "weights must sum to prod N")
        return dict(self.final_sizes), dict(self.final_gains)

    def _walk_face(self, layer, face):
        """One face value: every state's step, then the queued `Conceding` steps."""
        next_layer: dict = defaultdict(int)
        check_memory("while solving the contest")
        for (state, rem), weight in layer.items():
            kind = type(state)
            if kind is Undecided:
                self._undecided(state.rounds, rem, face, weight, next_layer)
            elif kind is Winning:
                self._winning(rem, face, weight, next_layer)
            else:
                self._conceding(state, rem, face, weight, next_layer)
        for key, weight in self.pending.items():
            self._apply_pairs(*key, face, weight, next_layer)
        self.pending.clear()
        return next_layer

    def _close(self, layer):
        """Below face 1: the states left are outcomes; the success sizes queued so far are decoded."""
        for (state, rem), weight in layer.items():
            check_invariant(not any(rem), "every die must be placed by face 1")
            kind = type(state)
            if kind is Undecided:
                self.final_sizes[_TIED] += weight
                self.final_gains[_TIED] += weight
            elif kind is Winning:
                self.final_gains[self._gains((0,) * len(self.losers), 0)] += weight
            else:
                self.final_gains[self._gains(*_close_pairs(state.pairs, state.gains))] += weight
        by_code: dict = defaultdict(int)
        for (face, win_active, loser_total, kept), weight in self.pending_sizes.items():
            for code, x in self._success_sizes(face, win_active, loser_total).items():
                by_code[kept + code] += weight * x
        for code, weight in by_code.items():
            self.final_sizes[(self.c, self.code.decode(code))] += weight

    def _undecided(self, rounds, rem, face, weight, out):
        """Spec steps 2-4 at ``face``: each side's "life" is how many discard rounds it stays at the top."""
        rem = self._activate(rem, self.slots.schedule, face)
        own_rem = tuple(rem[i] for i in self.slots.of_side[self.c])
        per_side = [self._side_options(s, tuple(rem[i] for i in slots), face)
                    for s, slots in enumerate(self.slots.of_side)]
        for lives in product(*(tuple(options) for options in per_side)):
            lists = [per_side[s][life] for s, life in enumerate(lives)]
            if self.instant and rounds == 0 and lives[0] and sum(1 for life in lives if life) >= 2:
                self._instant_tie(lists, face, weight)
                continue
            longest, second = sorted(lives, reverse=True)[:2]
            if longest == second:  # nobody shows this face, or sides stay tied through it
                self._tied_through(rounds + longest, lists, face, weight, out)
            else:  # one side outlasts the others after `second` rounds of discards
                own_options = (own_rem, face, lives[self.c])  # the key of lists[c], see `_winner_split`
                self._outlasts(lives.index(longest), rounds + second, second, own_options, lists, weight, out)

    def _instant_tie(self, lists, face, weight):
        """Point 8: the first side ties the top at the first comparison and wins at once."""
        if self.c == 0:
            self._instant_win(lists, face, weight)
        else:
            self._settle_all(_OTHER, weight, lists, face)

    def _tied_through(self, rounds, lists, face, weight, out):
        """Every top side discarded its dice of this face: still undecided (or a four-ties tie)."""
        if self.four_ties and rounds >= 4:
            self._settle_all(_TIED, weight, lists, face)
            return
        state = Undecided(min(rounds, self.round_cap))
        for choice in product(*lists):
            w = weight * prod(option[1] for option in choice)
            out[(state, sum((option[2] for option in choice), ()))] += w

    def _outlasts(self, side, rounds, discards, own_options, lists, weight, out):
        """``side`` wins after ``discards`` rounds here, ``rounds`` in all (``own_options``: `_winner_split`)."""
        face = own_options[1]
        if self.four_ties and rounds >= 4:
            self._settle_all(_TIED, weight, lists, face)
        elif side != self.c:
            self._settle_all(_OTHER, weight, lists, face)
        else:
            self._decide(lists, own_options, discards, weight, out)

    def _settle_all(self, outcome, weight, lists, face):
        total = weight * self.inactive_factor[face]
        for options in lists:
            total *= sum(w * (face - 1) ** sum(after) for _, w, after in options)
        self.final_sizes[outcome] += total
        self.final_gains[outcome] += total

    def _loser_totals(self, lists):
        """Each loser's options merged: [((shown, after), weight)], one list per loser."""
        merged = []
        for j in self.losers:
            table: dict = defaultdict(int)
            for ks, w, after in lists[j]:
                table[(sum(ks), sum(after))] += w
            merged.append(list(table.items()))
        return merged

    def _decide(self, lists, own_options, discards, weight, out):
        """``c`` outlasted the others after ``discards`` rounds at this face (``own_options``: `_winner_split`)."""
        face = own_options[1]
        loser_choices: dict = defaultdict(int)  # losers' dice left, per loser -> weight
        for choice in product(*self._loser_totals(lists)):
            loser_choices[tuple(key[1] for key, _ in choice)] += prod(w for _, w in choice)
        by_total: dict = defaultdict(int)  # all losers' dice left -> weight, for the sizes
        for after, lw in loser_choices.items():
            by_total[sum(after)] += lw
        winner_groups, winner_left = self._winner_split(own_options, discards)
        for (kept, win_active), w in winner_groups.items():
            for loser_total, lw in by_total.items():
                self.pending_sizes[(face, win_active, loser_total, kept)] += weight * w * lw
        if not self.concessions:  # the sizes above are all that is asked: stop here
            return
        for left, w in winner_left.items():
            for loser_after, lw in loser_choices.items():
                out[(_WINNING, (left,) + loser_after)] += weight * w * lw

    def _winner_split(self, own_options, discards):
        """The winner's options grouped by (kept successes, active dice per size) and by dice left.

        ``own_options`` is ``(dice left per slot, face, life)`` of the candidate (its
        `_side_options`). Each pool discards its smallest dice showing the tied value
        (``discards`` of them); the dice it keeps at this face are success dice.
        """
        key = (own_options, discards)
        cached = self._winner_cache.get(key)
        if cached is not None:
            return cached
        own_rem, face, life = own_options
        options = self._side_options(self.c, own_rem, face)[life]
        winner_groups: dict = defaultdict(int)
        winner_left: dict = defaultdict(int)
        for ks, w, after in options:
            winner_groups[(self._kept_code(ks, discards), self._active_per_size(after))] += w
            winner_left[sum(after)] += w
        self._winner_cache[key] = (winner_groups, winner_left)
        return winner_groups, winner_left

    def _kept_code(self, ks, discards):
        """Packed sizes of the winner's dice at this face that outlast ``discards`` discards per pool."""
        kept = 0
        for positions in self.win_pool_slots:  # each pool's slots, smallest size first
            skip = discards
            for position, unit in positions:
                k = ks[position]
                if k > skip:
                    kept += (k - skip) * unit
                    skip = 0
                else:
                    skip -= k
        return kept

    def _active_per_size(self, after):
        """The winner's dice left per size (its slots are per pool and size)."""
        if self.win_size_of_slot is None:  # one pool: its slots are the sizes, in order
            return after
        active = [0] * len(self.code.sizes)
        for position, m in enumerate(after):
            active[self.win_size_of_slot[position]] += m
        return tuple(active)

    def _instant_win(self, lists, face, weight):
        """Physical dice: the first side tied the top at the first comparison and wins."""
        slots = self.slots.of_side[0]
        losers = self._loser_totals(lists)
        start = ((OPEN, 0),) * len(self.losers)
        no_gains = (0,) * (len(self.losers) + 1)
        for ks, w, after in lists[0]:
            best = max(self.slots.size[slot] for slot, k in zip(slots, ks) if k)
            for choice in product(*losers):
                shown = tuple(key[0] for key, _ in choice)
                rem = (sum(after),) + tuple(key[1] for key, _ in choice)
                branch = weight * w * prod(lw for _, lw in choice)
                self.final_sizes[(0, (best,))] += branch * self._future(sum(rem), face)
                if not self.concessions:
                    continue
                self._to_conceding(start, no_gains, sum(ks) - 1, shown, rem, branch)

    def _winning(self, rem, face, weight, out):
        """``c`` won; its dice are success dice until a loser's die shows."""
        rem = self._activate(rem, self.decided_schedule, face)
        start = ((OPEN, 0),) * len(self.losers)
        no_gains = (0,) * (len(self.losers) + 1)
        for choice in product(*(_binomial_options(m, face) for m in rem)):
            ks = tuple(k for k, _ in choice)
            w = weight * prod(x for _, x in choice)
            after = tuple(m - k for m, k in zip(rem, ks))
            if any(ks[1:]):
                self._to_conceding(start, no_gains, ks[0], ks[1:], after, w)
            else:
                out[(_WINNING, after)] += w

    def _conceding(self, state, rem, face, weight, out):
        """Step 6 at ``face``: settled losers' dice sum out; the others' shown dice are queued."""
        pairs, gains = state
        rem = self._activate(rem, self.decided_schedule, face)
        options = [_binomial_options(m, face) for m in rem]
        dead_factor = 1
        for index, (status, _) in enumerate(pairs):
            if status == SETTLED:  # this loser no longer matters: its dice sum out here
                dead_factor *= face ** rem[index + 1]
                options[index + 1] = ((0, 1),)
                rem = rem[:index + 1] + (0,) + rem[index + 2:]
        for choice in product(*options):
            ks = tuple(k for k, _ in choice)
            w = weight * dead_factor * prod(x for _, x in choice)
            after = tuple(m - k for m, k in zip(rem, ks))
            self._to_conceding(pairs, gains, ks[0], ks[1:], after, w)

    def _to_conceding(self, pairs, gains, winner_shown, losers_shown, rem, weight):
        """Queue a `Conceding` step; equal steps from many states are applied once per face."""
        self.pending[(pairs, gains, winner_shown, losers_shown, rem)] += weight

    def _apply_pairs(self, pairs, gains, winner_shown, losers_shown, rem, face, weight, out):
        """Apply one face's shown dice to every (winner, loser) pair (`_pair_step`) and store the state."""
        new_pairs = []
        gains = list(gains)
        rem = list(rem)
        for j, ((status, count), shown) in enumerate(zip(pairs, losers_shown)):
            status, count, winner_gain, loser_gain = _pair_step(status, count, winner_shown, shown)
            gains[0] += winner_gain
            gains[1 + j] += loser_gain
            if status == SETTLED and rem[1 + j]:  # this loser's dice no longer matter
                weight *= (face - 1) ** rem[1 + j]
                rem[1 + j] = 0
            new_pairs.append((status, count))
        if all(status == SETTLED for status, _ in new_pairs):
            self.final_gains[self._gains(tuple(gains[1:]), gains[0])] += weight * self._future(sum(rem), face)
            return
        out[(Conceding(tuple(new_pairs), tuple(gains)), tuple(rem))] += weight


def _state_bound(sides, candidate) -> int:
    """Most dice-left states the undecided walk can hold for one candidate (a work bound)."""
    bound = 1
    for s, side in enumerate(sides):
        for pool in side:
            if s == candidate:
                bound *= prod(pool.count(size) + 1 for size in set(pool))
            else:
                bound *= len(pool) + 1
    return bound


def _schedule(sizes) -> dict:
    table: dict = defaultdict(int)
    for size in sizes:
        table[size] += 1
    return dict(table)


def roll_outcomes(sides, *, four_ties: bool = False, instant_first_side: bool = False,
                  concessions: bool = True) -> tuple[Distribution, Distribution | None]:
    """Exact outcome distributions of one roll: ``(winner, success sizes)`` and ``(winner, concessions)``.

    ``winner`` is a side index or `TIE` (-1); success sizes are the winner's success dice,
    largest first; concessions has one count per side. ``instant_first_side`` is the
    physical-dice rule (the first side wins a first-comparison tie). With
    ``concessions=False`` the second distribution is None (and the solve is faster).

    >>> sizes, concessions = roll_outcomes([((4,),), ((4,),)])
    >>> sizes.probability((-1, ())), concessions.probability((0, (0, 1)))
    (Fraction(1, 4), Fraction(3, 8))
    """
    sides = _checked_sides(sides)
    sizes_weights: dict = defaultdict(int)
    gains_weights: dict = defaultdict(int)
    tie_weight = None
    for candidate in range(len(sides)):
        found_sizes, found_gains = _CandidatePass(sides, candidate, four_ties, instant_first_side,
                                                  concessions).run()
        this_tie = found_sizes.pop(_TIED, 0)
        if concessions:
            check_invariant(found_gains.pop(_TIED, 0) == this_tie,
                            "the concession pass must count the same ties")
        check_invariant(tie_weight is None or tie_weight == this_tie, "every pass must agree on ties")
        tie_weight = this_tie
        _add_candidate_outcomes(found_sizes, sizes_weights)
        _add_candidate_outcomes(found_gains, gains_weights)
    if tie_weight:
        sizes_weights[(TIE, ())] += tie_weight
        gains_weights[(TIE, (0,) * len(sides))] += tie_weight
    total = prod(s for side in sides for pool in side for s in pool)
    result = (Distribution(sizes_weights), Distribution(gains_weights) if concessions else None)
    check_invariant(all(d.denominator == total for d in result if d),
                    "the outcomes must cover every roll exactly once")
    return result


def _checked_sides(sides) -> list:
    """The sides as tuples without empty pools, or a clear error when the contest is not solvable."""
    sides = [tuple(tuple(pool) for pool in side if pool) for side in sides]
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    empty = [i for i, side in enumerate(sides) if not side]
    if empty:
        raise InputError("sides", f"side {empty[0]} has no dice")
    dice = sum(len(pool) for side in sides for pool in side)
    if dice > MAX_CONTEST_DICE:
        raise TooLargeError("sides", f"{dice} dice in the contest is more than the limit of {MAX_CONTEST_DICE}")
    states = max(_state_bound(sides, candidate) for candidate in range(len(sides)))
    if states > MAX_STATES:
        raise TooLargeError("sides", f"this contest needs up to {states:,} dice-left states per face, "
                                      f"more than the limit of {MAX_STATES:,} (use fewer or more alike dice)")
    work = _work_estimate(sides)
    if work > MAX_WORK:
        raise TooLargeError("sides", f"this contest of {len(sides)} sides and {dice} dice would take about "
                                      f"{work:,} units of work, more than the limit of {MAX_WORK:,} (a few "
                                      "seconds): use fewer sides, fewer dice or more alike dice")
    return sides


#: most work one solve may take (`_work_estimate`): ten dice a side up to d20 (two sides)
#: is 5.2 x 10^8 (~16 s loaded), seven sides of one d6 10^8 (3 s)
MAX_WORK = 600_000_000


def _work_estimate(sides) -> int:
    """The solve's work before it starts, per candidate winner and face: its undecided
    states squared (each meets the others' options), plus the concession walk, which grows
    with every side's dice together (the cube of the product of (dice + 1) over the sides
    fits the timed solves). Calibrated: 12 sides of one d8 (the issue's, past 60 s and
    1.8 GB) is 6.6 x 10^12; 8 of them (23 s loaded) 1.1 x 10^9; four sides of 4d10, five
    of 3d8, three of six mixed dice (each past 50 s) 1.4 x 10^9 to 4 x 10^10.

    >>> _work_estimate([((8,),)] * 12) > MAX_WORK > _work_estimate([((6,),)] * 7)
    True
    """
    faces = max(size for side in sides for pool in side for size in pool)
    together = prod(sum(len(pool) for pool in side) + 1 for side in sides)
    return faces * sum(_state_bound(sides, candidate) ** 2 + together ** 3 for candidate in range(len(sides)))


def _add_candidate_outcomes(found: dict, target: dict) -> None:
    """Add one candidate pass's outcomes (its own wins: other sides' wins are under `_OTHER`)."""
    found.pop(_OTHER, None)
    for outcome, weight in found.items():
        target[outcome] += weight


# ----- the whole contest, with pushes -----------------------------------------------------


@dataclass(frozen=True)
class ContestResult:
    """Everything a contest solve returns (probabilities are exact `Fraction`s).

    ``size_outcomes`` maps ``(winner, success sizes)`` and ``concession_outcomes`` maps
    ``(winner, concessions per side)`` to probabilities (winner -1 is a tie); the other
    fields are their marginals.
    """

    sides: tuple
    rolled_sides: tuple
    rules: Rules
    target: int | None
    size_outcomes: dict
    concession_outcomes: dict
    win: tuple = field(default=())
    tie: Fraction = Fraction(0)
    successes: dict = field(default_factory=dict)
    success_sizes: dict = field(default_factory=dict)
    concessions: dict = field(default_factory=dict)

    def expected_successes(self) -> Fraction:
        """Mean number of success dice per contest (0 on a tie).

        >>> solve_contest([((6,),), ((6,),)]).expected_successes()
        Fraction(5, 6)
        """
        return sum((p * len(sizes) for (_, sizes), p in self.size_outcomes.items()), Fraction(0))

    def to_json(self) -> dict:
        """JSON-ready result; every probability is a ``"p/q"`` string.

        >>> solve_contest([((6,),), ((6,),)]).to_json()["success_sizes"]
        {'0': {'d6': '5/12'}, '1': {'d6': '5/12'}}
        """
        return {
            "sides": [side_text(side) for side in self.sides],
            "rolled_sides": [side_text(side) for side in self.rolled_sides],
            "target": f"d{self.target}" if self.target else None,
            "rules": self.rules.to_dict(),
            "win": [fraction_text(p) for p in self.win],
            "tie": fraction_text(self.tie),
            "successes": {str(w): {str(n): fraction_text(p) for n, p in table.items()}
                          for w, table in self.successes.items()},
            "success_sizes": {str(w): {sizes_text(s): fraction_text(p) for s, p in table.items()}
                              for w, table in self.success_sizes.items()},
            "concessions": {str(s): {str(n): fraction_text(p) for n, p in table.items()}
                            for s, table in self.concessions.items()},
            "expected_successes": fraction_text(self.expected_successes()),
        }


def sizes_text(sizes) -> str:
    """Success dice sizes written like ``"d12,d8"`` (the JSON key and CSV value).

    >>> sizes_text((12, 8))
    'd12,d8'
    """
    return ",".join(f"d{s}" for s in sizes)


def _with_push_dice(side, extra):
    pools = [list(pool) for pool in side]
    pools[0] = sorted(pools[0] + list(extra), reverse=True)
    return tuple(tuple(pool) for pool in pools)


def solve_contest(sides, rules: Rules | None = None, target: int | None = None,
                  *, concessions: bool = True) -> ContestResult:
    """Solve a contest exactly: P(win) per side, P(tie), success dice and concessions.

    ``sides`` is a list of sides, each dice text like ``"d8,d6"`` or pools of die sizes
    (`read_sides`); ``target`` is the dN of a condition or
    penalty contest. Pushes mix the tie mass into re-rolled contests exactly.
    ``concessions=False`` skips the concession dice (about twice as fast).

    >>> r = solve_contest([((8,),), ((6,),)])
    >>> r.win, r.tie
    ((Fraction(9, 16), Fraction(5, 16)), Fraction(1, 8))
    """
    rules = rules or Rules()
    sides = read_sides(sides)
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    if target is not None and (not isinstance(target, int) or target < 1):
        raise InputError("target", f"the target must be a die dN with N >= 1, got {target!r}")
    ties = ((TIE, ()), (TIE, (0,) * len(sides)))
    tables, tied, rolled_first = _mix_pushes(apply_target(sides, target), rules, concessions, ties)
    for table, tie in zip(tables, ties):
        if tied:
            table[tie] += tied
        check_invariant(sum(table.values()) == 1, "a contest's outcomes must sum to exactly 1")
    size_outcomes = dict(sorted(tables[0].items()))
    concession_outcomes = dict(sorted(tables[1].items())) if concessions else {}
    return _summarise(tuple(sides), rolled_first, rules, target, size_outcomes, concession_outcomes)


def _mix_pushes(base, rules: Rules, concessions: bool, ties):
    """Each roll's outcomes but ties, weighted by P(every earlier roll tied).

    Returns the outcome tables (sizes, and concessions when asked), P(the last roll tied
    too) and the sides of the first roll as rolled.
    """
    tables = (defaultdict(Fraction), defaultdict(Fraction)) if concessions else (defaultdict(Fraction),)
    carry = Fraction(1)  # P(every roll so far tied)
    rolled_first = None
    previous = None
    for current, substituted in _rolled_contests(base, rules):
        if rolled_first is None:
            rolled_first = tuple(current)
        if previous is None or previous[0] != current:
            previous = (current, roll_outcomes(current, four_ties=rules.four_ties,
                                               instant_first_side=rules.physical and substituted,
                                               concessions=concessions))
        distributions = previous[1]
        for table, distribution, tie in zip(tables, distributions, ties):
            for outcome, p in distribution.probabilities().items():
                if outcome != tie:
                    table[outcome] += carry * p
        carry *= distributions[0].probability(ties[0])
        if not carry:
            break
    return tables, carry, rolled_first


def _rolled_contests(base, rules: Rules):
    """The sides as rolled at each push level (push dice added, physical dice substituted),
    with whether the first side holds a substituted die."""
    levels = rules.max_pushes if rules.push else 0
    for level in range(levels + 1):
        current = [_with_push_dice(side, rules.push_dice * level) for side in base]
        substituted = False
        if rules.physical:
            current[0], substituted = apply_physical(current[0])
        yield current, substituted


def _summarise(sides, rolled, rules, target, size_outcomes, concession_outcomes) -> ContestResult:
    count = len(sides)
    win = [Fraction(0)] * count
    successes: dict = {s: defaultdict(Fraction) for s in range(count)}
    success_sizes: dict = {s: defaultdict(Fraction) for s in range(count)}
    concessions: dict = {s: defaultdict(Fraction) for s in range(count)}
    tie = Fraction(0)
    for (winner, sizes), p in size_outcomes.items():
        if winner == TIE:
            tie += p
            continue
        win[winner] += p
        successes[winner][len(sizes)] += p
        success_sizes[winner][sizes] += p
    for (_, gains), p in concession_outcomes.items():
        for s, gain in enumerate(gains):
            concessions[s][gain] += p
    return ContestResult(
        sides=sides, rolled_sides=rolled, rules=rules, target=target,
        size_outcomes=size_outcomes, concession_outcomes=concession_outcomes,
        win=tuple(win), tie=tie,
        successes={s: dict(sorted(t.items())) for s, t in successes.items() if t},
        success_sizes={s: dict(sorted(t.items(), key=lambda item: (len(item[0]), item[0]), reverse=True))
                       for s, t in success_sizes.items() if t},
        concessions={s: dict(sorted(t.items())) for s, t in concessions.items()})


def expected_distribution(sides, rules: Rules | None = None, target: int | None = None) -> dict:
    """P(each value of the simulator's ``winner`` column): ``"0"``, ``"1"``, ... and ``"tie"``.

    >>> expected_distribution([((6,),), ((6,),)])
    {'0': Fraction(5, 12), '1': Fraction(5, 12), 'tie': Fraction(1, 6)}
    """
    return _outcome_law(solve_contest(sides, rules, target))


def _outcome_law(result) -> dict:
    table = {str(s): p for s, p in enumerate(result.win)}
    table["tie"] = result.tie
    return table


def column_distributions(sides, rules: Rules | None = None, target: int | None = None) -> dict:
    """The exact law of the simulator's other columns: ``successes``, ``success_sizes``
    and ``concessions_<i>`` (column -> `exactdice.validation.ColumnDistribution`).

    >>> columns = column_distributions([((6,),), ((6,),)])
    >>> columns["successes"].probabilities
    {'0': Fraction(1, 6), '1': Fraction(5, 6)}
    """
    return _column_laws(solve_contest(sides, rules, target))


def exact_laws(sides, rules: Rules | None = None, target: int | None = None) -> tuple[dict, dict]:
    """(`expected_distribution`, `column_distributions`) from one solve of the contest.

    >>> outcome, columns = exact_laws([((6,),), ((6,),)])
    >>> outcome["tie"], columns["successes"].probabilities["0"]
    (Fraction(1, 6), Fraction(1, 6))
    """
    result = solve_contest(sides, rules, target)
    return _outcome_law(result), _column_laws(result)


def _column_laws(result) -> dict:
    from exactdice.validation import ColumnDistribution

    successes, sizes = {}, {}
    for (_, rolled), p in sorted(result.size_outcomes.items()):
        successes[str(len(rolled))] = successes.get(str(len(rolled)), Fraction(0)) + p
        sizes[sizes_text(rolled)] = sizes.get(sizes_text(rolled), Fraction(0)) + p
    columns = {"successes": ColumnDistribution(dict(sorted(successes.items(), key=lambda kv: int(kv[0])))),
               "success_sizes": ColumnDistribution(sizes)}
    for side in range(len(result.rolled_sides)):
        gains = {}
        for (_, counts), p in result.concession_outcomes.items():
            gains[str(counts[side])] = gains.get(str(counts[side]), Fraction(0)) + p
        columns[f"concessions_{side}"] = ColumnDistribution(dict(sorted(gains.items(), key=lambda kv: int(kv[0]))))
    return columns
