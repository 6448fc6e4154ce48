"""Certified float answers: every probability and expectation as an interval that holds
the exact value, from compiled interval iteration (`exactdice.markov._interval`).

Where exact rationals are too costly, floats are fast but wrong by an unknown amount;
here each number comes with a lower and an upper bound, both computed from the graph's
exact integer weights with outward rounding, and the iteration runs until every interval
at the initial state is narrower than the tolerance asked for. So "certified to within
1e-9" means: the exact value lies between the two bounds printed, and they are at most
1e-9 apart.

>>> from exactdice.markov.graph import explore
>>> from exactdice.markov.synthetic import GamblersRuin
>>> answer = certified_solve(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
>>> low, high = answer.absorption["win"]
>>> low <= 1/3 <= high and high - low <= 1e-9
True
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.limits import check_memory
from exactdice.markov.arrays import csr_arrays
from exactdice.markov.graph import DECISION, StateGraph
from exactdice.processes import usable_cores

__all__ = ["IntervalSolution", "certified_solve", "certified_game", "compiled_bounds_available", "DEFAULT_TOLERANCE"]

#: the width asked of every interval at the initial state
DEFAULT_TOLERANCE = 1e-9
# Gauss-Seidel sweeps a cyclic component gets at most before its width is reported as it is
_MOST_SWEEPS = 1_000_000

try:
    from exactdice.markov import _interval
except ImportError:  # an install that could not build the extension
    _interval = None  # type: ignore[assignment]

Interval = tuple[float, float]


def compiled_bounds_available() -> bool:
    """Whether the compiled interval iteration is built in this install.

    >>> isinstance(compiled_bounds_available(), bool)
    True
    """
    return _interval is not None


@dataclass
class IntervalSolution:
    """Certified intervals at the initial state: each ``(low, high)`` holds the exact value.

    Attributes
    ----------
    absorption : dict
        Outcome -> interval of its probability.
    never_ends : tuple
        Interval of the probability that play never ends.
    value : tuple
        Interval of the expected payoff.
    expected_steps : tuple or None
        Interval of the expected number of chance steps (None where play may never end,
        or where not asked for).
    expected_rewards : dict
        Reward counter -> interval of its expected total (None where play may never end).
        A reward of one sign is within ``tolerance`` relative to 1 + its expectation; one
        of both signs is bounded as its positive part minus its negative part, each within
        ``tolerance / 4`` relative to 1 + that part.
    width : float
        The widest interval among the outcome probabilities (at most ``tolerance`` unless
        the sweeps ran out).
    tolerance : float
        The width asked for.
    states, transitions, sweeps : int
        The graph's size and the Gauss-Seidel sweeps made.
    seconds : float
        Time spent.
    strategy : dict
        For a graph with decisions (`certified_game`): decision node -> the edge each
        side's strategy found takes (the outcomes' and expectations' intervals are those of
        that play; ``value``'s is the game's).
    """

    absorption: dict
    never_ends: Interval
    value: Interval
    expected_steps: Interval | None
    expected_rewards: dict
    width: float
    tolerance: float
    states: int
    transitions: int
    sweeps: int
    seconds: float
    strategy: dict | None = None

    @property
    def certified(self) -> bool:
        """Whether every outcome's interval is within the tolerance."""
        return self.width <= self.tolerance


def certified_solve(
    graph: StateGraph,
    *,
    payoff: dict | None = None,
    nonterminating_payoff=None,
    tolerance: float = DEFAULT_TOLERANCE,
    rewards: bool = True,
    steps: bool = True,
    most_sweeps: int = _MOST_SWEEPS,
) -> IntervalSolution:
    """Certified intervals for a graph without decisions (a chain).

    Parameters
    ----------
    graph : StateGraph
        An explored graph (`exactdice.markov.explore`).
    payoff : dict, optional
        Outcome -> payoff for the value (default 1 for the first outcome).
    nonterminating_payoff : number, optional
        What never-ending play pays (default 0).
    tolerance : float, default 1e-9
        The width to reach at the initial state, for each outcome's probability (and,
        relative to 1 + the value, for each expectation).
    rewards : bool, default True
        Also bound the expected rewards (and steps).
    steps : bool, default True
        With ``rewards``, also bound the expected steps (chance nodes passed); a caller
        that counts its steps as a reward of its own skips them (``expected_steps`` None).
    most_sweeps : int
        Sweeps a cyclic component gets at most.

    Returns
    -------
    IntervalSolution

    Raises
    ------
    InputError
        For a graph with decisions (`exactdice.markov.solve` answers those), or a
        tolerance that is not a positive number.
    """
    if not tolerance > 0:
        raise InputError("tolerance", f"must be a positive number, got {tolerance!r}")
    if _interval is None:
        raise InputError("arithmetic", "the certified float solver is not built in this install; use the exact solve")
    if DECISION in graph.kind:
        raise InputError(
            "arithmetic",
            "certified floats take a graph without decisions (fixed or random "
            "policies); solve optimal play exactly or with bounds",
        )
    if len(graph.outcomes) > _interval.MOST_OUTCOMES:
        raise InputError(
            "arithmetic",
            f"certified floats take at most {_interval.MOST_OUTCOMES} outcomes, this graph has {len(graph.outcomes)};"
            " use the exact solve",
        )
    started = time.perf_counter()
    csr = csr_arrays(graph)
    outcomes = graph.outcomes
    overrides = {node: (total, weights) for node, (total, weights) in csr.big.items()}

    def check():
        check_memory("while computing certified bounds")

    initial = graph.initial
    found_parts: list = []  # the reachable components, once found (on the bounds' side)
    parts_known, may_not_end, reach_known = threading.Event(), threading.Event(), threading.Event()

    def bounds(check):
        try:
            found_parts.append(_interval.reachable_components(csr.offsets, csr.targets, initial))
        finally:
            parts_known.set()
        parts = found_parts[0]
        try:
            reach = _interval.outcome_reach(csr.kind, csr.data, csr.offsets, csr.targets, parts)
            ends_for_sure = _ends_for_sure(reach)
            if not ends_for_sure:
                may_not_end.set()
        finally:
            reach_known.set()
        found = _interval.chain_bounds(
            csr.kind,
            csr.data,
            csr.offsets,
            csr.targets,
            csr.weights,
            len(outcomes),
            reach,
            tolerance / 2,
            most_sweeps,
            parts,
            overrides,
            check,
        )
        return ends_for_sure, found

    def expectations(check):
        # begun beside the outcomes' reach; given up where play may not end (its
        # expectations need not be finite, and may fail to converge before that is known)
        def checked():
            if may_not_end.is_set():
                raise _Stopped
            check()

        def parts():  # (prepared meanwhile: the components are found without the GIL)
            while not parts_known.wait(0.05):
                checked()
            if not found_parts:
                raise _Stopped
            return found_parts[0]

        try:
            checked()
            return _expectations(csr, graph, initial, tolerance, most_sweeps, checked, parts, steps)
        except BaseException:
            while not reach_known.wait(0.05):
                check()  # (raises once the other side has stopped)
            if may_not_end.is_set():
                return None
            raise

    expected_steps, expected = None, {name: None for name in graph.reward_names}
    if rewards:
        (ends_for_sure, found), expected_found = _side_by_side(bounds, expectations, check)
        if ends_for_sure:
            expected_steps, expected = expected_found
    else:
        ends_for_sure, found = bounds(check)
    lower, negated_upper, sweeps, _widest = found
    absorption = {
        name: (float(lower[initial, i]), -float(negated_upper[initial, i])) for i, name in enumerate(outcomes)
    }
    width = max((high - low for low, high in absorption.values()), default=0.0)
    never_low = _down(1 - sum((Fraction(high) for _, high in absorption.values()), Fraction(0)))
    never_high = _up(1 - sum((Fraction(low) for low, _ in absorption.values()), Fraction(0)))
    never_ends = (max(0.0, never_low), min(1.0, never_high))
    value = _value_interval(absorption, never_ends, outcomes, payoff, nonterminating_payoff)
    return IntervalSolution(
        absorption=absorption,
        never_ends=(0.0, 0.0) if ends_for_sure else never_ends,
        value=value,
        expected_steps=expected_steps,
        expected_rewards=expected,
        width=width,
        tolerance=tolerance,
        states=graph.num_states,
        transitions=graph.num_transitions,
        sweeps=int(sweeps),
        seconds=time.perf_counter() - started,
    )


def certified_game(
    graph: StateGraph,
    *,
    payoff: dict | None = None,
    nonterminating_payoff=None,
    tolerance: float = DEFAULT_TOLERANCE,
    rewards: bool = True,
    steps: bool = True,
) -> IntervalSolution:
    """Certified intervals for a graph with decisions ("max" and "min" nodes).

    The value's interval is the game's: interval iteration over the whole graph,
    component by component with end components settled (`exactdice.markov._interval.
    GameSearch.solve_all`). The outcomes and expectations are those of the strategies
    found (each side's choices best for its bounds), certified on the chain they leave.

    Parameters are those of `certified_solve`.

    Returns
    -------
    IntervalSolution
        With ``strategy`` set.

    Raises
    ------
    InputError
        Where the compiled solver is not built, or a tolerance that is not positive.
    """
    import numpy

    from exactdice.markov._graph import CsrGraph
    from exactdice.markov._interval import GameSearch

    if not tolerance > 0:
        raise InputError("tolerance", f"must be a positive number, got {tolerance!r}")
    if _interval is None:
        raise InputError("arithmetic", "the certified float solver is not built in this install; use the exact solve")
    started = time.perf_counter()
    outcomes = graph.outcomes
    if payoff is None:
        payoff = {name: (1 if i == 0 else 0) for i, name in enumerate(outcomes)}
    csr = csr_arrays(graph)
    owner = getattr(graph, "owner", None)
    grown = (
        owner
        if owner is not None and hasattr(owner, "expand_node")
        else CsrGraph(csr.kind, csr.data, csr.offsets, csr.targets, csr.weights, csr.big)
    )
    search = GameSearch(
        grown,
        [float(Fraction(payoff.get(name, 0))) for name in outcomes],
        float(Fraction(nonterminating_payoff or 0)),
        graph.initial,
    )

    def check():
        check_memory("while computing certified bounds")

    sweeps, _widest = search.solve_all(tolerance / 2, check=check)
    value = search.bounds(graph.initial)
    # each side's choices within the tolerance of its best (the bounds are that close)
    chosen = search.strategy_edges(tolerance)
    # the play of the strategies found: each decision node keeps its chosen edge only
    # the play of the strategies found: each decision node a chance node keeping its chosen
    # edge alone (weight 1 of 1), the edge's rewards its reward mass
    kind, offsets, data, mass = csr.kind.copy(), csr.offsets, csr.data.copy(), csr.mass.copy()
    counts = numpy.diff(offsets)
    keep = numpy.ones(len(csr.targets), dtype=bool)
    for node in numpy.flatnonzero(kind == DECISION).tolist():
        low, high = int(offsets[node]), int(offsets[node + 1])
        edge = chosen.get(node, low)
        keep[low:high] = False
        keep[edge] = True
        counts[node], kind[node], data[node] = 1, 1, 1
        earned = graph.action_rewards.get(edge)
        if earned:
            mass[node] = earned
    played = _PlayedGraph(
        graph,
        kind,
        data,
        numpy.concatenate([[0], numpy.cumsum(counts)]).astype(numpy.int64),
        csr.targets[keep],
        csr.weights[keep],
        mass,
        csr,
    )
    answer = certified_solve(
        played,
        payoff=payoff,
        nonterminating_payoff=nonterminating_payoff,
        tolerance=tolerance,
        rewards=rewards,
        steps=steps,
    )
    answer.value = (float(value[0]), float(value[1]))
    answer.sweeps += int(sweeps)
    answer.seconds = time.perf_counter() - started
    answer.strategy = chosen
    answer.states, answer.transitions = graph.num_states, graph.num_transitions
    return answer


class _PlayedGraph(StateGraph):
    """The chain a pair of strategies leaves of a game (`certified_game`): its arrays only."""

    def __init__(self, graph, kind, data, offsets, targets, weights, mass, csr):
        from exactdice.markov.arrays import Csr

        self.outcomes, self.reward_names, self.initial = graph.outcomes, graph.reward_names, graph.initial
        self.kind = bytearray(kind.tobytes())
        self.csr = Csr(
            kind,
            data,
            offsets,
            targets.astype("int32"),
            weights.astype("int64"),
            mass,
            {node: big for node, big in csr.big.items() if kind[node] == 1 and csr.kind[node] == 1},
            csr.big_mass,
        )

    @property
    def num_states(self) -> int:
        return len(self.kind)

    @property
    def num_transitions(self) -> int:
        return len(self.csr.targets)


def _side_by_side(first, second, check):
    """``(first(check), second(check))``, the second in a thread of its own where this
    process may run on two processors (the compiled sweeps run without the GIL). Once
    either raises, the other stops at its next ``check``; the first error is raised.

    >>> _side_by_side(lambda check: 1, lambda check: 2, lambda: None)
    (1, 2)
    """
    if usable_cores() < 2:
        return first(check), second(check)
    stop = threading.Event()
    results: dict[str, object] = {}
    errors: list[BaseException] = []

    def checked():
        if stop.is_set():
            raise _Stopped
        check()

    def run(name, task):
        try:
            results[name] = task(checked)
        except BaseException as error:  # raised in the caller's thread, below
            errors.append(error)
            stop.set()

    beside = threading.Thread(target=run, args=("second", second), name="exactdice-certified-beside", daemon=True)
    beside.start()
    try:
        run("first", first)
        beside.join()
    except BaseException:  # an interrupt while waiting
        stop.set()
        raise
    for error in errors:
        if not isinstance(error, _Stopped):
            raise error
    return results["first"], results["second"]


class _Stopped(Exception):
    """The other task of `_side_by_side` failed."""


def _ends_for_sure(reach) -> bool:
    """Whether every node reachable from the initial one can still reach an outcome (its
    reach mask, bit 63 marking the nodes reached): then play ends with probability 1 (a
    finite chain leaves its transient part for sure)."""
    import numpy

    reached = (reach & numpy.uint64(_interval.REACHED)) != 0
    return bool(((reach & numpy.uint64(_interval.REACHED - 1))[reached] != 0).all())


def _expectations(csr, graph, initial, tolerance, most_sweeps, check, parts, steps=True):
    """``(steps, rewards)``: intervals of the expected steps (None unless ``steps``) and
    of each reward; ``parts()`` gives the reachable components (waiting for them). A reward
    that no node pays is 0 exactly, and is not swept. The compiled routine bounds totals of
    rewards >= 0, so a reward that can be negative is split into its positive and its
    negative parts, node by node (an expectation is linear in the per-node masses)."""
    signed, paid = _reward_signs(csr)
    swept = [r for r in range(len(paid)) if paid[r]]
    rewards = {name: (0.0, 0.0) for name, pays in zip(graph.reward_names, paid) if not pays}
    if not steps and not swept:
        return None, rewards
    mass, overrides = _swept_masses(csr, steps, [(r, signed[r]) for r in swept])
    lower, negated_upper, _widest, _sweeps = _interval.chain_expectations(
        csr.kind,
        csr.data,
        csr.offsets,
        csr.targets,
        csr.weights,
        mass,
        tolerance / 4,
        most_sweeps,
        parts(),
        overrides,
        check,
    )
    low, high = lower[initial], -negated_upper[initial]
    place = int(steps)
    for r in swept:
        name = graph.reward_names[r]
        if not signed[r]:
            rewards[name] = (float(low[place]), float(high[place]))
        else:  # differences of two bounded totals, rounded outward
            plus, minus = place, place + 1
            rewards[name] = (
                _down(Fraction(float(low[plus])) - Fraction(float(high[minus]))),
                _up(Fraction(float(high[plus])) - Fraction(float(low[minus]))),
            )
        place += 2 if signed[r] else 1
    expected_steps = (float(low[0]), float(high[0])) if steps else None
    return expected_steps, {name: rewards[name] for name in graph.reward_names}


def _reward_signs(csr) -> tuple[list, list]:
    """``(signed, paid)`` per reward column: whether a node pays it a negative amount, and
    whether any node pays it at all."""
    import numpy

    rows = csr.mass
    if csr.big_mass:  # a node of `big_mass` holds -1 in its mass columns: read its ints
        exact_rows = numpy.ones(len(csr.kind), dtype=bool)
        exact_rows[list(csr.big_mass)] = False
        rows = csr.mass[exact_rows]
    lowest, highest = rows.min(axis=0, initial=0), rows.max(axis=0, initial=0)
    big = list(csr.big_mass.values())
    signed = [bool(lowest[r] < 0) or any(amounts[r] < 0 for amounts in big) for r in range(rows.shape[1])]
    paid = [signed[r] or bool(highest[r] > 0) or any(amounts[r] > 0 for amounts in big) for r in range(rows.shape[1])]
    return signed, paid


def _swept_masses(csr, steps, columns) -> tuple:
    """``(mass, overrides)`` for `chain_expectations`: a column of steps (a chance node's
    total) if ``steps``, then for each ``(reward column, signed)`` its amounts, or their
    positive and negative parts; the nodes of big numbers with their exact ints."""
    import numpy

    width = int(steps) + sum(2 if split else 1 for _, split in columns)
    mass = numpy.empty((len(csr.kind), width), dtype=numpy.int64)
    big_columns = {
        node: [int(csr.big.get(node, (int(csr.data[node]), None))[0])] if steps else []
        for node in set(csr.big) | set(csr.big_mass)
    }
    if steps:
        mass[:, 0] = numpy.where(csr.kind == 1, csr.data, 0)
    place = int(steps)
    for r, split in columns:
        column = csr.mass[:, r]
        mass[:, place] = numpy.maximum(column, 0) if split else column
        if split:
            mass[:, place + 1] = numpy.maximum(-column, 0)
        for node, values in big_columns.items():
            amount = csr.big_mass[node][r] if node in csr.big_mass else int(column[node])
            values += [max(amount, 0), max(-amount, 0)] if split else [amount]
        place += 2 if split else 1
    overrides = {}
    for node, values in big_columns.items():
        total, weights = csr.big.get(
            node, (int(csr.data[node]), csr.weights[csr.offsets[node] : csr.offsets[node + 1]].tolist())
        )
        overrides[node] = (total, weights, tuple(values))
    return mass, overrides


def _value_interval(absorption, never_ends, outcomes, payoff, nonterminating_payoff) -> Interval:
    """The expected payoff's interval from the outcomes' (in exact rationals, rounded out)."""
    if payoff is None:
        payoff = {name: (1 if i == 0 else 0) for i, name in enumerate(outcomes)}
    pays = {name: Fraction(payoff.get(name, 0)) for name in outcomes}
    endless = Fraction(nonterminating_payoff or 0)
    low = high = Fraction(0)
    for name, (p_low, p_high) in list(absorption.items()) + [("never", never_ends)]:
        pay = endless if name == "never" else pays[name]
        low += pay * Fraction(p_low if pay >= 0 else p_high)
        high += pay * Fraction(p_high if pay >= 0 else p_low)
    return _down(low), _up(high)


def _down(value: Fraction) -> float:
    """The largest float at or below ``value``."""
    import math

    result = float(value)
    return result if Fraction(result) <= value else math.nextafter(result, -math.inf)


def _up(value: Fraction) -> float:
    """The smallest float at or above ``value``."""
    import math

    result = float(value)
    return result if Fraction(result) >= value else math.nextafter(result, math.inf)
