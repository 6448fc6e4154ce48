"""exactdice against its peers, side by side in one run, with identical exact answers checked.

Sections:
  dice     exactdice vs icepool on the dice core (sums, keep-highest, medians, a Karbon hand)
  chronica exactdice vs icepool on a 6-dice-a-side Chronica contest (scripts/bench_chronica_peers.py)
  markov   exactdice vs Storm (and icepool) on exact Markov chains and MDPs
           (scripts/bench_markov_peers.py), including an exported Karbon chain

    python scripts/bench_peers.py [--sections dice,chronica,markov] [--repeat 5]

icepool (2.1.x) and stormpy (2.0.0) are benchmark-only dependencies: a section whose
peer is missing says so and skips it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def best_time(function, repeat):
    best, result = float("inf"), None
    for _ in range(repeat):
        began = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - began)
    return best, result


def as_fractions(probabilities):
    return {outcome: Fraction(p) for outcome, p in probabilities.items()}


def dice_rows():
    """(name, exactdice callable, icepool callable) each returning {outcome: Fraction}."""
    import icepool
    from exactdice import Pool, d
    from exactdice.karbon.dice import hand_roll

    def ours(make):
        return lambda: make().probabilities()

    def theirs(make):
        def run():
            die = make()
            return {o: Fraction(q, die.denominator()) for o, q in die.items()}

        return run

    def karbon_hand_ours():
        return hand_roll((3, 2, 2), (6, 8, 10)).map(lambda o: (o[0], sum(o[1:]))).probabilities()

    def karbon_hand_theirs():
        def classify(sides):
            hit, miss, turncoat = icepool.Vector((1, 0)), icepool.Vector((0, 0)), icepool.Vector((0, 1))
            return icepool.Die([hit] * 3 + [miss] * min(2, max(0, sides - 3)) + [turncoat] * max(0, sides - 5))

        hand = 3 @ classify(6) + 2 @ classify(8) + 2 @ classify(10)
        return {tuple(o): Fraction(q, hand.denominator()) for o, q in hand.items()}

    return [
        ("sum of 100d6", ours(lambda: d(6).sum_of(100)), theirs(lambda: 100 @ icepool.d6)),
        ("sum of 30d10", ours(lambda: d(10).sum_of(30)), theirs(lambda: 30 @ icepool.d10)),
        (
            "4d6 keep highest 3",
            ours(lambda: Pool([(d(6), 4)]).keep_highest(3)),
            theirs(lambda: icepool.d6.pool(4).highest(3).sum()),
        ),
        (
            "100d20 keep highest 10",
            ours(lambda: Pool([(d(20), 100)]).keep_highest(10)),
            theirs(lambda: icepool.d20.pool(100).highest(10).sum()),
        ),
        (
            "median of d6, d8, d10",
            ours(lambda: Pool([d(6), d(8), d(10)]).order_statistic(1)),
            theirs(lambda: icepool.Pool([icepool.d6, icepool.d8, icepool.d10]).middle(1).sum()),
        ),
        (
            "median of d4, d12, d12",
            ours(lambda: Pool([d(4), d(12), d(12)]).order_statistic(1)),
            theirs(lambda: icepool.Pool([icepool.d4, icepool.d12, icepool.d12]).middle(1).sum()),
        ),
        ("Karbon hand 3d6+2d8+2d10 (hits, turncoats)", karbon_hand_ours, karbon_hand_theirs),
    ]


def _time_one_cold(row: int, library: str):
    """Run one computation once in a fresh interpreter (no warm caches on either side)."""
    code = (
        "import sys, time, json; sys.path.insert(0, %r); import bench_peers as b; "
        "rows = b.dice_rows(); f = rows[%d][%d]; t = time.perf_counter(); r = f(); "
        "t = time.perf_counter() - t; "
        "print(json.dumps([t, sorted((repr(k), str(v)) for k, v in r.items())]))"
        % (str(HERE), row, 1 if library == "exactdice" else 2)
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    seconds, result = json.loads(output.stdout.strip().splitlines()[-1])
    return seconds, result


def run_dice(repeat):
    try:
        import icepool
    except ImportError:
        print("dice: icepool is not installed (pip install 'icepool>=2.1,<2.2'); skipped")
        return
    print(
        f"## Dice core: exactdice vs icepool {icepool.__version__} "
        f"(each call cold in a fresh interpreter, best of {repeat}, seconds)\n"
    )
    print("| computation | exactdice s | icepool s | icepool / exactdice | identical |")
    print("|---|---:|---:|---:|---|")
    for index, (name, _, _) in enumerate(dice_rows()):
        ours = [_time_one_cold(index, "exactdice") for _ in range(repeat)]
        theirs = [_time_one_cold(index, "icepool") for _ in range(repeat)]
        ours_time, theirs_time = min(t for t, _ in ours), min(t for t, _ in theirs)
        same = _normalise(ours[0][1]) == _normalise(theirs[0][1])
        print(
            f"| {name} | {ours_time:.5f} | {theirs_time:.5f} | {theirs_time / ours_time:.1f}x | "
            f"{'yes' if same else 'NO'} |"
        )
    print()


def _normalise(pairs):
    """Outcome reprs differ (icepool Vector vs tuple): compare by the sorted probabilities."""
    return sorted((key.replace("Vector", "").replace(" ", ""), value) for key, value in pairs)


def run_script(name, extra=()):
    script = HERE / name
    if not script.exists():
        print(f"{name}: not present; skipped")
        return
    subprocess.run([sys.executable, str(script), *extra], check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default="dice,chronica,markov")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    if "dice" in sections:
        run_dice(args.repeat)
    if "chronica" in sections:
        run_script("bench_chronica_peers.py")
    if "markov" in sections:
        run_script("bench_markov_peers.py")


if __name__ == "__main__":
    main()
