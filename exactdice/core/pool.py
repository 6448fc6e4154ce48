"""Pools of mixed dice evaluated over their *sorted* faces by dynamic programming.

A pool is a multiset of dice, kept as groups of (die, count). `evaluate_sorted` walks
the face values one at a time (highest first by default); at each value it branches
on how many dice of each group show it, weighted by binomial coefficients, and calls
a user transition on the running state. It never lists individual rolls, so 100d20
keep-highest-10 costs a few thousand states, not 20**100 rolls.

Why the integer weights come out exact: walking down, the dice of a group not yet
placed are uniform (by weight) on the faces at or below the current value, so "k of
the m remaining show v" has weight C(m, k) * w(v)**k * W(<v)**(m-k) over W(<=v)**m;
the W(<v) factors cancel against the next step's denominator, leaving a path weight
prod C(m, k) * w(v)**k over the fixed total prod W**count.

>>> from exactdice.core.distribution import d
>>> Pool([d(6), d(6), d(6)]).order_statistic(1).probability(1)  # middle of three d6
Fraction(2, 27)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from math import comb

from exactdice.core.distribution import Distribution
from exactdice.errors import TooLargeError, check_invariant

__all__ = ["Pool", "evaluate_sorted", "MAX_POOL_DICE"]

#: largest number of dice one pool may hold
MAX_POOL_DICE = 1000


def evaluate_sorted(
    groups: Sequence[tuple[Distribution, int]],
    transition: Callable[[Hashable, object, tuple[int, ...]], Hashable],
    initial: Hashable = None,
    final: Callable[[Hashable], Hashable] | None = None,
    *,
    descending: bool = True,
    settled: Callable[[Hashable], bool] | None = None,
) -> Distribution:
    """Distribution of ``final(state)`` after feeding the sorted faces of all groups.

    A dynamic program over face values: at each value it weighs "k of these n dice show
    it" by binomial coefficients, never listing rolls.

    Parameters
    ----------
    groups : sequence of (Distribution, int)
        ``(die, count)`` pairs; dice of different groups may have different faces.
    transition : callable
        ``transition(state, face, counts) -> state`` where ``counts[i]`` is how many dice of
        group ``i`` show ``face``. Called once per face value that any group can show
        (counts may all be 0), highest face first when *descending*.
    initial : Hashable, optional
        The starting state.
    final : callable, optional
        Maps the last state to the outcome (identity when omitted).
    descending : bool, default True
        Feed the faces from the highest down (else from the lowest up).
    settled : callable, optional
        ``settled(state) -> bool``; once true, the state can no longer change, and the dice
        not yet placed are summed out at once (a large speed-up for keep-highest on big
        pools).

    Returns
    -------
    Distribution
        The exact distribution of the final states.

    Examples
    --------
    >>> from exactdice.core.distribution import d
    >>> highest = evaluate_sorted([(d(6), 2)], lambda s, face, c: s or (face if c[0] else 0), 0)
    >>> highest.probability(6)
    Fraction(11, 36)
    """
    walk = _SortedWalk(groups, descending)
    layer: dict = {(initial, walk.counts): 1}
    for face in walk.faces:
        layer = walk.step(layer, face, transition, settled)
    result: dict = {}
    for (state, remaining), weight in layer.items():
        check_invariant(not any(remaining), "every die must be placed by the last face")
        outcome = final(state) if final is not None else state
        result[outcome] = result.get(outcome, 0) + weight
    return Distribution(result)


class _SortedWalk:
    """The faces of one `evaluate_sorted` walk, in walk order, and each group's weights.

    A layer maps ``(state, dice not yet placed per group)`` to an integer weight.
    """

    def __init__(self, groups, descending: bool):
        self.groups = [(die, count) for die, count in groups]
        self.counts = tuple(count for _, count in self.groups)
        self.faces = sorted(
            {face for die, count in self.groups if count for face in die.outcomes()}, reverse=descending
        )
        self.weight_at = [die.weights() for die, _ in self.groups]
        # per group: the weight of the faces after each face in the walk
        self.beyond = [_weight_beyond(die, self.faces) for die, _ in self.groups]

    def step(self, layer: dict, face, transition, settled) -> dict:
        """The next layer: each state branches on how many dice of each group show ``face``."""
        next_layer: dict = {}
        splits_cache: dict = {}
        leftover_cache: dict = {}
        for (state, remaining), weight in layer.items():
            if not any(remaining):
                next_layer[(state, remaining)] = next_layer.get((state, remaining), 0) + weight
                continue
            splits = splits_cache.get(remaining)
            if splits is None:
                splits = splits_cache[remaining] = [
                    (counts, branch_weight, tuple(m - k for m, k in zip(remaining, counts)))
                    for counts, branch_weight in _count_splits(
                        self.groups, self.weight_at, self.beyond, face, remaining
                    )
                ]
            local: dict = {}  # sum branch weights per successor before scaling by `weight`
            for counts, branch_weight, new_remaining in splits:
                new_state = transition(state, face, counts)
                if settled is not None and any(new_remaining) and settled(new_state):
                    branch_weight *= self._leftover(leftover_cache, face, new_remaining)
                    new_remaining = _NONE_LEFT[len(new_remaining)]
                key = (new_state, new_remaining)
                local[key] = local.get(key, 0) + branch_weight
            for key, branch_weight in local.items():
                next_layer[key] = next_layer.get(key, 0) + weight * branch_weight
        return next_layer

    def _leftover(self, cache: dict, face, remaining) -> int:
        """Weight of every way the dice not yet placed can fall (a settled state sums them out)."""
        factor = cache.get(remaining)
        if factor is None:
            factor = 1
            for index, m in enumerate(remaining):
                if m:
                    factor *= self.beyond[index][face] ** m
            cache[remaining] = factor
        return factor


def _weight_beyond(die: Distribution, faces) -> dict:
    """Face -> total weight of the die's faces after it in the walk order ``faces``."""
    remaining = die.denominator
    table = {}
    for face in faces:
        remaining -= die.weight(face)
        table[face] = remaining
    return table


class _NoneLeft(dict):
    def __missing__(self, size):
        self[size] = (0,) * size
        return self[size]


_NONE_LEFT = _NoneLeft()


def _count_splits(groups, weight_at, beyond, face, remaining):
    """Yield (counts per group, integer weight) for the dice showing ``face``."""
    options_per_group = []
    for index, m in enumerate(remaining):
        w = weight_at[index].get(face, 0)
        rest = beyond[index][face]
        if m == 0 or w == 0:
            # nobody of this group shows the face: the factor W(<v)**m / W(<=v)**m is 1
            options = [(0, 1)] if (rest or m == 0) else []
        else:
            options = []
            for k in range(m + 1):
                if m - k and not rest:
                    continue
                options.append((k, comb(m, k) * w**k))
        if not options:
            return
        options_per_group.append(options)
    yield from _product(options_per_group)


def _product(options_per_group):
    if not options_per_group:
        yield (), 1
        return
    head, *tail = options_per_group
    tails = list(_product(tail))
    for k, w in head:
        for ks, ws in tails:
            yield (k,) + ks, w * ws


def _keep_one_kind(die: Distribution, count: int, keep: int, descending: bool) -> Distribution:
    """Sum of the ``keep`` best of ``count`` identical dice.

    The same walk as `evaluate_sorted`, but every "k or more of the m left show this
    face" that fills the kept set is one binomial tail sum, so the work grows with
    ``keep``, not with ``count``.
    """
    faces = sorted(die.outcomes(), reverse=descending)
    beyond = die.denominator
    layer = {(0, 0): 1}  # (dice kept so far, their sum) -> weight; all kept dice seen so far
    done: dict = {}
    if keep == 0:
        return Distribution({0: 1})
    for face in faces:
        w = die.weight(face)
        beyond -= w
        next_layer: dict = {}
        tails: dict = {}  # dice kept so far -> weight of filling the kept set at this face
        for (kept, total), weight in layer.items():
            left = count - kept
            need = keep - kept
            for k in range(need):
                if left - k and not beyond:
                    break
                key = (kept + k, total + k * face)
                next_layer[key] = next_layer.get(key, 0) + weight * comb(left, k) * w**k
            tail = tails.get(kept)
            if tail is None:
                tail = tails[kept] = sum(comb(left, k) * w**k * beyond ** (left - k) for k in range(need, left + 1))
            if tail:
                final = total + need * face
                done[final] = done.get(final, 0) + weight * tail
        layer = next_layer
    return Distribution(done)


class Pool:
    """A multiset of dice (any mix of sizes), evaluated one face value at a time.

    Parameters
    ----------
    dice : iterable of Distribution, or sequence of (Distribution, int)
        The dice, one distribution each, or ``(die, count)`` groups.

    Raises
    ------
    ValueError
        When a group's count is negative.
    TooLargeError
        When the pool holds more than `MAX_POOL_DICE` dice.

    Examples
    --------
    >>> from exactdice.core.distribution import d
    >>> Pool([d(6)] * 4).keep_highest(3).mean()
    Fraction(15869, 1296)
    """

    def __init__(self, dice: Iterable[Distribution] | Sequence[tuple[Distribution, int]] = ()):
        counts: dict[Distribution, int] = {}
        for item in dice:
            die, count = item if isinstance(item, tuple) else (item, 1)
            if count < 0:
                raise ValueError("a group count must be >= 0")
            counts[die] = counts.get(die, 0) + count
        self.groups: tuple[tuple[Distribution, int], ...] = tuple(
            (die, count) for die, count in counts.items() if count
        )
        self.size = sum(count for _, count in self.groups)
        if self.size > MAX_POOL_DICE:
            raise TooLargeError("pool", f"{self.size} dice is more than the limit of {MAX_POOL_DICE}")

    def __len__(self) -> int:
        return self.size

    def evaluate(self, transition, initial=None, final=None, *, descending=True, settled=None) -> Distribution:
        """`evaluate_sorted` over this pool's groups (see there)."""
        return evaluate_sorted(self.groups, transition, initial, final, descending=descending, settled=settled)

    def sum(self) -> Distribution:
        """Sum of all dice.

        >>> from exactdice.core.distribution import d
        >>> Pool([d(6), d(8)]).sum().probability(2)
        Fraction(1, 48)
        """
        total = Distribution({0: 1})
        for die, count in self.groups:
            total = total + die.sum_of(count)
        return total

    def keep_highest(self, keep: int) -> Distribution:
        """Sum of the ``keep`` highest dice.

        >>> from exactdice.core.distribution import d
        >>> Pool([d(20), d(20)]).keep_highest(1).probability(20)
        Fraction(39, 400)
        """
        return self._keep(keep, descending=True)

    def keep_lowest(self, keep: int) -> Distribution:
        """Sum of the ``keep`` lowest dice.

        >>> from exactdice.core.distribution import d
        >>> Pool([d(20), d(20)]).keep_lowest(1).probability(20)
        Fraction(1, 400)
        """
        return self._keep(keep, descending=False)

    def _keep(self, keep: int, descending: bool) -> Distribution:
        if not 0 <= keep <= self.size:
            raise ValueError(f"cannot keep {keep} of {self.size} dice")
        if len(self.groups) == 1:
            return _keep_one_kind(*self.groups[0], keep, descending)

        def take(state, face, counts):
            taken, total = state
            k = min(sum(counts), keep - taken)
            return (taken + k, total + k * face) if k else state

        return self.evaluate(
            take, (0, 0), lambda state: state[1], descending=descending, settled=lambda state: state[0] == keep
        )

    def order_statistic(self, position: int) -> Distribution:
        """Face of the die at ``position`` in ascending order (0 = lowest).

        >>> from exactdice.core.distribution import d
        >>> Pool([d(6), d(8), d(10)]).order_statistic(1).probability(1)
        Fraction(11, 240)
        """
        if not 0 <= position < self.size:
            raise ValueError(f"position {position} is outside a pool of {self.size} dice")
        target = position  # ascending walk: the face when the count passes `position`

        def step(state, face, counts):
            seen, found = state
            if found is not None:
                return state
            seen += sum(counts)
            return (seen, face if seen > target else None)

        return self.evaluate(
            step, (0, None), lambda state: state[1], descending=False, settled=lambda state: state[1] is not None
        )

    def count_where(self, predicate: Callable) -> Distribution:
        """Number of dice whose face satisfies ``predicate``.

        >>> from exactdice.core.distribution import d
        >>> Pool([d(6)] * 2).count_where(lambda face: face == 6).probability(2)
        Fraction(1, 36)
        """
        total = Distribution({0: 1})
        for die, count in self.groups:
            total = total + die.map(lambda face: int(bool(predicate(face)))).sum_of(count)
        return total
