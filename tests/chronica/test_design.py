"""Chronica design: the contests found equal brute force (the literal reading of
`chronica_reference`, every face of every die enumerated)."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest

from exactdice.chronica.design import chronica_design_problem, design_search
from exactdice.chronica.ruleset import Rules
from exactdice.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from chronica_reference import brute_force  # noqa: E402


def reference(dice: int, size: int, against_dice: int, against_size: int) -> dict:
    outcomes = brute_force([((size,) * dice,), ((against_size,) * against_dice,)])
    win = sum(p for (winner, _, _), p in outcomes.items() if winner == 0)
    loss = sum(p for (winner, _, _), p in outcomes.items() if winner == 1)
    return {"win": win, "loss": loss, "tie": 1 - win - loss}


AXES = {"dice": [1, 2], "size": [4, 6, 8, 10]}
FIXED = {"against_dice": 2, "against_size": 6}


@pytest.mark.parametrize(
    "metric,target",
    [("win", Fraction(1, 2)), ("win", Fraction(1, 4)), ("tie", Fraction(1, 10)), ("loss", Fraction(2, 3))],
)
def test_best_pool_equals_brute_force(metric, target):
    found = design_search(chronica_design_problem(AXES, FIXED, metric=metric), target=target, best=2, workers=1)
    cells = {(n, s): reference(n, s, 2, 6)[metric] for n in AXES["dice"] for s in AXES["size"]}
    ranked = sorted(cells, key=lambda point: (abs(cells[point] - target), point))
    assert [(c.point["dice"], c.point["size"]) for c in found.candidates][:2] == ranked[:2]
    assert all(c.value == cells[(c.point["dice"], c.point["size"])] for c in found.candidates)


def test_a_rule_knob_reaches_the_cells():
    axes, fixed = {"dice": [1]}, {"size": 6, "against_dice": 1, "against_size": 6}
    plain = design_search(chronica_design_problem(axes, fixed, metric="tie"), target=Fraction(0), workers=1)
    pushed = design_search(
        chronica_design_problem(axes, fixed, metric="tie", rules=Rules(push=True)), target=Fraction(0), workers=1
    )
    assert pushed.candidates[0].value == plain.candidates[0].value ** 2 == Fraction(1, 36)


@pytest.mark.parametrize(
    "axes,fixed,field",
    [
        ({"dice": [1]}, {"size": 6, "against_dice": 1}, "against_size"),
        ({"dice": [0, 1]}, {"size": 6, "against_dice": 1, "against_size": 6}, "axes"),  # "dice=0: ..."
        ({"colour": [1]}, {}, "axes"),
        ({"size": [0]}, {"dice": 1, "against_dice": 1, "against_size": 6}, "axes"),
        ({"dice": [1]}, {"size": 0, "against_dice": 1, "against_size": 6}, "size"),  # a fixed value names itself
    ],
)
def test_bad_design_input_names_the_field(axes, fixed, field):
    with pytest.raises(InputError) as caught:
        chronica_design_problem(axes, fixed)
    assert caught.value.field == field
