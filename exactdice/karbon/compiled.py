"""The compiled rules walk (`exactdice.karbon._walk`) behind `KarbonModel`: which walk
explores, and the compiled graph as an `exactdice.markov.arrays.ArrayGraph`.

``EXACTDICE_WALK=python`` forces the Python walk (the reference); ``compiled`` insists on
the compiled one (an error where it cannot run); unset, the compiled walk runs wherever it
is built and the setup fits its widths, and the Python walk everywhere else. An install
without the compiled module says so once, on stderr.

>>> from exactdice.karbon.setup import ContestSetup
>>> from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
>>> from exactdice.karbon.ruleset import Rules
>>> from exactdice.karbon.model import KarbonModel
>>> start = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={},
...                      reserve={}).start(PlayerPolicy(), NarratorPolicy())
>>> model = KarbonModel(start.sizes, start.situation(), Rules(), PlayerPolicy(), NarratorPolicy())
>>> graph = explore_compiled(model, max_states=1000) if compiled_available() else None
>>> graph is None or graph.num_states == 102
True
"""

from __future__ import annotations

import os
import sys

from exactdice.errors import InputError, TooLargeError
from exactdice.limits import check_memory
from exactdice.markov.arrays import ArrayGraph
from exactdice.markov.graph import _progress_bar
from exactdice.processes import usable_cores
from exactdice.karbon.position import Position

__all__ = [
    "compiled_available",
    "walk_choice",
    "explore_compiled",
    "WALK_VARIABLE",
    "CompiledBoundedSolver",
    "compiled_bounded_solver",
]

#: the environment variable that picks the walk: python | compiled (unset: compiled where it can)
WALK_VARIABLE = "EXACTDICE_WALK"
_WALKS = ("python", "compiled")
# most peril dice whose hit weights the compiled walk keeps (8**42 < 2**128)
_COMPILED_MOST_PERIL = 40
# remembered rests of rounds and their branches in the bounds search (32 bytes a branch,
# 64-128 a rest's slot in its table)
_SEARCH_RESTS_KEPT = 500_000
# transitions the walk records before it sums and records the rest in a second thread
# (which costs about 0.25 ms to start and stop, a few thousand transitions' work)
_SUMMING_THREAD_AFTER = 20_000

try:
    from exactdice.karbon import _walk
except ImportError as error:  # an install that could not build the extension
    _walk = None
    _IMPORT_ERROR = str(error)
else:
    _walk.bind_position(Position)
    _IMPORT_ERROR = ""

_notice_given = False


def compiled_available() -> bool:
    """Whether the compiled walk is built in this install.

    >>> isinstance(compiled_available(), bool)
    True
    """
    return _walk is not None


def walk_choice() -> str:
    """The walk asked for: "python", "compiled" or "auto" (``$EXACTDICE_WALK`` unset).

    >>> walk_choice() in ("python", "compiled", "auto")
    True
    """
    value = os.environ.get(WALK_VARIABLE, "").strip().lower()
    if not value:
        return "auto"
    if value not in _WALKS:
        raise InputError(WALK_VARIABLE, f"must be {' or '.join(_WALKS)}, got {value!r}")
    return value


def _notice_once(reason: str) -> None:
    global _notice_given
    if not _notice_given:
        _notice_given = True
        print(f"exactdice: {reason}; the Python walk explores instead (slower, the same answers)", file=sys.stderr)


def explore_compiled(model, *, max_states: int, progress=None):
    """The graph of a `KarbonModel` (or a `DrawSearchModel`) explored by the compiled walk,
    or None where the Python walk should explore instead (asked for, not built, or a
    setup past the compiled widths)."""
    choice = walk_choice()
    if choice == "python":
        return None
    if _walk is None:
        if choice == "compiled":
            raise InputError(WALK_VARIABLE, f"the compiled walk is not built in this install ({_IMPORT_ERROR})")
        _notice_once(f"the compiled Karbon walk is not built in this install ({_IMPORT_ERROR})")
        return None
    inner = getattr(model, "inner", model)
    try:
        walk = _walk.CompiledWalk(_config(model, inner))
        _declare_draws(model, walk)
        return _explored(model, inner, walk, max_states, progress)
    except _walk.WalkOverflow as error:
        if choice == "compiled":
            raise InputError(WALK_VARIABLE, f"the compiled walk cannot take this contest: {error}") from None
        return None


def _starts(model, inner):
    """The round-start positions the walk begins from (every draw's, behind the draws)."""
    if inner is model:
        start = model.initial_state()
        return [start if type(start) is Position else start[1]]
    starts = []
    for text, draw in model.draws_by_text.items():
        node = model.expand(("ndraw", text))
        for branch in getattr(node, "actions", None) or node.branches:
            situation = branch[1] if len(branch) == 3 and isinstance(branch[0], str) else branch[1]
            starts.append(situation if type(situation) is Position else situation[1])
    return starts


def _config(model, inner) -> dict:
    sizes = inner.sizes
    ruleset, player, narrator = inner.ruleset, inner.player, inner.narrator
    starts = _starts(model, inner)
    first = starts[0]
    totals = [sum(place[i] for place in first[:4]) for i in range(len(sizes.sizes))]
    track = first.track
    dice = sum(totals)
    fallout = getattr(getattr(model, "setup", None), "fallout", 0) or 0
    most_peril = max(start.peril for start in starts) + track + fallout + 2
    most_chips = max(max(start.player_chips, start.narrator_chips) for start in starts)
    most_chips = max(most_chips, 2 * (7 * (track + 2) + dice + 3 + most_peril + 10))
    return {
        "sizes": sizes.sizes,
        "totals": totals,
        "best_first": inner.best_first,
        "risk_take_order": inner.risk_take_order,
        "plans_take_order": inner.plans_take_order,
        "give_order": inner.give_order,
        "peril_to_stack": ruleset.peril_chips == "stack",
        "one_reward": ruleset.rewards_per_test == "1",
        "player_first": ruleset.tie_order == "player_first",
        "sudden_death": ruleset.sudden_death == "on",
        "injury_peril": ruleset.injury_peril == "on",
        "picker_player": ruleset.sideswipe_picker == "player",
        "player_decides": inner.player_decides,
        "narrator_decides": inner.narrator_decides,
        "narrator_kind": narrator.kind == "kind",
        "narrator_random": narrator.kind == "random",
        "risk_always": player.risk == "always",
        "break_order": player.break_order,
        "glitch_order": player.glitch_order,
        "sideswipe_take": player.sideswipe_take,
        "hurt": narrator.hurt,
        "plans": narrator.plans,
        "cap_chips": inner.cap_chips,
        "fold_chips": inner.fold_chips,
        "split_rolls": inner.split_rolls,
        "peril_recurs": inner.peril_recurs,
        "max_chips": most_chips,
        "max_marks": track + 1,
        "max_peril": min(most_peril, _COMPILED_MOST_PERIL) if most_peril > _COMPILED_MOST_PERIL else most_peril,
        "base_track": track,
        "summing_after": _summing_after(inner),
    }


def _summing_after(inner) -> int:
    """When the walk hands its nodes' sums to a second thread (-1: never). Only where two
    cores are usable, and only where a roll outcome's rest of round is several branches:
    where it is one edge (split rolls, a deciding player), handing it over costs more
    than adding it (`scripts/MEASUREMENTS.md`)."""
    if usable_cores() < 2 or inner.split_rolls or inner.player_decides:
        return -1
    return _SUMMING_THREAD_AFTER


def _declare_draws(model, walk) -> None:
    """The draw decisions in front of the contest (`DrawSearchModel`) as external nodes."""
    if getattr(model, "inner", None) is None:
        return
    situations = [("draw",)] if model.initial_state() == ("draw",) else []
    situations += [("ndraw", text) for text in model.draws_by_text]
    for situation in situations:
        node = model.expand(situation)
        if hasattr(node, "actions"):
            walk.add_external(situation, node.side, [(name, target, 1) for name, target, _ in node.actions])
        else:
            walk.add_external(situation, "chance", [(None, target, weight) for weight, target, _ in node.branches])


def _explored(model, inner, walk, max_states, progress) -> ArrayGraph:
    bar = _progress_bar(progress, max_states)

    def check(expanded, found):
        check_memory("while exploring", states=found)
        if bar is not None:
            bar.update(found - bar.n)

    try:  # (node ids are 32-bit: a limit past 2**31 - 1 states is that limit)
        walk.explore(model.initial_state(), min(max_states, 2**31 - 1), check)
    except _walk.StateLimit:
        raise TooLargeError(
            "max_states",
            f"reached {max_states:,} states (limit {max_states:,}) while exploring; raise the limit with `max_states`",
        ) from None
    finally:
        if bar is not None:
            bar.close()
    walk.drop_caches()
    return _graph(model, inner, walk)


def _graph(model, inner, walk) -> ArrayGraph:
    parts = walk.views()
    offsets, data, weights = parts["offsets"], parts["data"], parts["weights"]
    labels, label_rewards, reward_values = parts["labels"], parts["label_rewards"], parts["reward_values"]
    sizes = inner.sizes
    names: dict = {}

    def action_name(place):
        label = labels[place]
        name = names.get(label)
        if name is None:
            name = names[label] = _label_text(walk.label(label), sizes)
        return name

    def action_rewards(place):
        packed = reward_values[label_rewards[place]]
        return _unpacked(packed) if packed else None

    def node_of(state):
        node = walk.node_of(state)
        return None if node < 0 else node

    terminals = int((parts["kind"] == 0).sum())
    return ArrayGraph(
        inner.outcomes,
        inner.reward_names,
        kind=parts["kind"],
        data=data,
        offsets=offsets,
        targets=parts["targets"],
        weights=weights,
        state_of=walk.state,
        node_of=node_of,
        mass=parts["mass"],
        has_mass=parts["has_mass"],
        big=dict(parts["big"]),
        big_mass=parts["big_mass"],
        decision_edges=parts["label_edges"],
        action_name=action_name,
        action_rewards=action_rewards,
        bookkeeping=terminals + walk.external_count,
        owner=walk,
        provenance="compiled walk",
    )


def _unpacked(packed: int) -> tuple:
    """Rewards packed 8 bits a counter -> the tuple the solver expects."""
    return tuple((packed >> (8 * counter)) & 0xFF for counter in range(5))


def _label_text(label, sizes) -> str:
    if isinstance(label, str):
        return label
    if label[0] == "dice":
        return sizes.text(label[1])
    if label[0] == "swap":
        return f"{sizes.text(label[1])}->{sizes.text(label[2])}"
    raise ValueError(f"unknown label {label!r}")


class CompiledBoundedSolver:
    """Certified bounds for optimal play, searched over the compiled walk: the interface of
    `exactdice.markov.bounded.BoundedSolver` that `exactdice.karbon.bounds` uses, with the
    game's states packed and expanded in compiled code and the search itself compiled
    (`exactdice.markov._interval.GameSearch`: BRTDP with KKW end components, outward
    rounding). Made by `compiled_bounded_solver`.
    """

    def __init__(self, model, inner, walk, search, least: float, greatest: float):
        self.model, self._inner, self._walk, self._search = model, inner, walk, search
        self.least, self.greatest = least, greatest
        self.index = _NodeIndex(walk)

    @property
    def expanded(self) -> int:
        return self._walk.expanded

    @property
    def touched(self) -> int:
        return self._walk.nodes

    def memory_bytes(self) -> int:
        """The bytes the graph, its caches and the bounds hold."""
        return self._walk.memory_bytes() + self._search.memory_bytes()

    def run(
        self,
        precision: float,
        *,
        max_seconds=None,
        max_states=None,
        progress=None,
        progress_every: float = 0.5,
        stop_check=None,
        root_lower: float | None = None,
    ):
        """Search until the gap at the initial state is <= ``precision`` (or a limit):
        a `exactdice.markov.bounded.BoundedResult`. ``root_lower``: a sound lower bound
        known for the initial state (the fixed preferences' value, say)."""
        import time

        from exactdice.markov.bounded import BoundedResult

        if not precision > 0:
            raise InputError("precision", f"must be > 0, got {precision}")
        started = time.perf_counter()
        if root_lower is not None:
            self._search.raise_lower(0, root_lower)

        def check():
            try:
                check_memory("while searching for bounds", states=self._walk.nodes)
            except TooLargeError:
                raise _MemoryPassed() from None

        try:
            stopped, history = self._search.run(
                precision,
                max_seconds=max_seconds,
                max_nodes=max_states,
                progress=progress,
                progress_every=progress_every,
                stop_check=stop_check,
                check=check,
            )
        except _MemoryPassed:
            stopped, history = "memory", []
            self._search.sweep()
        search = self._search
        return BoundedResult(
            lower=search.lower,
            upper=search.upper,
            expanded=self._walk.expanded,
            touched=self._walk.nodes,
            trajectories=search.trajectories,
            end_component_passes=search.end_component_passes,
            end_components=search.end_components,
            seconds=time.perf_counter() - started,
            stopped=stopped,
            sweeps=search.sweeps,
            strategy=self.strategy(),
            history=history,
            solver=self,
        )

    def strategy(self) -> dict:
        """Each "max" state play reaches through the actions best for the lower bounds ->
        the action it takes (`GameSearch.best_actions`)."""
        walk, sizes = self._walk, self._inner.sizes
        return {
            walk.state(node): _label_text(walk.action_label(edge), sizes)
            for node, edge in self._search.best_actions().items()
        }

    def bounds_of(self, state):
        """(lower, upper) of a state (the least and greatest payoff if never met)."""
        node = self._walk.node_of(state)
        return (self.least, self.greatest) if node < 0 else self._search.bounds(node)

    def decision_bounds(self, state):
        """(side, [(action name, lower, upper), ...]) at an expanded decision state, else None."""
        node = self._walk.node_of(state)
        if node < 0:
            return None
        kind, side, edges = self._walk.node_edges(node)
        if kind != 2:
            return None
        start = self._walk.first_edge_of(node)
        names = [
            (_label_text(self._walk.action_label(start + place), self._inner.sizes), *self._search.bounds(target))
            for place, (target, _) in enumerate(edges)
        ]
        return ("max" if side > 0 else "min"), names


class _MemoryPassed(Exception):
    """The memory budget passed during the compiled search (it stops with what it has)."""


class _NodeIndex:
    """``state in solver.index``: whether the search has met the state (iterating names
    every state met)."""

    def __init__(self, walk):
        self._walk = walk

    def __contains__(self, state) -> bool:
        return self._walk.node_of(state) >= 0

    def __iter__(self):
        return (self._walk.state(node) for node in range(self._walk.nodes))

    def __len__(self) -> int:
        return self._walk.nodes


def compiled_bounded_solver(model, *, payoff, nonterminating_payoff, seed: int = 0):
    """A `CompiledBoundedSolver` for a `KarbonModel` or `DrawSearchModel`, or None where the
    Python search should run (the compiled walk not built or asked off, or a setup past its
    widths)."""
    choice = walk_choice()
    if choice == "python" or _walk is None:
        return None
    from exactdice.markov._interval import GameSearch

    inner = getattr(model, "inner", model)
    try:
        config = _config(model, inner)
        # the search needs no rewards, and keeps a smaller cache of rests of rounds: a state
        # it meets costs about 60 bytes besides its edges
        config["keep_rewards"] = False
        config["rest_kept"] = _SEARCH_RESTS_KEPT
        walk = _walk.CompiledWalk(config)
        _declare_draws(model, walk)
        walk.start(model.initial_state(), 2**31 - 1)
    except _walk.WalkOverflow as error:
        if choice == "compiled":
            raise InputError(WALK_VARIABLE, f"the compiled walk cannot take this contest: {error}") from None
        return None
    pays = [float(payoff.get(outcome, 0)) for outcome in inner.outcomes]
    endless = float(nonterminating_payoff)
    search = GameSearch(walk, pays, endless, 0, seed)
    return CompiledBoundedSolver(model, inner, walk, search, min(pays + [endless]), max(pays + [endless]))
