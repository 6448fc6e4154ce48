"""The independent simulator against the exact model (G-tests, false-alarm rate 1e-4 each)."""

from __future__ import annotations

import csv
import math
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2

from exactdice.chronica import Rules, expected_distribution, solve_contest
from exactdice.chronica.contest import apply_target, sizes_text
from exactdice.chronica.simulate import _Table, _targeted, _Trials, columns, simulate_rows, write_csv

ALPHA = 1e-4  # false-alarm rate of each test below
TRIALS = 20_000


def g_test_passes(observed: Counter, expected: dict, trials: int) -> bool:
    """G-test of observed counts against exact probabilities (categories with p > 0)."""
    assert set(observed) <= {key for key, p in expected.items() if p > 0}, "impossible outcome seen"
    statistic, categories = 0.0, 0
    for key, p in expected.items():
        if p == 0:
            continue
        categories += 1
        count = observed.get(key, 0)
        if count:
            statistic += 2 * count * math.log(count / (trials * float(p)))
    return statistic < chi2.ppf(1 - ALPHA, categories - 1)


SETUPS = [
    ([((8, 8, 6),), ((10, 6),)], Rules(), None),
    ([((8, 6), (4,)), ((10, 6),), ((6, 6),)], Rules(), None),
    ([((4, 4, 4, 4),), ((4, 4, 4, 4),)], Rules(tie_rule="four-ties"), None),
    ([((7, 5),), ((6, 6),)], Rules(physical=True), None),
    ([((4, 4),), ((4, 4),)], Rules(push=True, push_dice=(4,), max_pushes=2), None),
    ([((8, 6),), ((4,),)], Rules(), 8),
]


@pytest.mark.parametrize("sides, rules, target", SETUPS)
def test_simulator_matches_exact(sides, rules, target):
    rows = simulate_rows(sides, rules, target, n=TRIALS, seed=11)
    exact = solve_contest(sides, rules, target)
    winners = Counter(row["winner"] for row in rows)
    assert g_test_passes(winners, expected_distribution(sides, rules, target), TRIALS)
    sizes = Counter((row["winner"], row["success_sizes"]) for row in rows)
    expected_sizes = {(str(w), sizes_text(s)): p for w, t in exact.success_sizes.items() for s, p in t.items()}
    expected_sizes[("tie", "")] = exact.tie
    assert g_test_passes(sizes, expected_sizes, TRIALS)
    for side, table in exact.concessions.items():
        observed = Counter(row[f"concessions_{side}"] for row in rows)
        assert g_test_passes(observed, table, TRIALS)


def test_simulator_is_seeded_and_reproducible():
    sides = [((8, 6),), ((10,),)]
    assert simulate_rows(sides, n=500, seed=3) == simulate_rows(sides, n=500, seed=3)
    assert simulate_rows(sides, n=500, seed=3) != simulate_rows(sides, n=500, seed=4)


def test_simulator_targeting_is_independent_but_agrees():
    cases = [
        ([((4,),), ((10, 4),)], 6),
        ([((4,),), ((4, 4), (2, 2, 8))], 10),
        ([((4,),), ((20,),)], 6),
        ([((6,),), ((3, 3, 3, 3), (2,))], 4),
    ]
    for sides, target in cases:
        ours = [tuple(tuple(sorted(pool, reverse=True)) for pool in side) for side in _targeted(sides, target)]
        assert ours == apply_target(sides, target)


def test_csv_has_the_documented_columns(tmp_path):
    rows = simulate_rows([((6,),), ((6,),), ((4,),)], n=50, seed=1)
    path = tmp_path / "samples.csv"
    write_csv(rows, str(path), 3)
    with open(path) as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == columns(3)
        assert len(list(reader)) == 50


def test_simulator_steps_match_the_literal_reference_roll_by_roll():
    """The simulator's named steps (`_Trials`) give the reference's outcome on the same faces."""
    sys.path.insert(0, str(Path(__file__).parent))
    from chronica_reference import resolve

    rng = random.Random(13)
    for _ in range(150):
        sides = [
            [[rng.choice((2, 3, 4, 6)) for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 2))]
            for _ in range(rng.choice((2, 3)))
        ]
        four_ties, instant = rng.random() < 0.4, rng.random() < 0.3
        table = _Table.of(sides)
        faces = np.array([[rng.randint(1, size) for size in table.sizes] for _ in range(40)])
        trials = _Trials(table, faces)
        trials.compare(four_ties, instant)
        trials.score()
        for t, row in enumerate(faces):
            column = iter(row)
            rolled = [[[(size, int(next(column))) for size in pool] for pool in side] for side in sides]
            expected = resolve(rolled, four_ties=four_ties, instant=instant)
            got = (int(trials.winner[t]), tuple(trials.success_sizes[t]), tuple(int(c) for c in trials.concessions[t]))
            assert got == expected, (sides, row.tolist(), four_ties, instant)
