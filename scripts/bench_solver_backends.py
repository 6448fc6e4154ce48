"""Measure exact-arithmetic backends on contest-shaped chains (why the solver uses
fraction-free gmpy2 integers).

Each backend computes the win probability of the same explored chain, components
sinks first, cycles by elimination in that backend's rationals; all must agree.
Run: python scripts/bench_solver_backends.py [--sizes 1000 10000 100000] [--budget 60]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import gmpy2
import flint

from exactdice.markov import explore, solve
from exactdice.markov.graph import CHANCE, TERMINAL
from exactdice.markov.synthetic import ContestChain

__all__ = ["win_probability", "BACKENDS", "main"]

BACKENDS = {
    "fractions.Fraction": (Fraction, lambda p, q: Fraction(p, q)),
    "gmpy2.mpq": (gmpy2.mpq, lambda p, q: gmpy2.mpq(p, q)),
    "flint.fmpq": (flint.fmpq, lambda p, q: flint.fmpq(p, q)),
}


def win_probability(graph, make_ratio, zero, one):
    """Win probability with plain rational adds (one gcd per operation)."""
    values = [None] * graph.num_states
    offsets, targets, weights = graph.offsets, graph.targets, graph.weights
    for component in graph.strongly_connected_components():
        members = {node: i for i, node in enumerate(component)}
        size = len(component)
        rows = []
        for node in component:
            row = [zero] * (size + 1)
            row[members[node]] = one
            if graph.kind[node] == TERMINAL:
                row[size] = one if graph.data[node] == 0 else zero
            elif graph.kind[node] == CHANCE:
                total = graph.data[node]
                for edge in range(offsets[node], offsets[node + 1]):
                    probability = make_ratio(weights[edge], total)
                    target = targets[edge]
                    if target in members:
                        row[members[target]] -= probability
                    else:
                        row[size] += probability * values[target]
            rows.append(row)
        for col in range(size):  # Gauss-Jordan (components are tiny)
            pivot = next(r for r in range(col, size) if rows[r][col] != 0)
            rows[col], rows[pivot] = rows[pivot], rows[col]
            inverse = one / rows[col][col]
            rows[col] = [value * inverse for value in rows[col]]
            for r in range(size):
                if r != col and rows[r][col] != 0:
                    factor = rows[r][col]
                    rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
        for node in component:
            values[node] = rows[members[node]][size]
    return values[graph.initial]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--budget", type=float, default=60.0, help="skip a backend at larger sizes once it took longer")
    args = parser.parse_args(argv)
    slow = set()
    print(f"{'states':>8} {'transitions':>12} {'backend':>34} {'seconds':>9} digits")
    for size in args.sizes:
        graph = explore(ContestChain(size))
        reference = None
        for name, (kind, make_ratio) in BACKENDS.items():
            if name in slow:
                print(f"{size:>8,} {graph.num_transitions:>12,} {name:>34} {'skipped':>9}")
                continue
            started = time.perf_counter()
            value = win_probability(graph, make_ratio, kind(0), kind(1))
            seconds = time.perf_counter() - started
            value = (
                Fraction(int(value.numerator), int(value.denominator))
                if name != "flint.fmpq"
                else Fraction(int(value.p), int(value.q))
            )
            reference = reference or value
            assert value == reference, name
            print(f"{size:>8,} {graph.num_transitions:>12,} {name:>34} {seconds:>9.2f} {len(str(value.denominator))}")
            if seconds > args.budget:
                slow.add(name)
        started = time.perf_counter()
        ours = solve(graph)
        seconds = time.perf_counter() - started
        assert reference is None or ours.absorption["win"] == reference
        print(
            f"{size:>8,} {graph.num_transitions:>12,} {'exactdice fraction-free mpz':>34} {seconds:>9.2f} "
            f"{len(str(ours.absorption['win'].denominator))}  (6 quantities: outcomes, never, steps, rewards)"
        )


if __name__ == "__main__":
    main()
