"""Karst design: the rolls found equal brute force (every face of the d20 or d6 counted)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from exactdice.errors import InputError
from exactdice.karst.design import design_search, karst_design_problem


def hit_by_faces(modifier: int, defense: int) -> Fraction:
    return Fraction(sum(1 for face in range(1, 21) if face == 20 or (face != 1 and face + modifier >= defense)), 20)


def success_by_faces(modifier: int) -> Fraction:
    return Fraction(sum(1 for face in range(1, 7) if face == 6 or (face != 1 and face + modifier >= 6)), 6)


@pytest.mark.parametrize("target", [Fraction(3, 5), Fraction(1, 3), Fraction(0), Fraction(99, 100)])
def test_best_defense_equals_brute_force(target):
    found = design_search(
        karst_design_problem({"defense": list(range(8, 21))}, {"modifier": 3}), target=target, best=1, workers=1
    )
    cells = {d: hit_by_faces(3, d) for d in range(8, 21)}
    distance = min(abs(value - target) for value in cells.values())
    assert [c.point["defense"] for c in found.candidates] == sorted(
        d for d, v in cells.items() if abs(v - target) == distance
    )
    assert all(c.value == cells[c.point["defense"]] for c in found.candidates)


def test_two_axes_with_a_tolerance_equal_brute_force():
    axes = {"modifier": list(range(-2, 11)), "defense": list(range(8, 21))}
    target, tolerance = Fraction(1, 2), Fraction(1, 20)
    found = design_search(karst_design_problem(axes, {}), target=target, tolerance=tolerance, workers=1)
    within = {
        (m, d) for m in axes["modifier"] for d in axes["defense"] if abs(hit_by_faces(m, d) - target) <= tolerance
    }
    assert {(c.point["modifier"], c.point["defense"]) for c in found.candidates} == within
    assert found.solved == found.grid_size == 169


def test_best_action_modifier_equals_brute_force():
    found = design_search(
        karst_design_problem({"modifier": list(range(-5, 6))}, {}, metric="success"),
        target=Fraction(1, 2),
        best=1,
        workers=1,
    )
    cells = {m: success_by_faces(m) for m in range(-5, 6)}
    assert [c.point["modifier"] for c in found.candidates] == [2]
    assert cells[2] == Fraction(1, 2) == found.candidates[0].value


@pytest.mark.parametrize(
    "axes,fixed,metric,field",
    [
        ({"defense": [10]}, {}, "hit", "modifier"),
        ({"defense": [10]}, {"modifier": 1}, "success", "axes"),
        ({"defense": [10]}, {"modifier": 1}, "glory", "metric"),
        ({"defense": [10**6]}, {"modifier": 1}, "hit", "defense"),
    ],
)
def test_bad_design_input_names_the_field(axes, fixed, metric, field):
    with pytest.raises(InputError) as caught:
        karst_design_problem(axes, fixed, metric=metric)
    assert caught.value.field == field
