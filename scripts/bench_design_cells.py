"""How many cells `karbon design` solves exactly against the full grid, on three targets,
and whether its answers equal brute force (every cell solved).

Usage: python scripts/bench_design_cells.py [--store PATH] [--no-verify]

Grid: Ability 2, Challenge 1-5 x Peril 0-3 x Consequence 1-2 (40 setups, fixed policies);
targets win=60%, win=25% and score=40%, the 5 closest each. Screens: 50,000 simulated
contests a setup, risk 1e-6. The store (default: a temporary file) caches screens and
exact cells across targets, but the count of cells each search *needs* does not depend on
the cache. With verification (the default) every cell is then solved and each answer is
compared with the brute-force ranking.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from fractions import Fraction

from exactdice.design import design_search
from exactdice.karbon.design import karbon_design_problem
from exactdice.tables.store import ResultStore

AXES = {"challenge": [1, 2, 3, 4, 5], "peril": [0, 1, 2, 3], "consequence": [1, 2]}
FIXED = {"ability": 2}
TARGETS = [("win", Fraction(3, 5)), ("win", Fraction(1, 4)), ("score", Fraction(2, 5))]
BEST = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=None)
    parser.add_argument("--no-verify", action="store_true")
    arguments = parser.parse_args()
    path = arguments.store or os.path.join(tempfile.mkdtemp(), "design.sqlite")
    print(f"grid: {AXES} at {FIXED}; load average {os.getloadavg()[0]:.1f}", flush=True)
    with ResultStore(path) as store:
        answers = {}
        for metric, target in TARGETS:
            began = time.perf_counter()
            problem = karbon_design_problem(AXES, FIXED, metric=metric)
            found = design_search(problem, target=target, best=BEST, store=store, workers=2)
            answers[(metric, target)] = found
            print(
                f"{metric}={float(target):.2f}: solved exactly {found.solved} of {found.grid_size} "
                f"({100 * found.solved / found.grid_size:.0f} %), best "
                f"{found.candidates[0].point} at {100 * float(found.candidates[0].value):.2f} %, "
                f"{time.perf_counter() - began:.0f} s (cache shared), load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        if arguments.no_verify:
            return
        for (metric, target), found in answers.items():
            problem = karbon_design_problem(AXES, FIXED, metric=metric)
            brute = design_search(problem, target=target, best=BEST, store=store, workers=2, exhaustive=True)
            same = [(c.point, c.value) for c in brute.candidates] == [(c.point, c.value) for c in found.candidates]
            print(f"{metric}={float(target):.2f}: brute force solved {brute.solved}; same answer: {same}", flush=True)


if __name__ == "__main__":
    main()
