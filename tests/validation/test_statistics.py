"""The statistics of `exactdice.validation`: p-values against scipy and brute force."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from scipy import stats

from exactdice.core.distribution import d
from exactdice.errors import InputError
from exactdice.validation import (
    EXACT_LIMIT,
    MIN_EXPECTED_COUNT,
    goodness_of_fit,
)

THREE_WAY = {"win": Fraction(1, 2), "loss": Fraction(1, 3), "tie": Fraction(1, 6)}


def brute_force_exact_p(probabilities: list[Fraction], counts: list[int]) -> Fraction:
    """P(a count vector no more likely than the observed one), every vector enumerated."""
    n = sum(counts)

    def pmf(vector):
        weight = Fraction(math.factorial(n))
        for count, p in zip(vector, probabilities):
            weight *= p**count / math.factorial(count)
        return weight

    observed = pmf(counts)
    total = Fraction(0)
    for head in itertools.product(range(n + 1), repeat=len(counts) - 1):
        if sum(head) <= n:
            vector = (*head, n - sum(head))
            if pmf(vector) <= observed:
                total += pmf(vector)
    return total


def test_chi_square_p_value_matches_scipy():
    observed = {"win": 5100, "loss": 3300, "tie": 1600}
    report = goodness_of_fit(THREE_WAY, observed)
    expected = [10000 * float(p) for p in THREE_WAY.values()]
    scipy_result = stats.chisquare(list(observed.values()), expected)
    assert report.test == "Pearson chi-square"
    assert report.dof == 2
    assert report.statistic == pytest.approx(scipy_result.statistic, rel=1e-12)
    assert report.p_value == pytest.approx(scipy_result.pvalue, rel=1e-9)
    assert report.fits == (scipy_result.pvalue >= 0.01)


def test_g_test_p_value_matches_scipy():
    observed = {"win": 5300, "loss": 3200, "tie": 1500}
    report = goodness_of_fit(THREE_WAY, observed, test="g-test")
    expected = [10000 * float(p) for p in THREE_WAY.values()]
    scipy_result = stats.power_divergence(list(observed.values()), expected, lambda_="log-likelihood")
    assert report.test == "G-test"
    assert report.p_value == pytest.approx(scipy_result.pvalue, rel=1e-9)
    assert not report.fits  # 'win' is 6 standard errors high


def test_two_outcomes_use_scipys_exact_binomial_test():
    report = goodness_of_fit({"hit": Fraction(7, 20), "miss": Fraction(13, 20)}, {"hit": 410, "miss": 590})
    assert report.test == "exact binomial"
    assert report.p_value == pytest.approx(stats.binomtest(410, 1000, 0.35).pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_exact_multinomial_matches_brute_force(seed):
    rng = random.Random(seed)
    cells = rng.randint(3, 4)
    weights = [rng.randint(1, 9) for _ in range(cells)]
    probabilities = [Fraction(w, sum(weights)) for w in weights]
    counts = [rng.randint(0, 6) for _ in range(cells)]
    if sum(counts) == 0:
        counts[0] = 1
    expected = {f"o{i}": p for i, p in enumerate(probabilities)}
    report = goodness_of_fit(expected, {f"o{i}": c for i, c in enumerate(counts)})
    assert report.test == "exact multinomial"
    assert report.p_value == pytest.approx(float(brute_force_exact_p(probabilities, counts)), rel=1e-9, abs=1e-15)


def test_small_sample_uses_the_exact_test_and_large_ones_do_not():
    assert goodness_of_fit(THREE_WAY, {"win": 3, "loss": 1, "tie": 0}).test == "exact multinomial"
    large = {"win": 100_000, "loss": 60_000, "tie": 40_000}
    assert math.comb(200_002, 2) > EXACT_LIMIT
    assert goodness_of_fit(THREE_WAY, large).test == "Pearson chi-square"


def test_exact_test_is_refused_past_its_limit():
    with pytest.raises(InputError, match="test.*count vectors"):
        goodness_of_fit(THREE_WAY, {"win": 5000, "loss": 3000, "tie": 2000}, test="exact")


def test_sparse_cells_are_pooled_before_the_chi_square_test():
    three_d6 = d(6).sum_of(3).probabilities()  # totals 3 and 18 have p = 1/216
    n = 540  # totals 3 and 18 are expected 2.5 times each; 4 and 17 7.5 times
    observed = {total: round(n * float(p)) for total, p in three_d6.items()}
    observed[10] += n - sum(observed.values())
    report = goodness_of_fit(three_d6, observed)
    assert report.test == "Pearson chi-square"
    pooled_members = {total for group in report.pooled for total in group}
    assert pooled_members == {3, 18}
    assert "(sparse outcomes pooled: {3, 18})" in report.to_text()
    groups = [list(group) for group in report.pooled]
    for group in groups:
        assert sum(n * float(three_d6[t]) for t in group) >= MIN_EXPECTED_COUNT
    for total in three_d6:
        if total not in pooled_members:
            assert n * float(three_d6[total]) >= MIN_EXPECTED_COUNT
    assert report.dof == 16 - len(pooled_members) + len(groups) - 1
    # the same test done by hand on the pooled cells
    cells = [[t] for t in three_d6 if t not in pooled_members] + groups
    obs = [sum(observed[t] for t in cell) for cell in cells]
    exp = [n * float(sum(three_d6[t] for t in cell)) for cell in cells]
    assert report.p_value == pytest.approx(stats.chisquare(obs, exp).pvalue, rel=1e-9)
    assert report.fits


def test_sparse_pooling_is_what_makes_rare_outcomes_testable():
    """Without pooling, one hit of a 1-in-10,000 outcome would be a 'misfit' at chi-square."""
    rare = {"common": Fraction(9999, 10000), "rare": Fraction(1, 20000), "rarer": Fraction(1, 20000)}
    observed = {"common": 29_999, "rare": 1, "rarer": 0}
    report = goodness_of_fit(rare, observed, test="chi-square")
    assert report.pooled == (("rarer", "rare"),) or report.pooled[0][:2] in (("rarer", "rare"), ("rare", "rarer"))
    assert report.fits


def test_a_zero_probability_outcome_observed_is_an_immediate_misfit():
    expected = {"win": Fraction(1, 2), "loss": Fraction(1, 2), "tie": Fraction(0)}
    report = goodness_of_fit(expected, {"win": 500, "loss": 499, "tie": 1})
    assert report.p_value == 0.0
    assert not report.fits
    assert report.test == "impossible outcome"
    assert "'tie' was observed 1 times" in report.verdict
    # unobserved, a zero-probability outcome plays no part
    assert goodness_of_fit(expected, {"win": 500, "loss": 500}).fits


def test_an_unknown_outcome_is_an_input_error_naming_it():
    with pytest.raises(InputError, match=r"--counts: outcome 'draw' is not an outcome"):
        goodness_of_fit(THREE_WAY, {"win": 1, "draw": 2}, field="--counts")


def test_outcomes_may_be_given_as_text():
    three_d4 = d(4).sum_of(3).probabilities()
    report = goodness_of_fit(three_d4, {str(t): 10 for t in three_d4})
    assert [row.observed for row in report.rows] == [10] * 10


@pytest.mark.parametrize("bad_counts", [{"win": -1}, {"win": 1.5}, {"win": 0, "loss": 0}])
def test_bad_counts_are_input_errors(bad_counts):
    with pytest.raises(InputError, match="^observed: "):
        goodness_of_fit(THREE_WAY, bad_counts)


def test_expected_must_be_exact_and_sum_to_one():
    with pytest.raises(ValueError, match="sum to 5/6"):
        goodness_of_fit({"a": Fraction(1, 2), "b": Fraction(1, 3)}, {"a": 1})
    with pytest.raises(TypeError, match="must be exact"):
        goodness_of_fit({"a": 0.5, "b": 0.5}, {"a": 1})


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 2])
def test_alpha_outside_zero_one_is_refused(alpha):
    with pytest.raises(InputError, match="alpha"):
        goodness_of_fit(THREE_WAY, {"win": 1}, alpha=alpha)


def test_z_is_the_deviation_in_standard_errors_and_the_verdict_names_the_worst():
    observed = {"win": 5000, "loss": 3000, "tie": 2000}
    report = goodness_of_fit(THREE_WAY, observed)
    by_name = {row.category: row for row in report.rows}
    tie = by_name["tie"]
    sd = math.sqrt(10000 * (1 / 6) * (5 / 6))
    assert tie.z == pytest.approx((2000 - 10000 / 6) / sd)
    assert tie.expected_count == pytest.approx(10000 / 6)
    assert tie.probability == Fraction(1, 6)
    assert tie.observed_share == 0.2
    assert not report.fits
    assert report.verdict.startswith("does not fit: 'tie' is 8.9 standard errors above")
    low = goodness_of_fit(THREE_WAY, {"win": 4600, "loss": 3500, "tie": 1900})
    assert low.verdict.startswith("does not fit: 'win' is 8.0 standard errors below")


def test_alpha_decides_the_verdict():
    observed = {"win": 5100, "loss": 3250, "tie": 1650}
    p_value = goodness_of_fit(THREE_WAY, observed).p_value
    assert 1e-4 < p_value < 0.2
    assert goodness_of_fit(THREE_WAY, observed, alpha=p_value / 2).fits
    assert not goodness_of_fit(THREE_WAY, observed, alpha=min(0.99, p_value * 2)).fits


def test_a_single_possible_outcome_always_fits():
    report = goodness_of_fit({"win": Fraction(1), "loss": Fraction(0)}, {"win": 7})
    assert report.fits and report.p_value == 1.0


def test_json_and_text_carry_every_outcome():
    report = goodness_of_fit(THREE_WAY, {"win": 52, "loss": 30, "tie": 18})
    payload = report.to_json()
    assert {"p_value", "verdict", "fits", "test", "n", "outcomes"} <= set(payload)
    assert payload["n"] == 100
    assert payload["outcomes"]["tie"] == {
        "observed": 18,
        "expected": pytest.approx(100 / 6),
        "p": "1/6",
        "share": 0.18,
        "z": pytest.approx((18 - 100 / 6) / math.sqrt(100 / 6 * 5 / 6)),
    }
    text = report.to_text()
    for name in THREE_WAY:
        assert name in text
    assert report.verdict in text


def test_a_distribution_can_be_the_expected_side():
    report = goodness_of_fit(d(4), {1: 30, 2: 20, 3: 25, 4: 25})
    assert [row.probability for row in report.rows] == [Fraction(1, 4)] * 4
    assert report.p_value == pytest.approx(stats.chisquare([30, 20, 25, 25]).pvalue, rel=0.5)
    assert report.test == "exact multinomial" and report.fits
