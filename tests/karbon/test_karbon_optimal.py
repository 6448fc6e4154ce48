"""Optimal play: bounds against fixed and kind play, the two objectives, draws, strategy files."""

import json

import pytest

from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy, contest_odds, parse_player_policy

OPTIMAL, KIND = PlayerPolicy(kind="optimal"), NarratorPolicy(kind="kind")
SMALL = dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1)


def score(result):
    return result.win + result.tie / 2


@pytest.fixture(scope="module")
def optimal_vs_fixed():
    return contest_odds(ContestSetup(**SMALL), Rules(), OPTIMAL, NarratorPolicy())


@pytest.mark.parametrize(
    "fixed", ["fixed", "risk=always", "risk=always;risk_take=d4", "break=advantage>security", "glitch=plans"]
)
def test_optimal_player_beats_every_fixed_policy(optimal_vs_fixed, fixed):
    other = contest_odds(ContestSetup(**SMALL), Rules(), parse_player_policy(fixed), NarratorPolicy())
    assert optimal_vs_fixed.value == score(optimal_vs_fixed)
    assert score(optimal_vs_fixed) >= score(other)


def test_optimal_narrator_and_kind_narrator_bound_the_value(optimal_vs_fixed):
    setup = ContestSetup(**SMALL)
    both = contest_odds(setup, Rules(), OPTIMAL, NarratorPolicy(kind="optimal"))
    kind = contest_odds(setup, Rules(), OPTIMAL, KIND)
    assert score(both) <= score(optimal_vs_fixed) <= score(kind)
    for result in (both, kind):
        assert result.win + result.loss + result.tie + result.never_ends == 1


def test_score_and_win_objectives_choose_differently():
    # a case built to tell them apart: the score objective trades some wins for more ties
    setup = ContestSetup(player_dice={8: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={}, consequence=2)
    by_score = contest_odds(setup, Rules(objective="score"), OPTIMAL, NarratorPolicy())
    by_win = contest_odds(setup, Rules(objective="win"), OPTIMAL, NarratorPolicy())
    assert by_win.win > by_score.win
    assert score(by_score) > score(by_win)
    assert by_win.value == by_win.win and by_score.value == score(by_score)


def test_draw_search_picks_the_best_draw_and_lists_every_draw():
    setup = ContestSetup(ability=1, challenge=1, pool={6: 1, 8: 1, 10: 1}, reserve={}, consequence=1, fortune=1)
    result = contest_odds(setup, Rules(), OPTIMAL, NarratorPolicy(kind="optimal"), draw_values=True)
    assert set(result.draw_values) == {"d6", "d8", "d10"}
    best = max(result.draw_values, key=result.draw_values.get)
    assert result.player_draw == {int(best[1:]): 1}
    assert result.value == result.draw_values[best]
    # the narrator's answer minimises: no other answer to that draw is worse for the player
    for answer in setup.narrator_draws(result.player_draw):
        fixed_answer = contest_odds(
            ContestSetup(
                player_dice=result.player_draw,
                narrator_dice=answer,
                draw_chips=True,
                pool={s: 1 for s in (6, 8, 10) if s not in result.player_draw and s not in answer},
                reserve={},
                consequence=1,
                fortune=1,
            ),
            Rules(),
            OPTIMAL,
            NarratorPolicy(kind="optimal"),
        )
        assert fixed_answer.value >= result.value


def test_strategy_file_round_trip(tmp_path):
    from click.testing import CliRunner
    from exactdice.cli.main import cli
    from exactdice.karbon.strategy import load_strategy

    path = tmp_path / "strategy.json"
    runner = CliRunner()
    outcome = runner.invoke(
        cli,
        [
            "karbon",
            "odds",
            "--player-dice",
            "d6",
            "--narrator-dice",
            "d8",
            "--pool",
            "d4",
            "--reserve",
            "d4",
            "-w",
            "1",
            "-p",
            "1",
            "--player-policy",
            "optimal",
            "--strategy",
            str(path),
            "--json",
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    payload = json.loads(outcome.output)
    document = json.loads(path.read_text())
    assert payload["strategy_decisions"] == len(document["decisions"]) > 0
    points = {entry["point"] for entry in document["decisions"]}
    assert "risk" in points
    assert all(entry["side"] == "player" for entry in document["decisions"])
    table = load_strategy(path)
    assert len(table) == len(document["decisions"]) + 1


def test_optimal_value_equals_brute_force_over_positional_strategies():
    """A tiny contest (both stacks one chip from completing) has few decision states:
    every positional strategy of the player is evaluated as a fixed chain, and the best
    of them must be the optimal solve's value, reached by the strategy it returns."""
    import itertools

    from exactdice.karbon.model import KarbonModel
    from exactdice.markov import Chance, Decision, explore, solve
    from exactdice.karbon.solve import payoffs

    setup = ContestSetup(
        player_dice={4: 1}, narrator_dice={4: 1}, pool={}, reserve={}, consequence=1, player_stack=4, narrator_stack=4
    )
    ruleset = Rules()
    start = setup.start(OPTIMAL, NarratorPolicy())
    model = KarbonModel(start.sizes, start.situation(), ruleset, OPTIMAL, NarratorPolicy())
    graph = explore(model)
    payoff, endless = payoffs(ruleset)
    optimal = solve(graph, payoff=payoff, nonterminating_payoff=endless)
    decisions = [state for state in graph.states if isinstance(model.expand(state), Decision)]
    assert 2 <= len(decisions) <= 12

    class Following:
        outcomes, reward_names = model.outcomes, model.reward_names

        def __init__(self, choice):
            self.choice = choice

        def initial_state(self):
            return model.initial_state()

        def expand(self, state):
            node = model.expand(state)
            if isinstance(node, Decision):
                name, target, rewards = node.actions[self.choice[state]]
                return Chance(((1, target, rewards),))
            return node

    values = {}
    for picks in itertools.product(*(range(len(model.expand(s).actions)) for s in decisions)):
        choice = dict(zip(decisions, picks))
        values[picks] = solve(Following(choice), payoff=payoff, nonterminating_payoff=endless).value
    assert optimal.value == max(values.values())
    chosen = tuple(
        next(i for i, action in enumerate(model.expand(s).actions) if action[0] == optimal.strategy[s])
        for s in decisions
    )
    assert values[chosen] == optimal.value


def test_risking_with_an_empty_pool_is_not_dominated():
    """Risk with an empty pool takes no dice and only feeds the narrator chips, so it
    looks dominated, and the optimal-play issue suggested pruning it. It is not: here the
    player won the roll and sits at 1 + 3 chips with X = 1, the narrator's stack is 4 and
    a peril die is rolled. A peril hit completes the narrator's stack (a Glitch before
    placement); the player answers with sideswipe, taking every chip in the narrator's
    hand, and places them at once, so feeding the narrator chips can buy Breaks. Pruning
    the action would change the exact value, so the model keeps it."""
    from exactdice.karbon.dice import DiceSizes
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.position import Position
    from exactdice.karbon.solve import payoffs
    from exactdice.markov import solve

    ruleset = Rules()
    position = Position(
        player_hand=(0, 1),
        narrator_hand=(0, 0),
        pool=(0, 0),
        reserve=(0, 0),
        player_chips=1,
        narrator_chips=3,
        player_stack=3,
        narrator_stack=4,
        wins=1,
        losses=0,
        peril=1,
        track=3,
    )
    model = KarbonModel(DiceSizes([6, 8]), ("risk", position, "p"), ruleset, OPTIMAL, NarratorPolicy(kind="optimal"))
    payoff, endless = payoffs(ruleset)
    solution = solve(model, payoff=payoff, nonterminating_payoff=endless, all_states=True)
    risk, no_risk = solution.state_value(("riskroll", position, "p")), solution.state_value(("peril", position, "p"))
    assert risk > no_risk
    assert solution.strategy[("risk", position, "p")] == "yes"
    assert solution.value == risk


@pytest.mark.parametrize(
    "narrator_kind, objective, knobs",
    [
        ("fixed", "score", {}),
        ("fixed", "win", {}),
        ("optimal", "score", {}),
        ("optimal", "win", {"tie_order": "narrator_first", "peril_chips": "hand"}),
        ("kind", "score", {"sudden_death": "on"}),
    ],
)
def test_value_only_solve_matches_the_vector_solve(narrator_kind, objective, knobs):
    """Optimal play is solved with values only (odds from the forward pass); the solve
    that carries every state's outcome vector (``all_states``, what ``--explain`` uses)
    must give identical Fractions, expectations and strategy on the same graph, and the
    float preview the same strategy."""
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.solve import payoffs
    from exactdice.markov import explore, solve

    ruleset = Rules(objective=objective, **knobs)
    narrator = NarratorPolicy(kind=narrator_kind)
    start = ContestSetup(**SMALL).start(OPTIMAL, narrator)
    graph = explore(KarbonModel(start.sizes, start.situation(), ruleset, OPTIMAL, narrator))
    payoff, endless = payoffs(ruleset)
    values_only = solve(graph, payoff=payoff, nonterminating_payoff=endless)
    vectors = solve(graph, payoff=payoff, nonterminating_payoff=endless, all_states=True)
    fields = ("absorption", "never_ends", "value", "expected_steps", "expected_rewards", "strategy")
    assert [getattr(values_only, name) for name in fields] == [getattr(vectors, name) for name in fields]
    assert len(values_only.strategy) > 100 and values_only.cyclic_components > 0
    assert solve(graph, payoff=payoff, nonterminating_payoff=endless, arithmetic="float").strategy == vectors.strategy
