"""The forward pass on Karbon graphs of every policy and knob: identical Fractions to the
backward solver with its own (per-state denominator) expectations; the float preview close."""

from __future__ import annotations

import pytest

from exactdice.karbon import ContestSetup, Rules, parse_narrator_policy, parse_player_policy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.solve import payoffs
from exactdice.markov import explore
from exactdice.markov.forward import forward_pass

from .test_forward import assert_forward_matches_backward

SETUPS = [
    # (setup, player policy, narrator policy, rules)
    (dict(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1), "fixed", "fixed", []),
    (dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=2, peril=1), "fixed", "fixed", ["peril_chips=hand"]),
    (
        dict(player_dice={4: 1}, narrator_dice={}, consequence=2, player_chips=6, player_stack=4),
        "fixed",
        "fixed",
        ["rewards_per_test=1"],
    ),
    (dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=2), "fixed", "fixed", ["sudden_death=on"]),
    (dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=3), "fixed", "hurt=injury", ["injury_peril=on"]),
    (
        dict(player_dice={4: 1}, narrator_dice={10: 1, 4: 1, 6: 1}, consequence=3, wins=1, narrator_chips=3),
        "glitch=sideswipe>hurt>plans;sideswipe_take=dice",
        "fixed",
        ["sideswipe_picker=narrator"],
    ),
    (
        dict(player_dice={10: 1}, narrator_dice={8: 1}, pool={4: 2, 10: 2}, consequence=1),
        "risk=always;risk_take=d4>d10",
        "fixed",
        ["tie_order=narrator_first"],
    ),
    (
        dict(
            player_dice={10: 1}, narrator_dice={8: 1, 10: 1}, reserve={4: 2}, consequence=2, peril=1, narrator_chips=2
        ),
        "break=footing-dice",
        "give=d4>d8>d10",
        [],
    ),
    (dict(player_dice={6: 1}, narrator_dice={6: 1}, pool={4: 3}, consequence=3), "glitch=plans", "random", []),
    (dict(player_dice={6: 1}, narrator_dice={6: 1}, pool={4: 3}, consequence=3), "glitch=plans", "plans=dice", []),
    (
        dict(ability=2, challenge=2, consequence=2, peril=1, fortune=1, training=True, pool={6: 2, 8: 2, 10: 2}),
        "fixed",
        "fixed",
        [],
    ),
    (
        dict(player_dice={8: 1}, narrator_dice={10: 1}, consequence=1, peril=1, draw_chips=True, pool={6: 1}),
        "risk=always",
        "fixed",
        [],
    ),
    (dict(player_dice={}, narrator_dice={}, consequence=1), "fixed", "fixed", []),  # never ends
    (dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=1, fallout=1), "fixed", "fixed", []),
    # decisions: the solver's strategy fed to the forward pass
    (
        dict(player_dice={6: 1}, narrator_dice={8: 1}, consequence=2, peril=1, player_stack=3, narrator_stack=4),
        "optimal",
        "optimal",
        [],
    ),
    (
        dict(player_dice={8: 1}, narrator_dice={6: 1}, consequence=2, peril=1, narrator_stack=2),
        "optimal",
        "kind",
        ["peril_chips=hand", "objective=win"],
    ),
    (
        dict(
            player_dice={},
            narrator_dice={},
            pool={6: 1},
            consequence=2,
            player_chips=1,
            player_stack=3,
            narrator_stack=2,
        ),
        "optimal",
        "optimal",
        [],
    ),
]


@pytest.mark.parametrize("setup_kwargs, player, narrator, rules", SETUPS)
def test_forward_pass_on_karbon_matches_backward_solver(setup_kwargs, player, narrator, rules):
    setup = ContestSetup(**{"pool": {}, "reserve": {}, **setup_kwargs})
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    graph = explore(KarbonModel(start.sizes, start.situation(), ruleset, p, n))
    payoff, endless = payoffs(ruleset)
    (absorption, never, _, rewards), solver = assert_forward_matches_backward(graph, payoff, endless)
    if not solver.chosen_edge:  # no decisions: the pass finds alive states and components itself
        alone = forward_pass(graph)
        assert (alone.absorption, alone.never_ends, alone.expected_rewards) == (absorption, never, rewards)
