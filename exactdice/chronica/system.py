"""Chronica Mutanis Mundi as a registered `exactdice.systems.RulesSystem`: one contest.

>>> setup = SYSTEM.setup({"sides": ("d6", "d6")})
>>> SYSTEM.exact(setup, SYSTEM.rules({}))["tie"], SYSTEM.outcome_column(setup)
(Fraction(1, 6), 'winner')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from exactdice.chronica.contest import OUTCOME_COLUMN, expected_distribution
from exactdice.chronica.ruleset import MAX_CONTEST_DICE, TIE_RULES, Rules, parse_dice_list, parse_die, parse_side
from exactdice.chronica.tables import table_jobs
from exactdice.errors import InputError
from exactdice.systems import DeclaredSystem, Parameter, TableSet

__all__ = ["SYSTEM", "PARAMETERS", "parse_contest", "contest_rules"]

_SIDE_HELP = (
    "One side of the contest (give two or more). Dice like d8,d8,d6 or 2d8,d6; "
    "co-operating pools of the same side separated by '/', e.g. \"d8,d6/d10\". "
    "Sides are numbered from 0 in the order given; side 0 is the player."
)

PARAMETERS = (
    Parameter("sides", str, (), _SIDE_HELP, multiple=True, required=True, cli_flag="--side", example=("d6", "d6")),
    Parameter(
        "target",
        str,
        None,
        "Condition or penalty contest: every side but the first "
        "replaces up to three of its smallest dice below dN with dN (adding dN while it "
        "has fewer than three dice).",
        metavar="dN",
    ),
    Parameter(
        "tie_rule",
        str,
        TIE_RULES[0],
        "all-discarded: a true tie only when every die "
        "is gone; four-ties: also a tie once four successive comparisons ended in "
        "discards.",
        choices=TIE_RULES,
        role="rules",
    ),
    Parameter(
        "push",
        bool,
        False,
        "On a tie, roll the contest again (at most `max_pushes` times).",
        role="rules",
        cli_flag="--push/--no-push",
    ),
    Parameter(
        "push_dice",
        str,
        None,
        "Dice added to every side's first pool at each push (they accumulate), e.g. 5d6. Needs `push`.",
        role="rules",
        metavar="DICE",
    ),
    Parameter("max_pushes", int, None, "Most re-rolls after ties with `push` (default 1).", role="rules"),
    Parameter(
        "physical",
        bool,
        False,
        "Side 0 rolls dice with no physical counterpart as the "
        "nearest smaller physical die (d4 d6 d8 d10 d12 d20) and wins a first-comparison "
        "tie with one success die.",
        role="rules",
        cli_flag="--physical/--no-physical",
    ),
)


def parse_contest(sides: Sequence[str], target: str | None = None):
    """``(sides, target size)`` from the sides' texts and an optional target die.

    >>> parse_contest(["d8,d6", "2d10"], "d8")
    ([((8, 6),), ((10, 10),)], 8)
    """
    if len(sides) < 2:
        raise InputError("sides", f"a contest needs at least two sides, got {len(sides)}")
    parsed = [parse_side(text) for text in sides]
    total = sum(len(pool) for side in parsed for pool in side)
    if total > MAX_CONTEST_DICE:
        raise InputError("sides", f"{total} dice is more than the limit of {MAX_CONTEST_DICE}")
    return parsed, (parse_die(target, "target") if target else None)


def contest_rules(
    tie_rule: str = TIE_RULES[0],
    push: bool = False,
    push_dice: str | None = None,
    max_pushes: int | None = None,
    physical: bool = False,
) -> Rules:
    """`Rules` from the knobs as text (``max_pushes`` None: 1; it needs ``push``).

    >>> contest_rules(push=True, push_dice="2d6").push_dice
    (6, 6)
    """
    if max_pushes is not None and not push:
        raise InputError("max_pushes", "only matters with `push`")
    extra = parse_dice_list(push_dice, "push_dice") if push_dice else ()
    return Rules(
        tie_rule=tie_rule,
        push=push,
        push_dice=extra,
        max_pushes=1 if max_pushes is None else max_pushes,
        physical=physical,
    )


def _exact(setup: Mapping, rules: Rules) -> dict:
    sides, target = parse_contest(setup["sides"], setup.get("target"))
    return expected_distribution(sides, rules, target)


def _simulate(setup: Mapping, rules: Rules, n: int, seed: int) -> dict:
    from exactdice.chronica.simulate import simulate

    sides, target = parse_contest(setup["sides"], setup.get("target"))
    return simulate(sides, rules, target, n=n, seed=seed)


def _column_distributions(setup: Mapping, rules: Rules) -> dict:
    """The exact laws of the success and concession columns."""
    from exactdice.chronica.contest import column_distributions

    sides, target = parse_contest(setup["sides"], setup.get("target"))
    return column_distributions(sides, rules, target)


def _exact_laws(setup: Mapping, rules: Rules) -> tuple[dict, dict]:
    """`_exact` and `_column_distributions` from one solve."""
    from exactdice.chronica.contest import exact_laws

    sides, target = parse_contest(setup["sides"], setup.get("target"))
    return exact_laws(sides, rules, target)


def _table_sets() -> list[TableSet]:
    rules = Rules()
    words = {2: "two", 3: "three"}
    return [
        TableSet(
            "chronica",
            f"{words[count]}_dice",
            f"P(win), P(tie) and expected success dice of a player pool of "
            f"{words[count]} dice (d4..d12) against static oppositions of three "
            f"equal dice (3d4 ... 3d12), default rules ({rules.describe()})",
            f"exactdice chronica table --player-dice {count}",
            tuple(table_jobs(rules, (count,))),
        )
        for count in (2, 3)
    ]


def _outcome_words(outcome: str) -> str:
    """A winner column's value in words: sides are numbered from 0, side 0 the player.

    >>> _outcome_words("0"), _outcome_words("2"), _outcome_words("tie")
    ('the player (side 0) wins', 'side 2 wins', 'a tie')
    """
    if not outcome.isdigit():
        return "a tie" if outcome == "tie" else outcome
    return "the player (side 0) wins" if outcome == "0" else f"side {outcome} wins"


#: Chronica Mutanis Mundi contests (spec ``chronica.md``)
SYSTEM = DeclaredSystem(
    "chronica",
    "Chronica contests: the winning side or tie.",
    Rules,
    PARAMETERS,
    make_rules=contest_rules,
    exact=_exact,
    simulate=_simulate,
    outcome=OUTCOME_COLUMN,
    column_distributions=_column_distributions,
    exact_laws=_exact_laws,
    table_sets=_table_sets,
    outcome_words=_outcome_words,
    task="Chronica contest",
)
