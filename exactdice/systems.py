"""One shape for every rules system: the `RulesSystem` protocol and the registry.

Each system package (``exactdice/<system>/``) exports one object, ``SYSTEM`` in its
``system.py``, that says in one place what the layers above need: its name, its `Rules`
type, its setup parameters (declared, not coded: name, type, range, default, help), the
exact outcome distribution, a simulator returning columns, the outcome column and its
canonical tables. The command line (``exactdice validate``, the table commands),
``scripts/make_tables.py``, the simulator cross-check tests and the web page loop over
`SYSTEMS` instead of naming the systems. Like `exactdice.markov.Model` it is a protocol:
no base class, any object with these attributes fits.

A *setup* is a plain mapping ``{parameter name: value}`` of the system's setup
parameters (missing ones take their defaults); *rules* is an instance of the system's
`Rules` type, built from the rules parameters by `RulesSystem.rules`.

>>> sorted(SYSTEMS)
['chronica', 'contingency', 'karbon', 'karst']
>>> karst = get_system("karst")
>>> death = karst.variants["death"]
>>> setup = death.setup({"negative_health": 2})
>>> death.exact(setup, death.rules({}))["death"], death.outcome_column(setup)
(Fraction(3, 4), 'outcome')
"""

from __future__ import annotations

import importlib
import math
import numbers
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

from exactdice.errors import InputError


class _Same:
    """A `Parameter`'s page default when the page has none of its own (its default then)."""

    def __repr__(self) -> str:
        return "SAME"

    def __reduce__(self):
        return "SAME"


#: a `Parameter`'s ``page_default`` when the page has no default of its own
SAME: Any = _Same()

__all__ = [
    "Parameter",
    "TableSet",
    "RulesSystem",
    "DeclaredSystem",
    "RegistryEntry",
    "SYSTEMS",
    "get_system",
    "register",
    "unregister",
    "system_names",
    "system_summary",
    "setup_values",
    "rules_values",
    "limit_values",
    "split_values",
    "SAME",
    "ROLES",
]

#: what a parameter's value belongs to: the setup, the rules, or the limits of the work
ROLES = ("setup", "rules", "limits")


@dataclass(frozen=True)
class Parameter:
    """One declared parameter of a system: enough to build a CLI option or a form field.

    Parameters
    ----------
    name : str
        The Python name (also the key in a values mapping).
    kind : {int, float, str, bool}
        The value's type; ``bool`` is a flag.
    default : Any, optional
        The value when none is given.
    help : str, optional
        One sentence, for ``--help`` and the form.
    minimum, maximum : int, optional
        Bounds of an ``int`` (None: unbounded).
    choices : tuple of str, optional
        The allowed values of a ``str``.
    multiple : bool, default False
        Takes a list (a repeated flag).
    required : bool, default False
        Must be given (no default).
    role : {"setup", "rules", "limits"}
        Whether the value belongs to the setup, to the rules or to the limits of the work
        (``max_states``: how far a solve may go, not what it solves).
    cli_flag : str, optional
        The CLI spelling (default ``--name-with-dashes``; see `flag`).
    short : str, optional
        A one-letter alias such as ``-a``.
    metavar : str, optional
        The value's name in ``--help``.
    example : Any, optional
        What a form starts with where there is no default but the answer needs a value (the
        CLI still asks for one), so a page's first submit gives an answer, not an error.
    label : str, optional
        A form's name for it (default: the name in words, "fail by one").
    page_minimum, page_maximum : int, optional
        The web page's own range, where it must be stricter than the command line (the
        server's workers share one machine); None: the same as ``minimum``/``maximum``.
    page_default : Any, optional
        The page's default, where it differs (a search's seconds: 20 on the page, none on
        the command line).
    on_page, on_cli : bool, default True
        Whether the web page's form and the command line offer it (a file to read is the
        command line's; a knob the page shows knob by knob is not offered twice).
    section : str, optional
        Where a form groups it ("" for the first fields; "hands", "position", "policies",
        "rules", "limits" fold away).
    presets : tuple of (str, str), optional
        Common values of a text parameter with their words; a form offers them as a choice
        beside a box for any other value.
    knobs : mapping, optional
        For a repeated ``NAME=VALUE`` parameter (Karbon's ``rules``): each name's values
        (the default first) and one line about it; a form shows one choice per name.
    reader : callable, optional
        Reads a text value (a dice list, a policy), raising `InputError` naming the
        parameter: `check` calls it, so a form reports each bad field on its own.

    Notes
    -----
    A help text names other parameters quoted in single backquotes: the command line shows
    their flags, the page their labels.

    Examples
    --------
    >>> Parameter("negative_health", int, 0, "h = -health >= 0.", minimum=0).flag
    '--negative-health'
    >>> Parameter("modifier", int, 0, "Added to the d6.", maximum=5).check(9)
    Traceback (most recent call last):
    exactdice.errors.InputError: modifier: must be <= 5, got 9
    >>> Parameter("modifier", int, 0).check("1")
    Traceback (most recent call last):
    exactdice.errors.InputError: modifier: must be a whole number, got '1'
    """

    name: str
    kind: type
    default: Any = None
    help: str = ""
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] | None = None
    multiple: bool = False
    required: bool = False
    role: str = "setup"
    cli_flag: str | None = None
    short: str | None = None
    metavar: str | None = None
    example: Any = None
    label: str | None = None
    page_minimum: int | None = None
    page_maximum: int | None = None
    page_default: Any = SAME
    on_page: bool = True
    on_cli: bool = True
    section: str = ""
    presets: tuple[tuple[str, str], ...] = ()
    knobs: Mapping[str, tuple[tuple[str, ...], str]] | None = None
    reader: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        """The CLI flag: ``cli_flag`` when declared, else ``--`` and the name with dashes."""
        return (self.cli_flag or "--" + self.name.replace("_", "-")).split("/")[0]

    @property
    def words(self) -> str:
        """Its name on a form: the label, else the name in words ("fail by one" -> "Fail by one")."""
        return self.label or self.name.replace("_", " ").capitalize()

    def default_for(self, page: bool = False):
        """The default, on the page where it has one of its own."""
        return self.page_default if page and self.page_default is not SAME else self.default

    def bounds(self, page: bool = False) -> tuple[int | None, int | None]:
        """``(least, most)`` allowed: on the page its own range where it has one."""
        if not page:
            return self.minimum, self.maximum
        return (
            self.minimum if self.page_minimum is None else self.page_minimum,
            self.maximum if self.page_maximum is None else self.page_maximum,
        )

    def check(self, value, page: bool = False):
        """The value if it is allowed (on the page, within its range there), else an
        `InputError` naming this parameter."""
        values = value if self.multiple else (value,)
        least, most = self.bounds(page)
        for item in values:
            if item is None:
                if self.required:
                    raise InputError(self.name, "is required")
                continue
            if not _is_kind(item, self.kind):
                raise InputError(self.name, f"must be {_KIND_WORDS.get(self.kind, self.kind.__name__)}, got {item!r}")
            if self.kind is float and not math.isfinite(item):
                raise InputError(self.name, f"must be a finite number, got {item!r}")
            if self.choices is not None and item not in self.choices:
                raise InputError(self.name, f"must be one of {', '.join(self.choices)}, got {item!r}")
            if least is not None and item < least:
                raise InputError(self.name, f"must be >= {least:,}, got {item!r}")
            if most is not None and item > most:
                wider = "" if most == self.maximum else " on this page (the command line takes more)"
                raise InputError(self.name, f"must be <= {most:,}{wider}, got {item!r}")
            if self.reader is not None:
                self.reader(item)
        return value


_KIND_WORDS = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}


def _is_kind(value, kind: type) -> bool:
    """Whether ``value`` is of a parameter's kind: any integer (numpy's too) for ``int``, any
    real for ``float``, never a bool for either; a path for text (a file's name)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        number = numbers.Integral if kind is int else numbers.Real
        return not isinstance(value, bool) and isinstance(value, number)
    if kind is str:
        return isinstance(value, (str, os.PathLike))
    return isinstance(value, kind)


@dataclass(frozen=True)
class TableSet:
    """One canonical group of table grids, written together as ``<system>/<name>.<format>``.

    Parameters
    ----------
    system : str
        The rules system.
    name : str
        The set's file name, without suffix.
    description : str
        One line about it (for ``tables/README.md``).
    command : str
        The ``exactdice`` command that makes the same file.
    jobs : tuple, optional
        `exactdice.tables.TableJob` / `exactdice.tables.CellGrid` objects.
    tags : tuple of str, optional
        Let a caller pick sets (for example Karbon's ``fixed`` and ``optimal`` policy pairs).
    """

    system: str
    name: str
    description: str
    command: str
    jobs: tuple = ()
    tags: tuple[str, ...] = field(default=())


@runtime_checkable
class RulesSystem(Protocol):
    """What the layers above need from a rules system (a protocol: no base class required).

    A system has a ``name``, a one-line ``summary``, its ``rules_type``, its declared
    ``parameters`` and ``variants``, and these methods: ``setup(values)`` and
    ``rules(values)`` read a mapping of values into a checked setup and a rules object;
    ``exact(setup, rules)`` gives the exact outcome distribution (summing to exactly 1);
    ``simulate(setup, rules, n, seed)`` seeded trials as columns; ``outcome_column(setup)``
    the simulator's outcome column; ``table_sets()`` its canonical tables.

    ``variants`` maps sub-system names to systems of their own (Karst: one per roll);
    a system with variants has no parameters of its own and its other methods are not
    called.

    Optional: ``column_distributions(setup, rules)`` gives the exact law of further
    simulated columns, ``{column: exactdice.validation.ColumnDistribution}`` (rounds,
    omens, success dice...); ``exactdice validate`` then tests each of them too.
    ``exact_laws(setup, rules)`` gives ``(exact(...), column_distributions(...))`` from
    one solve, for a validation that needs both (the first None where ``exact`` would
    refuse the setup).

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is not instantiated; ``isinstance(system, RulesSystem)`` checks the
        shape. `DeclaredSystem` builds one from declarations.
    """

    name: str
    summary: str
    rules_type: type
    parameters: tuple[Parameter, ...]
    variants: Mapping[str, "RulesSystem"]

    def setup(self, values: Mapping[str, Any]) -> dict:
        """The setup: every setup parameter's value (defaults filled in), checked."""

    def rules(self, values: Mapping[str, Any]) -> Any:
        """A `Rules` object from the rules parameters' values (missing: defaults)."""

    def exact(self, setup: Mapping[str, Any], rules) -> dict[Hashable, Fraction]:
        """Exact ``{outcome: probability}`` of `outcome_column`, summing to exactly 1."""

    def simulate(self, setup: Mapping[str, Any], rules, n: int, seed: int) -> Mapping[str, Sequence]:
        """``n`` simulated trials as columns (``{column name: values}``), seeded."""

    def outcome_column(self, setup: Mapping[str, Any]) -> str:
        """The simulated column whose values `exact` gives the law of."""

    def table_sets(self) -> list[TableSet]:
        """The system's canonical printable tables."""


@dataclass(frozen=True)
class DeclaredSystem:
    """A `RulesSystem` made of declarations and plain functions.

    The one shape the system packages share (any other object with the protocol's
    attributes fits as well). The declared *parameters* read a setup and the rules
    (`setup_values`, `rules_values`).

    Parameters
    ----------
    name : str
        The registry name (``exactdice <name> ...``).
    summary : str
        One line about it.
    rules_type : type
        Its `Rules` type (a frozen dataclass of the knobs).
    parameters : tuple of Parameter, optional
        Its setup and rules parameters.
    make_rules : callable, optional
        Builds the rules object from the checked rules values (default: *rules_type*).
    exact : callable, optional
        ``exact(setup, rules) -> {outcome: Fraction}``, summing to exactly 1.
    simulate : callable, optional
        ``simulate(setup, rules, n, seed) -> {column: values}``, independent of *exact*.
    outcome : str or callable, default "outcome"
        The outcome column's name, or a function of the setup that gives it.
    column_distributions, exact_laws : callable, optional
        As in `RulesSystem`.
    table_sets : callable, optional
        ``table_sets() -> [TableSet]``, its canonical tables.
    variants : mapping of str to RulesSystem, optional
        Sub-systems (Karst); a system made of variants declares no *exact* or *simulate*.
    outcome_words : callable, optional
        An outcome as a person reads it (Chronica's "0" is "side 0 (the player)").
    task : str, optional
        What a person asks of it, for a menu ("Contingency skill check"; default: the name).
    charts : callable, optional
        ``charts(setup, rules) -> {name: exactdice.tables.charts.Chart}``: pictures of the
        answer drawn from exact values (a check's chance against difficulty).

    Raises
    ------
    TypeError
        A system without variants that lacks *exact* or *simulate*.

    Examples
    --------
    >>> from fractions import Fraction
    >>> coin = DeclaredSystem("coin", "A coin.", dict,
    ...                       exact=lambda setup, rules: {"heads": Fraction(1, 2), "tails": Fraction(1, 2)},
    ...                       simulate=lambda setup, rules, n, seed: {"outcome": ["heads"] * n})
    >>> coin.exact(coin.setup({}), coin.rules({}))["heads"], coin.outcome_column({})
    (Fraction(1, 2), 'outcome')
    >>> isinstance(coin, RulesSystem), coin.table_sets()
    (True, [])
    """

    name: str
    summary: str
    rules_type: type
    parameters: tuple[Parameter, ...] = ()
    make_rules: Callable[..., Any] | None = None
    exact: Callable[[Mapping[str, Any], Any], dict] | None = None
    simulate: Callable[[Mapping[str, Any], Any, int, int], Mapping[str, Sequence]] | None = None
    outcome: str | Callable[[Mapping[str, Any]], str] = "outcome"
    column_distributions: Callable[[Mapping[str, Any], Any], dict] | None = None
    exact_laws: Callable[[Mapping[str, Any], Any], tuple[dict, dict]] | None = None
    table_sets: Callable[[], list[TableSet]] = list
    variants: Mapping[str, RulesSystem] = field(default_factory=dict)
    #: optional: an outcome as a person reads it (Chronica's "0" is "side 0 (the player)")
    outcome_words: Callable[[str], str] | None = None
    task: str = ""
    charts: Callable[[Mapping[str, Any], Any], dict] | None = None

    def __post_init__(self):
        for name in ("exact", "simulate"):
            if getattr(self, name) is not None:
                continue
            if not self.variants:
                raise TypeError(f"system {self.name!r} declares neither {name} nor variants")
            object.__setattr__(self, name, _VariantsOnly(self.name, tuple(self.variants)))

    def setup(self, values: Mapping[str, Any]) -> dict:
        """The setup: every setup parameter's value (defaults filled in), checked."""
        return setup_values(self, values)

    def rules(self, values: Mapping[str, Any]) -> Any:
        """The `Rules` object of the rules parameters' values (missing: defaults), checked."""
        return (self.make_rules or self.rules_type)(**rules_values(self, values))

    def outcome_column(self, setup: Mapping[str, Any]) -> str:
        """The simulated column whose values `exact` gives the law of."""
        return self.outcome(setup) if callable(self.outcome) else self.outcome


@dataclass(frozen=True)
class _VariantsOnly:
    """What a system made of variants answers when asked for its own law or samples."""

    system: str
    variants: tuple[str, ...]

    def __call__(self, *arguments, **keywords):
        raise InputError(
            "system", f"{self.system} is {len(self.variants)} variants; use one of them ({', '.join(self.variants)})"
        )


@dataclass(frozen=True)
class RegistryEntry:
    """Where a system lives and one line about it, so listing the systems imports none of them.

    Parameters
    ----------
    target : str or RulesSystem
        ``"module:attribute"`` naming the system, or the object itself.
    summary : str
        One line about it.
    """

    target: Any
    summary: str


#: system name -> its `RegistryEntry`; the object is imported on first use
SYSTEMS: dict[str, RegistryEntry] = {
    "karbon": RegistryEntry("exactdice.karbon.system:SYSTEM", "Karbon contests: win, loss, tie or unfinished."),
    "contingency": RegistryEntry(
        "exactdice.contingency.system:SYSTEM", "Contingency skill checks: success, success-with-condition, failure."
    ),
    "chronica": RegistryEntry("exactdice.chronica.system:SYSTEM", "Chronica contests: the winning side or tie."),
    "karst": RegistryEntry(
        "exactdice.karst.system:SYSTEM", "Karst rolls: action | opposed | attack | death | order (one subcommand each)."
    ),
}

_LOADED: dict[str, RulesSystem] = {}


def register(name: str, target: RulesSystem | DeclaredSystem | str, summary: str | None = None) -> None:
    """Add a system to the registry (or replace one of the same name).

    Parameters
    ----------
    name : str
        Its name on the command line and the web page.
    target : RulesSystem, DeclaredSystem or str
        The system, or ``"module:attribute"`` naming it (imported on first use).
    summary : str, optional
        One line about it (default: the system's own ``summary``).

    Examples
    --------
    >>> register("coin", "exactdice.systems:_EXAMPLE", "A coin."); "coin" in system_names()
    True
    >>> unregister("coin")
    """
    if summary is None:
        summary = target.summary if not isinstance(target, str) else name
    SYSTEMS[name] = RegistryEntry(target, summary)
    _LOADED.pop(name, None)


def unregister(name: str) -> None:
    """Remove a system added with `register` (tests use it to clean up).

    Parameters
    ----------
    name : str
        The system's name; an unknown name is ignored.
    """
    SYSTEMS.pop(name, None)
    _LOADED.pop(name, None)


def system_names() -> list[str]:
    """The registered systems' names, in registry order (imports none of them).

    Returns
    -------
    list of str
        The names.
    """
    return list(SYSTEMS)


def system_summary(name: str) -> str:
    """One line about a registered system (imports nothing).

    Parameters
    ----------
    name : str
        A registered system's name.

    Returns
    -------
    str
        Its summary.

    Raises
    ------
    KeyError
        An unregistered name.
    """
    return SYSTEMS[name].summary


def get_system(name: str) -> RulesSystem:
    """The registered system called *name* (its package is imported now).

    Parameters
    ----------
    name : str
        A registered system's name.

    Returns
    -------
    RulesSystem
        The system.

    Raises
    ------
    InputError
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> get_system("karbon").rules_type.__name__
    'Rules'
    >>> get_system("monopoly")
    Traceback (most recent call last):
    exactdice.errors.InputError: system: unknown system 'monopoly' (known: karbon, contingency, chronica, karst)
    """
    if name not in SYSTEMS:
        raise InputError("system", f"unknown system {name!r} (known: {', '.join(SYSTEMS)})")
    if name not in _LOADED:
        target = SYSTEMS[name].target
        if isinstance(target, str):
            module_name, attribute = target.split(":")
            target = getattr(importlib.import_module(module_name), attribute)
        _LOADED[name] = target
    return _LOADED[name]


def split_values(system: RulesSystem, values: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(setup values, rules values)``: *values* split by each parameter's role.

    Parameters
    ----------
    system : RulesSystem
        The system.
    values : mapping of str to Any
        Setup and rules values together.

    Returns
    -------
    tuple of (dict, dict)
        The setup values and the rules values.

    Examples
    --------
    >>> setup, rules = split_values(get_system("contingency"), {"dice": "3d6", "luck": "always"})
    >>> setup, rules
    ({'dice': '3d6'}, {'luck': 'always'})
    """
    _check_known(system, values)
    roles = {parameter.name: parameter.role for parameter in system.parameters}
    setup = {name: value for name, value in values.items() if roles[name] == "setup"}
    rules = {name: value for name, value in values.items() if roles[name] == "rules"}
    return setup, rules


def limit_values(system: RulesSystem, values: Mapping[str, Any]) -> dict:
    """Every limit parameter of *system* with its value from *values* or its default, checked.

    Parameters
    ----------
    system : RulesSystem
        The system.
    values : mapping of str to Any
        The values given (setup and rules values may be among them).

    Returns
    -------
    dict
        Every limit parameter's checked value.

    Examples
    --------
    >>> limit_values(get_system("karbon"), {"max_states": 500})["max_states"]
    500
    """
    _check_known(system, values)
    return {
        parameter.name: parameter.check(_given(parameter, values))
        for parameter in system.parameters
        if parameter.role == "limits"
    }


def _check_known(system: RulesSystem, values: Mapping[str, Any]) -> None:
    """Refuse a name that is none of *system*'s parameters (a misspelt one would otherwise
    leave its parameter at the default, and the answer silently wrong)."""
    import difflib

    names = [parameter.name for parameter in system.parameters]
    by_flag = {parameter.flag.lstrip("-").replace("-", "_"): parameter.name for parameter in system.parameters}
    for name in values:
        if name not in names:
            close = [by_flag[name]] if name in by_flag else difflib.get_close_matches(str(name), names, n=1)
            raise InputError(
                name,
                f"is not a parameter of {system.name}"
                + (f' (did you mean "{close[0]}"?)' if close else "")
                + f"; its parameters: {', '.join(names)}",
            )


def setup_values(system: RulesSystem, values: Mapping[str, Any]) -> dict:
    """Every setup parameter of *system* with its value from *values* or its default, checked.

    Parameters
    ----------
    system : RulesSystem
        The system.
    values : mapping of str to Any
        The values given; may hold the rules parameters too, but no name that is not a
        parameter.

    Returns
    -------
    dict
        Every setup parameter's checked value.

    Raises
    ------
    InputError
        A name that is no parameter (with the nearest one), or a value not allowed.

    Examples
    --------
    >>> setup_values(get_system("karst").variants["action"], {})
    {'modifier': 0}
    >>> setup_values(get_system("karst").variants["action"], {"modifer": 1})
    Traceback (most recent call last):
    exactdice.errors.InputError: modifer: is not a parameter of action (did you mean "modifier"?); its parameters: modifier
    """
    _check_known(system, values)
    setup = {}
    for parameter in system.parameters:
        if parameter.role != "setup":
            continue
        setup[parameter.name] = parameter.check(_given(parameter, values))
    return setup


def rules_values(system: RulesSystem, values: Mapping[str, Any]) -> dict:
    """Every rules parameter of *system* with its value from *values* or its default, checked.

    Parameters
    ----------
    system : RulesSystem
        The system.
    values : mapping of str to Any
        The values given (setup values may be among them; no name that is not a parameter).

    Returns
    -------
    dict
        Every rules parameter's checked value.

    Raises
    ------
    InputError
        A name that is no parameter (with the nearest one), or a value not allowed.
    """
    _check_known(system, values)
    return {
        parameter.name: parameter.check(_given(parameter, values))
        for parameter in system.parameters
        if parameter.role == "rules"
    }


def _given(parameter: Parameter, values: Mapping[str, Any]):
    """A parameter's value in *values*, or its default (also where it is given as None, as a
    Python caller leaves a keyword to its default); a list parameter as a tuple (one text
    given alone is one item, not its letters)."""
    value = values.get(parameter.name)
    if value is None:
        value = parameter.default
    if not parameter.multiple:
        return value
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True)
class _Example:
    """A one-line registry entry for `register`'s doctest."""

    name: str = "coin"


_EXAMPLE = _Example()
