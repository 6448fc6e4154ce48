"""Exploring Karbon state graphs alone: states and transitions a second, peak memory.

Run: python scripts/bench_karbon_explore.py [--rows NAME ...] [--baseline DIR] [--max-states N]
Each row runs in a fresh process (its peak RSS is its own) and is timed in CPU seconds
(the machine may be shared; wall seconds are printed too). ``--baseline DIR`` runs every
row also with the ``exactdice`` package found in DIR (e.g. ``git worktree add /tmp/main
main``), alternating, and prints the ratio. Rows that do not finish stop at
``--max-states`` states found; their line says how many states were expanded by then.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROWS = {
    "A3 v C3, W3 P1": ("dict(ability=3, challenge=3, consequence=3, peril=1)", "fixed"),
    "A4 v C3, W3 P1": ("dict(ability=4, challenge=3, consequence=3, peril=1)", "fixed"),
    "A5 v C5, W3 P1": ("dict(ability=5, challenge=5, consequence=3, peril=1)", "fixed"),
    "A6 v C1, W7 P0": ("dict(ability=6, challenge=1, consequence=7, peril=0)", "fixed"),
    "d8 v d8, pool d6,d8, W2 P1, risk=always": (
        "dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1, 8: 1}, reserve={6: 1}, consequence=2, peril=1)",
        "risk=always",
    ),
    "A3 v C2, W2 P0, F2, Training, risk=always": (
        "dict(ability=3, challenge=2, consequence=2, peril=0, fortune=2, training=True)",
        "risk=always",
    ),
    "A3 v C3, W3 P1, risk=always": ("dict(ability=3, challenge=3, consequence=3, peril=1)", "risk=always"),
}
DEFAULT_ROWS = [row for row in ROWS if row != "A6 v C1, W7 P0"][:4]

_CHILD = r"""
import json, resource, sys, time
from exactdice.errors import TooLargeError
from exactdice.karbon import ContestSetup, NarratorPolicy, parse_player_policy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.ruleset import Rules
from exactdice.markov import explore
setup, player, max_states = ContestSetup(**eval(sys.argv[1])), parse_player_policy(sys.argv[2]), int(sys.argv[3])
start = setup.start(player, NarratorPolicy())
model = KarbonModel(start.sizes, start.situation(), Rules(), player, NarratorPolicy())
expanded = [0]
class Counting:
    outcomes, reward_names, initial_state = model.outcomes, model.reward_names, model.initial_state
    def expand(self, state):
        expanded[0] += 1
        return getattr(model, "expand_keyed", model.expand)(state)
cpu, wall = time.process_time(), time.perf_counter()
try:
    graph = explore(Counting(), max_states=max_states, progress=False)
    found, transitions = graph.num_states, graph.num_transitions
except TooLargeError:
    found, transitions = max_states, None
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "found": found,
                  "expanded": expanded[0], "transitions": transitions,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(code_dir, row, max_states):
    setup, player = ROWS[row]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(code_dir))
    output = subprocess.run(
        [sys.executable, "-c", _CHILD, setup, player, str(max_states)],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.path.abspath(code_dir),
    )
    if output.returncode:
        raise SystemExit(f"{row}: {output.stderr.strip().splitlines()[-1]}")
    return json.loads(output.stdout)


def _describe(result):
    done = "" if result["transitions"] is not None else f" (stopped at {result['found']:,} states found)"
    rate = f"{result['expanded'] / result['cpu']:,.0f} states/s"
    if result["transitions"] is not None:
        rate += f", {result['transitions'] / result['cpu']:,.0f} transitions/s"
    return (
        f"{result['cpu']:.2f} s CPU ({result['wall']:.2f} s wall), {result['expanded']:,} states expanded, "
        f"{rate}, peak {result['peak_mib']:,.0f} MiB{done}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        nargs="*",
        default=DEFAULT_ROWS,
        choices=list(ROWS),
        metavar="NAME",
        help=f"rows to run (default: {'; '.join(DEFAULT_ROWS)}): {'; '.join(ROWS)}",
    )
    parser.add_argument("--baseline", metavar="DIR", help="a checkout whose exactdice to compare against")
    parser.add_argument("--max-states", type=int, default=200_000, help="stop a row at this many states found")
    args = parser.parse_args(argv)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for row in args.rows:
        ours = _run(here, row, args.max_states)
        load = os.getloadavg()[0]
        print(f"{row}: {_describe(ours)}; load {load:.1f}", flush=True)
        if args.baseline:
            theirs = _run(args.baseline, row, args.max_states)
            print(
                f"  baseline: {_describe(theirs)}; this checkout is {theirs['cpu'] / ours['cpu']:.2f}x "
                f"as fast (CPU), peak memory {ours['peak_mib'] / theirs['peak_mib']:.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
