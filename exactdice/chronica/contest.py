"""A whole Chronica contest, exactly: one roll (`exactdice.chronica.roll`), pushes and summaries.

`solve_contest` applies the setup's transforms (target dice, push dice, physical dice:
`exactdice.chronica.rolled_sides`), solves each distinct roll once and mixes the pushes
exactly: spec point 7, "on a tie, the contest is rolled again, at most `max_pushes`
times". The result holds the joint outcome tables and their marginals (`ContestResult`);
`expected_distribution`, `column_distributions` and `exact_laws` give the laws of the
simulator's columns for `exactdice validate chronica`.

How one roll is solved: `exactdice.chronica.roll` (spec steps 2-4, the comparison),
`exactdice.chronica.success_dice` (step 5) and `exactdice.chronica.concessions` (step 6).
Policies the text leaves open (see `exactdice.chronica.reading`): a pool that discards one
of several dice showing the tied value discards its smallest die (its larger ones are
worth more as success dice); a physical-dice instant win's success die is the largest
die of the first side showing the top value. Concession dice a winner gains from
several losers add up.

>>> solve_contest([((6,),), ((6,),)]).successes[0]
{1: Fraction(5, 12)}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from exactdice.chronica.roll import MAX_STATES, MAX_WORK, TIE, roll_outcomes
from exactdice.chronica.rolled_sides import apply_physical, apply_target, physical_size, rolled_contests
from exactdice.chronica.ruleset import Rules, read_sides, side_text
from exactdice.core.exact import fraction_text
from exactdice.errors import InputError, check_invariant

__all__ = [
    "ContestResult",
    "solve_contest",
    "roll_outcomes",
    "expected_distribution",
    "column_distributions",
    "exact_laws",
    "apply_target",
    "apply_physical",
    "physical_size",
    "sizes_text",
    "TIE",
    "OUTCOME_COLUMN",
    "MAX_STATES",
    "MAX_WORK",
]

#: the simulator's CSV column that `expected_distribution` describes
OUTCOME_COLUMN = "winner"


# ----- the whole contest, with pushes -----------------------------------------------------


@dataclass(frozen=True)
class ContestResult:
    """Everything a contest solve returns (probabilities are exact `Fraction` values).

    Attributes
    ----------
    sides : tuple
        The sides as given (pools of die sizes).
    rolled_sides : tuple
        The sides as rolled (after a target or physical dice).
    rules : Rules
        The reading of the rules.
    target : int or None
        The dN of a condition or penalty contest.
    size_outcomes : dict
        ``(winner, success sizes)`` -> probability (winner -1 is a tie).
    concession_outcomes : dict
        ``(winner, concessions per side)`` -> probability.
    win : tuple of Fraction
        P(win) per side, in order.
    tie : Fraction
        P(tie).
    successes, success_sizes, concessions : dict
        The marginals: success dice counts and sizes per winner, concession dice per side.
    """

    sides: tuple
    rolled_sides: tuple
    rules: Rules
    target: int | None
    size_outcomes: dict
    concession_outcomes: dict
    win: tuple = field(default=())
    tie: Fraction = Fraction(0)
    successes: dict = field(default_factory=dict)
    success_sizes: dict = field(default_factory=dict)
    concessions: dict = field(default_factory=dict)

    def expected_successes(self) -> Fraction:
        """Mean number of success dice per contest (0 on a tie).

        >>> solve_contest([((6,),), ((6,),)]).expected_successes()
        Fraction(5, 6)
        """
        return sum((p * len(sizes) for (_, sizes), p in self.size_outcomes.items()), Fraction(0))

    def to_json(self) -> dict:
        """JSON-ready result; every probability is a ``"p/q"`` string.

        >>> solve_contest([((6,),), ((6,),)]).to_json()["success_sizes"]
        {'0': {'d6': '5/12'}, '1': {'d6': '5/12'}}
        """
        return {
            "sides": [side_text(side) for side in self.sides],
            "rolled_sides": [side_text(side) for side in self.rolled_sides],
            "target": f"d{self.target}" if self.target else None,
            "rules": self.rules.to_dict(),
            "win": [fraction_text(p) for p in self.win],
            "tie": fraction_text(self.tie),
            "successes": {
                str(w): {str(n): fraction_text(p) for n, p in table.items()} for w, table in self.successes.items()
            },
            "success_sizes": {
                str(w): {sizes_text(s): fraction_text(p) for s, p in table.items()}
                for w, table in self.success_sizes.items()
            },
            "concessions": {
                str(s): {str(n): fraction_text(p) for n, p in table.items()} for s, table in self.concessions.items()
            },
            "expected_successes": fraction_text(self.expected_successes()),
        }


def sizes_text(sizes: Iterable[int]) -> str:
    """Success dice sizes written like ``"d12,d8"`` (the JSON key and CSV value).

    Parameters
    ----------
    sizes : sequence of int
        Die sizes.

    Returns
    -------
    str
        The sizes as text.

    Examples
    --------
    >>> sizes_text((12, 8))
    'd12,d8'
    """
    return ",".join(f"d{s}" for s in sizes)


def solve_contest(
    sides: Sequence[str | Sequence[Sequence[int]]],
    rules: Rules | None = None,
    target: int | None = None,
    *,
    concessions: bool = True,
) -> ContestResult:
    """Solve a contest exactly: P(win) per side, P(tie), success dice and concessions.

    Pushes mix the tie mass into re-rolled contests exactly.

    Parameters
    ----------
    sides : sequence
        The sides, each dice text like ``"d8,d6"`` (``/`` joins co-operating pools) or
        pools of die sizes (`read_sides`).
    rules : Rules, optional
        The reading of the rules (default: the spec's).
    target : int, optional
        The dN of a condition or penalty contest.
    concessions : bool, default True
        False skips the concession dice (about twice as fast).

    Returns
    -------
    ContestResult
        The exact answer.

    Raises
    ------
    InputError
        Fewer than two sides, bad dice, a bare text instead of a list of sides.
    TooLargeError
        More dice than `MAX_CONTEST_DICE`.

    Examples
    --------
    >>> r = solve_contest([((8,),), ((6,),)])
    >>> r.win, r.tie
    ((Fraction(9, 16), Fraction(5, 16)), Fraction(1, 8))
    """
    rules = rules or Rules()
    sides = read_sides(sides)
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    if target is not None and (not isinstance(target, int) or target < 1):
        raise InputError("target", f"the target must be a die dN with N >= 1, got {target!r}")
    ties = ((TIE, ()), (TIE, (0,) * len(sides)))
    tables, tied, rolled_first = _mix_pushes(apply_target(sides, target), rules, concessions, ties)
    for table, tie in zip(tables, ties):
        if tied:
            table[tie] += tied
        check_invariant(sum(table.values()) == 1, "a contest's outcomes must sum to exactly 1")
    size_outcomes = dict(sorted(tables[0].items()))
    concession_outcomes = dict(sorted(tables[1].items())) if concessions else {}
    return _summarise(tuple(sides), rolled_first, rules, target, size_outcomes, concession_outcomes)


def _mix_pushes(base, rules: Rules, concessions: bool, ties):
    """Each roll's outcomes but ties, weighted by P(every earlier roll tied) (spec point 7).

    Returns the outcome tables (sizes, and concessions when asked), P(the last roll tied
    too) and the sides of the first roll as rolled. A roll equal to the one before (no
    push dice) is solved once.
    """
    tables = (defaultdict(Fraction), defaultdict(Fraction)) if concessions else (defaultdict(Fraction),)
    all_tied_so_far = Fraction(1)
    first_rolled = None
    solved_sides = solved_laws = None
    for rolled, substituted in rolled_contests(base, rules):
        if first_rolled is None:
            first_rolled = tuple(rolled)
        if rolled != solved_sides:
            solved_sides = rolled
            solved_laws = roll_outcomes(
                rolled,
                four_ties=rules.four_ties,
                instant_first_side=rules.physical and substituted,
                concessions=concessions,
            )
        for table, law, tie in zip(tables, solved_laws, ties):
            for outcome, p in law.probabilities().items():
                if outcome != tie:
                    table[outcome] += all_tied_so_far * p
        all_tied_so_far *= solved_laws[0].probability(ties[0])
        if not all_tied_so_far:
            break
    return tables, all_tied_so_far, first_rolled


def _summarise(sides, rolled, rules, target, size_outcomes, concession_outcomes) -> ContestResult:
    """The `ContestResult`: the joint tables with their marginals per side."""
    count = len(sides)
    win = [Fraction(0)] * count
    successes: dict = {s: defaultdict(Fraction) for s in range(count)}
    success_sizes: dict = {s: defaultdict(Fraction) for s in range(count)}
    concessions: dict = {s: defaultdict(Fraction) for s in range(count)}
    tie = Fraction(0)
    for (winner, sizes), p in size_outcomes.items():
        if winner == TIE:
            tie += p
            continue
        win[winner] += p
        successes[winner][len(sizes)] += p
        success_sizes[winner][sizes] += p
    for (_, gains), p in concession_outcomes.items():
        for s, gain in enumerate(gains):
            concessions[s][gain] += p
    return ContestResult(
        sides=sides,
        rolled_sides=rolled,
        rules=rules,
        target=target,
        size_outcomes=size_outcomes,
        concession_outcomes=concession_outcomes,
        win=tuple(win),
        tie=tie,
        successes={s: dict(sorted(t.items())) for s, t in successes.items() if t},
        success_sizes={
            s: dict(sorted(t.items(), key=lambda item: (len(item[0]), item[0]), reverse=True))
            for s, t in success_sizes.items()
            if t
        },
        concessions={s: dict(sorted(t.items())) for s, t in concessions.items()},
    )


def expected_distribution(
    sides: Sequence[str | Sequence[Sequence[int]]], rules: Rules | None = None, target: int | None = None
) -> dict:
    """P(each value of the simulator's ``winner`` column): ``"0"``, ``"1"``, ... and ``"tie"``.

    Parameters
    ----------
    sides : sequence
        The sides, as for `solve_contest`.
    rules : Rules, optional
        The reading of the rules.
    target : int, optional
        The dN of a condition or penalty contest.

    Returns
    -------
    dict of str to Fraction
        Summing to exactly 1.

    Examples
    --------
    >>> expected_distribution([((6,),), ((6,),)])
    {'0': Fraction(5, 12), '1': Fraction(5, 12), 'tie': Fraction(1, 6)}
    """
    return _outcome_law(solve_contest(sides, rules, target))


def _outcome_law(result) -> dict:
    table = {str(s): p for s, p in enumerate(result.win)}
    table["tie"] = result.tie
    return table


def column_distributions(sides, rules: Rules | None = None, target: int | None = None) -> dict:
    """The exact law of the simulator's other columns: ``successes``, ``success_sizes``
    and ``concessions_<i>`` (column -> `exactdice.validation.ColumnDistribution`).

    >>> columns = column_distributions([((6,),), ((6,),)])
    >>> columns["successes"].probabilities
    {'0': Fraction(1, 6), '1': Fraction(5, 6)}
    """
    return _column_laws(solve_contest(sides, rules, target))


def exact_laws(sides, rules: Rules | None = None, target: int | None = None) -> tuple[dict, dict]:
    """(`expected_distribution`, `column_distributions`) from one solve of the contest.

    >>> outcome, columns = exact_laws([((6,),), ((6,),)])
    >>> outcome["tie"], columns["successes"].probabilities["0"]
    (Fraction(1, 6), Fraction(1, 6))
    """
    result = solve_contest(sides, rules, target)
    return _outcome_law(result), _column_laws(result)


def _column_laws(result) -> dict:
    from exactdice.validation import ColumnDistribution

    successes, sizes = {}, {}
    for (_, rolled), p in sorted(result.size_outcomes.items()):
        successes[str(len(rolled))] = successes.get(str(len(rolled)), Fraction(0)) + p
        sizes[sizes_text(rolled)] = sizes.get(sizes_text(rolled), Fraction(0)) + p
    columns = {
        "successes": ColumnDistribution(dict(sorted(successes.items(), key=lambda kv: int(kv[0])))),
        "success_sizes": ColumnDistribution(sizes),
    }
    for side in range(len(result.rolled_sides)):
        gains = {}
        for (_, counts), p in result.concession_outcomes.items():
            gains[str(counts[side])] = gains.get(str(counts[side]), Fraction(0)) + p
        columns[f"concessions_{side}"] = ColumnDistribution(dict(sorted(gains.items(), key=lambda kv: int(kv[0]))))
    return columns
