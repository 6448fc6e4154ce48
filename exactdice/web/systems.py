"""The other systems' pages, generated from the `exactdice.systems` registry: one
`SystemPage` per registered system (one per variant, e.g. each Karst roll) other than
Karbon, whose calculator has a page of its own. A page's form fields are the system's
declared parameters (`parameter_field`); the work is the system's ``exact(setup, rules)``,
the exact law of its simulator's outcome column.

The server checks every field (kind and range here, then the system's own ``setup`` and
``rules``) before any work starts; what only the computation can find (a die that does
not exist, say) comes back from the worker as a message naming its field.

>>> page = SYSTEM_PAGES["contingency"]
>>> call = page.prepare({"difficulty": "6"})
>>> outcomes = exact_outcomes("contingency", call.values)
>>> sum(outcomes.values())
Fraction(1, 1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from exactdice.errors import InputError
from exactdice.web.forms import Field, FormError, form_field, read_fields

__all__ = ["SystemPage", "SYSTEM_PAGES", "exact_outcomes", "PreparedCall", "parameter_field",
           "MULTIPLE_SEPARATORS"]

#: how a parameter that takes several values is written in one text field
MULTIPLE_SEPARATORS = {int: ",", str: ";"}


@dataclass(frozen=True)
class PreparedCall:
    """Checked parameter values of one page (run by `exact_outcomes`)."""

    system: str
    values: dict


def _label(parameter) -> str:
    return parameter.label or parameter.name.replace("_", " ").capitalize()


def in_page_words(text: str, parameters) -> str:
    """``text`` with each parameter's CLI flag named as the page labels it (the registry's
    summaries and help are written for the command line).

    >>> from exactdice.systems import Parameter
    >>> in_page_words("Without --health: hits only.", [Parameter("health", int)])
    'Without "Health": hits only.'
    """
    for parameter in parameters:
        text = re.sub(rf"{re.escape(parameter.flag)}(?![\w-])", f'"{_label(parameter)}"', text)
    return text


def parameter_field(parameter, parameters=()) -> Field:
    """A form field for one declared `exactdice.systems.Parameter` (its example, if any, is
    what the page's control starts with; flags in its help named by the labels of
    ``parameters``, its system's).

    >>> from exactdice.systems import Parameter
    >>> parameter_field(Parameter("modifier", int, 0, "Added to the d6.", maximum=5)).high
    5
    """
    shown = dict(label=_label(parameter), help=in_page_words(parameter.help, parameters or (parameter,)),
                 example=parameter.example)
    if parameter.multiple:
        separator = MULTIPLE_SEPARATORS.get(parameter.kind, ";")
        default, example = (separator.join(str(item) for item in values) if values else None
                            for values in (parameter.default, parameter.example))
        shown.update(example=example, help=f"{shown['help']} (several: separate them with '{separator}')")
        return Field(parameter.name, "text", default or "", **shown)
    if parameter.kind is bool:
        return Field(parameter.name, "bool", bool(parameter.default), **shown)
    if parameter.choices:
        return Field(parameter.name, "choice", parameter.default, choices=tuple(parameter.choices), **shown)
    if parameter.kind is int:
        return Field(parameter.name, "int", parameter.default, low=parameter.minimum,
                     high=parameter.maximum, **shown)
    if parameter.kind is float:
        return Field(parameter.name, "float", parameter.default, **shown)
    return Field(parameter.name, "text", "" if parameter.default is None else str(parameter.default), **shown)


def _parameter_values(system, values: dict) -> dict:
    """The form's values as the system's parameters take them (lists split, blanks None)."""
    converted = {}
    for parameter in system.parameters:
        value = values.get(parameter.name)
        if parameter.multiple:
            separator = MULTIPLE_SEPARATORS.get(parameter.kind, ";")
            items = [item.strip() for item in (value or "").split(separator) if item.strip()]
            if parameter.kind is int:
                try:
                    items = [int(item) for item in items]
                except ValueError:
                    raise InputError(parameter.name, f"give whole numbers separated by '{separator}', "
                                                     f"got {value!r}") from None
            value = tuple(items)
        elif parameter.kind is str and value == "" and not parameter.choices:
            value = None
        converted[parameter.name] = value
    return converted


@dataclass(frozen=True)
class SystemPage:
    """One registered system (or variant) on the page: its fields and where it lives."""

    name: str
    title: str
    system: str
    variant: str | None
    fields: tuple[Field, ...]

    def rules_system(self):
        """The registry's object for this page."""
        from exactdice.systems import get_system

        system = get_system(self.system)
        return system.variants[self.variant] if self.variant else system

    def build(self, values: dict):
        """(setup, rules) from checked field values, by the system's own ``setup``/``rules``."""
        system = self.rules_system()
        parameters = _parameter_values(system, values)
        return system.setup(parameters), system.rules(parameters)

    def prepare(self, data: dict) -> PreparedCall:
        """Check every field, then the system's own checks; `FormError` names the bad ones."""
        values = read_fields(self.fields, data)
        try:
            self.build(values)
        except InputError as error:
            raise FormError({form_field(error.field, tuple(values)): error.message}) from None
        return PreparedCall(self.name, values)

    def outcome_column(self, values: dict | None = None) -> str:
        """The simulator's column the exact law describes (it may depend on the setup; with
        the defaults, or when a required value is missing, the usual one)."""
        try:
            setup, _ = self.build(values if values is not None else
                                  {field.name: field.default for field in self.fields})
        except InputError:
            return "outcome"
        return self.rules_system().outcome_column(setup)


def _pages() -> dict[str, SystemPage]:
    from exactdice.systems import get_system, system_names

    pages = {}
    for name in system_names():
        if name == "karbon":   # the calculator page
            continue
        system = get_system(name)
        members = [(f"{name}-{variant}", variant, member) for variant, member in system.variants.items()] \
            if system.variants else [(name, None, system)]
        for page_name, variant, member in members:
            parameters = member.parameters
            pages[page_name] = SystemPage(page_name, in_page_words(getattr(member, "summary", page_name), parameters),
                                          name, variant, tuple(parameter_field(p, parameters) for p in parameters))
    return pages


SYSTEM_PAGES = _pages()


def exact_outcomes(page_name: str, values: dict) -> dict:
    """{outcome: exact probability} of a page's checked values, checked to sum to exactly 1."""
    page = SYSTEM_PAGES[page_name]
    setup, rules = page.build(values)
    outcomes = {str(name): Fraction(p) for name, p in page.rules_system().exact(setup, rules).items()}
    total = sum(outcomes.values(), Fraction(0))
    if total != 1:
        raise ArithmeticError(f"the outcome probabilities sum to {total}, not exactly 1")
    return outcomes
