"""Printed tables' colour scales: each panel over its own range, diverging around 50 %
where probabilities lie on both sides of it, numbers readable on every shade."""

from __future__ import annotations

from fractions import Fraction

import pytest

from exactdice.tables.grid import Bounds, TableGrid
from exactdice.tables.shading import PanelScale, contrast_ratio, panel_scale, relative_luminance


def luminance(scale, value):
    return relative_luminance(scale.rgb(value))


def test_a_narrow_probability_range_uses_the_whole_scale():
    """The issue's case: P(win) from 4.9 % to 21.6 % was all near-white on a 0-100 % scale."""
    low, high = Fraction(49, 1000), Fraction(216, 1000)
    scale = PanelScale.over([low, Fraction(1, 10), high], probability=True)
    assert scale.kind == "sequential" and (scale.low, scale.high) == (low, high)
    assert luminance(scale, low) > 0.8 and luminance(scale, high) < 0.05  # near-white to dark
    shades = [luminance(scale, low + (high - low) * Fraction(step, 10)) for step in range(11)]
    assert shades == sorted(shades, reverse=True)  # darker as the value grows: greyscale keeps the order
    assert scale.legend() == ("Colour: continuous over this table's own range, lightest at 4.9%, darkest at 21.6%.")


def test_probabilities_on_both_sides_of_one_half_diverge_around_it_symmetrically():
    scale = PanelScale.over([Fraction(35, 100), Fraction(1, 2), Fraction(60, 100)], probability=True)
    assert scale.kind == "diverging" and (scale.low, scale.high) == (Fraction(35, 100), Fraction(65, 100))
    assert luminance(scale, Fraction(1, 2)) > 0.9  # white at 50 %
    red, _, blue = scale.rgb(Fraction(40, 100))
    assert red > blue  # below 50 %: red
    red, _, blue = scale.rgb(Fraction(60, 100))
    assert blue > red  # above: blue
    # equal distances from 50 % are equally deep
    assert luminance(scale, Fraction(40, 100)) == pytest.approx(luminance(scale, Fraction(60, 100)), abs=0.06)
    assert "diverging around 50%" in scale.legend()


def test_other_metrics_are_sequential_even_across_one_half():
    scale = PanelScale.over([Fraction(1, 4), Fraction(3, 2)], probability=False)
    assert scale.kind == "sequential" and scale.end_text(Fraction(3, 2)) == "1.50"


def test_one_value_is_one_colour_and_said_so():
    scale = PanelScale.over([Fraction(0)] * 4 + [None], probability=True)
    assert scale.fill(Fraction(0)) == PanelScale.over([0, 0], True).fill(0)
    assert scale.legend() == "Colour: every cell is 0.0%." and scale.range_text() == "every cell 0.0%"
    assert len(scale.samples()) == 1
    nothing = PanelScale.over([None, None], probability=True)
    assert nothing.legend() == "No cell has a value." and nothing.samples() == []
    assert nothing.range_text() == "no cell has a value"


@pytest.mark.parametrize(
    "values, probability",
    [
        ([Fraction(0), Fraction(1)], True),
        ([Fraction(1, 20), Fraction(1, 5)], True),
        ([Fraction(2, 5), Fraction(3, 5)], True),
        ([Fraction(1), Fraction(10)], False),
    ],
)
def test_numbers_read_on_every_shade(values, probability):
    """WCAG AA for small text: contrast ratio 4.5 or more between each fill and its text."""
    scale = PanelScale.over(values, probability)
    for step in range(201):
        value = scale.low + (scale.high - scale.low) * Fraction(step, 200)
        text = (0, 0, 0) if scale.text(value) == "#000000" else (1, 1, 1)
        assert contrast_ratio(scale.rgb(value), text) >= 4.5, (value, scale.fill(value))


def test_a_panel_is_shaded_by_the_lower_end_of_its_bounds():
    grid = TableGrid(
        "t", "r", "c", ["1"], ["1", "2"], {"P(win)": [[Bounds(Fraction(1, 10), Fraction(3, 20)), Fraction(1, 5)]]}
    )
    scale = panel_scale(grid, "P(win)")
    assert (scale.low, scale.high, scale.kind) == (Fraction(1, 10), Fraction(1, 5), "sequential")


def test_bounds_too_wide_to_print_are_left_out_of_the_scale():
    """A probability known only to within more than 0.05 reads "not certified" and takes
    no part in its panel's colours (it is not shaded)."""
    grid = TableGrid(
        "t",
        "r",
        "c",
        ["1"],
        ["1", "2", "3"],
        {"P(win)": [[Bounds(Fraction(0), Fraction(1)), Fraction(1, 5), Fraction(2, 5)]]},
    )
    scale = panel_scale(grid, "P(win)")
    assert (scale.low, scale.high) == (Fraction(1, 5), Fraction(2, 5))
