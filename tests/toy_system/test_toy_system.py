"""A fifth (toy) system, registered at run time: the registry is all the layers above need.

`toy_die.py` beside this file is the whole system (one die against a target). Registered,
it is reachable from ``exactdice toy-die exact|simulate|table`` and ``exactdice validate
toy-die`` without any change to exactdice's own files; the tests check each against a
brute-force count of the die's faces.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from exactdice import systems
from exactdice.cli import main as cli_main


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import toy_die

    systems.register("toy-die", toy_die.SYSTEM)
    yield toy_die
    systems.unregister("toy-die")


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main.main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def brute_force(sides, target, one_fails=False):
    wins = sum(1 for face in range(1, sides + 1) if face >= target and not (one_fails and face == 1))
    return Fraction(wins, sides)


def test_the_toy_fits_the_protocol_and_is_listed(toy, capsys):
    assert isinstance(toy.SYSTEM, systems.RulesSystem)
    assert systems.get_system("toy-die") is toy.SYSTEM
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0 and "toy-die" in out
    code, out, _ = run_cli(["validate", "--help"], capsys)
    assert code == 0 and "toy-die" in out


@pytest.mark.parametrize(
    "sides, target, one_fails", [(6, 4, False), (6, 1, True), (8, 9, False), (1, 1, False), (20, 15, True)]
)
def test_exact_from_the_cli_matches_brute_force(toy, capsys, sides, target, one_fails):
    argv = ["toy-die", "exact", "--sides", str(sides), "--target", str(target), "--json"]
    code, out, err = run_cli(argv + (["--one-fails"] if one_fails else []), capsys)
    assert code == 0, err
    probabilities = json.loads(out)["probabilities"]
    assert Fraction(probabilities["success"]) == brute_force(sides, target, one_fails)
    assert sum(map(Fraction, probabilities.values())) == 1


def test_simulate_then_validate_fits_and_a_wrong_target_does_not(toy, tmp_path, capsys):
    path = str(tmp_path / "rolls.csv")
    code, _, err = run_cli(
        ["toy-die", "simulate", "--sides", "6", "--target", "4", "--n", "3000", "--seed", "5", "--out", path], capsys
    )
    assert code == 0, err
    code, out, _ = run_cli(["validate", "toy-die", "--sides", "6", "--target", "4", "--samples", path], capsys)
    assert code == 0 and "fits:" in out
    code, out, _ = run_cli(["validate", "toy-die", "--sides", "6", "--target", "3", "--samples", path], capsys)
    assert code == 1 and "does not fit" in out


def test_the_table_holds_the_brute_force_values(toy, capsys):
    code, out, err = run_cli(["toy-die", "table", "--format", "json", "--no-cache", "--workers", "1"], capsys)
    assert code == 0, err
    table = json.loads(out)["tables"][0]
    metric = table["metrics"][0]
    assert table["rows"][0] == "d4" and table["columns"][0] == "1"
    for row, sides in enumerate((4, 6, 8, 10, 12)):
        for column, target in enumerate(range(1, 13)):
            assert Fraction(metric["exact"][row][column]) == brute_force(sides, target)


def test_bad_input_names_the_flag(toy, capsys):
    code, out, err = run_cli(["toy-die", "exact", "--sides", "0", "--target", "2"], capsys)
    assert code == 2 and err == "exactdice: error: --sides: must be >= 1, got 0\n" and out == ""
