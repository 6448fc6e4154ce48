"""Independent Monte Carlo simulator of Contingency skill checks (shares only the ruleset).

It rolls every die with ``numpy.random.Generator(PCG64(seed))``, vectorised across
trials, and follows the rules step by step without any of the exact model's code.
One row per check, columns (`COLUMNS`):

- ``trial``: 0-based trial number
- ``faces``: the modified faces of the pool in the order given, ``;``-separated
- ``result_die``: the result die's size, like ``d8``
- ``result_face``: the result die's modified face
- ``luck_face``: the luck die's face (empty when no luck die was rolled)
- ``total``: result face plus luck face
- ``outcome``: ``success`` | ``success-with-condition`` | ``failure`` (empty without a difficulty)
- ``player_omens``, ``gm_omens``: omens over every die rolled, the luck die included

>>> from exactdice.contingency.check import skill_check
>>> rows = simulate_rows(skill_check([6, 6, 6], difficulty=4), n=5, seed=7)
>>> len(rows), sorted(rows[0])[:3]
(5, ['faces', 'gm_omens', 'luck_face'])
"""

from __future__ import annotations

import numpy as np

from exactdice.contingency.ruleset import Rules
from exactdice.errors import InputError

__all__ = ["COLUMNS", "simulate_rows", "simulate"]

COLUMNS = ("trial", "faces", "result_die", "result_face", "luck_face", "total", "outcome", "player_omens", "gm_omens")

MAX_TRIALS = 10_000_000


def _omens(faces: np.ndarray, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    player = np.select([faces >= 12, faces >= 10, faces >= 8], [3, 2, 1], default=0)
    gm = (faces <= 1) if rules.gm_omen == "at-most-1" else (faces == 1)
    return player, gm.astype(np.int64)


def simulate(check, rules: Rules = Rules(), *, n: int, seed: int) -> dict:
    """Simulate ``n`` checks; returns one numpy array per column (``faces`` as an n x k array).

    >>> from exactdice.contingency.check import skill_check
    >>> simulate(skill_check([4, 4, 4]), n=3, seed=1)["total"].shape
    (3,)
    """
    if not 1 <= n <= MAX_TRIALS:
        raise InputError("n", f"must be between 1 and {MAX_TRIALS:,}, got {n}")
    if rules.luck == "if-failing" and check.difficulty is None:
        raise InputError("luck", "if-failing needs `difficulty`")
    rng = np.random.Generator(np.random.PCG64(seed))
    sizes = np.array(check.dice, dtype=np.int64)
    modifiers = np.array(check.modifiers, dtype=np.int64)
    count = len(sizes)
    faces = rng.integers(1, sizes + 1, size=(n, count)) + modifiers

    # sort each trial's dice by (face, size, position) and take the result die's column
    keys = faces * 0 + np.arange(count)  # position breaks ties last
    order = np.lexsort((keys, np.broadcast_to(sizes, faces.shape), faces), axis=1)
    net = check.advantage - check.disadvantage
    position = count - 1 if net > 0 else 0 if net < 0 else count // 2
    result_column = order[:, position]
    rows = np.arange(n)
    result_face = faces[rows, result_column]
    result_size = sizes[result_column]

    if rules.luck == "always":
        use_luck = np.ones(n, dtype=bool)
    elif rules.luck == "if-failing":
        use_luck = result_face < check.difficulty
    else:
        use_luck = np.zeros(n, dtype=bool)
    luck_face = rng.integers(1, result_size + 1)
    if rules.luck_modifier:
        luck_face = luck_face + modifiers[result_column]
    total = result_face + np.where(use_luck, luck_face, 0)

    player, gm = _omens(faces, rules)
    luck_player, luck_gm = _omens(luck_face, rules)
    player_omens = player.sum(axis=1) + np.where(use_luck, luck_player, 0)
    gm_omens = gm.sum(axis=1) + np.where(use_luck, luck_gm, 0)

    if check.difficulty is None:
        outcome = np.full(n, "", dtype=object)
    else:
        condition = (total == check.difficulty - 1) & (rules.fail_by_one == "take")
        outcome = np.where(
            total >= check.difficulty, "success", np.where(condition, "success-with-condition", "failure")
        ).astype(object)
    return {
        "trial": rows,
        "faces": faces,
        "result_die": result_size,
        "result_face": result_face,
        "luck_face": np.where(use_luck, luck_face, -(10**9)),
        "used_luck": use_luck,
        "total": total,
        "outcome": outcome,
        "player_omens": player_omens,
        "gm_omens": gm_omens,
    }


def simulate_rows(check, rules: Rules = Rules(), *, n: int, seed: int) -> list[dict]:
    """Simulate ``n`` checks as rows of strings keyed by `COLUMNS` (ready for CSV)."""
    arrays = simulate(check, rules, n=n, seed=seed)
    rows = []
    for i in range(n):
        rows.append(
            {
                "trial": str(i),
                "faces": ";".join(str(int(face)) for face in arrays["faces"][i]),
                "result_die": f"d{int(arrays['result_die'][i])}",
                "result_face": str(int(arrays["result_face"][i])),
                "luck_face": str(int(arrays["luck_face"][i])) if arrays["used_luck"][i] else "",
                "total": str(int(arrays["total"][i])),
                "outcome": arrays["outcome"][i],
                "player_omens": str(int(arrays["player_omens"][i])),
                "gm_omens": str(int(arrays["gm_omens"][i])),
            }
        )
    return rows
