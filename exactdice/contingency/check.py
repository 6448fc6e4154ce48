"""Exact Contingency skill checks: result die, luck die, failing by one, omens.

The result die is an order statistic of the modified faces with ties broken by die
size (smaller first), so the pool is walked with `evaluate_sorted`, one group per die:
the transition sees which dice show each face and can tell the result die's size
(needed for the luck die). Omens are counted over every die on the way.

>>> solution = solve_check(skill_check([6, 6, 6], difficulty=4))
>>> solution.outcome_probabilities()["success"]
Fraction(1, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from exactdice.contingency.ruleset import Rules
from exactdice.core.dice_list import NotADieError, parse_dice_list
from exactdice.core.distribution import Distribution, d
from exactdice.core.exact import fraction_text
from exactdice.core.pool import MAX_POOL_DICE, evaluate_sorted
from exactdice.errors import InputError, TooLargeError, check_invariant

__all__ = [
    "OUTCOMES",
    "SkillCheck",
    "CheckSolution",
    "skill_check",
    "parse_pool",
    "validate",
    "solve_check",
    "player_omens_for_face",
    "gm_omens_for_face",
    "classify_total",
    "choose_to_fail",
    "expected_distribution",
    "OUTCOME_COLUMN",
    "parse_modifiers",
    "column_distributions",
]

#: most faces of one die in a check: the dynamic program's work grows with the square
MAX_CHECK_FACES = 300

#: largest face modifier (either sign): totals stay within a few thousand difficulty levels
MAX_FACE_MODIFIER = 1000
#: difficulties run from 1 (Automatic); above the highest total a check cannot succeed
MAX_DIFFICULTY = 10_000
#: largest `check_work` estimate solved (about 30 s on one core of the project's machines)
MAX_CHECK_WORK = 10**9

#: the three outcomes of a check against a difficulty, best first
OUTCOMES = ("success", "success-with-condition", "failure")
#: the simulator's CSV column that `expected_distribution` describes
OUTCOME_COLUMN = "outcome"


@dataclass(frozen=True)
class SkillCheck:
    """One skill check: die sizes, one face modifier per die, advantage units, difficulty.

    Build one with `skill_check`, which checks its values.

    Parameters
    ----------
    dice : tuple of int
        The die sizes, in order (wellness, attribute, skill).
    modifiers : tuple of int
        One face modifier per die.
    advantage, disadvantage : int, default 0
        Units of advantage and disadvantage (they cancel one for one).
    difficulty : int, optional
        The difficulty the result must reach (None: no outcome, only totals and omens).

    Examples
    --------
    >>> skill_check([4, 6, 8], modifier=1).modifiers
    (1, 1, 1)
    """

    dice: tuple[int, ...]
    modifiers: tuple[int, ...]
    advantage: int = 0
    disadvantage: int = 0
    difficulty: int | None = None

    @property
    def net_advantage(self) -> int:
        """Advantage minus disadvantage: units cancel; only the sign matters."""
        return self.advantage - self.disadvantage

    @property
    def result_position(self) -> int:
        """Index of the result die in ascending (face, size) order.

        >>> skill_check([6, 6, 6], advantage=1).result_position
        2
        """
        if self.net_advantage > 0:
            return len(self.dice) - 1
        if self.net_advantage < 0:
            return 0
        return len(self.dice) // 2

    def describe(self) -> str:
        """A short human-readable setup line."""
        parts = ["pool " + ",".join(f"d{size}" for size in self.dice)]
        if any(self.modifiers):
            parts.append("modifiers " + ",".join(f"{m:+d}" for m in self.modifiers))
        roll = "advantage" if self.net_advantage > 0 else "disadvantage" if self.net_advantage < 0 else "normal"
        parts.append(f"{roll} roll")
        if self.difficulty is not None:
            parts.append(f"difficulty {self.difficulty}")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """The setup as JSON-ready values."""
        return {
            "dice": [f"d{size}" for size in self.dice],
            "modifiers": list(self.modifiers),
            "advantage": self.advantage,
            "disadvantage": self.disadvantage,
            "difficulty": self.difficulty,
        }


def parse_pool(text: str, field: str = "dice") -> tuple[int, ...]:
    """Read a pool like ``"d6,d8,d10"`` (``"3d6"`` means three d6) into die sizes, in order.

    Parameters
    ----------
    text : str
        The pool.
    field : str, default "dice"
        The name an error gives the pool.

    Returns
    -------
    tuple of int
        The die sizes.

    Raises
    ------
    InputError
        An unknown die.

    Examples
    --------
    >>> parse_pool("d4, 2d8")
    (4, 8, 8)
    >>> parse_pool("d6,x7")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: dice: unknown die 'x7' (write dice like d6,d8,d10)
    """
    try:
        return parse_dice_list(text, field, max_dice=MAX_POOL_DICE)
    except NotADieError as error:  # worded for a three-die pool
        raise InputError(field, f"unknown die {error.item!r} (write dice like d6,d8,d10)") from None


def parse_modifiers(text: str | None, field: str = "modifiers") -> list[int] | None:
    """Read per-die modifiers like ``"1,0,-1"`` (None stays None).

    >>> parse_modifiers("1, 0,-1")
    [1, 0, -1]
    """
    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError(field, f"give whole numbers separated by commas, got {text!r}") from None


def skill_check(
    dice: str | Sequence[int],
    *,
    modifier: int = 0,
    modifiers: Sequence[int] | None = None,
    advantage: int = 0,
    disadvantage: int = 0,
    difficulty: int | None = None,
) -> SkillCheck:
    """Build a `SkillCheck` from die sizes (ints or a pool string) and one or per-die modifiers.

    Parameters
    ----------
    dice : str or sequence of int
        ``"d6,d8,d10"`` or die sizes.
    modifier : int, default 0
        One face modifier for every die.
    modifiers : sequence of int, optional
        One modifier per die instead.
    advantage, disadvantage : int, default 0
        Units of advantage and disadvantage.
    difficulty : int, optional
        The difficulty, 1 (Automatic) and up.

    Returns
    -------
    SkillCheck
        The check.

    Raises
    ------
    InputError
        Both *modifier* and *modifiers*, a wrong number of modifiers, negative units, a
        modifier or difficulty out of range, bad dice.

    Examples
    --------
    >>> skill_check("d6,d8,d10", modifiers=[1, 0, -1]).modifiers
    (1, 0, -1)
    """
    sizes = parse_pool(dice) if isinstance(dice, str) else tuple(int(size) for size in dice)
    modifier_flag = "modifier" if modifiers is None else "modifiers"
    if modifiers is None:
        modifiers = (modifier,) * len(sizes)
    else:
        if modifier:
            raise InputError("modifiers", "give either `modifier` or `modifiers`, not both")
        modifiers = tuple(int(m) for m in modifiers)
        if len(modifiers) != len(sizes):
            raise InputError("modifiers", f"give one modifier per die: {len(sizes)} dice, {len(modifiers)} modifiers")
    for flag, units in (("advantage", advantage), ("disadvantage", disadvantage)):
        if units < 0:
            raise InputError(flag, f"units must be >= 0, got {units}")
    for value in modifiers:
        if abs(value) > MAX_FACE_MODIFIER:
            raise InputError(
                modifier_flag,
                f"a face modifier must be between -{MAX_FACE_MODIFIER} and {MAX_FACE_MODIFIER}, got {value}",
            )
    if difficulty is not None and not 1 <= difficulty <= MAX_DIFFICULTY:
        raise InputError(
            "difficulty",
            f"must be between 1 (Automatic) and {MAX_DIFFICULTY:,}, got {difficulty} "
            "(a difficulty above the highest total simply cannot succeed)",
        )
    return SkillCheck(sizes, tuple(modifiers), advantage, disadvantage, difficulty)


def validate(check: SkillCheck, rules: Rules) -> None:
    """Raise `InputError` for a pool the rules do not allow (a d1, an even or unsized pool)."""
    if not check.dice:
        raise InputError("dice", "the pool is empty (give three dice like d6,d8,d10)")
    for size in check.dice:
        if size < 2:
            raise InputError("dice", f"d{size} is not allowed in a Contingency pool (each die needs >= 2 sides)")
        if size > MAX_CHECK_FACES:
            raise TooLargeError(
                "dice",
                f"d{size} has more than {MAX_CHECK_FACES} faces, the limit for a "
                "check (the work grows with the square of the faces)",
            )
    count = len(check.dice)
    if count > MAX_POOL_DICE:
        raise TooLargeError("dice", f"{count} dice is more than the limit of {MAX_POOL_DICE}")
    if count % 2 == 0:
        raise InputError("dice", f"a pool of {count} dice has no middle die (pool sizes must be odd)")
    if count != 3 and not rules.any_size:
        raise InputError("dice", f"a skill check rolls three dice, got {count} (other odd sizes need `any_size`)")
    if len(check.modifiers) != count:
        raise InputError("modifiers", f"give one modifier per die: {count} dice, {len(check.modifiers)} modifiers")
    if rules.luck == "if-failing" and check.difficulty is None:
        raise InputError("luck", "if-failing needs `difficulty`")
    work = check_work(check)
    if work > MAX_CHECK_WORK:
        raise TooLargeError(
            "dice",
            f"this pool would take about {work:.1e} steps (limit {MAX_CHECK_WORK:.0e}, "
            "about 30 s); use fewer dice or fewer kinds of dice (the limit is "
            "exactdice.contingency.check.MAX_CHECK_WORK)",
        )


def check_work(check: SkillCheck) -> int:
    """An up-front estimate of a solve's steps: faces walked x (count + 1)**2 over each group of
    interchangeable dice x the spread of player omens x the dice (big-integer weights grow with
    them). Calibrated on d6..d12 pools: 51d12 ~ 2.5e8 (7 s), 101d12 ~ 3.8e9 (> 60 s).

    >>> check_work(skill_check("d6,d8,d10")) < 10**6
    True
    """
    faces = {face + modifier for size, modifier in zip(check.dice, check.modifiers) for face in range(1, size + 1)}
    splits = 1
    for group in _die_groups(check):
        splits *= (len(group) + 1) ** 2
    count = len(check.dice)
    # without omens a step costs about five times the calibration's (201d6: 4.9e7 steps, 7 s)
    omen_spread = 3 * count + 1 if max(faces) >= 8 else 5
    return len(faces) * splits * omen_spread * count


def player_omens_for_face(face: int) -> int:
    """Player omens a single (modified) face earns: 8-9 -> 1, 10-11 -> 2, 12 and up -> 3.

    Parameters
    ----------
    face : int
        The modified face.

    Returns
    -------
    int
        0 to 3 omens.

    Examples
    --------
    >>> [player_omens_for_face(face) for face in (7, 8, 10, 12, 15)]
    [0, 1, 2, 3, 3]
    """
    if face >= 12:
        return 3
    if face >= 10:
        return 2
    return 1 if face >= 8 else 0


def gm_omens_for_face(face: int, rules: Rules = Rules()) -> int:
    """The moderator's omen from one face: a 1 (or, with ``gm_omen=at-most-1``, anything <= 1).

    Parameters
    ----------
    face : int
        The modified face.
    rules : Rules, optional
        The reading of the rules (``gm_omen``).

    Returns
    -------
    int
        0 or 1.

    Examples
    --------
    >>> gm_omens_for_face(0), gm_omens_for_face(0, Rules(gm_omen="at-most-1"))
    (0, 1)
    """
    if rules.gm_omen == "at-most-1":
        return int(face <= 1)
    return int(face == 1)


def classify_total(total: int, difficulty: int, rules: Rules = Rules()) -> str:
    """Outcome of a final total: success at the difficulty, success-with-condition one below.

    Parameters
    ----------
    total : int
        The final total (the result face plus any luck die).
    difficulty : int
        The difficulty.
    rules : Rules, optional
        The reading of the rules (``fail_by_one``).

    Returns
    -------
    str
        ``"success"``, ``"success-with-condition"`` or ``"failure"``.

    Examples
    --------
    >>> classify_total(4, 5), classify_total(4, 5, Rules(fail_by_one="refuse"))
    ('success-with-condition', 'failure')
    """
    if total >= difficulty:
        return "success"
    if total == difficulty - 1 and rules.fail_by_one == "take":
        return "success-with-condition"
    return "failure"


def choose_to_fail(advantage: int = 0, disadvantage: int = 0) -> int:
    """Moderator omens for choosing to fail instead of rolling: 1, 2 or 3.

    Parameters
    ----------
    advantage, disadvantage : int, default 0
        Units of advantage and disadvantage the check would have had.

    Returns
    -------
    int
        1 with net disadvantage, 3 with net advantage, 2 otherwise.

    Examples
    --------
    >>> choose_to_fail(), choose_to_fail(advantage=2, disadvantage=1), choose_to_fail(disadvantage=1)
    (2, 3, 1)
    """
    net = advantage - disadvantage
    return 3 if net > 0 else 1 if net < 0 else 2


def _die_groups(check: SkillCheck) -> list[list[int]]:
    """Indices of the pool's dice in groups the walk may treat as one (die, count) group.

    Dice of one size with one modifier are interchangeable, so they form one group (13d6 is
    one group of 13, not 13 groups: the walk's work grows with the product of the group
    sizes + 1). A size whose dice carry different modifiers keeps one group per die, so the
    tie order (size, then position in the pool) is exactly that of die-by-die sorting.
    """
    modifiers_of_size: dict[int, set] = {}
    for size, modifier in zip(check.dice, check.modifiers):
        modifiers_of_size.setdefault(size, set()).add(modifier)
    groups: dict = {}
    for index, (size, modifier) in enumerate(zip(check.dice, check.modifiers)):
        key = (size, modifier) if len(modifiers_of_size[size]) == 1 else (size, modifier, index)
        groups.setdefault(key, []).append(index)
    return list(groups.values())


def _result_before_luck(check: SkillCheck, rules: Rules) -> Distribution:
    """Joint distribution of (result die index, its face, player omens, gm omens) before luck.

    The result die index is the first index of its group of interchangeable dice.
    """
    members = _die_groups(check)
    groups = [(d(check.dice[group[0]]) + check.modifiers[group[0]], len(group)) for group in members]
    representative = [group[0] for group in members]
    # ties between groups: smaller die first, then the first die's position in the pool
    tie_order = sorted(range(len(members)), key=lambda g: (check.dice[representative[g]], representative[g]))
    target = check.result_position
    omen_cache: dict = {}

    def step(state, face, counts):
        shown = sum(counts)
        if not shown:
            return state
        seen, result_index, result_face, player, gm = state
        omens = omen_cache.get(face)
        if omens is None:
            omens = omen_cache[face] = (player_omens_for_face(face), gm_omens_for_face(face, rules))
        if result_index is None and seen + shown > target:
            offset = target - seen
            for group in tie_order:
                if offset < counts[group]:
                    result_index, result_face = representative[group], face
                    break
                offset -= counts[group]
        return (seen + shown, result_index, result_face, player + omens[0] * shown, gm + omens[1] * shown)

    return evaluate_sorted(groups, step, (0, None, None, 0, 0), lambda state: state[1:], descending=False)


def _luck_used(face: int, difficulty: int | None, rules: Rules) -> bool:
    if rules.luck == "always":
        return True
    if rules.luck == "if-failing":
        return face < difficulty
    return False


def _final_rolls(check: SkillCheck, rules: Rules, before_luck: Distribution, difficulty: int | None) -> Distribution:
    """(result die size, final total, player omens, gm omens) after the luck decision."""
    luck_sizes = sorted({check.dice[index] for index, *_ in before_luck.outcomes()})
    scale = math.lcm(*luck_sizes)  # puts every luck die's faces on one denominator
    weights: dict = {}
    for (index, face, player, gm), weight in before_luck.items():
        size = check.dice[index]
        if not _luck_used(face, difficulty, rules):
            key = (size, face, player, gm)
            weights[key] = weights.get(key, 0) + weight * scale
            continue
        shift = check.modifiers[index] if rules.luck_modifier else 0
        per_face = weight * (scale // size)
        for luck_face in range(1 + shift, size + 1 + shift):
            key = (
                size,
                face + luck_face,
                player + player_omens_for_face(luck_face),
                gm + gm_omens_for_face(luck_face, rules),
            )
            weights[key] = weights.get(key, 0) + per_face
    result = Distribution(weights)
    check_invariant(result.denominator == math.prod(check.dice) * scale, "skill check weights do not sum to 1")
    return result


@dataclass(frozen=True)
class CheckSolution:
    """Everything a solve returns: the joint distribution and its marginals.

    Attributes
    ----------
    check : SkillCheck
        The check solved.
    rules : Rules
        The reading of the rules.
    joint : Distribution
        Over ``(outcome, total, player omens, gm omens)``; ``outcome`` is None when the check
        has no difficulty.
    result_die : Distribution
        The result die's size.
    p_at_least : dict of int to Fraction
        Difficulty -> P(success).
    p_at_least_with_condition : dict of int to Fraction
        Difficulty -> P(success, a condition allowed).
    """

    check: SkillCheck
    rules: Rules
    joint: Distribution
    result_die: Distribution  # the result die's size
    p_at_least: dict = field(default_factory=dict)  # difficulty -> P(success)
    p_at_least_with_condition: dict = field(default_factory=dict)

    def outcome_probabilities(self) -> dict:
        """P(success), P(success-with-condition), P(failure) (needs a difficulty).

        >>> solve_check(skill_check([4, 4, 4], difficulty=4)).outcome_probabilities()["failure"]
        Fraction(1, 2)
        """
        if self.check.difficulty is None:
            raise InputError("difficulty", "outcomes need a difficulty")
        marginal = self.joint.marginal(0)
        return {name: marginal.probability(name) for name in OUTCOMES}

    @cached_property
    def total(self) -> Distribution:
        """Distribution of the final total (result die plus any luck die)."""
        return self.joint.marginal(1)

    @cached_property
    def player_omens(self) -> Distribution:
        """Distribution of the player's omens over every die rolled."""
        return self.joint.marginal(2)

    @cached_property
    def gm_omens(self) -> Distribution:
        """Distribution of the moderator's omens over every die rolled."""
        return self.joint.marginal(3)

    def to_json(self) -> dict:
        """JSON-ready result with every probability as ``"p/q"`` (keys as in the CLI)."""

        def table(distribution):
            return {str(value): fraction_text(p) for value, p in distribution.probabilities().items()}

        payload = {"setup": self.check.to_dict(), "rules": self.rules.to_dict()}
        if self.check.difficulty is not None:
            payload["outcome"] = {name: fraction_text(p) for name, p in self.outcome_probabilities().items()}
        payload.update(
            {
                "total": table(self.total),
                "player_omens": table(self.player_omens),
                "gm_omens": table(self.gm_omens),
                "result_die": {f"d{size}": fraction_text(p) for size, p in self.result_die.probabilities().items()},
                "expected_player_omens": fraction_text(self.player_omens.mean()),
                "expected_gm_omens": fraction_text(self.gm_omens.mean()),
                "choose_to_fail_gm_omens": choose_to_fail(self.check.advantage, self.check.disadvantage),
                "joint": [self._joint_entry(outcome, p) for outcome, p in self.joint.probabilities().items()],
                "p_at_least": {str(k): fraction_text(p) for k, p in self.p_at_least.items()},
                "p_at_least_with_condition": {
                    str(k): fraction_text(p) for k, p in self.p_at_least_with_condition.items()
                },
            }
        )
        return payload

    @staticmethod
    def _joint_entry(outcome, p) -> dict:
        name, total, player, gm = outcome
        entry = {"outcome": name} if name is not None else {}
        entry.update({"total": total, "player_omens": player, "gm_omens": gm, "p": fraction_text(p)})
        return entry


def solve_check(check: SkillCheck, rules: Rules = Rules()) -> CheckSolution:
    """Solve one skill check exactly: joint (outcome, total, omens) and every marginal.

    Parameters
    ----------
    check : SkillCheck
        The check.
    rules : Rules, optional
        The reading of the rules (default: the spec's).

    Returns
    -------
    CheckSolution
        The exact distributions.

    Raises
    ------
    InputError
        A pool the rules do not allow (a d1, an even number of dice, not three dice
        without ``any_size``).
    TooLargeError
        Too many dice or faces, or a pool whose walk would pass 1e9 steps.

    Examples
    --------
    >>> solution = solve_check(skill_check([6, 6, 6]))
    >>> solution.total.probability(1)
    Fraction(2, 27)
    >>> solution.p_at_least[4]
    Fraction(1, 2)
    """
    validate(check, rules)
    before_luck = _result_before_luck(check, rules)
    final = _final_rolls(check, rules, before_luck, check.difficulty)
    difficulty = check.difficulty
    if difficulty is None:
        joint = final.map(lambda roll: (None, roll[1], roll[2], roll[3]))
    else:
        joint = final.map(lambda roll: (classify_total(roll[1], difficulty, rules), roll[1], roll[2], roll[3]))
    result_die = final.marginal(0)

    # P(success) at every difficulty; with luck "if-failing" the decision depends on it.
    # Levels run to one past the highest total: there success is impossible, but a
    # total of exactly difficulty - 1 still succeeds with a condition.
    if rules.luck == "if-failing":
        # below the difficulty the player always takes luck, so "always" reaches every total
        always = _final_rolls(check, replace(rules, luck="always"), before_luck, None)
        highest_total = max(total for _, total, _, _ in always.outcomes())
        totals = {
            level: _final_rolls(check, rules, before_luck, level).marginal(1)
            for level in range(1, max(highest_total, 1) + 2)
        }
    else:
        total = final.marginal(1)
        totals = {level: total for level in range(1, max(total.max_outcome(), 1) + 2)}
    p_at_least = {level: dist.at_least(level) for level, dist in totals.items()}
    with_condition_floor = 1 if rules.fail_by_one == "take" else 0
    p_with_condition = {level: dist.at_least(level - with_condition_floor) for level, dist in totals.items()}
    return CheckSolution(check, rules, joint, result_die, p_at_least, p_with_condition)


def expected_distribution(check: SkillCheck, rules: Rules = Rules()) -> dict:
    """Exact P(outcome) for the simulator's ``outcome`` column (every outcome, zeros too).

    Parameters
    ----------
    check : SkillCheck
        The check (with a difficulty).
    rules : Rules, optional
        The reading of the rules.

    Returns
    -------
    dict of str to Fraction
        ``success``, ``success-with-condition``, ``failure``, summing to exactly 1.

    Raises
    ------
    InputError
        A check without a difficulty.

    Examples
    --------
    >>> expected_distribution(skill_check([6, 6, 6], difficulty=4))["success"]
    Fraction(1, 2)
    """
    if check.difficulty is None:
        raise InputError("difficulty", "the outcome column needs a difficulty")
    return solve_check(check, rules).outcome_probabilities()


def column_distributions(check: SkillCheck, rules: Rules = Rules()) -> dict:
    """The exact law of the simulator's other columns: ``total``, ``result_die``,
    ``player_omens`` and ``gm_omens`` (column -> `exactdice.validation.ColumnDistribution`).

    >>> column_distributions(skill_check([6, 6, 6]))["result_die"].probabilities
    {'d6': Fraction(1, 1)}
    """
    return _column_laws(solve_check(check, rules))


def exact_laws(check: SkillCheck, rules: Rules = Rules()) -> tuple[dict, dict]:
    """(`expected_distribution`, `column_distributions`) from one solve of the check; the
    first is None without a difficulty (`expected_distribution` says why).

    >>> outcome, columns = exact_laws(skill_check([6, 6, 6], difficulty=4))
    >>> outcome["success"], columns["result_die"].probabilities
    (Fraction(1, 2), {'d6': Fraction(1, 1)})
    """
    solution = solve_check(check, rules)
    outcome = None if check.difficulty is None else solution.outcome_probabilities()
    return outcome, _column_laws(solution)


def _column_laws(solution: CheckSolution) -> dict:
    from exactdice.validation import ColumnDistribution

    return {
        "total": ColumnDistribution.from_distribution(solution.total),
        "result_die": ColumnDistribution.from_distribution(solution.result_die, lambda size: f"d{size}"),
        "player_omens": ColumnDistribution.from_distribution(solution.player_omens),
        "gm_omens": ColumnDistribution.from_distribution(solution.gm_omens),
    }
