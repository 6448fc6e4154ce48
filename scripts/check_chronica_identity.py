#!/usr/bin/env python
"""Compare Chronica contest results of this tree with an earlier revision's, setup by setup.

The earlier revision's ``exactdice/chronica/contest.py`` (one module then) is read from
git and loaded beside the current code; both solve the same random contests (two to
four sides, co-operating pools, d1..d20, every rules knob, target dice, with and
without concessions) and every result must be identical: the joint outcome tables as
exact fractions (in order) and every field of `ContestResult`. It also times both on
each setup, so the speed ratio comes from the same run.

Usage::

    python scripts/check_chronica_identity.py                   # 600 setups against a52542e
    python scripts/check_chronica_identity.py --revision main --setups 200 --seed 3
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

from exactdice.chronica import contest as current
from exactdice.chronica.ruleset import Rules

REPOSITORY = Path(__file__).resolve().parent.parent
#: every field of a result (the two revisions' `ContestResult` are different classes)
FIELDS = [field.name for field in dataclasses.fields(current.ContestResult)]
#: the last revision with the one-module dynamic program
DEFAULT_REVISION = "a52542e"


def load_revision(revision: str):
    """The revision's ``exactdice/chronica/contest.py`` as a module (its imports are today's)."""
    source = subprocess.run(
        ["git", "show", f"{revision}:exactdice/chronica/contest.py"],
        cwd=REPOSITORY,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("chronica_contest_before")
    module.__file__ = f"{revision}:exactdice/chronica/contest.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def random_setup(rng: random.Random):
    """(sides, rules, target, concessions): a random contest of at most 9 dice."""
    sizes = [1, 2, 3, 4, 5, 6, 6, 7, 8, 8, 10, 10, 11, 12, 12, 20]
    while True:
        sides = []
        for _ in range(rng.choice([2, 2, 2, 3, 3, 4])):
            pools = tuple(
                tuple(sorted((rng.choice(sizes) for _ in range(rng.randint(1, 4))), reverse=True))
                for _ in range(rng.choice([1, 1, 1, 2, 3]))
            )
            sides.append(pools)
        if sum(len(pool) for side in sides for pool in side) <= 9:
            break
    push = rng.random() < 0.25
    rules = Rules(
        tie_rule=rng.choice(["all-discarded", "four-ties"]),
        push=push,
        push_dice=tuple(rng.choice([(), (4,), (6, 6)])) if push else (),
        max_pushes=rng.choice([1, 2]),
        physical=rng.random() < 0.3,
    )
    target = rng.choice([None, None, None, 4, 6, 8])
    return sides, rules, target, rng.random() < 0.8


def same_result(before, after) -> bool:
    """Every field equal, the outcome tables in the same order."""
    return (
        list(before.size_outcomes.items()) == list(after.size_outcomes.items())
        and list(before.concession_outcomes.items()) == list(after.concession_outcomes.items())
        and all(getattr(before, name) == getattr(after, name) for name in FIELDS)
        and before.to_json() == after.to_json()
    )


def timed(solve, *args, **options):
    started = time.process_time()
    result = solve(*args, **options)
    return result, time.process_time() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revision", default=DEFAULT_REVISION)
    parser.add_argument("--setups", type=int, default=600)
    parser.add_argument("--seed", type=int, default=37)
    options = parser.parse_args(argv)
    before = load_revision(options.revision)
    rng = random.Random(options.seed)
    ratios, seconds_before, seconds_after, differ = [], 0.0, 0.0, []
    for number in range(options.setups):
        sides, rules, target, concessions = random_setup(rng)
        old, old_seconds = timed(before.solve_contest, sides, rules, target, concessions=concessions)
        new, new_seconds = timed(current.solve_contest, sides, rules, target, concessions=concessions)
        seconds_before += old_seconds
        seconds_after += new_seconds
        if old_seconds > 0.02:
            ratios.append(new_seconds / old_seconds)
        if not same_result(old, new):
            differ.append((number, sides, rules, target, concessions))
    print(
        f"{options.setups} setups (seed {options.seed}) against {options.revision}: "
        f"{options.setups - len(differ)} identical, {len(differ)} different"
    )
    print(
        f"CPU seconds: before {seconds_before:.2f}, after {seconds_after:.2f} "
        f"(ratio {seconds_after / seconds_before:.3f}); per setup over 20 ms ({len(ratios)}): "
        f"median ratio {statistics.median(ratios):.3f}"
        if ratios
        else ""
    )
    for case in differ[:10]:
        print("different:", case)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
