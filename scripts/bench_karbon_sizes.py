"""How large fixed-policy Karbon contests get: states, transitions, digits, time and memory.

Run: python scripts/bench_karbon_sizes.py [--cases A,C,W,P ...] [--corners] [--timeout S] [--memory-gib G]
Each case runs in a fresh process so the peak memory (ru_maxrss) is its own; a case
stops at the time limit (``--timeout`` seconds) or the memory limit (``--memory-gib``,
the address-space limit of the child, each exploring worker's too) and is reported as
such; the product's own memory budget ($EXACTDICE_MAX_MEMORY) is set to 60% of that
limit unless given, so a row past it reads as the product's message, not an allocation
failure. CPU seconds include the exploring worker processes (`exactdice.markov.explore`;
``EXACTDICE_EXPLORE_WORKERS=0`` explores in one process), and their peak is a column.
Default cases: the corners of A, C <= 5, W <= 5, P <= 2. ``--corners`` adds the 16
corners of the rules' whole range, A 1-6 x C 1-8 x W 1-7 x P 0-4.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

DEFAULT_CASES = ["3,3,3,1", "4,3,3,1", "5,5,3,1", "5,5,5,0", "5,5,5,2", "1,5,5,2", "5,1,5,2", "3,3,5,2"]
RANGE_CORNERS = [f"{a},{c},{w},{p}" for a in (1, 6) for c in (1, 8) for w in (1, 7) for p in (0, 4)]

_CHILD = r"""
import json, os, resource, sys, time
limit = int(float(sys.argv[2]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
os.environ.setdefault("EXACTDICE_MAX_MEMORY", str(int(limit * 0.6)))
from exactdice.karbon import ContestSetup, contest_odds
a, c, w, p = map(int, sys.argv[1].split(","))
before = resource.getrusage(resource.RUSAGE_SELF)
began = time.perf_counter()
try:
    result = contest_odds(ContestSetup(ability=a, challenge=c, consequence=w, peril=p), progress=False)
except MemoryError:
    print(json.dumps({"memory": True, "seconds": round(time.perf_counter() - began, 1)}))
    sys.exit(0)
seconds = time.perf_counter() - began
usage = resource.getrusage(resource.RUSAGE_SELF)
workers = resource.getrusage(resource.RUSAGE_CHILDREN)  # the exploring workers, ended by now
peak = usage.ru_maxrss / 1024 / 1024
print(json.dumps({"case": sys.argv[1], "states": result.states, "transitions": result.transitions,
                  "digits": max(len(str(result.win.numerator)), len(str(result.win.denominator))),
                  "seconds": round(seconds, 1),
                  "cpu_seconds": round(usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
                                       + workers.ru_utime + workers.ru_stime, 1),
                  "peak_gib": round(peak, 2), "worker_peak_gib": round(workers.ru_maxrss / 1024 / 1024, 2),
                  "win": float(result.win), "draws": [str(result.player_draw), str(result.narrator_draw)]}))
"""


def _load() -> str:
    """The one-minute load average as the case ends (the machine may be shared)."""
    return f"{os.getloadavg()[0]:.1f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=DEFAULT_CASES, help="A,C,W,P tuples")
    parser.add_argument("--corners", action="store_true", help="add the 16 corners of A 1-6 x C 1-8 x W 1-7 x P 0-4")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per case")
    parser.add_argument("--memory-gib", type=float, default=6.0, help="address-space limit per case")
    args = parser.parse_args(argv)
    cases = args.cases + (RANGE_CORNERS if args.corners else [])
    print(
        "| A | C | W | P | states | transitions | digits of P(win) | seconds | CPU s | load | peak GiB | worker peak GiB | P(win) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in cases:
        a, c, w, p = case.split(",")
        try:
            output = subprocess.run(
                [sys.executable, "-c", _CHILD, case, str(args.memory_gib)],
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
        except subprocess.TimeoutExpired:
            print(f"| {a} | {c} | {w} | {p} | | | | > {args.timeout} | | {_load()} | | | |", flush=True)
            continue
        if output.returncode:
            print(f"| {a} | {c} | {w} | {p} | failed: {output.stderr.strip().splitlines()[-1]} |", flush=True)
            continue
        row = json.loads(output.stdout)
        if row.get("memory"):
            print(
                f"| {a} | {c} | {w} | {p} | | | | stopped at {row['seconds']} | | {_load()} | > {args.memory_gib} | | |",
                flush=True,
            )
            continue
        print(
            f"| {a} | {c} | {w} | {p} | {row['states']:,} | {row['transitions']:,} | {row['digits']:,} | "
            f"{row['seconds']} | {row['cpu_seconds']} | {_load()} | {row['peak_gib']} | {row['worker_peak_gib'] or ''} | "
            f"{row['win']:.6f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
