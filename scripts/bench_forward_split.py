"""Where a fixed Karbon contest's exact solve goes: exploring, components, the loops'
matrices, their exact solves, what leaves them, the acyclic states' transitions and
the closing sums, on one explored graph; optionally the float preview beside it.

Run: python scripts/bench_forward_split.py [--case A,C,W,P] [--float] [--loop-shapes]
The split is in CPU seconds, printed with the load average: on a shared machine the
wall seconds are inflated by the other jobs, CPU seconds much less.
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import contextmanager

from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
from exactdice.karbon.model import KarbonModel
from exactdice.markov import explore, forward
from exactdice.markov.graph import paused_gc

__all__ = ["split", "main"]

# phase -> (owner, attribute) of the functions timed inside the exact pass
_TIMED = {
    "loop matrices (rows, FLINT matrix)": (forward._Plan, "cyclic_block"),
    "loop right sides (inflows gathered)": (forward._Pass, "loop_parts"),
    "loop right sides (brought to their join)": (forward, "summed_parts"),
    "loop solves (FLINT / remembered inverse, checked)": (forward, "solve_block"),
    "loop exits (weight x numerator per edge)": (forward._Pass, "leaving"),
    "acyclic states (multiply-adds per edge)": (forward._Pass, "state"),
    "closing sums and check": (forward._Pass, "result"),
}


@contextmanager
def _timers(seconds: dict):
    """Wrap the phases' functions so their inclusive CPU time adds up in ``seconds``
    (CPU seconds: the machine is shared, wall seconds are inflated by the others)."""
    saved = []
    for phase, (owner, name) in _TIMED.items():
        real = getattr(owner, name)
        seconds[phase] = 0.0

        def timed(*args, _real=real, _phase=phase, **kwargs):
            started = time.process_time()
            try:
                return _real(*args, **kwargs)
            finally:
                seconds[_phase] += time.process_time() - started

        saved.append((owner, name, real))
        setattr(owner, name, timed)
    try:
        yield
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)


def explored(case: str):
    """The explored graph of the fixed default-policy contest ``A,C,W,P``."""
    ability, challenge, consequence, peril = map(int, case.split(","))
    setup = ContestSetup(ability=ability, challenge=challenge, consequence=consequence, peril=peril)
    player, narrator = PlayerPolicy(), NarratorPolicy()
    start = setup.start(player, narrator)
    return explore(KarbonModel(start.sizes, start.situation(), Rules(), player, narrator), progress=False)


@contextmanager
def _loop_shapes(shapes: list):
    """Record per loop: (live members, members that receive inflow, distinct states it
    leaves to, edges of its members): what a per-loop exit map would cost against the
    edges the pass walks."""
    real = forward._Pass.leaving

    def recording(flow, live, values):
        leaving = list(real(flow, live, values))
        graph = flow.graph
        edges = sum(graph.offsets[node + 1] - graph.offsets[node] for node in live)
        shapes.append((len(live), sum(1 for node in live if flow.inflow[node]), len(leaving), edges))
        return leaving

    forward._Pass.leaving = recording
    try:
        yield
    finally:
        forward._Pass.leaving = real


def split(case: str, with_float: bool = False) -> dict:
    """Seconds per phase of the exact forward-only solve of fixed contest ``case``."""
    seconds = {}
    began = time.process_time()
    graph = explored(case)
    seconds["explore"] = time.process_time() - began
    with paused_gc():
        began = time.process_time()
        components = graph.strongly_connected_components()
        plan = forward._Plan(graph, {}, None, components)
        plan.alive = forward._alive_states(plan)
        seconds["components + alive"] = time.process_time() - began
        wall, began = time.perf_counter(), time.process_time()
        with _timers(seconds):
            result = forward._run(plan)
        passed, wall = time.process_time() - began, time.perf_counter() - wall
        if with_float:
            from exactdice.markov.float_pass import float_pass

            began = time.process_time()
            float_pass(plan)
            seconds["float preview of the pass"] = time.process_time() - began
    seconds["rest of the pass"] = passed - sum(seconds[phase] for phase in _TIMED)
    return dict(
        seconds=seconds,
        states=graph.num_states,
        transitions=graph.num_transitions,
        bound_bits=result.denominator_bits,
        loops=len(plan.cyclic),
        pass_seconds=wall,
        pass_cpu=passed,
        win=result.absorption.get("win"),
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="5,5,3,1", help="A,C,W,P (default 5,5,3,1)")
    parser.add_argument("--float", action="store_true", help="also time the float preview")
    parser.add_argument(
        "--loop-shapes",
        action="store_true",
        help="count each loop's members, entry states (with inflow) and exits instead of timing",
    )
    args = parser.parse_args(argv)
    if args.loop_shapes:
        shapes: list = []
        with _loop_shapes(shapes):
            split(args.case)
        members, entries, exits, edges = (sum(column) for column in zip(*shapes))
        print(
            f"A,C,W,P = {args.case}: {len(shapes)} loops, {members:,} live members, {entries:,} of them entries "
            f"(receive inflow), {exits:,} exits (distinct states left to), entries x exits summed per loop "
            f"{sum(shape[1] * shape[2] for shape in shapes):,}, members' edges {edges:,}"
        )
        return
    found = split(args.case, args.float)
    print(
        f"A,C,W,P = {args.case}: {found['states']:,} states, {found['transitions']:,} transitions, "
        f"{found['loops']} loops, Q of {found['bound_bits']:,} bits; load average {os.getloadavg()[0]:.1f}; "
        f"exact pass {found['pass_seconds']:.2f} s ({found['pass_cpu']:.2f} CPU s)"
    )
    exact = sum(value for key, value in found["seconds"].items() if not key.startswith("float"))
    print("| phase | CPU seconds | share |")
    print("|---|---:|---:|")
    for phase, value in found["seconds"].items():
        print(f"| {phase} | {value:.2f} | {100 * value / exact:.0f}% |")


if __name__ == "__main__":
    main()
