"""Karbon's exact model: the round of spec section 4 as a state graph for `exactdice.markov`.

A graph node is a *situation*: a `Position` (the start of a round), a decision point
inside a round (``("risk", position, winner)``, ``("break", position, queue)``, ...),
or an end (``("end", "win")``). Expanding a situation walks the round forward through
its chance events (the roll of both hands, the risk dice, the peril dice) and through
every decision whose side follows a fixed or random policy, until each path reaches
the next round, the end, or a decision of an ``optimal`` / ``kind`` side, which
becomes a `Decision` node. So fixed policies give a compact chain of round starts,
and optimal play only adds nodes where a real choice is made.

The roll of a pair of hands is computed once per pair from exact per-die-type
(hits, turncoats) distributions (`exactdice.karbon.dice.hand_roll`) and cached. A round
start's edges are summed in integers from the rest of the round after each roll outcome,
walked once and kept by edge id (`KarbonModel._round_start_chance`); `explore` takes them
as a `exactdice.markov.model.KeyedChance` (``expand_keyed``).
"""

from __future__ import annotations

import math
from functools import lru_cache, partial
from operator import add, sub

from exactdice.errors import InternalError
from exactdice.karbon.dice import DiceSizes, compositions, hand_roll
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.position import STACK_SIZE, Position, placement_folded
from exactdice.karbon.ruleset import Rules
from exactdice.markov import Chance, Decision, Terminal
from exactdice.markov.model import KeyedChance

__all__ = ["Position", "KarbonModel", "REWARD_NAMES", "OUTCOMES", "compositions"]

OUTCOMES = ("win", "loss", "tie")
REWARD_NAMES = ("rounds", "breaks", "glitches", "injuries", "conditions")
# Rewards along a path are packed into one int (16 bits a counter) so adding them is cheap.
_REWARD_BITS = 16
_NO_REWARD = 0
_ROUND, _BREAK, _GLITCH, _INJURY, _CONDITION = (1 << (_REWARD_BITS * i) for i in range(5))


@lru_cache(maxsize=None)
def _unpack_rewards(packed: int):
    """Packed reward counters -> the tuple the solver expects (None when all zero)."""
    if not packed:
        return None
    mask = (1 << _REWARD_BITS) - 1
    return tuple((packed >> (_REWARD_BITS * i)) & mask for i in range(len(REWARD_NAMES)))


# every decision point of a round: the method listing its options (name, next situation,
# rewards) and the method naming what a fixed policy picks there (None: a fair coin)
_DECISION_POINTS = {
    "risk": ("_risk_options", "_fixed_risk"),
    "take": ("_take_options", "_fixed_take"),
    "break": ("_break_options", "_fixed_break"),
    "swap": ("_swap_options", "_fixed_swap"),
    "give": ("_give_options", "_fixed_give"),
    "glitch": ("_glitch_options", "_fixed_glitch"),
    "hurt": ("_hurt_options", "_fixed_hurt"),
    "plans": ("_plans_options", "_fixed_plans"),
    "planstake": ("_planstake_options", "_fixed_planstake"),
    "sideswipe": ("_sideswipe_options", "_fixed_sideswipe"),
    "swipedice": ("_swipedice_options", "_fixed_swipedice"),
}

# continuations remembered at most (`_continuation`): ~400 bytes each
_CONTINUATIONS_KEPT = 50_000
# walks of actions' chance continuations kept for the node's own expansion (`_action`)
_ACTION_WALKS_KEPT = 50_000
# compiled rests of the round remembered at most (`_rest_of_round`): ~90 bytes each with
# `split_rolls`; on A3 v C3, W3 P1, risk=always 91% of look-ups hit unbounded, 79% with
# 300,000 kept (1.2x the CPU), 64% with 100,000 (1.4x)
_REST_ENTRIES_KEPT = 2_000_000
# chips in a packed rest-of-round key (`_prepared_roll`): far more than any hand holds
_CHIPS_BITS = 40
RISK_DICE = 3  # d8 rolled when the player risks
EXTRA_DIE_SIDES = 8  # risk and peril dice are d8


# a Position from a tuple of its fields, without `Position._make`'s Python frame (hot)
_make_position = partial(tuple.__new__, Position)
# field indexes for the hot paths that rebuild a Position (`_replaced`)
_PLAYER_CHIPS, _NARRATOR_CHIPS, _PLAYER_STACK, _NARRATOR_STACK, _WINS, _LOSSES = 4, 5, 6, 7, 8, 9


def _replaced(position: Position, index: int, value: int) -> Position:
    """``position`` with field ``index`` set to ``value``: `Position._replace` for the
    walk's hot paths, several times cheaper.

    >>> _replaced(Position((1,), (0,), (0,), (0,), 0, 0, 0, 0, 0, 0, 1, 3), _WINS, 1).wins
    1
    """
    return _make_position(position[:index] + (value,) + position[index + 1 :])


def _add(a: tuple, b: tuple) -> tuple:
    return tuple(map(add, a, b))


def _sub(a: tuple, b: tuple) -> tuple:
    return tuple(map(sub, a, b))


@lru_cache(maxsize=65536)
def _named_compositions(sizes: DiceSizes, available: tuple, count: int) -> tuple:
    """``(name, taken)`` for every composition (`compositions`), remembered: the same pool
    and count recur in many situations."""
    return tuple((sizes.text(taken), taken) for taken in compositions(available, count))


@lru_cache(maxsize=4096)
def _hand_summary(hand: tuple, sizes: tuple) -> tuple:
    """``(hand_roll, _hits_and_count, _hits_with_fewer_turncoats)`` of a hand, remembered:
    a hand meets many others in the roll tables (`KarbonModel._roll_table`)."""
    roll = hand_roll(hand, sizes)
    groups = _hits_and_count(roll)
    return roll, groups, _hits_with_fewer_turncoats(groups)


def _hits_and_count(roll) -> dict:
    """A hand roll's outcomes ``(hits, *turncoats per type)`` summed by (hits, turncoats)."""
    groups: dict = {}
    for outcome, weight in roll.items():
        key = (outcome[0], sum(outcome[1:]))
        groups[key] = groups.get(key, 0) + weight
    return groups


def _hits_with_fewer_turncoats(groups: dict) -> list:
    """``[{hits: weight}, ...]``: at index ``c``, the outcomes with fewer than ``c``
    turncoats; the last entry holds them all (for any larger count)."""
    counts = sorted({count for _, count in groups})
    result, running = [], {}
    for count in range(counts[-1] + 2 if counts else 1):
        result.append(dict(running))
        for (hits, group_count), weight in groups.items():
            if group_count == count:
                running[hits] = running.get(hits, 0) + weight
    return result


def _contest(hits_p: int, hits_n: int) -> tuple:
    """(winner, chips the player gains, chips the narrator gains) of a roll's hits."""
    if hits_p > hits_n:
        return "p", hits_p, 0
    if hits_n > hits_p:
        return "n", 0, hits_n
    return "t", hits_p, hits_n


def _take_by_preference(available: tuple, count: int, order: tuple) -> tuple:
    """Take ``count`` dice from ``available`` following a preference order of indices."""
    taken = [0] * len(available)
    left = count
    for index in order:
        if left == 0:
            break
        take = min(available[index], left)
        taken[index] = take
        left -= take
    return tuple(taken)


@lru_cache(maxsize=None)
def _binomial_hits(dice: int, sides: int = EXTRA_DIE_SIDES) -> tuple:
    """((hits, weight), ...) for ``dice`` extra dN with hits on 1-3, over ``sides**dice``."""
    hit = min(3, sides)
    return tuple((k, math.comb(dice, k) * hit**k * (sides - hit) ** (dice - k)) for k in range(dice + 1))


class KarbonModel:
    """One Karbon contest as a `exactdice.markov.Model`.

    Use `contest_odds` rather than this class: it draws the hands, builds the model and
    solves it.

    Parameters
    ----------
    sizes : DiceSizes
        The die sizes of the contest (positions hold counts per size).
    start : Position
        The starting situation.
    ruleset : Rules
        The reading of the rules.
    player, narrator : PlayerPolicy, NarratorPolicy
        How each side plays.
    cap_chips : bool, default True
        Cut chips in hand to what can still make a difference (an exact merge).
    fold_chips : bool, default True
        Hold a placing side's stack in hand until its Test (an exact merge).
    split_rolls : bool, optional
        Cut the round after the roll (default: where the fixed player risks).
    """

    outcomes = OUTCOMES
    reward_names = REWARD_NAMES

    def __init__(
        self,
        sizes: DiceSizes,
        start,
        ruleset: Rules,
        player: PlayerPolicy,
        narrator: NarratorPolicy,
        cap_chips: bool = True,
        fold_chips: bool = True,
        split_rolls: bool | None = None,
    ):
        # both exact state merges (tests compare against the graph without them)
        self.cap_chips = cap_chips
        self.fold_chips = fold_chips
        # the round cut after the roll (see `_roll`); by default where the player risks
        self.split_rolls = player.kind == "fixed" and player.risk == "always" if split_rolls is None else split_rolls
        self.peril_to_stack = ruleset.peril_chips == "stack"
        # a pre-peril situation recurs only after a risk (different risk rolls and dice
        # taken meet there); otherwise each follows one post-roll situation, whose rest
        # of the round is remembered already, so remembering its own would only cost memory
        self.peril_recurs = not (player.kind == "fixed" and player.risk == "never")
        self.sizes = sizes
        self.start = self.round_start(start)
        self.ruleset = ruleset
        self.player = player
        self.narrator = narrator
        self.player_decides = player.kind == "optimal"
        # where a fixed player's risk decision leads (`_fixed_risk`, `_risk_options`)
        self._risked_phase = "riskroll" if player.risk == "always" else "peril"
        self.narrator_decides = narrator.kind in ("optimal", "kind")
        self.narrator_side = "max" if narrator.kind == "kind" else "min"
        self.risk_take_order = sizes.order_from_preference(player.risk_take)
        self.plans_take_order = sizes.order_from_preference(narrator.plans_take)
        self.give_order = sizes.order_from_preference(narrator.give)
        self.best_first = sizes.best_first
        self.rank = {index: place for place, index in enumerate(self.best_first)}
        self._roll_cache: dict = {}
        self._continuation_cache: dict = {}
        self._prepared_cache: dict = {}
        self._hands_tokens: dict = {}
        # the caches' bounds (entries; tests shrink them to check they change no result)
        self.rest_entries_kept = _REST_ENTRIES_KEPT
        self.continuations_kept = _CONTINUATIONS_KEPT
        self.action_walks_kept = _ACTION_WALKS_KEPT
        self._action_walks: dict = {}
        self._rest_cache: dict = {}
        self._rest_entries = 0  # entries added to `_rest_cache` since it last started afresh
        self._rest_by_situation: dict = {}
        self._edge_ids: dict = {}
        self._edge_keys: list = []
        self._edge_sums: list = []
        self._swap_cache: dict = {}
        self._fixed_take_cache: dict = {}  # by (pool, dice taken): at most pools x 4 entries
        # the option builders by decision point, as plain functions: bound methods here
        # would make a reference cycle that keeps a solved model's caches alive until
        # the cycle collector runs
        self._phases = {point: getattr(KarbonModel, options) for point, (options, _) in _DECISION_POINTS.items()}
        self._fixed = {point: getattr(KarbonModel, fixed) for point, (_, fixed) in _DECISION_POINTS.items()}

    # ----- the Model interface ----------------------------------------------------------

    def initial_state(self):
        return self.start

    def expand(self, situation):
        if type(situation) is Position:
            keyed = self._round_start_chance(situation)
            return Chance(tuple((weight,) + keyed.table[key] for weight, key in keyed.branches))
        return self._expand_inside_round(situation)

    def explore_compiled(self, *, max_states: int, progress=None):
        """The graph explored by the compiled walk (`exactdice.karbon.compiled`), or None
        where the Python walk explores it (`exactdice.markov.explore` asks this first)."""
        from exactdice.karbon.compiled import explore_compiled

        return explore_compiled(self, max_states=max_states, progress=progress)

    def expand_keyed(self, situation):
        """`expand`, with a round start's edges as a `KeyedChance` (for `explore`)."""
        if type(situation) is Position:
            return self._round_start_chance(situation)
        return self._expand_inside_round(situation)

    def expand_choosing(self, situation, choose):
        """`expand_keyed`, except that at the player's decisions ("max" nodes) only the
        action ``choose(situation, names)`` names is built, as a one-branch `Chance`:
        evaluating a strategy (`exactdice.markov.bounded.StrategyModel`) then walks the
        rules through the action taken, not through every action offered."""
        if type(situation) is Position:
            return self._round_start_chance(situation)
        return self._expand_inside_round(situation, choose)

    def shard_key(self, situation):
        """What decides which exploring worker expands a situation: round starts that
        differ only in hands and chips share compiled rests of the round (`_rest_cache`),
        so they go to one worker."""
        if type(situation) is Position:
            return situation[2:4] + situation[6:]
        return situation

    def _expand_inside_round(self, situation, choose=None):
        """A situation inside a round as a node; with ``choose`` (`expand_choosing`) the
        player's decisions as the one action it names."""
        if situation[0] == "end":
            return Terminal(situation[1])
        phase = situation[0] if type(situation) is tuple else None
        if phase in self._phases:
            side, options = self._decision(situation)
            if side is not None and len(options) > 1:
                if side == "max" and choose is not None:
                    name = choose(situation, [option[0] for option in options])
                    _, target, reward = self._action(*next(option for option in options if option[0] == name))
                    return Chance(((1, target, reward),))
                return Decision(side, tuple(self._action(name, nxt, reward) for name, nxt, reward in options))
        branches = self._action_walks.pop(situation, None)
        if branches is None:
            branches = {}
            self._walk(situation, 1, 1, _NO_REWARD, branches, top=True)
        return Chance(_normalise(branches))

    def _action(self, name, situation, reward):
        """A decision's action; when what follows it is certain (no chance event, no other
        open decision before the next node) the action points straight at that node, so
        optimal play does not pay a graph node for a forced continuation.

        Otherwise the walk is kept (`_action_walks`, bounded) for the node's own
        expansion, which would walk the same chance events again (a risk roll, peril)."""
        if type(situation) is tuple and situation[0] in ("peril", "riskroll", "test"):
            branches = self._action_walks.get(situation)
            if branches is None:
                branches = {}
                self._walk(situation, 1, 1, _NO_REWARD, branches)
            if len(branches) == 1:
                (((target, total), (num, den)),) = branches.items()
                if num == den:
                    return (name, target, _unpack_rewards(reward + total))
            if len(self._action_walks) >= self.action_walks_kept:
                self._action_walks.clear()  # bounded memory, like the other caches
            self._action_walks[situation] = branches
        return (name, situation, _unpack_rewards(reward))

    def round_start(self, situation):
        """A situation as the model keeps it: a round start (a `Position`) with its chips
        cut (`_capped`), the first round's included; other situations unchanged."""
        if self.cap_chips and type(situation) is Position:
            return self._capped(situation)
        return situation

    @staticmethod
    def _capped(position: Position) -> Position:
        """The same position with chips in hand cut to what can still make a difference.

        Exact, not an approximation. X + O never decreases (a Break adds an X; a Glitch
        adds an O, and a sideswipe after it only turns one X into that O), so at most
        ``W - X - O`` more Breaks and, as O never decreases, at most ``W - O`` more
        Glitches can be resolved before the track is full. Chips in hand act only
        through completions at placement (5 chips each), a sideswipe's transfer of the
        narrator's chips to the player (possible only while ``W - O >= 2``), and
        footing-discard (which needs some). So once a hand holds chips for every
        completion that can still be resolved, more chips change no event and no
        outcome: every completion past that bound is void because the track fills
        first. (Sudden death empties both hands, so its extra place needs no margin.)
        """
        track, wins, losses = position.track, position.wins, position.losses
        breaks = track - wins - losses
        sideswipe_possible = track - losses >= 2
        player_cap = max(0, STACK_SIZE * breaks - position.player_stack)
        narrator_cap = max(
            STACK_SIZE * (track - losses) - position.narrator_stack, STACK_SIZE * breaks if sideswipe_possible else 0, 1
        )
        if position.player_chips <= player_cap and position.narrator_chips <= narrator_cap:
            return position
        return position._replace(
            player_chips=min(position.player_chips, player_cap),
            narrator_chips=min(position.narrator_chips, narrator_cap),
        )

    # ----- the walk ----------------------------------------------------------------------

    def _walk(self, situation, num, den, reward, out, top=False):
        """Follow one path from ``situation`` until a round start, the end or an open decision."""
        while True:
            if type(situation) is Position:
                _emit(out, self.round_start(situation), num, den, reward)
                return
            at_top, top = top, False
            phase = situation[0]
            if phase == "end":
                _emit(out, situation, num, den, reward)
                return
            if phase == "riskroll":  # reached from one risk situation only: nothing to share
                self._risk_roll(situation, num, den, reward, out)
                return
            if phase == "peril":
                if self.peril_recurs and not at_top:
                    self._follow(situation, num, den, reward, out)
                else:
                    self._peril(situation, num, den, reward, out)
                return
            if phase == "test":
                situation, reward = self._test_step(situation, reward)
                continue
            if not self.player_decides:  # a fixed player's risk and take, built alone
                if phase == "risk":  # `_fixed_risk`'s choice
                    situation = (self._risked_phase,) + situation[1:]
                    continue
                if phase == "take":  # `_fixed_take`'s pick
                    situation = self._fixed_take_next(situation)
                    continue
            side, options = self._decision(situation)
            if len(options) == 1:
                name, situation, delta = options[0]
                reward += delta
                continue
            if side is not None and not at_top:  # an optimal / kind side decides: its own node
                _emit(out, situation, num, den, reward)
                return
            chosen = self._fixed_choice(situation, options)
            if chosen is None:  # a coin flip (random narrator): two equally likely paths
                for name, nxt, delta in options:
                    self._walk(nxt, num, den * len(options), reward + delta, out)
                return
            name, situation, delta = chosen
            reward += delta

    def _round_start_chance(self, position: Position) -> KeyedChance:
        """A round start's edges: the roll of both hands and, unless ``split_rolls``, the
        rest of the round (`_rest_of_round`), summed over the roll's outcomes.

        The rest of the round after each roll outcome is compiled once into integer
        numerators over one denominator and integer edge ids (`_edge_id`), so summing a
        round start's edges hashes small ints, not positions, and adds integers, not
        fractions. Weights come out over their smallest common denominator (gcd 1).

        With ``split_rolls`` each roll outcome leads to its risk situation as a node of
        its own: the same chain with one more step, so every exact value is unchanged.
        A round start's edges then number the roll's outcomes instead of outcomes times
        the rest of the round (risk dice, the dice taken, peril: hundreds of edges a
        state when the player risks), and round starts that reach the same post-roll
        situation share its node and its edges.
        """
        table = self._prepared_roll(position[0], position[1])
        if max(position[4], position[5]) >> (_CHIPS_BITS - 8):
            raise InternalError(f"chips in hand past 2**{_CHIPS_BITS - 8} in {position}")
        chips = position[4] << _CHIPS_BITS | position[5]
        unchanged = position[2:4] + position[6:]  # all but the hands and the chips
        compiled = self._rest_cache.get(unchanged)
        if compiled is None:
            compiled = self._rest_cache[unchanged] = {}
        # sums by edge id in a scratch list (faster than a dict), zero outside this call
        sums, touched = self._edge_sums, []
        try:
            common = 1
            for weight, entry_key, entry in table:
                rest = compiled.get(entry_key + chips)
                if rest is None:
                    rest = compiled[entry_key + chips] = self._rest_of_round(position, entry)
                if type(rest) is int:  # one edge, to the risk situation (`_rest_of_round`)
                    if not sums[rest]:
                        touched.append(rest)
                    sums[rest] += weight * common
                    continue
                rest_den, rest_edges = rest
                if rest_den == common:
                    factor = weight
                else:
                    if common % rest_den:
                        grown = math.lcm(common, rest_den)
                        scale, common = grown // common, grown
                        for edge in touched:
                            sums[edge] *= scale
                    factor = weight * (common // rest_den)
                for rest_num, edge in rest_edges:
                    total = sums[edge]
                    if not total:
                        touched.append(edge)
                    sums[edge] = total + factor * rest_num
            totals = [sums[edge] for edge in touched]
        finally:
            for edge in touched:
                sums[edge] = 0
        divisor = math.gcd(*totals)
        return KeyedChance(tuple(zip([total // divisor for total in totals], touched)), self._edge_keys)

    def _prepared_roll(self, player_hand, narrator_hand) -> tuple:
        """The roll table (`_roll_table`) as ``(weight, entry key, table entry)``.

        The entry key packs a number for the hands after the roll and the winner with
        the chips each side gains (`_CHIPS_BITS` bits each), so adding a round start's
        packed chips gives one int naming the situation after the roll."""
        key = (player_hand, narrator_hand)
        prepared = self._prepared_cache.get(key)
        if prepared is None:
            tokens = self._hands_tokens
            entries = []
            for entry in self._roll_table(player_hand, narrator_hand)[0]:
                weight, winner, gain_p, gain_n, after_player, after_narrator = entry
                token = tokens.setdefault((winner, after_player, after_narrator), len(tokens))
                entry_key = (token << 2 * _CHIPS_BITS) | (gain_p << _CHIPS_BITS) | gain_n
                entries.append((weight, entry_key, entry))
            prepared = self._prepared_cache[key] = tuple(entries)
        return prepared

    def _rest_of_round(self, position: Position, entry):
        """``(denominator, ((numerator, edge id), ...))``: the round from the roll outcome
        ``entry`` of ``position`` on, with the round's reward counted; with ``split_rolls``
        or a deciding player just the edge id of the risk situation."""
        # called on each miss of `_rest_cache`: past its bound the cache starts afresh
        # (exploring is breadth first, so what recurs is mostly recent); replaced, not
        # cleared, so the caller's entry goes into the dropped generation harmlessly
        self._rest_entries += 1
        if self._rest_entries > self.rest_entries_kept:
            self._rest_cache, self._rest_entries = {}, 0
        _, winner, gain_p, gain_n, player_hand, narrator_hand = entry
        situation = ("risk", self.after_roll(position, winner, gain_p, gain_n, player_hand, narrator_hand), winner)
        # with the cut after the roll, or where the risk decision (two options, always) is
        # the player's own node, the rest is one edge: its id alone (a tuple per key would
        # cost memory here)
        if self.split_rolls or self.player_decides:
            return self._edge_id(situation, _ROUND)
        # keys before the stacks are folded into hand (`after_roll`) can name one situation
        rest = self._rest_by_situation.get(situation)
        if rest is None:
            branches: dict = {}
            self._walk(situation, 1, 1, _NO_REWARD, branches)
            common = math.lcm(*(den for _, den in branches.values()))
            rest = (
                common,
                tuple(
                    (num * (common // den), self._edge_id(nxt, _ROUND + reward))
                    for (nxt, reward), (num, den) in branches.items()
                ),
            )
            if len(self._rest_by_situation) >= self.rest_entries_kept:
                self._rest_by_situation.clear()
            self._rest_by_situation[situation] = rest
        return rest

    def _edge_id(self, situation, reward: int) -> int:
        """A small int naming (successor, packed reward): a round start's edges are summed by it."""
        key = (situation, reward)
        edge = self._edge_ids.get(key)
        if edge is None:
            edge = self._edge_ids[key] = len(self._edge_keys)
            self._edge_keys.append((situation, _unpack_rewards(reward)))
            self._edge_sums.append(0)
        return edge

    def after_roll(self, position: Position, winner, gain_p, gain_n, player_hand, narrator_hand) -> Position:
        """The position the risk decision sees: the roll's chips gained, the Opening's dice
        moved, and (see `placement_folded`) the stacks of the sides about to place held in
        hand."""
        after = _make_position(
            (player_hand, narrator_hand, position[2], position[3], position[4] + gain_p, position[5] + gain_n)
            + position[6:]
        )
        return placement_folded(after, winner, self.peril_to_stack) if self.fold_chips else after

    def _follow(self, situation, num, den, reward, out):
        """Emit the rest of the round from ``situation`` (`_continuation`), reached with
        probability num/den and reward ``reward``."""
        for rest_num, rest_den, nxt, rest_reward in self._continuation(situation):
            _emit(out, nxt, num * rest_num, den * rest_den, reward + rest_reward)

    def _continuation(self, situation):
        """The rest of the round from a situation inside it, walked once and remembered
        (after a risk, many rolls and takes meet at the same pre-peril situation)."""
        cached = self._continuation_cache.get(situation)
        if cached is None:
            branches: dict = {}
            if situation[0] == "peril":
                self._peril(situation, 1, 1, _NO_REWARD, branches)
            else:
                self._walk(situation, 1, 1, _NO_REWARD, branches)
            cached = tuple((num, den, nxt, reward) for (nxt, reward), (num, den) in branches.items())
            if len(self._continuation_cache) >= self.continuations_kept:
                self._continuation_cache.clear()  # bounded memory; exploring is breadth first,
                # so what recurs is mostly recent
            self._continuation_cache[situation] = cached
        return cached

    def _roll_table(self, player_hand, narrator_hand):
        key = (player_hand, narrator_hand)
        cached = self._roll_cache.get(key)
        if cached is not None:
            return cached
        sizes = self.sizes.sizes
        player_roll, player_groups, player_fewer = _hand_summary(player_hand, sizes)
        narrator_roll, narrator_groups, narrator_fewer = _hand_summary(narrator_hand, sizes)
        # The side with more turncoats offers them (an Opening), so the hands after the
        # roll follow that side's turncoats alone; the other side matters only through
        # its hits, summed over its outcomes with fewer turncoats. That makes the table
        # cost |outcomes| x |hit counts| per side, not |outcomes|^2.
        merged: dict = {}
        for offering_roll, fewer, player_offers in (
            (player_roll, narrator_fewer, True),
            (narrator_roll, player_fewer, False),
        ):
            for outcome, weight in offering_roll.items():
                hits, turn = outcome[0], outcome[1:]
                count = sum(turn)
                other_hits = fewer[min(count, len(fewer) - 1)]
                if not other_hits:
                    continue
                if player_offers:
                    hands = (_sub(player_hand, turn), _add(narrator_hand, turn))
                else:
                    hands = (_add(player_hand, turn), _sub(narrator_hand, turn))
                for hits_other, other_weight in other_hits.items():
                    entry = (_contest(hits, hits_other) if player_offers else _contest(hits_other, hits)) + hands
                    merged[entry] = merged.get(entry, 0) + weight * other_weight
        unchanged = (player_hand, narrator_hand)
        for (hits_p, count_p), p_weight in player_groups.items():  # no Opening
            for (hits_n, count_n), n_weight in narrator_groups.items():
                if count_p == count_n:
                    entry = _contest(hits_p, hits_n) + unchanged
                    merged[entry] = merged.get(entry, 0) + p_weight * n_weight
        table = tuple((w,) + k for k, w in merged.items())
        result = (table, player_roll.denominator * narrator_roll.denominator)
        self._roll_cache[key] = result
        return result

    def _risk_roll(self, situation, num, den, reward, out):
        _, position, winner = situation
        pool_size = sum(position.pool)
        for hits, weight in _binomial_hits(RISK_DICE):
            after = _make_position(position[:5] + (position[5] + RISK_DICE - hits,) + position[6:])
            take = min(hits, pool_size)
            nxt = ("take", after, winner, take) if take else ("peril", after, winner)
            self._walk(nxt, num * weight, den * EXTRA_DIE_SIDES**RISK_DICE, reward, out)

    def _peril(self, situation, num, den, reward, out):
        _, position, winner = situation
        if position.peril == 0:
            self._walk(("test", position, ("place", winner)), num, den, reward, out)
            return
        to_stack = self.peril_to_stack
        for hits, weight in _binomial_hits(position.peril):
            if to_stack:
                stack = position.narrator_stack + hits
                after = _replaced(position, _NARRATOR_STACK, stack % STACK_SIZE)
                queue = ("G",) * (stack // STACK_SIZE) + ("place", winner)
            else:
                after = _replaced(position, _NARRATOR_CHIPS, position[_NARRATOR_CHIPS] + hits)
                queue = ("place", winner)
            # walked, not remembered (`_continuation`): a Test situation seldom recurs
            # outside the pre-peril situation remembered already (5-10% less exploring)
            self._walk(("test", after, queue), num * weight, den * EXTRA_DIE_SIDES**position.peril, reward, out)

    # ----- the Test (spec 4.7) -------------------------------------------------------------

    def _test_step(self, situation, reward):
        """Resolve the next item of the Test's queue; returns (next situation, reward)."""
        _, position, queue = situation
        if not queue:
            return position, reward
        head = queue[0]
        if head == "place":
            return ("test", *self._placement(position, queue[1], queue[2:])), reward
        if head == "B":
            position, reward, phase = _replaced(position, _WINS, position[_WINS] + 1), reward + _BREAK, "break"
        else:  # "G"
            position, reward, phase = _replaced(position, _LOSSES, position[_LOSSES] + 1), reward + _GLITCH, "glitch"
        over = self._track_check(position)
        if over is not None:
            return over, reward
        return (phase, position, queue[1:]), reward

    def _placement(self, position: Position, winner: str, rest: tuple):
        one_only = self.ruleset.rewards_per_test == "1"
        breaks = glitches = 0
        if winner in ("p", "t"):
            chips, stack, breaks = _place(position.player_chips, position.player_stack, one_only)
            position = _make_position(
                position[:_PLAYER_CHIPS] + (chips, position[_NARRATOR_CHIPS], stack) + position[_PLAYER_STACK + 1 :]
            )
        if winner in ("n", "t"):
            chips, stack, glitches = _place(position.narrator_chips, position.narrator_stack, one_only)
            position = _make_position(
                position[:_NARRATOR_CHIPS] + (chips, position[_PLAYER_STACK], stack) + position[_NARRATOR_STACK + 1 :]
            )
        if self.ruleset.tie_order == "player_first":
            queue = ("B",) * breaks + ("G",) * glitches
        else:
            queue = ("G",) * glitches + ("B",) * breaks
        return position, queue + rest

    def _track_check(self, position: Position):
        """The end situation when the track is full, else None (sudden death goes on)."""
        if position.wins + position.losses < position.track:
            return None
        if position.wins > position.losses:
            return ("end", "win")
        if position.losses > position.wins:
            return ("end", "loss")
        if self.ruleset.sudden_death == "on":
            return position._replace(
                track=position.track + 1, player_chips=0, narrator_chips=0, player_stack=0, narrator_stack=0
            )
        return ("end", "tie")

    # ----- decisions ------------------------------------------------------------------------

    def _decision(self, situation):
        """(side deciding as a node or None, options) at a decision situation.

        Options are ``(name, next situation, reward)`` in the spec's tie-break order.
        """
        options, who = self._phases[situation[0]](self, situation)
        decides = self.player_decides if who == "player" else self.narrator_decides
        side = ("max" if who == "player" else self.narrator_side) if decides else None
        return side, options

    def who_decides(self, situation) -> str:
        """ "player" or "narrator": who chooses at a decision situation."""
        return self._phases[situation[0]](self, situation)[1]

    def _fixed_choice(self, situation, options):
        """The option a fixed policy picks (None: a fair coin among the options)."""
        wanted = self._fixed[situation[0]](self, situation, [name for name, _, _ in options])
        if wanted is None:
            return None
        for option in options:
            if option[0] == wanted:
                return option
        raise InternalError(f"fixed policy chose {wanted!r}, not among {[name for name, _, _ in options]}")

    # what a fixed policy picks at each decision point, by name (None: a fair coin)

    def _fixed_risk(self, situation, names):
        return "yes" if self.player.risk == "always" else "no"

    def _fixed_take(self, situation, names):
        _, position, _, count = situation
        return self._dice_name(_take_by_preference(position.pool, count, self.risk_take_order))

    def _fixed_break(self, situation, names):
        return next(o for o in self.player.break_order if o in names)

    def _fixed_swap(self, situation, names):
        return self._greedy_swap(situation[1])[0]

    def _fixed_give(self, situation, names):
        return self._dice_name(_take_by_preference(situation[1].narrator_hand, 2, self.give_order))

    def _fixed_glitch(self, situation, names):
        return next(o for o in self.player.glitch_order if o in names)

    def _fixed_hurt(self, situation, names):
        return None if self.narrator.kind == "random" else self.narrator.hurt

    def _fixed_plans(self, situation, names):
        return None if self.narrator.kind == "random" else self.narrator.plans

    def _fixed_planstake(self, situation, names):
        pool = situation[1].pool
        return self._dice_name(_take_by_preference(pool, min(2, sum(pool)), self.plans_take_order))

    def _fixed_sideswipe(self, situation, names):
        return self.player.sideswipe_take

    def _fixed_swipedice(self, situation, names):
        hand = situation[1].narrator_hand
        order = self.best_first if self.ruleset.sideswipe_picker == "player" else self.give_order
        return self._dice_name(_take_by_preference(hand, min(2, sum(hand)), order))

    def _dice_name(self, counts: tuple) -> str:
        return self.sizes.text(counts)

    def _swap_name(self, out: tuple, into: tuple) -> str:
        return f"{self.sizes.text(out)}->{self.sizes.text(into)}"

    def _risk_options(self, situation):
        _, position, winner = situation
        return [
            ("no", ("peril", position, winner), _NO_REWARD),
            ("yes", ("riskroll", position, winner), _NO_REWARD),
        ], "player"

    def _take_options(self, situation):
        _, position, winner, count = situation
        return [
            (name, _after_take(position, winner, taken), _NO_REWARD)
            for name, taken in _named_compositions(self.sizes, position.pool, count)
        ], "player"

    def _fixed_take_next(self, situation):
        """The situation after a fixed player's take (`_fixed_take`), without listing the
        other options: the risk walk's most frequent decision (a quarter of its time)."""
        _, position, winner, count = situation
        key = (position.pool, count)
        taken = self._fixed_take_cache.get(key)
        if taken is None:
            taken = self._fixed_take_cache[key] = _take_by_preference(position.pool, count, self.risk_take_order)
        return _after_take(position, winner, taken)

    def _break_options(self, situation):
        _, position, queue = situation
        options = []
        if position.peril > 0:
            options.append(("security", ("test", position._replace(peril=position.peril - 1), queue), _NO_REWARD))
        if position.narrator_chips > 0:
            options.append(("footing-discard", ("test", position._replace(narrator_chips=0), queue), _NO_REWARD))
        if sum(position.narrator_hand) > 0:
            options.append(("footing-dice", ("give", position, queue), _NO_REWARD))
        if self._advantage_applicable(position):
            options.append(("advantage", ("swap", position, queue), _NO_REWARD))
        if not options:
            options.append(("none", ("test", position, queue), _NO_REWARD))
        return options, "player"

    def _advantage_applicable(self, position: Position) -> bool:
        if self.player_decides:
            hand_types = [i for i, c in enumerate(position.player_hand) if c]
            reserve_types = [i for i, c in enumerate(position.reserve) if c]
            return any(h != r for h in hand_types for r in reserve_types)
        return bool(self._greedy_swap(position)[1])

    def _greedy_swap(self, position: Position):
        """The fixed advantage: worst hand die for best reserve die while it improves, twice at most.

        Returns (name of the swap, number of swaps made), remembered by hand and reserve."""
        key = (position.player_hand, position.reserve)
        swap = self._swap_cache.get(key)
        if swap is None:
            swap = self._swap_cache[key] = self._greedy_swap_of(*key)
        return swap

    def _greedy_swap_of(self, player_hand: tuple, player_reserve: tuple):
        hand, reserve = list(player_hand), list(player_reserve)
        out, into = [0] * len(hand), [0] * len(hand)
        swaps = 0
        for _ in range(2):
            in_hand = [i for i in range(len(hand)) if hand[i]]
            in_reserve = [i for i in range(len(reserve)) if reserve[i]]
            if not in_hand or not in_reserve:
                break
            worst = max(in_hand, key=self.rank.__getitem__)
            best = min(in_reserve, key=self.rank.__getitem__)
            if self.rank[best] >= self.rank[worst]:
                break
            hand[worst] -= 1
            reserve[worst] += 1
            hand[best] += 1
            reserve[best] -= 1
            out[worst] += 1
            into[best] += 1
            swaps += 1
        return (self._swap_name(tuple(out), tuple(into)), swaps)

    def _swap_options(self, situation):
        _, position, queue = situation
        hand, reserve = position.player_hand, position.reserve
        options = []
        for size in (1, 2):
            for out in compositions(hand, size):
                for into in compositions(reserve, size):
                    if any(o and i for o, i in zip(out, into)):
                        continue  # a type both out and in is a smaller swap (or none)
                    new_hand = _add(_sub(hand, out), into)
                    new_reserve = _add(_sub(reserve, into), out)
                    options.append(
                        (
                            self._swap_name(out, into),
                            ("test", position._replace(player_hand=new_hand, reserve=new_reserve), queue),
                            _NO_REWARD,
                        )
                    )
        return options, "player"

    def _give_options(self, situation):
        _, position, queue = situation
        hand = position.narrator_hand
        return [
            (
                self._dice_name(given),
                (
                    "test",
                    position._replace(narrator_hand=_sub(hand, given), player_hand=_add(position.player_hand, given)),
                    queue,
                ),
                _NO_REWARD,
            )
            for given in compositions(hand, min(2, sum(hand)))
        ], "narrator"

    def _glitch_options(self, situation):
        _, position, queue = situation
        options = [("hurt", ("hurt", position, queue), _NO_REWARD), ("plans", ("plans", position, queue), _NO_REWARD)]
        if position.wins >= 1:
            options.append(("sideswipe", ("sideswipe", position._replace(wins=position.wins - 1), queue), _NO_REWARD))
        return options, "player"

    def _hurt_options(self, situation):
        _, position, queue = situation
        injured = position._replace(
            player_chips=position.player_chips + 2,
            peril=position.peril + (1 if self.ruleset.injury_peril == "on" else 0),
        )
        return [
            ("injury", ("test", injured, queue), _INJURY),
            ("condition", ("test", position, queue), _CONDITION),
        ], "narrator"

    def _plans_options(self, situation):
        _, position, queue = situation
        take = min(2, sum(position.pool))
        dice_next = ("planstake", position, queue) if take else ("test", position, queue)
        return [
            ("dice", dice_next, _NO_REWARD),
            ("peril", ("test", position._replace(peril=position.peril + 1), queue), _NO_REWARD),
        ], "narrator"

    def _planstake_options(self, situation):
        _, position, queue = situation
        return [
            (
                self._dice_name(taken),
                (
                    "test",
                    position._replace(
                        pool=_sub(position.pool, taken), narrator_hand=_add(position.narrator_hand, taken)
                    ),
                    queue,
                ),
                _NO_REWARD,
            )
            for taken in compositions(position.pool, min(2, sum(position.pool)))
        ], "narrator"

    def _sideswipe_options(self, situation):
        _, position, queue = situation
        chips = position._replace(player_chips=position.player_chips + position.narrator_chips, narrator_chips=0)
        options = [("chips", ("test", chips, queue), _NO_REWARD)]
        if sum(position.narrator_hand):
            options.append(("dice", ("swipedice", position, queue), _NO_REWARD))
        else:
            options.append(("dice", ("test", position, queue), _NO_REWARD))
        return options, "player"

    def _swipedice_options(self, situation):
        options, _ = self._give_options(situation)
        picker = "player" if self.ruleset.sideswipe_picker == "player" else "narrator"
        return options, picker


def _after_take(position: Position, winner: str, taken: tuple):
    """The pre-peril situation after the player took ``taken`` from the pool (a risk)."""
    return (
        "peril",
        _make_position((_add(position[0], taken), position[1], _sub(position[2], taken)) + position[3:]),
        winner,
    )


def _place(chips: int, stack: int, one_only: bool):
    """Move hand chips onto the stack; returns (chips left, stack, completions)."""
    if one_only:
        if stack + chips >= STACK_SIZE:
            return chips - (STACK_SIZE - stack), 0, 1
        return 0, stack + chips, 0
    total = stack + chips
    return 0, total % STACK_SIZE, total // STACK_SIZE


def _emit(out: dict, situation, num: int, den: int, reward: int) -> None:
    """Add num/den to the branch (situation, packed reward) of ``out``."""
    key = (situation, reward)
    previous = out.get(key)
    if previous is None:
        out[key] = (num, den)
    else:  # add num/den fractions without reducing
        pn, pd = previous
        if pd == den:
            out[key] = (pn + num, den)
        else:
            out[key] = (pn * den + num * pd, pd * den)


def _normalise(branches: dict) -> tuple:
    """Integer weights over one common denominator for the solver."""
    common = math.lcm(*(den for _, den in branches.values()))
    result = []
    for (situation, reward), (num, den) in branches.items():
        result.append((num * (common // den), situation, _unpack_rewards(reward)))
    divisor = math.gcd(*(weight for weight, _, _ in result))
    if divisor > 1:
        result = [(weight // divisor, situation, reward) for weight, situation, reward in result]
    return tuple(result)
