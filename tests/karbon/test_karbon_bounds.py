"""Certified bounds on optimal play against the exact optimal solve on small pools."""

import json
import math
import re
from fractions import Fraction
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from exactdice.cli.main import cli
from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy, contest_odds
from exactdice.errors import InputError
from exactdice.karbon.bounds import _default_action, bounded_odds, explain_bounded_first_round, game_model
from exactdice.karbon.solve import payoffs
from exactdice.markov.bounded import BoundedSolver, BoundsView, evaluate_strategy
from exactdice.karbon.compiled import compiled_available
from exactdice.markov.model import KeyedChance
from exactdice.processes import fork_supported

OPTIMAL = PlayerPolicy(kind="optimal")
EPS = 1e-4
# 0: one process; 2: the player's draws searched in two worker processes (bounded_split)
WORKERS = [0, 2] if fork_supported() else [0]

CASES = {
    "d6 v d10, pool d4, reserve d4, W1 P1": (
        dict(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1),
        "score",
    ),
    "d6 v d8, pool d4, reserve d4, W1 P1": (
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1),
        "score",
    ),
    "d8 v d8, pool d4, W2, objective win": (
        dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={4: 1}, reserve={}, consequence=2),
        "win",
    ),
    "A1 v C1 drawn from d6,d8,d10, Fortune 1, W1": (
        dict(ability=1, challenge=1, pool={6: 1, 8: 1, 10: 1}, reserve={}, consequence=1, fortune=1),
        "score",
    ),
}


@pytest.fixture(params=["python", "compiled"], autouse=True)
def search_walk(request, monkeypatch):
    """Every test with both searches: the compiled one (the compiled walk and
    `GameSearch`) and the Python one it falls back to (`BoundedSolver`)."""
    if request.param == "compiled" and not compiled_available():
        pytest.skip("the compiled walk is not built in this install")
    monkeypatch.setenv("EXACTDICE_WALK", request.param)
    return request.param


@pytest.fixture(scope="module")
def exact_values():
    values = {}
    for name, (setup, objective) in CASES.items():
        for narrator in ("fixed", "optimal"):
            values[name, narrator] = contest_odds(
                ContestSetup(**setup), Rules(objective=objective), OPTIMAL, NarratorPolicy(kind=narrator)
            )
    return values


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bounds_contain_the_exact_optimal_value_and_close(search_walk, exact_values, name, narrator, workers):
    setup, objective = CASES[name]
    exact = exact_values[name, narrator]
    found = bounded_odds(
        ContestSetup(**setup),
        Rules(objective=objective),
        OPTIMAL,
        NarratorPolicy(kind=narrator),
        precision=EPS,
        max_seconds=300,
        workers=workers,
    )
    drawn = ContestSetup(**setup).player_dice is None
    # the Python search splits the draws among workers; the compiled one needs none
    assert isinstance(found.solver, BoundsView) == (drawn and workers > 1 and search_walk == "python")
    assert found.stopped == "precision"
    assert found.lower_method == "exact" and found.lower_kind == "exact"
    assert isinstance(found.lower, Fraction)
    assert found.lower <= exact.value <= Fraction(found.upper)
    assert found.gap <= EPS
    # the certificate is the strategy's own exact game: its odds are a distribution
    assert found.win + found.loss + found.tie + found.never_ends == 1
    expected = found.win + (found.tie / 2 if objective == "score" else 0)
    assert found.lower == expected
    # and the fixed preferences, the starting lower bound, are no better than optimal play
    assert found.fixed_value <= exact.value


def test_limits_and_ctrl_c_return_sound_bounds(search_walk, exact_values):
    name = "d6 v d10, pool d4, reserve d4, W1 P1"
    setup, _ = CASES[name]
    exact = exact_values[name, "optimal"].value
    by_states = bounded_odds(
        ContestSetup(**setup), player=OPTIMAL, narrator=NarratorPolicy(kind="optimal"), precision=1e-12, max_states=300
    )
    assert by_states.stopped == "states"
    assert by_states.lower <= exact <= Fraction(by_states.upper)
    assert "(stopped at the state budget; raise `max_states`)" in by_states.summary_lines()[0]
    # both searches start at the fixed preferences' value, so even a short run is no worse
    from exactdice.karbon.bounds import float_below

    assert by_states.iteration_lower >= float_below(by_states.fixed_value)
    assert by_states.lower >= by_states.fixed_value

    calls = []

    def progress(lower, upper, explored, seconds):
        calls.append(upper - lower)
        raise KeyboardInterrupt  # at the first report, periodic or final

    interrupted = bounded_odds(
        ContestSetup(**setup),
        player=OPTIMAL,
        narrator=NarratorPolicy(kind="optimal"),
        precision=1e-12,
        progress=progress,
    )
    assert interrupted.stopped == "interrupted"
    assert interrupted.lower <= exact <= Fraction(interrupted.upper)


@pytest.mark.parametrize("workers", WORKERS)
def test_best_draw_is_certified_once_its_lower_bound_beats_the_others(exact_values, workers):
    name = "A1 v C1 drawn from d6,d8,d10, Fortune 1, W1"
    setup, _ = CASES[name]
    exact = contest_odds(ContestSetup(**setup), Rules(), OPTIMAL, NarratorPolicy(kind="optimal"), draw_values=True)
    found = bounded_odds(
        ContestSetup(**setup), player=OPTIMAL, narrator=NarratorPolicy(kind="optimal"), precision=1e-6, workers=workers
    )
    assert len(found.draw_bounds) == len(exact.draw_values) == 3
    for text, (low, high) in found.draw_bounds.items():
        assert Fraction(low) <= exact.draw_values[text] <= Fraction(high)
    left, certified = found.best_draws()
    best = max(exact.draw_values, key=exact.draw_values.get)
    assert best in left
    if certified:
        assert left == [best]
    assert found.strategy[("draw",)] in left


@pytest.mark.skipif(not fork_supported(), reason="the draws are split among forked worker processes")
def test_ctrl_c_while_the_draws_are_searched_in_workers_returns_sound_bounds(search_walk):
    """A Ctrl-C in this process (the workers ignore it) stops every worker at its next
    report; the bounds reached are returned, and the strategy is still certified."""
    setup = ContestSetup(ability=1, challenge=1, consequence=1, peril=0)  # the default pool: a long search
    seen = []

    def progress(lower, upper, explored, seconds):
        seen.append((lower, upper))
        if len(seen) == 2:
            raise KeyboardInterrupt

    found = bounded_odds(
        setup,
        player=OPTIMAL,
        narrator=NarratorPolicy(kind="fixed"),
        precision=1e-9,
        progress=progress,
        workers=2,
        max_seconds=600,
    )
    assert found.stopped == "interrupted"
    assert isinstance(found.solver, BoundsView) == (search_walk == "python")
    assert found.lower_method == "exact" and found.lower <= Fraction(found.upper)
    from exactdice.karbon.bounds import float_below

    if search_walk == "python":  # the fixed draw's part starts at its exact value
        assert found.lower >= float_below(found.fixed_value)
    assert found.upper < 1  # some work was done before the stop


SMALL_FLAGS = [
    "--player-dice",
    "d6",
    "--narrator-dice",
    "d10",
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
]


def test_cli_bounds_json_and_strategy_file(tmp_path, exact_values):
    path = tmp_path / "strategy.json"
    outcome = CliRunner().invoke(
        cli,
        [
            "karbon",
            "odds",
            *SMALL_FLAGS,
            "--narrator-policy",
            "optimal",
            "--bounds",
            "--precision",
            "0.001",
            "--strategy",
            str(path),
            "--json",
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    payload = json.loads(outcome.output)
    exact = exact_values["d6 v d10, pool d4, reserve d4, W1 P1", "optimal"].value
    assert Fraction(payload["lower"]) <= exact <= Fraction(payload["upper"])
    assert (
        payload["gap"] <= 0.001 and payload["reached"] and payload["lower_method"] == payload["lower_kind"] == "exact"
    )
    document = json.loads(path.read_text())
    assert payload["strategy_decisions"] == len(document["decisions"]) > 0
    assert "player" in {entry["side"] for entry in document["decisions"]}


def test_cli_bounds_text_rounds_outward_and_prints_exact_values_when_asked(exact_values):
    exact = exact_values["d6 v d10, pool d4, reserve d4, W1 P1", "optimal"].value
    flags = ["karbon", "odds", *SMALL_FLAGS, "--narrator-policy", "optimal", "--bounds", "--precision", "0.001"]
    payload = json.loads(CliRunner().invoke(cli, flags + ["--json"]).output)
    assert payload["strategy_odds"]["tie"] == "0"  # a track of 1 has no ties; written as exact answers write it
    text = CliRunner().invoke(cli, flags + ["--digits", "3"]).output
    assert text.startswith("Karbon contest: player d6 v narrator d10; track 1, peril 1. Certified bounds")
    shown = re.search(r"is in \[([0-9.]+), ([0-9.]+)\]", text)
    low, high = Fraction(shown[1]), Fraction(shown[2])
    assert len(shown[1]) == len(shown[2]) == 5  # three decimals
    assert low <= Fraction(payload["lower"]) and Fraction(payload["upper"]) <= high  # rounded outward
    assert low <= exact <= high
    exact_text = CliRunner().invoke(cli, flags + ["--exact"]).output
    assert f"exact = {payload['lower']}" in exact_text.replace("\n  ", "")
    assert f"P(win) {payload['strategy_odds']['win']}" in exact_text.replace("\n  ", "")


def test_cli_falls_back_to_bounds_past_max_states():
    outcome = CliRunner().invoke(cli, ["karbon", "odds", *SMALL_FLAGS, "--max-states", "200", "--precision", "0.01"])
    assert outcome.exit_code == 0, outcome.output
    assert "certified bounds instead" in outcome.output
    assert "raise the limit with --max-states" in outcome.output  # the flag, not the parameter
    assert "value (expected score) is in [" in outcome.output


def test_contest_odds_stops_exploring_after_explore_seconds():
    from exactdice.errors import TooLargeError

    # (exploring checks the clock every 50 ms at most: a game of about a second, 55,530 states)
    larger = ContestSetup(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1)
    with pytest.raises(TooLargeError) as raised:
        contest_odds(larger, player=PlayerPolicy(kind="optimal"), explore_seconds=0)
    assert (raised.value.field, raised.value.message) == ("explore_seconds", "more than 0 s of exploring")
    # with time enough, the same exact answer as without a limit
    setup = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1)
    timed = contest_odds(setup, player=PlayerPolicy(kind="optimal"), explore_seconds=600)
    plain = contest_odds(setup, player=PlayerPolicy(kind="optimal"))
    assert (timed.win, timed.loss, timed.tie, timed.states) == (plain.win, plain.loss, plain.tie, plain.states)


def test_without_max_seconds_the_exact_attempt_is_time_boxed_too():
    """The issue: with no flags but the policies, A1 v C1, W1 P0 explored 3,000,000 states
    (about 145 s) of an exact game that could not finish before the bounds search began."""
    import time

    from exactdice.answers import karbon as attempt

    began = time.monotonic()
    saved = attempt.DEFAULT_ATTEMPT_SECONDS
    attempt.DEFAULT_ATTEMPT_SECONDS = 1.0  # the default's mechanism, on a test's budget
    try:
        outcome = CliRunner().invoke(
            cli,
            [
                "karbon",
                "odds",
                "-a",
                "1",
                "-c",
                "1",
                "-w",
                "1",
                "-p",
                "0",
                "--player-policy",
                "optimal",
                "--precision",
                "0.5",
            ],
        )
    finally:
        attempt.DEFAULT_ATTEMPT_SECONDS = saved
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.startswith(
        "the exact game is too large (more than 1 s of exploring, the exact "
        "attempt's 1 s (give --max-seconds S for a tenth of S)); certified bounds"
    )
    assert "value (expected score) is in [" in outcome.output
    assert time.monotonic() - began < 120


def test_cli_turns_to_bounds_after_max_seconds_of_exploring(capsys):
    from exactdice.cli.main import main

    # the default pool's draw under optimal play: minutes to reach --max-states, so the
    # exact attempt gets a tenth of --max-seconds of exploring, not more
    outcome = CliRunner().invoke(
        cli, ["karbon", "odds", "-a", "1", "-c", "1", "-w", "1", "--player-policy", "optimal", "--max-seconds", "2"]
    )
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.startswith(
        "the exact game is too large (more than 0.2 s of exploring, "
        "a tenth of --max-seconds); certified bounds instead\n"
    )
    assert "value (expected score) is in [" in outcome.output
    with pytest.raises(SystemExit) as exit_:
        main(
            [
                "karbon",
                "odds",
                "-a",
                "1",
                "-c",
                "1",
                "-w",
                "1",
                "--player-policy",
                "optimal",
                "--max-seconds",
                "2",
                "--json",
            ]
        )
    assert exit_.value.code == 0
    payload = json.loads(capsys.readouterr().out)  # (the reason's line went to stderr)
    assert payload["too_large"] == "more than 0.2 s of exploring, a tenth of --max-seconds"
    # a game explored within the time is answered exactly, as without --max-seconds
    quick = CliRunner().invoke(cli, ["karbon", "odds", *SMALL_FLAGS, "--max-seconds", "600", "--json"])
    plain = CliRunner().invoke(cli, ["karbon", "odds", *SMALL_FLAGS, "--json"])
    assert quick.exit_code == 0 and json.loads(quick.output) == json.loads(plain.output) | {
        "seconds": json.loads(quick.output)["seconds"]
    }


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--player-policy", "fixed", "--bounds"], "--bounds"),
        (["--player-policy", "optimal", "--narrator-policy", "kind", "--bounds"], "--bounds"),
        (["--player-policy", "optimal", "--bounds", "--precision", "0"], "--precision"),
        (["--player-policy", "optimal", "--bounds", "--max-seconds", "-1"], "--max-seconds"),
        # flags that would do nothing are refused, not ignored
        (["--precision", "0.01"], "--precision: is for certified bounds on optimal play"),
        (["--max-seconds", "5"], "--max-seconds: is for certified bounds on optimal play"),
        (
            ["--player-policy", "optimal", "--narrator-policy", "kind", "--max-seconds", "5"],
            "--max-seconds: is for certified bounds, which need --narrator-policy fixed, random or optimal",
        ),
        (["--float", "--exact"], "--exact: certified floats have no exact fractions"),
        (["--player-policy", "optimal", "--bounds", "--float"], "--float: certifies the whole game's numbers"),
    ],
)
def test_cli_bounds_input_errors(flags, field, capsys):
    from exactdice.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(
            [
                "karbon",
                "odds",
                "--player-dice",
                "d6",
                "--narrator-dice",
                "d10",
                "--pool",
                "d4",
                "--reserve",
                "none",
                "-w",
                "1",
                *flags,
            ]
        )
    captured = capsys.readouterr()
    assert exit_.value.code == 2
    assert field in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
@pytest.mark.parametrize("name", ["d6 v d8, pool d4, reserve d4, W1 P1", "A1 v C1 drawn from d6,d8,d10, Fortune 1, W1"])
def test_explain_from_bounds_agrees_with_the_exact_solve(name, narrator, workers):
    """Every first-round risk choice explained from the bounds: its two choices' bounds contain
    their exact values, and a choice called certified best is at least as good as the other
    in the exact solve."""
    setup, objective = CASES[name]
    setup, ruleset = ContestSetup(**setup), Rules(objective=objective)
    exact = contest_odds(setup, ruleset, OPTIMAL, NarratorPolicy(kind=narrator), all_states=True)
    found = bounded_odds(
        setup, ruleset, OPTIMAL, NarratorPolicy(kind=narrator), precision=1e-3, max_seconds=300, workers=workers
    )
    lines = explain_bounded_first_round(found)
    risk_lines = [line for line in lines if "Risk: " in line]
    assert risk_lines and any(line.startswith("First round: ") for line in lines)
    inner = getattr(exact.model, "inner", exact.model)
    checked = 0
    for situation in [state for state in found.solver.index if type(state) is tuple and state[0] == "risk"]:
        decision = found.solver.decision_bounds(situation)
        if decision is None or situation not in exact.solution.strategy:
            continue
        _, options = inner._decision(situation)
        exact_values = {
            option: exact.solution.state_value(inner._action(option, nxt, reward)[1]) for option, nxt, reward in options
        }
        for option, low, high in decision[1]:
            assert Fraction(low) <= exact_values[option] <= Fraction(high)
        chosen = found.strategy.get(situation)
        other = {"yes": "no", "no": "yes"}.get(chosen)
        bounds = {option: (low, high) for option, low, high in decision[1]}
        if other is not None and bounds[chosen][0] >= bounds[other][1]:
            assert exact_values[chosen] >= exact_values[other]
        checked += 1
    assert checked > 0
    assert sum("certified best" in line for line in risk_lines) >= 1


def test_cli_explain_with_bounds_says_each_choice_and_the_others_bounds():
    outcome = CliRunner().invoke(
        cli,
        [
            "karbon",
            "odds",
            *SMALL_FLAGS,
            "--narrator-policy",
            "optimal",
            "--bounds",
            "--precision",
            "0.001",
            "--explain",
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    assert "First round: the player's risk choice after each roll" in outcome.output
    assert "of first rolls:" in outcome.output and "Risk: " in outcome.output
    assert "certified best" in outcome.output or "not certified" in outcome.output
    assert "not risking: [" in outcome.output.replace("Not risking: [", "not risking: [")


def test_time_limits_on_the_fixed_start_and_the_exact_check_keep_the_bounds_sound(exact_values):
    """With no time for the fixed preferences' solve and none for the exact check, the run
    starts from [0, 1] and returns the search's own float bounds, labelled so: still sound."""
    name = "d6 v d10, pool d4, reserve d4, W1 P1"
    setup, objective = CASES[name]
    exact = exact_values[name, "optimal"].value
    found = bounded_odds(
        ContestSetup(**setup),
        Rules(objective=objective),
        OPTIMAL,
        NarratorPolicy(kind="optimal"),
        precision=1e-3,
        max_seconds=300,
        fixed_seconds=0,
        certify_seconds=0,
    )
    assert found.fixed_value is None
    assert found.lower_method.startswith("float, outward rounding (the strategy's game passed 0 s")
    assert found.lower_kind == "search-float"
    assert found.win is None and isinstance(found.lower, float)
    assert Fraction(found.lower) <= exact <= Fraction(found.upper) and found.gap <= 1e-3


def _states_outside(setup, ruleset, narrator, initial_bounds):
    """(the states of the exact optimal game whose initial bounds (``initial_bounds(state)``:
    (lower, upper) or None) do not contain the state's exact value, how many states got
    bounds)."""
    from exactdice.karbon.bounds import game_model
    from exactdice.karbon.solve import payoffs
    from exactdice.markov import explore, solve

    graph = explore(game_model(setup, ruleset, OPTIMAL, narrator), progress=False)
    payoff, endless = payoffs(ruleset)
    solution = solve(graph, payoff=payoff, nonterminating_payoff=endless, all_states=True, progress=False)
    outside, covered = [], 0
    for state in graph.states:
        given = initial_bounds(state)
        if given is None:
            continue
        covered += 1
        value = solution.state_value(state)
        if not (Fraction(given[0]) <= value and (given[1] == math.inf or value <= Fraction(given[1]))):
            outside.append(state)
    return outside, covered


@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_initial_bounds_contain_every_states_exact_value(name, narrator):
    """The starting bounds of every state the search can meet (here: every state of the
    exact game) contain its exact optimal value; and the check can fail: the fixed
    preferences' values taken as UPPER bounds, a deliberately unsound relaxation, are
    caught wherever optimal play does better than them."""
    from exactdice.karbon.bounds import _with_root_bound, fixed_play_lower_bounds, game_model

    setup, objective = CASES[name]
    setup, ruleset, narrator = ContestSetup(**setup), Rules(objective=objective), NarratorPolicy(kind=narrator)
    fixed_value, from_fixed = fixed_play_lower_bounds(setup, ruleset, narrator, max_states=100_000)
    initial = _with_root_bound(game_model(setup, ruleset, OPTIMAL, narrator), fixed_value, from_fixed)
    outside, covered = _states_outside(setup, ruleset, narrator, initial)
    assert outside == [] and covered > 1

    def unsound(state):
        given = initial(state)
        return None if given is None else (0.0, given[0])

    caught, _ = _states_outside(setup, ruleset, narrator, unsound)
    assert caught  # the root at least: optimal play beats the fixed preferences on these setups


def _distribution(node):
    """successor -> exact probability of a plain `Chance` or a `KeyedChance`."""
    if isinstance(node, KeyedChance):
        pairs = [(weight, node.table[key][0]) for weight, key in node.branches]
    else:
        pairs = [(weight, successor) for weight, successor, _ in node.branches]
    total = sum(weight for weight, _ in pairs)
    merged: dict = {}
    for weight, successor in pairs:
        merged[successor] = merged.get(successor, 0) + Fraction(weight, total)
    return merged


@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
@pytest.mark.parametrize(
    "name", ["A1 v C1 drawn from d6,d8,d10, Fortune 1, W1", "d6 v d10, pool d4, reserve d4, W1 P1"]
)
def test_keyed_and_plain_expansion_agree_on_the_bounded_searchs_states(name, narrator):
    setup, objective = CASES[name]
    ruleset = Rules(objective=objective)
    payoff, endless = payoffs(ruleset)
    model = game_model(ContestSetup(**setup), ruleset, OPTIMAL, NarratorPolicy(kind=narrator))
    keyed = BoundedSolver(model, payoff=payoff, nonterminating_payoff=endless)
    keyed.run(EPS, max_states=3_000)
    checked = 0
    for node, state in enumerate(keyed.states):
        if keyed.probs[node] is None:
            continue
        plain_node = model.expand(state)
        keyed_node = model.expand_keyed(state)
        assert _distribution(plain_node) == _distribution(keyed_node)
        # what the search stored: the same successors, each probability the float of the exact one
        stored = dict(zip([keyed.states[t] for t in keyed.targets[node]], keyed.probs[node]))
        assert stored == {successor: float(p) for successor, p in _distribution(plain_node).items()}
        checked += isinstance(keyed_node, KeyedChance)
    assert checked > 50  # round starts came keyed
    # and node for node the same run as the plain expansion's
    plain_only = SimpleNamespace(
        outcomes=model.outcomes, reward_names=model.reward_names, initial_state=model.initial_state, expand=model.expand
    )  # no expand_keyed
    plain = BoundedSolver(plain_only, payoff=payoff, nonterminating_payoff=endless)
    plain.run(EPS, max_states=3_000)
    assert plain.states == keyed.states and plain.lo == keyed.lo and plain.hi == keyed.hi


@pytest.mark.parametrize("narrator", ["fixed", "optimal"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_strategy_check_building_only_the_chosen_action_matches_the_whole_decision(name, narrator):
    """`evaluate_strategy` through ``expand_choosing`` (one action walked at each player
    decision) and through whole decisions: the same Fraction, choices and graph size,
    on a strategy that covers part of the game (the rest takes the fixed preferences)."""
    setup, objective = CASES[name]
    ruleset = Rules(objective=objective)
    payoff, endless = payoffs(ruleset)
    model = game_model(ContestSetup(**setup), ruleset, OPTIMAL, NarratorPolicy(kind=narrator))
    assert hasattr(model, "expand_choosing")
    found = BoundedSolver(model, payoff=payoff, nonterminating_payoff=endless).run(EPS, max_states=400)
    whole = SimpleNamespace(
        outcomes=model.outcomes,
        reward_names=model.reward_names,
        initial_state=model.initial_state,
        expand=model.expand,
        expand_keyed=model.expand_keyed,
    )  # no expand_choosing
    checks = [
        evaluate_strategy(
            each, found.strategy, default_action=_default_action(model), payoff=payoff, nonterminating_payoff=endless
        )
        for each in (model, whole)
    ]
    (one_value, one), (whole_value, everything) = checks
    assert type(one_value) is Fraction and one_value == whole_value
    assert one.played == everything.played and one.defaulted == everything.defaulted > 0
    assert one.states == everything.states and one.absorption == everything.absorption


def test_strategy_check_names_an_action_the_state_does_not_offer():
    setup, objective = CASES["d6 v d8, pool d4, reserve d4, W1 P1"]
    model = game_model(ContestSetup(**setup), Rules(objective=objective), OPTIMAL, NarratorPolicy())
    found = BoundedSolver(model, payoff=payoffs(Rules(objective=objective))[0]).run(EPS, max_states=200)
    state = next(state for state in found.strategy if type(state) is tuple)
    with pytest.raises(InputError, match="strategy: action 'no such action' is not available"):
        evaluate_strategy(model, {**found.strategy, state: "no such action"})


@pytest.mark.skipif(not fork_supported(), reason="exploring workers are forked")
def test_strategy_check_records_every_choice_even_where_exploring_would_use_workers(monkeypatch):
    """The choices played are recorded in this process: exploring workers would keep
    the ones they made (the strategy written out and explained would miss them)."""
    from exactdice.markov import graph

    setup, objective = CASES["A1 v C1 drawn from d6,d8,d10, Fortune 1, W1"]
    ruleset = Rules(objective=objective)
    model = game_model(ContestSetup(**setup), ruleset, OPTIMAL, NarratorPolicy())
    found = BoundedSolver(model, payoff=payoffs(ruleset)[0]).run(EPS, max_states=300)
    alone = evaluate_strategy(model, found.strategy, payoff=payoffs(ruleset)[0])[1]
    monkeypatch.setenv("EXACTDICE_SOLVE_WORKERS", "2")
    monkeypatch.setattr(graph, "PARALLEL_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(graph, "PARALLEL_MIN_SECONDS_PER_STATE", 0.0)
    again = evaluate_strategy(
        game_model(ContestSetup(**setup), ruleset, OPTIMAL, NarratorPolicy()),
        found.strategy,
        payoff=payoffs(ruleset)[0],
    )[1]
    assert again.played == alone.played and len(alone.played) > 1_000


def test_an_exact_check_past_its_time_leaves_the_strategys_own_sound_value(exact_values, monkeypatch):
    """When the strategy's game is explored but its exact solve passes the time, the lower
    bound is that strategy's value in floats, outward rounded: below its exact value, and
    no lower than the search's own."""
    from exactdice.errors import TooLargeError
    from exactdice.markov import solver

    name = "d6 v d10, pool d4, reserve d4, W1 P1"
    setup, objective = CASES[name]
    args = (ContestSetup(**setup), Rules(objective=objective), OPTIMAL, NarratorPolicy(kind="optimal"))
    exact = bounded_odds(*args, precision=1e-3, max_seconds=300, fixed_start=False, workers=0)
    assert exact.lower_method == "exact"

    def too_slow(*_, **__):
        raise TooLargeError("max_seconds", "solving the strategy's game passed 60 s; give it more time")

    monkeypatch.setattr(solver, "solve", too_slow)
    found = bounded_odds(*args, precision=1e-3, max_seconds=300, fixed_start=False, workers=0, certify_seconds=60)
    assert found.lower_method.startswith("float, outward rounding (the strategy's own value over its ")
    assert found.lower_kind == "strategy-float"
    assert found.strategy_states == exact.strategy_states
    assert found.iteration_lower <= found.lower and Fraction(found.lower) <= exact.lower
    assert exact.lower - Fraction(found.lower) < Fraction(1, 10**9)
    assert exact.lower <= exact_values[name, "optimal"].value <= Fraction(found.upper)


@pytest.mark.parametrize("mode", [[], ["--bounds"]])
def test_cli_explain_goes_into_the_json_as_the_texts_sentences(mode):
    flags = ["karbon", "odds", *SMALL_FLAGS, *mode, "--explain"]
    payload = json.loads(CliRunner().invoke(cli, flags + ["--json"]).output)
    text = " ".join(CliRunner().invoke(cli, flags).output.split())
    assert payload["explanation"]
    for sentence in payload["explanation"]:
        assert " ".join(sentence.split()) in text


def test_a_short_search_keeps_the_fixed_preferences_guarantee(search_walk):
    # stopped far from its answer (3,000 states of millions), the search's own strategy
    # guarantees little: the fixed preferences' exact value stays the lower bound, on the
    # root and on the draw they take, and the words name what the narrator does
    from exactdice.karbon.bounds import _fixed_draw_text, float_below

    found = bounded_odds(
        ContestSetup(ability=1, challenge=1, consequence=1),
        player=OPTIMAL,
        max_states=3000,
        certify_states=3000,
        max_seconds=60,
        workers=0,
    )
    assert found.stopped == "states" and found.lower >= found.fixed_value
    fixed_draw = _fixed_draw_text(found.model)
    assert found.draw_bounds[fixed_draw][0] >= float_below(found.fixed_value)
    assert all(low <= found.upper for low, _ in found.draw_bounds.values())
    assert "against the narrator's fixed preferences" in found.summary_lines()[1]
    if found.lower_kind == "exact":
        assert found.win + found.loss + found.tie + (found.never_ends or 0) == 1
