"""exactdice's solver against Storm (exact DTMC/MDP) and icepool on the same chains.

Run: python scripts/bench_markov_peers.py [--big]. Builds contest-shaped synthetic
chains, solves them with exactdice, hands the SAME explicit chain to Storm's exact
engine (stormpy 2.0), checks the two rationals are identical and prints timings.
Peers that are not installed are skipped with a printed line.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from exactdice.markov import explore, solve
from exactdice.markov.graph import CHANCE, DECISION, TERMINAL
from exactdice.markov.synthetic import ContestChain, TugOfWar

__all__ = ["storm_probability", "run_storm_table", "run_icepool_tug_of_war", "main"]


def storm_probability(graph, outcome="win"):
    """Build ``graph`` as an exact Storm DTMC (or MDP when it has decisions, all "max")
    and check P=? / Pmax=? [F outcome]; returns (probability, build s, check s)."""
    import stormpy
    import stormpy.datastructures as datastructures
    import stormpy.models as models

    rational = stormpy.Rational
    started = time.perf_counter()
    has_decisions = any(kind == DECISION for kind in graph.kind)
    builder = datastructures.SparseMatrixBuilder[rational](
        rows=0, columns=0, entries=0, force_dimensions=False, has_custom_row_grouping=has_decisions, row_groups=0
    )
    row = 0
    offsets, targets, weights = graph.offsets, graph.targets, graph.weights
    for node in range(graph.num_states):
        if has_decisions:
            builder.new_row_group(row)
        kind = graph.kind[node]
        if kind == TERMINAL:
            builder.add_next_value(row, node, rational(1))
            row += 1
        elif kind == CHANCE:
            total = graph.data[node]
            for edge in sorted(range(offsets[node], offsets[node + 1]), key=targets.__getitem__):
                builder.add_next_value(row, targets[edge], rational(f"{weights[edge]}/{total}"))
            row += 1
        else:
            for edge in range(offsets[node], offsets[node + 1]):
                builder.add_next_value(row, targets[edge], rational(1))
                row += 1
    labeling = models.StateLabeling(graph.num_states)
    labeling.add_label("init")
    labeling.add_label(outcome)
    labeling.add_label_to_state("init", graph.initial)
    outcome_index = graph.outcomes.index(outcome)
    for node in range(graph.num_states):
        if graph.kind[node] == TERMINAL and graph.data[node] == outcome_index:
            labeling.add_label_to_state(outcome, node)
    components = models.SparseModelComponents(transition_matrix=builder.build(), state_labeling=labeling)
    model = (models.SparseMdp if has_decisions else models.SparseDtmc)(components)
    built = time.perf_counter()
    formula = f'P{"max" if has_decisions else ""}=? [F "{outcome}"]'
    result = stormpy.model_checking(model, stormpy.parse_properties(formula)[0], only_initial_states=True)
    value = Fraction(str(result.get_value(graph.initial)))
    return value, built - started, time.perf_counter() - built


def run_storm_table(sizes, decision_every=0, storm_max=20_000):
    try:
        import stormpy  # noqa: F401
    except ImportError:
        print("stormpy not importable: Storm comparison skipped")
        return
    kind = "MDP (max)" if decision_every else "DTMC"
    print(f"\nStorm exact vs exactdice exact, contest-shaped {kind}")
    print(
        f"{'states':>9} {'transitions':>12} {'explore s':>10} {'solve s':>9} {'storm build s':>14} "
        f"{'storm check s':>14} {'storm/ours':>10} {'states/s':>10} {'trans/s':>10} same"
    )
    for size in sizes:
        started = time.perf_counter()
        graph = explore(ContestChain(size, decision_every=decision_every))
        explored = time.perf_counter()
        ours = solve(graph).absorption["win"]
        solved = time.perf_counter()
        our_total = solved - started
        if graph.num_states > storm_max:
            print(
                f"{graph.num_states:>9,} {graph.num_transitions:>12,} {explored - started:>10.2f} {solved - explored:>9.2f} "
                f"{'(Storm skipped: raise --storm-max)':>40}"
            )
            continue
        theirs, build, check = storm_probability(graph)
        print(
            f"{graph.num_states:>9,} {graph.num_transitions:>12,} {explored - started:>10.2f} {solved - explored:>9.2f} "
            f"{build:>14.2f} {check:>14.2f} {(build + check) / our_total:>10.2f} "
            f"{graph.num_states / our_total:>10,.0f} {graph.num_transitions / our_total:>10,.0f} {ours == theirs}"
        )
        if ours != theirs:
            raise SystemExit(f"MISMATCH at {size} states: exactdice and Storm disagree")


def run_icepool_tug_of_war(reach=150):
    try:
        import icepool
    except ImportError:
        print("icepool not importable: icepool comparison skipped")
        return

    def step(position):
        if abs(position) >= reach:
            return position
        return (icepool.d6 - icepool.d6 + position).map(lambda x: max(-reach, min(reach, x)))

    started = time.perf_counter()
    final = icepool.Die([0]).map(step, repeat="inf")
    theirs = Fraction(final.probability(reach))
    icepool_seconds = time.perf_counter() - started
    started = time.perf_counter()
    solution = solve(TugOfWar(reach))
    ours = solution.absorption["win"]
    our_seconds = time.perf_counter() - started
    print(
        f"\nicepool tug of war (reach {reach}, {solution.states} states, one {solution.largest_component}-state cycle)"
    )
    print(
        f"exactdice {our_seconds:.2f} s, icepool {icepool_seconds:.2f} s, ratio icepool/ours "
        f"{icepool_seconds / our_seconds:.2f}, identical: {ours == theirs}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="also 10^6 states")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--storm-max", type=int, default=20_000, help="largest chain handed to Storm")
    args = parser.parse_args(argv)
    sizes = args.sizes + ([1_000_000] if args.big else [])
    run_storm_table(sizes, storm_max=args.storm_max)
    run_storm_table([size for size in sizes if size <= 10_000], decision_every=9)
    run_icepool_tug_of_war()


if __name__ == "__main__":
    main()
