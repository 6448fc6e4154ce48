"""Karbon's exact model: the spec's micro-example, independent hand computations, and a
test per knob and policy key that fails if the knob were ignored."""

import json
import re
from fractions import Fraction
from functools import lru_cache

import pytest

from exactdice.errors import InputError
from exactdice.karbon import (
    ContestSetup,
    Rules,
    contest_odds,
    parse_narrator_policy,
    parse_player_policy,
    read_state_file,
)

MICRO_WIN = Fraction(
    5990740867607044698482871905123999658267434893078700, 9080225136878889747585636270823606341219939818857851
)


def odds(ruleset=None, player="fixed", narrator="fixed", **setup):
    setup.setdefault("pool", {})
    setup.setdefault("reserve", {})
    rules = Rules().with_rules(ruleset or [])
    return contest_odds(ContestSetup(**setup), rules, parse_player_policy(player), parse_narrator_policy(narrator))


def assert_distribution(result):
    assert result.win + result.loss + result.tie + result.never_ends == 1


def test_spec_micro_example():
    result = odds(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1)
    assert result.states == 100
    assert result.win == MICRO_WIN
    assert result.tie == 0
    assert_distribution(result)


def test_fixed_policy_state_count_matches_the_independent_explorer():
    # the optimal-play issue measured 225 states for this setup with an independent explorer
    result = odds(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1)
    assert result.states == 225
    assert_distribution(result)


def race_to_five(p_player, p_narrator, player_first=True, need=5):
    """Independent computation: two d4 hands (no turncoats) racing to one completion (W = 1)."""
    only_p = p_player * (1 - p_narrator)
    only_n = p_narrator * (1 - p_player)
    both = p_player * p_narrator
    neither = 1 - only_p - only_n - both

    @lru_cache(maxsize=None)
    def win(a, b):  # chips still needed by player, narrator
        if a <= 0 and b <= 0:
            return Fraction(1 if player_first else 0)
        if a <= 0:
            return Fraction(1)
        if b <= 0:
            return Fraction(0)
        total = only_p * win(a - 1, b) + only_n * win(a, b - 1) + both * win(a - 1, b - 1)
        return total / (1 - neither)

    return win(need, need)


@pytest.mark.parametrize("tie_order", ["player_first", "narrator_first"])
def test_d4_race_against_hand_recursion_and_tie_order(tie_order):
    result = odds([f"tie_order={tie_order}"], player_dice={4: 1}, narrator_dice={4: 1}, consequence=1)
    expected = race_to_five(Fraction(3, 4), Fraction(3, 4), player_first=tie_order == "player_first")
    assert result.win == expected
    assert result.loss == 1 - expected
    # one chip per round each side can win: rounds until someone completes is at least 5
    assert result.expected_rounds > 5


def test_two_d4_against_one_d4_hand_recursion():
    # 2d4 v d4: hits 0..2 against 0..1; the winner gains its own hits, both on a tie
    from exactdice.core import Pool, d

    p_hits = Pool([d(4)] * 2).count_where(lambda f: f <= 3).probabilities()
    n_hits = {0: Fraction(1, 4), 1: Fraction(3, 4)}

    @lru_cache(maxsize=None)
    def win(a, b):  # chips on stacks
        if a >= 5 and b >= 5:
            return Fraction(1)
        if a >= 5:
            return Fraction(1)
        if b >= 5:
            return Fraction(0)
        stay, total = Fraction(0), Fraction(0)
        for hp, pp in p_hits.items():
            for hn, pn in n_hits.items():
                ga = hp if hp >= hn else 0
                gb = hn if hn >= hp else 0
                if ga == gb == 0:
                    stay += pp * pn
                else:
                    total += pp * pn * win(a + ga, b + gb)
        return total / (1 - stay)

    result = odds(player_dice={4: 2}, narrator_dice={4: 1}, consequence=1)
    assert result.win == win(0, 0)


def test_peril_chips_knob_changes_the_answer():
    base = dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=2, peril=1)
    stack = odds(**base)
    hand = odds(["peril_chips=hand"], **base)
    assert stack.win != hand.win
    assert_distribution(stack), assert_distribution(hand)


def test_rewards_per_test_knob():
    base = dict(player_dice={4: 1}, narrator_dice={}, consequence=2, player_chips=6, player_stack=4)
    unlimited = odds(**base)
    one = odds(["rewards_per_test=1"], **base)
    # unlimited: the first placement (10 chips) earns two Breaks at once, so fewer rounds
    assert unlimited.win == one.win == 1
    assert unlimited.expected_rounds < one.expected_rounds


def test_sudden_death_removes_ties():
    base = dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=2)
    plain = odds(**base)
    sudden = odds(["sudden_death=on"], **base)
    assert plain.tie > 0 and sudden.tie == 0
    assert sudden.win > plain.win and sudden.loss > plain.loss
    assert_distribution(sudden)


def test_injury_peril_and_hurt_preference():
    base = dict(player_dice={4: 1}, narrator_dice={4: 1}, consequence=3)
    condition = odds(**base)
    injury = odds(narrator="hurt=injury", **base)
    injury_peril = odds(["injury_peril=on"], narrator="hurt=injury", **base)
    assert condition.expected_injuries == 0 and condition.expected_conditions > 0
    assert injury.expected_injuries > 0 and injury.expected_conditions == 0
    assert injury.win > condition.win  # an injury gives the player two chips
    assert injury_peril.win < injury.win  # ... and with the knob a peril die too


def test_sideswipe_take_and_picker():
    base = dict(player_dice={4: 1}, narrator_dice={10: 1, 4: 1, 6: 1}, consequence=3, wins=1, narrator_chips=3)
    results = {}
    for take in ("dice", "chips"):
        for picker in ("player", "narrator"):
            results[take, picker] = odds(
                [f"sideswipe_picker={picker}"], player=f"glitch=sideswipe>hurt>plans;sideswipe_take={take}", **base
            ).win
    assert results["dice", "player"] != results["dice", "narrator"]
    assert results["chips", "player"] == results["chips", "narrator"]  # the picker only picks dice
    assert results["dice", "player"] != results["chips", "player"]


def test_risk_and_risk_take():
    base = dict(player_dice={10: 1}, narrator_dice={8: 1}, pool={4: 2, 10: 2}, consequence=1)
    never = odds(**base)
    always_best = odds(player="risk=always;risk_take=d4>d10", **base)
    always_worst = odds(player="risk=always;risk_take=d10>d4", **base)
    assert len({never.win, always_best.win, always_worst.win}) == 3
    assert always_best.win > always_worst.win


def test_break_order_footing_and_advantage():
    base = dict(
        player_dice={10: 1}, narrator_dice={8: 1, 10: 1}, reserve={4: 2}, consequence=2, peril=1, narrator_chips=2
    )
    results = {
        order: odds(player=f"break={order}", **base).win
        for order in ("security", "footing-discard", "footing-dice", "advantage")
    }
    assert len(set(results.values())) == 4


def test_narrator_give_preference():
    base = dict(player_dice={10: 1}, narrator_dice={4: 1, 10: 2}, consequence=3, player_chips=4)
    give_d10 = odds(player="break=footing-dice", **base)
    give_d4 = odds(player="break=footing-dice", narrator="give=d4>d8>d10", **base)
    assert give_d4.win > give_d10.win


def test_plans_and_random_narrator():
    base = dict(player_dice={6: 1}, narrator_dice={6: 1}, pool={4: 3}, consequence=3)
    peril = odds(**base, player="glitch=plans")
    dice = odds(**base, player="glitch=plans", narrator="plans=dice")
    dice_d10 = odds(**base, player="glitch=plans", narrator="plans=dice;plans_take=d10>d4")
    coin = odds(**base, player="glitch=plans", narrator="random")
    assert len({peril.win, dice.win, coin.win}) == 3
    assert dice_d10.win == dice.win  # the pool holds only d4: the preference cannot matter
    assert_distribution(coin)


def test_draws_fortune_training_and_draw_chips():
    pool = {6: 2, 8: 2, 10: 2}
    plain = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, pool=pool, reserve={}))
    assert plain.player_draw == {8: 1} and plain.narrator_draw == {8: 1}
    fortune = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, fortune=1, pool=pool, reserve={}))
    assert fortune.player_draw == {6: 1}
    trained = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, training=True, pool=pool, reserve={}))
    assert trained.win > plain.win  # one chip for the d8 drawn
    hands = dict(player_dice={8: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})
    without = contest_odds(ContestSetup(**hands))
    with_chips = contest_odds(ContestSetup(draw_chips=True, **hands))
    assert with_chips.win < without.win  # the narrator's d10 pays it a chip


def test_fallout_glitch_before_the_first_round():
    result = odds(player_dice={4: 1}, narrator_dice={4: 1}, consequence=1, fallout=1)
    assert result.loss == 1 and result.expected_rounds == 0


def test_never_ending_contest_is_reported():
    result = odds(player_dice={}, narrator_dice={}, consequence=1)
    assert result.never_ends == 1


def test_pool_cannot_supply_the_draw():
    with pytest.raises(InputError, match="cannot supply") as raised:
        contest_odds(ContestSetup(ability=3, challenge=1, pool={8: 2}, reserve={}))
    assert "fortune" not in str(raised.value)
    # Fortune is named only where more of it would let the pool supply the draw
    with pytest.raises(InputError, match=r"cannot supply 3 dice .*raise `fortune`"):
        contest_odds(ContestSetup(ability=3, challenge=1, pool={6: 3, 8: 1}, reserve={}, fortune=1))
    with pytest.raises(InputError, match="cannot supply 16 dice") as raised:
        contest_odds(ContestSetup(ability=16, challenge=1, fortune=20))
    assert "fortune" not in str(raised.value)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        (dict(ability=1, challenge=0), "challenge"),
        (dict(ability=-1, challenge=1), "ability"),
        (dict(ability=1, challenge=1, consequence=2, wins=1, losses=1), "wins"),
        (dict(player_dice={8: 1}, narrator_dice={8: 1}, player_stack=5), "player_stack"),
    ],
)
def test_impossible_setups(kwargs, field):
    with pytest.raises(InputError) as error:
        ContestSetup(**kwargs)
    assert error.value.field == field


def test_state_file(tmp_path):
    state = {
        "player_dice": "d8,d8",
        "narrator_dice": "2d10",
        "pool": "3d6",
        "reserve": "none",
        "player_chips": 2,
        "narrator_chips": 0,
        "player_stack": 3,
        "narrator_stack": 1,
        "wins": 1,
        "losses": 0,
        "peril": 1,
        "consequence": 3,
    }
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    setup = read_state_file(path)
    assert setup.player_stack == 3 and setup.wins == 1
    assert_distribution(contest_odds(setup))
    path.write_text(json.dumps({**state, "colour": "red"}))
    with pytest.raises(InputError, match="unknown key"):
        read_state_file(path)
    path.write_text(json.dumps({**state, "player_stack": 5}))
    with pytest.raises(InputError, match="player_stack"):
        read_state_file(path)
    # values are quoted as the file writes them (JSON), not as Python would
    path.write_text(json.dumps({**state, "peril": True}))
    with pytest.raises(InputError, match="peril: must be a whole number, got true$"):
        read_state_file(path)
    path.write_text(json.dumps({**state, "pool": None}))
    with pytest.raises(InputError, match='pool: must be a dice string like "2d8,d10" or "none", got null$'):
        read_state_file(path)


def test_a_setup_takes_dice_as_text_or_counts_and_names_bad_ones():
    as_text = ContestSetup(ability=3, challenge=2, pool="7d6,5d8,3d10", reserve="5d6")
    assert as_text == ContestSetup(ability=3, challenge=2, pool={6: 7, 8: 5, 10: 3}, reserve={6: 5})
    for pool, words in (
        ({0: 2}, "pool: d0: a die needs 1 to 1,000,000 sides"),
        ({6: -1}, "pool: d6: the count must be a whole number >= 0, got -1"),
        ([6, 8], 'pool: give dice like "2d8,d10" or a {sides: count} mapping'),
        ("d6,zz", 'pool: "zz" is not a die'),
    ):
        with pytest.raises(InputError, match=re.escape(words)):
            ContestSetup(ability=1, challenge=1, pool=pool)


def test_policy_parsing_errors():
    with pytest.raises(InputError, match="unknown policy key"):
        parse_player_policy("colour=red")
    with pytest.raises(InputError, match="risk"):
        parse_player_policy("risk=sometimes")
    with pytest.raises(InputError, match="narrator policy"):
        parse_player_policy("random")
    # a word that is no policy: the nearest name, and what is allowed
    with pytest.raises(
        InputError,
        match=r'"optimall" is not a policy \(did you mean "optimal"\?\); give '
        r"optimal or fixed, or preferences as key=value pairs",
    ):
        parse_player_policy("optimall")
    with pytest.raises(InputError, match=r'"cruel" is not a policy; give fixed, optimal, kind or random'):
        parse_narrator_policy("cruel")
    with pytest.raises(InputError, match=r'"risk" is a key without a value; write risk=VALUE'):
        parse_player_policy("risk")
    with pytest.raises(InputError, match=r'"fixed" is a policy of its own; it cannot be combined'):
        parse_player_policy("fixed;risk=always")
    # the random narrator's hurt and plans are coin flips: a preference for them is refused
    for text in ("random;hurt=injury", "random; plans=dice", "random;give=d8>d10>d6;hurt=condition"):
        with pytest.raises(InputError, match=r"(hurt|plans)= is a coin flip under random"):
            parse_narrator_policy(text)
    assert parse_narrator_policy("random;give=d8>d10>d6").give != parse_narrator_policy("random").give
    for text in ("random", "random;give=d8>d10>d6", "hurt=injury;plans=dice", "fixed"):
        policy = parse_narrator_policy(text)
        assert parse_narrator_policy(policy.text()) == policy  # written back, read the same
    with pytest.raises(InputError, match="knob"):
        Rules().with_rules(["nope=1"])
    with pytest.raises(InputError, match="tie_order"):
        Rules().with_rules(["tie_order=sideways"])


def test_float_mode_is_labelled_and_close():
    exact = odds(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1)
    approx = contest_odds(
        ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}), arithmetic="float"
    )
    assert approx.exact is False and approx.to_json()["exact"] is False
    assert abs(approx.win - float(exact.win)) < 1e-9


@pytest.mark.parametrize(
    "setup_kwargs,player,narrator,rules",
    [
        (
            dict(player_dice={8: 1}, narrator_dice={8: 1}, consequence=2, player_chips=9, narrator_chips=12),
            "fixed",
            "fixed",
            ["sudden_death=on"],
        ),
        (
            dict(player_dice={4: 1}, narrator_dice={10: 1}, consequence=3, peril=1),
            "risk=always;glitch=sideswipe>hurt;sideswipe_take=chips",
            "random",
            ["rewards_per_test=1", "tie_order=narrator_first"],
        ),
        (
            dict(player_dice={6: 1}, narrator_dice={10: 1}, consequence=3, peril=1, wins=1),
            "risk=always;glitch=sideswipe>hurt;sideswipe_take=chips",
            "hurt=injury",
            [],
        ),
        (
            dict(player_dice={6: 1}, narrator_dice={8: 1}, consequence=2, peril=1, player_stack=3, narrator_stack=4),
            "optimal",
            "optimal",
            [],
        ),
        (
            dict(player_dice={6: 1}, narrator_dice={8: 1}, consequence=2, peril=0, player_stack=2, narrator_stack=3),
            "optimal",
            "optimal",
            ["rewards_per_test=1"],
        ),
        (
            dict(player_dice={8: 1}, narrator_dice={6: 1}, consequence=2, peril=1, narrator_stack=2),
            "optimal",
            "kind",
            ["peril_chips=hand"],
        ),
        # empty hands, no peril: every round is the same 0-0 tie until the player risks, so
        # "no risk" first among equal values must survive (expected rounds tell)
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
    ],
)
def test_state_merges_change_no_result(setup_kwargs, player, narrator, rules):
    """The model merges states two exact ways: chips in hand cut to what can still matter
    (KarbonModel._capped) and, between the roll and placement, the placing sides' stacks
    held in hand (placement_folded). The graph without them is larger and must give
    identical exact results and expectations."""
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.solve import _solve_model

    setup = ContestSetup(**{"pool": {}, "reserve": {}, **setup_kwargs})
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    results = []
    for cap, fold in ((True, True), (True, False), (False, True), (False, False)):
        model = KarbonModel(start.sizes, start.situation(), ruleset, p, n, cap_chips=cap, fold_chips=fold)
        results.append(_solve_model(model, ruleset, p, n, draws=(start.player_draw, start.narrator_draw)))
    merged, plain = results[0], results[-1]
    assert merged.states <= min(result.states for result in results)
    if player == "optimal":
        assert merged.states < plain.states
    fields = (
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
    for result in results[1:]:
        assert [getattr(merged, f) for f in fields] == [getattr(result, f) for f in fields]


@pytest.mark.parametrize(
    "setup_kwargs,player,narrator,rules",
    [
        (
            dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=2, peril=1),
            "risk=always",
            "fixed",
            [],
        ),
        (
            dict(player_dice={6: 1, 8: 1}, narrator_dice={10: 1}, pool={6: 1}, consequence=2, peril=1),
            "risk=always;break=advantage>security",
            "random",
            ["sudden_death=on", "peril_chips=hand"],
        ),
        (
            dict(player_dice={8: 1}, narrator_dice={6: 1}, pool={8: 1}, consequence=2, peril=0),
            "fixed",
            "fixed",
            ["rewards_per_test=1", "injury_peril=on"],
        ),
        (dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={6: 1}, consequence=1, peril=1), "optimal", "optimal", []),
    ],
)
def test_split_rolls_change_no_result(setup_kwargs, player, narrator, rules):
    """``split_rolls`` cuts each round after the roll (a node per post-roll situation):
    more states, fewer edges, the same chain. Every exact value must be identical."""
    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.solve import _solve_model

    setup = ContestSetup(**{"pool": {}, "reserve": {}, **setup_kwargs})
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    results = []
    for split in (False, True):
        model = KarbonModel(start.sizes, start.situation(), ruleset, p, n, split_rolls=split)
        results.append(_solve_model(model, ruleset, p, n, draws=(start.player_draw, start.narrator_draw)))
    plain, split = results
    assert split.states >= plain.states
    fields = (
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
    assert [getattr(plain, f) for f in fields] == [getattr(split, f) for f in fields]
    assert_distribution(split)


def test_split_rolls_is_the_default_where_the_player_risks():
    from exactdice.karbon.model import KarbonModel

    setup = ContestSetup(player_dice={8: 1}, narrator_dice={8: 1}, pool={}, reserve={}, consequence=1)
    defaults = {}
    for player in ("fixed", "risk=always", "optimal"):
        p, n = parse_player_policy(player), parse_narrator_policy("fixed")
        start = setup.start(p, n)
        defaults[player] = KarbonModel(start.sizes, start.situation(), Rules(), p, n).split_rolls
    assert defaults == {"fixed": False, "risk=always": True, "optimal": False}


# -- the round start's edges: compiled integer sums against a walk in Fractions -------------

ROUND_START_CASES = [
    (dict(ability=3, challenge=2, consequence=2, peril=1), "fixed", "fixed", []),
    (
        dict(ability=2, challenge=2, consequence=2, peril=2),
        "break=advantage>security;glitch=sideswipe>hurt",
        "random",
        ["sudden_death=on", "peril_chips=hand", "tie_order=narrator_first"],
    ),
    (
        dict(player_dice={8: 1}, narrator_dice={10: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=1, peril=1),
        "risk=always;risk_take=d8>d6",
        "hurt=injury;plans=dice",
        ["rewards_per_test=1", "injury_peril=on"],
    ),
    (
        dict(ability=2, challenge=3, consequence=3, peril=0, fortune=1, training=True),
        "sideswipe_take=chips",
        "fixed",
        ["sideswipe_picker=narrator"],
    ),
]


def _distribution(chance):
    total = sum(weight for weight, _, _ in chance.branches)
    law = {}
    for weight, successor, rewards in chance.branches:
        key = (successor, rewards or (0,) * 5)
        law[key] = law.get(key, 0) + Fraction(weight, total)
    return law


@pytest.mark.parametrize("setup_kwargs,player,narrator,rules", ROUND_START_CASES)
def test_round_start_edges_match_a_walk_in_fractions(setup_kwargs, player, narrator, rules):
    """A round start's edges are summed from compiled rests of the round (integer numerators,
    int edge keys). Composing the cut-after-the-roll chain (``split_rolls``: roll, then each
    post-roll node's own walk, summed here in Fractions) must give the same law, edge by
    edge, and the weights must be in lowest terms."""
    import math

    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.position import Position
    from exactdice.markov import Chance, explore

    setup = ContestSetup(**{**({} if "ability" in setup_kwargs else {"pool": {}, "reserve": {}}), **setup_kwargs})
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    compiled = KarbonModel(start.sizes, start.situation(), ruleset, p, n, split_rolls=False)
    split = KarbonModel(start.sizes, start.situation(), ruleset, p, n, split_rolls=True)
    round_starts = [state for state in explore(compiled, progress=False).states if type(state) is Position]
    assert len(round_starts) > 20
    for position in round_starts[:150]:
        chance = compiled.expand(position)
        assert math.gcd(*(weight for weight, _, _ in chance.branches)) == 1
        composed = {}
        for (risk_situation, round_reward), p_roll in _distribution(split.expand(position)).items():
            rest = split.expand(risk_situation)
            assert isinstance(rest, Chance)
            for (successor, rewards), p_rest in _distribution(rest).items():
                key = (successor, tuple(a + b for a, b in zip(round_reward, rewards)))
                composed[key] = composed.get(key, 0) + p_roll * p_rest
        assert _distribution(chance) == composed


@pytest.mark.parametrize(
    "setup_kwargs,player,narrator,rules",
    ROUND_START_CASES[:2]
    + [
        (
            dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=1, peril=1),
            "optimal",
            "optimal",
            [],
        ),
    ],
)
def test_keyed_and_plain_expansions_give_the_same_graph(python_walk, setup_kwargs, player, narrator, rules):
    """`explore` takes round starts as `KeyedChance` nodes (``expand_keyed``); through the
    plain ``expand`` the graph must be the same, array for array."""
    from exactdice.karbon.model import KarbonModel
    from exactdice.markov import explore

    class PlainView:  # the model without expand_keyed
        def __init__(self, model):
            self.outcomes, self.reward_names = model.outcomes, model.reward_names
            self.initial_state, self.expand = model.initial_state, model.expand

    setup = ContestSetup(**{**({} if "ability" in setup_kwargs else {"pool": {}, "reserve": {}}), **setup_kwargs})
    p, n = parse_player_policy(player), parse_narrator_policy(narrator)
    ruleset = Rules().with_rules(rules)
    start = setup.start(p, n)
    graphs = [
        explore(make(KarbonModel(start.sizes, start.situation(), ruleset, p, n)), progress=False)
        for make in (lambda model: model, PlainView)
    ]
    keyed, plain = graphs
    for name in (
        "states",
        "kind",
        "data",
        "offsets",
        "targets",
        "weights",
        "chance_reward_mass",
        "action_names",
        "action_rewards",
    ):
        assert getattr(keyed, name) == getattr(plain, name), name
