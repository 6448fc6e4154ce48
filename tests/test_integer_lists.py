"""One reader of whole-number lists for `karbon table`'s axes, `--vary` and the web page's
grid: the same text gives the same numbers everywhere, each caller naming its own field."""

from __future__ import annotations

import pytest

from exactdice.cli.design_common import integer_values
from exactdice.errors import InputError
from exactdice.integer_lists import MOST_VALUES_A_RANGE, parse_integer_list
from exactdice.web import forms


@pytest.mark.parametrize(
    "text, values",
    [
        ("3", [3]),
        ("1-5", [1, 2, 3, 4, 5]),
        ("1,2,4", [1, 2, 4]),
        ("1-3,5", [1, 2, 3, 5]),
        (" 1 - 2 , 7 ", [1, 2, 7]),
        ("-2", [-2]),
        ("-2--1", [-2, -1]),
        ("-1-1", [-1, 0, 1]),
    ],
)
def test_every_caller_reads_the_same_numbers(text, values):
    assert parse_integer_list(text, "rows") == values
    assert integer_values(text, "modifier") == values
    field = forms.Field("peril", "int", 0, low=-10, high=10)
    assert forms.integer_values(text, field) == values


@pytest.mark.parametrize(
    "text, words",
    [
        ("x", '"x" is not a number, a range like 1-5, or a list like 1,2,4'),
        ("1,,2", '"" is not a number'),
        ("1-", '"1-" is not a number'),
        ("3-1", 'the range "3-1" runs backwards; write 1-3'),
        ("-1--3", 'the range "-1--3" runs backwards; write -3--1'),
        (f"0-{MOST_VALUES_A_RANGE}", f"has {MOST_VALUES_A_RANGE + 1:,} values; at most {MOST_VALUES_A_RANGE:,}"),
    ],
)
def test_each_caller_names_its_own_field(text, words):
    with pytest.raises(InputError) as table:
        parse_integer_list(text, "--challenge")
    assert table.value.field == "--challenge" and words in table.value.message
    with pytest.raises(InputError) as vary:
        integer_values(text, "peril")
    assert vary.value.field == "--vary" and vary.value.message.startswith("peril: ")
    assert words in vary.value.message
    with pytest.raises(InputError) as form:
        forms.integer_values(text, forms.Field("row_values", "int", low=-10, high=2000))
    assert form.value.field == "row_values" and words in form.value.message


def test_a_huge_range_is_refused_before_it_is_built():
    with pytest.raises(InputError, match="1,000,000,001 values"):
        parse_integer_list("0-1000000000", "rows")


def test_the_web_grid_checks_bounds_after_reading():
    with pytest.raises(InputError, match='"-1-2" goes down to -1; Peril goes from 0 to 10 on this page'):
        forms.integer_values("-1-2", forms.Field("peril", "int", 0, low=0, high=10, label="Peril"))
