"""Strategy files written by ``karbon odds --strategy`` and replayed by ``karbon simulate --strategy``.

Each replay's outcome counts are compared with the exact odds of the same solve by a G test
at alpha = 1e-3 / len(CASES) (Bonferroni over the batch), so the batch's false-alarm rate is
at most 1e-3. The same test must reject a strategy whose every action is flipped, and a
model whose cut of the chips in hand is one chip too low (the simulator plays every chip).
"""

import contextlib
import csv
import io
import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from exactdice.cli.main import main
from exactdice.errors import InputError
from exactdice.karbon import ContestSetup, Rules, parse_narrator_policy, parse_player_policy
from exactdice.karbon.dice import DiceSizes
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.replay import DicePick, NamedChoice, SwapChoice
from exactdice.karbon.setup import read_state_file
from exactdice.karbon.simulate import OUTCOMES, ContestEngine, contest_start, simulate
from exactdice.karbon.trace import EventRecorder

DATA = Path(__file__).parent / "data"
TINY = ["--player-dice", "d6", "--narrator-dice", "d8", "--pool", "d4", "--reserve", "d4", "-w", "1", "-p", "1"]
# (name, setup flags, policy flags, decision points the strategy must hold)
CASES = [
    ("optimal vs fixed: risk", TINY, ["--player-policy", "optimal"], {"risk"}),
    (
        "optimal vs kind: both draws",
        ["-a", "1", "-c", "1", "--fortune", "1", "--pool", "d4,d6,d8", "--reserve", "none", "-w", "1"],
        ["--player-policy", "optimal", "--narrator-policy", "kind"],
        {"draw", "narrator_draw", "risk"},
    ),
    (
        "optimal vs optimal: the Test's options",
        ["--player-dice", "d6", "--narrator-dice", "d8", "--pool", "none", "--reserve", "d4", "-w", "2", "-p", "1"],
        ["--player-policy", "optimal", "--narrator-policy", "optimal"],
        {"risk", "break", "swap", "glitch", "hurt", "plans"},
    ),
    # no peril: both placing sides are described with their stacks in hand (placement_folded)
    (
        "optimal vs optimal: one reward a Test, no peril",
        [
            "--player-dice",
            "d6",
            "--narrator-dice",
            "d8",
            "--pool",
            "none",
            "--reserve",
            "none",
            "-w",
            "2",
            "-p",
            "0",
            "--rule",
            "rewards_per_test=1",
        ],
        ["--player-policy", "optimal", "--narrator-policy", "optimal"],
        {"risk", "break"},
    ),
    # more chips than can matter (12 > 5 W): the model cuts them; the replay plays them all
    # and describes its position with them cut (stacks and the Test's queue after placement too)
    (
        "optimal vs optimal: chips past the cut",
        ["--state", str(DATA / "chips_past_the_cut.json")],
        ["--player-policy", "optimal", "--narrator-policy", "optimal"],
        {"break"},
    ),
    (
        "optimal vs optimal: chips past the cut, one reward a Test",
        ["--state", str(DATA / "chips_past_the_cut.json"), "--rule", "rewards_per_test=1"],
        ["--player-policy", "optimal", "--narrator-policy", "optimal"],
        {"break"},
    ),
    # both sides past the cut, the narrator's stack started: Glitch options after placement
    (
        "optimal vs optimal: both past the cut, narrator first",
        [
            "--state",
            str(DATA / "both_past_the_cut.json"),
            "--rule",
            "rewards_per_test=1",
            "--rule",
            "tie_order=narrator_first",
        ],
        ["--player-policy", "optimal", "--narrator-policy", "optimal"],
        {"risk", "break", "glitch", "hurt"},
    ),
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
    code, _, err = _invoke(
        ["simulate"]
        + setup_args
        + policy_args
        + ["--strategy", str(strategy_path), "--n", str(n), "--seed", str(seed), "--out", str(samples)]
    )
    assert code == 0, err
    with open(samples, newline="") as handle:
        outcomes = [row["outcome"] for row in csv.DictReader(handle)]
    return np.array([outcomes.count(name) for name in OUTCOMES])


def _g_test_pvalue(observed, law):
    expected = np.array([float(p) for p in law]) * observed.sum()
    if observed[expected == 0].sum():
        return 0.0  # an outcome the exact model rules out
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
        entry["action"] = flip[entry["action"]]  # the other legal action
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


@pytest.mark.parametrize(
    "written_format, words",
    [
        ("exactdice-karbon-strategy/1", "is in the older format exactdice-karbon-strategy/1"),
        ("something-else/3", "is not an exactdice strategy file"),
    ],
)
def test_other_file_formats_are_refused_with_the_reason(written, tmp_path, written_format, words):
    name, setup_args, policy_args, _ = CASES[0]
    document = json.loads(written[name][0].read_text())
    document["format"] = written_format
    other = tmp_path / "other.json"
    other.write_text(json.dumps(document))
    code, _, err = _invoke(["simulate"] + setup_args + policy_args + ["--strategy", str(other), "--n", "100"])
    assert code == 2 and words in err and "Traceback" not in err


@pytest.mark.parametrize(
    "changed, words",
    [
        (["--rule", "sudden_death=on"], "written for ruleset"),
        (["--narrator-policy", "hurt=injury"], "written for policies"),
        (["--pool", "d10"], "written for dice_sizes"),
        # another setup of the same dice: refused before any contest is played, naming what differs
        (["-p", "2"], 'written for setup {"peril": 1} but this simulation has {"peril": 2}'),
    ],
)
def test_header_mismatch_is_refused(written, changed, words):
    name, setup_args, policy_args, _ = CASES[0]
    code, _, err = _invoke(
        ["simulate"] + setup_args + policy_args + changed + ["--strategy", str(written[name][0]), "--n", "100"]
    )
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
    code, out, err = _invoke(
        ["trace"] + setup_args + policy_args + ["--strategy", str(written[name][0]), "--seed", "2"]
    )
    assert code == 0, err
    assert "Risk (strategy): the player" in out and out.splitlines()[-1].startswith("Result: the player")


# ----- the cut of the chips in hand: only the description is cut, never the play ------------------

CUT_CASE = CASES[4]  # chips past the cut: 12 chips in hand, 10 can still matter


def _cut_one_chip_too_many(original):
    """A wrong `KarbonModel._capped`: the player keeps one chip fewer than the right cut."""

    def wrong(position):
        most = original(position._replace(player_chips=10**6)).player_chips
        capped = original(position)
        if position.player_chips >= most:
            return capped._replace(player_chips=most - 1)
        return capped

    return staticmethod(wrong)


@pytest.fixture
def wrongly_cut(python_walk, monkeypatch, tmp_path):
    """The cut case solved by a model whose cut is one chip too low: (strategy path, its law)."""
    monkeypatch.setattr(KarbonModel, "_capped", _cut_one_chip_too_many(KarbonModel._capped))
    path = tmp_path / "wrong-cut.json"
    code, out, err = _invoke(["odds"] + CUT_CASE[1] + CUT_CASE[2] + ["--strategy", str(path), "--json"])
    assert code == 0, err
    odds = json.loads(out)
    return path, [Fraction(odds[name]) for name in ("win", "loss", "tie", "never_ends")]


def test_a_model_with_a_wrong_cut_is_caught_by_the_replay(written, wrongly_cut, tmp_path):
    path, wrong_law = wrongly_cut
    assert wrong_law != written[CUT_CASE[0]][1]  # the wrong cut changes the exact odds
    # the file's keys hold the wrong cut; the replay describes its chips with the format's
    code, _, err = _invoke(["simulate"] + CUT_CASE[1] + CUT_CASE[2] + ["--strategy", str(path), "--n", "2000"])
    assert code == 2 and "the strategy has no decision" in err and '"player_chips": 10' in err


def test_a_wrong_cut_everywhere_is_caught_by_the_odds(written, wrongly_cut, tmp_path, monkeypatch):
    """The cut's argument itself wrong: the file's description follows it too, so every
    look-up succeeds, but the simulator plays every chip and the G test rejects the exact
    odds (a simulator that cut its chips the same way would agree with them)."""
    import exactdice.karbon.replay as replay

    path, wrong_law = wrongly_cut
    right = replay.written_chip_limits
    monkeypatch.setattr(replay, "written_chip_limits", lambda *counters: (right(*counters)[0] - 1, right(*counters)[1]))
    observed = _replayed_counts(CUT_CASE[1], CUT_CASE[2], path, tmp_path)
    assert _g_test_pvalue(observed, wrong_law) < 1e-6, (observed, [float(p) for p in wrong_law])
    assert _g_test_pvalue(observed, written[CUT_CASE[0]][1]) > ALPHA  # the rules' odds fit


def test_the_replay_places_every_chip(written):
    """In the first round every placing player puts down its 12 chips plus the roll's gain
    (the file describes them cut to 10, the play keeps them)."""
    name, setup_args, _, _ = CUT_CASE
    setup = read_state_file(DATA / "chips_past_the_cut.json")
    player, narrator = parse_player_policy("optimal"), parse_narrator_policy("optimal")
    start, replay = contest_start(setup, Rules(), player, narrator, str(written[name][0]))
    recorder = EventRecorder()
    ContestEngine(
        start,
        Rules(),
        player,
        narrator,
        500,
        np.random.Generator(np.random.PCG64(4)),
        observers=[recorder],
        replay=replay,
    ).run()
    gains, placed = {}, []
    for event, trial, values in recorder.events:
        if event == "round" and values["number"] > 1:
            break
        if event == "roll_won":
            player_hits, narrator_hits = values["player_hits"], values["narrator_hits"]
            gains[trial] = player_hits if player_hits >= narrator_hits else 0
        if event == "placed" and values["side"] == "player":
            placed.append(values["chips"] == 12 + gains[trial])
    assert len(placed) > 100 and all(placed)


# ----- what the replay allows: checked against every option listed by brute force -------------------


def _picks(available, count):
    """Every multiset of ``count`` dice out of ``available`` (count tuples), by brute force."""
    return {taken for taken in itertools.product(*(range(held + 1) for held in available)) if sum(taken) == count}


def _swaps(hand, reserve):
    return {
        (out, into)
        for size in (1, 2)
        for out in _picks(hand, size)
        for into in _picks(reserve, size)
        if not any(o and i for o, i in zip(out, into))
    }


SMALL_DICE = list(itertools.product(range(3), repeat=3))  # up to two dice of each of 3 sizes


def test_dice_picks_are_forced_exactly_when_one_pick_exists():
    sizes = DiceSizes([6, 8, 10])
    for available in SMALL_DICE:
        for count in range(sum(available) + 1):
            picks = _picks(available, count)
            choice = DicePick(sizes, available, count)
            assert (choice.forced() is not None) == (len(picks) == 1), (available, count)
            if len(picks) == 1:
                assert choice.forced() == sizes.text(next(iter(picks)))
            for taken in _picks(tuple(2 for _ in available), count):
                assert choice.allows(sizes.text(taken)) == (taken in picks)
            assert not choice.allows("d12") and not choice.allows("2x")


def test_swaps_are_forced_exactly_when_one_swap_exists():
    sizes = DiceSizes([6, 8, 10])
    for hand in SMALL_DICE:
        for reserve in SMALL_DICE:
            swaps = _swaps(hand, reserve)
            choice = SwapChoice(sizes, hand, reserve)
            assert (choice.forced() is not None) == (len(swaps) == 1), (hand, reserve)
            for out, into in _swaps((2, 2, 2), (2, 2, 2)):
                text = f"{sizes.text(out)}->{sizes.text(into)}"
                assert choice.allows(text) == ((out, into) in swaps), (hand, reserve, text)
    assert not SwapChoice(sizes, (1, 0, 0), (0, 1, 0)).allows("d6")


def test_named_choices():
    assert NamedChoice(["no", "yes"]).forced() is None and NamedChoice(["none"]).forced() == "none"
    assert str(NamedChoice(["hurt", "plans"])) == "hurt, plans" and not NamedChoice(["hurt"]).allows("plans")


def test_the_replayer_s_chip_cut_is_the_model_s():
    # `written_chip_limits` takes arrays (one entry per simulated contest), so it cannot call
    # `KarbonModel._capped` (one Position); it must give the same cut at every position
    from exactdice.karbon.position import Position
    from exactdice.karbon.strategy import written_chip_limits

    rows = []
    for track in range(1, 6):
        for wins, losses in itertools.product(range(track + 1), repeat=2):
            if wins + losses > track:
                continue
            for player_stack, narrator_stack in itertools.product(range(5), repeat=2):
                rows.append((track, wins, losses, player_stack, narrator_stack))
    columns = np.array(rows).T
    player_limits, narrator_limits = written_chip_limits(*columns)
    for (track, wins, losses, player_stack, narrator_stack), player, narrator in zip(
        rows, player_limits, narrator_limits
    ):
        flooded = Position((), (), (), (), 10**6, 10**6, player_stack, narrator_stack, wins, losses, 0, track)
        capped = KarbonModel._capped(flooded)
        assert (capped.player_chips, capped.narrator_chips) == (player, narrator)
        assert tuple(int(v) for v in written_chip_limits(track, wins, losses, player_stack, narrator_stack)) == (
            player,
            narrator,
        )


def test_the_replayer_words_a_context_as_the_strategy_file_does():
    from exactdice.karbon.replay import QUEUE_CODES, context_words
    from exactdice.karbon.strategy import decision_context

    assert context_words("risk", [1]) == decision_context("risk", "n") == {"roll_winner": "narrator"}
    assert context_words("take", [0, 2]) == decision_context("take", "p", 2)
    columns = [QUEUE_CODES["B"], 2, QUEUE_CODES["G"], 1]
    assert context_words("break", columns) == decision_context("break", ("B", "B", "G")) == {"queue": ["B", "B", "G"]}
    columns = [QUEUE_CODES["G"], 1, QUEUE_CODES["place"], 0]
    assert context_words("glitch", columns) == {"queue": ["G", "place:player"]}
