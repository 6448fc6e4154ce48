"""Reading samples and counts, and the `exactdice validate` command's exit codes and JSON."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction

from dataclasses import dataclass

import pytest

from exactdice import systems
from exactdice.cli import main as cli_main
from exactdice.errors import InputError
from exactdice.systems import Parameter, rules_values, setup_values
from exactdice.validation import goodness_of_fit, parse_counts, read_sample_column


def run_cli(argv, capsys):
    """Run ``exactdice ARGV`` in-process; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_:
        cli_main.main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def write(tmp_path, text, name="samples.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ----- read_sample_column ---------------------------------------------------------------------


def test_read_sample_column_counts_one_column(tmp_path):
    path = write(tmp_path, "trial,outcome,rounds\n0,win,3\n1,loss,2\n2,win,5\n\n3,tie,1\n")
    assert read_sample_column(path, "outcome") == Counter(win=2, loss=1, tie=1)
    assert read_sample_column(path, "rounds") == Counter({"3": 1, "2": 1, "5": 1, "1": 1})


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is empty"),
        ("trial,result\n0,win\n", "has no column 'outcome' \\(its columns: trial, result\\)"),
        ("trial,outcome\n", "has a header but no sample rows"),
        ("trial,outcome\n0,win\n1\n", "line 3: 1 fields, but the header has 2"),
        ("trial,outcome\n0,win\n1,win,extra\n", "line 3: 3 fields"),
        ("trial,outcome\n0,\n", "line 2: empty value in column 'outcome'"),
    ],
)
def test_read_sample_column_names_the_file_and_what_is_wrong(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=f"^samples: .*{message}") as error:
        read_sample_column(path, "outcome")
    assert error.value.field == "samples"
    if "line" in message or "column" in message or "empty" in message:
        assert "samples.csv" in str(error.value)


def test_read_sample_column_refuses_missing_files_and_binary_data(tmp_path):
    with pytest.raises(InputError, match="samples: no such file: .*nothere.csv"):
        read_sample_column(tmp_path / "nothere.csv", "outcome")
    with pytest.raises(InputError, match="is a directory"):
        read_sample_column(tmp_path, "outcome")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"outcome\n\xff\xfe\x00win\n")
    with pytest.raises(InputError, match="not a UTF-8 text file"):
        read_sample_column(binary, "outcome")


# ----- parse_counts ---------------------------------------------------------------------------


def test_parse_counts_reads_outcome_equals_count():
    assert parse_counts("win=412,loss=371,tie=217") == {"win": 412, "loss": 371, "tie": 217}
    assert parse_counts("success-with-condition=3, failure = 0") == {"success-with-condition": 3, "failure": 0}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("win412", "'win412' is not OUTCOME=COUNT"),
        ("=5", "is not OUTCOME=COUNT"),
        ("win=4.5", "must be a whole number >= 0, got '4.5'"),
        ("win=-3", "must be a whole number >= 0, got '-3'"),
        ("win=", "must be a whole number"),
        ("win=1,win=2", "'win' is given twice"),
    ],
)
def test_parse_counts_refuses_malformed_text(text, message):
    with pytest.raises(InputError, match=f"^counts: .*{message}"):
        parse_counts(text)


# ----- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Coin:
    """A toy system: a coin with --heads-in-six and --sides setup parameters."""

    name: str = "coin"
    summary: str = "A coin that shows heads on some of six faces."
    rules_type: type = dict
    parameters: tuple = (
        Parameter("heads_in_six", int, 3, "Faces of six showing heads."),
        Parameter("sides", int, 2, "2, or 3 with an edge."),
    )
    variants = {}

    def setup(self, values):
        return setup_values(self, values)

    def rules(self, values):
        return rules_values(self, values)

    def exact(self, setup, rules):
        heads_in_six, sides = setup["heads_in_six"], setup["sides"]
        if not 0 <= heads_in_six <= 6:
            raise InputError("heads_in_six", f"must be 0..6, got {heads_in_six}")
        distribution = {"heads": Fraction(heads_in_six, 6), "tails": 1 - Fraction(heads_in_six, 6)}
        if sides == 3:
            distribution = {key: value / 2 for key, value in distribution.items()}
            distribution["edge"] = Fraction(1, 2)
        return distribution

    def simulate(self, setup, rules, n, seed):
        law = self.exact(setup, rules)
        rng = random.Random(seed)
        return {"side": rng.choices(list(law), weights=[float(p) for p in law.values()], k=n)}

    def outcome_column(self, setup):
        return "side"

    def table_sets(self):
        return []


@pytest.fixture
def with_coin(monkeypatch):
    monkeypatch.setitem(systems.SYSTEMS, "coin", systems.RegistryEntry(Coin(), Coin.summary))
    monkeypatch.delitem(systems._LOADED, "coin", raising=False)
    yield
    systems._LOADED.pop("coin", None)


def test_the_coin_simulator_fits_its_exact_law():
    coin = Coin()
    setup, rules = coin.setup({"sides": 3}), coin.rules({})
    counts = Counter(coin.simulate(setup, rules, 3000, seed=4)["side"])
    assert goodness_of_fit(coin.exact(setup, rules), counts).fits


def test_exit_0_when_the_samples_fit(with_coin, tmp_path, capsys):
    path = write(tmp_path, "side\n" + "heads\n" * 48 + "tails\n" * 52)
    code, out, err = run_cli(["validate", "coin", "--samples", path], capsys)
    assert code == 0, err
    assert "fits: no outcome deviates more than chance allows" in out
    assert "heads" in out and "50 % (1/2)" in out


def test_exit_1_and_the_outcome_at_fault_when_they_do_not(with_coin, capsys):
    code, out, _ = run_cli(["validate", "coin", "--counts", "heads=70,tails=30"], capsys)
    assert code == 1
    assert "does not fit: 'heads' is 4.0 standard errors above the exact value" in out


def test_setup_options_reach_the_exact_model(with_coin, capsys):
    counts = ["--counts", "heads=70,tails=30"]
    assert run_cli(["validate", "coin", *counts, "--heads-in-six", "4"], capsys)[0] == 0
    code, out, _ = run_cli(
        ["validate", "coin", "--counts", "heads=25,tails=25,edge=50", "--sides", "3", "--json"], capsys
    )
    assert code == 0
    assert json.loads(out)["outcomes"]["edge"]["p"] == "1/2"


def test_json_output_keys(with_coin, capsys):
    code, out, _ = run_cli(["validate", "coin", "--counts", "heads=70,tails=30", "--json"], capsys)
    assert code == 1
    payload = json.loads(out)
    assert {"p_value", "verdict", "fits", "test", "n", "outcomes", "setup", "system"} <= set(payload)
    assert payload["fits"] is False and payload["n"] == 100
    assert payload["setup"] == {"heads_in_six": 3, "sides": 2}
    assert set(payload["outcomes"]["heads"]) >= {"observed", "expected", "p", "z"}
    assert payload["outcomes"]["heads"]["observed"] == 70
    assert payload["outcomes"]["heads"]["z"] == pytest.approx(4.0)


def test_alpha_option_changes_the_verdict(with_coin, capsys):
    counts = ["--counts", "heads=60,tails=40"]  # p = 0.057
    assert run_cli(["validate", "coin", *counts], capsys)[0] == 0
    assert run_cli(["validate", "coin", *counts, "--alpha", "0.1"], capsys)[0] == 1


def test_column_option_reads_another_column(with_coin, tmp_path, capsys):
    path = write(tmp_path, "trial,face\n" + "0,heads\n" * 50 + "1,tails\n" * 50)
    code, _, err = run_cli(["validate", "coin", "--samples", path], capsys)
    assert code == 2 and "has no column 'side'" in err
    assert run_cli(["validate", "coin", "--samples", path, "--column", "face"], capsys)[0] == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "--samples: give exactly one of --samples FILE.csv or --counts"),
        (["--counts", "heads=1", "--samples", "x.csv"], "--samples: give exactly one of"),
        (["--counts", "heads=1,edge=3"], "--counts: outcome 'edge' is not an outcome"),
        (["--counts", "heads:3"], "--counts: 'heads:3' is not OUTCOME=COUNT"),
        (["--counts", "heads=0,tails=0"], "--counts: no samples"),
        (["--counts", "heads=1", "--alpha", "1.5"], "--alpha: must be strictly between 0 and 1"),
        (["--counts", "heads=1", "--heads-in-six", "9"], "--heads-in-six: must be 0..6"),
        (["--samples", "/nonexistent/samples.csv"], "--samples: no such file"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_the_field(with_coin, capsys, argv, message):
    code, out, err = run_cli(["validate", "coin", *argv], capsys)
    assert code == 2
    assert err.startswith(f"exactdice: error: {message}")
    assert "Traceback" not in err and out == ""


def test_the_group_help_lists_the_systems(capsys):
    code, out, _ = run_cli(["validate", "--help"], capsys)
    assert code == 0
    assert "Exit code 0" in out
    for name in systems.system_names():
        assert name in out


def test_group_help_imports_no_system_package_nor_scipy():
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from exactdice.cli.main import main\n"
        "try:\n    main(['validate', '--help'])\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in ('exactdice.karbon', 'exactdice.karst', 'exactdice.chronica',"
        " 'exactdice.contingency', 'scipy') if m in sys.modules]\n"
        "print('LOADED', loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "LOADED []" in result.stdout, result.stdout + result.stderr
