"""The model interface a game implements so the solver can explore and solve it.

A model is any object with ``outcomes``, ``reward_names``, ``initial_state()`` and
``expand(state)``; expanding a state says whether play ended there (`Terminal`), a
random event happens (`Chance`, integer weights) or a player chooses (`Decision`).

>>> Chance(((1, "heads", None), (1, "tails", None))).branches[0][1]
'heads'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Protocol, Union, runtime_checkable

__all__ = ["Terminal", "Chance", "KeyedChance", "KeySlots", "keyed_expander", "Decision", "Node", "Model"]


@dataclass(frozen=True, slots=True)
class Terminal:
    """Play ended with this outcome (one of ``model.outcomes``).

    Parameters
    ----------
    outcome : str
        The outcome's name.

    Examples
    --------
    >>> Terminal("win").outcome
    'win'
    """

    outcome: str


@dataclass(frozen=True, slots=True)
class Chance:
    """A random event: ``branches`` is a tuple of ``(weight, next_state, rewards)``.

    Probability of a branch = weight / sum of weights; weights are positive ints, so every
    probability is an exact ratio and nothing is rounded.

    Parameters
    ----------
    branches : tuple of (int, Hashable, tuple of int or None)
        Each branch's positive integer weight, the state it leads to and its rewards: None,
        or a tuple of ints aligned with ``model.reward_names``.

    Examples
    --------
    >>> len(Chance(((5, 0, None), (1, 1, (1,)))).branches)
    2
    """

    branches: tuple


@dataclass(frozen=True, slots=True)
class Decision:
    """A player's choice among named actions.

    Parameters
    ----------
    side : {"max", "min"}
        Whether the side choosing maximises or minimises the expected payoff.
    actions : tuple of (str, Hashable, tuple of int or None)
        ``(name, next_state, rewards)`` per action; their order breaks ties (first wins).

    Examples
    --------
    >>> Decision("max", (("hold", 0, None), ("roll", 1, None))).actions[1][0]
    'roll'
    """

    side: str
    actions: tuple


@dataclass(frozen=True, slots=True)
class KeyedChance:
    """A `Chance` whose branches name ``(next_state, rewards)`` by an int key into
    ``table``, a list the model only ever appends to: ``branches`` is a tuple of
    ``(weight, key)``. A model may offer ``expand_keyed(state)`` returning it (or any
    other node) for `explore`, which then hashes each key once instead of every
    branch's state; ``expand`` still returns plain nodes for every other caller.

    >>> KeyedChance(((3, 0), (1, 1)), [("heads", None), ("tails", (1,))]).branches[1]
    (1, 1)
    """

    branches: tuple
    table: list


class KeySlots:
    """One slot per key of the `KeyedChance` table in use, for what a caller derives from
    a key once (its node id, say): a key's state is then hashed the first time it is met,
    later it is a list look-up. A new table starts afresh.

    >>> slots = KeySlots()
    >>> slots.for_table(["a", "b"])
    [None, None]
    """

    def __init__(self):
        self._table = None
        self._slots: list = []

    def for_table(self, table: list) -> list:
        """The slot list of ``table``, grown to its current length."""
        if table is not self._table:
            self._table, self._slots = table, []
        slots = self._slots
        if len(slots) < len(table):
            slots.extend([None] * (len(table) - len(slots)))
        return slots


def keyed_expander(model):
    """The model's ``expand_keyed`` where it has one, else its ``expand``: what an
    explorer that takes `KeyedChance` nodes calls.

    >>> class Coin:
    ...     def expand(self, state): return Terminal("heads")
    >>> keyed_expander(Coin())(0)
    Terminal(outcome='heads')
    """
    return getattr(model, "expand_keyed", None) or model.expand


Node = Union[Terminal, Chance, Decision]


@runtime_checkable
class Model(Protocol):
    """What the solver needs from a game (a protocol: no base class required).

    Any object with these attributes and methods is a model: ``outcomes``, the names of
    the ways play can end (the first is what `solve` maximises by default);
    ``reward_names``, the counters a branch can add to; ``initial_state()``, a hashable
    state; and ``expand(state)``, which returns a `Terminal`, a `Chance` or a `Decision`.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is not instantiated; ``isinstance(model, Model)`` checks the shape.

    Examples
    --------
    >>> class Coin:
    ...     outcomes, reward_names = ("heads", "tails"), ()
    ...     def initial_state(self): return "toss"
    ...     def expand(self, state):
    ...         return Chance(((1, "heads", None), (1, "tails", None))) if state == "toss" else Terminal(state)
    >>> isinstance(Coin(), Model)
    True
    """

    outcomes: tuple
    reward_names: tuple

    def initial_state(self) -> Hashable: ...

    def expand(self, state) -> Node: ...
