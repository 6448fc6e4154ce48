"""`exactdice validate <system>` on the real systems: simulate -> CSV -> validate, exit codes."""

from __future__ import annotations

import json

import pytest

from exactdice.cli import main as cli_main


def run_cli(argv, capsys):
    """Run ``exactdice ARGV`` in-process; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_:
        cli_main.main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def test_contingency_simulated_csv_fits_and_a_different_knob_does_not(tmp_path, capsys):
    pytest.importorskip("exactdice.contingency.simulate")
    path = str(tmp_path / "checks.csv")
    setup = ["--dice", "d4,d6,d8", "--difficulty", "5", "--luck", "always"]
    code, _, err = run_cli(["contingency", "simulate", *setup, "--n", "4000", "--seed", "3", "--out", path], capsys)
    assert code == 0, err
    code, out, _ = run_cli(["validate", "contingency", *setup, "--samples", path], capsys)
    assert code == 0 and "fits:" in out
    code, out, _ = run_cli(
        ["validate", "contingency", "--dice", "d4,d6,d8", "--difficulty", "5", "--samples", path], capsys
    )  # luck never: far fewer successes
    assert code == 1 and "does not fit: 'success' is" in out


def test_contingency_needs_a_difficulty(capsys):
    pytest.importorskip("exactdice.contingency")
    code, _, err = run_cli(["validate", "contingency", "--counts", "success=1"], capsys)
    assert code == 2 and err.startswith("exactdice: error: --difficulty:")


def test_karst_death_counts_and_json(capsys):
    pytest.importorskip("exactdice.karst")
    code, out, _ = run_cli(
        ["validate", "karst", "death", "--negative-health", "2", "--counts", "death=748,stable=252", "--json"], capsys
    )
    assert code == 0
    payload = json.loads(out)
    assert payload["outcomes"]["death"]["p"] == "3/4" and payload["fits"] is True
    assert payload["column"] == "outcome" and payload["test"] == "exact binomial"
    code, _, _ = run_cli(
        ["validate", "karst", "death", "--negative-health", "2", "--aid", "2", "--counts", "death=748,stable=252"],
        capsys,
    )
    assert code == 1  # aid makes stabilising likelier: these counts no longer fit


def test_karst_attack_chain_reads_the_negative_health_column(tmp_path, capsys):
    pytest.importorskip("exactdice.karst.simulate")
    path = str(tmp_path / "attack.csv")
    setup = ["--modifier", "3", "--defense", "12", "--damage", "2d4", "--health", "6"]
    code, _, err = run_cli(["karst", "simulate", "attack", *setup, "--n", "3000", "--seed", "4", "--out", path], capsys)
    assert code == 0, err
    code, out, _ = run_cli(["validate", "karst", "attack", *setup, "--samples", path, "--json"], capsys)
    assert code == 0
    assert json.loads(out)["column"] == "negative_health"
    code, _, err = run_cli(["validate", "karst", "attack", *setup, "--samples", path, "--then-death"], capsys)
    assert code == 2 and "--samples:" in err  # 'outcome' holds no death/stable without it


def test_karst_order_and_unknown_roll(capsys):
    pytest.importorskip("exactdice.karst")
    code, out, _ = run_cli(
        [
            "validate",
            "karst",
            "order",
            "--modifier",
            "0",
            "--modifier",
            "0",
            "--combatant",
            "2",
            "--counts",
            "1=580,2=420",
            "--json",
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["column"] == "place_2"
    code, _, err = run_cli(["validate", "karst", "parley"], capsys)
    assert code == 2 and "No such command 'parley'" in err


def test_chronica_counts(capsys):
    pytest.importorskip("exactdice.chronica")
    side = ["--side", "d6", "--side", "d6"]  # P(0) = P(1) = 5/12, P(tie) = 1/6
    assert run_cli(["validate", "chronica", *side, "--counts", "0=420,1=410,tie=170"], capsys)[0] == 0
    code, out, _ = run_cli(["validate", "chronica", *side, "--counts", "0=420,1=410,tie=100"], capsys)
    assert code == 1 and "'tie' is" in out and "below" in out
    code, _, err = run_cli(["validate", "chronica", "--side", "d6", "--counts", "0=1"], capsys)
    assert code == 2 and err.startswith("exactdice: error: --side:")


def test_karbon_counts(capsys):
    pytest.importorskip("exactdice.karbon.simulate")
    setup = [
        "--player-dice",
        "d6",
        "--narrator-dice",
        "d10",
        "-w",
        "1",
        "--pool",
        "none",
        "--reserve",
        "none",
    ]  # P(win) = 0.659757...
    code, out, err = run_cli(["validate", "karbon", *setup, "--counts", "win=660,loss=340", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["outcomes"]["win"]["observed"] == 660
    code, out, _ = run_cli(["validate", "karbon", *setup, "--counts", "win=600,loss=400"], capsys)
    assert code == 1 and "does not fit" in out
    code, _, err = run_cli(["validate", "karbon", *setup, "--counts", "won=600"], capsys)
    assert code == 2 and "--counts: outcome 'won'" in err


SOLVES = {  # system -> (module, solver the exact laws come from, simulate flags, validate command)
    "chronica": ("exactdice.chronica.contest", "solve_contest", ["--side", "d6,d8", "--side", "2d6"], ["chronica"]),
    "contingency": (
        "exactdice.contingency.check",
        "solve_check",
        ["--dice", "d4,d6,d8", "--difficulty", "5"],
        ["contingency"],
    ),
    "karst death": ("exactdice.karst.expected", "solve_death", ["--negative-health", "2"], ["karst", "death"]),
    "karst attack": (
        "exactdice.karst.expected",
        "solve_knockout",
        ["--modifier", "3", "--defense", "12", "--damage", "2d4", "--health", "6"],
        ["karst", "attack"],
    ),
}


@pytest.mark.parametrize("name", list(SOLVES))
def test_validating_a_samples_file_solves_the_setup_once(tmp_path, capsys, monkeypatch, name):
    import importlib

    module_name, solver, setup, command = SOLVES[name]
    path = str(tmp_path / "samples.csv")
    simulate = ["simulate", *command[1:]] if command[0] == "karst" else ["simulate"]
    code, _, err = run_cli([command[0], *simulate, *setup, "--n", "500", "--seed", "5", "--out", path], capsys)
    assert code == 0, err
    module = importlib.import_module(module_name)
    solves = []
    real = getattr(module, solver)

    def counted(*arguments, **keywords):
        solves.append(arguments)
        return real(*arguments, **keywords)

    monkeypatch.setattr(module, solver, counted)
    code, out, err = run_cli(["validate", *command, *setup, "--samples", path, "--json"], capsys)
    assert code in (0, 1), err
    assert len(json.loads(out)["columns"]) > 1  # the outcome and further columns were all tested
    assert len(solves) == 1
