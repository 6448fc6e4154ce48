"""`validate` checks every column with an exact law, and an off-by-one in one of them fails.

Samples come from the project's simulators with their default seed (7); every column is tested at
alpha / k (Bonferroni, alpha = 0.01). The true samples must fit, and the same samples with
one column shifted by one must not (a shift by one moves tens of standard errors at these
sample sizes, so the failures are not near the threshold).
"""

import csv
import json

import pytest

from exactdice.cli.main import cli

N = "20000"


def run(args, capsys):
    try:
        code = cli.main(args=args, prog_name="exactdice", standalone_mode=False)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code or 0, captured.out


def shifted(path, column, out_path, by=1):
    """A copy of the CSV with the integer ``column`` shifted by ``by`` (an off-by-one)."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row[column] != "":
            row[column] = str(int(row[column]) + by)
    with open(out_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return str(out_path)


CASES = [
    # (simulate args, validate args, columns that must be tested, an integer column to shift)
    (
        ["karst", "simulate", "death", "--negative-health", "2"],
        ["validate", "karst", "death", "--negative-health", "2"],
        {"outcome", "rounds"},
        "rounds",
    ),
    (
        ["karst", "simulate", "attack", "--defense", "12", "--health", "8"],
        ["validate", "karst", "attack", "--defense", "12", "--health", "8"],
        {"negative_health", "rounds"},
        "rounds",
    ),
    (
        ["karst", "simulate", "action", "--modifier", "2"],
        ["validate", "karst", "action", "--modifier", "2"],
        {"outcome", "natural", "total"},
        "total",
    ),
    (
        ["karst", "simulate", "order", "--modifier", "2", "--modifier", "0", "--two-actions", "1"],
        ["validate", "karst", "order", "--modifier", "2", "--modifier", "0", "--two-actions", "1"],
        {"place_1", "place_2", "score_1", "score_2"},
        "score_2",
    ),
    (
        ["chronica", "simulate", "--side", "d8,d8,d6", "--side", "d10,d6"],
        ["validate", "chronica", "--side", "d8,d8,d6", "--side", "d10,d6"],
        {"winner", "successes", "success_sizes", "concessions_0", "concessions_1"},
        "successes",
    ),
    (
        ["karbon", "simulate", "-a", "2", "-c", "2", "-w", "2", "-p", "1"],
        ["validate", "karbon", "-a", "2", "-c", "2", "-w", "2", "-p", "1"],
        {"outcome", "rounds", "breaks", "glitches", "injuries", "conditions"},
        "rounds",
    ),
    (
        ["karbon", "simulate", "-a", "1", "-c", "1", "-w", "1", "--narrator-policy", "random"],
        ["validate", "karbon", "-a", "1", "-c", "1", "-w", "1", "--narrator-policy", "random"],
        {"outcome", "rounds", "breaks", "glitches", "injuries", "conditions"},
        "glitches",
    ),
    (
        ["contingency", "simulate", "--difficulty", "6", "--luck", "if-failing"],
        ["validate", "contingency", "--difficulty", "6", "--luck", "if-failing"],
        {"outcome", "total", "result_die", "player_omens", "gm_omens"},
        "gm_omens",
    ),
]


@pytest.mark.parametrize(
    "simulate,validate,columns,shift", CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_every_column_is_tested_and_an_off_by_one_fails(simulate, validate, columns, shift, tmp_path, capsys):
    samples = str(tmp_path / "samples.csv")
    code, _ = run(simulate + ["--n", N, "--seed", "7", "--out", samples], capsys)
    assert code == 0
    code, out = run(validate + ["--samples", samples, "--json"], capsys)
    report = json.loads(out)
    assert columns <= set(report["columns"]), out
    assert code == 0 and report["fits"], out
    for name, column in report["columns"].items():
        assert column["fits"], name
        assert column["alpha"] == pytest.approx(0.01 / len(report["columns"]))
    broken = shifted(samples, shift, tmp_path / "off_by_one.csv")
    code, out = run(validate + ["--samples", broken, "--json"], capsys)
    report = json.loads(out)
    assert code == 1 and not report["fits"]
    assert not report["columns"][shift]["fits"]
    assert [name for name, column in report["columns"].items() if not column["fits"]] == [shift]


def test_one_column_alone_with_column(tmp_path, capsys):
    samples = str(tmp_path / "death.csv")
    run(["karst", "simulate", "death", "--negative-health", "1", "--n", "5000", "--out", samples], capsys)
    code, out = run(
        ["validate", "karst", "death", "--negative-health", "1", "--samples", samples, "--column", "rounds", "--json"],
        capsys,
    )
    report = json.loads(out)
    assert code == 0 and list(report["columns"]) == ["rounds"]
    assert report["columns"]["rounds"]["alpha"] == 0.01


def test_the_rounds_tail_holds_the_exact_rest():
    from fractions import Fraction

    from exactdice.karst.death import solve_death
    from exactdice.karst.expected import column_distributions

    rounds = column_distributions("death", negative_health=3)["rounds"]
    assert sum(rounds.probabilities.values()) == 1
    tail = [key for key in rounds.probabilities if key.endswith("+")]
    assert len(tail) == 1 and rounds.probabilities[tail[0]] < Fraction(1, 10**6)
    exact = solve_death(3).rounds.probabilities
    assert all(rounds.probabilities[str(r)] == exact[r] for r in range(rounds.tail_from))


@pytest.mark.parametrize("alpha", ["2", "1.5", "1"])
def test_alpha_is_checked_as_typed_before_it_is_shared_among_the_columns(alpha, tmp_path, capsys):
    # with six columns, alpha 2 once passed as 2/6 and 7 was reported as 7/6
    samples = str(tmp_path / "samples.csv")
    assert (
        run(
            ["karbon", "simulate", "-a", "1", "-c", "1", "-w", "1", "--n", "200", "--seed", "7", "--out", samples],
            capsys,
        )[0]
        == 0
    )
    from exactdice.cli import main as cli_main

    with pytest.raises(SystemExit) as exit_:
        cli_main.main(["validate", "karbon", "-a", "1", "-c", "1", "-w", "1", "--samples", samples, "--alpha", alpha])
    assert exit_.value.code == 2
    assert f"--alpha: must be strictly between 0 and 1, got {float(alpha):g}\n" in capsys.readouterr().err
