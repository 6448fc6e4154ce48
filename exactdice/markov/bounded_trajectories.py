"""The bounded search's trajectories and sweeps: paths sampled from the initial state toward
the largest gap between the bounds, each backed up from its end (BRTDP), and sweeps that
back up every expanded state.
"""

from __future__ import annotations

from random import Random

from exactdice.markov.bounded_states import CHANCE, FRONTIER, MAX, MIN, TERMINAL, ExpandedStates

__all__ = ["Trajectories"]

#: the most states one trajectory visits (a trajectory also stops where it meets its own path)
_MAX_TRAJECTORY = 100_000


class Trajectories(ExpandedStates):
    """Sampling trajectories and sweeping the bounds, for `exactdice.markov.bounded.BoundedSolver`."""

    random: Random
    trajectories: int
    sweeps: int
    #: whether a trajectory has met its own path since end components were last settled
    _cycle_seen: bool

    def _trajectory(self, stop_gap: float) -> None:
        lo, hi, kind, targets = self.lo, self.hi, self.kind, self.targets
        node = self.initial
        path: list = []
        on_path = set()
        while len(path) < _MAX_TRAJECTORY:
            if kind[node] == FRONTIER:
                self._expand(node)
            path.append(node)
            on_path.add(node)
            k = kind[node]
            if k == TERMINAL or hi[node] - lo[node] <= stop_gap:
                break
            options = targets[node]
            if k == MAX or k == MIN:
                nxt = self._choose(options, k == MAX)
            else:
                weights = [p * (hi[t] - lo[t]) for p, t in zip(self.probs[node], options)]
                total = sum(weights)
                if total <= stop_gap:  # what the successors could still gain is below the gap sought
                    break
                pick = self.random.random() * total
                nxt = options[-1]
                for t, w in zip(options, weights):
                    pick -= w
                    if pick < 0:
                        nxt = t
                        break
            if nxt in on_path:
                self._cycle_seen = True
                break
            node = nxt
        for node in reversed(path):
            self._backup(node)
        self.trajectories += 1

    def _choose(self, options, maximise: bool) -> int:
        """The action a trajectory follows: among the actions best for the upper bounds
        ("max") or the lower bounds ("min"), one drawn with weight proportional to its gap
        (KKW sample among the best actions; a fixed tie-break can circle an end component
        forever and never look at an equally good exit)."""
        lo, hi = self.lo, self.hi
        if maximise:
            best = max([hi[t] for t in options])
            tied = [t for t in options if hi[t] == best]
        else:
            best = min([lo[t] for t in options])
            tied = [t for t in options if lo[t] == best]
        if len(tied) == 1:
            return tied[0]
        gaps = [hi[t] - lo[t] for t in tied]
        total = sum(gaps)
        if total <= 0:
            return tied[0]
        pick = self.random.random() * total
        for t, gap in zip(tied, gaps):
            pick -= gap
            if pick < 0:
                return t
        return tied[-1]

    def sweep(self, passes: int = 3) -> int:
        """Back up every expanded state, last expanded first, ``passes`` times (or until
        no bound moves): a trajectory backs up only its own path, so a state whose
        successors improved through other paths keeps stale bounds until swept. Sound
        like any backup; costs one look at every touched successor a pass. Returns the
        passes made.

        >>> from exactdice.markov.bounded import BoundedSolver
        >>> from exactdice.markov.synthetic import GamblersRuin
        >>> solver = BoundedSolver(GamblersRuin(goal=3, start=1, up=1, down=1))
        >>> solver.sweep()  # nothing expanded yet: one pass finds nothing to move
        1
        """
        kind, lo, hi, backup = self.kind, self.lo, self.hi, self._backup
        # a state whose bounds have met cannot move (bounds only tighten): left out
        order = [node for node in range(len(self.states) - 1, -1, -1) if kind[node] >= CHANCE and lo[node] < hi[node]]
        made = 0
        for made in range(1, passes + 1):
            moved = False
            for node in order:
                if backup(node):
                    moved = True
            if not moved:
                break
        self.sweeps += made
        return made
