"""``exactdice chronica``: exit codes, messages and JSON keys."""

from __future__ import annotations

import csv
import json
from fractions import Fraction

import pytest

from exactdice.cli.main import main


def run(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        main(["chronica", *args])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def test_contest_json_keys_and_values(capsys):
    code, out, _ = run(capsys, "contest", "--side", "d6", "--side", "d6", "--json")
    assert code == 0
    payload = json.loads(out)
    assert {"win", "tie", "successes", "success_sizes", "concessions"} <= set(payload)
    assert payload["win"] == ["5/12", "5/12"] and payload["tie"] == "1/6"
    assert payload["successes"] == {"0": {"1": "5/12"}, "1": {"1": "5/12"}}
    assert payload["success_sizes"]["0"] == {"d6": "5/12"}
    assert sum(Fraction(p) for p in payload["concessions"]["1"].values()) == 1


def test_contest_text_pools_counts_and_knobs(capsys):
    code, out, _ = run(
        capsys,
        "contest",
        "--side",
        "2d8,d6",
        "--side",
        "d10/d6",
        "--tie-rule",
        "four-ties",
        "--push",
        "--push-dice",
        "d4",
        "--max-pushes",
        "2",
        "--physical",
        "--target",
        "d8",
    )
    assert code == 0
    assert "P(side 0 wins)" in out
    assert "side 1: d10,d8/d8" in out  # the target d8 replaced the d6 and added the missing die
    assert "tie rule four-ties, push on (at most 2, d4), physical dice on" in out
    code, out, _ = run(capsys, "contest", "--side", "d8,d8,d6", "--side", "d10,d6", "--side", "d12", "--json")
    payload = json.loads(out)
    assert len(payload["win"]) == 3
    assert sum(Fraction(p) for p in payload["win"]) + Fraction(payload["tie"]) == 1


@pytest.mark.parametrize(
    "args, field",
    [
        (["--side", "d6"], "--side"),
        (["--side", "d6", "--side", "dx"], "--side"),
        (["--side", "d6", "--side", "d0"], "--side"),
        (["--side", "d6", "--side", "d6", "--push-dice", "d6"], "--push-dice"),
        (["--side", "d6", "--side", "d6", "--max-pushes", "2"], "--max-pushes"),
        (["--side", "d6", "--side", "d6", "--push", "--max-pushes", "-1"], "--max-pushes"),
        (["--side", "d6", "--side", "d6", "--target", "2d6"], "--target"),
        (["--side", "40d6", "--side", "40d6"], "--side"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, field):
    code, out, err = run(capsys, "contest", *args)
    assert code == 2
    assert err.startswith(f"exactdice: error: {field}:") and err.count("\n") == 1
    assert "Traceback" not in err


def test_simulate_writes_csv(capsys, tmp_path):
    path = tmp_path / "samples.csv"
    code, out, _ = run(
        capsys, "simulate", "--side", "d8,d6", "--side", "d10", "--n", "300", "--seed", "7", "--out", str(path)
    )
    assert code == 0 and "Wrote 300 trials" in out
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 300
    assert set(rows[0]) == {"winner", "successes", "success_sizes", "concessions_0", "concessions_1", "pushes"}
    code, out, _ = run(capsys, "simulate", "--side", "d8,d6", "--side", "d10", "--n", "300", "--json")
    assert set(json.loads(out)["winner_frequencies"]) == {"0", "1", "tie"}
    code, _, err = run(capsys, "simulate", "--side", "d8", "--side", "d6", "--n", "0")
    assert code == 2 and "--n" in err


def test_table_json(capsys):
    code, out, _ = run(capsys, "table", "--player-dice", "1", "--format", "json", "--no-cache")
    table = json.loads(out)["tables"][0]
    assert code == 0 and table["columns"] == ["3d4", "3d6", "3d8", "3d10", "3d12"]
    assert table["rows"] == ["d12", "d10", "d8", "d6", "d4"]
    assert {metric["name"] for metric in table["metrics"]} == {"P(win)", "P(tie)", "E[success dice]"}


def test_help_explains(capsys):
    code, out, _ = run(capsys, "contest", "--help")
    assert code == 0 and "--target" in out and "success_sizes" in out
