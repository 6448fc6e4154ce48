"""Karst simulators against the exact model, the tables, and the CLI."""

from __future__ import annotations

import csv
import json
from collections import Counter
from fractions import Fraction

import pytest
from scipy.stats import chisquare

from exactdice.cli.main import main
from exactdice.karst import Rules, outcome_column, expected_distribution, solve_death
from exactdice.karst.simulate import COLUMNS, simulate_rows, simulate
from exactdice.karst.tables import action_table, attack_table, death_table, karst_tables

# chance that a correct model fails one of these tests by bad luck
ALPHA = 1e-4


@pytest.mark.parametrize(
    "kind, rules, setup",
    [
        ("action", Rules(), {"modifier": 2}),
        ("death", Rules(), {"negative_health": 2}),
        ("death", Rules(aid=2), {"negative_health": 1, "modifier": -1}),
        ("attack", Rules(), {"modifier": 3, "defense": 14, "damage": "d6"}),
        ("attack", Rules(), {"modifier": 3, "defense": 14, "damage": "2d4+1", "health": 9, "unaware": True}),
        ("attack", Rules(aid=1), {"modifier": 5, "defense": 15, "damage": "d4-1", "health": 6, "then_death": True}),
        ("order", Rules(), {"modifiers": [2, 0, -1], "two_actions": [1], "combatant": 1}),
        ("order", Rules(), {"modifiers": [1, 0, 0], "surprised": [3], "combatant": 2}),
    ],
)
def test_simulator_agrees_with_exact_model(kind, rules, setup):
    trials = 40_000
    sim_setup = {k: v for k, v in setup.items() if k != "combatant"}
    arrays = simulate(kind, n=trials, seed=5, rules=rules, **sim_setup)
    column = outcome_column(kind, **setup)
    observed = Counter(str(value) for value in arrays[column])
    expected = expected_distribution(kind, rules=rules, **setup)
    categories = [c for c, p in expected.items() if p > 0]
    assert set(observed) <= set(categories)
    pvalue = chisquare(
        [observed.get(c, 0) for c in categories], [float(expected[c]) * trials for c in categories]
    ).pvalue
    assert pvalue > ALPHA


def test_death_simulator_rounds_agree():
    trials = 40_000
    arrays = simulate("death", n=trials, seed=9, rules=Rules(aid=1), negative_health=0)
    exact = solve_death(0, rules=Rules(aid=1)).rounds.probabilities
    observed = Counter(int(r) for r in arrays["rounds"])
    kept = [r for r in exact if exact[r] * trials >= 5]  # pool the sparse tail into one cell
    tail = 1 - sum(exact[r] for r in kept)
    counts = [observed.get(r, 0) for r in kept] + [trials - sum(observed.get(r, 0) for r in kept)]
    expected = [float(exact[r]) * trials for r in kept] + [float(tail) * trials]
    assert chisquare(counts, expected).pvalue > ALPHA


def test_simulations_are_seeded_with_documented_columns():
    rows = simulate_rows("attack", n=20, seed=2, modifier=0, defense=12, damage="d6", health=5)
    assert rows == simulate_rows("attack", n=20, seed=2, modifier=0, defense=12, damage="d6", health=5)
    assert set(rows[0]) == set(COLUMNS("attack", health=5))
    order_rows = simulate_rows("order", n=5, seed=2, modifiers=[0, 1], surprised=[2])
    assert set(order_rows[0]) == set(COLUMNS("order", combatants=2))
    assert all(row["place_2"] == "" for row in order_rows)


def test_tables():
    grids = karst_tables()
    assert len(grids) == 3
    action = action_table()
    assert action.rows[0] == "-5" and action.cell("P(success)", 10, 0) == Fraction(5, 6)
    attack = attack_table()
    assert attack.rows == [f"{m:+d}" for m in range(-2, 11)] and attack.columns == [str(d) for d in range(8, 21)]
    assert attack.cell("P(hit)", 12, 0) == Fraction(19, 20) and attack.cell("P(hit)", 0, 12) == Fraction(1, 20)
    death = death_table()
    assert [death.cell("P(death)", h, 0) for h in range(5)] == [Fraction(h + 1, h + 2) for h in range(5)]
    assert death.cell("P(death)", 0, 2) < death.cell("P(death)", 0, 1) < death.cell("P(death)", 0, 0)


def run(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def test_cli_json_keys(capsys):
    code, out, _ = run(["karst", "action", "--modifier", "2", "--json"], capsys)
    assert code == 0 and json.loads(out)["success"] == "1/2"
    code, out, _ = run(
        ["karst", "opposed", "--modifier", "6", "--vs", "0", "--opposed", "success-first", "--json"], capsys
    )
    assert json.loads(out)["second"] == "1/36" and {"first", "second", "neither"} <= set(json.loads(out))
    code, out, _ = run(["karst", "attack", "--modifier", "5", "--defense", "15", "--json"], capsys)
    assert json.loads(out)["hit"] == "11/20"
    code, out, _ = run(
        [
            "karst",
            "attack",
            "--modifier",
            "5",
            "--defense",
            "15",
            "--damage",
            "2d4+1",
            "--health",
            "10",
            "--unaware",
            "--then-death",
            "--json",
        ],
        capsys,
    )
    payload = json.loads(out)
    for key in ("hit", "rounds", "expected_rounds", "knockout", "death", "stable"):
        assert key in payload
    assert "rest" in payload["rounds"]
    assert set(payload["knockout"][0]) == {"rounds", "negative_health", "p"}
    assert Fraction(payload["death"]) + Fraction(payload["stable"]) == 1
    code, out, _ = run(["karst", "death", "--negative-health", "2", "--json"], capsys)
    payload = json.loads(out)
    assert (payload["death"], payload["stable"], payload["expected_rounds"]) == ("3/4", "1/4", "1/2")
    assert "rest" in payload["rounds"]
    code, out, _ = run(
        [
            "karst",
            "order",
            "--modifier",
            "2",
            "--modifier",
            "0",
            "--modifier",
            "-1",
            "--two-actions",
            "1",
            "--surprised",
            "3",
            "--json",
        ],
        capsys,
    )
    payload = json.loads(out)
    assert len(payload["places"]) == 3 and payload["places"][2] is None
    assert payload["before"][0][0] is None and payload["before"][2][0] == "0"


def test_cli_text(capsys):
    for argv in (
        ["karst", "death", "--negative-health", "1", "--aid", "1"],
        ["karst", "attack", "--defense", "12", "--health", "6"],
        ["karst", "order", "--modifier", "1", "--modifier", "0"],
        ["karst", "opposed", "--modifier", "1"],
    ):
        code, out, _ = run(argv, capsys)
        assert code == 0 and out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["death", "--negative-health", "-1"], "--negative-health"),
        (["attack", "--defense", "10", "--damage", "2q"], "--damage"),
        (["attack", "--defense", "10", "--health", "0"], "--health"),
        (["attack", "--defense", "10", "--then-death"], "--then-death"),
        (["order", "--modifier", "0", "--surprised", "2"], "--surprised"),
        (["death", "--negative-health", "1", "--aid", "-1"], "--aid"),
    ],
)
def test_cli_bad_input(argv, message, capsys):
    code, _, err = run(["karst", *argv], capsys)
    assert code == 2 and err.startswith("exactdice: error: ") and message in err


def test_cli_simulate(tmp_path, capsys):
    target = tmp_path / "death.csv"
    code, _, _ = run(
        ["karst", "simulate", "death", "--negative-health", "2", "--n", "300", "--out", str(target)], capsys
    )
    assert code == 0
    with open(target, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 300 and tuple(rows[0]) == COLUMNS("death")
    for argv in (
        ["action", "--modifier", "1"],
        ["attack", "--defense", "12", "--health", "4", "--then-death"],
        ["order", "--modifier", "0", "--modifier", "1"],
    ):
        code, out, _ = run(["karst", "simulate", *argv, "--n", "500"], capsys)
        assert code == 0 and "simulated 500" in out


def test_opposed_rolls_fit_their_own_comparison_and_not_the_other():
    """d6-3 against d6+2: a natural 6 of the first side is a success beating the second's
    failures under success-first, and never prevails by totals (the spec's two readings)."""
    from exactdice.validation import goodness_of_fit

    laws = {
        rule: expected_distribution("opposed", rules=Rules(opposed=rule), modifier=-3, versus=2)
        for rule in ("totals", "success-first")
    }
    assert laws["totals"]["first"] == 0 and laws["success-first"]["first"] == Fraction(1, 12)
    for rule, law in laws.items():
        assert sum(law.values()) == 1
        samples = simulate("opposed", n=20_000, seed=3, rules=Rules(opposed=rule), modifier=-3, versus=2)
        counts = Counter(samples["outcome"].tolist())
        assert goodness_of_fit(law, counts, alpha=0.001).fits
        other = laws["totals" if rule == "success-first" else "success-first"]
        assert not goodness_of_fit(other, counts, alpha=0.001).fits
    assert COLUMNS("opposed") == ("trial", "natural", "total", "versus_natural", "versus_total", "outcome")
