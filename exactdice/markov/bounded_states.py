"""The explored part of a game with a float lower and upper bound on every state's value:
what the bounded search (`exactdice.markov.bounded.BoundedSolver`) and its parts
(trajectories, end components, the strategy read off the bounds) work on.

>>> from exactdice.markov.synthetic import GamblersRuin
>>> states = ExpandedStates(GamblersRuin(goal=3, start=1, up=1, down=1))
>>> states.bounds_of(states.model.initial_state())
(0.0, 1.0)
"""

from __future__ import annotations

from operator import mul

from exactdice.errors import InputError, InternalError
from exactdice.markov.model import Chance, Decision, KeyedChance, KeySlots, Terminal, keyed_expander
from exactdice.markov.sound_floats import chance_slack, check_weight, float_payoffs

__all__ = ["ExpandedStates", "FRONTIER", "TERMINAL", "CHANCE", "MAX", "MIN"]

#: what an expanded state is (``ExpandedStates.kind``); a touched state not expanded yet is a frontier
FRONTIER, TERMINAL, CHANCE, MAX, MIN = range(5)


class ExpandedStates:
    """The states of a game touched so far, each with float bounds on its value.

    ``payoff`` maps outcome -> payoff (default 1 for the first outcome, 0 otherwise),
    ``nonterminating_payoff`` is what play that never ends pays (default 0), and
    ``initial_bounds(state)`` gives (lower, upper) for a state not yet expanded (default
    the least and greatest payoff). States are numbered in the order they are first
    touched; per state the lists hold its kind, successors, bounds and, by kind, its
    probabilities or action names.
    """

    def __init__(self, model, *, payoff=None, nonterminating_payoff=0, initial_bounds=None):
        self.model = model
        self.payoff, self.endless = float_payoffs(model.outcomes, payoff, nonterminating_payoff)
        values = list(self.payoff.values()) + [self.endless]
        self.least, self.greatest = min(values), max(values)
        self.magnitude = max(abs(self.least), abs(self.greatest))
        self.initial_bounds = initial_bounds
        self.index: dict = {}
        self.states: list = []
        self.kind = bytearray()
        self.targets: list = []  # per state: tuple of successor ids (actions' targets for decisions)
        self.probs: list = []  # per chance state: tuple of float probabilities
        self.names: list = []  # per decision state: tuple of action names
        self.slack: list = []
        self.lo: list = []
        self.hi: list = []
        self.expanded = 0
        # a model's `expand_keyed` names a chance node's successors by int keys into one
        # table it only appends to: a key's node id is kept, so its state is hashed once
        self._expand_model = keyed_expander(model)
        self._keyed_nodes = KeySlots()
        self.initial = self._intern(model.initial_state())

    def _intern(self, state) -> int:
        node = self.index.get(state)
        if node is None:
            node = len(self.states)
            self.index[state] = node
            self.states.append(state)
            self.kind.append(FRONTIER)
            self.targets.append(None)
            self.probs.append(None)
            self.names.append(None)
            self.slack.append(0.0)
            low, high = self.least, self.greatest
            if self.initial_bounds is not None:
                given = self.initial_bounds(state)
                if given is not None:
                    low, high = max(low, given[0]), min(high, given[1])
            self.lo.append(low)
            self.hi.append(high)
            if low > high:
                self._crossed(node)
        return node

    def _expand(self, node: int) -> None:
        expanded = self._expand_model(self.states[node])
        self.expanded += 1
        if type(expanded) is KeyedChance:
            self._store_chance(node, self._keyed_merged(expanded))
            return
        if isinstance(expanded, Terminal):
            value = self.payoff[expanded.outcome]
            self.kind[node] = TERMINAL
            self.lo[node] = self.hi[node] = value
            self.targets[node] = ()
            return
        if isinstance(expanded, Chance):
            merged: dict = {}
            for weight, successor, _ in expanded.branches:
                if type(weight) is not int or weight <= 0:
                    check_weight(weight)
                target = self._intern(successor)
                merged[target] = merged.get(target, 0) + weight
            self._store_chance(node, merged)
            return
        if isinstance(expanded, Decision):
            if expanded.side not in ("max", "min"):
                raise InputError("side", f"decision side must be 'max' or 'min', got {expanded.side!r}")
            self.kind[node] = MAX if expanded.side == "max" else MIN
            self.targets[node] = tuple(self._intern(successor) for _, successor, _ in expanded.actions)
            self.names[node] = tuple(name for name, _, _ in expanded.actions)
            return
        raise InputError("expand", f"expand() must return Terminal, Chance or Decision, got {type(expanded).__name__}")

    def _keyed_merged(self, expanded: KeyedChance) -> dict:
        """Successor node id -> summed integer weight of a `KeyedChance`: a key seen
        before is a list look-up, a new key interns its state once."""
        table = expanded.table
        known = self._keyed_nodes.for_table(table)
        merged: dict = {}
        get = merged.get
        for weight, key in expanded.branches:
            if type(weight) is not int or weight <= 0:
                check_weight(weight)
            target = known[key]
            if target is None:
                target = known[key] = self._intern(table[key][0])
            merged[target] = get(target, 0) + weight
        return merged

    def _store_chance(self, node: int, merged: dict) -> None:
        """A chance state's successors and their probabilities, as floats computed once
        from the integer weights (the rounding is in `chance_slack`)."""
        if not merged:
            raise InputError("expand", f"chance node of {self.states[node]!r} has no branches")
        total = sum(merged.values())
        self.kind[node] = CHANCE
        self.targets[node] = tuple(merged)
        self.probs[node] = tuple([weight / total for weight in merged.values()])
        self.slack[node] = chance_slack(len(merged), self.magnitude)

    def _backup(self, node: int) -> bool:
        kind, targets, lo, hi = self.kind[node], self.targets[node], self.lo, self.hi
        if kind == CHANCE:
            # float sums of the products, widened by their error bound (`chance_slack`)
            probs, slack = self.probs[node], self.slack[node]
            low = sum(map(mul, probs, map(lo.__getitem__, targets))) - slack
            high = sum(map(mul, probs, map(hi.__getitem__, targets))) + slack
        elif kind == MAX:
            low = max(map(lo.__getitem__, targets))
            high = max(map(hi.__getitem__, targets))
        elif kind == MIN:
            low = min(map(lo.__getitem__, targets))
            high = min(map(hi.__getitem__, targets))
        else:
            return False
        moved = False
        if low > lo[node]:
            lo[node] = low
            moved = True
        if high < hi[node]:
            hi[node] = high
            moved = True
        if moved and lo[node] > hi[node]:
            self._crossed(node)
        return moved

    def _crossed(self, node: int):
        raise InternalError(
            f"the bounds crossed at {self.states[node]!r} ([{self.lo[node]!r}, "
            f"{self.hi[node]!r}]): an initial bound is unsound (backups of sound bounds "
            "stay sound)"
        )

    def decision_bounds(self, state):
        """(side, [(action name, lower, upper), ...]) at an expanded decision state, None at
        any other state (a chance or terminal state, or one not expanded yet).

        >>> from exactdice.markov.synthetic import TugOfWar
        >>> states = ExpandedStates(TugOfWar(reach=2))
        >>> states.decision_bounds(states.model.initial_state()) is None  # not expanded yet
        True
        """
        node = self.index.get(state)
        if node is None or self.kind[node] not in (MAX, MIN):
            return None
        side = "max" if self.kind[node] == MAX else "min"
        return side, [(name, self.lo[t], self.hi[t]) for name, t in zip(self.names[node], self.targets[node])]

    def bounds_of(self, state):
        """(lower, upper) of a state (its initial bounds if never touched)."""
        node = self.index.get(state)
        if node is None:
            low, high = self.least, self.greatest
            if self.initial_bounds is not None and (given := self.initial_bounds(state)) is not None:
                low, high = max(low, given[0]), min(high, given[1])
            return low, high
        return self.lo[node], self.hi[node]
