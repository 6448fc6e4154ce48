"""Karbon's knobs: every place where the rules text allows another reading (spec sections 4-7).

>>> Rules().with_rules(["tie_order=narrator_first"]).tie_order
'narrator_first'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from exactdice.errors import InputError

__all__ = ["Rules", "RULE_CHOICES"]

#: knob name -> allowed values, the default first
RULE_CHOICES: dict[str, tuple[str, ...]] = {
    "peril_chips": ("stack", "hand"),
    "rewards_per_test": ("unlimited", "1"),
    "tie_order": ("player_first", "narrator_first"),
    "sideswipe_picker": ("player", "narrator"),
    "injury_peril": ("off", "on"),
    "sudden_death": ("off", "on"),
    "objective": ("score", "win"),
}


@dataclass(frozen=True)
class Rules:
    """The reading of the rules a result was computed under (defaults as in the spec).

    Every field is a knob: a place where the rules' text allows another reading. On the
    command line each is ``--rule NAME=VALUE``; `Rules.with_rules` reads such texts.

    Parameters
    ----------
    peril_chips : {"stack", "hand"}
        Peril hits go on the narrator's stack, or into its hand.
    rewards_per_test : {"unlimited", "1"}
        Completions a side may earn in one Test.
    tie_order : {"player_first", "narrator_first"}
        Whose rewards resolve first when both sides complete.
    sideswipe_picker : {"player", "narrator"}
        Who picks the two dice a sideswipe takes.
    injury_peril : {"off", "on"}
        Each injury also adds a peril die.
    sudden_death : {"off", "on"}
        A tie is followed by a one-place sudden-death contest.
    objective : {"score", "win"}
        What optimal play maximises: the expected score, or P(win) alone.

    Raises
    ------
    InputError
        A value that is not one of the knob's choices.
    """

    peril_chips: str = "stack"
    rewards_per_test: str = "unlimited"
    tie_order: str = "player_first"
    sideswipe_picker: str = "player"
    injury_peril: str = "off"
    sudden_death: str = "off"
    objective: str = "score"

    def __post_init__(self):
        for knob in fields(self):
            value = getattr(self, knob.name)
            allowed = RULE_CHOICES[knob.name]
            if isinstance(value, bool) and allowed == ("off", "on"):  # Rules(sudden_death=True)
                value = "on" if value else "off"
                object.__setattr__(self, knob.name, value)
            if value not in allowed:
                raise InputError(
                    "rules", f"{knob.name}={value} is not allowed; {knob.name} takes {' | '.join(allowed)}"
                )

    def with_rules(self, assignments) -> "Rules":
        """A copy with ``NAME=VALUE`` assignments applied (the CLI's ``--rule``).

        >>> Rules().with_rules(["sudden_death=on"]).sudden_death
        'on'
        """
        changes = {}
        for text in assignments:
            name, sep, value = text.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not name:
                raise InputError("rules", f'"{text}" is not NAME=VALUE; knobs: {", ".join(RULE_CHOICES)}')
            if name not in RULE_CHOICES:
                raise InputError("rules", f'unknown knob "{name}"; knobs: {", ".join(RULE_CHOICES)}')
            if name in changes and changes[name] != value:
                raise InputError(
                    "rules", f"{name} is set twice ({name}={changes[name]} and {name}={value}); give each knob once"
                )
            changes[name] = value
        return replace(self, **changes)

    def differences(self) -> str:
        """The knobs set away from the spec's reading, in words, for output.

        >>> Rules().differences(), Rules(sudden_death="on").differences()
        ('the default reading', 'sudden_death=on')
        """
        changed = [f"{name}={value}" for name, value in self.to_dict().items() if value != RULE_CHOICES[name][0]]
        return ", ".join(changed) if changed else "the default reading"

    def to_dict(self) -> dict[str, str]:
        """Knob name -> value (part of every result and cache key)."""
        return asdict(self)
