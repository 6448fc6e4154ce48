"""`exactdice dist` from the outside: text, JSON, errors with exit code 2."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "exactdice.cli.main", *args], capture_output=True, text=True)


def test_json_for_3d6():
    result = run("dist", "3d6", "--json")
    assert result.returncode == 0
    payload = json.loads(result.stdout)
    assert payload["outcomes"]["3"] == "1/216"
    assert payload["outcomes"]["10"] == "1/8"
    assert payload["mean"] == "21/2"


def test_text_table_has_exact_and_cumulative_columns():
    result = run("dist", "2d6")
    assert result.returncode == 0
    assert "at least" in result.stdout and "1/6" in result.stdout


@pytest.mark.parametrize("expression,needle", [("3d6x2", "column 4"), ("2000d6", "limit")])
def test_bad_input_is_one_line_and_exit_2(expression, needle):
    result = run("dist", expression)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
