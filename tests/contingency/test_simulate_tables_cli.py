"""Contingency simulator against the exact model, the difficulty tables, and the CLI."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from fractions import Fraction

import pytest
from scipy.stats import chisquare

from exactdice.cli.main import main
from exactdice.contingency import Rules, expected_distribution, skill_check, solve_check
from exactdice.contingency.simulate import COLUMNS, simulate, simulate_rows
from exactdice.contingency.tables import difficulty_table, difficulty_tables, standard_pools

# chance that a correct model fails one of these tests by bad luck
ALPHA = 1e-4


def goodness_of_fit(observed: Counter, expected: dict, trials: int) -> float:
    categories = [c for c, p in expected.items() if p > 0]
    assert set(observed) <= set(categories), f"impossible categories seen: {set(observed) - set(categories)}"
    return chisquare([observed.get(c, 0) for c in categories], [float(expected[c]) * trials for c in categories]).pvalue


@pytest.mark.parametrize(
    "check, rules",
    [
        (skill_check("d6,d8,d10", difficulty=6), Rules()),
        (
            skill_check("d4,d8,d12", modifiers=[1, 0, -1], difficulty=6, advantage=1),
            Rules(luck="if-failing", luck_modifier=True, gm_omen="at-most-1"),
        ),
        (skill_check("d6,d6,d10", difficulty=9, disadvantage=1), Rules(luck="always", fail_by_one="refuse")),
    ],
)
def test_simulator_agrees_with_exact_model(check, rules):
    trials = 60_000
    arrays = simulate(check, rules, n=trials, seed=11)
    solution = solve_check(check, rules)
    assert goodness_of_fit(Counter(arrays["outcome"]), expected_distribution(check, rules), trials) > ALPHA
    omens = solution.player_omens.probabilities()
    assert goodness_of_fit(Counter(int(v) for v in arrays["player_omens"]), omens, trials) > ALPHA
    sizes = solution.result_die.probabilities()
    assert goodness_of_fit(Counter(int(v) for v in arrays["result_die"]), sizes, trials) > ALPHA


def test_simulator_is_seeded_and_rows_have_the_documented_columns():
    check = skill_check("d6,d8,d10", difficulty=5)
    first = simulate_rows(check, Rules(luck="always"), n=50, seed=3)
    assert first == simulate_rows(check, Rules(luck="always"), n=50, seed=3)
    assert first != simulate_rows(check, Rules(luck="always"), n=50, seed=4)
    assert tuple(first[0]) == COLUMNS
    assert all(row["luck_face"] != "" for row in first)


def test_difficulty_tables():
    grids = difficulty_tables()
    assert [len(grid.rows) for grid in grids] == [35, 35, 35]
    normal, advantage, disadvantage = grids
    row = normal.rows.index("d6,d8,d10")
    solution = solve_check(skill_check([6, 8, 10], difficulty=7))
    assert normal.cell("P(success)", row, 6) == solution.outcome_probabilities()["success"]
    assert (
        normal.cell("P(success or success-with-condition)", row, 6) == 1 - solution.outcome_probabilities()["failure"]
    )
    assert normal.cell("P(success)", normal.rows.index("d6,d6,d6"), 3) == Fraction(1, 2)
    for i in range(35):
        for j in range(11):
            assert (
                disadvantage.cell("P(success)", i, j)
                <= normal.cell("P(success)", i, j)
                <= advantage.cell("P(success)", i, j)
            )
    assert len(standard_pools()) == 35
    assert normal.columns[0] == "1 Automatic" and normal.columns[-1] == "11 Near Impossible"


def test_difficulty_table_with_luck_if_failing_is_per_difficulty():
    grid = difficulty_table("normal", Rules(luck="if-failing"))
    row = grid.rows.index("d4,d4,d4")
    for level in range(1, 12):
        expected = solve_check(
            skill_check([4, 4, 4], difficulty=level), Rules(luck="if-failing")
        ).outcome_probabilities()["success"]
        assert grid.cell("P(success)", row, level - 1) == expected


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def test_cli_check_json(capsys):
    code, out, _ = run(["contingency", "check", "--dice", "d6,d6,d6", "--difficulty", "4", "--json"], capsys)
    assert code == 0
    payload = json.loads(out)
    for key in (
        "outcome",
        "total",
        "player_omens",
        "gm_omens",
        "result_die",
        "expected_player_omens",
        "expected_gm_omens",
        "joint",
        "p_at_least",
        "p_at_least_with_condition",
    ):
        assert key in payload
    assert payload["outcome"]["success"] == "1/2"
    assert payload["total"]["1"] == "2/27"
    assert payload["result_die"] == {"d6": "1"}
    assert set(payload["joint"][0]) == {"outcome", "total", "player_omens", "gm_omens", "p"}
    assert sum(Fraction(entry["p"]) for entry in payload["joint"]) == 1
    assert payload["p_at_least"]["4"] == "1/2"


def test_cli_check_text_and_knobs(capsys):
    code, out, _ = run(
        [
            "contingency",
            "check",
            "--dice",
            "d4,d6,d8",
            "--modifiers",
            "1,0,-1",
            "--difficulty",
            "6",
            "--luck",
            "if-failing",
            "--fail-by-one",
            "refuse",
            "--luck-modifier",
            "--gm-omen",
            "at-most-1",
            "--advantage",
            "1",
        ],
        capsys,
    )
    assert code == 0
    assert re.search(r"P\(success\) +[\d.]+ %", out) and "luck=if-failing" in out and "fail_by_one=refuse" in out
    code, out, _ = run(["contingency", "check", "--dice", "d6,d6,d6,d6,d6", "--any-size", "--json"], capsys)
    assert code == 0 and "outcome" not in json.loads(out)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dice", "d1,d6,d6"], "--dice: d1 is not allowed"),
        (["--dice", "d6,d6"], "no middle die"),
        (["--dice", "d6,x6,d6"], "unknown die"),
        (["--luck", "if-failing"], "--luck: if-failing needs --difficulty"),
        (["--modifiers", "1,2"], "one modifier per die"),
        (["--modifiers", "a,b,c"], "--modifiers"),
    ],
)
def test_cli_bad_input(argv, message, capsys):
    code, _, err = run(["contingency", "check", *argv], capsys)
    assert code == 2
    assert err.startswith("exactdice: error: ") and message in err


def test_cli_simulate(tmp_path, capsys):
    target = tmp_path / "samples.csv"
    code, _, _ = run(
        ["contingency", "simulate", "--difficulty", "5", "--n", "200", "--seed", "3", "--out", str(target)], capsys
    )
    assert code == 0
    with open(target, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 200 and tuple(rows[0]) == COLUMNS
    code, out, _ = run(["contingency", "simulate", "--difficulty", "5", "--n", "1000"], capsys)
    assert code == 0 and "success" in out


def test_every_difficulty_table_cell_equals_a_single_check():
    """Each cell against its own solve at that difficulty (the table reads a per-level
    lookup; one level past the highest total still allows success with a condition)."""
    for grid, (advantage, disadvantage) in zip(difficulty_tables(), ((0, 0), (1, 0), (0, 1))):
        for i, pool in enumerate(standard_pools()):
            for j, level in enumerate(range(1, 12)):
                outcomes = solve_check(
                    skill_check(list(pool), advantage=advantage, disadvantage=disadvantage, difficulty=level)
                ).outcome_probabilities()
                assert grid.cell("P(success)", i, j) == outcomes["success"], (pool, level)
                assert grid.cell("P(success or success-with-condition)", i, j) == 1 - outcomes["failure"], (pool, level)
