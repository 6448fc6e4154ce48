"""Measure the sample size at which the validator reliably flags a one-rule-changed simulator.

Run ``/work/venv/bin/python tests/validation/measure_detection.py [contingency] [karbon]``.
For each trial count n of a grid it runs the wrong simulator (see test_cross_check.py) with
SEEDS different seeds, tests each sample against the exact model at alpha = 0.01 and prints
the share flagged; "reliably" means at least 99% of the seeds. It also runs the right
simulator to show the false-alarm share (about alpha).

For Karbon the contest has two possible outcomes (win, loss), so the validator runs the
exact binomial test and its power can also be computed exactly: the wrong simulator's
P(win) is the exact model's answer under the changed knob, and the power is the probability,
under Binomial(n, that P(win)), of a count the test rejects.

Not a test module (nothing runs on import; pytest's doctest pass imports it harmlessly).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

SEEDS = 500
ALPHA = 0.01


def detection_rates(fit, sizes, seeds=SEEDS, **right_rule):
    """Yield (n, share flagged by the wrong simulator, share flagged by the right one)."""
    for n in sizes:
        wrong = sum(not fit(n, seed).fits for seed in range(seeds)) / seeds
        right = sum(not fit(n, seed, **right_rule).fits for seed in range(seeds)) / seeds
        yield n, wrong, right


def exact_binomial_power(n: int, p_model: float, p_true: float, alpha: float = ALPHA) -> float:
    """P(the two-sided exact binomial test of p_model rejects) when counts follow p_true."""
    counts = np.arange(n + 1)
    pmf_model = stats.binom.pmf(counts, n, p_model)
    ascending = np.sort(pmf_model)
    cumulative = np.cumsum(ascending)
    # p-value of k: the total probability of counts no more likely than k (scipy's rule)
    below = np.searchsorted(ascending, pmf_model * (1 + 1e-7), side="right")
    p_values = np.where(below > 0, cumulative[np.maximum(below - 1, 0)], 0.0)
    return float(stats.binom.pmf(counts, n, p_true)[p_values < alpha].sum())


def measure_contingency(cross_check):
    sizes = [250, 500, 750, 1000, 1250, 1500, 2000]
    print(
        f"contingency (d4,d12,d12 vs 6, luck always; ties larger die first): share of "
        f"{SEEDS} seeds flagged at alpha = {ALPHA}"
    )
    for n, wrong, right in detection_rates(cross_check.wrong_contingency_fit, sizes, larger_die_first=False):
        print(f"  n = {n:6d}: wrong simulator {wrong:6.1%}   right simulator {right:5.1%}")


def measure_karbon(cross_check):
    from exactdice.karbon import Rules
    from exactdice.karbon.solve import expected_distribution

    setup = cross_check.karbon_default_contest()
    exact = expected_distribution(setup)
    changed = expected_distribution(setup, Rules().with_rules(["tie_order=narrator_first"]))
    p_model, p_true = float(exact["win"]), float(changed["win"])
    print(
        f"karbon A3/C3/W3/P1, tie_order=narrator_first: P(win) {p_model:.5f} by the rules, "
        f"{p_true:.5f} with the knob changed"
    )
    print("  exact power of the binomial test at alpha = 0.01:")
    for n in (10_000, 15_000, 20_000, 24_000, 25_000, 26_000, 28_000, 30_000, 35_000):
        print(f"    n = {n:6d}: {exact_binomial_power(n, p_model, p_true):.4f}")
    print(f"  simulated, {SEEDS} seeds each:")
    for n, wrong, right in detection_rates(
        lambda n, seed, **kw: cross_check.karbon_wrong_fit(n, seed, exact=exact, **kw),
        (20_000, 26_000, 30_000),
        knob="",
    ):
        print(f"    n = {n:6d}: wrong simulator {wrong:6.1%}   right simulator {right:5.1%}")


def main(argv):
    sys.path.insert(0, str(Path(__file__).parent))
    import test_cross_check as cross_check

    measures = {"contingency": measure_contingency, "karbon": measure_karbon}
    for name in argv or measures:
        start = time.perf_counter()
        measures[name](cross_check)
        print(f"  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
