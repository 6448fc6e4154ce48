"""Certified bounds on optimal play (`exactdice.karbon.bounds`): the gap against time.

Run: python scripts/bench_karbon_bounds.py [--seconds S] [--precision EPS] [--case NAME ...]
         [--narrator fixed|optimal ...] [--certify-states N] [--certify-seconds S]
         [--states N] [--code DIR ...]

With ``--states N`` the search stops after N states explored instead of at a time: the
search is seeded, so two versions of the code that only differ in speed do the same work,
and with ``--code DIR`` given twice (each a checkout of the project) they run side by side
in one invocation; compare their CPU seconds.

Each case and narrator runs in a fresh process (peak memory is that process's maxrss).
Printed per run: the gap at a few times, then the final certified lower bound (the
returned strategy's exact value where its game fits), the upper bound, states explored
(expanded) and touched, states per second, end components, the time of the exact check,
wall and CPU seconds (worker processes included: with two or more cores the player's draws
are searched in parallel, `exactdice.markov.bounded_split`; `EXACTDICE_SOLVE_WORKERS=0` runs
in one process), and the peak memory. The machine's load average is printed first (other
work shares it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASES = {
    "A1vC1-W1P0": dict(ability=1, challenge=1, consequence=1, peril=0),
    "A2vC2-W2P1": dict(ability=2, challenge=2, consequence=2, peril=1),
    "A3vC3-W3P1": dict(ability=3, challenge=3, consequence=3, peril=1),
}

_CHILD = r"""
import json, resource, sys, time
from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy
from exactdice.karbon.bounds import bounded_odds
setup_args, narrator, seconds, precision, certify_states, certify_seconds, states = json.loads(sys.argv[1])
marks = []
def progress(lower, upper, explored, elapsed):
    if not marks or int(elapsed / 10) != int(marks[-1][0] / 10):
        print("MARK", json.dumps((round(elapsed, 1), lower, upper, explored)), flush=True)
    marks.append((round(elapsed, 1), lower, upper, explored))
result = bounded_odds(ContestSetup(**setup_args), Rules(), PlayerPolicy(kind="optimal"),
                      NarratorPolicy(kind=narrator), precision=precision, max_seconds=seconds,
                      progress=progress, max_states=states or 10_000_000, certify_states=certify_states,
                      certify_seconds=certify_seconds)
print(json.dumps({
    "marks": marks, "lower": float(result.lower), "upper": result.upper, "gap": result.gap,
    "lower_kind": result.lower_kind,
    "lower_method": {"exact": "exact",
                     "strategy-float": "float, the strategy's own value: its exact solve passed the check's budget",
                     "search-float": "float, the search's own: the strategy's game passed the check's budget"}[
        result.lower_kind],
    "explored": result.explored, "touched": result.touched,
    "bounded_seconds": result.bounded_seconds, "certify_seconds": result.certify_seconds,
    "seconds": result.seconds, "stopped": result.stopped, "end_components": result.end_components,
    "fixed_value": float(result.fixed_value) if result.fixed_value is not None else None,
    "strategy_states": result.strategy_states, "sweeps": result.solver.sweeps,
    "cpu_seconds": sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
                       for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)),
    "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "workers_peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "package": __import__("os").path.dirname(__import__("exactdice").__file__)}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--precision", type=float, default=1e-3)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--narrator", action="append", choices=["fixed", "optimal"])
    parser.add_argument(
        "--certify-states",
        type=int,
        default=1_000_000,
        help="state budget of the exact check of the strategy (past it: the float lower bound)",
    )
    parser.add_argument(
        "--certify-seconds",
        type=float,
        help="time budget of the exact check's exploring and solving (default half of --seconds)",
    )
    parser.add_argument(
        "--states", type=int, help="stop the search after this many states explored (same work in any code version)"
    )
    parser.add_argument(
        "--code",
        action="append",
        metavar="DIR",
        help="run with the exactdice package of this checkout (repeat to compare versions)",
    )
    args = parser.parse_args()
    if args.states is not None and args.states < 1:
        parser.error(f"--states must be >= 1, got {args.states}")
    for directory in args.code or []:
        if not os.path.isfile(os.path.join(directory, "exactdice", "__init__.py")):
            parser.error(f"--code {directory}: no exactdice package there (give a checkout of the project)")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    runs = [
        (name, narrator, code)
        for name in args.case or ["A1vC1-W1P0", "A3vC3-W3P1"]
        for narrator in args.narrator or ["fixed", "optimal"]
        for code in args.code or [None]
    ]
    for name, narrator, code in runs:
        _run(name, narrator, code, args)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def _run(name, narrator, code, args):
    """One case against one narrator in a fresh process (with the package of ``code`` if given)."""
    certify_seconds = args.certify_seconds if args.certify_seconds is not None else args.seconds / 2
    payload = json.dumps(
        [CASES[name], narrator, args.seconds, args.precision, args.certify_states, certify_seconds, args.states]
    )
    print(
        f"{name}, optimal player v {narrator} narrator (default pool), precision {args.precision}, "
        f"limit {args.seconds:g} s"
        + (f" or {args.states:,} states" if args.states else "")
        + (f", code {code}" if code else "")
        + ":",
        flush=True,
    )
    environment = dict(os.environ)
    if code:
        environment["PYTHONPATH"] = os.path.abspath(code)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, payload],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=code or None,
    )
    last = None
    for line in child.stdout:
        if line.startswith("MARK "):
            elapsed, lower, upper, explored = json.loads(line[5:])
            print(
                f"  {elapsed:7.1f} s  gap {upper - lower:.5f}  [{lower:.5f}, {upper:.5f}]  explored {explored:,}",
                flush=True,
            )
        else:
            last = line
    if child.wait() != 0 or last is None:
        print(f"  failed\n{child.stderr.read()[-2000:]}", flush=True)
        return
    run = json.loads(last)
    marks = run["marks"]
    elapsed, lower, upper, explored = marks[-1]
    print(f"  {elapsed:7.1f} s  gap {upper - lower:.5f}  [{lower:.5f}, {upper:.5f}]  explored {explored:,}")
    rate = run["explored"] / max(run["bounded_seconds"], 1e-9)
    print(
        f"  final: [{run['lower']:.6f} ({run['lower_method']}), {run['upper']:.6f}], gap {run['gap']:.5f}, "
        f"stopped: {run['stopped']}; fixed preferences {run['fixed_value']}; explored {run['explored']:,} "
        f"(touched {run['touched']:,}), {rate:,.0f} states/s; end components {run['end_components']}; "
        f"sweeps {run['sweeps']}; "
        f"bounds {run['bounded_seconds']:.1f} s, exact check {run['certify_seconds']:.1f} s "
        + (
            f"over {run['strategy_states']:,} states"
            if run["lower_kind"] == "exact"
            else f"(its solve stopped at its budget, then the float value over {run['strategy_states']:,} states)"
            if run["strategy_states"] is not None
            else "(stopped at its budget)"
        )
        + f"; total {run['seconds']:.1f} s wall, {run['cpu_seconds']:.1f} s CPU with its worker processes "
        f"(CPU against wall shows the cores it used and the load); peak {run['peak_mib']:,.0f} MiB "
        f"(+ {run['workers_peak_mib']:,.0f} MiB the largest worker); "
        f"package {run['package']}",
        flush=True,
    )


if __name__ == "__main__":
    main()
