"""Rules sensitivity tables: the comparison itself, a knob that cannot matter moves nothing
(exactly), one that must matter moves what brute force says, and the committed tables are
what ``make_tables.py --sensitivity`` makes now."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from itertools import product
from pathlib import Path

import pytest

from exactdice.tables.sensitivity import THRESHOLD, compare_readings, rules_sensitivity_table, sensitivity_json

REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT = REPOSITORY / "scripts" / "make_tables.py"


def _effects(table) -> dict:
    return {(effect.reading, effect.metric): effect for effect in table.effects}


def test_a_move_of_exactly_one_point_does_not_count():
    default = {"a": {"P": Fraction(1, 2)}, "b": {"P": Fraction(1, 2)}, "c": {"P": Fraction(0)}}
    other = {
        "a": {"P": Fraction(1, 2) + THRESHOLD},
        "b": {"P": Fraction(1, 2) - THRESHOLD - Fraction(1, 10**9)},
        "c": {"P": Fraction(0)},
    }
    [effect] = compare_readings(default, {"x": other}, ("P",))
    assert (effect.cells, effect.moved, effect.largest_cell) == (3, 1, "b")
    assert effect.largest_move == -THRESHOLD - Fraction(1, 10**9)
    [still] = compare_readings(default, {"same": default}, ("P",))
    assert still.moved == 0 and still.largest_cell is None and still.largest_move == 0


def test_contingency_knobs_that_cannot_matter_move_nothing_and_fail_by_one_moves_the_condition():
    from exactdice.contingency.sensitivity import rules_sensitivity

    effects = _effects(rules_sensitivity_table(rules_sensitivity()))
    for reading in ("gm_omen=at-most-1", "any_size=on"):
        for metric in ("P(success)", "P(success or success-with-condition)"):
            assert effects[reading, metric].largest_cell is None  # exactly zero everywhere
    # refusing the condition never changes P(success); it removes exactly P(total = difficulty - 1)
    assert effects["fail_by_one=refuse", "P(success)"].largest_cell is None
    moved = effects["fail_by_one=refuse", "P(success or success-with-condition)"]
    kind, rest = moved.largest_cell.split(": ")
    pool, difficulty = rest.split(" / ")
    sizes = [int(text[1:]) for text in pool.split(",")]
    level = int(difficulty.split()[0])
    pick = {"normal": 1, "advantage": 2, "disadvantage": 0}[kind]
    faces = list(product(*(range(1, size + 1) for size in sizes)))
    condition = Fraction(sum(1 for roll in faces if sorted(roll)[pick] == level - 1), len(faces))
    assert moved.largest_move == -condition != 0


def test_karbon_objective_moves_nothing_under_fixed_play_and_tie_order_moves():
    from exactdice.karbon.sensitivity import rules_sensitivity

    grid = {"consequence": (1,), "peril": (0,), "ability": (1,), "challenge": (1, 2)}
    effects = _effects(rules_sensitivity_table(rules_sensitivity(grid), store=None, workers=1, progress=False))
    for metric in ("P(win)", "P(loss)", "P(tie)"):
        assert effects["objective=win", metric].largest_cell is None
    assert effects["tie_order=narrator_first", "P(win)"].largest_move < 0
    assert len({reading for reading, _ in effects}) == 7  # every other value of every knob


@pytest.mark.parametrize("system", ["contingency", "karst"])
def test_committed_tables_are_regenerated_identically(tmp_path, system):
    made = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--sensitivity",
            "--systems",
            system,
            "--out",
            str(tmp_path),
            "--no-cache",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    for name in ("sensitivity/rules.md", "sensitivity/rules.json"):
        assert (tmp_path / system / name).read_bytes() == (REPOSITORY / "tables" / system / name).read_bytes()
    readme = (tmp_path / "README.md").read_text()
    assert "## Rules sensitivity tables" in readme and f"`{system}/sensitivity/rules.*`" in readme


def test_committed_json_is_exact_and_consistent():
    for system in ("karbon", "contingency", "chronica", "karst"):
        path = REPOSITORY / "tables" / system / "sensitivity" / "rules.json"
        if not path.exists():
            continue
        document = json.loads(path.read_text())
        assert document["format"] == "exactdice-sensitivity/1"
        for effect in document["effects"]:
            assert 0 <= effect["moved"] <= effect["cells"]
            if effect["cell"] is not None:
                assert Fraction(effect["to"]) - Fraction(effect["from"]) == Fraction(effect["largest_move"]) != 0


def test_an_unknown_system_is_one_line_exit_2(tmp_path):
    made = subprocess.run(
        [sys.executable, str(SCRIPT), "--sensitivity", "--systems", "chess", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 2 and "--systems" in made.stderr and made.stderr.count("\n") == 1


def test_the_json_has_fractions():
    from exactdice.karst.sensitivity import rules_sensitivity

    document = sensitivity_json(rules_sensitivity_table(rules_sensitivity()))
    aid = [e for e in document["effects"] if e["reading"] == "aid=1" and e["metric"] == "P(death)"][0]
    assert "/" in aid["from"] and Fraction(aid["from"]) == Fraction(1, 2)


def test_committed_karbon_largest_move_is_two_single_contests():
    from exactdice.karbon.tables import contest_cell

    path = REPOSITORY / "tables" / "karbon" / "sensitivity" / "rules.json"
    effects = json.loads(path.read_text())["effects"]
    [effect] = [e for e in effects if e["reading"] == "sudden_death=on" and e["metric"] == "P(win)"]
    w, p, a, c = (int(part[1:]) for part in effect["cell"].split())
    assert Fraction(effect["from"]) == contest_cell(a, c, w, p)["P(win)"]
    assert Fraction(effect["to"]) == contest_cell(a, c, w, p, rules=("sudden_death=on",))["P(win)"]
