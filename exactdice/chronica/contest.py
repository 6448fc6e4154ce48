"""The exact Chronica contest: a dynamic program over face values, top down.

Walking the faces from the highest down, the dice not yet placed are uniform below the
current face, so "k of the m dice of a slot show v" weighs C(m, k) (the integer-weight
scheme of `exactdice.core.evaluate_sorted`, over the fixed total prod N). Nothing
ever enumerates rolls. Before a winner exists, every higher die was discarded in ties,
so the state is only "how many discard rounds" plus the dice not yet placed; at the face
where one side outlasts the others it becomes the winner, and from there the state is
the success dice found so far, then the pairwise concession counts.

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
from fractions import Fraction
from itertools import product
from math import comb, prod

from exactdice.chronica.ruleset import MAX_CONTEST_DICE, PHYSICAL_DICE, Rules, side_text
from exactdice.core.distribution import Distribution
from exactdice.core.exact import fraction_text
from exactdice.errors import InputError, TooLargeError, check_invariant

__all__ = ["ContestResult", "solve_contest", "roll_outcomes", "expected_distribution", "column_distributions",
           "apply_target", "apply_physical", "physical_size", "sizes_text", "TIE", "OUTCOME_COLUMN", "MAX_STATES"]

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


def _binomial_options(m: int, face: int):
    if face == 1:
        return ((m, 1),)
    return tuple((k, comb(m, k)) for k in range(m + 1))


class _CandidatePass:
    """The DP for one candidate winner ``c``: weights of its outcomes, of ties and of the rest.

    States: ``("U", rounds)`` before a winner (rounds of discards so far, capped at what
    the rules need); ``("A",)`` once ``c`` won, until a loser's die shows (the success
    dice); ``("B", pairs, gains)`` for the concessions of each (winner, loser) pair.
    The success dice's sizes are settled in closed form when ``c`` wins (see
    `_success_sizes`), so phases A and B only count dice.
    """

    def __init__(self, sides, candidate, four_ties, instant_first_side, concessions=True):
        self.sides = sides
        self.concessions = concessions
        self.count = len(sides)
        self.c = candidate
        self.four_ties = four_ties
        self.instant = instant_first_side
        self.round_cap = 4 if four_ties else (1 if instant_first_side else 0)
        all_sizes = [s for side in sides for pool in side for s in pool]
        self.top = max(all_sizes)
        self.inactive_factor = {v: prod(s for s in all_sizes if s < v) for v in range(1, self.top + 1)}
        self.total = prod(all_sizes)
        self.losers = [s for s in range(self.count) if s != candidate]
        self.loser_dice = sorted(s for j in self.losers for pool in sides[j] for s in pool)
        win_dice = [s for pool in sides[candidate] for s in pool]
        self.win_sizes = sorted(set(win_dice), reverse=True)
        self.win_dice_count = {size: win_dice.count(size) for size in self.win_sizes}
        # success counts per size are packed in one int (mixed radix) so adding is one "+"
        self.size_unit = {}
        unit = 1
        for size in self.win_sizes:
            self.size_unit[size] = unit
            unit *= self.win_dice_count[size] + 1
        # undecided layout: candidate slots per (pool, size), other sides one slot per pool
        self.side_slots: list[list[int]] = []
        self.slot_pool: list[int] = []
        self.slot_size: list[int | None] = []
        schedules: list[dict] = []
        for s, side in enumerate(sides):
            indices = []
            for p, pool in enumerate(side):
                sizes = sorted(set(pool), reverse=True) if s == candidate else [None]
                for size in sizes:
                    indices.append(len(schedules))
                    schedules.append({size: pool.count(size)} if size else _schedule(pool))
                    self.slot_pool.append(p)
                    self.slot_size.append(size)
            self.side_slots.append(indices)
        self.sched0 = schedules
        own = self.side_slots[candidate]
        self.win_pool_slots = [
            [(position, self.size_unit[self.slot_size[slot]])
             for position, slot in sorted(enumerate(own), key=lambda item: self.slot_size[item[1]])
             if self.slot_pool[slot] == p]
            for p in range(len(sides[candidate]))]
        size_of_slot = [self.win_sizes.index(self.slot_size[slot]) for slot in own]
        self.win_size_of_slot = None if size_of_slot == list(range(len(self.win_sizes))) else size_of_slot
        # phases A and B: the winner in one slot, then one slot per loser side
        self.sched_ab = [_schedule(win_dice)] + [
            _schedule([s for pool in sides[j] for s in pool]) for j in self.losers]
        self.final_sizes: dict = defaultdict(int)
        self.final_gains: dict = defaultdict(int)
        self.pending: dict = defaultdict(int)
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

    def _sizes(self, code):
        sizes = []
        for size in self.win_sizes:
            sizes += [size] * ((code // self.size_unit[size]) % (self.win_dice_count[size] + 1))
        return (self.c, tuple(sizes))

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
        slots = self.side_slots[side]
        by_life: dict = defaultdict(list)
        for choice in product(*(_binomial_options(m, face) for m in rem_side)):
            ks = tuple(k for k, _ in choice)
            pool_counts: dict = defaultdict(int)
            for slot, k in zip(slots, ks):
                pool_counts[self.slot_pool[slot]] += k
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
        for size, active in zip(self.win_sizes, win_active):
            if size >= face:
                win_groups.append((self.size_unit[size], active, below))
            else:
                win_groups.append((self.size_unit[size], self.win_dice_count[size], size))
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
        layer = {(("U", 0), tuple(0 for _ in self.sched0)): 1}
        for face in range(self.top, 0, -1):
            next_layer: dict = defaultdict(int)
            for (state, rem), weight in layer.items():
                kind = state[0]
                if kind == "U":
                    self._undecided(state[1], rem, face, weight, next_layer)
                elif kind == "A":
                    self._phase_a(rem, face, weight, next_layer)
                else:
                    self._phase_b(state, rem, face, weight, next_layer)
            for key, weight in self.pending.items():
                self._apply_pairs(*key, face, weight, next_layer)
            self.pending.clear()
            layer = next_layer
        for (state, rem), weight in layer.items():
            check_invariant(not any(rem), "every die must be placed by face 1")
            if state[0] == "U":
                self.final_sizes[_TIED] += weight
                self.final_gains[_TIED] += weight
            elif state[0] == "A":
                self.final_gains[self._gains((0,) * len(self.losers), 0)] += weight
            else:
                _, pairs, gains = state
                self.final_gains[self._gains(*_close_pairs(pairs, gains))] += weight
        by_code: dict = defaultdict(int)
        for (face, win_active, loser_total, kept), weight in self.pending_sizes.items():
            for code, x in self._success_sizes(face, win_active, loser_total).items():
                by_code[kept + code] += weight * x
        for code, weight in by_code.items():
            self.final_sizes[self._sizes(code)] += weight
        for table in (self.final_sizes, self.final_gains) if self.concessions else (self.final_sizes,):
            check_invariant(sum(table.values()) == self.total, "weights must sum to prod N")
        return dict(self.final_sizes), dict(self.final_gains)

    def _undecided(self, rounds, rem, face, weight, out):
        rem = self._activate(rem, self.sched0, face)
        per_side = [self._side_options(s, tuple(rem[i] for i in slots), face)
                    for s, slots in enumerate(self.side_slots)]
        for lives in product(*(tuple(options) for options in per_side)):
            positive = [s for s, life in enumerate(lives) if life]
            ordered = sorted(lives, reverse=True)
            lists = [per_side[s][life] for s, life in enumerate(lives)]
            if self.instant and rounds == 0 and lives[0] and len(positive) >= 2:
                if self.c != 0:
                    self._settle_all(_OTHER, weight, lists, face)
                else:
                    self._instant_win(lists, face, weight)
                continue
            if len(positive) != 1 and ordered[0] == ordered[1]:  # nobody, or a tie at the top
                new_rounds = rounds + ordered[0]
                if self.four_ties and new_rounds >= 4:
                    self._settle_all(_TIED, weight, lists, face)
                    continue
                state = ("U", min(new_rounds, self.round_cap))
                for choice in product(*lists):
                    w = weight * prod(option[1] for option in choice)
                    out[(state, sum((option[2] for option in choice), ()))] += w
                continue
            discards = ordered[1]
            winner = lives.index(ordered[0])
            if self.four_ties and rounds + discards >= 4:
                self._settle_all(_TIED, weight, lists, face)
            elif winner != self.c:
                self._settle_all(_OTHER, weight, lists, face)
            else:
                self._decide(lists, discards, face, weight, out)

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

    def _decide(self, lists, discards, face, weight, out):
        """``c`` outlasted the others at ``face`` after ``discards`` rounds."""
        loser_choices: dict = defaultdict(int)  # losers' dice left, per loser -> weight
        for choice in product(*self._loser_totals(lists)):
            loser_choices[tuple(key[1] for key, _ in choice)] += prod(w for _, w in choice)
        by_total: dict = defaultdict(int)  # all losers' dice left -> weight, for the sizes
        for after, lw in loser_choices.items():
            by_total[sum(after)] += lw
        winner_groups, winner_left = self._winner_split(lists[self.c], discards)
        for (kept, win_active), w in winner_groups.items():
            for loser_total, lw in by_total.items():
                self.pending_sizes[(face, win_active, loser_total, kept)] += weight * w * lw
        if not self.concessions:  # the sizes above are all that is asked: stop here
            return
        for left, w in winner_left.items():
            for loser_after, lw in loser_choices.items():
                out[(("A",), (left,) + loser_after)] += weight * w * lw

    def _winner_split(self, options, discards):
        """The winner's options grouped by (kept successes, active dice per size) and by dice left."""
        key = (id(options), discards)  # options lists live in the side cache: ids are stable
        cached = self._winner_cache.get(key)
        if cached is not None:
            return cached
        winner_groups: dict = defaultdict(int)
        winner_left: dict = defaultdict(int)
        size_of_slot = self.win_size_of_slot
        n_sizes = len(self.win_sizes)
        for ks, w, after in options:
            kept = 0
            for positions in self.win_pool_slots:  # each pool's slots, smallest size first
                skip = discards  # the smallest dice showing the tied value are discarded
                for position, unit in positions:
                    k = ks[position]
                    if k > skip:
                        kept += (k - skip) * unit
                        skip = 0
                    else:
                        skip -= k
            if size_of_slot is None:  # one pool: its slots are the sizes, in order
                win_active = after
            else:
                active = [0] * n_sizes
                for position, m in enumerate(after):
                    active[size_of_slot[position]] += m
                win_active = tuple(active)
            winner_groups[(kept, win_active)] += w
            winner_left[sum(after)] += w
        self._winner_cache[key] = (winner_groups, winner_left)
        return winner_groups, winner_left

    def _instant_win(self, lists, face, weight):
        """Physical dice: the first side tied the top at the first comparison and wins."""
        slots = self.side_slots[0]
        losers = self._loser_totals(lists)
        start = ((0, 0),) * len(self.losers)
        no_gains = (0,) * (len(self.losers) + 1)
        for ks, w, after in lists[0]:
            best = max(self.slot_size[slot] for slot, k in zip(slots, ks) if k)
            for choice in product(*losers):
                shown = tuple(key[0] for key, _ in choice)
                rem = (sum(after),) + tuple(key[1] for key, _ in choice)
                branch = weight * w * prod(lw for _, lw in choice)
                self.final_sizes[(0, (best,))] += branch * self._future(sum(rem), face)
                if not self.concessions:
                    continue
                self._to_phase_b(start, no_gains, sum(ks) - 1, shown, rem, branch)

    def _phase_a(self, rem, face, weight, out):
        """``c`` won; its dice are success dice until a loser's die shows."""
        rem = self._activate(rem, self.sched_ab, face)
        start = ((0, 0),) * len(self.losers)
        no_gains = (0,) * (len(self.losers) + 1)
        for choice in product(*(_binomial_options(m, face) for m in rem)):
            ks = tuple(k for k, _ in choice)
            w = weight * prod(x for _, x in choice)
            after = tuple(m - k for m, k in zip(rem, ks))
            if any(ks[1:]):
                self._to_phase_b(start, no_gains, ks[0], ks[1:], after, w)
            else:
                out[(("A",), after)] += w

    def _phase_b(self, state, rem, face, weight, out):
        _, pairs, gains = state
        rem = self._activate(rem, self.sched_ab, face)
        options = [_binomial_options(m, face) for m in rem]
        dead_factor = 1
        for index, (status, _) in enumerate(pairs):
            if status == 3:  # this loser no longer matters: its dice sum out here
                dead_factor *= face ** rem[index + 1]
                options[index + 1] = ((0, 1),)
                rem = rem[:index + 1] + (0,) + rem[index + 2:]
        for choice in product(*options):
            ks = tuple(k for k, _ in choice)
            w = weight * dead_factor * prod(x for _, x in choice)
            after = tuple(m - k for m, k in zip(rem, ks))
            self._to_phase_b(pairs, gains, ks[0], ks[1:], after, w)

    def _to_phase_b(self, pairs, gains, winner_shown, losers_shown, rem, weight):
        """Queue a phase-B step; equal steps from many states are applied once per face."""
        self.pending[(pairs, gains, winner_shown, losers_shown, rem)] += weight

    def _apply_pairs(self, pairs, gains, winner_shown, losers_shown, rem, face, weight, out):
        """Apply one face's shown dice to every (winner, loser) pair and store the state.

        Pair status: 0 nobody has shown a die yet, 1 the winner is counting its dice above
        the loser's highest, 2 the loser is counting, 3 settled.
        """
        new_pairs = []
        gains = list(gains)  # gains[0] is the winner's, gains[1 + j] loser j's
        rem = list(rem)
        for j, ((status, count), shown) in enumerate(zip(pairs, losers_shown)):
            if status == 0:
                if winner_shown and shown:
                    status = 3
                elif winner_shown:
                    status, count = 1, winner_shown
                elif shown:
                    status, count = 2, shown
            elif status == 1:
                if shown:
                    gains[0] += count
                    status = 3
                else:
                    count += winner_shown
            elif status == 2:
                if winner_shown:
                    gains[1 + j] += count
                    status = 3
                else:
                    count += shown
            if status == 3:
                count = 0
                if rem[1 + j]:
                    weight *= (face - 1) ** rem[1 + j]
                    rem[1 + j] = 0
            new_pairs.append((status, count))
        if all(status == 3 for status, _ in new_pairs):
            self.final_gains[self._gains(tuple(gains[1:]), gains[0])] += weight * self._future(sum(rem), face)
            return
        out[(("B", tuple(new_pairs), tuple(gains)), tuple(rem))] += weight


def _close_pairs(pairs, gains):
    """Gains once every die is placed: counting pairs keep what they counted."""
    gains = list(gains)
    for j, (status, count) in enumerate(pairs):
        if status == 1:
            gains[0] += count
        elif status == 2:
            gains[1 + j] += count
    return tuple(gains[1:]), gains[0]


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
        for found, target in ((found_sizes, sizes_weights), (found_gains, gains_weights)):
            found.pop(_OTHER, None)
            for outcome, weight in found.items():
                target[outcome] += weight
    if tie_weight:
        sizes_weights[(TIE, ())] += tie_weight
        gains_weights[(TIE, (0,) * len(sides))] += tie_weight
    total = prod(s for side in sides for pool in side for s in pool)
    result = (Distribution(sizes_weights), Distribution(gains_weights) if concessions else None)
    check_invariant(all(d.denominator == total for d in result if d),
                    "the outcomes must cover every roll exactly once")
    return result


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

    ``sides`` is a list of sides (see `parse_side`); ``target`` is the dN of a condition or
    penalty contest. Pushes mix the tie mass into re-rolled contests exactly.
    ``concessions=False`` skips the concession dice (about twice as fast).

    >>> r = solve_contest([((8,),), ((6,),)])
    >>> r.win, r.tie
    ((Fraction(9, 16), Fraction(5, 16)), Fraction(1, 8))
    """
    rules = rules or Rules()
    sides = [tuple(tuple(pool) for pool in side) for side in sides]
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    if target is not None and (not isinstance(target, int) or target < 1):
        raise InputError("target", f"the target must be a die dN with N >= 1, got {target!r}")
    base = apply_target(sides, target)
    levels = rules.max_pushes if rules.push else 0
    mixed = (defaultdict(Fraction), defaultdict(Fraction))
    ties = ((TIE, ()), (TIE, (0,) * len(sides)))
    carry = Fraction(1)
    rolled_first = None
    previous = None
    for level in range(levels + 1):
        extra = rules.push_dice * level
        current = [_with_push_dice(side, extra) for side in base]
        substituted = False
        if rules.physical:
            current[0], substituted = apply_physical(current[0])
        if rolled_first is None:
            rolled_first = tuple(current)
        if previous is not None and previous[0] == current:
            distributions = previous[1]
        else:
            distributions = roll_outcomes(current, four_ties=rules.four_ties,
                                          instant_first_side=rules.physical and substituted,
                                          concessions=concessions)
        previous = (current, distributions)
        p_tie = distributions[0].probability(ties[0])
        for table, distribution, tie in zip(mixed, distributions, ties):
            if distribution is None:
                continue
            for outcome, p in distribution.probabilities().items():
                if outcome != tie:
                    table[outcome] += carry * p
        carry *= p_tie
        if not p_tie:
            break
    if not concessions:
        mixed = (mixed[0], {})
    if carry:
        for table, tie in zip(mixed, ties):
            if concessions or table is mixed[0]:
                table[tie] += carry
    for table in mixed if concessions else mixed[:1]:
        check_invariant(sum(table.values()) == 1, "a contest's outcomes must sum to exactly 1")
    return _summarise(tuple(sides), rolled_first, rules, target, *(dict(sorted(t.items())) for t in mixed))


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
    result = solve_contest(sides, rules, target)
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
    from exactdice.validation import ColumnDistribution

    result = solve_contest(sides, rules, target)
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
