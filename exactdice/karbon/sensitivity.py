"""What moves the odds: a Karbon setup against each one-step change, solved exactly.

The changes (`sensitivity_variants`): every setup parameter one step down and up
(Ability, Challenge, Consequence W, Peril P, Fortune F, Fallout K) and Training flipped;
every knob of the rules set to each other value; every preference of a fixed player or
narrator changed one at a time (each other value; for an order, each other option moved
to the front). A change the setup cannot take (Challenge 0, a pool too small for the
draw) is listed as skipped with the reason, and so is one whose exact game passes the
state budget (``max_states``: a fixed player who risks every round grows hands, and
explores millions of states on the default pool where the base explores hundreds).

Each variant is one exact contest (`exactdice.karbon.tables.contest_cell`), solved through
the sweep (local pool or Dask, cached in the store). The effect of a change is the exact
difference of P(win), P(loss), P(tie) and expected rounds from the base setup; rows are
sorted by the largest move of any of the three probabilities, largest first.

>>> base = base_arguments(ability=1, challenge=1, consequence=1, pool="d8,d8,d8", reserve="none")
>>> report = karbon_sensitivity(base, store=None, workers=1)
>>> [row.name for row in report.rows if row.name.startswith("rule objective")]
['rule objective=win']
>>> [row.deltas["P(win)"] for row in report.rows if row.name == "rule objective=win"]
[Fraction(0, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from exactdice.errors import InputError, TooLargeError
from exactdice.karbon.dice import dice_text, parse_dice_list
from exactdice.karbon.policies import BREAK_OPTIONS, GLITCH_OPTIONS, parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import RULE_CHOICES, Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE, setup_from_cell
from exactdice.output_files import write_output
from exactdice.tables.jobs import ruleset_data
from exactdice.tables.store import ResultKey
from exactdice.tables.sweep import SweepCell, sweep

__all__ = [
    "Variant",
    "SensitivityRow",
    "SensitivityReport",
    "base_arguments",
    "sensitivity_variants",
    "karbon_sensitivity",
    "solve_variant",
    "METRICS",
    "tornado_chart",
    "rules_sensitivity",
    "SENSITIVITY_GRID",
    "DEFAULT_VARIANT_STATES",
    "STEPPED_LEAST",
    "steps_below_least",
]

#: each contest's state budget: the largest fixed-policy corner of the rules' range that
#: solves (A1 v C8, W7) explores 75,000 states; `risk=always` on the default pool, millions
DEFAULT_VARIANT_STATES = 100_000

METRICS = ("P(win)", "P(loss)", "P(tie)", "expected rounds")
#: setup parameter -> (label, least value)
_STEPPED = {
    "ability": ("Ability", 0),
    "challenge": ("Challenge", 1),
    "consequence": ("Consequence W", 1),
    "peril": ("Peril P", 0),
    "fortune": ("Fortune F", 0),
    "fallout": ("Fallout K", 0),
}
_PLAYER_PREFERENCES = {
    "draw": "dice",
    "risk": ("never", "always"),
    "risk_take": "dice",
    "break": BREAK_OPTIONS,
    "glitch": GLITCH_OPTIONS,
    "sideswipe_take": ("dice", "chips"),
}
#: setup parameter -> its least value
STEPPED_LEAST = {name: least for name, (_, least) in _STEPPED.items()}
_NARRATOR_PREFERENCES = {
    "draw": "dice",
    "hurt": ("condition", "injury"),
    "plans": ("peril", "dice"),
    "plans_take": "dice",
    "give": "dice",
}
_ORDERED = {"break", "glitch"}


@dataclass(frozen=True)
class Variant:
    """One change of the base setup: its group, its name and the contest it gives."""

    group: str  # "setup", "rule", "player" or "narrator"
    name: str
    arguments: dict


@dataclass(frozen=True)
class SensitivityRow:
    """A variant's exact values and their differences from the base setup; ``setting`` is
    ``(parameter, value)`` for a stepped setup parameter (Ability, Challenge, ...), else ()."""

    group: str
    name: str
    values: dict
    deltas: dict
    setting: tuple = ()

    @property
    def effect(self) -> Fraction:
        """The largest move of P(win), P(loss) or P(tie)."""
        return max(abs(self.deltas[metric]) for metric in METRICS[:3])


@dataclass
class SensitivityReport:
    """The base values, the rows (largest effect first) and the changes that were skipped."""

    base: dict
    base_values: dict
    rows: list[SensitivityRow]
    skipped: list[tuple[str, str]] = field(default_factory=list)


def base_arguments(
    ability: int,
    challenge: int,
    consequence: int = 2,
    peril: int = 0,
    fortune: int = 0,
    fallout: int = 0,
    training: bool = False,
    pool: str = dice_text(DEFAULT_POOL),
    reserve: str = dice_text(DEFAULT_RESERVE),
    player: str = "fixed",
    narrator: str = "fixed",
    rules: tuple = (),
) -> dict:
    """The base setup as `contest_cell` arguments, policies and rules written out in full.

    >>> base_arguments(1, 2)["rules"][:1]
    ('peril_chips=stack',)
    """
    ruleset = Rules().with_rules(rules)
    return {
        "ability": ability,
        "challenge": challenge,
        "consequence": consequence,
        "peril": peril,
        "fortune": fortune,
        "fallout": fallout,
        "training": training,
        "pool": dice_text(parse_dice_list(pool, "pool")),
        "reserve": dice_text(parse_dice_list(reserve, "reserve")),
        "player": parse_player_policy(player).text(),
        "narrator": parse_narrator_policy(narrator).text(),
        "rules": tuple(f"{name}={value}" for name, value in ruleset.to_dict().items()),
    }


def _check(arguments: dict) -> None:
    """Raise InputError if the arguments are not a contest that can start."""
    setup = setup_from_cell(arguments)
    player, narrator = parse_player_policy(arguments["player"]), parse_narrator_policy(arguments["narrator"])
    Rules().with_rules(arguments["rules"])
    if player.kind == "fixed" and narrator.kind != "optimal" and narrator.kind != "kind":
        setup.start(player, narrator)


def _alternatives(current: str, kind) -> list[str]:
    """Other values of one preference: each other value, or each other option moved to the front."""
    if kind == "dice" or isinstance(kind, tuple) and current.count(">"):
        options = current.split(">")
        return [">".join([option] + [other for other in options if other != option]) for option in options[1:]]
    return [value for value in kind if value != current]


def _with_preference(policy_text: str, key: str, value: str) -> str:
    prefix = ""
    if policy_text.startswith("random;"):
        prefix, policy_text = "random;", policy_text[len("random;") :]
    pairs = [part.partition("=") for part in policy_text.split(";")]
    return prefix + ";".join(f"{name}={value if name == key else old}" for name, _, old in pairs)


def sensitivity_variants(base: dict, groups=None) -> tuple[list[Variant], list[tuple[str, str]]]:
    """(variants, skipped changes with the reason) of a base setup (`base_arguments`); only
    the *groups* of change named (``setup``, ``rule``, ``player``, ``narrator``) when given."""
    candidates = _setup_variants(base) + _rule_variants(base)
    for side, preferences in (("player", _PLAYER_PREFERENCES), ("narrator", _NARRATOR_PREFERENCES)):
        candidates += _preference_variants(base, side, preferences)
    if groups is not None:
        candidates = [variant for variant in candidates if variant.group in groups]
    variants, skipped = [], []
    for variant in candidates:
        try:
            _check(variant.arguments)
        except InputError as error:
            skipped.append((variant.name, str(error)))
        else:
            variants.append(variant)
    return variants, skipped


def _setup_variants(base: dict) -> list[Variant]:
    """Each stepped setup parameter one step down and up, and Training flipped."""
    variants = [
        Variant("setup", f"{label} {base[name] + step} ({step:+d})", {**base, name: base[name] + step})
        for name, (label, _) in _STEPPED.items()
        for step in (-1, 1)
    ]
    variants.append(
        Variant("setup", f"Training {'off' if base['training'] else 'on'}", {**base, "training": not base["training"]})
    )
    return variants


def steps_below_least(base: dict) -> set[str]:
    """The names of the setup changes that step a parameter below its least value (values
    that do not exist, as opposed to changes the setup cannot take).

    >>> sorted(steps_below_least(base_arguments(1, 1)))
    ['Challenge 0 (-1)', 'Fallout K -1 (-1)', 'Fortune F -1 (-1)', 'Peril P -1 (-1)']
    """
    return {f"{label} {base[name] - 1} (-1)" for name, (label, least) in _STEPPED.items() if base[name] - 1 < least}


def _rule_variants(base: dict) -> list[Variant]:
    """Each knob of the rules set to each of its other values."""
    current = dict(rule.split("=", 1) for rule in base["rules"])
    variants = []
    for knob, values in RULE_CHOICES.items():
        for value in values:
            if value != current[knob]:
                rules = tuple(f"{k}={value if k == knob else v}" for k, v in current.items())
                variants.append(Variant("rule", f"rule {knob}={value}", {**base, "rules": rules}))
    return variants


def _preference_variants(base: dict, side: str, preferences: dict) -> list[Variant]:
    """Each preference of a fixed (or random) ``side`` changed one at a time."""
    text = base[side]
    if text in ("optimal", "kind"):
        return []
    body = text[len("random;") :] if text.startswith("random;") else text
    now = dict(part.split("=", 1) for part in body.split(";"))
    variants = []
    for key, kind in preferences.items():
        if key not in now:  # a random narrator's hurt and plans are coin flips
            continue
        for value in _alternatives(now[key], kind):
            # an order is named by the option moved to the front
            label = f"{side} {key}: {value.split('>')[0]} first" if ">" in value else f"{side} {key}={value}"
            variants.append(Variant(side, label, {**base, side: _with_preference(text, key, value)}))
    return variants


def _cell(arguments: dict, max_states: int = DEFAULT_VARIANT_STATES) -> SweepCell:
    ruleset = Rules().with_rules(arguments["rules"])
    setup = {k: v for k, v in arguments.items() if k not in ("player", "narrator", "rules")}
    # the budget is part of the key: a contest past it is stored as such, for that budget only
    key = ResultKey(
        "karbon",
        ruleset_data(ruleset),
        {"design": "contest", "setup": setup, "max_states": max_states},
        {"player": arguments["player"], "narrator": arguments["narrator"]},
    )
    return SweepCell(key, {**arguments, "max_states": max_states})


def solve_variant(arguments: dict) -> dict:
    """One exact contest (a worker's task): `contest_cell` of the arguments, or
    ``{"too large": why}`` where its game passes ``max_states``."""
    from exactdice.karbon.tables import contest_cell

    try:
        return contest_cell(**arguments)
    except TooLargeError as error:
        if error.field != "max_states":
            raise
        return {"too large": f"its exact game passes {arguments['max_states']:,} states (raise `max_states`)"}


def karbon_sensitivity(
    base: dict,
    *,
    store=None,
    workers: int = 2,
    executor=None,
    progress=False,
    max_states: int = DEFAULT_VARIANT_STATES,
    groups=None,
) -> SensitivityReport:
    """Solve the base setup and every variant (of the *groups* named, `sensitivity_variants`),
    each within ``max_states`` (a variant past it is skipped, with the reason); rows sorted
    by effect, largest first. ``progress``: as for `exactdice.tables.sweep.sweep`."""
    _check(base)
    if max_states < 1:
        raise InputError("max_states", f"must be >= 1, got {max_states}")
    variants, skipped = sensitivity_variants(base, groups)
    cells = [_cell(base, max_states)] + [_cell(variant.arguments, max_states) for variant in variants]
    results = sweep(
        cells,
        solve_variant,
        store=store,
        workers=workers,
        executor=executor,
        progress=progress,
        description="sensitivity",
    )
    if "too large" in results[0]:
        raise TooLargeError("max_states", f"the base setup: {results[0]['too large']}")
    base_values = {metric: results[0][metric] for metric in METRICS}
    rows = []
    for variant, values in zip(variants, results[1:]):
        if "too large" in values:
            skipped.append((variant.name, values["too large"]))
            continue
        deltas = {}
        for metric in METRICS:
            if values[metric] is None or base_values[metric] is None:
                deltas[metric] = None
            else:
                deltas[metric] = values[metric] - base_values[metric]
        rows.append(
            SensitivityRow(
                variant.group,
                variant.name,
                {m: values[m] for m in METRICS},
                deltas,
                _stepped_setting(base, variant.arguments),
            )
        )
    rows.sort(key=lambda row: (-row.effect, row.name))
    return SensitivityReport(base=base, base_values=base_values, rows=rows, skipped=skipped)


def _stepped_setting(base: dict, arguments: dict) -> tuple:
    """``(parameter, value)`` where ``arguments`` step one setup parameter of ``base``, else ()."""
    changed = [name for name in _STEPPED if arguments[name] != base[name]]
    return (changed[0], arguments[changed[0]]) if len(changed) == 1 else ()


def tornado_chart(report: SensitivityReport, plot_path, *, metric: str = "P(win)", top: int = 25) -> None:
    """Write the PNG of `exactdice.karbon.charts.sensitivity_png` (*metric* against each
    stepped setup parameter, then the tornado of the *top* changes) by
    `exactdice.output_files.write_output` (a bad path is an `InputError` naming ``plot_path``)."""
    from exactdice.karbon.charts import sensitivity_png

    write_output(plot_path, sensitivity_png(report, metric=metric, top=top), "plot_path")


# ----- the canonical rules sensitivity table ------------------------------------------------

#: the grid of the canonical sensitivity table: a sub-grid of the committed tables
#: (Ability and Challenge 1-3 at every W and P of `exactdice.karbon.tables.canonical_grids`;
#: A5 v C5 at W3 P1 alone takes minutes a knob value)
SENSITIVITY_GRID = {"consequence": (1, 2, 3), "peril": (0, 1), "ability": (1, 2, 3), "challenge": (1, 2, 3)}


def rules_sensitivity(grid: dict = SENSITIVITY_GRID):
    """Karbon's `RulesSensitivity`: every other value of every knob of `RULE_CHOICES`
    against the default, fixed default policies, over *grid* (W, P, A, C)."""
    from exactdice.tables.sensitivity import RulesSensitivity

    readings = [("default", Rules())]
    for knob, values in RULE_CHOICES.items():
        readings += [(f"{knob}={value}", Rules().with_rules([f"{knob}={value}"])) for value in values[1:]]
    points = [
        (w, p, a, c)
        for w in grid["consequence"]
        for p in grid["peril"]
        for a in grid["ability"]
        for c in grid["challenge"]
    ]

    def solve(rules_list, **sweep_options) -> list[dict]:
        cells = [
            _cell(base_arguments(a, c, w, p, rules=tuple(f"{k}={v}" for k, v in rules.to_dict().items())))
            for rules in rules_list
            for w, p, a, c in points
        ]
        results = sweep(cells, solve_variant, description="karbon sensitivity", **sweep_options)
        labels = [f"W{w} P{p} A{a} C{c}" for w, p, a, c in points]
        return [
            {
                label: {m: result[m] for m in METRICS[:3]}
                for label, result in zip(labels, results[i * len(points) : (i + 1) * len(points)])
            }
            for i in range(len(rules_list))
        ]

    described = (
        f"Ability {_span(grid['ability'])} x Challenge {_span(grid['challenge'])} at "
        f"Consequence W {_span(grid['consequence'])} and Peril P {_span(grid['peril'])} "
        f"({len(points)} contests), both sides' fixed default policies, default pool and reserve"
    )
    notes = (
        "A sub-grid of the committed tables (Ability x Challenge 1-5, W 1-3, P 0-1): the "
        "cells with Ability or Challenge 4-5 cost up to minutes each and knob value.",
        "`objective` only steers optimal play, so under fixed policies it moves nothing (exactly 0).",
    )
    return RulesSensitivity("Karbon", described, readings, METRICS[:3], solve, notes)


def _span(values) -> str:
    values = list(values)
    return f"{values[0]}-{values[-1]}" if len(values) > 1 else str(values[0])
