"""Karbon under optimal play: reachable states and solve times against the fixed policies'
chain for the same setup (both draws given, so every case is one contest).

Run: python scripts/bench_karbon_optimal.py [--max-states N] [--timeout S] [--quick]
Each case and policy pair runs in a fresh process. States are graph nodes: round starts
plus, under optimal play, the decisions inside a round (and the chance events between
them). A case that passes ``--max-states``
is reported as "> N" with the seconds it took to get there: the state space is at
least that large, and the frontier was still growing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# (name, ContestSetup keyword arguments as JSON-able values)
CASES = [
    (
        "d6 v d10, pool d4, reserve d4, W1 P1",
        dict(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1),
    ),
    (
        "d8 v d8, pool d6, reserve d6, W2 P1 (the optimal-play issue's case)",
        dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1),
    ),
    (
        "d6 v d8, no pool, no reserve, W4 P1",
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={}, reserve={}, consequence=4, peril=1),
    ),
    (
        "d6,d8 v d10, pool d6,d10, reserve d6, W3 P1",
        dict(
            player_dice={6: 1, 8: 1}, narrator_dice={10: 1}, pool={6: 1, 10: 1}, reserve={6: 1}, consequence=3, peril=1
        ),
    ),
    (
        "A1 v C1 after the fixed draws (d8 v d8), default pool and reserve, W1 P0",
        dict(
            player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 7, 8: 3, 10: 3}, reserve={6: 5}, consequence=1, peril=0
        ),
    ),
    (
        "A3 v C3 after the fixed draws (3d8 v 2d8,d10, draw chips paid), default pool and reserve, W3 P1",
        dict(
            player_dice={8: 3},
            narrator_dice={8: 2, 10: 1},
            draw_chips=True,
            pool={6: 7, 10: 2},
            reserve={6: 5},
            consequence=3,
            peril=1,
        ),
    ),
]
PAIRS = [("fixed", "fixed"), ("optimal", "fixed"), ("optimal", "optimal")]

_CHILD = r"""
import json, sys, time
from exactdice.errors import TooLargeError
from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.solve import payoffs
from exactdice.markov import explore, solve
kwargs, player, narrator, limit = json.loads(sys.argv[1])
for key in ("player_dice", "narrator_dice", "pool", "reserve"):
    kwargs[key] = {int(sides): count for sides, count in kwargs[key].items()}
setup = ContestSetup(**kwargs)
ruleset = Rules()
p, n = PlayerPolicy(kind=player), NarratorPolicy(kind=narrator)
start = setup.start(p, n)
began = time.perf_counter()
try:
    graph = explore(KarbonModel(start.sizes, start.situation(), ruleset, p, n), max_states=limit, progress=False)
except TooLargeError:
    print(json.dumps({"over": limit, "seconds": round(time.perf_counter() - began, 1)}))
    sys.exit()
explored = time.perf_counter()
payoff, endless = payoffs(ruleset)
solution = solve(graph, payoff=payoff, nonterminating_payoff=endless, progress=False)
rounds = sum(1 for state in graph.states if type(state).__name__ == "Position")
print(json.dumps({"states": graph.num_states, "round_starts": rounds, "transitions": graph.num_transitions,
                  "explore": round(explored - began, 2), "solve": round(time.perf_counter() - explored, 2),
                  "value": float(solution.value)}))
"""


def run_case(kwargs, player, narrator, limit, timeout):
    argument = json.dumps([kwargs, player, narrator, limit])
    try:
        output = subprocess.run(
            [sys.executable, "-c", _CHILD, argument], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout} s"
    if output.returncode:
        return "failed: " + output.stderr.strip().splitlines()[-1]
    row = json.loads(output.stdout)
    if "over" in row:
        return f"> {row['over']:,} states ({row['seconds']} s to get there)"
    return (
        f"{row['states']:,} states ({row['round_starts']:,} round starts), {row['transitions']:,} "
        f"transitions, explore {row['explore']} s + "
        f"solve {row['solve']} s, value {row['value']:.4f}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-states", type=int, default=3_000_000, help="state limit per solve")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per solve")
    parser.add_argument("--quick", action="store_true", help="only the cases that finish in seconds")
    args = parser.parse_args(argv)
    cases = CASES[:3] if args.quick else CASES
    print("| setup | player / narrator | result |")
    print("|---|---|---|")
    for name, kwargs in cases:
        for player, narrator in PAIRS:
            result = run_case(kwargs, player, narrator, args.max_states, args.timeout)
            print(f"| {name} | {player} / {narrator} | {result} |", flush=True)


if __name__ == "__main__":
    main()
