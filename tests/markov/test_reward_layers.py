"""Absorption by a reward's total (`exactdice.markov.reward_layers`) against a brute-force
walk of every path, the capped-counter product solved by the solver, and closed forms."""

from __future__ import annotations

from fractions import Fraction

import pytest

from exactdice.errors import InputError
from exactdice.markov import explore, solve
from exactdice.markov.model import Chance, Decision, Terminal
from exactdice.markov.reward_counts import HasDecisions, reward_count_distribution
from exactdice.markov.reward_layers import FixedStrategy, absorption_by_reward
from exactdice.markov.synthetic import ContestChain, GamblersRuin


def brute_force(model, reward_slot: int, up_to: int, steps: int):
    """{(outcome, total): p} for totals <= up_to, pushing exact mass along every branch for
    ``steps`` steps (enough when every path that ends with such a total has ended by then)."""
    mass, ended = {(model.initial_state(), 0): Fraction(1)}, {}
    for _ in range(steps):
        following = {}
        for (state, total), p in mass.items():
            if total > up_to:
                continue
            node = model.expand(state)
            if isinstance(node, Terminal):
                ended[(node.outcome, total)] = ended.get((node.outcome, total), 0) + p
                continue
            whole = sum(weight for weight, _, _ in node.branches)
            for weight, successor, rewards in node.branches:
                key = (successor, total + (rewards[reward_slot] if rewards else 0))
                following[key] = following.get(key, 0) + p * Fraction(weight, whole)
        mass = following
    return ended


def as_pairs(layers):
    return {(outcome, total): p for total, layer in enumerate(layers.by_total) for outcome, p in layer.items() if p}


@pytest.mark.parametrize("goal,start,up,down", [(4, 2, 1, 1), (5, 2, 2, 1), (6, 3, 1, 3), (3, 1, 5, 2)])
def test_gamblers_ruin_matches_every_path_walked(goal, start, up, down):
    model = GamblersRuin(goal=goal, start=start, up=up, down=down)
    layers = absorption_by_reward(model, "bets", up_to=10)
    assert as_pairs(layers) == brute_force(model, 0, 10, steps=12)
    assert sum(layers.ended_by()[-1:], layers.tail) == 1


def test_symmetric_ruin_closed_form():
    """From the middle of 0..4 play ends after 2k bets with probability 2^-k, won or lost alike."""
    layers = absorption_by_reward(GamblersRuin(goal=4, start=2, up=1, down=1), "bets", up_to=12)
    for bets, layer in enumerate(layers.by_total):
        half = Fraction(1, 2 ** (bets // 2 + 1)) if bets % 2 == 0 and bets > 0 else 0
        assert layer == {"win": half, "loss": half}
    assert layers.tail == Fraction(1, 2**6)


class LoopsAndJumps:
    """A chain with loops that earn nothing (a self-loop and a two-state loop), branches
    that earn 2, and a region that can never end."""

    outcomes = ("win", "loss")
    reward_names = ("other", "rounds")

    def initial_state(self):
        return "start"

    def expand(self, state):
        return {
            "start": Chance(((2, "start", None), (1, "left", (5, 0)), (1, "right", (0, 1)), (1, "limbo", (0, 1)))),
            "left": Chance(((1, "right", None), (3, "start", (0, 2)), (1, "won", (0, 1)))),
            "right": Chance(((1, "left", None), (2, "lost", (0, 1)), (1, "start", (0, 1)))),
            "limbo": Chance(((1, "limbo", (0, 1)), (1, "limbo2", None))),
            "limbo2": Chance(((1, "limbo", None),)),
            "won": Terminal("win"),
            "lost": Terminal("loss"),
        }[state]


def test_loops_that_earn_nothing_and_rewards_of_two_match_the_walk_and_the_solver():
    model = LoopsAndJumps()
    layers = absorption_by_reward(model, "rounds", up_to=8)
    walked = brute_force(model, 1, 8, steps=400)
    for key, p in as_pairs(layers).items():  # the walk only approaches the loops' sums
        assert abs(p - walked[key]) < Fraction(1, 10**30), key
    law = reward_count_distribution(model, "rounds", cap=8)  # the product with a counter, solved
    assert [sum(layer.values()) for layer in layers.by_total] == [law[str(total)] for total in range(9)]
    assert layers.tail == law["9+"]
    # the mass that enters the region that never ends (19/36, the solver says) stays in the
    # tail for ever; the rest of the tail vanishes as the totals grow
    never_ends = solve(explore(model)).never_ends
    assert never_ends == Fraction(19, 36) and layers.tail > never_ends
    far = absorption_by_reward(model, "rounds", up_to=80)
    assert never_ends < far.tail < never_ends + Fraction(1, 10**6)


def test_a_long_contest_chain_agrees_with_the_capped_counter_product():
    model = ContestChain(size=120, branches=6, seed=3, reach=25)
    layers = absorption_by_reward(model, "rounds", up_to=7)
    law = reward_count_distribution(model, "rounds", cap=7)
    assert [sum(layer.values()) for layer in layers.by_total] == [law[str(total)] for total in range(8)]
    assert layers.tail == law["8+"]
    # summed over every total, each outcome's mass tends to its absorption probability
    far = absorption_by_reward(model, "rounds", up_to=60)
    absorption = solve(explore(model)).absorption
    for outcome in model.outcomes:
        assert 0 <= absorption[outcome] - sum(layer[outcome] for layer in far.by_total) <= far.tail


def test_a_strategy_fixes_a_games_decisions():
    game = ContestChain(size=60, branches=4, seed=2, reach=12, decision_every=5)
    with pytest.raises(HasDecisions, match="strategy"):
        absorption_by_reward(game, "rounds", up_to=3)
    strategy = solve(game).strategy
    layers = absorption_by_reward(game, "rounds", up_to=9, strategy=strategy)
    law = reward_count_distribution(FixedStrategy(game, strategy), "rounds", cap=9)
    assert [sum(layer.values()) for layer in layers.by_total] == [law[str(total)] for total in range(10)]
    assert absorption_by_reward(FixedStrategy(game, strategy), "rounds", up_to=9) == layers
    with pytest.raises(HasDecisions, match="no action"):
        absorption_by_reward(game, "rounds", up_to=3, strategy={})


def test_bad_input_names_the_parameter():
    model = GamblersRuin(goal=3, start=1, up=1, down=1)
    with pytest.raises(InputError, match="reward: the model has no reward 'rounds'"):
        absorption_by_reward(model, "rounds", up_to=3)
    with pytest.raises(InputError, match="up_to: must be a whole number >= 0"):
        absorption_by_reward(model, "bets", up_to=-1)

    class Refund(GamblersRuin):
        def expand(self, money):
            node = super().expand(money)
            return node if isinstance(node, Terminal) else Chance(((1, money + 1, (-1,)),))

    with pytest.raises(InputError, match="counts only rewards >= 0"):
        absorption_by_reward(Refund(goal=3, start=1, up=1, down=1), "bets", up_to=2)


def test_a_decision_in_the_strategy_free_model_is_named():
    class Choice:
        outcomes, reward_names = ("a",), ("steps",)

        def initial_state(self):
            return 0

        def expand(self, state):
            return Decision("max", (("go", 1, (1,)),)) if state == 0 else Terminal("a")

    layers = absorption_by_reward(Choice(), "steps", up_to=2, strategy={0: "go"})
    assert layers.ended_by() == [0, 1, 1] and layers.tail == 0
