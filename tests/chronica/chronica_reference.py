"""A literal, one-roll-at-a-time reading of the Chronica procedure, for brute-force checks.

Written straight from `shared/spec/chronica.md` (steps 2-6, point 8), independent of the
dynamic program. Each die is a (size, face) pair; pools are lists of them.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product
from math import prod

PHYSICAL = (4, 6, 8, 10, 12, 20)


def physical(size):
    smaller = [p for p in PHYSICAL if p <= size]
    return max(smaller) if smaller else size


def resolve(rolled, *, four_ties=False, instant=False):
    """rolled: sides -> pools -> list of (size, face). Returns (winner, sizes, concessions)."""
    pools = [[sorted(pool, key=lambda die: (-die[1], -die[0])) for pool in side] for side in rolled]
    count = len(pools)

    def high(side):
        return max((pool[0][1] for pool in pools[side] if pool), default=0)

    discards = 0
    first = True
    while True:
        highs = [high(s) for s in range(count)]
        top = max(highs)
        if top == 0:
            return (-1, (), (0,) * count)
        at_top = [s for s in range(count) if highs[s] == top]
        if instant and first and len(at_top) >= 2 and 0 in at_top:
            best = max(size for pool in pools[0] for size, face in pool if face == top)
            # set the success die aside, the rest stays in play
            for pool in pools[0]:
                if (best, top) in pool:
                    pool.remove((best, top))
                    break
            return (0, (best,), _concessions(pools, 0))
        first = False
        if len(at_top) == 1:
            winner = at_top[0]
            break
        if four_ties and discards >= 4:
            return (-1, (), (0,) * count)
        for s in at_top:
            for pool in pools[s]:
                if pool and pool[0][1] == top:
                    # discard the smallest die showing the tied value
                    smallest = min(size for size, face in pool if face == top)
                    pool.remove((smallest, top))
        discards += 1
    if four_ties and discards >= 4:
        return (-1, (), (0,) * count)
    losers_high = max((high(s) for s in range(count) if s != winner), default=0)
    sizes = []
    for pool in pools[winner]:
        for die in list(pool):
            if die[1] > losers_high:
                sizes.append(die[0])
                pool.remove(die)
    return (winner, tuple(sorted(sizes, reverse=True)), _concessions(pools, winner))


def _concessions(pools, winner):
    count = len(pools)
    gains = [0] * count
    win_faces = [face for pool in pools[winner] for _, face in pool]
    win_high = max(win_faces, default=0)
    for s in range(count):
        if s == winner:
            continue
        faces = [face for pool in pools[s] for _, face in pool]
        other_high = max(faces, default=0)
        if win_high > other_high:
            gains[winner] += sum(1 for f in win_faces if f > other_high)
        elif other_high > win_high:
            gains[s] += sum(1 for f in faces if f > win_high)
    return tuple(gains)


def brute_force(sides, *, four_ties=False, physical_dice=False):
    """Exact outcome probabilities of ONE roll by enumerating every face of every die."""
    instant = False
    if physical_dice:
        instant = any(physical(s) != s for pool in sides[0] for s in pool)
        sides = [[[physical(s) for s in pool] for pool in sides[0]]] + [list(map(list, side)) for side in sides[1:]]
    layout = [(s, p, size) for s, side in enumerate(sides) for p, pool in enumerate(side) for size in pool]
    counts = Counter()
    for faces in product(*(range(1, size + 1) for _, _, size in layout)):
        rolled = [[[] for _ in side] for side in sides]
        for (s, p, size), face in zip(layout, faces):
            rolled[s][p].append((size, face))
        counts[resolve(rolled, four_ties=four_ties, instant=instant)] += 1
    total = prod(size for _, _, size in layout)
    return {outcome: Fraction(n, total) for outcome, n in counts.items()}


def with_pushes(sides, *, max_pushes, push_dice=(), four_ties=False, physical_dice=False):
    """Brute force of a whole contest with pushes on a tie."""
    result = Counter()
    carry = Fraction(1)
    tie_key = None
    for level in range(max_pushes + 1):
        extra = list(push_dice) * level
        current = [[list(side[0]) + extra] + [list(pool) for pool in side[1:]] for side in sides]
        table = brute_force(current, four_ties=four_ties, physical_dice=physical_dice)
        tie_key = (-1, (), (0,) * len(sides))
        for outcome, p in table.items():
            if outcome != tie_key:
                result[outcome] += carry * p
        carry *= table.get(tie_key, 0)
    if carry:
        result[tie_key] += carry
    return dict(result)
