"""Contingency design: the checks found equal brute force (every cell computed by enumerating
every face of the three dice, independent of `solve_check`)."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from exactdice.contingency.design import contingency_design_problem, design_search, standard_pool_texts
from exactdice.contingency.ruleset import Rules
from exactdice.errors import InputError


def brute_force(pool: str, difficulty: int, advantage: int = 0) -> dict:
    """P(success), P(success or condition), P(failure) from every face (no luck die)."""
    sizes = [int(text[1:]) for text in pool.split(",")]
    counts = {"success": 0, "condition": 0, "failure": 0}
    for faces in product(*(range(1, size + 1) for size in sizes)):
        # sorted by face, ties by die size (smaller first); with no modifier the value is the face
        result = sorted(faces)[2 if advantage else 1]
        outcome = "success" if result >= difficulty else "condition" if result == difficulty - 1 else "failure"
        counts[outcome] += 1
    total = sum(counts.values())
    return {
        "success": Fraction(counts["success"], total),
        "success-or-condition": Fraction(counts["success"] + counts["condition"], total),
        "failure": Fraction(counts["failure"], total),
    }


def ranked(cells: dict, target: Fraction) -> list:
    return sorted(cells, key=lambda point: (abs(cells[point] - target), point))


@pytest.mark.parametrize(
    "metric,target",
    [
        ("success", Fraction(3, 5)),
        ("success", Fraction(1, 10)),
        ("success-or-condition", Fraction(3, 4)),
        ("failure", Fraction(1, 3)),
    ],
)
def test_best_difficulty_equals_brute_force(metric, target):
    problem = contingency_design_problem({"difficulty": list(range(1, 12))}, {"dice": "d6,d8,d10"}, metric=metric)
    found = design_search(problem, target=target, best=1, workers=1)
    cells = {d: brute_force("d6,d8,d10", d)[metric] for d in range(1, 12)}
    best = ranked(cells, target)[0]
    assert found.candidates[0].point == {"difficulty": best}
    assert found.candidates[0].value == cells[best]
    assert found.solved == found.grid_size == 11 and found.exhaustive


def test_best_pool_for_a_difficulty_with_a_tolerance_equals_brute_force():
    pools = standard_pool_texts()
    target, tolerance = Fraction(1, 2), Fraction(3, 100)
    problem = contingency_design_problem({"dice": pools}, {"difficulty": 6})
    found = design_search(problem, target=target, tolerance=tolerance, workers=1)
    cells = {pool: brute_force(pool, 6)["success"] for pool in pools}
    within = sorted(pool for pool, value in cells.items() if abs(value - target) <= tolerance)
    assert within and sorted(c.point["dice"] for c in found.candidates) == within
    assert found.candidates[0].point["dice"] == ranked(cells, target)[0] == "d10,d10,d10"


def test_advantage_axis_equals_brute_force():
    problem = contingency_design_problem({"difficulty": [4, 5, 6], "advantage": [0, 1]}, {"dice": "d4,d6,d8"})
    found = design_search(problem, target=Fraction(1, 2), best=2, workers=1)
    cells = {(d, a): brute_force("d4,d6,d8", d, a)["success"] for d in (4, 5, 6) for a in (0, 1)}
    best = ranked(cells, Fraction(1, 2))[:2]
    assert [(c.point["difficulty"], c.point["advantage"]) for c in found.candidates] == best


def test_a_rule_knob_reaches_the_cells():
    plain = contingency_design_problem({"difficulty": [6]}, {"dice": "d6,d8,d10"})
    lucky = contingency_design_problem({"difficulty": [6]}, {"dice": "d6,d8,d10"}, rules=Rules(luck="always"))
    value = design_search(plain, target=Fraction(1), best=1, workers=1).candidates[0].value
    assert design_search(lucky, target=Fraction(1), best=1, workers=1).candidates[0].value > value


@pytest.mark.parametrize(
    "axes,fixed,metric,field",
    [
        ({"colour": [1]}, {"difficulty": 4}, "success", "axes"),
        ({"difficulty": [1]}, {"difficulty": 2}, "success", "axes"),
        ({"difficulty": [1]}, {}, "glory", "metric"),
        ({"dice": ["d6,d8,d10"]}, {}, "success", "difficulty"),
        ({"difficulty": [0, 1]}, {}, "success", "axes"),  # a varied value names the grid: "difficulty=0: ..."
    ],
)
def test_bad_design_input_names_the_field(axes, fixed, metric, field):
    with pytest.raises(InputError) as caught:
        contingency_design_problem(axes, fixed, metric=metric)
    assert caught.value.field == field
