"""The Karbon simulator against the exact model, its determinism, its knobs, trace and CLI.

Statistical tests use fixed seeds; each G test runs at alpha = 1e-3 / (number of tests in
the batch) (Bonferroni), so the whole batch has a false-alarm rate of at most 1e-3; means
are checked within 4.5 standard errors (two-sided alpha about 7e-6 each).
"""

from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from exactdice.errors import InputError
from exactdice.karbon import ContestSetup, Rules, contest_odds, parse_narrator_policy, parse_player_policy
from exactdice.karbon.simulate import (
    COLUMNS,
    OUTCOMES,
    ContestEngine,
    contest_start,
    simulate,
    summarize,
    write_samples_csv,
)
from exactdice.karbon.solve import expected_distribution
from exactdice.karbon.trace import EventRecorder, Narrator, trace_contest

TRACES = Path(__file__).parent / "data" / "traces"

MICRO = ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={})
MICRO_WIN = Fraction(
    5990740867607044698482871905123999658267434893078700, 9080225136878889747585636270823606341219939818857851
)
SMALL_POOL = {8: 2, 10: 2}

# (name, setup, rules, player policy, narrator policy); each changes something from the defaults
CASES = [
    (
        "draw A2 C1 W2",
        ContestSetup(ability=2, challenge=1, consequence=2, pool={8: 3, 10: 2, 6: 1}, reserve={6: 2}),
        [],
        "",
        "",
    ),
    (
        "peril 1",
        ContestSetup(ability=1, challenge=2, consequence=2, peril=1, pool={8: 2, 10: 2}, reserve={6: 1}),
        [],
        "",
        "",
    ),
    (
        "sudden death",
        ContestSetup(ability=1, challenge=1, consequence=2, pool=SMALL_POOL, reserve={}),
        ["sudden_death=on"],
        "",
        "",
    ),
    (
        "one reward per test, narrator first",
        ContestSetup(ability=2, challenge=1, consequence=2, pool=SMALL_POOL, reserve={6: 1}),
        ["rewards_per_test=1", "tie_order=narrator_first"],
        "",
        "",
    ),
    (
        "peril chips in hand, random narrator",
        ContestSetup(ability=1, challenge=1, consequence=2, peril=2, pool=SMALL_POOL, reserve={}),
        ["peril_chips=hand"],
        "",
        "random",
    ),
    (
        "injury peril, fallout, sideswipe",
        ContestSetup(ability=1, challenge=1, consequence=3, pool=SMALL_POOL, reserve={6: 1}, fallout=1),
        ["injury_peril=on"],
        "glitch=sideswipe>hurt",
        "hurt=injury;plans=dice",
    ),
    (
        "advantage, random narrator",
        ContestSetup(ability=2, challenge=1, consequence=3, pool={8: 2, 10: 3}, reserve={6: 2}),
        [],
        "break=advantage",
        "random",
    ),
    (
        "sideswipe chips",
        ContestSetup(ability=1, challenge=2, consequence=3, pool={8: 2, 10: 3}, reserve={6: 2}),
        [],
        "glitch=sideswipe;sideswipe_take=chips;break=footing-discard",
        "",
    ),
    (
        "risk always",
        ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2, 6: 1}, reserve={}),
        [],
        "risk=always",
        "",
    ),
    (
        "plans dice, footing dice, narrator picks",
        ContestSetup(player_dice={8: 1}, narrator_dice={10: 1}, consequence=3, pool={6: 2, 8: 1}, reserve={}),
        ["sideswipe_picker=narrator"],
        "glitch=plans>sideswipe;break=footing-dice",
        "plans=dice;give=d8>d10",
    ),
]
ALPHA = 1e-3 / len(CASES)
N = 60_000


def _counts(outcomes):
    return np.array([(outcomes == name).sum() for name in OUTCOMES])


def _g_test_pvalue(observed, probabilities, n):
    expected = np.array([float(p) * n for p in probabilities])
    assert observed[expected == 0].sum() == 0, "the simulator produced an outcome the exact model rules out"
    keep = expected > 0
    if keep.sum() < 2:
        return 1.0
    return stats.power_divergence(observed[keep], expected[keep], lambda_="log-likelihood").pvalue


def _within(values, exact, sigmas=4.5):
    values = np.asarray(values, dtype=float)
    error = values.std(ddof=1) / np.sqrt(len(values))
    if error == 0:
        return values.mean() == float(exact)
    return abs(values.mean() - float(exact)) <= sigmas * error


@pytest.mark.parametrize("name, setup, rules, player_text, narrator_text", CASES, ids=[c[0] for c in CASES])
def test_simulator_matches_exact_model(name, setup, rules, player_text, narrator_text):
    ruleset = Rules().with_rules(rules)
    player, narrator = parse_player_policy(player_text), parse_narrator_policy(narrator_text)
    odds = contest_odds(setup, ruleset, player, narrator)
    rows = simulate(setup, ruleset, player, narrator, n=N, seed=20240601)
    observed = _counts(rows["outcome"])
    law = [odds.win, odds.loss, odds.tie, odds.never_ends]
    assert _g_test_pvalue(observed, law, N) > ALPHA
    for column, exact in (
        ("rounds", odds.expected_rounds),
        ("breaks", odds.expected_breaks),
        ("glitches", odds.expected_glitches),
        ("injuries", odds.expected_injuries),
        ("conditions", odds.expected_conditions),
    ):
        assert _within(rows[column], exact), column
    # the changed knobs or preferences matter here: the default reading is clearly rejected
    default = contest_odds(setup)
    if rules or player_text or narrator_text:
        default_law = [default.win, default.loss, default.tie, default.never_ends]
        moved = any(
            not _within(rows[column], getattr(default, f"expected_{column}"), 8)
            for column in ("rounds", "breaks", "glitches", "injuries", "conditions")
        )
        assert moved or _g_test_pvalue(observed, default_law, N) < 1e-8


def test_micro_example_win_chance():
    rows = simulate(MICRO, n=200_000, seed=5)
    share = (rows["outcome"] == "win").mean()
    error = np.sqrt(float(MICRO_WIN) * (1 - float(MICRO_WIN)) / 200_000)
    assert abs(share - 0.6597568648) <= 4.5 * error
    assert (rows["outcome"] == "tie").sum() == 0


def test_same_seed_same_rows_and_other_seed_differs():
    setup = ContestSetup(ability=3, challenge=3, consequence=3, peril=1)
    first = simulate(setup, n=2_000, seed=7)
    again = simulate(setup, n=2_000, seed=7)
    other = simulate(setup, n=2_000, seed=8)
    assert all(np.array_equal(first[c], again[c]) for c in COLUMNS)
    assert not all(np.array_equal(first[c], other[c]) for c in COLUMNS)
    assert list(first["trial"]) == list(range(2_000))


def test_rewards_per_test_limits_completions():
    # a d1 always hits and the narrator has no dice: the player wins every roll with 1 hit
    setup = ContestSetup(player_dice={1: 1}, narrator_dice={}, consequence=2, pool={}, reserve={}, player_chips=9)
    unlimited = simulate(setup, n=3, seed=1)
    limited = simulate(setup, Rules(rewards_per_test="1"), n=3, seed=1)
    assert unlimited["rounds"].tolist() == [1, 1, 1] and limited["rounds"].tolist() == [2, 2, 2]
    assert set(unlimited["outcome"]) == {"win"} == set(limited["outcome"])


def test_contest_that_cannot_end_is_unfinished():
    setup = ContestSetup(player_dice={}, narrator_dice={}, consequence=1, pool={}, reserve={})
    rows = simulate(setup, n=5, seed=1, max_rounds=50)
    assert rows["outcome"].tolist() == ["unfinished"] * 5 and rows["rounds"].tolist() == [50] * 5


def test_fallout_can_end_the_contest_before_any_round():
    rows = simulate(ContestSetup(ability=1, challenge=1, consequence=1, fallout=1), n=10, seed=2)
    assert set(rows["outcome"]) == {"loss"} and rows["rounds"].tolist() == [0] * 10


def test_optimal_policy_without_strategy_is_refused():
    with pytest.raises(InputError, match="optimal"):
        simulate(MICRO, player=parse_player_policy("optimal"), n=10, seed=1)


def test_bad_count_and_seed_are_input_errors():
    with pytest.raises(InputError, match="^n: "):
        simulate(MICRO, n=0)
    with pytest.raises(InputError, match="^seed: "):
        simulate(MICRO, n=5, seed=-1)


def test_csv_and_summary(tmp_path):
    rows = simulate(MICRO, n=50, seed=3)
    path = tmp_path / "samples.csv"
    write_samples_csv(rows, path)
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 51
    summary = summarize(rows)
    assert sum(entry["count"] for entry in summary["outcomes"].values()) == 50


def test_expected_distribution_is_the_exact_law():
    law = expected_distribution(MICRO)
    assert law["win"] == MICRO_WIN and sum(law.values()) == 1


def test_trace_tells_the_contest_in_words():
    setup = ContestSetup(ability=3, challenge=3, consequence=3, peril=1, fallout=1)
    lines = trace_contest(setup, player=parse_player_policy("risk=always"), seed=3)
    text = "\n".join(lines)
    for words in (
        "Fallout: 1 Glitch is thrown",
        "Round 1:",
        "The player rolls d8:",
        "The narrator rolls",
        "Risk: the player puts it all on the line",
        "The peril dice show",
        "Glitch: the narrator marks an O.",
        "Option hurt: the narrator gives the Agent a condition.",
        "Track [O O .]",
        "The track is full (O O O): the contest ends in a loss.",
        "Result: the player loses the contest",
    ):
        assert words in text
    assert trace_contest(setup, player=parse_player_policy("risk=always"), seed=3) == lines
    rows = simulate(setup, player=parse_player_policy("risk=always"), n=1, seed=3)
    rounds = rows["rounds"][0]
    assert f"after {rounds} round{'' if rounds == 1 else 's'}" in lines[-1]


def test_trace_shows_breaks_and_options():
    setup = ContestSetup(
        player_dice={1: 1}, narrator_dice={}, consequence=2, peril=1, pool={}, reserve={}, player_chips=4
    )
    text = "\n".join(trace_contest(setup, seed=1))
    assert "Break: the player marks an X." in text and "Option security: one peril die is removed." in text


# ----- the engine's events: observers ------------------------------------------------------------


OBSERVED = (
    ContestSetup(ability=1, challenge=1, consequence=4, peril=1, pool=SMALL_POOL, reserve={6: 1}, fallout=1),
    Rules(injury_peril="on", sudden_death="on"),
    parse_player_policy("glitch=sideswipe>hurt;risk=always"),
    parse_narrator_policy("random"),
)


def _engine(n, seed, observers=()):
    setup, ruleset, player, narrator = OBSERVED
    start, _ = contest_start(setup, ruleset, player, narrator)
    return ContestEngine(
        start, ruleset, player, narrator, n, np.random.Generator(np.random.PCG64(seed)), observers=observers
    )


def test_observers_hear_every_contest_and_the_events_add_up_to_the_results():
    recorder = EventRecorder()
    result = _engine(3_000, 9, [recorder]).run()
    assert {event for event, _, _ in recorder.events} <= set(ContestEngine.EVENTS)
    marks = Counter((trial, values["kind"]) for event, trial, values in recorder.events if event == "mark")
    rounds = Counter(trial for event, trial, _ in recorder.events if event == "round")
    injuries = Counter(trial for event, trial, values in recorder.events if event == "hurt" and values["injury"])
    over = {trial: values["outcome"] for event, trial, values in recorder.events if event == "contest_over"}
    for trial in range(3_000):
        assert marks[trial, "break"] == result["breaks"][trial] and marks[trial, "glitch"] == result["glitches"][trial]
        assert rounds[trial] == result["rounds"][trial] and injuries[trial] == result["injuries"][trial]
        assert over[trial] == result["outcome"][trial]
    seen = Counter(event for event, _, _ in recorder.events)
    assert all(seen[event] for event in ("fallout", "sudden_death", "sideswipe_dice", "hurt", "risk", "placed"))


def test_observers_do_not_change_the_play():
    plain = _engine(2_000, 4).run()
    heard = _engine(2_000, 4, [EventRecorder(), Narrator()]).run()
    assert all(np.array_equal(plain[column], heard[column]) for column in plain)


def test_the_narrator_words_every_event_and_only_contest_0():
    assert all(callable(getattr(Narrator, event, None)) for event in ContestEngine.EVENTS)
    narrator = Narrator()
    result = _engine(50, 3, [narrator]).run()
    lines = narrator.lines
    assert lines[0] == "Fallout: 1 Glitch is thrown before the first round."
    assert sum(line.startswith("Round ") for line in lines) == result["rounds"][0]
    assert sum(line.endswith("marks an X.") for line in lines) == result["breaks"][0]
    assert sum(line.endswith("marks an O.") for line in lines) == result["glitches"][0]
    assert sum(line.startswith("  Track [") for line in lines) == result["rounds"][0]


# the stories told before the narration became an observer (same seeds, same words)
GOLDEN_TRACES = {
    "sd_17": [
        "-a",
        "2",
        "-c",
        "2",
        "-w",
        "2",
        "--rule",
        "sudden_death=on",
        "--narrator-policy",
        "random",
        "--seed",
        "17",
    ],
    "swipe_23": [
        "-a",
        "1",
        "-c",
        "2",
        "-w",
        "3",
        "--pool",
        "2d8,3d10",
        "--reserve",
        "2d6",
        "--player-policy",
        "glitch=sideswipe;sideswipe_take=chips;break=footing-discard",
        "--seed",
        "23",
    ],
    "plans_1": [
        "--player-dice",
        "d8",
        "--narrator-dice",
        "d10",
        "-w",
        "3",
        "--pool",
        "2d6,d8",
        "--reserve",
        "none",
        "--rule",
        "sideswipe_picker=narrator",
        "--player-policy",
        "glitch=plans>sideswipe;break=footing-dice",
        "--narrator-policy",
        "plans=dice;give=d8>d10",
        "--seed",
        "1",
    ],
    "inj_1": [
        "-a",
        "1",
        "-c",
        "1",
        "-w",
        "3",
        "--pool",
        "2d8,2d10",
        "--reserve",
        "d6",
        "--fallout",
        "1",
        "--rule",
        "injury_peril=on",
        "--player-policy",
        "glitch=sideswipe>hurt",
        "--narrator-policy",
        "hurt=injury;plans=dice",
        "--seed",
        "1",
    ],
    "risk_3": [
        "-a",
        "3",
        "-c",
        "3",
        "-w",
        "3",
        "-p",
        "1",
        "--fallout",
        "1",
        "--player-policy",
        "risk=always",
        "--seed",
        "3",
    ],
    "adv_5": [
        "-a",
        "2",
        "-c",
        "1",
        "-w",
        "3",
        "--pool",
        "2d8,3d10",
        "--reserve",
        "2d6",
        "--player-policy",
        "break=advantage",
        "--narrator-policy",
        "random",
        "--seed",
        "5",
    ],
}


@pytest.mark.parametrize("name", GOLDEN_TRACES)
def test_trace_tells_the_same_story_as_before(name, capsys):
    code, out, err = _run_cli(["trace"] + GOLDEN_TRACES[name], capsys)
    assert code == 0, err
    assert out == (TRACES / f"{name}.txt").read_text()


# ----- the CLI ----------------------------------------------------------------------------------


def _run_cli(args, capsys):
    from exactdice.cli.karbon import karbon
    from exactdice.cli.karbon_sim import simulate, trace
    from exactdice.cli.main import main

    for command in (simulate, trace):
        if command.name not in karbon.commands:
            karbon.add_command(command)
    with pytest.raises(SystemExit) as stopped:
        main(["karbon"] + args)
    captured = capsys.readouterr()
    return stopped.value.code, captured.out, captured.err


def test_cli_simulate_json_and_csv(tmp_path, capsys):
    import json

    code, out, _ = _run_cli(
        ["simulate", "-a", "2", "-c", "1", "-w", "1", "--n", "500", "--seed", "4", "--json"], capsys
    )
    assert code == 0
    document = json.loads(out)
    assert set(document) >= {"contests", "outcomes", "means", "seed", "ruleset", "policies", "setup"}
    assert document["contests"] == 500 and set(document["outcomes"]) == set(OUTCOMES)
    path = tmp_path / "s.csv"
    code, _, err = _run_cli(["simulate", "-a", "2", "-c", "1", "--n", "20", "--out", str(path)], capsys)
    assert code == 0 and "wrote 20 contests" in err and path.read_text().startswith("trial,outcome,rounds")


def test_cli_simulate_text_and_trace(capsys):
    code, out, _ = _run_cli(["simulate", "-a", "1", "-c", "1", "--n", "300"], capsys)
    assert code == 0 and "simulated 300 contests" in out and "mean rounds" in out
    code, out, _ = _run_cli(["trace", "-a", "1", "-c", "1", "-w", "1", "--seed", "3"], capsys)
    assert code == 0 and out.startswith("Draw: the player draws d8") and "\nStart: the player holds d8" in out
    assert "Round 1:" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["simulate", "-a", "1", "-c", "1", "--n", "0"], "--n: must be a whole number"),
        (["simulate", "-a", "1", "-c", "1", "--seed", "-2"], "'--seed': -2 is not in the range x>=0"),
        (["simulate", "-a", "1", "-c", "1", "--strategy", "x.json"], "--strategy:"),
        (["trace", "-a", "1", "-c", "1", "--rule", "sudden_death=maybe"], "--rule:"),
    ],
)
def test_cli_bad_input_exits_2(args, message, capsys):
    code, _, err = _run_cli(args, capsys)
    assert code == 2 and message in err and "Traceback" not in err
