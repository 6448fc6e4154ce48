"""Sensitivity: a change that cannot matter moves nothing (exactly), one that must matter
moves the odds, every delta is the exact difference of two independent solves, and the
CLI prints, writes JSON and draws the tornado chart."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from click.testing import CliRunner

from exactdice.cli.main import cli
from exactdice.karbon.sensitivity import METRICS, base_arguments, karbon_sensitivity, sensitivity_variants
from exactdice.karbon.tables import contest_cell

# a small contest: one die each from three d8, first to one mark
SMALL = dict(ability=1, challenge=1, consequence=1, peril=0, pool="d8,d8,d8", reserve="none")


@pytest.fixture(scope="module")
def report():
    return karbon_sensitivity(base_arguments(**SMALL), store=None, workers=2)


def _row(report, name):
    (row,) = [row for row in report.rows if row.name == name]
    return row


def test_a_knob_that_cannot_matter_moves_nothing_exactly(report):
    # the objective only steers optimal play; both sides here play fixed preferences
    row = _row(report, "rule objective=win")
    assert all(row.deltas[metric] == 0 for metric in METRICS)
    # with no peril dice and no reserve, peril chips and the sideswipe picker change nothing
    for name in ("rule peril_chips=hand",):
        assert _row(report, name).effect == 0


def test_a_change_that_must_matter_moves_the_odds(report):
    # one more narrator die (C 1 -> 2) takes a d8 from a three-d8 pool: the player wins less
    harder = _row(report, "Challenge 2 (+1)")
    assert harder.deltas["P(win)"] < 0
    # a longer track changes the expected length of the contest
    longer = _row(report, "Consequence W 2 (+1)")
    assert longer.deltas["expected rounds"] > 0


def test_deltas_are_exact_differences_of_independent_solves(report):
    base = contest_cell(**SMALL)
    assert report.base_values == {metric: base[metric] for metric in METRICS}
    harder = contest_cell(**{**SMALL, "challenge": 2})
    row = _row(report, "Challenge 2 (+1)")
    assert row.deltas == {metric: harder[metric] - base[metric] for metric in METRICS}
    # sorted by effect, largest first
    effects = [row.effect for row in report.rows]
    assert effects == sorted(effects, reverse=True)


def test_impossible_changes_are_skipped_with_a_reason(report):
    skipped = dict(report.skipped)
    assert "Challenge 0 (-1)" in skipped and skipped["Challenge 0 (-1)"].startswith("challenge:")
    assert "Ability 0 (-1)" not in skipped  # Ability 0 is a legal (hopeless) contest
    # C3 + A1 needs four dice from a three-die pool
    assert "Challenge 3 (+1)" not in {row.name for row in report.rows}


def test_every_preference_and_knob_is_varied_once():
    variants, skipped = sensitivity_variants(base_arguments(ability=2, challenge=2))
    names = [variant.name for variant in variants] + [name for name, _ in skipped]
    assert len(names) == len(set(names))
    assert "player risk=always" in names and "narrator hurt=injury" in names
    assert "player break: advantage first" in names and "narrator give: d8 first" in names
    assert sum(name.startswith("rule ") for name in names) == 7
    optimal, _ = sensitivity_variants(base_arguments(ability=2, challenge=2, player="optimal"))
    assert not any(variant.group == "player" for variant in optimal)
    # a random narrator's hurt and plans are coin flips: only its dice preferences vary
    random, skipped = sensitivity_variants(base_arguments(ability=2, challenge=2, narrator="random"))
    varied = [variant.name for variant in random if variant.group == "narrator"]
    assert "narrator give: d8 first" in varied and not any(name.startswith("narrator") for name, _ in skipped)
    assert not any("hurt" in name or "plans=" in name for name in varied)


def test_cli_text_json_and_chart(tmp_path):
    runner = CliRunner()
    arguments = [
        "karbon",
        "sensitivity",
        "-a",
        "1",
        "-c",
        "1",
        "-w",
        "1",
        "--pool",
        "d8,d8,d8",
        "--reserve",
        "none",
        "--store",
        str(tmp_path / "s.sqlite"),
        "--workers",
        "1",
    ]
    text = runner.invoke(cli, arguments + ["--top", "5", "--plot", str(tmp_path / "t.png")])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].startswith("base: A1 C1 W1 P0") and "P(win)" in lines[0]
    assert (
        len(
            [
                line
                for line in lines
                if line.startswith(
                    (
                        "Ability",
                        "Challenge",
                        "Consequence",
                        "Peril",
                        "Fortune",
                        "Fallout",
                        "Training",
                        "rule",
                        "player",
                        "narrator",
                    )
                )
            ]
        )
        == 5
    )
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(runner.invoke(cli, arguments + ["--json"]).output)
    base = contest_cell(**SMALL)
    assert Fraction(data["base_values"]["P(win)"]) == base["P(win)"]
    assert data["decimal"]["base_values"]["P(win)"] == float(base["P(win)"])
    objective = [change for change in data["changes"] if change["change"] == "rule objective=win"][0]
    assert objective["deltas"]["P(win)"] == "0"
    bad = runner.invoke(cli, arguments + ["--plot", str(tmp_path / "t.pdf")])
    assert bad.exit_code == 2 or "PNG" in str(bad.exception)


def test_the_chart_is_written_like_every_other_output(report, tmp_path):
    from exactdice.errors import InputError
    from exactdice.karbon.sensitivity import tornado_chart

    chart = tmp_path / "t.png"
    chart.write_bytes(b"old")
    chart.chmod(0o600)
    tornado_chart(report, chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert chart.stat().st_mode & 0o777 == 0o600  # the file replaced keeps its permission bits
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.png"]  # no temporary file left
    link = tmp_path / "null.png"
    link.symlink_to("/dev/null")
    with pytest.raises(InputError) as refused:
        tornado_chart(report, link)
    assert refused.value.field == "plot_path" and "character device" in refused.value.message


def test_a_change_past_the_state_budget_is_skipped_and_the_base_past_it_is_an_error():
    from exactdice.errors import TooLargeError

    base = base_arguments(ability=1, challenge=1, consequence=1)
    report = karbon_sensitivity(base, store=None, workers=1, max_states=2_000)
    reasons = dict(report.skipped)
    assert reasons["player risk=always"] == "its exact game passes 2,000 states (raise `max_states`)"
    assert all(row.name != "player risk=always" for row in report.rows)
    assert any(row.name == "Consequence W 2 (+1)" for row in report.rows)  # small changes still solved
    with pytest.raises(TooLargeError, match="the base setup: its exact game passes 10 states"):
        karbon_sensitivity(base, store=None, workers=1, max_states=10)


def test_cli_max_states_skips_the_large_change(capsys):
    result = CliRunner().invoke(
        cli,
        [
            "karbon",
            "sensitivity",
            "-a",
            "1",
            "-c",
            "1",
            "-w",
            "1",
            "--no-cache",
            "--workers",
            "1",
            "--max-states",
            "2000",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skipped player risk=always: its exact game passes 2,000 states (raise --max-states)" in result.output
    from exactdice.cli import main as cli_main

    with pytest.raises(SystemExit) as exit_:
        cli_main.main(["karbon", "sensitivity", "-a", "1", "-c", "1", "--max-states", "0"])
    assert exit_.value.code == 2
    assert "--max-states: must be >= 1, got 0" in capsys.readouterr().err


def test_the_what_if_strip_shows_each_stepped_parameters_exact_p_win(report, monkeypatch):
    """One small chart per setup parameter with a solved neighbour: P(win) at the base and
    at each step, the exact values of the report's rows, drawn as read back from the axes."""
    from matplotlib.axes import Axes

    from exactdice.karbon.charts import sensitivity_png, what_if_charts

    charts = what_if_charts(report)
    by_title = {chart.title: chart for chart in charts}
    ability = by_title["Ability"].curves[0]
    assert ability.xs == (0, 1, 2) and by_title["Ability"].marked_x == 1
    assert ability.ys == (
        _row(report, "Ability 0 (-1)").values["P(win)"],
        report.base_values["P(win)"],
        _row(report, "Ability 2 (+1)").values["P(win)"],
    )
    # Challenge 0 does not exist: only the step up, and no note about it
    assert by_title["Challenge"].curves[0].xs == (1, 2) and by_title["Challenge"].note == ""
    drawn = []
    original = Axes.plot
    monkeypatch.setattr(
        Axes,
        "plot",
        lambda self, xs, ys, *a, **k: (drawn.append((list(xs), list(ys))), original(self, xs, ys, *a, **k))[1],
    )
    assert sensitivity_png(report, top=5)[:8] == b"\x89PNG\r\n\x1a\n"
    assert drawn[0] == ([0.0, 1.0, 2.0], [float(p) * 100 for p in ability.ys])
    assert len(drawn) == len(charts)
