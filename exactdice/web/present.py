"""What the page is sent: the answers' plain data (`exactdice.answers.shapes`, as the results
store keeps them) as JSON, exact numbers beside their decimals.

A probability is ``{"exact": "p/q", "percent": "12.34", "shown": "12.34", "decimal": ...}``:
the percentage rounded from the exact fraction, never computed in floats. Library text
names parameters between backquotes; here each is named as the page labels it
(`with_labels`).

>>> exact_json(Fraction(1, 3))
{'exact': '1/3', 'percent': '33.33', 'shown': '33.33', 'decimal': '0.3333333333'}
"""

from __future__ import annotations

import functools
import json
import re
from fractions import Fraction
from pathlib import Path

from exactdice.core.display import column_percent_text
from exactdice.core.exact import decimal_text, directed_decimal_text, fraction_text

__all__ = [
    "exact_json",
    "with_labels",
    "present",
    "chart_json",
    "table_file_json",
    "table_files",
    "WIDE_BOUNDS",
    "labels",
]

#: certified bounds further apart than this say too little to act on: the calculator flags
#: them, the tables page hatches them instead of shading them by their lower bound
WIDE_BOUNDS = Fraction(1, 5)
#: what the page says for a parameter that is no field of its forms
_NOT_FIELDS = {"max_memory": "the worker's memory (exactdice serve --worker-memory raises it)"}
_QUOTED = re.compile(r"`(\w+)`")


def exact_json(value, digits: int = 2):
    """An exact number as ``{"exact", "percent", "shown", "decimal"}`` (None stays None):
    ``percent`` is a number for bars and sums; ``shown`` what a person reads, where only an
    exact 0 or 1 reads "0" or "100" (`column_percent_text`).

    >>> exact_json(Fraction(1, 30000))["shown"], exact_json(0)["shown"]
    ('0.0033', '0')
    """
    if value is None:
        return None
    value = Fraction(value)
    return {
        "exact": fraction_text(value),
        "percent": decimal_text(100 * value, digits),
        "shown": column_percent_text(value, digits),
        "decimal": decimal_text(value, 10),
    }


@functools.cache
def labels() -> dict[str, str]:
    """Every form field's label by its parameter's name (all computations, and the fields of
    the Validate and Distribution pages and the new grid)."""
    from exactdice.answers.systems import computations
    from exactdice.web.forms import DIST_FIELDS, GRID_AXES_FIELDS, fields

    found = {"samples": "CSV file of samples", "column": "Outcome column", "alpha": "Significance (alpha)"}
    for name in computations():
        from exactdice.web.forms import get_parameters

        for field in fields(get_parameters(name)):
            found.setdefault(field.name, field.label)
    found.update({field.name: field.label for field in DIST_FIELDS + GRID_AXES_FIELDS})
    return found


def with_labels(text: str, known: dict | None = None) -> str:
    """Library text with each quoted parameter named as the page labels it (the command
    line names its flags the same way, `exactdice.cli.common.with_flags`).

    >>> with_labels("give both `player_dice` and `narrator_dice`; raise the limit with `max_states`")
    'give both "Player hand" and "Narrator hand"; raise the limit with "Max states"'
    """
    names = labels() if known is None else known

    def label(match):
        name = match[1]
        if name in _NOT_FIELDS:
            return _NOT_FIELDS[name]
        return f'"{names[name]}"' if name in names else match[0]

    return _QUOTED.sub(label, text)


# ----- answers -----------------------------------------------------------------------------------


def _outcome_rows(rows) -> list[dict]:
    return [{"outcome": name, "p": exact_json(p), "words": words} for name, p, words in rows]


def chart_json(chart: dict) -> dict:
    """A chart's data with each point's exact value (a percentage for probabilities)."""
    from exactdice.core.display import percent_text, significant_text

    def point(x, y):
        value = (
            exact_json(y, 4)
            if chart["probability"]
            else {"exact": fraction_text(Fraction(y)), "value": decimal_text(Fraction(y), 4)}
        )
        # the label `--plot` writes beside a point: three significant digits
        value["label"] = percent_text(Fraction(y)) if chart["probability"] else significant_text(Fraction(y))
        return {"x": x, "y": value}

    return {
        **{
            key: chart[key]
            for key in (
                "title",
                "x_label",
                "y_label",
                "probability",
                "marked_x",
                "marked_label",
                "note",
                "steps",
                "labels",
                "full_scale",
                "label_points",
            )
        },
        "curves": [
            {
                "label": curve["label"],
                "colour": curve.get("colour"),
                "points": [point(x, y) for x, y in zip(curve["xs"], curve["ys"])],
            }
            for curve in chart["curves"]
        ],
    }


def _in_words(provenance: dict) -> dict:
    """How both sides played and under which reading, in words (a Karbon answer)."""
    from exactdice.karbon import Rules, parse_narrator_policy, parse_player_policy

    policies, ruleset = provenance["policies"], provenance["rules"]
    return {
        "player": parse_player_policy(policies["player"]).words(),
        "narrator": parse_narrator_policy(policies["narrator"]).words(),
        "rules": Rules(**ruleset).differences(),
    }


def _outcomes(data: dict) -> dict:
    provenance = data["provenance"]
    shown = {
        "kind": "outcomes",
        "exact": data["exact"],
        "outcomes": _outcome_rows(data["outcomes"]),
        "expectations": {name: exact_json(value) for name, value in data["expectations"].items()},
        "intervals": data["intervals"],
        "tolerance": data["tolerance"],
        "draws": data["draws"],
        "advice": data["advice"],
        "charts": {name: chart_json(chart) for name, chart in data["charts"].items()},
        "provenance": provenance,
        "seconds": _seconds(provenance),
    }
    if provenance["system"] == "karbon":
        shown["in_words"] = _in_words(provenance)
    return shown


def _seconds(provenance: dict) -> str:
    """The work's time in seconds, as a person reads it ("0.52", "12.3", "140")."""
    seconds = provenance["milliseconds"] / 1000
    return f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"


def _bounds(data: dict) -> dict:
    lower, upper = Fraction(data["lower"]), Fraction(data["upper"])
    stopped, too_large = data["stopped"], data["too_large"]
    strategy = data["strategy_outcomes"]
    from exactdice.karbon.system import OUTCOME_WORDS

    return {
        "kind": "bounds",
        "objective": data["objective"],
        "lower": {
            "decimal": directed_decimal_text(lower, 4, up=False),
            "exact": fraction_text(lower) if data["lower_kind"] == "exact" else None,
        },
        "upper": {"decimal": directed_decimal_text(upper, 4, up=True)},
        "lower_kind": data["lower_kind"],
        "gap": f"{float(upper - lower):.4f}",
        "precision": f"{float(data['precision']):g}",
        "wide": upper - lower > WIDE_BOUNDS,
        "reached": data["reached"],
        "stopped": None if stopped is None else with_labels(stopped["message"]),
        "too_large": None if too_large is None else with_labels(too_large["message"]),
        "explored": data["explored"],
        "seconds": _seconds(data["provenance"]),
        "fixed_value": exact_json(data["fixed_value"]),
        "draws": data["draws"],
        "advice": data["advice"],
        "strategy_outcomes": None
        if strategy is None
        else _outcome_rows([(name, strategy[name], OUTCOME_WORDS[name]) for name in strategy]),
        "provenance": data["provenance"],
        "in_words": _in_words(data["provenance"]),
    }


def _validation(data: dict) -> dict:
    """A fit report with each outcome's exact probability (keyed as in the CSV column), each
    column's report and the verdict over all of them."""
    return {
        "kind": "validation",
        "headline": data["headline"],
        "report": data["columns"][data["headline"]],
        "columns": data["columns"],
        "fits": data["fits"],
        "exact": {str(name): exact_json(p) for name, p in data["law"]},
    }


def _grid(data: dict) -> dict:
    """A grid made on the page (`exactdice.tables.grid.TableGrid.to_dict`) as the page's heatmap."""
    probability = set(data.get("probability_metrics") or [])
    return {
        "title": data["title"],
        "row_label": data["row_label"],
        "column_label": data["column_label"],
        "rows": data["rows"],
        "columns": data["columns"],
        "metrics": [
            {
                "name": metric["name"],
                "probability": metric["name"] in probability,
                "cells": [
                    [_stored_cell(value, metric["name"] in probability) for value in row] for row in metric["values"]
                ],
            }
            for metric in data["metrics"]
        ],
    }


def _what_if(data: dict) -> dict:
    """The what-if strip: one chart per stepped setup parameter, and what could not be solved."""
    return {
        "kind": "what_if",
        "charts": [chart_json(chart) for chart in data["charts"]],
        "base": {metric: exact_json(value) for metric, value in data["base"].items()},
        "skipped": [[name, with_labels(reason)] for name, reason in data["skipped"]],
    }


def _dist(data: dict) -> dict:
    """A distribution: each outcome with its exact P(exactly), P(at least) and P(at most), the mean."""
    mean = data["mean"]
    return {
        "expression": data["expression"],
        "outcomes": [
            {"outcome": outcome, "p": exact_json(p), "at_least": exact_json(at_least), "at_most": exact_json(at_most)}
            for outcome, p, at_least, at_most in data["outcomes"]
        ],
        "mean": exact_json(mean),
        "mean_value": None if mean is None else fraction_text(mean),
    }


_BY_KIND = {
    "outcomes": _outcomes,
    "bounds": _bounds,
    "validation": _validation,
    "grid": _grid,
    "what_if": _what_if,
    "dist": _dist,
}


def present(data: dict) -> dict:
    """An answer's plain data (as the store keeps it) as the page's JSON, by its ``kind``."""
    return _BY_KIND[data["kind"]](data)


# ----- the canonical tables ---------------------------------------------------------------------


def table_files(folder: Path | None) -> dict[str, Path]:
    """Table id (``system/name``) -> its JSON file, for every grid table under *folder*:
    each JSON is asked what it is (its ``format``); the sensitivity tables, other JSON and
    unreadable files are not listed."""
    from exactdice.tables.export import JSON_FORMAT_NAME

    if folder is None:
        return {}
    return {
        path.relative_to(folder).with_suffix("").as_posix(): path
        for path in sorted(folder.glob("*/**/*.json"))
        if _json_format(path) == JSON_FORMAT_NAME
    }


def _json_format(path: Path) -> str | None:
    """The ``format`` a JSON file says it has, or None (not JSON, not an object, unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("format") if isinstance(data, dict) else None


def table_file_json(path: Path) -> dict:
    """A canonical tables file as the page's JSON: each cell exact, with its percentage
    (probabilities) or its decimal (other metrics), rounded from the exact value."""
    data = json.loads(path.read_text(encoding="utf-8"))
    tables = []
    for table in data["tables"]:
        metrics = [
            {
                "name": metric["name"],
                "probability": metric.get("probability", False),
                "cells": [
                    [_stored_cell(text, metric.get("probability", False)) for text in row] for row in metric["exact"]
                ],
            }
            for metric in table["metrics"]
        ]
        tables.append(
            {
                "title": table["title"],
                "row_label": table["row_label"],
                "rows": table["rows"],
                "column_label": table["column_label"],
                "columns": table["columns"],
                "legend": table.get("legend", {}),
                "metrics": metrics,
            }
        )
    return {"tables": tables, "wide_bounds": decimal_text(WIDE_BOUNDS, 1)}


def _stored_cell(stored, probability: bool) -> dict | None:
    """A stored cell: ``"p/q"``, None, or certified bounds ``{"lower", "upper"}`` (shown
    "lower-upper"; the page shades a cell by the number its text starts with, here the lower
    bound, as the exporters do, unless the bounds are ``wide``: `WIDE_BOUNDS`)."""
    if stored is None:
        return None
    if isinstance(stored, dict):
        from exactdice.tables.export import bounds_text
        from exactdice.tables.grid import cell_from_data

        bounds = cell_from_data(stored)
        shown = bounds_text(bounds, percent=probability)
        return {
            "exact": f"[{stored['lower']}, {stored['upper']}]",
            "lower": stored["lower"],
            "upper": stored["upper"],
            "wide": bounds.upper - bounds.lower > WIDE_BOUNDS,
            ("percent" if probability else "value"): shown,
        }
    value = Fraction(stored)
    if probability:
        return exact_json(value, 1)
    return {"exact": fraction_text(value), "value": decimal_text(value, 2)}
