"""Monte Carlo Chronica contests: every die rolled, the discard procedure run literally.

Independent of the exact model (it shares only `Rules` and the parsed sides):
dice are rolled with ``numpy.random.Generator(PCG64(seed))``, vectorised across trials,
and the comparison of spec steps 2-6 is replayed round by round.

One row per trial, columns:

- ``winner``: the winning side's index (``0``, ``1``, ...) or ``tie``;
- ``successes``: how many success dice the winner has (0 on a tie);
- ``success_sizes``: their sizes, largest first, like ``d12,d8`` (empty on a tie);
- ``concessions_<i>``: concession dice side ``i`` gains (one column per side);
- ``pushes``: how many times the contest was pushed (re-rolled after a tie).

>>> rows = simulate_rows([((6,),), ((6,),)], n=5, seed=7)
>>> sorted(rows[0])
['concessions_0', 'concessions_1', 'pushes', 'success_sizes', 'successes', 'winner']
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from exactdice.chronica.ruleset import PHYSICAL_DICE, Rules
from exactdice.errors import InputError
from exactdice.output_files import open_output

__all__ = ["simulate", "simulate_rows", "write_csv", "summarise", "columns"]

#: most trials one call simulates
MAX_TRIALS = 10_000_000


def columns(side_count: int) -> list[str]:
    """The CSV header for a contest of ``side_count`` sides.

    >>> columns(2)
    ['winner', 'successes', 'success_sizes', 'concessions_0', 'concessions_1', 'pushes']
    """
    return ["winner", "successes", "success_sizes"] + [f"concessions_{i}" for i in range(side_count)] + ["pushes"]


def _targeted(sides, target):
    """The opposition takes the target die (spec point 9), written afresh for the simulator."""
    if target is None:
        return [list(map(list, side)) for side in sides]
    out = [list(map(list, sides[0]))]
    for side in sides[1:]:
        pools = [list(pool) for pool in side]
        have = sum(map(len, pools))
        added = max(0, 3 - have)
        swaps = 3 - added
        order = sorted((size, p, i) for p, pool in enumerate(pools) for i, size in enumerate(pool))
        for size, p, i in order:
            if swaps and size < target:
                pools[p][i] = target
                swaps -= 1
        pools[0].extend([target] * added)
        out.append(pools)
    return out


def _rolled_as(size):
    options = [p for p in PHYSICAL_DICE if p <= size]
    return options[-1] if options else size


#: ``winner`` of a trial still being compared, and of a tie
UNDECIDED, TIE = -2, -1


@dataclass(frozen=True)
class _Table:
    """Where each die of one contest sits: one column per die, in side and pool order."""

    sizes: np.ndarray  # die size of each column
    side_of: np.ndarray  # side of each column
    pools: tuple  # per pool: (its side, its columns)
    side_count: int

    @classmethod
    def of(cls, sides) -> _Table:
        columns = [(s, p, size) for s, side in enumerate(sides) for p, pool in enumerate(side) for size in pool]
        pools = tuple(
            (s, np.array([j for j, column in enumerate(columns) if column[:2] == (s, p)]))
            for s, p in sorted({column[:2] for column in columns})
        )
        return cls(np.array([size for _, _, size in columns]), np.array([s for s, _, _ in columns]), pools, len(sides))


class _Trials:
    """``n`` rolls of one contest played side by side: the faces, and what each trial has left.

    ``winner`` is a side, `TIE` or `UNDECIDED`; ``alive`` marks dice not yet discarded
    or set aside; ``discards`` counts the rounds of tie discards (spec step 3).
    """

    def __init__(self, table: _Table, faces: np.ndarray):
        self.table = table
        self.faces = faces
        n = len(faces)
        self.alive = np.ones_like(faces, dtype=bool)
        self.winner = np.full(n, UNDECIDED)
        self.discards = np.zeros(n, dtype=int)
        self.success_sizes: list[list[int]] = [[] for _ in range(n)]
        self.concessions = np.zeros((n, table.side_count), dtype=int)

    def side_highs(self) -> np.ndarray:
        """Spec step 2: each side's highest die still in play (0 when it has none), per trial."""
        shown = np.where(self.alive, self.faces, 0)
        return np.stack([shown[:, self.table.side_of == s].max(axis=1) for s in range(self.table.side_count)], axis=1)

    def compare(self, four_ties: bool, instant: bool) -> None:
        """Spec steps 2-4 (and point 8's instant win), round by round until every trial is settled."""
        first = True
        while (self.winner == UNDECIDED).any():
            side_high = self.side_highs()
            top = side_high.max(axis=1)
            at_top = side_high == top[:, None]
            n_top = at_top.sum(axis=1)
            self.winner[(self.winner == UNDECIDED) & (top == 0)] = TIE  # every die is gone
            if instant and first:
                self.instant_wins(top, at_top, n_top)
            first = False
            self.lone_winners(top, at_top, n_top, four_ties)
            tied = (self.winner == UNDECIDED) & (top > 0) & (n_top >= 2)
            if four_ties:
                too_many = tied & (self.discards >= 4)
                self.winner[too_many] = TIE
                tied &= ~too_many
            if tied.any():
                self.discard_ties(tied, top, at_top)

    def instant_wins(self, top, at_top, n_top) -> None:
        """Point 8: a first side holding a substituted die that ties the top wins with one success die,
        its largest die showing the top value."""
        hit = (self.winner == UNDECIDED) & (top > 0) & (n_top >= 2) & at_top[:, 0]
        first_side = np.flatnonzero(self.table.side_of == 0)
        for t in np.flatnonzero(hit):
            best = max((j for j in first_side if self.faces[t, j] == top[t]), key=lambda j: self.table.sizes[j])
            self.alive[t, best] = False
            self.success_sizes[t] = [int(self.table.sizes[best])]
            self.winner[t] = 0

    def lone_winners(self, top, at_top, n_top, four_ties) -> None:
        """Step 3: a side alone at the top wins (with `four-ties`, not after four discard rounds)."""
        single = (self.winner == UNDECIDED) & (top > 0) & (n_top == 1)
        if four_ties:
            late = single & (self.discards >= 4)
            self.winner[late] = TIE
            single &= ~late
        self.winner[single] = np.argmax(at_top[single], axis=1)

    def discard_ties(self, tied, top, at_top) -> None:
        """Step 3: every pool of a tied side showing the top discards its smallest die of that value."""
        rows = np.arange(len(self.faces))
        for side, members in self.table.pools:
            showing = self.alive[:, members] & (self.faces[:, members] == top[:, None])
            acting = tied & at_top[:, side] & showing.any(axis=1)
            if not acting.any():
                continue
            masked = np.where(showing, self.table.sizes[members][None, :], np.iinfo(np.int64).max)
            pick = members[np.argmin(masked, axis=1)]
            self.alive[rows[acting], pick[acting]] = False
        self.discards[tied] += 1

    def score(self) -> None:
        """Steps 5 and 6 for every decided trial: the success dice, then the concession dice."""
        side_of = self.table.side_of.tolist()
        sizes = self.table.sizes.tolist()
        for t in np.flatnonzero(self.winner >= 0).tolist():
            winner, faces = int(self.winner[t]), self.faces[t].tolist()
            in_play = [j for j, alive in enumerate(self.alive[t].tolist()) if alive]
            mine = [j for j in in_play if side_of[j] == winner]
            theirs = [j for j in in_play if side_of[j] != winner]
            if not self.success_sizes[t]:  # an instant win has set its success die aside already
                won = _success_dice(faces, mine, theirs)
                self.success_sizes[t] = sorted((sizes[j] for j in won), reverse=True)
                mine = [j for j in mine if j not in won]
            for side, gained in _concession_dice(faces, winner, mine, theirs, side_of, self.table.side_count):
                self.concessions[t, side] += gained


def _success_dice(faces, mine, theirs) -> list:
    """Step 5: the winner's dice (columns) showing more than every loser's die in play."""
    bar = max((faces[j] for j in theirs), default=0)
    return [j for j in mine if faces[j] > bar]


def _concession_dice(faces, winner, mine, theirs, side_of, side_count):
    """Step 6: against each loser, the side with the higher die gains its dice above the
    other's highest; yields (side, dice gained)."""
    my_faces = [faces[j] for j in mine]
    my_high = max(my_faces, default=0)
    for s in range(side_count):
        if s == winner:
            continue
        their_faces = [faces[j] for j in theirs if side_of[j] == s]
        their_high = max(their_faces, default=0)
        if my_high > their_high:
            yield winner, sum(f > their_high for f in my_faces)
        elif their_high > my_high:
            yield s, sum(f > my_high for f in their_faces)


def _one_roll(rng, sides, n, four_ties, instant):
    """Simulate ``n`` independent rolls of one contest; returns per-trial arrays."""
    table = _Table.of(sides)
    trials = _Trials(table, rng.integers(1, table.sizes + 1, size=(n, len(table.sizes))))
    trials.compare(four_ties, instant)
    trials.score()
    return trials.winner, trials.success_sizes, trials.concessions


def simulate(
    sides, rules: Rules | None = None, target: int | None = None, *, n: int = 100_000, seed: int = 7
) -> dict[str, list]:
    """`simulate_rows` as columns: ``{column: one value per trial}`` (the same trials).

    >>> simulate([((6,),), ((6,),)], n=3, seed=7)["winner"] == [row["winner"] for row in
    ...     simulate_rows([((6,),), ((6,),)], n=3, seed=7)]
    True
    """
    rows = simulate_rows(sides, rules, target, n=n, seed=seed)
    return {name: [row[name] for row in rows] for name in columns(len(sides))}


def simulate_rows(
    sides, rules: Rules | None = None, target: int | None = None, *, n: int = 100_000, seed: int = 7
) -> list[dict]:
    """Roll ``n`` contests; one dict per trial with the columns of `columns`.

    >>> rows = simulate_rows([((6,),), ((6,),)], n=1000, seed=1)
    >>> sum(row["winner"] == "tie" for row in rows) > 100
    True
    """
    rules = rules or Rules()
    if not isinstance(n, int) or n < 1:
        raise InputError("n", f"must be a whole number >= 1, got {n!r}")
    if n > MAX_TRIALS:
        raise InputError("n", f"{n} trials is more than the limit of {MAX_TRIALS:,}")
    rng = np.random.Generator(np.random.PCG64(seed))
    base = _targeted(sides, target)
    side_count = len(base)
    winner = np.full(n, -1)
    sizes_out: list = [[] for _ in range(n)]
    concessions = np.zeros((n, side_count), dtype=int)
    pushes = np.zeros(n, dtype=int)
    pending = np.arange(n)
    levels = rules.max_pushes if rules.push else 0
    for level in range(levels + 1):
        if not len(pending):
            break
        current = [[list(side[0]) + list(rules.push_dice) * level] + [list(pool) for pool in side[1:]] for side in base]
        instant = False
        if rules.physical:
            instant = any(_rolled_as(s) != s for pool in current[0] for s in pool)
            current[0] = [[_rolled_as(s) for s in pool] for pool in current[0]]
        w, s, c = _one_roll(rng, current, len(pending), rules.four_ties, instant)
        winner[pending] = w
        concessions[pending] = c
        pushes[pending] = level
        for index, t in enumerate(pending):
            sizes_out[t] = s[index]
        pending = pending[w == -1]
    return [_row(int(winner[t]), sizes_out[t], concessions[t], int(pushes[t])) for t in range(n)]


def _row(winner: int, success_sizes, concessions, pushes: int) -> dict:
    """One trial's row (`columns`); ``winner`` is -1 on a tie."""
    won = winner >= 0
    row = {
        "winner": str(winner) if won else "tie",
        "successes": len(success_sizes) if won else 0,
        "success_sizes": ",".join(f"d{x}" for x in success_sizes) if won else "",
    }
    for i, gained in enumerate(concessions):
        row[f"concessions_{i}"] = int(gained)
    row["pushes"] = pushes
    return row


def write_csv(rows: list[dict], path: str, side_count: int) -> None:
    """Write simulated rows as CSV with a header row."""
    with open_output(path, "out") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns(side_count))
        writer.writeheader()
        writer.writerows(rows)


def summarise(rows: list[dict], side_count: int) -> dict:
    """Observed frequency of each winner value (for the short summary without --out).

    >>> summarise([{"winner": "0"}, {"winner": "tie"}], 2)
    {'0': 0.5, '1': 0.0, 'tie': 0.5}
    """
    keys = [str(i) for i in range(side_count)] + ["tie"]
    total = len(rows)
    return {key: sum(row["winner"] == key for row in rows) / total for key in keys}
