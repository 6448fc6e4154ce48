"""End components of the bounded search's game, where play can stay forever: their bounds
pulled toward their best exits (Kelmendi, Kretinsky, Weininger, CAV 2018) so that both
bounds converge where plain backups would stay apart.
"""

from __future__ import annotations

from exactdice.markov.bounded_states import CHANCE, MAX, MIN, ExpandedStates

__all__ = ["EndComponents"]


class EndComponents(ExpandedStates):
    """Finding and settling end components, for `exactdice.markov.bounded.BoundedSolver`."""

    end_component_passes: int
    end_components: int

    def _end_components(self, for_upper: bool) -> list[list[int]]:
        """Maximal end components of the expanded states' game with the "min" side
        restricted to its actions optimal for the lower bounds (``for_upper``), or the
        "max" side to its actions optimal for the upper bounds (otherwise)."""
        allowed = {
            node: actions
            for node in range(len(self.states))
            if (actions := self._allowed_actions(node, for_upper)) is not None
        }
        while True:
            component_of = _strongly_connected(allowed)
            changed = False
            for node in list(allowed):
                mine = component_of[node]
                kept = [action for action in allowed[node] if all(component_of.get(t) == mine for t in action)]
                if len(kept) != len(allowed[node]):
                    changed = True
                    if kept:
                        allowed[node] = kept
                    else:
                        del allowed[node]
            if not changed:
                break
        groups: dict[int, list] = {}
        for node in allowed:
            groups.setdefault(component_of[node], []).append(node)
        return list(groups.values())

    def _allowed_actions(self, node: int, for_upper: bool) -> list[tuple] | None:
        """The actions (tuples of targets: a chance state's one action holds all its
        branches) an end component may use at ``node``; None for terminal and unexpanded
        states. The side being restricted keeps only its actions best for its bounds."""
        k = self.kind[node]
        targets = self.targets[node]
        if k == CHANCE:
            return [targets]
        if k == MIN and for_upper:
            best = min(self.lo[t] for t in targets)
            return [(t,) for t in targets if self.lo[t] == best]
        if k == MAX and not for_upper:
            best = max(self.hi[t] for t in targets)
            return [(t,) for t in targets if self.hi[t] == best]
        if k == MAX or k == MIN:
            return [(t,) for t in targets]
        return None

    def settle_end_components(self) -> int:
        """Pull the upper bounds of end components down and push the lower bounds up.

        Upper: in an end component T where every "min" state keeps an action inside T,
        the "min" side can keep play inside T until "max" leaves it, so no state of T is
        worth more than max(best exit of a "max" state, the payoff of endless play) --
        sound for ANY such T; taking T among the "min" side's lower-optimal actions (KKW)
        makes the bounds converge. Lower: the mirror image with the sides swapped.
        Returns the number of end components found.
        """
        lo, hi, kind, targets = self.lo, self.hi, self.kind, self.targets
        found = 0
        for for_upper in (True, False):
            for members in self._end_components(for_upper):
                inside = set(members)
                found += 1
                if for_upper:
                    exits = [hi[t] for node in members if kind[node] == MAX for t in targets[node] if t not in inside]
                    cap = max(exits + [self.endless])
                    for node in members:
                        if cap < hi[node]:
                            hi[node] = cap
                else:
                    exits = [lo[t] for node in members if kind[node] == MIN for t in targets[node] if t not in inside]
                    floor = min(exits + [self.endless])
                    for node in members:
                        if floor > lo[node]:
                            lo[node] = floor
        self.end_component_passes += 1
        self.end_components = found
        return found


def _strongly_connected(adjacency: dict) -> dict:
    """node -> component number over ``adjacency`` (node -> list of target tuples; targets
    outside the dict are ignored), by scipy's strongly connected components.

    >>> parts = _strongly_connected({1: [(2,)], 2: [(1, 7)], 3: [(1,)]})
    >>> parts[1] == parts[2] != parts[3]
    True
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    nodes = list(adjacency)
    position = {node: i for i, node in enumerate(nodes)}
    rows, columns = [], []
    for node, actions in adjacency.items():
        here = position[node]
        for action in actions:
            for target in action:
                there = position.get(target)
                if there is not None:
                    rows.append(here)
                    columns.append(there)
    size = len(nodes)
    matrix = csr_matrix(([1] * len(rows), (rows, columns)), shape=(size, size), dtype="int8")
    _, labels = connected_components(matrix, directed=True, connection="strong")
    return {node: int(label) for node, label in zip(nodes, labels)}
