"""Karbon contests (the reading in `exactdice.karbon.reading`) solved exactly as a Markov state graph.

>>> from exactdice.karbon import ContestSetup, contest_odds
>>> odds = contest_odds(ContestSetup(ability=1, challenge=1, consequence=1, pool={8: 2}, reserve={}))
>>> odds.win + odds.loss + odds.tie + odds.never_ends
Fraction(1, 1)
"""

from exactdice.karbon.model import KarbonModel, Position
from exactdice.karbon.policies import (NarratorPolicy, PlayerPolicy, parse_narrator_policy,
                                       parse_player_policy)
from exactdice.karbon.ruleset import RULE_CHOICES, KarbonRuleset
from exactdice.karbon.setup import ContestSetup, read_state_file
from exactdice.karbon.solve import ContestOdds, contest_odds

__all__ = ["ContestSetup", "ContestOdds", "contest_odds", "KarbonRuleset", "RULE_CHOICES",
           "PlayerPolicy", "NarratorPolicy", "parse_player_policy", "parse_narrator_policy",
           "read_state_file", "KarbonModel", "Position"]
