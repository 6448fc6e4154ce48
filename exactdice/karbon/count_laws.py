"""The exact laws of the Karbon simulator's count columns (for ``exactdice validate karbon``).

The solver gives the expected rounds, Breaks, Glitches, injuries and conditions; these laws
come from `exactdice.markov.reward_counts`, which solves the chain again with the running
total in each state. Kept apart from `exactdice.karbon.simulate`, which loads no exact model.
"""

from __future__ import annotations

from exactdice.karbon.policies import NarratorPolicy, PlayerPolicy
from exactdice.karbon.ruleset import Rules

__all__ = ["COUNT_COLUMNS", "column_distributions"]

#: the simulator's count columns and the model's reward each one totals
COUNT_COLUMNS = {
    "rounds": "rounds",
    "breaks": "breaks",
    "glitches": "glitches",
    "injuries": "injuries",
    "conditions": "conditions",
}


def column_distributions(
    setup, ruleset: Rules | None = None, player: PlayerPolicy | None = None, narrator: NarratorPolicy | None = None
) -> dict:
    """The exact law of the count columns (rounds, breaks, glitches, injuries, conditions),
    column -> `exactdice.validation.ColumnDistribution`, each listed up to a few times its
    mean with the rest exactly in one tail category (`exactdice.markov.reward_counts`).

    Only fixed (or random-narrator) policies: the counting chain takes no decisions, so
    under optimal or kind play no column is given (an empty dict).

    >>> from exactdice.karbon.setup import ContestSetup
    >>> columns = column_distributions(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1},
    ...                                             consequence=1, pool={}, reserve={}))
    >>> from exactdice.karbon.solve import expected_distribution
    >>> columns["breaks"].probabilities["1"] == expected_distribution(
    ...     ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}))["win"]
    True
    """
    import math

    from exactdice.karbon.model import KarbonModel
    from exactdice.karbon.solve import contest_odds
    from exactdice.markov.reward_counts import reward_count_distribution
    from exactdice.validation import ColumnDistribution

    ruleset, player, narrator = ruleset or Rules(), player or PlayerPolicy(), narrator or NarratorPolicy()
    if player.kind == "optimal" or narrator.kind in ("optimal", "kind"):
        return {}
    odds = contest_odds(setup, ruleset, player, narrator)
    start = setup.start(player, narrator)
    model = KarbonModel(start.sizes, start.situation(), ruleset, player, narrator)
    means = {
        "rounds": odds.expected_rounds,
        "breaks": odds.expected_breaks,
        "glitches": odds.expected_glitches,
        "injuries": odds.expected_injuries,
        "conditions": odds.expected_conditions,
    }
    columns = {}
    for column, reward in COUNT_COLUMNS.items():
        mean = means[reward]
        if mean is None:  # play may never end: the totals have no law to test against
            continue
        cap = min(60, math.ceil(3 * mean) + 2)
        law = reward_count_distribution(model, reward, cap)
        columns[column] = ColumnDistribution(law, tail_from=cap + 1)
    return columns
