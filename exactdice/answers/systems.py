"""Any registered system's requests: its exact answer, and a simulator's samples against it.

`computations` lists what a person can ask of the registry, one entry per system or
variant (Karst's rolls: ``karst-attack``), with its task in words; `system_answer` gives one
computation's exact outcomes (with its pictures), `validate_samples` tests samples (a CSV
file, or counts) against its exact laws. Karbon answers through `exactdice.answers.karbon`.

>>> answer = system_answer("contingency", {"dice": "d6,d8,d10", "difficulty": 6})
>>> answer.outcomes["success"], answer.words["success-with-condition"], sorted(answer.charts)
(Fraction(13, 48), 'success with a condition', ['chance'])
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdice.answers.shapes import Outcomes, Provenance, Validation
from exactdice.errors import InputError
from exactdice.progress import ProgressCallback

__all__ = ["Computation", "computations", "computation", "system_answer", "validate_samples", "plain_value"]


@dataclass(frozen=True)
class Computation:
    """One thing a person can ask of the registry: a system, or one variant of it."""

    name: str  # "contingency", "karst-attack"
    system: str  # the registry's name
    variant: str | None
    task: str  # in words: "Contingency skill check"

    def rules_system(self):
        """The registry's object for it."""
        from exactdice.systems import get_system

        system = get_system(self.system)
        return system.variants[self.variant] if self.variant else system


def computations() -> dict[str, Computation]:
    """Every computation of the registry by name, in registry order (variants as
    ``<system>-<variant>``).

    Returns
    -------
    dict of str to Computation
        Each computation, with its task in words.

    Examples
    --------
    >>> computations()["karst-attack"].task
    'Karst attack'
    """
    from exactdice.systems import get_system, system_names

    found = {}
    for name in system_names():
        system = get_system(name)
        for variant, member in system.variants.items() if system.variants else [(None, system)]:
            key = f"{name}-{variant}" if variant else name
            found[key] = Computation(key, name, variant, getattr(member, "task", "") or key)
    return found


def computation(name: str) -> Computation:
    """The computation called *name*; an unknown one is an `InputError` listing them."""
    known = computations()
    if name not in known:
        raise InputError("system", f"unknown system {name!r}; known: {', '.join(known)}")
    return known[name]


def plain_value(value):
    """A parameter's value as plain JSON data (a tuple as a list, a path as text).

    >>> plain_value(("d6", 2))
    ['d6', 2]
    """
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [plain_value(item) for item in value]
    return str(value)


def system_answer(name: str, values: Mapping[str, Any], *, progress: ProgressCallback | None = None) -> Any:
    """One computation's exact outcomes (checked to sum to exactly 1), in words, with the
    pictures its system draws (`exactdice.systems.DeclaredSystem.charts`).

    Parameters
    ----------
    name : str
        The computation (`computations`).
    values : mapping
        Its parameters by name (missing ones take their defaults).
    progress : callable, optional
        Given progress reports (a Karbon contest's).

    Returns
    -------
    Outcomes or Bounds
        The exact law; Karbon answers by `exactdice.answers.karbon_odds`, which may give bounds.

    Examples
    --------
    >>> system_answer("karst-attack", {"defense": 12, "modifier": 3}).words
    {'hit': 'the attack hits', 'miss': 'the attack misses'}
    """
    found = computation(name)
    if found.system == "karbon":
        from exactdice.answers.karbon import karbon_odds

        return karbon_odds(values, progress=progress)
    declared = found.rules_system()
    began = time.perf_counter()
    setup, rules = declared.setup(values), declared.rules(values)
    law = {str(outcome): Fraction(p) for outcome, p in declared.exact(setup, rules).items()}
    words = getattr(declared, "outcome_words", None) or str
    charts = declared.charts(setup, rules) if getattr(declared, "charts", None) else {}
    rules_data = rules.to_dict() if hasattr(rules, "to_dict") else {}
    return Outcomes(
        law,
        Provenance(
            name,
            "exact",
            {key: plain_value(value) for key, value in setup.items()},
            rules_data,
            seconds=time.perf_counter() - began,
        ),
        words={outcome: words(outcome) for outcome in law},
        charts=charts,
    )


def validate_samples(
    name: str,
    values: Mapping[str, Any],
    *,
    samples: Any = None,
    counts: str | None = None,
    column: str | None = None,
    alpha: float | None = None,
    test: str = "auto",
    law: Mapping | None = None,
    progress: ProgressCallback | None = None,
) -> Validation:
    """Do a simulator's samples fit the exact laws of computation *name* with these *values*?

    Parameters
    ----------
    name : str
        The computation (`computations`).
    values : mapping
        Its parameters (the setup the samples were simulated with).
    samples : path, optional
        A CSV file with a header row: its outcome column and every further column with an
        exact law are tested, each at alpha / k for k columns (or the one *column* named).
    counts : str, optional
        ``outcome=count,...`` instead of a file (the outcome column only).
    column : str, optional
        Test this column alone.
    alpha : float, default 0.01
        The significance level.
    test : str, default "auto"
        `exactdice.validation.goodness_of_fit`'s test.
    law : mapping, optional
        The outcome column's exact law, when known already (a results store's).
    progress : callable, optional
        Given progress reports while the exact law is solved.

    Returns
    -------
    Validation
        Each column's `exactdice.validation.FitReport`, the outcome column first.
    """
    from exactdice.validation import DEFAULT_ALPHA, fit_sample_columns

    alpha = DEFAULT_ALPHA if alpha is None else alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise InputError("alpha", f"must be a number strictly between 0 and 1, got {alpha!r}")
    if not 0 < alpha < 1:  # the level asked, before it is shared among the columns
        raise InputError("alpha", f"must be strictly between 0 and 1, got {alpha:g}")
    if (samples is None) == (counts is None):
        raise InputError("samples", "give exactly one of `samples` FILE.csv or `counts` OUTCOME=N,...")
    if samples is not None:  # a device, FIFO or missing file is refused before any solve
        from exactdice.input_files import MAX_CSV_BYTES, check_input_file

        check_input_file(samples, "samples", "CSV", MAX_CSV_BYTES)
    found = computation(name)
    declared = found.rules_system()
    setup, rules = declared.setup(values), declared.rules(values)
    headline = declared.outcome_column(setup)
    if samples is not None and column is None:  # every column with a law, from one solve where it can
        both = _column_laws(declared, setup, rules, samples, headline, law is None)
        law = dict(law) if law is not None else both[0] or _outcome_law(found, declared, values, setup, rules, progress)
        reports = fit_sample_columns(samples, headline, law, both[1], alpha=alpha, test=test, field="samples")
    else:
        law = dict(law) if law is not None else _outcome_law(found, declared, values, setup, rules, progress)
        reports = _one_column(declared, setup, rules, law, samples, counts, column or headline, alpha, test)
    return Validation(name, headline, reports, law)


def _outcome_law(found: Computation, declared, values, setup, rules, progress) -> dict:
    """The outcome column's exact law; a Karbon contest's within its limits, never bounds."""
    if found.system != "karbon":
        return {outcome: Fraction(p) for outcome, p in declared.exact(setup, rules).items()}
    from exactdice.answers.karbon import karbon_odds

    odds = karbon_odds(dict(values, max_seconds=0), progress=progress)
    return karbon_law(odds.outcomes)


def karbon_law(outcomes: Mapping) -> dict:
    """A contest's outcomes named as the simulator's ``outcome`` column names them."""
    return {
        "win": outcomes["win"],
        "loss": outcomes["loss"],
        "tie": outcomes["tie"],
        "unfinished": outcomes["never_ends"],
    }


def _column_laws(declared, setup, rules, samples, headline: str, with_outcome: bool = False) -> tuple:
    """``(the outcome column's law or None, the laws of the file's further columns)``: none
    asked for when it has no further columns; both from one solve where the system offers
    ``exact_laws`` and *with_outcome* asks for the outcome's law too."""
    if not set(_header(samples)) - {headline}:
        return None, {}
    both = getattr(declared, "exact_laws", None)
    if both is not None:
        law, columns = both(setup, rules)
        return (dict(law) if with_outcome else None), dict(columns)
    columns = getattr(declared, "column_distributions", None)
    return None, (dict(columns(setup, rules)) if columns is not None else {})


def _header(path) -> list[str]:
    """The file's column names, as far as its first line reads (a bad file is reported by
    the reader that counts it)."""
    import csv

    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return [name.strip() for name in next(csv.reader([handle.readline(1_000_000)]), [])]
    except (csv.Error, OSError, UnicodeDecodeError):
        return []


def _one_column(declared, setup, rules, law, samples, counts, column: str, alpha: float, test: str) -> dict:
    """One column's report: the outcome column (from the file or the counts), or a further
    column of the file with an exact law."""
    from exactdice.validation import goodness_of_fit, parse_counts, read_sample_column, read_sample_columns

    field = "samples" if samples is not None else "counts"
    others = {}
    if column != declared.outcome_column(setup):
        others = _column_laws(declared, setup, rules, samples, "")[1] if samples is not None else {}
    if column in others:
        read = read_sample_columns(samples, [column])
        if column not in read:
            read_sample_column(samples, column)  # names the missing column
        column_law = others[column]
        observed = column_law.fold(read[column])
        # a value the exact law never gives is an impossible outcome (a misfit), not a typo
        expected = dict(column_law.probabilities)
        expected.update({value: Fraction(0) for value in observed if value not in expected})
    else:
        if samples is None and column != declared.outcome_column(setup):
            raise InputError("column", f"column {column!r} is read from `samples` (a CSV file)")
        observed = read_sample_column(samples, column) if samples is not None else parse_counts(counts)
        expected = law
    return {column: goodness_of_fit(expected, observed, alpha=alpha, test=test, field=field)}
