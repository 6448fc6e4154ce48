"""The solver against closed forms, a dense sympy solve and brute-force strategies."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import networkx as nx
import pytest
import sympy

from exactdice.errors import TooLargeError
from exactdice.markov import Chance, Decision, Terminal, explore, solve
from exactdice.markov.synthetic import ContestChain, GamblersRuin, TugOfWar

from .reference import dense_evaluate, reachable_nodes


def as_fraction(value):
    value = sympy.Rational(value)
    return Fraction(int(value.p), int(value.q))


@pytest.mark.parametrize("up, down", [(1, 1), (2, 1), (1, 3), (5, 7)])
@pytest.mark.parametrize("goal, start", [(3, 1), (6, 2), (10, 7)])
def test_gamblers_ruin_matches_closed_form(up, down, goal, start):
    p, q = Fraction(up, up + down), Fraction(down, up + down)
    if p == q:
        win, duration = Fraction(start, goal), Fraction(start * (goal - start))
    else:
        ratio = q / p
        win = (1 - ratio**start) / (1 - ratio**goal)
        duration = start / (q - p) - goal / (q - p) * win
    solution = solve(GamblersRuin(goal, start, up, down))
    assert solution.absorption == {"win": win, "loss": 1 - win}
    assert solution.expected_steps == duration
    assert solution.expected_rewards == {"bets": duration}
    assert solution.never_ends == 0 and solution.exact


class RandomChain:
    """Random chance-only chain with cycles, rewards and sometimes endless loops."""

    outcomes = ("win", "loss", "tie")
    reward_names = ("gold", "wounds")

    def __init__(self, seed, size=9):
        rng = random.Random(seed)
        self.nodes = {}
        for state in range(size):
            branches = []
            for _ in range(rng.randint(1, 4)):
                target = rng.choice(list(range(size)) + ["win", "loss", "tie"])
                rewards = (rng.randint(0, 3), rng.randint(-2, 2)) if rng.random() < 0.6 else None
                branches.append((rng.randint(1, 9), target, rewards))
            self.nodes[state] = Chance(tuple(branches))

    def initial_state(self):
        return 0

    def expand(self, state):
        return Terminal(state) if isinstance(state, str) else self.nodes[state]


@pytest.mark.parametrize("seed", range(12))
def test_random_chains_match_dense_sympy_solve(seed):
    model = RandomChain(seed)
    reference = dense_evaluate(model, reachable_nodes(model), {}, {"win": 1})
    solution = solve(model)
    assert solution.absorption == {k: as_fraction(v) for k, v in reference["absorption"].items()}
    assert solution.never_ends == as_fraction(reference["never"])
    assert sum(solution.absorption.values()) + solution.never_ends == 1
    if reference["steps"] is None:
        assert solution.expected_steps is None
    else:
        assert solution.expected_steps == as_fraction(reference["steps"])
        assert list(solution.expected_rewards.values()) == [as_fraction(v) for v in reference["rewards"]]


class RandomGame(RandomChain):
    """`RandomChain` with some states turned into max/min decisions whose actions carry
    rewards and may lead back (cycles through decisions)."""

    def __init__(self, seed, size=9):
        super().__init__(seed, size)
        rng = random.Random(-seed - 1)
        for state in range(size):
            if rng.random() < 0.4:
                actions = []
                for index in range(rng.randint(2, 3)):
                    target = rng.choice(list(range(size)) + ["win", "loss", "tie"])
                    rewards = (rng.randint(0, 2), rng.randint(-1, 1)) if rng.random() < 0.5 else None
                    actions.append((f"a{index}", target, rewards))
                self.nodes[state] = Decision(rng.choice(["max", "min"]), tuple(actions))


@pytest.mark.parametrize("seed", range(16))
def test_expectations_under_the_chosen_strategy_match_dense_solve(seed):
    """Steps and rewards come from a forward pass of expected visits; check them (and the
    odds) against a dense solve of the chain the chosen strategy leaves."""
    model = RandomGame(seed)
    solution = solve(model, payoff={"win": 1, "tie": Fraction(1, 2)}, nonterminating_payoff=Fraction(1, 2))
    nodes = reachable_nodes(model)
    policy = {
        state: [name for name, _, _ in nodes[state].actions].index(action)
        for state, action in solution.strategy.items()
    }
    reference = dense_evaluate(model, nodes, policy, {"win": 1, "tie": Fraction(1, 2)}, Fraction(1, 2))
    assert solution.absorption == {k: as_fraction(v) for k, v in reference["absorption"].items()}
    assert solution.never_ends == as_fraction(reference["never"])
    if reference["steps"] is None:
        assert solution.expected_steps is None
    else:
        assert solution.expected_steps == as_fraction(reference["steps"])
        assert list(solution.expected_rewards.values()) == [as_fraction(v) for v in reference["rewards"]]


class TinyPig:
    """Pig to 2 points: a roll busts (weight 1) or scores 1 (weight 2). With a point
    banked a player may "pass"; with a point this turn, "hold" or "roll". Player
    "max" wants "win"; "min" is the opponent. Both passing forever never ends."""

    outcomes = ("win", "loss")
    reward_names = ("rolls",)

    def __init__(self, two_players=True):
        self.two_players = two_players

    def initial_state(self):
        return (0, 0, 0, "max")

    def expand(self, state):
        if state[0] == "roll":
            mine, theirs, turn, player = state[1]
            other = "min" if player == "max" else "max"
            return Chance(((1, (theirs, mine, 0, other), (1,)), (2, (mine, theirs, turn + 1, player), (1,))))
        mine, theirs, turn, player = state
        other = "min" if player == "max" else "max"
        if mine + turn >= 2:
            return Terminal("win" if player == "max" else "loss")
        roll = ("roll", state)
        deciding = self.two_players or player == "max"
        if turn > 0 and deciding:
            return Decision(player, (("hold", (theirs, mine + turn, 0, other), None), ("roll", roll, None)))
        if turn == 0 and mine == 1 and deciding:
            return Decision(player, (("roll", roll, None), ("pass", (theirs, mine, 0, other), None)))
        return Chance(((1, roll, None),))


def brute_force_value(model, payoff, endless):
    nodes = reachable_nodes(model)
    deciders = {
        side: sorted((s for s, n in nodes.items() if isinstance(n, Decision) and n.side == side), key=repr)
        for side in ("max", "min")
    }
    choices = {
        side: list(itertools.product(*(range(len(nodes[s].actions)) for s in deciders[side]))) for side in deciders
    }
    best = None
    for max_choice in choices["max"]:
        worst = None
        for min_choice in choices["min"]:
            policy = dict(zip(deciders["max"], max_choice)) | dict(zip(deciders["min"], min_choice))
            value = dense_evaluate(model, nodes, policy, payoff, endless)["value"]
            worst = value if worst is None else min(worst, value)
        best = worst if best is None else max(best, worst)
    return as_fraction(best), len(deciders["max"]), len(deciders["min"])


@pytest.mark.parametrize("two_players", [True, False])
@pytest.mark.parametrize("endless", [Fraction(0), Fraction(1, 2), Fraction(1)])
def test_tiny_pig_value_matches_brute_force_over_all_strategies(two_players, endless):
    model = TinyPig(two_players)
    expected, max_count, min_count = brute_force_value(model, {"win": 1}, endless)
    assert max_count >= 2 and (min_count >= 2 if two_players else min_count == 0)
    solution = solve(model, nonterminating_payoff=endless)
    assert solution.value == expected
    assert len(solution.strategy) == max_count + min_count
    assert sum(solution.absorption.values()) + solution.never_ends == 1


class EqualChoices:
    """Two actions of exactly equal win probability 1/2 but different lengths: "retry"
    loops through a half-chance of coming back, "flip" is one coin toss."""

    outcomes = ("win", "loss")
    reward_names = ()

    def __init__(self, retry_first):
        retry, flip = ("retry", "again", None), ("flip", "coin", None)
        self.actions = (retry, flip) if retry_first else (flip, retry)

    def initial_state(self):
        return "choose"

    def expand(self, state):
        if state == "choose":
            return Decision("max", self.actions)
        if state == "again":
            return Chance(((1, "choose", None), (1, "coin", None)))
        if state == "coin":
            return Chance(((1, "win", None), (1, "loss", None)))
        return Terminal(state)


@pytest.mark.parametrize("retry_first, action, steps", [(True, "retry", 3), (False, "flip", 1)])
def test_tie_break_keeps_first_action_among_equal_values(retry_first, action, steps):
    solution = solve(EqualChoices(retry_first))
    assert solution.value == Fraction(1, 2)
    assert solution.strategy == {"choose": action}
    assert solution.expected_steps == steps


class TrappedLoop:
    """With probability 1/3 play falls into a 2-cycle with no exit."""

    outcomes = ("win", "loss")
    reward_names = ()

    def initial_state(self):
        return "start"

    def expand(self, state):
        table = {
            "start": Chance(((1, "ping", None), (1, "win", None), (1, "loss", None))),
            "ping": Chance(((1, "pong", None),)),
            "pong": Chance(((1, "ping", None),)),
        }
        return table.get(state) or Terminal(state)


def test_endless_loop_is_reported_not_hung():
    solution = solve(TrappedLoop(), payoff={"win": 1}, nonterminating_payoff=Fraction(1, 4), all_states=True)
    assert solution.never_ends == Fraction(1, 3)
    assert solution.absorption == {"win": Fraction(1, 3), "loss": Fraction(1, 3)}
    assert solution.value == Fraction(1, 3) + Fraction(1, 12)
    assert solution.expected_steps is None
    assert solution.state_absorption("ping")["never_ends"] == 1
    assert solution.state_value("pong") == Fraction(1, 4)


class AlreadyOver:
    outcomes, reward_names = ("win", "loss"), ("gold",)

    def initial_state(self):
        return "win"

    def expand(self, state):
        return Terminal(state)


@pytest.mark.parametrize("arithmetic", ["exact", "float"])
def test_a_terminal_initial_state_takes_no_steps(arithmetic):
    solution = solve(AlreadyOver(), arithmetic=arithmetic)
    assert solution.absorption == {"win": 1, "loss": 0}
    assert solution.expected_steps == 0 and solution.expected_rewards == {"gold": 0}


class StayOrLeave:
    """ "go" wins at once; "stay" moves to a coin that returns or falls into an endless loop
    (a cyclic component that play reaches only under the strategy not chosen)."""

    outcomes, reward_names = ("win", "loss"), ()

    def initial_state(self):
        return "choose"

    def expand(self, state):
        table = {
            "choose": Decision("max", (("go", "win", None), ("stay", "coin", None))),
            "coin": Chance(((1, "choose", None), (1, "loop", None))),
            "loop": Chance(((1, "loop", None),)),
        }
        return table.get(state) or Terminal(state)


@pytest.mark.parametrize("arithmetic", ["exact", "float"])
def test_endless_loop_off_the_chosen_path_gets_no_visits(arithmetic):
    solution = solve(StayOrLeave(), arithmetic=arithmetic)
    assert solution.strategy == {"choose": "go"}
    assert solution.absorption["win"] == 1 and solution.never_ends == 0
    assert solution.expected_steps == 0


def test_float_mode_agrees_with_exact():
    chain = ContestChain(size=300, branches=12, seed=3, decision_every=7)
    graph = explore(chain)
    exact, approximate = solve(graph), solve(graph, arithmetic="float")
    assert exact.exact and not approximate.exact
    assert isinstance(approximate.value, float)
    for name in chain.outcomes:
        assert abs(approximate.absorption[name] - float(exact.absorption[name])) < 1e-9
    assert abs(approximate.expected_steps - float(exact.expected_steps)) < 1e-9 * float(exact.expected_steps)
    assert approximate.strategy == exact.strategy


def test_state_limit_raises_with_count_and_remedy():
    with pytest.raises(TooLargeError) as raised:
        explore(TugOfWar(reach=50), max_states=20)
    message = str(raised.value)
    assert "20 states" in message and "raise the limit with `max_states`" in message


def test_components_match_networkx_condensation():
    graph = explore(ContestChain(size=400, branches=10, seed=5))
    ours = {frozenset(c) for c in graph.strongly_connected_components()}
    theirs = {frozenset(c) for c in nx.strongly_connected_components(graph.to_networkx())}
    assert ours == theirs
    solution = solve(graph)
    assert solution.components == len(ours)
    assert solution.largest_component == max(map(len, ours))


def test_tug_of_war_single_big_cycle_is_symmetric():
    solution = solve(TugOfWar(reach=30))
    assert solution.absorption["win"] == Fraction(1, 2)
    assert solution.largest_component == 59


# -- the value-only backward pass (optimal play) against the vector pass and the dense solve ----


def answers(solution):
    return (
        solution.absorption,
        solution.never_ends,
        solution.value,
        solution.expected_steps,
        solution.expected_rewards,
        solution.strategy,
    )


class TiedGame(RandomGame):
    """`RandomGame` whose decisions often list the same target twice (under other names) or
    targets of exactly equal value (both terminals of one payoff): ties the first-listed
    action must win."""

    def __init__(self, seed, size=9, one_sided=False):
        super().__init__(seed, size)
        rng = random.Random(seed + 7919)
        for state, node in list(self.nodes.items()):
            if isinstance(node, Decision):
                actions = list(node.actions)
                for index in range(rng.randint(1, 2)):
                    _, target, rewards = rng.choice(actions)
                    actions.insert(rng.randrange(len(actions) + 1), (f"copy{index}", target, rewards))
                if rng.random() < 0.5:
                    actions.insert(rng.randrange(len(actions) + 1), ("lose", "loss", None))
                    actions.insert(rng.randrange(len(actions) + 1), ("lose again", "loss", None))
                self.nodes[state] = Decision("max" if one_sided else node.side, tuple(actions))


class FromState:
    """``model`` started at another state (per-state values from the dense reference)."""

    def __init__(self, model, state):
        self.model, self.state = model, state
        self.outcomes, self.reward_names = model.outcomes, model.reward_names

    def initial_state(self):
        return self.state

    def expand(self, state):
        return self.model.expand(state)


PAYOFF = {"win": 1, "tie": Fraction(1, 2)}


def dense_values(model, nodes, policy, endless):
    """Every state's exact value under ``policy`` (action indices), by the dense reference."""
    return {
        state: as_fraction(dense_evaluate(FromState(model, state), nodes, policy, PAYOFF, endless)["value"])
        for state in nodes
    }


def action_value(values, nodes, action):
    _, target, _ = action
    return (
        values[target]
        if target in values and not isinstance(nodes[target], Terminal)
        else (Fraction(PAYOFF.get(nodes[target].outcome, 0)))
    )


@pytest.mark.parametrize("endless", [Fraction(0), Fraction(1, 2), Fraction(3, 2)])
@pytest.mark.parametrize("seed", range(24))
def test_value_only_pass_matches_vector_pass_and_dense_solve(seed, endless):
    """Optimal play solved with values only (the default) and with per-state vectors
    (``all_states``): identical Fractions and strategy; both equal the dense sympy solve
    of the chain the strategy leaves; every chosen action is worth the state's value
    exactly, nothing is worth more, and when the first-listed action among equals leaves
    every value unchanged, it is the one chosen."""
    model = TiedGame(seed, size=7 + seed % 8, one_sided=seed % 3 == 0)
    graph = explore(model)
    solution = solve(graph, payoff=PAYOFF, nonterminating_payoff=endless)
    vectors = solve(graph, payoff=PAYOFF, nonterminating_payoff=endless, all_states=True)
    assert answers(solution) == answers(vectors)
    nodes = reachable_nodes(model)
    names = {state: [name for name, _, _ in nodes[state].actions] for state in solution.strategy}
    policy = {state: names[state].index(action) for state, action in solution.strategy.items()}
    reference = dense_evaluate(model, nodes, policy, PAYOFF, endless)
    assert solution.value == as_fraction(reference["value"])
    assert solution.absorption == {k: as_fraction(v) for k, v in reference["absorption"].items()}
    assert solution.never_ends == as_fraction(reference["never"])
    values = dense_values(model, nodes, policy, endless)
    first_best = {}
    for state, choice in policy.items():
        worth = [action_value(values, nodes, action) for action in nodes[state].actions]
        better = max if nodes[state].side == "max" else min
        assert worth[choice] == values[state] == better(worth)
        first_best[state] = worth.index(values[state])
    if first_best != policy and dense_values(model, nodes, first_best, endless) == values:
        pytest.fail(f"the first action among equals leaves the values unchanged: {first_best} != {policy}")


@pytest.mark.parametrize("seed", range(6))
def test_one_sided_value_matches_brute_force_over_all_strategies(seed):
    model = TiedGame(seed, size=6, one_sided=True)
    nodes = reachable_nodes(model)
    deciders = sorted((s for s, n in nodes.items() if isinstance(n, Decision)), key=repr)
    best = max(
        as_fraction(dense_evaluate(model, nodes, dict(zip(deciders, choice)), PAYOFF, Fraction(1, 2))["value"])
        for choice in itertools.product(*(range(len(nodes[s].actions)) for s in deciders))
    )
    assert solve(model, payoff=PAYOFF, nonterminating_payoff=Fraction(1, 2)).value == best


class SpinOrLeave:
    """A loop with a live state and, under the chosen strategy, dead ones: "x" wins half
    the time and else goes to "d", where the maximiser spins through "s" forever (endless
    play pays 2, more than a win) rather than go back to "x"."""

    outcomes, reward_names = ("win", "loss"), ("turns",)

    def initial_state(self):
        return "x"

    def expand(self, state):
        table = {
            "x": Chance(((1, "d", (1,)), (1, "win", (1,)))),
            "d": Decision("max", (("out", "x", None), ("spin", "s", None))),
            "s": Chance(((1, "d", (1,)),)),
        }
        return table.get(state) or Terminal(state)


@pytest.mark.parametrize("all_states", [False, True])
@pytest.mark.parametrize("arithmetic", ["exact", "float"])
def test_flow_into_dead_members_of_a_loop_is_never_ending(all_states, arithmetic):
    solution = solve(
        SpinOrLeave(), payoff={"win": 1}, nonterminating_payoff=2, all_states=all_states, arithmetic=arithmetic
    )
    assert solution.strategy == {"d": "spin"} and solution.largest_component == 3
    assert (solution.absorption["win"], solution.never_ends, solution.value) == (0.5, 0.5, 1.5)
    assert solution.expected_steps is None and solution.expected_rewards == {"turns": None}


def test_the_forward_and_backward_values_must_agree(monkeypatch):
    """The value-only pass is checked against the forward pass's odds: a wrong value is caught."""
    from exactdice.markov import solver as solver_module

    original = solver_module._Solver.value_of

    def off_by_a_little(self, node):
        value = original(self, node)
        return value + Fraction(1, 10**9) if node == self.graph.initial else value

    monkeypatch.setattr(solver_module._Solver, "value_of", off_by_a_little)
    with pytest.raises(ArithmeticError, match="disagree on the value"):
        solve(RandomGame(3), payoff=PAYOFF)


@pytest.mark.parametrize("endless", [Fraction(0), Fraction(1, 2), Fraction(3, 2)])
@pytest.mark.parametrize("seed", range(16))
def test_visits_over_one_shared_denominator_match_per_state_denominators(seed, endless, monkeypatch):
    """Past `SHARED_DENOMINATOR_BITS` the visits come from `exactdice.markov.forward`'s
    pass instead of the solver's own: the same Fractions (odds, never-ends, steps,
    rewards), with decisions, loops through them and endless play."""
    from exactdice.markov import solver

    graph = explore(TiedGame(seed, size=7 + seed % 8, one_sided=seed % 3 == 0))
    own = solve(graph, payoff=PAYOFF, nonterminating_payoff=endless)
    monkeypatch.setattr(solver, "SHARED_DENOMINATOR_BITS", -1)
    monkeypatch.setattr(solver, "_ExpectedVisits", None)  # the shared pass must be the one used
    shared = solve(graph, payoff=PAYOFF, nonterminating_payoff=endless)
    assert answers(shared) == answers(own)
