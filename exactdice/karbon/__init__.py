"""Karbon contests (the reading in `exactdice.karbon.reading`) solved exactly as a Markov state graph.

>>> from exactdice.karbon import ContestSetup, contest_odds
>>> odds = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2}, reserve={}))
>>> odds.win + odds.loss + odds.tie + odds.never_ends
Fraction(1, 1)

The exact model (`KarbonModel`, `contest_odds`) is imported on first use, so the simulator
(`exactdice.karbon.simulate`) runs without loading it or the Markov solver.
"""

from importlib import import_module

from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy, parse_narrator_policy, parse_player_policy
from exactdice.karbon.position import Position
from exactdice.karbon.ruleset import RULE_CHOICES, Rules
from exactdice.karbon.setup import ContestSetup, read_state_file

__all__ = [
    "ContestSetup",
    "ContestOdds",
    "contest_odds",
    "expected_distribution",
    "Rules",
    "RULE_CHOICES",
    "PlayerPolicy",
    "NarratorPolicy",
    "parse_player_policy",
    "parse_narrator_policy",
    "read_state_file",
    "KarbonModel",
    "Position",
]

# name -> module holding it; imported when first asked for (PEP 562)
_EXACT_MODEL = {
    "KarbonModel": "exactdice.karbon.model",
    "ContestOdds": "exactdice.karbon.solve",
    "contest_odds": "exactdice.karbon.solve",
    "expected_distribution": "exactdice.karbon.solve",
}


def __getattr__(name):
    if name in _EXACT_MODEL:
        return getattr(import_module(_EXACT_MODEL[name]), name)
    raise AttributeError(f"module 'exactdice.karbon' has no attribute {name!r}")


def __dir__():  # dir() and completion list the names imported on first use too
    return sorted(set(globals()) | set(__all__))
