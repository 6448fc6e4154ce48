"""The ``table`` commands through the real entry point: formats, store flags, errors (exit 2)."""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction

import pytest

from exactdice.cli import main as main_module
from exactdice.cli.table_commands import contingency_table, table_output_options


@pytest.fixture
def run(monkeypatch, capsys, tmp_path):
    """Run ``exactdice contingency-table ...`` (the command mounted at the root) -> (code, out, err)."""
    monkeypatch.setitem(main_module.SUBCOMMANDS, "contingency-table", "exactdice.cli.table_commands:contingency_table")
    monkeypatch.setenv("EXACTDICE_STORE", str(tmp_path / "env-store.sqlite"))

    def invoke(*arguments):
        with pytest.raises(SystemExit) as exit_:
            main_module.main(["contingency-table", *arguments])
        captured = capsys.readouterr()
        return exit_.value.code, captured.out, captured.err

    return invoke


def test_default_is_markdown_on_stdout_through_the_env_store(run, tmp_path):
    code, out, _ = run("--kind", "normal")
    assert code == 0
    assert out.startswith("## Contingency skill checks: P(success), normal roll")
    d6_row = next(line for line in out.splitlines() if line.startswith("| d6,d6,d6 |"))
    # the spec's micro-example: P(middle >= 2) = 1 - 16/216, P(middle >= 4) = 1/2
    assert d6_row.split(" | ")[1:5] == ["100.0%", "92.6%", "74.1%", "50.0%"]
    assert (tmp_path / "env-store.sqlite").exists()


def test_json_output_has_exact_values_and_the_documented_keys(run):
    code, out, _ = run("--kind", "normal", "--kind", "disadvantage", "--format", "json", "--no-cache")
    assert code == 0
    document = json.loads(out)
    assert set(document) == {"format", "exactdice_version", "tables"}
    table = document["tables"][0]
    assert set(table) == {"title", "row_label", "column_label", "rows", "columns", "legend", "metrics"}
    assert [t["legend"]["roll"] for t in document["tables"]] == ["normal", "disadvantage"]
    assert [m["name"] for m in table["metrics"]][0] == "P(success)"
    d6_pool = table["rows"].index("d6,d6,d6")
    assert Fraction(table["metrics"][0]["exact"][d6_pool][3]) == Fraction(1, 2)
    assert table["metrics"][0]["decimal"][d6_pool][3] == "0.5000000000"


def test_format_from_output_suffix_and_store_flag(run, tmp_path):
    store = tmp_path / "flag-store.sqlite"
    for suffix in ("csv", "html", "pdf", "png", "md", "json"):
        target = tmp_path / f"c.{suffix}"
        code, _, err = run("--kind", "advantage", "--store", str(store), "-o", str(target))
        assert code == 0 and f"as {suffix} to" in err
        assert target.stat().st_size > 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())))
    assert len(rows) == 35 * 11 * 2
    assert (tmp_path / "c.pdf").read_bytes().startswith(b"%PDF-")
    assert store.exists() and not (tmp_path / "env-store.sqlite").exists()


def test_knobs_reach_the_table(run):
    _, plain, _ = run("--kind", "normal", "--format", "csv", "--no-cache")
    _, lucky, _ = run("--kind", "normal", "--format", "csv", "--no-cache", "--luck", "always")
    assert plain != lucky
    _, legend, _ = run("--kind", "normal", "--no-cache", "--luck", "always")
    assert "luck=always" in legend


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            ("--luck", "sometimes"),
            "Invalid value for '--luck': 'sometimes' is not one of 'never', 'always', 'if-failing'",
        ),
        (("--format", "pdf"), "exactdice: error: --output: pdf is a binary format: give -o FILE.pdf"),
        (("-o", "table.xlsx"), "exactdice: error: --format: cannot tell the format from the file name"),
    ],
)
def test_bad_input_exits_2_with_one_line(run, arguments, message):
    code, out, err = run("--kind", "normal", "--no-cache", *arguments)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_corrupt_store_exits_2_naming_the_path(run, tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"garbage" * 1000)
    code, _, err = run("--kind", "normal", "--store", str(broken))
    assert code == 2 and f"--store: results store '{broken}' is corrupt" in err
    code, _, _ = run("--kind", "normal", "--store", str(broken), "--no-cache")
    assert code == 0  # --no-cache bypasses the store entirely


def test_help_explains_formats_and_options():
    from click.testing import CliRunner

    result = CliRunner().invoke(contingency_table, ["--help"])
    assert result.exit_code == 0
    for text in ("--format", "--output", "--no-cache", "--store", "--workers", "35 pools", "exact"):
        assert text in result.output
    assert callable(table_output_options)
