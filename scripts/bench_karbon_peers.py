"""Karbon contests against Storm: the same explored chain (fixed policies, a DTMC) or MDP
(an optimal player against a fixed narrator, Pmax of winning) handed to Storm's exact
engine; identical rationals are checked and the time ratio printed.

Run: python scripts/bench_karbon_peers.py [--large]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy  # noqa: E402
from exactdice.karbon.draws import DrawSearchModel  # noqa: E402
from exactdice.karbon.model import KarbonModel  # noqa: E402
from exactdice.karbon.solve import payoffs  # noqa: E402
from exactdice.markov import explore, solve  # noqa: E402

CASES = [
    ("fixed A2 v C2, W2 P1", dict(ability=2, challenge=2, consequence=2, peril=1), "fixed"),
    ("fixed A3 v C3, W3 P1", dict(ability=3, challenge=3, consequence=3, peril=1), "fixed"),
    ("optimal player: d8 v d8, pool d6, reserve d6, W2 P1",
     dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1),
     "optimal"),
    ("optimal player: d6 v d10, pool d4, reserve d4, W1 P1",
     dict(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1),
     "optimal"),
]
LARGE = [("fixed A4 v C3, W3 P1", dict(ability=4, challenge=3, consequence=3, peril=1), "fixed")]


def build_model(setup_kwargs, player_kind, ruleset):
    setup = ContestSetup(**setup_kwargs)
    player, narrator = PlayerPolicy(kind=player_kind), NarratorPolicy()
    if setup.player_dice is None and player_kind == "optimal":
        return DrawSearchModel(setup, ruleset, player, narrator)
    start = setup.start(player, narrator)
    return KarbonModel(start.sizes, start.situation(), ruleset, player, narrator)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also A4 v C3 (Storm takes minutes)")
    args = parser.parse_args(argv)
    try:
        from bench_markov_peers import storm_probability
        import stormpy  # noqa: F401
    except ImportError:
        print("karbon vs Storm: stormpy is not installed (pip install stormpy==2.0.0); skipped")
        return
    # Pmax [F "win"] is the win objective; the fixed chains are the same under either objective
    ruleset = Rules(objective="win")
    payoff, endless = payoffs(ruleset)
    print("## Karbon vs Storm 2.0 exact (identical rationals checked)\n")
    print("| case | states | transitions | exactdice explore s | exactdice solve s | Storm build s "
          "| Storm check s | Storm total / exactdice total | Storm total / exactdice solve | identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, setup_kwargs, player_kind in CASES + (LARGE if args.large else []):
        began = time.perf_counter()
        graph = explore(build_model(setup_kwargs, player_kind, ruleset), progress=False)
        explored = time.perf_counter()
        solution = solve(graph, payoff=payoff, nonterminating_payoff=endless, progress=False)
        solved = time.perf_counter()
        storm_value, storm_build, storm_check = storm_probability(graph, "win")
        ours = (explored - began) + (solved - explored)
        same = storm_value == solution.absorption["win"]
        print(f"| {name} | {graph.num_states:,} | {graph.num_transitions:,} | {explored - began:.2f} | "
              f"{solved - explored:.2f} | {storm_build:.2f} | {storm_check:.2f} | "
              f"{(storm_build + storm_check) / ours:.1f}x | {(storm_build + storm_check) / (solved - explored):.1f}x | "
              f"{'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
