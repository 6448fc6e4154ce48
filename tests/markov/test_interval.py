"""Certified float intervals (`exactdice.markov.interval`) against the exact solver: every
interval holds the exact Fraction, and is as narrow as asked."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from exactdice.errors import InputError
from exactdice.markov import explore, solve
from exactdice.markov.interval import DEFAULT_TOLERANCE, certified_game, certified_solve, compiled_bounds_available
from exactdice.markov.synthetic import ContestChain, GamblersRuin

from .test_solver import RandomChain, RandomGame

pytestmark = pytest.mark.skipif(not compiled_bounds_available(), reason="the compiled bounds are not built")


def _holds(interval, exact) -> bool:
    low, high = interval
    return Fraction(low) <= exact <= Fraction(high)


def _assert_certifies(graph, payoff=None, endless=0, tolerance=DEFAULT_TOLERANCE, signed=()):
    exact = solve(graph, payoff=payoff, nonterminating_payoff=endless)
    answer = certified_solve(graph, payoff=payoff, nonterminating_payoff=endless, tolerance=tolerance)
    for name, interval in answer.absorption.items():
        assert _holds(interval, exact.absorption[name]), name
        assert interval[1] - interval[0] <= tolerance
    assert _holds(answer.never_ends, exact.never_ends)
    assert _holds(answer.value, exact.value)
    if exact.expected_steps is None:
        assert answer.expected_steps is None
        assert all(interval is None for interval in answer.expected_rewards.values())
    else:
        assert _holds(answer.expected_steps, exact.expected_steps)
        for name, interval in answer.expected_rewards.items():
            assert _holds(interval, exact.expected_rewards[name]), name
            if name not in signed:  # (a signed reward's width is relative to both parts' totals)
                assert interval[1] - interval[0] <= tolerance * (1 + abs(float(exact.expected_rewards[name])))
    assert answer.certified
    return answer


def test_the_gamblers_ruin_by_hand():
    """From 1 of 3 with a fair coin: P(win) = 1/3 and 2 expected steps (by hand)."""
    answer = _assert_certifies(explore(GamblersRuin(goal=3, start=1, up=1, down=1)))
    assert _holds(answer.absorption["win"], Fraction(1, 3))
    assert _holds(answer.expected_steps, Fraction(2))


@pytest.mark.parametrize("seed", range(40))
def test_random_chains_with_loops_signed_rewards_and_endless_play(seed):
    _assert_certifies(
        explore(RandomChain(seed, size=12)),
        payoff={"win": 1, "tie": Fraction(1, 2)},
        endless=Fraction(1, 2),
        signed=("wounds",),
    )


class WideChain:
    """A random chain with loops, many outcomes and many reward counters: rows of bounds
    wider than one block of the lanes a sweep sums at once."""

    def __init__(self, seed, outcomes, rewards, size=14):
        import random

        from exactdice.markov import Chance

        rng = random.Random(seed)
        self.outcomes = tuple(f"end{index}" for index in range(outcomes))
        self.reward_names = tuple(f"counter{index}" for index in range(rewards))
        self.nodes = {}
        for state in range(size):
            branches = []
            for _ in range(rng.randint(2, 5)):
                target = rng.choice(list(range(size)) + list(self.outcomes))
                amounts = tuple(rng.randint(0, 3) for _ in range(rewards)) if rng.random() < 0.7 else None
                branches.append((rng.randint(1, 9), target, amounts))
            branches.append((1, rng.choice(self.outcomes), None))  # every state can end
            self.nodes[state] = Chance(tuple(branches))

    def initial_state(self):
        return 0

    def expand(self, state):
        from exactdice.markov import Terminal

        return Terminal(state) if isinstance(state, str) else self.nodes[state]


@pytest.mark.parametrize("outcomes, rewards", [(1, 1), (4, 3), (5, 4), (8, 7), (9, 8), (17, 16), (33, 31), (63, 2)])
@pytest.mark.parametrize("seed", range(3))
def test_rows_wider_than_one_block_of_lanes(seed, outcomes, rewards):
    """Every column of every pass holds its exact value, the spare columns none (a row holds
    4, 6 or 8 columns of each bound, or blocks of 16: outcomes, and steps plus rewards)."""
    answer = _assert_certifies(explore(WideChain(seed, outcomes, rewards)))
    assert len(answer.absorption) == outcomes and len(answer.expected_rewards) == rewards


@pytest.mark.parametrize("tolerance", [1e-3, 1e-12])
def test_any_tolerance_is_met(tolerance):
    answer = _assert_certifies(explore(ContestChain(size=300, branches=12, seed=4)), tolerance=tolerance)
    assert answer.width <= tolerance


def test_weights_past_64_bits_are_bounded_exactly():
    """A chance node whose weights need more than 64 bits goes through the exact path."""
    from exactdice.markov import Chance, Terminal

    class Wide:
        outcomes, reward_names = ("win", "loss"), ("steps",)

        def initial_state(self):
            return 0

        def expand(self, state):
            if state == 0:
                return Chance(((3**50, 1, (1,)), (2**70 + 1, "loss", None), (5**30, 0, (2,))))
            if state == 1:
                return Chance(((7, "win", (1,)), (2**80 + 3, 0, None)))
            return Terminal(state)

    graph = explore(Wide())
    assert any(weight >= 2**63 for weight in graph.weights)
    _assert_certifies(graph)


def _processors(monkeypatch, count):
    """Make `certified_solve` see ``count`` usable processors (1: no thread beside)."""
    from exactdice.markov import interval

    monkeypatch.setattr(interval, "usable_cores", lambda: count)


@pytest.mark.parametrize(
    "graph",
    [
        lambda: explore(RandomChain(7, size=12)),
        lambda: explore(WideChain(1, 9, 8)),
        lambda: explore(ContestChain(size=300, branches=12, seed=4)),
    ],
)
def test_the_expectations_beside_the_bounds_give_the_same_floats(graph, monkeypatch):
    """The bounds and the expectations run in two threads at once, each in its own rounding
    mode: every interval is the one the two computed in turn give, to the last bit."""
    built = graph()
    payoff = {"win": 1, "tie": Fraction(1, 2)} if "tie" in built.outcomes else None
    _processors(monkeypatch, 1)
    in_turn = certified_solve(built, payoff=payoff)
    _processors(monkeypatch, 2)
    beside = certified_solve(built, payoff=payoff)
    assert in_turn.expected_steps is not None
    assert (beside.absorption, beside.expected_steps, beside.expected_rewards, beside.sweeps) == (
        in_turn.absorption,
        in_turn.expected_steps,
        in_turn.expected_rewards,
        in_turn.sweeps,
    )


@pytest.mark.parametrize("processors", [1, 2])
@pytest.mark.parametrize("seed", [21, 30])
def test_expectations_are_given_up_where_play_may_not_end(seed, processors, monkeypatch):
    """The expectations begin beside the outcomes' reach; where play may not end (its
    expectations need not be finite), they stop at their next check and none is given."""
    from exactdice.markov import interval

    def endless(csr, graph, initial, tolerance, most_sweeps, check, parts):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            check()
            time.sleep(0.001)
        raise AssertionError("the expectations were not given up")

    graph = explore(RandomChain(seed, size=12))
    exact = solve(graph)
    assert exact.never_ends > 0
    _processors(monkeypatch, processors)
    monkeypatch.setattr(interval, "_expectations", endless)
    answer = certified_solve(graph)
    assert answer.expected_steps is None
    assert all(value is None for value in answer.expected_rewards.values())
    assert _holds(answer.never_ends, exact.never_ends)


class _Trap:
    """Play leaves a line of states with 1 in 4 at each step, or falls into a closed cycle
    at the start (probability 1/2): play may not end."""

    outcomes = ("win", "loss")
    reward_names = ("r",)

    def initial_state(self):
        return ("line", 0)

    def expand(self, state):
        from exactdice.markov.model import Chance, Terminal

        kind, i = state
        if kind == "cycle":
            return Chance(((1, ("cycle", 1 - i), (1,)),))
        if kind == "lost":
            return Terminal("loss")
        if i == 6:
            return Terminal("win")
        if i == 0:
            return Chance(((1, ("line", 1), (1,)), (1, ("cycle", 0), (1,))))
        return Chance(((3, ("line", i + 1), (1,)), (1, ("lost", i), (1,))))


def test_expectations_that_fail_before_the_reach_is_known_are_given_up(monkeypatch):
    """The expectations of a closed cycle fail ("a component that play does not leave");
    where that comes before the outcomes' reach says play may not end, the answer is still
    the one without expectations, not the failure."""
    from exactdice.markov import _interval

    graph = explore(_Trap())
    exact = solve(graph)
    assert exact.never_ends == Fraction(1, 2)
    _processors(monkeypatch, 2)
    reach, failed = _interval.outcome_reach, []

    def late_reach(*arrays):
        deadline = time.monotonic() + 30
        while not failed and time.monotonic() < deadline:  # until the expectations fail
            time.sleep(0.01)
        return reach(*arrays)

    def failing(*arrays):
        failed.append(True)
        raise ArithmeticError("a component that play does not leave")

    monkeypatch.setattr(_interval, "outcome_reach", late_reach)
    monkeypatch.setattr(_interval, "chain_expectations", failing)
    answer = certified_solve(graph)
    assert failed
    assert answer.expected_steps is None
    assert _holds(answer.never_ends, exact.never_ends)


class _TwoRewards:
    """A walk up to 3 (2 in 3) or down (1 in 3; at 0 it stays, a loop), paying ``paid`` a
    step up and twice that a step down; the reward "unpaid" is never paid."""

    outcomes = ("win",)
    reward_names = ("paid", "unpaid")

    def __init__(self, paid):
        self.paid = paid

    def initial_state(self):
        return 0

    def expand(self, state):
        from exactdice.markov.model import Chance, Terminal

        if state == 3:
            return Terminal("win")
        return Chance(((2, state + 1, (self.paid, 0)), (1, max(state - 1, 0), (2 * self.paid, 0))))


def test_a_reward_no_state_pays_is_zero_and_not_swept(monkeypatch):
    """The expectation of a reward no node pays is 0 exactly, without a sweep; the steps
    are swept only when asked for (and with neither, nothing is)."""
    from exactdice.markov import _interval

    sweep, widths = _interval.chain_expectations, []

    def recorded(kind, data, offsets, targets, weights, mass, *rest):
        widths.append(mass.shape[1])
        return sweep(kind, data, offsets, targets, weights, mass, *rest)

    monkeypatch.setattr(_interval, "chain_expectations", recorded)
    graph = explore(_TwoRewards(paid=1))
    exact = solve(graph)
    for steps, swept in ((True, 2), (False, 1)):
        widths.clear()
        answer = certified_solve(graph, steps=steps)
        assert widths == [swept]
        assert answer.expected_rewards["unpaid"] == (0.0, 0.0)
        assert _holds(answer.expected_rewards["paid"], exact.expected_rewards["paid"])
        assert exact.expected_rewards["paid"] > 0
        if steps:
            assert _holds(answer.expected_steps, exact.expected_steps)
        else:
            assert answer.expected_steps is None
    widths.clear()
    unpaid = certified_solve(explore(_TwoRewards(paid=0)), steps=False)
    assert widths == []
    assert unpaid.expected_rewards == {"paid": (0.0, 0.0), "unpaid": (0.0, 0.0)}


@pytest.mark.parametrize("processors", [1, 2])
def test_a_failure_to_find_the_components_reaches_the_caller(processors, monkeypatch):
    """The components are found on the bounds' side while the expectations are prepared
    beside; where finding them fails, the expectations stop waiting for them and the
    error is raised."""
    from exactdice.markov import _interval

    def failing(*arrays):
        time.sleep(0.2)  # the expectations are waiting by now
        raise MemoryError("no room for the components")

    graph = explore(RandomChain(21, size=12))
    _processors(monkeypatch, processors)
    monkeypatch.setattr(_interval, "reachable_components", failing)
    started = time.monotonic()
    with pytest.raises(MemoryError, match="no room for the components"):
        certified_solve(graph)
    assert time.monotonic() - started < 5


def test_a_failure_on_either_side_stops_the_other(monkeypatch):
    """Whichever side fails, the other stops at its next check and the error is raised."""
    import time

    from exactdice.markov.interval import _side_by_side

    stopped = []

    def waits_for_a_stop(check):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                check()
            except Exception:
                stopped.append(True)
                raise
        return "never stopped"

    def fails(check):
        raise ValueError("the other side failed")

    _processors(monkeypatch, 2)
    for first, second in ((waits_for_a_stop, fails), (fails, waits_for_a_stop)):
        stopped.clear()
        with pytest.raises(ValueError, match="the other side failed"):
            _side_by_side(first, second, lambda: None)
        assert stopped == [True]


def test_the_expectations_stop_soon_even_while_bounding_a_loops_steps(monkeypatch):
    """A long loop's first upper bound (thousands of sweeps of its leaving probability)
    checks now and then too: the bounds' failure ends the solve in a moment, not when the
    expectations are done (about 25 s here without the checks)."""
    import time

    from exactdice.markov import _interval
    from exactdice.markov.arrays import csr_arrays
    from exactdice.markov.interval import _expectations, _side_by_side

    graph = explore(GamblersRuin(goal=3000, start=1500, up=1, down=1))
    csr = csr_arrays(graph)
    parts = _interval.reachable_components(csr.offsets, csr.targets, graph.initial)

    def fails_soon(check):
        time.sleep(0.3)
        raise ValueError("the bounds failed")

    def expectations(check):
        return _expectations(csr, graph, graph.initial, DEFAULT_TOLERANCE, 1_000_000, check, lambda: parts)

    _processors(monkeypatch, 2)
    started = time.monotonic()
    with pytest.raises(ValueError, match="the bounds failed"):
        _side_by_side(fails_soon, expectations, lambda: None)
    assert time.monotonic() - started < 5


def test_a_memory_error_stops_both_sides(monkeypatch):
    import threading

    from exactdice import limits
    from exactdice.errors import TooLargeError

    _processors(monkeypatch, 2)
    graph = explore(ContestChain(size=300, branches=12, seed=4))
    monkeypatch.delenv(limits.MEMORY_ENVIRONMENT_VARIABLE, raising=False)
    limits.set_memory_budget(limits.resident_memory() // 2, export=False)
    try:
        with pytest.raises(TooLargeError, match="while computing certified bounds"):
            certified_solve(graph)
    finally:
        limits.set_memory_budget(None, export=False)
    assert not any(thread.name == "exactdice-certified-beside" for thread in threading.enumerate())


def test_weights_past_2_to_the_53_are_rounded_outward():
    """A weight between 2**53 and 2**63 is not a float: each bound takes it rounded its
    own way (P(win) here is 1/2 + 2**-60, which no float near 1/2 equals)."""
    from exactdice.markov import Chance, Terminal

    class Wide:
        outcomes, reward_names = ("win", "loss"), ("steps",)

        def __init__(self, loop):
            self.loop = loop

        def initial_state(self):
            return 0

        def expand(self, state):
            if state == 0:
                return Chance(((2**59 + 1, 1, (1,)), (2**59 - 1, "loss", None)))
            if state == 1:
                back = ((2**58 + 3, 0, (2,)),) if self.loop else ()
                return Chance(((2**58 + 7, "win", (1,)), *back))
            return Terminal(state)

    for loop in (False, True):
        graph = explore(Wide(loop))
        assert all(2**53 < weight < 2**63 for weight in graph.weights)
        _assert_certifies(graph)


def test_more_outcomes_than_a_reach_mask_holds_are_refused():
    with pytest.raises(InputError, match="at most 63 outcomes"):
        certified_solve(explore(WideChain(0, 64, 1)))


def test_a_graph_with_decisions_is_refused_with_its_reason():
    with pytest.raises(InputError, match="without decisions"):
        certified_solve(explore(RandomGame(3)))


@pytest.mark.parametrize("seed", range(40))
def test_random_games_value_and_the_strategies_play(seed):
    """The game's value in its interval; the odds those of the strategies found, which
    play as well as the exact optimal ones (the same value, exactly, in every case here)."""
    graph = explore(RandomGame(seed, size=12))
    payoff, endless = {"win": 1, "tie": Fraction(1, 2)}, Fraction(1, 2)
    exact = solve(graph, payoff=payoff, nonterminating_payoff=endless)
    answer = certified_game(graph, payoff=payoff, nonterminating_payoff=endless)
    assert _holds(answer.value, exact.value) and answer.value[1] - answer.value[0] <= 1e-9
    played = answer.absorption["win"], answer.absorption["tie"], answer.never_ends
    low = Fraction(played[0][0]) + (Fraction(played[1][0]) + Fraction(played[2][0])) / 2
    high = Fraction(played[0][1]) + (Fraction(played[1][1]) + Fraction(played[2][1])) / 2
    assert low - Fraction(1, 10**8) <= exact.value <= high + Fraction(1, 10**8)


@pytest.mark.parametrize("choice", ["max", "min"])
def test_a_games_bounds_hold_with_negative_values_and_weights_that_are_not_floats(choice):
    """Weights past 2**53 and past 2**64 with payoffs below 0: a rounded weight (or
    probability) times a negative value must move the term outward, not inward. Each
    chance node's value is -2 plus a sliver no float near -2 holds."""
    from exactdice.markov import Chance, Decision, Terminal

    class NegativeGame:
        outcomes, reward_names = ("win", "loss"), ()

        def initial_state(self):
            return 0

        def expand(self, state):
            if state == 0:
                return Decision(choice, (("wide", 1, None), ("big", 2, None)))
            if state == 1:
                return Chance(((2**59 + 1, "win", None), (2**59 - 1, "loss", None)))
            if state == 2:
                return Chance(((2**70 + 1, "win", None), (2**70 - 1, "loss", None)))
            return Terminal(state)

    graph = explore(NegativeGame())
    payoff = {"win": -1, "loss": -3}
    exact = solve(graph, payoff=payoff)
    assert exact.value == -2 + Fraction(1, 2**59 if choice == "max" else 2**70)
    answer = certified_game(graph, payoff=payoff)
    assert _holds(answer.value, exact.value), (answer.value, exact.value)


@pytest.mark.parametrize(
    "player, narrator", [("optimal", "fixed"), ("fixed", "optimal"), ("optimal", "optimal"), ("optimal", "kind")]
)
def test_karbon_optimal_play(player, narrator):
    from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, contest_odds

    setup = ContestSetup(ability=1, challenge=1, consequence=1, pool={6: 2, 8: 1, 10: 1}, reserve={6: 1})
    exact = contest_odds(setup, None, PlayerPolicy(kind=player), NarratorPolicy(kind=narrator))
    floats = contest_odds(setup, None, PlayerPolicy(kind=player), NarratorPolicy(kind=narrator), arithmetic="float")
    assert _holds(floats.bounds["value"], exact.value)
    assert floats.player_draw == exact.player_draw and floats.narrator_draw == exact.narrator_draw
    for name in ("win", "loss", "tie"):
        assert _holds(floats.bounds[name], getattr(exact, name)), name


@pytest.mark.parametrize(
    "setup",
    [
        dict(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}),
        dict(ability=3, challenge=3, consequence=3, peril=1),
        dict(ability=1, challenge=1, consequence=2, peril=1, pool={6: 2, 8: 1, 10: 1}, reserve={6: 1}),
    ],
)
@pytest.mark.parametrize("player", ["never", "always"])
def test_karbon_contests(setup, player):
    from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.solve import payoffs

    policy = PlayerPolicy(risk=player)
    start = ContestSetup(**setup).start(policy, NarratorPolicy())
    if player == "always" and "ability" in setup and setup["ability"] == 3:
        pytest.skip("risk=always with the default pool is a large graph; the benchmarks time it")
    graph = explore(KarbonModel(start.sizes, start.situation(), Rules(), policy, NarratorPolicy()))
    payoff, endless = payoffs(Rules())
    _assert_certifies(graph, payoff, endless)


def test_the_cli_prints_the_intervals_and_says_certified():
    from click.testing import CliRunner

    from exactdice.cli.main import cli

    result = CliRunner().invoke(cli, ["karbon", "odds", "-a", "3", "-c", "2", "-w", "2", "-p", "1", "--float"])
    assert result.exit_code == 0, result.output
    assert "P(win)   15.90573669 to 15.9057367 %" in result.output
    assert "certified floats: each exact value lies in its interval, within 1e-09" in result.output
