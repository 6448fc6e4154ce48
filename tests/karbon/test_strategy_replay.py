"""Strategy files written by ``karbon odds --strategy`` and replayed by ``karbon simulate --strategy``.

Each replay's outcome counts are compared with the exact odds of the same solve by a G test
at alpha = 1e-3 / len(CASES) (Bonferroni over the batch), so the batch's false-alarm rate is
at most 1e-3. The same test must reject a strategy whose every action is flipped.
"""

import contextlib
import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from exactdice.cli.main import main
from exactdice.errors import InputError
from exactdice.karbon import ContestSetup, Rules, parse_player_policy
from exactdice.karbon.simulate import OUTCOMES, simulate

DATA = Path(__file__).parent / "data"
TINY = ["--player-dice", "d6", "--narrator-dice", "d8", "--pool", "d4", "--reserve", "d4", "-w", "1", "-p", "1"]
# (name, setup flags, policy flags, decision points the strategy must hold)
CASES = [
    ("optimal vs fixed: risk", TINY, ["--player-policy", "optimal"], {"risk"}),
    ("optimal vs kind: both draws", ["-a", "1", "-c", "1", "--fortune", "1", "--pool", "d4,d6,d8",
                                     "--reserve", "none", "-w", "1"],
     ["--player-policy", "optimal", "--narrator-policy", "kind"], {"draw", "narrator_draw", "risk"}),
    ("optimal vs optimal: the Test's options", ["--player-dice", "d6", "--narrator-dice", "d8", "--pool", "none",
                                                "--reserve", "d4", "-w", "2", "-p", "1"],
     ["--player-policy", "optimal", "--narrator-policy", "optimal"],
     {"risk", "break", "swap", "glitch", "hurt", "plans"}),
    # no peril: both placing sides are described with their stacks in hand (placement_folded)
    ("optimal vs optimal: one reward a Test, no peril", ["--player-dice", "d6", "--narrator-dice", "d8", "--pool",
                                                         "none", "--reserve", "none", "-w", "2", "-p", "0",
                                                         "--rule", "rewards_per_test=1"],
     ["--player-policy", "optimal", "--narrator-policy", "optimal"], {"risk", "break"}),
    # more chips than can matter (12 > 5 W): the model cuts them, so the replay must drop
    # them too or its stacks differ from the file's after placement
    ("optimal vs optimal: chips past the cut", ["--state", str(DATA / "chips_past_the_cut.json")],
     ["--player-policy", "optimal", "--narrator-policy", "optimal"], {"break"}),
]
ALPHA = 1e-3 / len(CASES)
N = 40_000


def _invoke(args):
    """Run ``exactdice karbon ARGS`` through the CLI's main (an InputError exits with code 2)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stopped:
        main(["karbon"] + args)
    return stopped.value.code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Solve each case once with ``karbon odds --strategy``: {name: (strategy path, exact law)}."""
    folder = tmp_path_factory.mktemp("strategies")
    found = {}
    for index, (name, setup_args, policy_args, _) in enumerate(CASES):
        path = folder / f"case{index}.json"
        code, out, err = _invoke(["odds"] + setup_args + policy_args + ["--strategy", str(path), "--json"])
        assert code == 0, err
        odds = json.loads(out)
        law = [Fraction(odds["win"]), Fraction(odds["loss"]), Fraction(odds["tie"]), Fraction(odds["never_ends"])]
        assert sum(law) == 1
        found[name] = (path, law)
    return found


def _replayed_counts(setup_args, policy_args, strategy_path, tmp_path, seed=11, n=N):
    samples = tmp_path / f"samples-{seed}.csv"
    code, _, err = _invoke(["simulate"] + setup_args + policy_args +
                           ["--strategy", str(strategy_path), "--n", str(n), "--seed", str(seed),
                            "--out", str(samples)])
    assert code == 0, err
    with open(samples, newline="") as handle:
        outcomes = [row["outcome"] for row in csv.DictReader(handle)]
    return np.array([outcomes.count(name) for name in OUTCOMES])


def _g_test_pvalue(observed, law):
    expected = np.array([float(p) for p in law]) * observed.sum()
    if observed[expected == 0].sum():
        return 0.0   # an outcome the exact model rules out
    keep = expected > 0
    if keep.sum() < 2:
        return 1.0
    return stats.power_divergence(observed[keep], expected[keep], lambda_="log-likelihood").pvalue


@pytest.mark.parametrize("name, setup_args, policy_args, points", CASES, ids=[case[0] for case in CASES])
def test_replayed_strategy_reproduces_the_exact_odds(written, tmp_path, name, setup_args, policy_args, points):
    path, law = written[name]
    document = json.loads(path.read_text())
    assert {entry["point"] for entry in document["decisions"]} >= points
    observed = _replayed_counts(setup_args, policy_args, path, tmp_path)
    assert _g_test_pvalue(observed, law) > ALPHA, (observed, [float(p) for p in law])


def test_flipped_strategy_is_rejected_by_the_same_test(written, tmp_path):
    name, setup_args, policy_args, _ = CASES[0]
    path, law = written[name]
    document = json.loads(path.read_text())
    flip = {"yes": "no", "no": "yes"}
    assert {entry["point"] for entry in document["decisions"]} == {"risk"}
    for entry in document["decisions"]:
        entry["action"] = flip[entry["action"]]   # the other legal action
    flipped = tmp_path / "flipped.json"
    flipped.write_text(json.dumps(document))
    observed = _replayed_counts(setup_args, policy_args, flipped, tmp_path)
    assert _g_test_pvalue(observed, law) < ALPHA


def test_missing_decision_is_a_clear_error(written, tmp_path):
    name, setup_args, policy_args, _ = CASES[2]
    document = json.loads(written[name][0].read_text())
    document["decisions"] = [entry for entry in document["decisions"] if entry["point"] != "break"]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(document))
    code, _, err = _invoke(["simulate"] + setup_args + policy_args + ["--strategy", str(partial), "--n", "2000"])
    assert code == 2 and "Traceback" not in err
    assert "--strategy: the strategy has no decision for point 'break' at state {" in err
    assert '"player_dice"' in err and '"queue"' in err


def test_illegal_action_is_a_clear_error(written, tmp_path):
    name, setup_args, policy_args, _ = CASES[0]
    document = json.loads(written[name][0].read_text())
    for entry in document["decisions"]:
        entry["action"] = "maybe"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    code, _, err = _invoke(["simulate"] + setup_args + policy_args + ["--strategy", str(bad), "--n", "100"])
    assert code == 2 and "plays 'maybe' at point 'risk'" in err and "legal actions are no, yes" in err


@pytest.mark.parametrize("written_format, words", [
    ("exactdice-karbon-strategy/1", "is in the older format exactdice-karbon-strategy/1"),
    ("something-else/3", "is not an exactdice strategy file"),
])
def test_other_file_formats_are_refused_with_the_reason(written, tmp_path, written_format, words):
    name, setup_args, policy_args, _ = CASES[0]
    document = json.loads(written[name][0].read_text())
    document["format"] = written_format
    other = tmp_path / "other.json"
    other.write_text(json.dumps(document))
    code, _, err = _invoke(["simulate"] + setup_args + policy_args + ["--strategy", str(other), "--n", "100"])
    assert code == 2 and words in err and "Traceback" not in err


@pytest.mark.parametrize("changed, words", [
    (["--rule", "sudden_death=on"], "written for ruleset"),
    (["--narrator-policy", "hurt=injury"], "written for policies"),
    (["--pool", "d10"], "written for dice_sizes"),
])
def test_header_mismatch_is_refused(written, changed, words):
    name, setup_args, policy_args, _ = CASES[0]
    code, _, err = _invoke(["simulate"] + setup_args + policy_args + changed +
                           ["--strategy", str(written[name][0]), "--n", "100"])
    assert code == 2 and f"--strategy: the strategy was {words}" in err and "Traceback" not in err


def test_simulate_without_a_file_solves_first_and_matches_the_file(written):
    name, setup_args, policy_args, _ = CASES[0]
    common = ["simulate"] + setup_args + policy_args + ["--n", "3000", "--seed", "5", "--json"]
    code, out, err = _invoke(common)
    assert code == 0 and "solving the contest exactly" in err
    solved = json.loads(out)
    code, out, _ = _invoke(common + ["--strategy", str(written[name][0])])
    from_file = json.loads(out)
    assert solved["strategy"] == "solved" and from_file["strategy"] == str(written[name][0])
    assert solved["outcomes"] == from_file["outcomes"] and solved["means"] == from_file["means"]


def test_python_api_needs_a_strategy_for_optimal_play():
    setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, consequence=1, pool={}, reserve={})
    with pytest.raises(InputError, match="player_policy: the simulator plays 'optimal' by replaying"):
        simulate(setup, Rules(), parse_player_policy("optimal"), n=10)


def test_trace_replays_the_strategy(written):
    name, setup_args, policy_args, _ = CASES[0]
    code, out, err = _invoke(["trace"] + setup_args + policy_args +
                             ["--strategy", str(written[name][0]), "--seed", "2"])
    assert code == 0, err
    assert "Risk (strategy): the player" in out and out.splitlines()[-1].startswith("Result: the player")
