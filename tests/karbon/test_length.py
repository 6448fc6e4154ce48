"""How long a Karbon contest lasts: exact P(ended by round n) against the capped-counter
product the solver solves, against the simulator, and drawn by `karbon odds --plot`."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import numpy as np
import pytest
from matplotlib.axes import Axes
from scipy import stats

from exactdice.cli.main import main
from exactdice.errors import InputError
from exactdice.karbon.charts import length_chart
from exactdice.karbon.length import TAIL_TARGET, contest_length
from exactdice.karbon.policies import PlayerPolicy
from exactdice.karbon.setup import ContestSetup
from exactdice.karbon.simulate import simulate
from exactdice.karbon.solve import contest_odds
from exactdice.markov.reward_counts import reward_count_distribution
from exactdice.markov.reward_layers import FixedStrategy

SMALL = ContestSetup(player_dice={8: 2}, narrator_dice={8: 1, 10: 1}, consequence=2, peril=1, pool={}, reserve={})


def test_ended_by_round_n_is_the_cumulative_law_of_the_rounds_total():
    odds = contest_odds(SMALL)
    length = contest_length(odds, rounds=15)
    law = reward_count_distribution(odds.model, "rounds", cap=15)
    cumulative = Fraction(0)
    for rounds, ended in zip(length.rounds, length.ended_by):
        cumulative += law[str(rounds)] + (law["0"] if rounds == 1 else 0)
        assert ended == cumulative
    assert length.tail == law["16+"] and length.tail == 1 - length.ended_by[-1]
    # each outcome's curve ends below its probability, by at most the tail
    for outcome, probability in (("win", odds.win), ("loss", odds.loss), ("tie", odds.tie)):
        assert 0 <= probability - length.ended_in[outcome][-1] <= length.tail
    assert sum(curve[-1] for curve in length.ended_in.values()) == length.ended_by[-1]


def test_rounds_are_listed_until_less_than_the_target_is_left():
    length = contest_length(contest_odds(SMALL))
    assert 1 - length.ended_by[-1] < TAIL_TARGET <= 1 - length.ended_by[-2]
    assert list(length.ended_by) == sorted(length.ended_by)


def test_the_simulators_rounds_follow_the_exact_curve():
    """The simulator shares no transition code with the model: a G-test of its rounds column
    against the exact law (rounds 1..N, then the tail in one bin), fixed seed."""
    odds = contest_odds(SMALL)
    length = contest_length(odds)
    n = 40_000
    rounds = simulate(SMALL, n=n, seed=11)["rounds"]
    expected = np.diff([0.0] + [float(p) for p in length.ended_by] + [1.0]) * n
    observed = np.array([(rounds == r).sum() for r in length.rounds] + [(rounds > length.rounds[-1]).sum()])
    assert observed[expected == 0].sum() == 0
    keep = expected > 0
    assert stats.power_divergence(observed[keep], expected[keep], lambda_="log-likelihood").pvalue > 1e-4


def test_optimal_play_is_followed_through_its_strategy():
    setup = ContestSetup(player_dice={6: 1, 8: 1}, narrator_dice={8: 1}, consequence=1, pool={}, reserve={})
    odds = contest_odds(setup, player=PlayerPolicy(kind="optimal"))
    assert odds.strategy  # the player decides somewhere
    length = contest_length(odds, rounds=12)
    law = reward_count_distribution(FixedStrategy(odds.model, odds.strategy), "rounds", cap=12)
    assert length.ended_by[-1] == sum(law[str(total)] for total in range(13))


def test_bad_requests_name_the_parameter():
    odds = contest_odds(SMALL)
    with pytest.raises(InputError, match="rounds: must be a whole number from 1"):
        contest_length(odds, rounds=0)
    with pytest.raises(InputError, match="odds: the contest's length needs an exact solve"):
        contest_length(contest_odds(SMALL, arithmetic="float"))


def test_the_chart_draws_the_exact_values_and_states_the_tail(monkeypatch):
    from exactdice.tables.charts import chart_png

    drawn = []
    original = Axes.plot
    monkeypatch.setattr(
        Axes,
        "plot",
        lambda self, xs, ys, *a, **k: (drawn.append((list(xs), list(ys), k["label"])), original(self, xs, ys, *a, **k))[
            1
        ],
    )
    length = contest_length(contest_odds(SMALL))
    chart = length_chart(length)
    picture = chart_png(chart)
    xs, ys, label = drawn[0]
    assert label == "ended (any outcome)" and xs == [float(n) for n in length.rounds]
    assert ys == [float(p) * 100 for p in length.ended_by]
    assert {label for _, _, label in drawn[1:]} == {"ended in a win", "ended in a loss", "ended in a tie"}
    assert f"Not ended by round {length.rounds[-1]}" in chart.note
    import matplotlib.image

    image = matplotlib.image.imread(io.BytesIO(picture), format="png")
    assert image.shape[0] > 300 and image.shape[1] > 500


def run_cli(argv, capsys):
    """Run ``exactdice ARGV`` as a user does; (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def test_karbon_odds_plot_writes_the_png_and_its_values_in_the_json(tmp_path, capsys):
    arguments = [
        "karbon",
        "odds",
        "--player-dice",
        "2d8",
        "--narrator-dice",
        "d8,d10",
        "-w",
        "2",
        "-p",
        "1",
        "--pool",
        "none",
        "--reserve",
        "none",
    ]
    picture = tmp_path / "length.png"
    code, out, err = run_cli(arguments + ["--plot", str(picture), "--json"], capsys)
    assert code == 0, err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(out)["contest_length"]
    length = contest_length(contest_odds(SMALL))
    assert [Fraction(p) for p in data["ended_by"]] == list(length.ended_by)
    assert Fraction(data["tail"]) == length.tail and data["rounds"] == list(length.rounds)
    code, out, err = run_cli(arguments + ["--plot", str(tmp_path / "again.png")], capsys)
    assert code == 0 and "wrote how long the contest lasts" in err and "P(win)" in out
    for extra, message in (
        (["--plot", str(tmp_path / "x.pdf")], "--plot: the chart is a PNG"),
        (["--plot", str(tmp_path / "y.png"), "--float"], "--plot: draws the exact game's length: drop --float"),
    ):
        code, _, err = run_cli(arguments + extra, capsys)
        assert code == 2 and message in err, err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["again.png", "length.png"]
