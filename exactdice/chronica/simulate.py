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

import numpy as np

from exactdice.chronica.ruleset import PHYSICAL_DICE, Rules
from exactdice.errors import InputError

__all__ = ["simulate", "simulate_rows", "write_csv", "summarise", "columns"]

#: most trials one call simulates
MAX_TRIALS = 10_000_000


def columns(side_count: int) -> list[str]:
    """The CSV header for a contest of ``side_count`` sides.

    >>> columns(2)
    ['winner', 'successes', 'success_sizes', 'concessions_0', 'concessions_1', 'pushes']
    """
    return (["winner", "successes", "success_sizes"]
            + [f"concessions_{i}" for i in range(side_count)] + ["pushes"])


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


def _one_roll(rng, sides, n, four_ties, instant):
    """Simulate ``n`` independent rolls of one contest; returns per-trial arrays."""
    side_count = len(sides)
    layout = [(s, p, size) for s, side in enumerate(sides) for p, pool in enumerate(side) for size in pool]
    sizes = np.array([size for _, _, size in layout])
    owner_side = np.array([s for s, _, _ in layout])
    pool_ids = sorted({(s, p) for s, p, _ in layout})
    pool_of = np.array([pool_ids.index((s, p)) for s, p, _ in layout])
    pool_side = np.array([s for s, _ in pool_ids])
    faces = rng.integers(1, sizes + 1, size=(n, len(layout)))
    alive = np.ones_like(faces, dtype=bool)
    winner = np.full(n, -2)  # -2 undecided, -1 tie
    discards = np.zeros(n, dtype=int)
    success_sizes = [[] for _ in range(n)]
    first = True
    rows = np.arange(n)
    while True:
        undecided = winner == -2
        if not undecided.any():
            break
        shown = np.where(alive, faces, 0)
        side_high = np.stack([shown[:, owner_side == s].max(axis=1) for s in range(side_count)], axis=1)
        top = side_high.max(axis=1)
        at_top = side_high == top[:, None]
        n_top = at_top.sum(axis=1)
        out_of_dice = undecided & (top == 0)
        winner[out_of_dice] = -1
        if instant and first:
            hit = undecided & (top > 0) & (n_top >= 2) & at_top[:, 0]
            for t in np.flatnonzero(hit):
                candidates = [j for j in range(len(layout)) if owner_side[j] == 0 and faces[t, j] == top[t]]
                best = max(candidates, key=lambda j: sizes[j])
                alive[t, best] = False
                success_sizes[t] = [int(sizes[best])]
                winner[t] = 0
            undecided = winner == -2
        first = False
        single = undecided & (top > 0) & (n_top == 1)
        if four_ties:
            late = single & (discards >= 4)
            winner[late] = -1
            single &= ~late
        winner[single] = np.argmax(at_top[single], axis=1)
        tied = (winner == -2) & (top > 0) & (n_top >= 2)
        if four_ties:
            too_many = tied & (discards >= 4)
            winner[too_many] = -1
            tied &= ~too_many
        if not tied.any():
            continue
        # every pool of a tied side showing the top discards its smallest die of that value
        for pool_index in range(len(pool_ids)):
            members = np.flatnonzero(pool_of == pool_index)
            side = pool_side[pool_index]
            showing = alive[:, members] & (faces[:, members] == top[:, None])
            acting = tied & at_top[:, side] & showing.any(axis=1)
            if not acting.any():
                continue
            # the smallest size among the dice showing the top value
            masked = np.where(showing, sizes[members][None, :], np.iinfo(np.int64).max)
            pick = members[np.argmin(masked, axis=1)]
            alive[rows[acting], pick[acting]] = False
        discards[tied] += 1
    concessions = np.zeros((n, side_count), dtype=int)
    for t in range(n):
        w = winner[t]
        if w < 0:
            continue
        mine = [j for j in range(len(layout)) if alive[t, j] and owner_side[j] == w]
        theirs = [j for j in range(len(layout)) if alive[t, j] and owner_side[j] != w]
        if not success_sizes[t]:
            bar = max((faces[t, j] for j in theirs), default=0)
            won = [j for j in mine if faces[t, j] > bar]
            success_sizes[t] = sorted((int(sizes[j]) for j in won), reverse=True)
            mine = [j for j in mine if j not in won]
        my_faces = [faces[t, j] for j in mine]
        my_high = max(my_faces, default=0)
        for s in range(side_count):
            if s == w:
                continue
            their_faces = [faces[t, j] for j in theirs if owner_side[j] == s]
            their_high = max(their_faces, default=0)
            if my_high > their_high:
                concessions[t, w] += sum(f > their_high for f in my_faces)
            elif their_high > my_high:
                concessions[t, s] += sum(f > my_high for f in their_faces)
    return winner, success_sizes, concessions


def simulate(sides, rules: Rules | None = None, target: int | None = None,
             *, n: int = 100_000, seed: int = 7) -> dict[str, list]:
    """`simulate_rows` as columns: ``{column: one value per trial}`` (the same trials).

    >>> simulate([((6,),), ((6,),)], n=3, seed=7)["winner"] == [row["winner"] for row in
    ...     simulate_rows([((6,),), ((6,),)], n=3, seed=7)]
    True
    """
    rows = simulate_rows(sides, rules, target, n=n, seed=seed)
    return {name: [row[name] for row in rows] for name in columns(len(sides))}


def simulate_rows(sides, rules: Rules | None = None, target: int | None = None,
                  *, n: int = 100_000, seed: int = 7) -> list[dict]:
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
        current = [[list(side[0]) + list(rules.push_dice) * level] + [list(pool) for pool in side[1:]]
                   for side in base]
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
    return [_row(int(winner[t]), sizes_out[t], concessions[t], int(pushes[t]))
            for t in range(n)]


def _row(winner: int, success_sizes, concessions, pushes: int) -> dict:
    """One trial's row (`columns`); ``winner`` is -1 on a tie."""
    won = winner >= 0
    row = {"winner": str(winner) if won else "tie",
           "successes": len(success_sizes) if won else 0,
           "success_sizes": ",".join(f"d{x}" for x in success_sizes) if won else ""}
    for i, gained in enumerate(concessions):
        row[f"concessions_{i}"] = int(gained)
    row["pushes"] = pushes
    return row


def write_csv(rows: list[dict], path: str, side_count: int) -> None:
    """Write simulated rows as CSV with a header row."""
    try:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns(side_count))
            writer.writeheader()
            writer.writerows(rows)
    except OSError as error:
        raise InputError("out", f"cannot write {path}: {error.strerror or error}") from None


def summarise(rows: list[dict], side_count: int) -> dict:
    """Observed frequency of each winner value (for the short summary without --out).

    >>> summarise([{"winner": "0"}, {"winner": "tie"}], 2)
    {'0': 0.5, '1': 0.0, 'tie': 0.5}
    """
    keys = [str(i) for i in range(side_count)] + ["tie"]
    total = len(rows)
    return {key: sum(row["winner"] == key for row in rows) / total for key in keys}
