"""The page's forms, made from the registry: one control per declared parameter
(`exactdice.systems.Parameter`: kind, range, default, label, help, presets, knobs), read back
into the same values the command line gives the library, by the parameters' names.

The server never trusts the page: every field is read and checked here (with the page's own
ranges where the registry gives stricter ones), all bad fields reported at once as a
`FormError` mapping each field to a one-line message (HTTP 422); then the library's own
checks of the values together (`exactdice.answers.karbon.karbon_request`, a system's
``setup`` and ``rules``), whose errors name parameters, which are the fields' names.

>>> values = read_computation("karbon", {"ability": "3", "challenge": "2"})
>>> values["ability"], values["max_seconds"], values["rules"]
(3, 20.0, ())
>>> read_computation("karbon", {"ability": "-1", "challenge": "x"})
Traceback (most recent call last):
...
exactdice.web.forms.FormError: ability: must be >= 0, got -1; challenge: must be a whole number, got 'x'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exactdice.errors import InputError
from exactdice.systems import Parameter

__all__ = [
    "Field",
    "FormError",
    "fields",
    "read_computation",
    "read_fields",
    "grid_request",
    "grid_fields",
    "karbon_fields",
    "get_parameters",
    "integer_values",
    "MULTIPLE_SEPARATORS",
    "KNOB_PREFIX",
    "DIST_FIELDS",
    "GRID_AXES_FIELDS",
    "form_field",
]

#: how a parameter that takes several values is written in one text field
MULTIPLE_SEPARATORS = {int: ",", str: ";"}
#: a rule knob's field: ``rule_<knob>`` (Karbon's ``rules`` parameter, one choice per knob)
KNOB_PREFIX = "rule_"
_KINDS = {int: "int", float: "float", bool: "bool", str: "text"}
_LONGEST_TEXT = 500


@dataclass(frozen=True)
class Field:
    """One form control as the page builds it: ``kind`` is ``int``, ``float``, ``bool``,
    ``text`` or ``choice``; ``start`` what the control starts with (an example where the
    answer needs a value nobody can guess); ``presets`` common values with their words."""

    name: str
    kind: str
    default: Any = None
    low: int | None = None
    high: int | None = None
    choices: tuple = ()
    label: str = ""
    help: str = ""
    start: Any = None
    section: str = ""
    presets: tuple = ()
    parameter: Parameter | None = None

    def describe(self) -> dict:
        """The field as JSON for the page."""
        return {
            "name": self.name,
            "kind": self.kind,
            "default": self.default,
            "start": self.start,
            "low": self.low,
            "high": self.high,
            "choices": list(self.choices),
            "label": self.label or self.name,
            "help": self.help,
            "section": self.section,
            "presets": [{"value": value, "words": words} for value, words in self.presets],
        }


class FormError(InputError):
    """Bad fields of a form: ``errors`` maps each field name to its message."""

    def __init__(self, errors: dict[str, str]):
        self.errors = dict(errors)
        super().__init__(None, "; ".join(f"{name}: {text}" for name, text in self.errors.items()))

    def __reduce__(self):
        return (type(self), (self.errors,))


def _words(text: str, parameters) -> str:
    """A help text with the parameters it quotes named by their labels."""
    from exactdice.web.present import with_labels

    return with_labels(text, {parameter.name: parameter.words for parameter in parameters})


def _field(parameter: Parameter, parameters) -> Field:
    """The control of one declared parameter."""
    shown = dict(
        label=parameter.words,
        help=_words(parameter.help, parameters),
        section=parameter.section,
        presets=parameter.presets,
        parameter=parameter,
    )
    default = parameter.default_for(page=True)
    start = default if parameter.example is None else parameter.example
    if parameter.multiple:
        separator = MULTIPLE_SEPARATORS.get(parameter.kind, ";")
        default, start = (separator.join(str(item) for item in values) if values else "" for values in (default, start))
        shown["help"] += f" (several: separate them with '{separator}')"
        return Field(parameter.name, "text", default, start=start, **shown)
    if parameter.choices:
        return Field(parameter.name, "choice", default, choices=tuple(parameter.choices), start=start, **shown)
    low, high = parameter.bounds(page=True)
    kind = _KINDS.get(parameter.kind, "text")
    if kind == "text":
        default, start = ("" if value is None else str(value) for value in (default, start))
    return Field(parameter.name, kind, default, low=low, high=high, start=start, **shown)


def _knob_fields(parameter: Parameter) -> list[Field]:
    """One choice per knob of a ``NAME=VALUE`` parameter, the spec's reading first."""
    return [
        Field(
            f"{KNOB_PREFIX}{name}",
            "choice",
            values[0],
            choices=tuple(values),
            start=values[0],
            label=name.replace("_", " "),
            section=parameter.section,
            help=f"Rule knob {name}, {words} (the spec's reading: {values[0]}).",
        )
        for name, (values, words) in (parameter.knobs or {}).items()
    ]


def fields(parameters) -> list[Field]:
    """The page's controls of declared parameters (those it offers: ``on_page``)."""
    shown = []
    for parameter in parameters:
        if not parameter.on_page:
            continue
        shown.extend(_knob_fields(parameter) if parameter.knobs else [_field(parameter, parameters)])
    return shown


def form_field(library_field: str | None, known) -> str:
    """The form's field for a library error's field: the parameter's own, a knob's
    (``rules`` -> ``rule_objective``, the one knob the library checks against the policies),
    else the form's line.

    >>> form_field("player_dice", ("player_dice",)), form_field("player_stack", ("ability",))
    ('player_dice', 'form')
    """
    name = (library_field or "").lstrip("-").replace("-", "_")
    if name == "rules" and f"{KNOB_PREFIX}objective" in known:
        return f"{KNOB_PREFIX}objective"
    return name if name in known else "form"


# ----- reading fields -----------------------------------------------------------------


class _BadValue(Exception):
    """A field's value the page may not send (the message says why)."""


def _number(field: Field, raw, kind: type):
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise _BadValue(f"must be {'a whole number' if kind is int else 'a number'}, got {raw!r}")
    try:
        return kind(str(raw).strip())
    except ValueError:
        raise _BadValue(f"must be {'a whole number' if kind is int else 'a number'}, got {raw!r}") from None


def _bool(field: Field, raw) -> bool:
    if raw not in (True, False, "true", "false", "on", "off", "1", "0", 1, 0):
        raise _BadValue(f"must be true or false, got {raw!r}")
    return raw in (True, "true", "on", "1", 1)


def _text(field: Field, raw) -> str:
    if not isinstance(raw, str):
        raise _BadValue(f"must be text, got {raw!r}")
    if len(raw) > _LONGEST_TEXT:
        raise _BadValue(f"is {len(raw)} characters long; at most {_LONGEST_TEXT}")
    return raw.strip()


def _several(parameter: Parameter, text: str) -> tuple:
    """A text field of several values (``d8,d8; d6``, ``2,0,-1``) as the parameter's tuple."""
    separator = MULTIPLE_SEPARATORS.get(parameter.kind, ";")
    items = [item.strip() for item in text.split(separator) if item.strip()]
    if parameter.kind is int:
        try:
            return tuple(int(item) for item in items)
        except ValueError:
            raise _BadValue(f"give whole numbers separated by '{separator}', got {text!r}") from None
    return tuple(items)


def _value(field: Field, raw, blank_ok: bool):
    """One field's value: its kind read, then the parameter's own check with the page's range."""
    if isinstance(raw, str) and not raw.strip() and field.kind in ("int", "float"):
        # a box the page fills in, left empty: refused, not computed with a value nobody sees
        example = field.default if field.default is not None else field.start
        if example is not None and not blank_ok:
            kind = "whole number" if field.kind == "int" else "number"
            raise _BadValue(f"is empty (or not a number); give a {kind}, for example {example}")
        return None
    if raw is None:
        return None
    if field.kind == "choice":
        if raw not in field.choices:
            raise _BadValue(f"must be one of {' | '.join(map(str, field.choices))}, got {raw!r}")
        return raw
    value = {
        "int": lambda: _number(field, raw, int),
        "float": lambda: _number(field, raw, float),
        "bool": lambda: _bool(field, raw),
    }.get(field.kind, lambda: _text(field, raw))()
    parameter = field.parameter
    if parameter is None:
        return value
    if parameter.multiple:
        value = _several(parameter, value)
    elif parameter.kind is str and value == "" and not parameter.choices:
        if parameter.default not in (None, "") and not blank_ok:
            # as a number box: an emptied box is refused, not read as a value nobody sees
            raise _BadValue(f"is empty; give a value, for example {parameter.default}")
        value = None
    try:
        return parameter.check(value, page=True)
    except InputError as error:
        raise _BadValue(error.message) from None


def read_fields(shown: list[Field], data, unused=()) -> dict:
    """Each field's value from *data* (its default where left out), by the parameters'
    names; knob fields gathered into their parameter's ``NAME=VALUE`` tuple (the knobs that
    differ from the spec's reading). Every bad field at once, as a `FormError`; fields named
    in *unused* (the answer will not read them) may be left blank and are left out.

    >>> read_fields(fields(get_parameters("karst-death")), {"negative_health": " 2 "})
    {'negative_health': 2, 'aid': 0, 'modifier': 0}
    """
    if not isinstance(data, dict):
        raise FormError({"form": "the request body must be a JSON object of field values"})
    known = {field.name for field in shown}
    errors = {name: "unknown field" for name in data if name not in known}
    values: dict = {}
    knobs = []
    for field in shown:
        try:
            value = _value(field, data.get(field.name, field.default), blank_ok=field.name in unused)
        except _BadValue as problem:
            errors[field.name] = str(problem)
            continue
        if field.name.startswith(KNOB_PREFIX) and field.parameter is None:
            if value != field.default:
                knobs.append(f"{field.name[len(KNOB_PREFIX) :]}={value}")
        elif field.name not in unused:
            values[field.name] = value
    if errors:
        raise FormError(errors)
    if any(field.name.startswith(KNOB_PREFIX) for field in shown):
        values["rules"] = tuple(knobs)
    return values


def get_parameters(name: str) -> tuple[Parameter, ...]:
    """A computation's declared parameters (`exactdice.answers.systems.computations`)."""
    from exactdice.answers.systems import computation

    return tuple(computation(name).rules_system().parameters)


def karbon_fields() -> list[str]:
    """The Karbon form's field names."""
    return [field.name for field in fields(get_parameters("karbon"))]


def read_computation(name: str, data) -> dict:
    """A computation's values from the page's fields, checked field by field and then by
    the library as a whole (a Karbon contest, a system's setup and rules); `FormError`."""
    shown = fields(get_parameters(name))
    hands = [data.get(hand) for hand in ("player_dice", "narrator_dice")] if isinstance(data, dict) else []
    explicit = any(isinstance(hand, str) and hand.strip() for hand in hands)
    # explicit hands: no draw, so Ability and Challenge (which the page always sends) are not read
    values = read_fields(shown, data, unused=("ability", "challenge") if name == "karbon" and explicit else ())
    try:
        _library_check(name, values)
    except FormError:
        raise
    except InputError as error:
        raise FormError({form_field(error.field, {field.name for field in shown}): error.message}) from None
    return values


def _library_check(name: str, values: dict) -> None:
    """What the values say together, checked as the library checks a request (no solve)."""
    if name == "karbon":
        from exactdice.answers.karbon import karbon_request

        karbon_request(values)
        return
    from exactdice.answers.systems import computation

    declared = computation(name).rules_system()
    declared.setup(values), declared.rules(values)


# ----- the dice page and a new Karbon grid ------------------------------------------------------

DIST_FIELDS = [
    Field(
        "expression",
        "text",
        "3d6",
        label="Expression",
        start="3d6",
        help="Dice notation: 3d6+2, 4d6kh3, 2d20kl1, d6+d8+d10, (2d6+1)-d4.",
    )
]


def _grid_axes_fields() -> list[Field]:
    from exactdice.karbon.tables import AXES

    return [
        Field(
            "row_axis",
            "choice",
            "ability",
            choices=AXES,
            start="ability",
            label="Rows",
            help="The setup parameter along the rows.",
        ),
        Field(
            "row_values", "text", "1-5", start="1-5", label="Row values", help="A range like 1-5 or a list like 1,3,5."
        ),
        Field(
            "column_axis",
            "choice",
            "challenge",
            choices=AXES,
            start="challenge",
            label="Columns",
            help="The setup parameter along the columns.",
        ),
        Field("column_values", "text", "1-5", start="1-5", label="Column values", help="A range or a list."),
    ]


GRID_AXES_FIELDS = _grid_axes_fields()
#: Karbon's parameters a grid does not take: hands and positions (a grid draws), the limits
_NOT_IN_A_GRID = (
    "player_dice",
    "narrator_dice",
    "draw_chips",
    "player_chips",
    "narrator_chips",
    "player_stack",
    "narrator_stack",
    "wins",
    "losses",
    "max_states",
    "max_seconds",
)


def grid_fields() -> list[Field]:
    """The fields of a new Karbon grid: its two axes, then the contest's other fields."""
    return GRID_AXES_FIELDS + [field for field in fields(get_parameters("karbon")) if field.name not in _NOT_IN_A_GRID]


def integer_values(text: str, field: Field) -> list[int]:
    """``3``, ``1-5`` or ``1,2,4`` -> whole numbers within the field's range on this page
    (errors name the field).

    >>> integer_values("1-3,5", Field("peril", "int", 0, low=0, high=10))
    [1, 2, 3, 5]
    """
    from exactdice.integer_lists import parse_integer_list

    values = parse_integer_list(text, field.name)
    beyond = [
        value
        for value in values
        if (field.low is not None and value < field.low) or (field.high is not None and value > field.high)
    ]
    if beyond:  # the value farthest out: "1-20" goes up to 20, not "reaches 16"
        high = field.high is not None and max(beyond) > field.high
        worst = max(beyond) if high else min(beyond)
        raise InputError(
            field.name,
            f'"{text}" goes {"up" if high else "down"} to {worst}; '
            f"{field.label or field.name} goes from {field.low} to {field.high} on this page",
        )
    if len(set(values)) != len(values):
        raise InputError(field.name, f'"{text}" names a value twice')
    return values


def _axis_values(text: str, side: str, axis: Field) -> list[int]:
    """One axis's values, within its parameter's range on this page."""
    return integer_values(text, Field(f"{side}_values", "int", low=axis.low, high=axis.high, label=axis.label))


def grid_request(data) -> tuple[dict, dict]:
    """``(values, axes)`` of a new Karbon grid: the contest's values held fixed and the
    rows' and columns' parameters with their values, checked (`FormError`).

    >>> values, axes = grid_request({"row_values": "1-2", "column_values": "1"})
    >>> axes, values["consequence"]
    ({'ability': [1, 2], 'challenge': [1]}, 2)
    """
    from exactdice.answers.tables import PAGE_MAX_TABLE_CELLS, karbon_table_check

    shown = grid_fields()
    named = (
        [data.get(name, default) for name, default in (("row_axis", "ability"), ("column_axis", "challenge"))]
        if isinstance(data, dict)
        else []
    )
    read = read_fields(shown, data, unused=tuple(name for name in named if isinstance(name, str)))
    errors = {}
    if read["row_axis"] == read["column_axis"]:
        errors["column_axis"] = f"must differ from the rows' parameter ({read['row_axis']})"
    by_name = {field.name: field for field in shown}
    axes = {}
    for side in ("row", "column"):
        try:
            axes[read[f"{side}_axis"]] = _axis_values(read[f"{side}_values"], side, by_name[read[f"{side}_axis"]])
        except InputError as error:
            errors[error.field] = error.message
    if errors:
        raise FormError(errors)
    axis_names = {field.name for field in GRID_AXES_FIELDS}
    values = {name: value for name, value in read.items() if name not in axis_names}
    try:
        karbon_table_check(values, axes, PAGE_MAX_TABLE_CELLS)
    except InputError as error:  # an axis's values are its side's box
        sides = dict(zip(axes, ("row_values", "column_values")))
        field = sides.get(error.field) or (error.field if error.field in by_name else "row_values")
        raise FormError(
            {field: error.message.replace("in one table", "on this page (exactdice karbon table makes more)")}
        ) from None
    return values, axes
