"""Where a fixed Karbon contest's exact solve goes: exploring, components, the bound
pass (loop matrices and determinants included), the loops' exact solves, and the
per-transition work of the forward pass, on one explored graph.

Run: python scripts/bench_forward_split.py [--case A,C,W,P] [--float]
(``--float`` also times the float preview of the same pass). The split is printed with
the load average: on a shared machine the seconds are inflated, the shares are not much.
"""

from __future__ import annotations

import argparse
import os
import time

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
from exactdice.karbon.model import KarbonModel
from exactdice.markov import explore
from exactdice.markov import forward

__all__ = ["split", "main"]


def split(case: str, with_float: bool = False) -> dict:
    """Seconds per phase of the exact forward-only solve of fixed contest ``case``."""
    ability, challenge, consequence, peril = map(int, case.split(","))
    setup = ContestSetup(ability=ability, challenge=challenge, consequence=consequence, peril=peril)
    player, narrator = PlayerPolicy(), NarratorPolicy()
    start = setup.start(player, narrator)
    seconds = {}
    began = time.perf_counter()
    graph = explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator), progress=False)
    seconds["explore"] = time.perf_counter() - began
    began = time.perf_counter()
    components = graph.strongly_connected_components()
    plan = forward._Plan(graph, {}, None, components, forward.block_system)
    plan.alive = forward._alive_states(plan)
    seconds["components + alive"] = time.perf_counter() - began
    began = time.perf_counter()
    bound = forward.denominator_bound(plan)
    seconds["bound (loop matrices, determinants)"] = time.perf_counter() - began
    loops = [0.0]
    solve_loop = forward._block_solution

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return solve_loop(*args, **kwargs)
        finally:
            loops[0] += time.perf_counter() - started

    forward._block_solution = timed
    try:
        began = time.perf_counter()
        result = forward._run(plan, bound, exact=True)
        passed = time.perf_counter() - began
    finally:
        forward._block_solution = solve_loop
    seconds["loop solves"] = loops[0]
    seconds["transitions (multiply-adds, divisions, loop exits)"] = passed - loops[0]
    if with_float:
        began = time.perf_counter()
        forward._run(plan, 1.0, exact=False)
        seconds["float preview of the pass"] = time.perf_counter() - began
    return dict(seconds=seconds, states=graph.num_states, transitions=graph.num_transitions,
                bound_bits=int(bound).bit_length(), loops=len(plan.cyclic),
                win=result.absorption.get("win"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="5,5,3,1", help="A,C,W,P (default 5,5,3,1)")
    parser.add_argument("--float", action="store_true", help="also time the float preview")
    args = parser.parse_args(argv)
    found = split(args.case, args.float)
    print(f"A,C,W,P = {args.case}: {found['states']:,} states, {found['transitions']:,} transitions, "
          f"{found['loops']} loops, Q of {found['bound_bits']:,} bits; load average {os.getloadavg()[0]:.1f}")
    exact = sum(value for key, value in found["seconds"].items() if not key.startswith("float"))
    print("| phase | seconds | share |")
    print("|---|---:|---:|")
    for phase, value in found["seconds"].items():
        print(f"| {phase} | {value:.2f} | {100 * value / exact:.0f}% |")


if __name__ == "__main__":
    main()
