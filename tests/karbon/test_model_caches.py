"""KarbonModel's caches are bounded; their bounds and the fixed take's shortcut must change
no state, no edge and no exact value."""

import pytest

from exactdice.karbon import ContestSetup, Rules, parse_narrator_policy, parse_player_policy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.solve import _solve_model
from exactdice.markov import explore

FIELDS = (
    "win",
    "loss",
    "tie",
    "never_ends",
    "expected_rounds",
    "expected_breaks",
    "expected_glitches",
    "expected_injuries",
    "expected_conditions",
)

CASES = [
    (
        dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=2, peril=1),
        "risk=always",
        "fixed",
        [],
        None,
    ),
    (
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={}, consequence=1, peril=1),
        "risk=always;risk_take=d6>d8;break=advantage>security",
        "random",
        ["sudden_death=on", "peril_chips=hand"],
        None,
    ),
    # the same contest without the cut after the roll: `_rest_by_situation` is bounded too
    (
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=1, peril=1),
        "risk=always",
        "fixed",
        [],
        False,
    ),
    (
        dict(player_dice={8: 1}, narrator_dice={6: 1}, pool={8: 1}, reserve={}, consequence=2, peril=1),
        "fixed",
        "fixed",
        ["injury_peril=on"],
        None,
    ),
    # decisions: actions' walks kept for their nodes' expansion (`_action_walks`)
    (
        dict(player_dice={8: 1}, narrator_dice={6: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=1, peril=1),
        "optimal",
        "optimal",
        [],
        None,
    ),
]


def _models(setup_kwargs, player, narrator, rules, split_rolls):
    setup = ContestSetup(**setup_kwargs)
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    default = KarbonModel(start.sizes, start.situation(), ruleset, p, n, split_rolls=split_rolls)
    tiny = KarbonModel(start.sizes, start.situation(), ruleset, p, n, split_rolls=split_rolls)
    tiny.rest_entries_kept = 1
    tiny.continuations_kept = 1
    tiny.action_walks_kept = 1
    return default, tiny, ruleset, p, n, start


@pytest.mark.parametrize("setup_kwargs,player,narrator,rules,split_rolls", CASES)
def test_tiny_cache_bounds_change_no_graph_and_no_value(
    python_walk, setup_kwargs, player, narrator, rules, split_rolls
):
    default, tiny, ruleset, p, n, start = _models(setup_kwargs, player, narrator, rules, split_rolls)
    graphs = [explore(model, progress=False) for model in (default, tiny)]
    for name in ("states", "kind", "data", "offsets", "targets", "weights", "chance_reward_mass"):
        assert getattr(graphs[0], name) == getattr(graphs[1], name), name
    # the bounds were reached, so the tiny model really ran with its caches starting afresh
    assert len(tiny._continuation_cache) <= 1
    assert len(tiny._rest_by_situation) <= 1
    assert sum(len(compiled) for compiled in tiny._rest_cache.values()) <= 2
    assert len(tiny._action_walks) <= 1
    draws = (start.player_draw, start.narrator_draw)
    default_fresh, tiny_fresh, *_ = _models(setup_kwargs, player, narrator, rules, split_rolls)
    results = [_solve_model(model, ruleset, p, n, draws=draws) for model in (default_fresh, tiny_fresh)]
    assert [getattr(results[0], f) for f in FIELDS] == [getattr(results[1], f) for f in FIELDS]
    assert results[0].win + results[0].loss + results[0].tie + results[0].never_ends == 1


@pytest.mark.parametrize("setup_kwargs,player,narrator,rules,split_rolls", CASES[:2])
def test_the_fixed_take_is_the_option_the_fixed_policy_picks(setup_kwargs, player, narrator, rules, split_rolls):
    """`_fixed_take_next` builds the fixed player's take alone; it must be the option
    `_fixed_choice` picks among all of `_take_options`, at every take the walk meets."""
    default, *_ = _models(setup_kwargs, player, narrator, rules, split_rolls)
    graph = explore(default, progress=False)
    takes = 0
    for state in graph.states:
        if type(state) is tuple and state[0] == "risk":
            _, position, winner = state
            for count in range(1, min(3, sum(position.pool)) + 1):
                situation = ("take", position, winner, count)
                options, _ = default._take_options(situation)
                _, expected, _ = default._fixed_choice(situation, options)
                assert default._fixed_take_next(situation) == expected
                takes += 1
    assert takes > 10
