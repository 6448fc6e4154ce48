"""The web page's forms: each field declared once (name, kind, bounds, default, help), and
the same Python objects the CLI builds made from what the page sent.

The server never trusts the page: every field is checked here, and a bad one becomes a
`FormError` mapping the field's name to a one-line message (HTTP 422). Checks the library
makes itself (a ruleset knob, a policy's syntax, a setup that cannot be) raise its
`InputError`, whose field is turned into the form's field name by `form_field`.

>>> setup, ruleset, player, narrator, limits = karbon_contest({"ability": "3", "challenge": "2"})
>>> setup.ability, setup.consequence, ruleset.objective, player.kind, limits
(3, 2, 'score', 'fixed', {'max_states': 3000000, 'max_seconds': 20})
>>> karbon_contest({"ability": "-1", "challenge": "x"})
Traceback (most recent call last):
...
exactdice.web.forms.FormError: ability: must be a whole number >= 0, got -1; challenge: must be a whole number, got 'x'
"""

from __future__ import annotations

from dataclasses import dataclass

from exactdice.errors import InputError
from exactdice.integer_lists import parse_integer_list

__all__ = ["Field", "FormError", "KARBON_FIELDS", "karbon_contest", "karbon_key", "form_field",
           "field_descriptions", "DIST_FIELDS", "read_fields", "read_fields_partly", "GRID_FIELDS",
           "karbon_grid", "integer_values", "MAX_GRID_CELLS"]


@dataclass(frozen=True)
class Field:
    """One form control: ``kind`` is ``int``, ``float``, ``bool``, ``text`` or ``choice``
    (a number whose default is None may be left blank). ``example``: what the page's control
    starts with instead of the default, for a value the answer needs and nobody can guess
    (a request that leaves the field out still gets the default, or the error)."""

    name: str
    kind: str
    default: object = None
    low: int | None = None
    high: int | None = None
    choices: tuple = ()
    label: str = ""
    help: str = ""
    example: object = None

    def describe(self) -> dict:
        """The field as JSON for the page (which builds its controls from it).

        >>> Field("defense", "int", None, label="Defense", example=12).describe()["start"]
        12
        """
        start = self.default if self.example is None else self.example
        return {"name": self.name, "kind": self.kind, "default": self.default, "start": start,
                "low": self.low, "high": self.high, "choices": list(self.choices),
                "label": self.label or self.name, "help": self.help}


class FormError(InputError):
    """Bad fields of a form: ``errors`` maps each field name to its message."""

    def __init__(self, errors: dict[str, str]):
        self.errors = dict(errors)
        super().__init__(None, "; ".join(f"{name}: {text}" for name, text in self.errors.items()))

    def __reduce__(self):
        return (type(self), (self.errors,))


def form_field(library_field: str | None, known: tuple[str, ...]) -> str:
    """The form's field name for a library error's field (``--max-states`` -> ``max_states``).

    >>> form_field("--player-dice", ("player_dice",))
    'player_dice'
    >>> form_field("player_stack", ("ability",))
    'form'
    """
    name = (library_field or "").lstrip("-").replace("-", "_")
    return name if name in known else "form"


#: the fields of a mid-contest position (the `--state` file's numbers besides peril and consequence)
MID_CONTEST_FIELDS = ("player_chips", "narrator_chips", "player_stack", "narrator_stack", "wins", "losses")

#: the most a web request may set --max-states to (the CLI has no ceiling; the server's
#: worker processes share the machine, so the page asks for the CLI past it)
WEB_MAX_STATES_CEILING = 20_000_000
#: seconds the page searches for certified bounds when optimal play passes Max states
DEFAULT_BOUNDS_SECONDS = 20
MAX_BOUNDS_SECONDS = 600


def _karbon_fields() -> tuple[Field, ...]:
    from exactdice.karbon import RULE_CHOICES
    from exactdice.karbon.dice import dice_text
    from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE
    from exactdice.karbon.solve import DEFAULT_MAX_STATES

    fields = [
        Field("ability", "int", 3, low=0, high=15, label="Ability (A)", help="Dice the player draws."),
        Field("challenge", "int", 2, low=1, high=15, label="Challenge (C)", help="Dice the narrator draws."),
        Field("consequence", "int", 2, low=1, high=10, label="Consequence (W)", help="Length of the victory track."),
        Field("peril", "int", 0, low=0, high=10, label="Peril (P)", help="Starting peril dice."),
        Field("fortune", "int", 0, low=0, high=15, label="Fortune (F)", help="Each d6 the player draws costs one."),
        Field("training", "bool", False, label="Training", help="The player gains 1 chip per d8 drawn."),
        Field("fallout", "int", 0, low=0, high=10, label="Fallout (K)", help="Glitches thrown before the first round."),
        Field("player_dice", "text", "", label="Player hand", help="Explicit hand, e.g. d8,d8,d10 (no draw; leave Ability and Challenge as they are)."),
        Field("narrator_dice", "text", "", label="Narrator hand", help="Explicit narrator hand (with the player hand)."),
        Field("draw_chips", "bool", False, label="Pay draw chips", help="With explicit hands: pay the draw's chips as if drawn."),
        Field("player_chips", "int", 0, low=0, high=100, label="Player chips",
              help="Mid-contest position (with explicit hands): chips in the player's hand."),
        Field("narrator_chips", "int", 0, low=0, high=100, label="Narrator chips",
              help="Mid-contest position: chips in the narrator's hand."),
        Field("player_stack", "int", 0, low=0, high=4, label="Player stack", help="Mid-contest position: the player's stack (0-4)."),
        Field("narrator_stack", "int", 0, low=0, high=4, label="Narrator stack", help="Mid-contest position: the narrator's stack (0-4)."),
        Field("wins", "int", 0, low=0, high=9, label="Track X (wins)", help="Mid-contest position: places won on the track."),
        Field("losses", "int", 0, low=0, high=9, label="Track O (losses)", help="Mid-contest position: places lost on the track."),
        Field("pool", "text", dice_text(DEFAULT_POOL), label="Pool", help="The main pool (dice list, or none)."),
        Field("reserve", "text", dice_text(DEFAULT_RESERVE), label="Reserve", help="The reserve (dice list, or none)."),
        Field("player_policy", "text", "fixed", label="Player policy",
              help='"optimal", or fixed preferences like "risk=always;break=advantage>security".'),
        Field("narrator_policy", "text", "fixed", label="Narrator policy",
              help='"optimal", "kind", "random", or fixed preferences like "hurt=injury;plans=dice".'),
    ]
    # one wording: the help of every field the registry declares is the registry's
    from dataclasses import replace

    from exactdice.systems import get_system

    declared = {parameter.name: parameter for parameter in get_system("karbon").parameters}
    fields = [replace(field, help=declared[field.name].help) if field.name in declared else field
              for field in fields]
    # and each knob's: what it decides and what each value means (`karbon rules`)
    from exactdice.karbon.reading import KNOBS

    fields += [Field(f"rule_{name}", "choice", values[0], choices=values, label=name.replace("_", " "),
                     help=f"Rule knob {name}, {KNOBS[name][0]}: "
                          + " | ".join(f"{value} = {meaning}" for value, meaning in KNOBS[name][1].items())
                          + f" (the spec's reading: {values[0]}).")
               for name, values in RULE_CHOICES.items()]
    fields.append(Field("max_states", "int", DEFAULT_MAX_STATES, low=1, high=WEB_MAX_STATES_CEILING,
                        label="Max states", help="Stop exploring past this many states."))
    fields.append(Field("max_seconds", "int", DEFAULT_BOUNDS_SECONDS, low=0, high=MAX_BOUNDS_SECONDS,
                        label="Bounds seconds",
                        help="An optimal player whose exact game passes Max states, or a tenth of "
                             "this many seconds of exploring, is answered with certified bounds searched "
                             "for this long, with their gap; with the exact check that follows, the answer "
                             "takes up to about 1.6 times this (0: no bounds; stop at Max states instead)."))
    return tuple(fields)


KARBON_FIELDS = _karbon_fields()
KARBON_FIELD_NAMES = tuple(field.name for field in KARBON_FIELDS)

DIST_FIELDS = (Field("expression", "text", "3d6", label="Expression",
                     help="Dice notation: 3d6+2, 4d6kh3, 2d20kl1, d6+d8+d10, (2d6+1)-d4."),)


#: the most cells a grid made on the page may have (each is one exact solve)
MAX_GRID_CELLS = 100


def _grid_fields() -> tuple[Field, ...]:
    from exactdice.karbon.tables import AXES

    axes = (Field("row_axis", "choice", "ability", choices=AXES, label="Rows",
                  help="The setup parameter along the rows."),
            Field("row_values", "text", "1-5", label="Row values", help="A range like 1-5 or a list like 1,3,5."),
            Field("column_axis", "choice", "challenge", choices=AXES, label="Columns",
                  help="The setup parameter along the columns."),
            Field("column_values", "text", "1-5", label="Column values", help="A range or a list."))
    kept = [field for field in KARBON_FIELDS
            if field.name not in ("player_dice", "narrator_dice", "draw_chips", "training", "max_states",
                                  "max_seconds") + MID_CONTEST_FIELDS]
    return axes + tuple(kept)


def integer_values(text: str, field: Field) -> list[int]:
    """``3``, ``1-5`` or ``1,2,4`` -> whole numbers within the field's bounds.

    >>> integer_values("1-3,5", Field("peril", "int", 0, low=0, high=10))
    [1, 2, 3, 5]
    """
    values = parse_integer_list(text, field.name)
    beyond = [value for value in values if (field.low is not None and value < field.low)
              or (field.high is not None and value > field.high)]
    if beyond:   # the value farthest out: "1-20" goes up to 20, not "reaches 16"
        worst = max(beyond) if max(beyond) > (field.high if field.high is not None else max(beyond) - 1) else min(beyond)
        direction = "up to" if field.high is not None and worst > field.high else "down to"
        raise InputError(field.name, f'"{text}" goes {direction} {worst}; {field.label or field.name} goes from '
                                     f'{field.low} to {field.high} on this page')
    if len(set(values)) != len(values):
        raise InputError(field.name, f'"{text}" names a value twice')
    return values


def karbon_grid(data: dict) -> dict:
    """The checked arguments of a Karbon grid (`exactdice.karbon.tables.contest_cell` per cell).

    >>> grid = karbon_grid({"row_values": "1-2", "column_values": "1"})
    >>> grid["rows"], grid["columns"], grid["fixed"]["consequence"]
    ([1, 2], [1], 2)
    """
    from exactdice.karbon import RULE_CHOICES

    by_axis = {field.name: field.default for field in GRID_FIELDS if field.name.endswith("_axis")}
    axes_named = [data.get(name, default) for name, default in by_axis.items()] if isinstance(data, dict) else []
    values = read_fields(GRID_FIELDS, data, unused=axes_named)   # an axis's own box is not read
    by_name = {field.name: field for field in KARBON_FIELDS}
    errors = {}
    if values["row_axis"] == values["column_axis"]:
        errors["column_axis"] = f"must differ from the rows' parameter ({values['row_axis']})"
    axes = {}
    for side in ("row", "column"):
        try:
            axis = by_name[values[f"{side}_axis"]]
            axes[side] = integer_values(values[f"{side}_values"], Field(
                f"{side}_values", "int", low=axis.low, high=axis.high, label=axis.label))
        except InputError as error:
            errors[error.field] = error.message
    if not errors and len(axes["row"]) * len(axes["column"]) > MAX_GRID_CELLS:
        errors["row_values"] = (f"{len(axes['row'])} x {len(axes['column'])} = "
                                f"{len(axes['row']) * len(axes['column'])} cells; the page makes at most "
                                f"{MAX_GRID_CELLS} (use `exactdice karbon table` for more)")
    if errors:
        raise FormError(errors)
    # every other field checked as the calculator checks it, at the grid's first cell
    first = {field.name: values[field.name] for field in KARBON_FIELDS if field.name in values}
    first.update({values["row_axis"]: axes["row"][0], values["column_axis"]: axes["column"][0]})
    karbon_contest(first)
    fixed = {name: values[name] for name in ("ability", "challenge", "consequence", "peril", "fortune",
                                             "fallout", "pool", "reserve")}
    return {"row_axis": values["row_axis"], "rows": axes["row"], "column_axis": values["column_axis"],
            "columns": axes["column"], "fixed": fixed, "player": values["player_policy"],
            "narrator": values["narrator_policy"],
            "rules": tuple(f"{name}={values['rule_' + name]}" for name in RULE_CHOICES)}


def field_descriptions(fields) -> list[dict]:
    """The fields as JSON for the page."""
    return [field.describe() for field in fields]


def read_fields(fields, data: dict, unused=()) -> dict:
    """Each declared field's value from ``data`` (defaults for missing ones), checked by kind.

    >>> read_fields((Field("peril", "int", 0, low=0), Field("training", "bool", False)),
    ...             {"peril": " 2 ", "training": "on"})
    {'peril': 2, 'training': True}
    """
    values, errors = read_fields_partly(fields, data, unused)
    if errors:
        raise FormError(errors)
    return values


def read_fields_partly(fields, data: dict, unused=()) -> tuple[dict, dict]:
    """`read_fields` without raising: (the good fields' values, {field: message} of the bad
    ones), so a form's later checks can run on what is good and report everything at once.
    Fields named in ``unused`` (the answer will not read them) may be left blank.

    >>> read_fields_partly((Field("peril", "int", 0, low=0), Field("fallout", "int", 0)),
    ...                    {"peril": "-1", "fallout": "1"})
    ({'fallout': 1}, {'peril': 'must be a whole number >= 0, got -1'})
    """
    if not isinstance(data, dict):
        raise FormError({"form": "the request body must be a JSON object of field values"})
    known = {field.name for field in fields}
    errors = {name: "unknown field" for name in data if name not in known}
    values = {}
    for field in fields:
        try:
            values[field.name] = _read_field(field, data.get(field.name, field.default),
                                             blank_ok=field.name in unused)
        except _BadValue as problem:
            errors[field.name] = str(problem)
    return values, errors


class _BadValue(Exception):
    """A field's value the page may not send (the message says why)."""


def _read_field(field: Field, raw, blank_ok: bool = False):
    """One field's checked value. A number left blank is refused where the field has a
    default (the page would show an empty box and compute with a number nobody sees),
    unless ``blank_ok`` (its value is not used), else it is None; a field left out of the
    request takes its default."""
    if isinstance(raw, str) and not raw.strip() and field.kind in ("int", "float"):
        if field.default is not None and not blank_ok:
            kind = "whole number" if field.kind == "int" else "number"
            raise _BadValue(f"is empty (or not a number); give a {kind}, for example {field.default}")
        raw = None
    if raw is None:
        raw = field.default
    if raw is None and field.kind in ("int", "float"):
        return None
    return _FIELD_READERS.get(field.kind, _read_text)(field, raw)


def _read_float(field: Field, raw) -> float:
    try:
        if isinstance(raw, bool):
            raise ValueError
        return float(str(raw).strip())
    except ValueError:
        raise _BadValue(f"must be a number, got {raw!r}") from None


def _read_int(field: Field, raw) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise _BadValue(f"must be a whole number, got {raw!r}")
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise _BadValue(f"must be a whole number, got {raw!r}") from None
    if field.low is not None and value < field.low:
        raise _BadValue(f"must be a whole number >= {field.low}, got {value}")
    if field.high is not None and value > field.high:
        raise _BadValue(f"must be at most {field.high:,} on this page, got {value:,}")
    return value


def _read_bool(field: Field, raw) -> bool:
    if raw not in (True, False, "true", "false", "on", "off", "1", "0", 1, 0):
        raise _BadValue(f"must be true or false, got {raw!r}")
    return raw in (True, "true", "on", "1", 1)


def _read_choice(field: Field, raw):
    if raw not in field.choices:
        raise _BadValue(f"must be one of {' | '.join(field.choices)}, got {raw!r}")
    return raw


def _read_text(field: Field, raw) -> str:
    if not isinstance(raw, str):
        raise _BadValue(f"must be text, got {raw!r}")
    if len(raw) > 500:
        raise _BadValue(f"is {len(raw)} characters long; at most 500")
    return raw.strip()


#: field kind -> its reader (any other kind is text)
_FIELD_READERS = {"float": _read_float, "int": _read_int, "bool": _read_bool, "choice": _read_choice}


def karbon_contest(data: dict):
    """(setup, ruleset, player policy, narrator policy, limits) from the Karbon form;
    ``limits`` holds ``max_states`` and ``max_seconds`` (of the bounds' search).

    Built with the same library calls as ``exactdice karbon odds`` (the CLI's
    `setup_from_options` does the same steps); every field is checked first.
    """
    from exactdice.karbon import (RULE_CHOICES, ContestSetup, Rules, parse_narrator_policy,
                                  parse_player_policy)
    from exactdice.karbon.policies import check_policy_dice
    from exactdice.karbon.dice import parse_dice_list

    hands = [data.get(name) for name in ("player_dice", "narrator_dice")] if isinstance(data, dict) else []
    explicit_hands = any(isinstance(hand, str) and hand.strip() for hand in hands)
    values, errors = read_fields_partly(KARBON_FIELDS, data,
                                        unused=("ability", "challenge") if explicit_hands else ())

    def attempt(name, build, *needs):
        """``build()``'s value, its error kept under ``name``; skipped where a field it
        reads is already bad (one message per field, all of them in one answer)."""
        if not all(need in values for need in needs or (name,)):
            return None
        try:
            return build()
        except InputError as error:
            errors[name] = error.message
            return None

    knobs = [f"rule_{name}" for name in RULE_CHOICES]
    ruleset = attempt("rule_objective", lambda: Rules().with_rules(
        [f"{name}={values['rule_' + name]}" for name in RULE_CHOICES]), *knobs)
    player = attempt("player_policy", lambda: parse_player_policy(values["player_policy"]))
    narrator = attempt("narrator_policy", lambda: parse_narrator_policy(values["narrator_policy"]))
    dice = {}
    for name in ("pool", "reserve", "player_dice", "narrator_dice"):
        if name in ("player_dice", "narrator_dice") and not values.get(name):
            dice[name] = None
            continue
        dice[name] = attempt(name, lambda name=name: parse_dice_list(values[name], name))
    if errors:
        raise FormError(errors)
    explicit = dice["player_dice"] is not None or dice["narrator_dice"] is not None
    position = {name: values[name] for name in MID_CONTEST_FIELDS}
    if any(position.values()) and not explicit:
        first = next(name for name, value in position.items() if value)
        raise FormError({first: "a mid-contest position needs explicit hands (Player hand and "
                                "Narrator hand), as in a --state file"})
    try:
        setup = ContestSetup(
            ability=None if explicit else values["ability"],
            challenge=None if explicit else values["challenge"],
            consequence=values["consequence"], peril=values["peril"], fortune=values["fortune"],
            training=values["training"], fallout=values["fallout"],
            player_dice=dice["player_dice"], narrator_dice=dice["narrator_dice"],
            draw_chips=values["draw_chips"], pool=dice["pool"], reserve=dice["reserve"], **position)
        check_policy_dice(player, narrator, setup.sizes().sizes)
    except InputError as error:
        raise FormError({form_field(error.field, KARBON_FIELD_NAMES): error.message}) from None
    return setup, ruleset, player, narrator, {name: values[name] for name in ("max_states", "max_seconds")}


def karbon_key(setup, ruleset, player, narrator):
    """The results-store key of a contest's odds on the page (not of a table cell).

    >>> from exactdice.karbon import ContestSetup, Rules, PlayerPolicy, NarratorPolicy
    >>> karbon_key(ContestSetup(ability=1, challenge=1), Rules(), PlayerPolicy(),
    ...            NarratorPolicy()).system
    'karbon'
    """
    from exactdice.tables.store import ResultKey

    return ResultKey("karbon", ruleset.to_dict(), {"result": "contest_odds", **setup.to_dict()},
                     {"player": player.text(), "narrator": narrator.text()})


GRID_FIELDS = _grid_fields()
