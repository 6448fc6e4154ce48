"""Check samples from any simulator against an exact distribution.

The exact model of a game gives each outcome an exact probability; a simulator (ours or
anyone's) gives counts. `goodness_of_fit` says whether the counts are consistent with the
exact probabilities, with a p-value, the deviation of each outcome in standard errors and a
plain verdict. The test is chosen so that its p-value is trustworthy:

* two possible outcomes: the exact two-sided binomial test (``scipy.stats.binomtest``);
* few enough possible count vectors (at most `EXACT_LIMIT`): the exact multinomial test,
  enumerating every count vector and adding the probabilities of those no more likely than
  the one observed;
* otherwise Pearson's chi-square test (``scipy.stats.chisquare``) after pooling sparse cells
  (expected count below `MIN_EXPECTED_COUNT`) so the chi-square approximation holds.

An observed outcome the model calls impossible (probability 0) is a misfit by itself
(p = 0); an outcome the model does not know is an `InputError` naming it.

This module knows no game and no command line: ``exactdice validate <system>``
(`exactdice.cli.validate`) builds its commands on it from the `exactdice.systems` registry.

>>> from fractions import Fraction
>>> report = goodness_of_fit({"win": Fraction(1, 2), "loss": Fraction(1, 2)},
...                          {"win": 52, "loss": 48})
>>> report.fits, report.test
(True, 'exact binomial')
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field as dataclass_field
from fractions import Fraction
from pathlib import Path

import numpy as np

from exactdice.core.display import percent_text
from exactdice.core.distribution import Distribution
from exactdice.core.exact import fraction_text, to_fraction
from exactdice.errors import InputError, TooLargeError
from exactdice.input_files import MAX_CSV_BYTES, open_text_file

__all__ = [
    "fit_sample_columns",
    "DEFAULT_ALPHA",
    "EXACT_LIMIT",
    "IMPOSSIBLE_TEST",
    "TESTS",
    "MIN_EXPECTED_COUNT",
    "FitReport",
    "OutcomeRow",
    "goodness_of_fit",
    "read_sample_column",
    "parse_counts",
    "ColumnDistribution",
    "read_sample_columns",
]

#: significance level: the samples "do not fit" when the p-value is below it
DEFAULT_ALPHA = 0.01
#: the exact multinomial test is used when there are at most this many possible count vectors
EXACT_LIMIT = 200_000
#: cells expected fewer times than this are pooled before a chi-square test
MIN_EXPECTED_COUNT = 5.0
#: most samples one test takes: numpy's 64-bit integers hold the counts exactly below 2**63
MAX_TOTAL_COUNT = 10**15
# the exact tests count a count vector as "no more likely than the observed one" up to
# this relative difference, so floating-point noise cannot drop ties (scipy does the same)
_RELATIVE_TIE_TOLERANCE = 1e-7

# exact probabilities longer than this (as "p/q") are shown rounded in the text table
_LONGEST_FRACTION_SHOWN = 24

#: the "test" of a sample holding an outcome the model calls impossible (p is exactly 0)
IMPOSSIBLE_TEST = "impossible outcome"

#: the tests `goodness_of_fit` can run (``auto`` chooses by the counts)
TESTS = ("auto", "exact", "chi-square", "g-test")


@dataclass(frozen=True)
class OutcomeRow:
    """One outcome: its count, the count the exact model expects, and the deviation.

    Attributes
    ----------
    category : Hashable
        The outcome.
    observed : int
        Its count in the samples.
    expected_count : float
        n p: the count the exact probability expects.
    probability : Fraction
        Its exact probability p.
    observed_share : float
        observed / n.
    z : float or None
        ``(observed - n p) / sqrt(n p (1 - p))``, the deviation in standard errors; None when
        undefined (p is 0 or 1).
    """

    category: Hashable
    observed: int
    expected_count: float
    probability: Fraction
    observed_share: float
    z: float | None

    @property
    def impossible(self) -> bool:
        """True when the model gives the outcome probability 0 yet it was observed."""
        return self.probability == 0 and self.observed > 0


@dataclass(frozen=True)
class FitReport:
    """The result of `goodness_of_fit`: p-value, verdict and one row per outcome.

    ``fits`` is true when the p-value is at least ``alpha``; ``verdict`` says so in words,
    naming the outcome furthest off; ``worst`` is that outcome's row.

    Attributes
    ----------
    p_value : float
        The test's p-value.
    statistic : float or None
        The test statistic (None for the exact test).
    statistic_name : str
        Its name.
    dof : int or None
        Degrees of freedom, where the test has them.
    test : str
        The test used: exact multinomial, Pearson chi-square or G.
    alpha : float
        The level the samples were tested at.
    n : int
        The number of samples.
    rows : tuple of OutcomeRow
        One row per outcome.
    pooled : tuple of tuple
        Sparse outcomes pooled together for the test.
    """

    p_value: float
    statistic: float | None
    statistic_name: str
    dof: int | None
    test: str
    alpha: float
    n: int
    rows: tuple[OutcomeRow, ...]
    pooled: tuple[tuple[Hashable, ...], ...] = dataclass_field(default=())

    @property
    def fits(self) -> bool:
        """True when the p-value is at least ``alpha`` (the samples are consistent)."""
        return self.p_value >= self.alpha

    @property
    def worst(self) -> OutcomeRow | None:
        """The outcome that deviates most: an impossible one, else the largest ``|z|``."""
        impossible = [row for row in self.rows if row.impossible]
        if impossible:
            return max(impossible, key=lambda row: row.observed)
        scored = [row for row in self.rows if row.z is not None]
        return max(scored, key=lambda row: abs(row.z)) if scored else None

    @property
    def verdict(self) -> str:
        """A plain sentence: does it fit, and if not, which outcome is off and by how much."""
        p_phrase = _p_phrase(self.p_value)
        worst = self.worst
        if self.fits:
            return f"fits: no outcome deviates more than chance allows ({p_phrase})"
        if worst is None:
            return f"does not fit ({p_phrase})"
        if worst.impossible:
            return (
                f"does not fit: {_quote(worst.category)} was observed {worst.observed} "
                f"times but the exact model says it cannot happen"
            )
        direction = "above" if worst.z > 0 else "below"
        return (
            f"does not fit: {_quote(worst.category)} is {abs(worst.z):.1f} standard "
            f"errors {direction} the exact value (observed {worst.observed_share:.2%}, "
            f"exact {float(worst.probability):.2%}; {p_phrase})"
        )

    def to_json(self) -> dict:
        """A JSON-ready dict: ``p_value``, ``verdict``, ``fits``, ``test``, ``n``, ``outcomes``.

        >>> report = goodness_of_fit({"a": Fraction(1, 4), "b": Fraction(3, 4)}, {"a": 1, "b": 3})
        >>> sorted(report.to_json()["outcomes"]["a"])
        ['expected', 'observed', 'p', 'share', 'z']
        """
        return {
            "p_value": self.p_value,
            "verdict": self.verdict,
            "fits": self.fits,
            "test": self.test,
            "statistic": self.statistic,
            "statistic_name": self.statistic_name,
            "dof": self.dof,
            "alpha": self.alpha,
            "n": self.n,
            "pooled": [[str(category) for category in group] for group in self.pooled],
            "outcomes": {
                str(row.category): {
                    "observed": row.observed,
                    "expected": row.expected_count,
                    "p": fraction_text(row.probability),
                    "share": row.observed_share,
                    "z": row.z,
                }
                for row in self.rows
            },
        }

    def to_text(self) -> str:
        """A table a person can read: one line per outcome, then the test and the verdict.

        >>> report = goodness_of_fit({"a": Fraction(1, 4), "b": Fraction(3, 4)}, {"a": 1, "b": 3})
        >>> print(report.to_text())
        outcome  observed  share   expected  exact p     z
        a        1         0.2500  1.0       25 % (1/4)  +0.00
        b        3         0.7500  3.0       75 % (3/4)  +0.00
        <BLANKLINE>
        exact binomial test, n = 4, P(observed counts) = 0.4219; p-value 1.00 (alpha 0.01)
        fits: no outcome deviates more than chance allows (p = 1.00)
        """
        header = ("outcome", "observed", "share", "expected", "exact p", "z")
        body = []
        long_fractions = False
        for row in self.rows:
            exact = fraction_text(row.probability)
            if len(exact) > _LONGEST_FRACTION_SHOWN:
                exact, long_fractions = f"{percent_text(row.probability)}*", True
            else:
                exact = f"{percent_text(row.probability)} ({exact})"
            z_text = "-" if row.z is None else f"{row.z:+.2f}"
            if row.impossible:
                z_text = "impossible"
            body.append(
                (
                    str(row.category),
                    str(row.observed),
                    f"{row.observed_share:.4f}",
                    f"{row.expected_count:.1f}",
                    exact,
                    z_text,
                )
            )
        widths = [max(len(line[column]) for line in [header, *body]) for column in range(6)]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in [header, *body]]
        described = f"{self.test} test, n = {self.n}"
        if self.statistic is not None:
            described += f", {self.statistic_name} = {self.statistic:.4g}"
        if self.dof is not None:
            described += f", {self.dof} degrees of freedom"
        if self.pooled:
            # categories may carry a sign or a "+" of their own ("30+"): list them, do not add them
            groups = ", ".join("{" + ", ".join(str(category) for category in group) + "}" for group in self.pooled)
            described += f" (sparse outcomes pooled: {groups})"
        if long_fractions:
            lines.append(
                f"* exact fraction longer than {_LONGEST_FRACTION_SHOWN} characters: "
                f"shown as a percentage here, exact in the JSON"
            )
        lines.append("")
        p_text = "0" if self.test == IMPOSSIBLE_TEST else _p_text(self.p_value)
        lines.append(f"{described}; p-value {p_text} (alpha {self.alpha:g})")
        lines.append(self.verdict)
        return "\n".join(lines)


def _p_phrase(p_value: float) -> str:
    text = _p_text(p_value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _p_text(p_value: float) -> str:
    if p_value == 0:
        return "< 1e-300"  # underflow (an impossible outcome's exact 0 is said in words)
    return f"{p_value:.2g}" if p_value < 0.01 else f"{p_value:.2f}"


def _quote(category) -> str:
    return f"'{category}'"


# ----- the statistics ----------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnDistribution:
    """The exact distribution of one CSV column: category (as the CSV writes it) -> probability.

    A column over an unbounded count (rounds) lists its first values one by one and puts the
    rest in one tail category ``"N+"``; `fold` maps the observed values N, N+1, ... into it.

    Parameters
    ----------
    probabilities : dict of str to Fraction
        Category -> exact probability, summing to exactly 1.
    tail_from : int, optional
        N when the last category is the tail ``"N+"``.

    Examples
    --------
    >>> rounds = ColumnDistribution.with_tail({0: Fraction(1, 2), 1: Fraction(1, 4)})
    >>> rounds.probabilities
    {'0': Fraction(1, 2), '1': Fraction(1, 4), '2+': Fraction(1, 4)}
    >>> dict(rounds.fold(Counter({"0": 5, "1": 2, "2": 1, "7": 1})))
    {'0': 5, '1': 2, '2+': 2}
    """

    probabilities: dict
    tail_from: int | None = None

    @classmethod
    def with_tail(cls, listed: Mapping, cut: Fraction = Fraction(1, 10**6)) -> "ColumnDistribution":
        """``{value: p}`` for the listed integer values, one by one until less than ``cut``
        of the mass is left; what is left (exactly) goes to ``"N+"``."""
        probabilities, left = {}, Fraction(1)
        for value, p in sorted(listed.items()):
            if left < cut:
                break
            probabilities[str(value)] = to_fraction(p)
            left -= to_fraction(p)
        if left < 0:
            raise ValueError("the listed probabilities sum to more than 1")
        if left == 0:
            return cls(probabilities)
        tail = max(int(value) for value in probabilities) + 1
        probabilities[f"{tail}+"] = left
        return cls(probabilities, tail)

    @classmethod
    def from_distribution(cls, distribution, text=str) -> "ColumnDistribution":
        """A `Distribution` (or ``{outcome: p}``) with each outcome written by ``text``."""
        if hasattr(distribution, "probabilities") and callable(distribution.probabilities):
            distribution = distribution.probabilities()
        probabilities: dict = {}
        for outcome, p in distribution.items():
            key = text(outcome)
            probabilities[key] = probabilities.get(key, Fraction(0)) + to_fraction(p)
        return cls(probabilities)

    def fold(self, observed: Mapping) -> Counter:
        """The observed counts with every integer value from ``tail_from`` on counted in the tail."""
        if self.tail_from is None:
            return Counter(observed)
        folded = Counter()
        for value, count in observed.items():
            text = str(value).strip()
            number = int(text) if text.lstrip("-").isdigit() else None
            folded[f"{self.tail_from}+" if number is not None and number >= self.tail_from else text] += count
        return folded


def _exact_probabilities(expected) -> dict:
    if hasattr(expected, "probabilities") and callable(expected.probabilities):
        expected = expected.probabilities()
    probabilities = {}
    for category, probability in expected.items():
        try:
            probability = to_fraction(probability)
        except TypeError:
            raise TypeError(
                f"the exact probability of {category!r} must be exact (int or Fraction), got {probability!r}"
            ) from None
        if probability < 0:
            raise ValueError(f"negative exact probability {probability} for {category!r}")
        probabilities[category] = probability
    total = sum(probabilities.values(), Fraction(0))
    if total != 1:
        raise ValueError(f"the exact probabilities sum to {fraction_text(total)}, not exactly 1")
    return probabilities


def _observed_counts(probabilities: Mapping, observed: Mapping, field: str) -> dict:
    by_text = {}
    for category in probabilities:
        by_text.setdefault(str(category), category)
    counts = dict.fromkeys(probabilities, 0)
    for category, count in observed.items():
        if category in counts:
            key = category
        elif str(category) in by_text:
            key = by_text[str(category)]
        else:
            known = ", ".join(str(c) for c in probabilities)
            raise InputError(
                field, f"outcome {str(category)!r} is not an outcome of the exact model (its outcomes: {known})"
            )
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
            raise InputError(field, f"the count of {str(category)!r} must be a whole number >= 0, got {count!r}")
        counts[key] += int(count)
    total = sum(counts.values())
    if total > MAX_TOTAL_COUNT:
        raise InputError(
            field,
            f"the counts add up to {total:,}, more than the limit of {MAX_TOTAL_COUNT:,} "
            "(the tests' statistics are computed in 64-bit floats and integers)",
        )
    return counts


def _z_score(observed: int, n: int, probability: Fraction) -> float | None:
    if probability == 0 or probability == 1:
        return None
    p = float(probability)
    return (observed - n * p) / math.sqrt(n * p * (1.0 - p))


def _count_vectors(n: int, cells: int) -> int:
    return math.comb(n + cells - 1, cells - 1)


def _all_count_vectors(n: int, cells: int) -> np.ndarray:
    """Every vector of ``cells`` counts >= 0 adding up to ``n``, one per row.

    >>> _all_count_vectors(2, 2).tolist()
    [[0, 2], [1, 1], [2, 0]]
    """
    heads = np.zeros((1, 0), dtype=np.int64)
    remaining = np.array([n], dtype=np.int64)
    for _ in range(cells - 1):
        # each row branches into remaining + 1 rows, the next count running 0..remaining
        branches = remaining + 1
        parent = np.repeat(np.arange(len(heads)), branches)
        next_count = np.arange(branches.sum()) - np.repeat(np.cumsum(branches) - branches, branches)
        heads = np.hstack([heads[parent], next_count[:, None]])
        remaining = remaining[parent] - next_count
    return np.hstack([heads, remaining[:, None]])


def _exact_multinomial_p(counts: list[int], probabilities: list[float]) -> tuple[float, float]:
    """P(a count vector no more likely than the observed one), by enumerating them all."""
    from scipy import stats  # imported here: scipy is slow to import for --help

    n = sum(counts)
    vectors = _all_count_vectors(n, len(counts))
    log_pmf = stats.multinomial.logpmf(vectors, n, probabilities)
    observed_log_pmf = stats.multinomial.logpmf(counts, n, probabilities)
    as_likely = log_pmf <= observed_log_pmf + _RELATIVE_TIE_TOLERANCE
    p_value = float(np.exp(log_pmf[as_likely]).sum())
    return min(1.0, p_value), float(np.exp(observed_log_pmf))


def _pool_sparse(categories: list, expected_counts: list[float]) -> list[list[int]]:
    """Group cell indices so every group is expected at least `MIN_EXPECTED_COUNT` times.

    Sparse cells are merged smallest first; a pooled group still short of the minimum joins
    the smallest large cell.
    """
    order = sorted(range(len(categories)), key=lambda index: expected_counts[index])
    groups: list[list[int]] = []
    pending: list[int] = []
    pending_total = 0.0
    for index in order:
        if expected_counts[index] >= MIN_EXPECTED_COUNT and not pending:
            groups.append([index])
            continue
        pending.append(index)
        pending_total += expected_counts[index]
        if pending_total >= MIN_EXPECTED_COUNT:
            groups.append(pending)
            pending, pending_total = [], 0.0
    if pending:
        if groups:
            smallest = min(range(len(groups)), key=lambda g: sum(expected_counts[i] for i in groups[g]))
            groups[smallest] = groups[smallest] + pending
        else:
            groups.append(pending)
    return groups


def goodness_of_fit(
    expected: Mapping[Hashable, Fraction] | Distribution,
    observed: Mapping[Hashable, int],
    *,
    alpha: float = DEFAULT_ALPHA,
    test: str = "auto",
    field: str = "observed",
) -> FitReport:
    """Test observed counts against exact probabilities.

    The test is chosen by the counts (see the module's docstring): an exact multinomial
    test for few samples, Pearson's chi-square or the G test otherwise, with sparse outcomes
    pooled.

    Parameters
    ----------
    expected : mapping of outcome to Fraction, or Distribution
        Each outcome's exact probability (summing to exactly 1).
    observed : mapping of outcome to int
        Counts per outcome; outcomes may be given as their text, as read from a CSV file.
    alpha : float, default 0.01
        The test's level.
    test : {"auto", "exact", "chi-square", "g-test"}
        Which test; ``"auto"`` chooses.
    field : str, default "observed"
        The name errors give the counts.

    Returns
    -------
    FitReport
        The p-value, the verdict and one row per outcome.

    Raises
    ------
    InputError
        Bad counts (or counts adding up past 1e15), no samples, an outcome the exact law
        does not have, an *alpha* outside (0, 1) or an unknown *test*.

    Examples
    --------
    >>> report = goodness_of_fit({"win": Fraction(1, 2), "loss": Fraction(1, 2)},
    ...                          {"win": 80, "loss": 20})
    >>> report.fits
    False
    >>> report.verdict.split(" (")[0]
    "does not fit: 'win' is 6.0 standard errors above the exact value"
    """
    if not 0 < alpha < 1:
        raise InputError("alpha", f"must be strictly between 0 and 1, got {alpha}")
    if test not in TESTS:
        raise InputError("test", f"must be one of {', '.join(TESTS)}, got {test!r}")
    probabilities = _exact_probabilities(expected)
    counts = _observed_counts(probabilities, observed, field)
    n = sum(counts.values())
    if n == 0:
        raise InputError(field, "no samples: every count is 0")
    rows = tuple(
        OutcomeRow(
            category=category,
            observed=counts[category],
            expected_count=n * float(probabilities[category]),
            probability=probabilities[category],
            observed_share=counts[category] / n,
            z=_z_score(counts[category], n, probabilities[category]),
        )
        for category in probabilities
    )

    def report(p_value, statistic, statistic_name, dof, test_name, pooled=()):
        return FitReport(
            p_value=float(p_value),
            statistic=statistic,
            statistic_name=statistic_name,
            dof=dof,
            test=test_name,
            alpha=alpha,
            n=n,
            rows=rows,
            pooled=tuple(pooled),
        )

    if any(row.impossible for row in rows):
        return report(0.0, None, "", None, IMPOSSIBLE_TEST)
    possible = [row for row in rows if row.probability > 0]
    if len(possible) == 1:
        return report(1.0, None, "", None, "none (only one outcome is possible)")
    chosen = test
    if test == "auto":
        exact_possible = len(possible) == 2 or _count_vectors(n, len(possible)) <= EXACT_LIMIT
        chosen = "exact" if exact_possible else "chi-square"
    if chosen == "exact":
        return report(*_exact_test(possible, n))
    return report(*_pooled_test(possible, n, chosen))


def _exact_test(possible: list[OutcomeRow], n: int) -> tuple:
    """(p-value, P(observed counts), its name, None, test name) of the exact test."""
    from scipy import stats  # imported here: scipy is slow to import for --help

    cell_counts = [row.observed for row in possible]
    cell_probabilities = [float(row.probability) for row in possible]
    if len(possible) == 2:
        result = stats.binomtest(cell_counts[0], n, cell_probabilities[0])
        observed_probability = float(stats.binom.pmf(cell_counts[0], n, cell_probabilities[0]))
        return result.pvalue, observed_probability, "P(observed counts)", None, "exact binomial"
    if _count_vectors(n, len(possible)) > EXACT_LIMIT:
        raise InputError(
            "test",
            f"the exact test would enumerate "
            f"{_count_vectors(n, len(possible)):,} count vectors, past the "
            f"limit of {EXACT_LIMIT:,}; use chi-square or g-test",
        )
    p_value, observed_probability = _exact_multinomial_p(cell_counts, cell_probabilities)
    return p_value, observed_probability, "P(observed counts)", None, "exact multinomial"


def _pooled_test(possible: list[OutcomeRow], n: int, chosen: str) -> tuple:
    """(p-value, statistic, its name, dof, test name, pooled groups) of Pearson's chi-square
    (``chosen == "chi-square"``) or the G-test, sparse outcomes pooled first."""
    from scipy import stats  # imported here: scipy is slow to import for --help

    cell_counts = [row.observed for row in possible]
    expected_counts = [n * float(row.probability) for row in possible]
    groups = _pool_sparse([row.category for row in possible], expected_counts)
    pooled = [tuple(possible[i].category for i in group) for group in groups if len(group) > 1]
    if len(groups) < 2:
        return (1.0, None, "", None, "none (too few samples to test: all outcomes pooled into one)", pooled)
    group_observed = np.array([sum(cell_counts[i] for i in group) for group in groups], float)
    # exact group probabilities, so pooled expected counts add up to n exactly
    group_probability = [sum((possible[i].probability for i in group), Fraction(0)) for group in groups]
    group_expected = np.array([n * float(p) for p in group_probability])
    group_expected *= n / group_expected.sum()
    lambda_ = "pearson" if chosen == "chi-square" else "log-likelihood"
    statistic, p_value = stats.power_divergence(group_observed, group_expected, lambda_=lambda_)
    name = "chi-square" if chosen == "chi-square" else "G"
    test_name = "Pearson chi-square" if chosen == "chi-square" else "G-test"
    return p_value, float(statistic), name, len(groups) - 1, test_name, pooled


# ----- reading samples -----------------------------------------------------------------------


#: the longest line of a samples file read (a row of a simulator's CSV is under 200 bytes)
MAX_CSV_LINE_CHARACTERS = 1_000_000
#: most distinct values one column may hold (every exact law here has far fewer outcomes)
MAX_DISTINCT_VALUES = 100_000
#: the longest value counted (an outcome's name or a count)
MAX_VALUE_CHARACTERS = 200


def _bounded_lines(handle, path, field: str):
    """The file's lines, each read with a length limit: a file of one endless line stops
    with a message instead of growing one string without end."""
    number = 0
    while True:
        line = handle.readline(MAX_CSV_LINE_CHARACTERS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_CSV_LINE_CHARACTERS:
            raise TooLargeError(
                field,
                f"{path} line {number} is longer than {MAX_CSV_LINE_CHARACTERS:,} "
                "characters; a samples file has one short row per sample",
            )
        yield line


def _check_new_value(value: str, distinct: int, path, line: int, column: str, field: str) -> None:
    """A value not seen before in the column: refused past `MAX_VALUE_CHARACTERS`, or when
    the column already holds `MAX_DISTINCT_VALUES` others (its counts would not be a law's)."""
    if len(value) > MAX_VALUE_CHARACTERS:
        raise InputError(
            field,
            f"{path} line {line}: a value of {len(value):,} characters in column "
            f"{column!r}; at most {MAX_VALUE_CHARACTERS}",
        )
    if distinct >= MAX_DISTINCT_VALUES:
        raise TooLargeError(
            field,
            f"{path} column {column!r} has more than {MAX_DISTINCT_VALUES:,} distinct "
            f"values (line {line:,}); samples of an exact law have far fewer",
        )


def read_sample_column(path: str | Path, column: str, *, field: str = "samples", allow_empty: bool = False) -> Counter:
    r"""Count the values of one column of a CSV file with a header row.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    column : str
        The column to count.
    field : str, default "samples"
        The name errors give the file.
    allow_empty : bool, default False
        Count an empty value as ``""`` instead of refusing it.

    Returns
    -------
    collections.Counter
        Value -> count.

    Raises
    ------
    InputError
        Naming the file, the column and the line: a missing or empty file, no such column
        (the message lists the columns there are), a row with too few or too many fields, or
        an empty value (unless *allow_empty*).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as handle:
    ...     _ = handle.write("outcome,rounds\nwin,3\nloss,2\nwin,4\n")
    >>> read_sample_column(handle.name, "outcome")
    Counter({'win': 2, 'loss': 1})
    >>> os.unlink(handle.name)
    """
    path = Path(path)
    handle = open_text_file(path, field, "CSV", MAX_CSV_BYTES, newline="")
    counts: Counter = Counter()
    try:
        with handle:
            reader = csv.reader(_bounded_lines(handle, path, field))
            header = next(reader, None)
            if header is None:
                raise InputError(field, f"{path} is empty (expected a header row with a {column!r} column)")
            header = [name.strip() for name in header]
            if column not in header:
                raise InputError(field, f"{path} has no column {column!r} (its columns: {', '.join(header) or 'none'})")
            position = header.index(column)
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise InputError(
                        field, f"{path} line {reader.line_num}: {len(row)} fields, but the header has {len(header)}"
                    )
                value = row[position].strip()
                if not value and not allow_empty:
                    raise InputError(field, f"{path} line {reader.line_num}: empty value in column {column!r}")
                if value not in counts:
                    _check_new_value(value, len(counts), path, reader.line_num, column, field)
                counts[value] += 1
    except UnicodeDecodeError:
        raise InputError(field, f"{path} is not a UTF-8 text file") from None
    except csv.Error as error:
        raise InputError(field, f"{path} is not valid CSV: {error}") from None
    except OSError as error:
        raise InputError(field, f"cannot read {path}: {error.strerror or error}") from None
    if not counts:
        raise InputError(field, f"{path} has a header but no sample rows")
    return counts


def read_sample_columns(path: str | Path, columns: Iterable[str], *, field: str = "samples") -> dict[str, Counter]:
    """Count the values of several columns of a CSV file.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    columns : iterable of str
        The columns wanted; those the file lacks are left out of the answer.
    field : str, default "samples"
        The name errors give the file.

    Returns
    -------
    dict of str to collections.Counter
        Column -> value -> count, an empty value counted as ``""``.

    Raises
    ------
    InputError
        As for `read_sample_column`.
    """
    try:
        with open_text_file(path, field, "CSV", MAX_CSV_BYTES, newline="") as handle:
            header = [name.strip() for name in next(csv.reader(_bounded_lines(handle, path, field)), [])]
    except (OSError, UnicodeDecodeError, csv.Error, InputError):
        header = []  # read_sample_column names the problem when the outcome column is read
    present = [column for column in columns if column in header]
    return {column: read_sample_column(path, column, field=field, allow_empty=True) for column in present}


def fit_sample_columns(
    path: str | Path,
    headline: str,
    headline_law: Mapping,
    column_laws: Mapping,
    *,
    alpha: float = DEFAULT_ALPHA,
    test: str = "auto",
    field: str = "samples",
) -> dict:
    """Test the CSV file's *headline* column against *headline_law* and every further column
    it has with a law in *column_laws*, each at ``alpha / k`` for k columns (Bonferroni, so
    all k together keep level alpha). A value a column's law never gives counts as an
    impossible outcome (a misfit), not a typo. `exactdice validate` and the web page's
    Validate both test this way (`exactdice.answers.validate_samples`).

    Parameters
    ----------
    path : str or Path
        The CSV file of samples, with a header row.
    headline : str
        The outcome column.
    headline_law : mapping
        Its exact law, {outcome: probability}.
    column_laws : mapping of str to ColumnDistribution
        The exact laws of further columns (those the file has are tested).
    alpha : float, default 0.01
        The significance level of all the columns together.
    test : str, default "auto"
        As for `goodness_of_fit`.
    field : str, default "samples"
        The parameter an error names.

    Returns
    -------
    dict of str to FitReport
        Each column tested, the headline first.

    Raises
    ------
    InputError
        As for `read_sample_column`, or for a bad *alpha* or *test*.
    """
    fits = {headline: (headline_law, read_sample_column(path, headline, field=field))}
    others = {name: law for name, law in column_laws.items() if name != headline}
    for name, observed in read_sample_columns(path, list(others), field=field).items():
        law = others[name]
        observed = law.fold(observed)
        expected = dict(law.probabilities)
        expected.update({value: Fraction(0) for value in observed if value not in expected})
        fits[name] = (expected, observed)
    level = alpha / len(fits)
    return {
        name: goodness_of_fit(expected, observed, alpha=level, test=test, field=field)
        for name, (expected, observed) in fits.items()
    }


def parse_counts(text: str, *, field: str = "counts") -> dict[str, int]:
    """Read ``"win=412,loss=371,tie=217"`` into ``{"win": 412, "loss": 371, "tie": 217}``.

    Parameters
    ----------
    text : str
        ``outcome=count`` pairs separated by commas.
    field : str, default "counts"
        The name errors give the text.

    Returns
    -------
    dict of str to int
        Outcome -> count.

    Raises
    ------
    InputError
        Empty text, a pair without ``=``, a count that is not a whole number >= 0, or an
        outcome given twice.

    Examples
    --------
    >>> parse_counts("win=412, loss=371,tie=217")
    {'win': 412, 'loss': 371, 'tie': 217}
    """
    counts: dict[str, int] = {}
    if not text or not text.strip():
        raise InputError(field, "empty: give counts like win=412,loss=371,tie=217")
    for item in text.split(","):
        item = item.strip()
        category, equals, number = item.rpartition("=")
        category, number = category.strip(), number.strip()
        if not equals or not category:
            raise InputError(field, f"{item!r} is not OUTCOME=COUNT (expected e.g. win=412,loss=371,tie=217)")
        if not (number.isascii() and number.isdigit()):
            raise InputError(field, f"the count of {category!r} must be a whole number >= 0, got {number!r}")
        if category in counts:
            raise InputError(field, f"outcome {category!r} is given twice")
        counts[category] = int(number)
    return counts
