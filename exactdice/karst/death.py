"""Karst death rolls as an absorbing Markov chain, solved on `exactdice.markov`.

A death roll is d6 - h + modifier, to a minimum of 1 (h = negative health): a natural 6
or a result of 6+ is stable, a result of 1 is death, anything else is inconclusive and
the character rolls again at the end of each following round. Each aid action in a
round is an extra roll before the end-of-round roll: stable as usual, but a 1 only
raises h by one.

Our reading of the timing: aid happens in the rounds that end with a death roll
(rounds 1, 2, ...), not in the round the character fell; the death-roll modifier also
applies to aid rolls (they are death rolls). Rounds are counted from 1 for the first
round after the fall (0 when the first roll settles it).

>>> solution = solve_death(2)
>>> solution.death, solution.stable
(Fraction(3, 4), Fraction(1, 4))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdice.core.exact import fraction_text
from exactdice.errors import InputError, TooLargeError
from exactdice.karst.rounds import MAX_ROUNDS, RoundsDistribution, tail_is_small
from exactdice.karst.ruleset import Rules
from exactdice.markov import Chance, Terminal, solve

__all__ = ["DeathRollChain", "DeathSolution", "death_roll_faces", "solve_death", "DEATH_OUTCOMES"]

DEATH_OUTCOMES = ("death", "stable")
_DEAD, _STABLE = ("death",), ("stable",)


def death_roll_faces(negative_health: int, modifier: int = 0) -> dict:
    """How many of the six faces make a death roll stable, deadly (a 1) or inconclusive.

    Parameters
    ----------
    negative_health : int
        h, the negative health.
    modifier : int, default 0
        Added to the roll.

    Returns
    -------
    dict of str to int
        ``stable``, ``one`` and ``inconclusive`` face counts, summing to 6.

    Examples
    --------
    >>> death_roll_faces(2)
    {'stable': 1, 'one': 3, 'inconclusive': 2}
    """
    counts = {"stable": 0, "one": 0, "inconclusive": 0}
    for natural in range(1, 7):
        result = max(1, natural - negative_health + modifier)
        if natural == 6 or result >= 6:
            counts["stable"] += 1
        elif result == 1:
            counts["one"] += 1
        else:
            counts["inconclusive"] += 1
    return counts


class DeathRollChain:
    """The death-roll chain as an `exactdice.markov` model (reward ``rounds``).

    States: ``("first", h)`` the roll made at once; ``("round", h, i)`` during a later
    round after ``i`` aid rolls (``i == aid``: the end-of-round roll). h is merged above
    the level where every face but a natural 6 already gives 1.

    Parameters
    ----------
    negative_health : int
        h, the negative health (>= 0).
    modifier : int, default 0
        Added to each death roll.
    aid : int, default 0
        Aid actions each round.

    Examples
    --------
    >>> DeathRollChain(2).expand(("first", 2)).branches[0]
    (1, ('stable',), None)
    """

    outcomes = DEATH_OUTCOMES
    reward_names = ("rounds",)

    def __init__(self, negative_health: int, modifier: int = 0, aid: int = 0):
        if not isinstance(negative_health, int) or negative_health < 0:
            raise InputError("negative_health", f"must be a whole number >= 0, got {negative_health!r}")
        if aid < 0:
            raise InputError("aid", f"must be >= 0, got {aid}")
        self.modifier = modifier
        self.aid = aid
        # from here on, faces 1-5 all give a result of 1: higher h behaves the same
        self.merged_from = max(0, 4 + modifier)
        self.start = self._merge(negative_health)

    def _merge(self, negative_health: int) -> int:
        return min(negative_health, self.merged_from)

    def initial_state(self):
        return ("first", self.start)

    def expand(self, state):
        if state == _DEAD:
            return Terminal("death")
        if state == _STABLE:
            return Terminal("stable")
        if state[0] == "first":
            return self._death_roll(state[1], first=True)
        _, negative_health, aid_done = state
        if aid_done == self.aid:
            return self._death_roll(negative_health, first=False)
        faces = death_roll_faces(negative_health, self.modifier)
        branches = (
            (faces["stable"], _STABLE, None),
            (faces["one"], ("round", self._merge(negative_health + 1), aid_done + 1), None),
            (faces["inconclusive"], ("round", negative_health, aid_done + 1), None),
        )
        return Chance(tuple(branch for branch in branches if branch[0]))

    def _death_roll(self, negative_health: int, first: bool):
        faces = death_roll_faces(negative_health, self.modifier)
        branches = (
            (faces["stable"], _STABLE, None),
            (faces["one"], _DEAD, None),
            (faces["inconclusive"], ("round", negative_health, 0), (1,)),  # on to the next round
        )
        return Chance(tuple(branch for branch in branches if branch[0]))


@dataclass(frozen=True)
class DeathSolution:
    """What `solve_death` found.

    Attributes
    ----------
    negative_health, modifier : int
        The roll solved.
    rules : Rules
        The reading of the rules (``aid``).
    death, stable : Fraction
        The exact probabilities, summing to exactly 1.
    expected_rounds : Fraction
        The exact mean number of rounds.
    rounds : RoundsDistribution
        P(exactly r rounds) for the listed rounds, and the rest exactly.
    states : int
        The size of the solved chain.
    """

    negative_health: int
    modifier: int
    rules: Rules
    death: Fraction
    stable: Fraction
    expected_rounds: Fraction
    rounds: RoundsDistribution
    states: int

    def to_json(self) -> dict:
        """JSON-ready result (keys ``death``, ``stable``, ``expected_rounds``, ``rounds``)."""
        return {
            "setup": {"negative_health": self.negative_health, "modifier": self.modifier},
            "rules": self.rules.to_dict(),
            "death": fraction_text(self.death),
            "stable": fraction_text(self.stable),
            "expected_rounds": fraction_text(self.expected_rounds),
            "rounds": self.rounds.to_json(),
            "states": self.states,
        }


def _rounds_distribution(chain: DeathRollChain) -> RoundsDistribution:
    """Push the chain's mass forward one round at a time, exactly, until the tail is tiny."""
    probabilities: dict = {}
    current = {chain.initial_state(): Fraction(1)}
    round_number = 0
    while True:
        settled = Fraction(0)
        next_round: dict = {}
        pending = current
        while pending:  # within a round the aid steps only move forward
            following: dict = {}
            for state, mass in pending.items():
                node = chain.expand(state)
                if isinstance(node, Terminal):
                    settled += mass
                    continue
                total = sum(weight for weight, _, _ in node.branches)
                for weight, target, rewards in node.branches:
                    share = mass * Fraction(weight, total)
                    bucket = next_round if rewards else following
                    bucket[target] = bucket.get(target, 0) + share
            pending = following
        probabilities[round_number] = settled
        remaining = sum(next_round.values(), Fraction(0))
        if tail_is_small(remaining.numerator, remaining.denominator):
            return RoundsDistribution(probabilities, remaining)
        round_number += 1
        if round_number > MAX_ROUNDS:
            raise TooLargeError(
                "negative_health", f"the rounds distribution needs more than {MAX_ROUNDS:,} rounds (the limit)"
            )
        current = next_round


def solve_death(negative_health: int, modifier: int = 0, rules: Rules = Rules()) -> DeathSolution:
    """Solve the death roll from negative health h exactly (aid per round from ``rules``).

    Parameters
    ----------
    negative_health : int
        h, the negative health (>= 0).
    modifier : int, default 0
        Added to each roll.
    rules : Rules, optional
        The reading of the rules (``aid``).

    Returns
    -------
    DeathSolution
        P(death), P(stable), the expected rounds and the rounds' distribution.

    Raises
    ------
    InputError
        A negative health that is not a whole number >= 0, or negative aid.

    Examples
    --------
    >>> solve_death(0).death
    Fraction(1, 2)
    >>> solve_death(0, rules=Rules(aid=1)).rounds.probabilities[0]
    Fraction(1, 3)
    """
    chain = DeathRollChain(negative_health, modifier, rules.aid)
    solution = solve(chain)
    rounds = _rounds_distribution(chain)
    return DeathSolution(
        negative_health,
        modifier,
        rules,
        solution.absorption["death"],
        solution.absorption["stable"],
        solution.expected_rewards["rounds"],
        rounds,
        solution.states,
    )
