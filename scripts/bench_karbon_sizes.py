"""How large fixed-policy Karbon contests get: states, transitions, digits, time and memory.

Run: python scripts/bench_karbon_sizes.py [--cases A,C,W,P ...]
Each case runs in a fresh process so the peak memory (ru_maxrss) is its own.
Default cases: the corners of A, C <= 5, W <= 5, P <= 2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

DEFAULT_CASES = ["3,3,3,1", "4,3,3,1", "5,5,3,1", "5,5,5,0", "5,5,5,2", "1,5,5,2", "5,1,5,2", "3,3,5,2"]

_CHILD = r"""
import json, resource, sys, time
from exactdice.karbon import ContestSetup, contest_odds
a, c, w, p = map(int, sys.argv[1].split(","))
began = time.perf_counter()
result = contest_odds(ContestSetup(ability=a, challenge=c, consequence=w, peril=p), progress=False)
seconds = time.perf_counter() - began
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
print(json.dumps({"case": sys.argv[1], "states": result.states, "transitions": result.transitions,
                  "digits": max(len(str(result.win.numerator)), len(str(result.win.denominator))),
                  "seconds": round(seconds, 1), "peak_gib": round(peak, 2),
                  "win": float(result.win), "draws": [str(result.player_draw), str(result.narrator_draw)]}))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=DEFAULT_CASES, help="A,C,W,P tuples")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per case")
    args = parser.parse_args(argv)
    print("| A | C | W | P | states | transitions | digits of P(win) | seconds | peak GiB | P(win) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in args.cases:
        a, c, w, p = case.split(",")
        try:
            output = subprocess.run([sys.executable, "-c", _CHILD, case], capture_output=True, text=True,
                                    timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"| {a} | {c} | {w} | {p} | | | | > {args.timeout} | | |", flush=True)
            continue
        if output.returncode:
            print(f"| {a} | {c} | {w} | {p} | failed: {output.stderr.strip().splitlines()[-1]} |", flush=True)
            continue
        row = json.loads(output.stdout)
        print(f"| {a} | {c} | {w} | {p} | {row['states']:,} | {row['transitions']:,} | {row['digits']:,} | "
              f"{row['seconds']} | {row['peak_gib']} | {row['win']:.6f} |", flush=True)


if __name__ == "__main__":
    main()
