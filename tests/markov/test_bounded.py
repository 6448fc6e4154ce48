"""Bounded value iteration against the exact solver on random small games."""

import itertools
import random
from fractions import Fraction

import pytest

from exactdice.errors import InputError, InternalError
from exactdice.markov import solve
from exactdice.markov.bounded import BoundedSolver, TimeLimitedModel, bounded_solve, evaluate_strategy
from exactdice.markov.model import Chance, Decision, KeyedChance, Terminal

from .reference import dense_evaluate, reachable_nodes


class RandomGame:
    """A random turn-based stochastic game on ``size`` states: chance nodes (2-4 branches,
    random weights), "max" and "min" decisions (2-3 actions), successors anywhere (so
    cycles and end components are common) or one of three outcomes."""

    outcomes = ("win", "loss", "tie")
    reward_names = ()

    def __init__(self, size: int, seed: int, decision_share: float = 0.5, end_share: float = 0.15):
        rng = random.Random(seed)
        self.nodes = {}
        for state in range(size):

            def successor():
                if rng.random() < end_share:
                    return ("end", rng.choice(self.outcomes))
                return rng.randrange(size)

            roll = rng.random()
            if roll < decision_share:
                side = "max" if rng.random() < 0.5 else "min"
                count = rng.randint(2, 3)
                self.nodes[state] = Decision(side, tuple((f"a{i}", successor(), None) for i in range(count)))
            else:
                count = rng.randint(2, 4)
                self.nodes[state] = Chance(tuple((rng.randint(1, 9), successor(), None) for _ in range(count)))

    def initial_state(self):
        return 0

    def decision_combinations(self) -> int:
        """How many pairs of positional strategies the reachable part has."""
        count = 1
        for node in reachable_nodes(self).values():
            if isinstance(node, Decision):
                count *= len(node.actions)
        return count

    def expand(self, state):
        if isinstance(state, tuple):
            return Terminal(state[1])
        return self.nodes[state]


PAYOFF = {"win": 1, "loss": 0, "tie": Fraction(1, 2)}


def _check(game, exact, endless, seed):
    found = bounded_solve(
        game, precision=1e-6, payoff=PAYOFF, nonterminating_payoff=endless, seed=seed, max_seconds=120
    )
    assert found.stopped == "precision", (found, float(exact))
    assert Fraction(found.lower) <= exact <= Fraction(found.upper)
    assert found.gap <= 1e-6
    # the strategy greedy on the lower bounds guarantees close to the value
    guaranteed, _ = evaluate_strategy(game, found.strategy, payoff=PAYOFF, nonterminating_payoff=endless)
    assert guaranteed <= exact
    assert exact - guaranteed <= Fraction(1, 10**5)


@pytest.mark.parametrize("seed", range(40))
def test_bounds_contain_the_exact_solvers_value_and_close(seed):
    game = RandomGame(size=random.Random(seed).randint(3, 40), seed=seed)
    _check(game, solve(game, payoff=PAYOFF).value, 0, seed)


def brute_force_value(game, endless):
    """max over the "max" side's positional strategies of min over the "min" side's, each
    pair evaluated by sympy's dense solve (independent of `exactdice.markov.solver`)."""
    nodes = reachable_nodes(game)
    sides = {
        side: [s for s, n in nodes.items() if isinstance(n, Decision) and n.side == side] for side in ("max", "min")
    }
    choices = {
        side: list(itertools.product(*[range(len(nodes[s].actions)) for s in states])) for side, states in sides.items()
    }
    return max(
        min(
            dense_evaluate(
                game, nodes, {**dict(zip(sides["max"], mine)), **dict(zip(sides["min"], theirs))}, PAYOFF, endless
            )["value"]
            for theirs in choices["min"]
        )
        for mine in choices["max"]
    )


SMALL_GAMES = [
    seed
    for seed in range(400)
    if RandomGame(size=random.Random(seed).randint(3, 9), seed=seed).decision_combinations() <= 200
][:24]


@pytest.mark.parametrize("endless", [Fraction(1, 2), 1])
@pytest.mark.parametrize("seed", SMALL_GAMES)
def test_bounds_contain_the_brute_force_value_when_endless_play_pays(seed, endless):
    game = RandomGame(size=random.Random(seed).randint(3, 9), seed=seed)
    exact = brute_force_value(game, endless)
    _check(game, Fraction(int(exact.p), int(exact.q)), endless, seed)


def test_exact_solver_agrees_with_a_strategy_that_guarantees_more():
    game = RandomGame(size=random.Random(15).randint(3, 40), seed=15)
    found = bounded_solve(game, precision=1e-6, payoff=PAYOFF, nonterminating_payoff=1, seed=15)
    guaranteed, _ = evaluate_strategy(game, found.strategy, payoff=PAYOFF, nonterminating_payoff=1)
    assert guaranteed == Fraction(11, 13)  # the solver's best reply to the strategy (checked by brute force)
    assert solve(game, payoff=PAYOFF, nonterminating_payoff=1).value >= guaranteed


def _loop_game(side: str):
    """One decision state that can stay forever or leave to a terminal worth ``tie``."""

    class Loop:
        outcomes = ("win", "loss", "tie")
        reward_names = ()

        def initial_state(self):
            return "s"

        def expand(self, state):
            if state == "s":
                return Decision(side, (("leave", ("end", "tie"), None), ("stay", "t", None)))
            if state == "t":
                return Chance(((1, "s", None),))
            return Terminal(state[1])

    return Loop()


@pytest.mark.parametrize(
    "side, endless, value", [("max", 1, 1), ("max", 0, Fraction(1, 4)), ("min", 0, 0), ("min", 1, Fraction(1, 4))]
)
def test_end_components_let_both_bounds_converge(side, endless, value):
    # without the end-component step the upper bound of ("max", endless 0) stays at 1
    payoff = {"win": 1, "loss": 0, "tie": Fraction(1, 4)}
    found = bounded_solve(
        _loop_game(side), precision=1e-9, payoff=payoff, nonterminating_payoff=endless, max_seconds=10
    )
    assert found.stopped == "precision"
    assert Fraction(found.lower) <= value <= Fraction(found.upper)
    assert found.end_component_passes >= 1


def test_limits_return_the_bounds_so_far():
    game = RandomGame(size=300, seed=7, end_share=0.02)
    solver = BoundedSolver(game, payoff=PAYOFF)
    found = solver.run(precision=1e-12, max_states=5)
    assert found.stopped == "states" and found.expanded >= 5
    assert 0 <= found.lower <= found.upper <= 1
    exact = solve(game, payoff=PAYOFF).value
    assert Fraction(found.lower) <= exact <= Fraction(found.upper)


def test_keyboard_interrupt_returns_the_bounds_so_far():
    game = RandomGame(size=300, seed=3, end_share=0.02)
    calls = []

    def progress(lower, upper, expanded, seconds):
        calls.append((lower, upper))
        if len(calls) == 3:
            raise KeyboardInterrupt

    found = bounded_solve(game, precision=1e-15, payoff=PAYOFF, progress=progress, max_seconds=30)
    assert found.stopped == "interrupted"
    assert found.lower <= found.upper
    gaps = [upper - lower for lower, upper in calls]
    assert gaps == sorted(gaps, reverse=True)  # the gap only shrinks


def test_same_seed_same_run():
    game = RandomGame(size=60, seed=11)
    first = bounded_solve(game, precision=1e-8, payoff=PAYOFF, seed=5)
    second = bounded_solve(game, precision=1e-8, payoff=PAYOFF, seed=5)
    assert (first.lower, first.upper, first.trajectories) == (second.lower, second.upper, second.trajectories)


def test_initial_bounds_are_used_and_checked():
    game = RandomGame(size=30, seed=2)
    exact = solve(game, payoff=PAYOFF).value
    found = bounded_solve(
        game,
        precision=1e-7,
        payoff=PAYOFF,
        initial_bounds=lambda state: (0.0, 1.0) if state != 0 else (float(exact) - 0.25, 1.0),
    )
    assert Fraction(found.lower) <= exact <= Fraction(found.upper)
    with pytest.raises(ValueError, match="precision"):
        bounded_solve(game, precision=0)


# (seed, largest size): games the solver undervalued before its trap step held against the
# inner player's equally good actions (found by comparing with brute force over seeds 0-399)
ONCE_UNDERVALUED = [
    (15, 20),
    (44, 9),
    (68, 14),
    (99, 9),
    (220, 14),
    (232, 9),
    (235, 14),
    (311, 20),
    (324, 9),
    (328, 9),
    (373, 20),
    (395, 14),
]


@pytest.mark.parametrize("endless", [0, Fraction(1, 2), 1])
@pytest.mark.parametrize("seed, largest", [(seed, 9) for seed in SMALL_GAMES] + ONCE_UNDERVALUED)
def test_exact_solver_matches_brute_force_when_endless_play_pays(seed, largest, endless):
    # two-sided games with cycles; the brute force is sympy over all positional strategy pairs
    game = RandomGame(size=random.Random(seed).randint(3, largest), seed=seed)
    exact = brute_force_value(game, endless)
    assert solve(game, payoff=PAYOFF, nonterminating_payoff=endless).value == Fraction(int(exact.p), int(exact.q))


def test_an_unsound_initial_bound_is_caught_where_the_bounds_cross():
    # the root is worth 1 (a sure win) but is started with 1/2 as its upper bound: the
    # first backup from the terminal lifts its lower bound past that, and the run stops
    class SureWin:
        outcomes, reward_names = ("win", "loss", "tie"), ()

        def initial_state(self):
            return "start"

        def expand(self, state):
            return Chance(((1, ("end", "win"), None),)) if state == "start" else Terminal(state[1])

    with pytest.raises(InternalError, match="crossed at 'start'.*unsound"):
        bounded_solve(
            SureWin(),
            precision=1e-6,
            payoff=PAYOFF,
            initial_bounds=lambda state: (0.0, 0.5) if state == "start" else None,
        )
    with pytest.raises(InternalError, match="crossed"):  # given crossed from the start
        bounded_solve(SureWin(), precision=1e-6, payoff=PAYOFF, initial_bounds=lambda state: (0.75, 0.5))


@pytest.mark.parametrize("seed", range(8))
def test_sweeps_keep_the_bounds_sound_and_never_widen_them(seed):
    game = RandomGame(size=200, seed=seed, end_share=0.05)
    exact = solve(game, payoff=PAYOFF, all_states=True)
    solver = BoundedSolver(game, payoff=PAYOFF, seed=seed, sweep_growth=None)
    solver.run(precision=1e-12, max_states=60)
    before = list(zip(solver.lo, solver.hi))
    assert solver.sweep(passes=50) >= 1
    for node, state in enumerate(solver.states):
        low, high = solver.lo[node], solver.hi[node]
        assert before[node][0] <= low <= high <= before[node][1]
        value = exact.state_value(state)
        assert Fraction(low) <= value <= Fraction(high)


class KeyedRandomGame(RandomGame):
    """`RandomGame` that also offers ``expand_keyed``: its chance nodes as `KeyedChance`,
    successors named by keys into one table shared by every state (as KarbonModel does)."""

    def __init__(self, size: int, seed: int):
        super().__init__(size, seed)
        self.table: list = []
        self.keys: dict = {}

    def expand_keyed(self, state):
        node = self.expand(state)
        if not isinstance(node, Chance):
            return node
        branches = []
        for weight, successor, rewards in node.branches:
            key = self.keys.get(successor)
            if key is None:
                key = self.keys[successor] = len(self.table)
                self.table.append((successor, rewards))
            branches.append((weight, key))
        return KeyedChance(tuple(branches), self.table)


class PlainOnly:
    """A model's ``expand`` alone (hides its ``expand_keyed``)."""

    def __init__(self, model):
        self.model, self.outcomes, self.reward_names = model, model.outcomes, model.reward_names

    def initial_state(self):
        return self.model.initial_state()

    def expand(self, state):
        return self.model.expand(state)


@pytest.mark.parametrize("seed", range(12))
def test_keyed_expansion_gives_the_same_run_as_plain_and_contains_the_value(seed):
    size = random.Random(seed).randint(3, 40)
    keyed_game = KeyedRandomGame(size, seed)
    exact = solve(RandomGame(size, seed), payoff=PAYOFF).value
    keyed = BoundedSolver(keyed_game, payoff=PAYOFF, seed=seed)
    plain = BoundedSolver(PlainOnly(RandomGame(size, seed)), payoff=PAYOFF, seed=seed)
    assert keyed._expand_model == keyed_game.expand_keyed
    found = keyed.run(precision=1e-6, max_seconds=120)
    plain.run(precision=1e-6, max_seconds=120)
    assert found.stopped == "precision"
    assert Fraction(found.lower) <= exact <= Fraction(found.upper)
    # node for node the same successors, probabilities and bounds (the keys only save hashing)
    assert keyed.states == plain.states
    assert keyed.targets == plain.targets and keyed.probs == plain.probs
    assert keyed.lo == plain.lo and keyed.hi == plain.hi
    assert found.strategy == plain.strategy()


def test_keyed_weights_are_checked():
    class BadWeight:
        outcomes, reward_names = ("win", "loss"), ()

        def initial_state(self):
            return "s"

        def expand_keyed(self, state):
            return KeyedChance(((0, 0), (1, 1)), [(("end",), None), (("end",), None)])

        expand = expand_keyed

    with pytest.raises(InputError, match="weight"):
        BoundedSolver(BadWeight())._expand(0)


@pytest.mark.parametrize("seed", range(6))
def test_strategy_check_through_expand_keyed_matches_plain(seed):
    size = random.Random(seed).randint(3, 40)
    found = bounded_solve(RandomGame(size, seed), precision=1e-6, payoff=PAYOFF, seed=seed)
    keyed_value, keyed = evaluate_strategy(KeyedRandomGame(size, seed), found.strategy, payoff=PAYOFF)
    plain_value, plain = evaluate_strategy(PlainOnly(RandomGame(size, seed)), found.strategy, payoff=PAYOFF)
    assert keyed_value == plain_value and keyed.played == plain.played
    timed = TimeLimitedModel(KeyedRandomGame(size, seed), 600)
    assert evaluate_strategy(timed, found.strategy, payoff=PAYOFF)[0] == plain_value


def test_the_strategy_check_stops_when_solving_passes_its_time(monkeypatch):
    """``max_seconds`` bounds the exact check's solve too, not only its exploring: the
    solver's own checks (`exactdice.limits.check_memory`) raise once it has passed."""
    import time

    from exactdice.errors import TooLargeError
    from exactdice.limits import check_memory
    from exactdice.markov import solver as solver_module
    from exactdice.markov.bounded import evaluate_strategy
    from exactdice.markov.synthetic import GamblersRuin

    real = solver_module.solve

    def slow(*args, **kwargs):
        time.sleep(0.3)
        check_memory("while solving")
        return real(*args, **kwargs)

    monkeypatch.setattr(solver_module, "solve", slow)
    with pytest.raises(TooLargeError, match="max_seconds: solving the strategy's game passed 0.2 s"):
        evaluate_strategy(GamblersRuin(goal=3, start=1, up=1, down=1), {}, max_seconds=0.2)
    value, _ = evaluate_strategy(GamblersRuin(goal=3, start=1, up=1, down=1), {}, max_seconds=5)
    assert value == Fraction(1, 3)
    check_memory(force=True)  # the limit ended with its block


def _strategy_over_every_state(solver: BoundedSolver) -> dict:
    """The strategy rule applied to every expanded "max" state (what `strategy` did before
    it kept to the states play reaches): best actions for the lower bounds, ties to the
    action through which a backward walk from terminal and unexpanded states first joins."""
    frontier, terminal, chance, max_, min_ = range(5)
    kind, targets, lo = solver.kind, solver.targets, solver.lo
    best = {
        node: [i for i, t in enumerate(targets[node]) if lo[t] == max(lo[u] for u in targets[node])]
        for node in range(len(kind))
        if kind[node] == max_
    }
    predecessors = [[] for _ in kind]
    for node in range(len(kind)):
        if kind[node] in (chance, min_):
            predecessors_of = [(t, -1) for t in targets[node]]
        elif kind[node] == max_:
            predecessors_of = [(targets[node][i], i) for i in best[node]]
        else:
            predecessors_of = []
        for target, action in predecessors_of:
            predecessors[target].append((node, action))
    queue = [node for node in range(len(kind)) if kind[node] in (frontier, terminal)]
    joined, chosen = set(queue), {}
    while queue:
        for node, action in predecessors[queue.pop()]:
            if node not in joined:
                joined.add(node)
                if action >= 0:
                    chosen[node] = action
                queue.append(node)
    return {solver.states[node]: solver.names[node][chosen.get(node, actions[0])] for node, actions in best.items()}


def _reached_through_best_actions(solver: BoundedSolver) -> set:
    """The expanded "max" states play reaches from the initial state through every chance
    and "min" branch and every action best for the lower bounds."""
    frontier, terminal, chance, max_, min_ = range(5)
    kind, targets, lo = solver.kind, solver.targets, solver.lo
    seen, stack = {solver.initial}, [solver.initial]
    while stack:
        node = stack.pop()
        following = targets[node] or ()
        if kind[node] == max_:
            following = [t for t in following if lo[t] == max(lo[u] for u in following)]
        for target in following:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return {solver.states[node] for node in seen if kind[node] == max_}


@pytest.mark.parametrize("seed", range(40))
def test_the_strategy_keeps_to_the_states_its_play_reaches_and_guarantees_the_lower_bound(seed):
    # stopped early, so unexpanded states and ties among equal lower bounds are common
    size = random.Random(seed).randint(3, 40)
    game = RandomGame(size, seed)
    solver = BoundedSolver(game, payoff=PAYOFF, seed=seed)
    found = solver.run(precision=1e-6, max_states=max(2, size // 2))
    assert set(found.strategy) == _reached_through_best_actions(solver)
    assert found.strategy.items() <= _strategy_over_every_state(solver).items()
    # past an unexpanded state play takes the first action (the default) unless it comes back
    guaranteed, _ = evaluate_strategy(game, found.strategy, payoff=PAYOFF)
    assert guaranteed >= Fraction(found.lower)


@pytest.mark.parametrize("endless", [0, Fraction(1, 2), 1])
@pytest.mark.parametrize("seed", range(40))
def test_the_sound_float_value_stays_below_the_exact_one(seed, endless):
    # with endless play at the least payoff, iterating from below reaches the value itself
    from exactdice.markov.bounded import sound_lower_value
    from exactdice.markov.graph import explore

    graph = explore(RandomGame(size=random.Random(seed).randint(3, 40), seed=seed), progress=False)
    exact = solve(graph, payoff=PAYOFF, nonterminating_payoff=endless).value
    lower = sound_lower_value(graph, payoff=PAYOFF, nonterminating_payoff=endless)
    assert Fraction(lower) <= exact
    if endless == 0:
        assert exact - Fraction(lower) <= Fraction(1, 10**9)


def test_a_strategy_solve_past_its_time_still_gets_a_sound_value(monkeypatch):
    from exactdice.errors import TooLargeError
    from exactdice.markov import solver
    from exactdice.markov.bounded import StrategySolvePassedTime

    game = RandomGame(size=30, seed=3)
    found = bounded_solve(game, precision=1e-6, payoff=PAYOFF, seed=3)
    exact, _ = evaluate_strategy(game, found.strategy, payoff=PAYOFF)

    def too_slow(*args, **kwargs):
        raise TooLargeError("max_seconds", "solving the strategy's game passed 5 s; give it more time")

    monkeypatch.setattr(solver, "solve", too_slow)
    with pytest.raises(TooLargeError, match="passed 5 s") as raised:  # no sound_seconds: as before
        evaluate_strategy(game, found.strategy, payoff=PAYOFF, max_seconds=5)
    assert not isinstance(raised.value, StrategySolvePassedTime)
    from exactdice.markov.graph import StateGraph

    found_components = StateGraph.strongly_connected_components
    calls = []

    def counted(graph):
        calls.append(graph.num_states)
        return found_components(graph)

    monkeypatch.setattr(StateGraph, "strongly_connected_components", counted)
    with pytest.raises(StrategySolvePassedTime, match="passed 5 s") as raised:
        evaluate_strategy(game, found.strategy, payoff=PAYOFF, max_seconds=5, sound_seconds=5)
    assert Fraction(raised.value.sound_lower) <= exact <= Fraction(raised.value.sound_lower) + Fraction(1, 10**9)
    assert raised.value.states > 1
    assert calls == [raised.value.states]  # the sound pass reuses the components the check found
