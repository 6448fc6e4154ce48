"""``contingency design``, ``karst design`` and ``chronica design`` on the command line: the
table best first, the JSON's exact values, and bad input as one line naming the flag."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from exactdice.chronica import solve_contest
from exactdice.cli.main import main
from exactdice.karst.rolls import attack_hit


def run(arguments, capsys):
    try:
        main(arguments)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_contingency_design_text(capsys):
    code, out, _ = run(
        [
            "contingency",
            "design",
            "--target",
            "success=60%",
            "--dice",
            "d6,d8,d10",
            "--vary",
            "difficulty=1-11",
            "--best",
            "2",
        ],
        capsys,
    )
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "target: P(success) = 60.00 % over 11 setups (difficulty 1-11)"
    assert lines[2].split() == ["1", "4", "66.25", "%", "6.25", "%", "53/80"]
    assert lines[-1].startswith("solved exactly: 11 of 11 setups (100 %)")


def test_karst_design_json_is_exact(capsys):
    code, out, _ = run(
        [
            "karst",
            "design",
            "--target",
            "hit=0.5",
            "--vary",
            "modifier=-2-10,defense=8-20",
            "--tolerance",
            "0",
            "--json",
        ],
        capsys,
    )
    document = json.loads(out)
    assert code == 0 and document["grid_size"] == 169 and document["within_tolerance"]
    assert document["candidates"] and all(Fraction(c["distance"]) == 0 for c in document["candidates"])
    for candidate in document["candidates"]:
        assert Fraction(candidate["value"]) == attack_hit(**candidate["setup"]) == Fraction(1, 2)


def test_chronica_design_json_is_exact(capsys):
    code, out, _ = run(
        [
            "chronica",
            "design",
            "--target",
            "win=0.5",
            "--vary",
            "dice=1-3,size=d6,d8",
            "--against-dice",
            "2",
            "--against-size",
            "d8",
            "--best",
            "1",
            "--json",
        ],
        capsys,
    )
    document = json.loads(out)
    assert code == 0 and document["grid_size"] == 6
    best = document["candidates"][0]
    setup = best["setup"]
    assert Fraction(best["value"]) == solve_contest([((setup["size"],) * setup["dice"],), ((8, 8),)]).win[0]


@pytest.mark.parametrize(
    "arguments,flag",
    [
        (["contingency", "design", "--target", "glory=1", "--vary", "difficulty=1-3"], "--target"),
        (["contingency", "design", "--target", "success=0.5", "--vary", "difficulty=3-1"], "--vary"),
        (["contingency", "design", "--target", "success=0.5", "--vary", "dice=d6,d7x"], "--vary"),
        (["contingency", "design", "--target", "success=0.5", "--vary", "dice=standard"], "--difficulty"),
        (
            ["contingency", "design", "--target", "success=0.5", "--difficulty", "4", "--vary", "difficulty=1-3"],
            "--difficulty",
        ),
        (["contingency", "design", "--target", "success=0.5", "--vary", "difficulty=1-3", "--luck", "x"], "--luck"),
        (
            ["contingency", "design", "--target", "success=0.5", "--vary", "difficulty=1-3", "--tolerance", "x"],
            "--tolerance",
        ),
        (["karst", "design", "--target", "hit=2", "--vary", "defense=8-9"], "--target"),
        (["karst", "design", "--target", "hit=0.5", "--vary", "defense=8-9"], "--modifier"),
        (["karst", "design", "--target", "success=0.5", "--vary", "defense=8-9"], "--vary"),
        (["chronica", "design", "--target", "win=0.5", "--vary", "dice=1-2", "--size", "d6"], "--against-dice"),
        (
            [
                "chronica",
                "design",
                "--target",
                "win=0.5",
                "--vary",
                "dice=0-2",
                "--size",
                "d6",
                "--against-dice",
                "1",
                "--against-size",
                "d6",
            ],
            "--vary: dice=0",
        ),
        (["chronica", "design", "--target", "win=0.5", "--vary", "colour=1"], "--vary"),
        (["karst", "design", "--target", "hit=0.5", "--vary", "modifier=0-200,defense=0-100"], "--max-setups"),
        (
            ["karbon", "design", "--target", "win=0.5", "-a", "1", "--vary", "challenge=1-20", "--max-setups", "19"],
            "--max-setups",
        ),
        (
            ["karbon", "design", "--target", "win=0.5", "-a", "1", "--vary", "challenge=0-3"],
            "--vary: challenge=0: must be a whole number >= 1",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(arguments, flag, capsys):
    code, _, err = run(arguments, capsys)
    assert code == 2
    assert err.strip().count("\n") == 0 and flag in err, err
