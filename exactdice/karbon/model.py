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

`KarbonModel` is put together from parts in modules of their own: a round start's edges
(`exactdice.karbon.model_round_start`), the walk of a round and its Test
(`exactdice.karbon.model_walk`), the options at each decision point
(`exactdice.karbon.model_decisions`) and what fixed policies pick there
(`exactdice.karbon.model_fixed_play`). Here: the `exactdice.markov.Model` interface, the
model's settings and caches, and the chips cut at a round start.
"""

from __future__ import annotations

from exactdice.karbon.dice import DiceSizes, compositions
from exactdice.karbon.model_branches import NO_REWARD, REWARD_NAMES, normalise, unpack_rewards
from exactdice.karbon.model_decisions import DECISION_POINTS, DecisionOptions
from exactdice.karbon.model_fixed_play import FixedPlay
from exactdice.karbon.model_positions import make_position
from exactdice.karbon.model_round_start import RoundStartEdges
from exactdice.karbon.model_walk import RoundWalk
from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.position import STACK_SIZE, Position, placement_folded
from exactdice.karbon.ruleset import Rules
from exactdice.markov import Chance, Decision, Terminal

__all__ = ["Position", "KarbonModel", "REWARD_NAMES", "OUTCOMES", "compositions"]

OUTCOMES = ("win", "loss", "tie")

# continuations remembered at most (`_continuation`): ~400 bytes each
_CONTINUATIONS_KEPT = 50_000
# walks of actions' chance continuations kept for the node's own expansion (`_action`)
_ACTION_WALKS_KEPT = 50_000
# compiled rests of the round remembered at most (`_rest_of_round`): ~90 bytes each with
# `split_rolls`; on A3 v C3, W3 P1, risk=always 91% of look-ups hit unbounded, 79% with
# 300,000 kept (1.2x the CPU), 64% with 100,000 (1.4x)
_REST_ENTRIES_KEPT = 2_000_000


class KarbonModel(RoundStartEdges, RoundWalk, DecisionOptions, FixedPlay):
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
        # the round cut after the roll (see `_round_start_chance`); by default where the
        # player risks
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
        self._phases = {point: getattr(KarbonModel, options) for point, (options, _) in DECISION_POINTS.items()}
        self._fixed = {point: getattr(KarbonModel, fixed) for point, (_, fixed) in DECISION_POINTS.items()}

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
            self._walk(situation, 1, 1, NO_REWARD, branches, top=True)
        return Chance(normalise(branches))

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
                self._walk(situation, 1, 1, NO_REWARD, branches)
            if len(branches) == 1:
                (((target, total), (num, den)),) = branches.items()
                if num == den:
                    return (name, target, unpack_rewards(reward + total))
            if len(self._action_walks) >= self.action_walks_kept:
                self._action_walks.clear()  # bounded memory, like the other caches
            self._action_walks[situation] = branches
        return (name, situation, unpack_rewards(reward))

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

    def after_roll(self, position: Position, winner, gain_p, gain_n, player_hand, narrator_hand) -> Position:
        """The position the risk decision sees: the roll's chips gained, the Opening's dice
        moved, and (see `placement_folded`) the stacks of the sides about to place held in
        hand."""
        after = make_position(
            (player_hand, narrator_hand, position[2], position[3], position[4] + gain_p, position[5] + gain_n)
            + position[6:]
        )
        return placement_folded(after, winner, self.peril_to_stack) if self.fold_chips else after

    def who_decides(self, situation) -> str:
        """ "player" or "narrator": who chooses at a decision situation."""
        return self._phases[situation[0]](self, situation)[1]
