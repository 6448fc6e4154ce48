"""`exactdice.core.display` against the exact values it rounds (property tests)."""

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from exactdice.core.display import Display, fraction_size, percent_text, significant_text, with_decimals

fractions = st.fractions(min_value=Fraction(-(10**6)), max_value=Fraction(10**6), max_denominator=10**12)
probabilities = st.fractions(min_value=0, max_value=1, max_denominator=10**15)


def shown_value(text: str) -> Fraction:
    mantissa, _, exponent = text.partition("e")
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


@settings(max_examples=400)
@given(fractions, st.integers(1, 8))
def test_significant_text_is_within_half_a_unit_of_its_last_digit(value, digits):
    text = significant_text(value, digits)
    shown = shown_value(text)
    mantissa = text.split("e")[0].lstrip("-")
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(text.partition("e")[2] or 0)
    assert abs(shown - value) <= Fraction(1, 2) * Fraction(10) ** (exponent - places)
    if value.denominator == 1:
        assert text == str(value.numerator)  # whole numbers are written as they are
    elif value != 0:
        assert len(mantissa.replace(".", "").lstrip("0")) >= digits or places == 0


@settings(max_examples=400)
@given(probabilities, st.integers(1, 6))
def test_a_percentage_never_rounds_to_0_or_100_unless_exact(p, digits):
    text = percent_text(p, digits)
    assert text.endswith(" %")
    if p not in (0, 1):
        assert text not in ("0 %", "100 %")
        assert not text.startswith("0.0 ") and not text.startswith("100.0 ")


@given(probabilities)
def test_display_shows_short_fractions_and_the_size_of_long_ones(p):
    text = Display().probability(p)
    exact = f"{p.numerator}/{p.denominator}" if p.denominator != 1 else str(p.numerator)
    if len(exact) <= 21:
        assert text.endswith(f"({exact})")
    else:
        assert text.endswith(f"(exact: {fraction_size(p):,}-digit fraction)")
    assert Display(exact=True).probability(p).endswith("= " + exact)


@given(st.lists(probabilities, min_size=1, max_size=5))
def test_the_decimal_mirror_holds_the_nearest_float_of_every_exact_value(values):
    document = {
        "win": f"{values[0].numerator}/{values[0].denominator}",
        "rounds": {str(i): f"{v.numerator}/{v.denominator}" for i, v in enumerate(values)},
        "dice": "3d8",
        "states": 12,
        "list": [str(v.numerator) for v in values],
    }
    mirrored = with_decimals(document)
    assert mirrored["win"] == document["win"] and "dice" not in mirrored["decimal"]
    assert mirrored["decimal"]["win"] == float(values[0])
    assert mirrored["decimal"]["rounds"] == {str(i): float(v) for i, v in enumerate(values)}
    assert mirrored["decimal"]["list"] == [float(v.numerator) for v in values]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1, max_value=10**30),
    st.integers(min_value=1, max_value=10**30),
    st.integers(min_value=-30_000, max_value=30_000),
    st.sampled_from([-1, 0, 1]),
)
def test_the_order_of_magnitude_and_the_digits_of_long_fractions(numerator, denominator, power, nudge):
    """Numbers of tens of thousands of digits, and the ones either side of a power of ten:
    the order of magnitude read from the bit lengths is settled exactly, and the digits of a
    fraction are those `str` writes."""
    from exactdice.core.display import _order_of_magnitude
    from exactdice.core.exact import fraction_text, integer_text

    value = Fraction(numerator, denominator) * Fraction(10) ** power
    if nudge:  # a power of ten itself, or a hair either side of it
        value = Fraction(10) ** power + nudge * Fraction(1, 10 ** (abs(power) + 40))
    magnitude = _order_of_magnitude(value)
    assert Fraction(10) ** magnitude <= value < Fraction(10) ** (magnitude + 1)
    assert fraction_size(value) == max(len(str(value.numerator)), len(str(value.denominator)))
    whole = value.denominator == 1
    assert fraction_text(value) == (str(value.numerator) if whole else f"{value.numerator}/{value.denominator}")
    assert integer_text(-value.numerator) == str(-value.numerator)
