"""The compiled Karbon walk and the certified float core, measured: the figures of the
engine's goal table, in one run on this machine, each case in a process of its own (wall
seconds and peak memory), answers checked where two paths give them.

Run: python scripts/bench_compiled.py [--rows explore,memory,float,exact,optimal,peers]
     [--quick] [--json FILE]

Rows:
  explore   states a second, the compiled walk against the Python walk (one process each,
            the fastest of --repeats; the Python walk on its first --python-states states
            where the graph is larger)
  memory    bytes a state and a transition the explored graph holds (caches dropped)
  float     certified floats (--float) of the large contests: wall seconds, peak memory
  exact     exact answers of the large contests
  optimal   certified bounds for optimal play, with no flags but the policies, and the
            gap reached in 10 minutes on the default pool
  peers     scripts/bench_karbon_peers.py --large (Storm 2.0 on the same graphs)

``--quick`` runs the rows on the smaller cases only (minutes, not an hour).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

EXPLORE_CASES = [
    ("A5 v C5, W3 P1", "dict(ability=5, challenge=5, consequence=3, peril=1)", "''", "''"),
    (
        "risk=always A3 v C2, W2 P0, F2, Training",
        "dict(ability=3, challenge=2, consequence=2, peril=0, fortune=2, training=True)",
        "'risk=always'",
        "''",
    ),
    (
        "optimal player: d6 v d8, no pool, W4 P1",
        "dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={}, reserve={}, consequence=4, peril=1)",
        "'optimal'",
        "''",
    ),
]

# (name, CLI flags, quick)
FLOAT_CASES = [
    ("A5 v C5, W5 P2", "-a 5 -c 5 -w 5 -p 2", True),
    (
        "risk=always A3 v C2, W2 P0, F2, Training",
        "-a 3 -c 2 -w 2 -p 0 --fortune 2 --training --player-policy risk=always",
        True,
    ),
    ("risk=always A3 v C3, W3 P1", "-a 3 -c 3 -w 3 -p 1 --player-policy risk=always --max-states 20000000", False),
    ("A6 v C8, W7 P0", "-a 6 -c 8 -w 7 -p 0", False),
    ("A6 v C8, W7 P4", "-a 6 -c 8 -w 7 -p 4", False),
]
EXACT_CASES = [
    ("A5 v C5, W3 P1", "-a 5 -c 5 -w 3 -p 1", True),
    (
        "risk=always A3 v C2, W2 P0, F2, Training",
        "-a 3 -c 2 -w 2 -p 0 --fortune 2 --training --player-policy risk=always",
        False,
    ),
    ("A6 v C8, W7 P0", "-a 6 -c 8 -w 7 -p 0", False),
    ("A6 v C8, W7 P4", "-a 6 -c 8 -w 7 -p 4", False),
]
OPTIMAL_CASES = [
    (
        "both sides optimal, A1 v C1, W1 P0, no flags but the policies",
        "-a 1 -c 1 -w 1 -p 0 --player-policy optimal --narrator-policy optimal",
        True,
    ),
    (
        "optimal player, A2 v C2, W2 P1, 10 min",
        "-a 2 -c 2 -w 2 -p 1 --player-policy optimal --bounds --max-seconds 600",
        False,
    ),
    (
        "both sides optimal, A2 v C2, W2 P1, 10 min",
        "-a 2 -c 2 -w 2 -p 1 --player-policy optimal --narrator-policy optimal --bounds --max-seconds 600",
        False,
    ),
]

_EXPLORE_PROGRAM = """
import json, sys, time
from exactdice.karbon import ContestSetup, NarratorPolicy, PlayerPolicy, Rules
from exactdice.karbon.draws import DrawSearchModel
from exactdice.karbon.model import KarbonModel
from exactdice.karbon.policies import parse_player_policy, parse_narrator_policy
from exactdice.markov import explore
setup = ContestSetup(**{setup})
player, narrator = parse_player_policy({player} or None), parse_narrator_policy({narrator} or None)
if setup.player_dice is None and player.kind == "optimal":
    model = DrawSearchModel(setup, Rules(), player, narrator)
else:
    start = setup.start(player, narrator)
    model = KarbonModel(start.sizes, start.situation(), Rules(), player, narrator)
began = time.perf_counter()
try:
    graph = explore(model, max_states={limit}, workers=0, progress=False)
    states, transitions, whole = graph.num_states, graph.num_transitions, True
except Exception as error:
    if getattr(error, "field", None) != "max_states":
        raise
    states, transitions, whole = {limit}, None, False
seconds = time.perf_counter() - began
memory = None
owner = getattr(graph, "owner", None) if whole else None
if owner is not None:
    owner.drop_caches()
    memory = owner.memory_bytes()
print(json.dumps(dict(states=states, transitions=transitions, seconds=seconds, whole=whole, memory=memory)))
"""


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def _timed(command: list[str], env=None, timeout=7200) -> dict:
    """Run a command in its own process: wall seconds, peak memory (GiB), exit code, output."""
    env = {**os.environ, **(env or {})}
    wrapped = ["/usr/bin/time", "-f", "%e %M"] + command
    began = time.perf_counter()
    try:
        done = subprocess.run(wrapped, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(seconds=time.perf_counter() - began, gib=None, code="timeout", out="", err="")
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    try:
        wall, kib = last.split()
        seconds, gib = float(wall), int(kib) / 2**20
    except ValueError:
        seconds, gib = time.perf_counter() - began, None
    return dict(seconds=seconds, gib=gib, code=done.returncode, out=done.stdout, err=done.stderr)


def _explored(setup, player, narrator, walk, limit, repeats) -> dict:
    """The fastest of ``repeats`` explorations, each in a process of its own."""
    program = _EXPLORE_PROGRAM.format(setup=setup, player=player, narrator=narrator, limit=limit)
    best: dict = {}
    for _ in range(repeats):
        run = _timed([PYTHON, "-c", program], env={"EXACTDICE_WALK": walk})
        if run["code"] != 0:
            return {"error": run["err"][-300:]}
        figures = json.loads(run["out"].strip().splitlines()[-1])
        if not best or figures["seconds"] < best["seconds"]:
            best = figures
    return best


def explore_rows(quick: bool, python_states: int, repeats: int) -> list[dict]:
    rows = []
    for name, setup, player, narrator in EXPLORE_CASES[:2] if quick else EXPLORE_CASES:
        # the same states on both walks (the first --python-states where the graph is larger),
        # then the compiled walk on the whole graph
        figures = {
            label: _explored(setup, player, narrator, walk, limit, repeats)
            for label, walk, limit in (
                ("compiled", "compiled", python_states),
                ("python", "python", python_states),
                ("whole", "compiled", 50_000_000),
            )
        }
        compiled, python, whole = figures["compiled"], figures["python"], figures["whole"]
        ratio = None
        if "seconds" in compiled and "seconds" in python:
            ratio = (compiled["states"] / compiled["seconds"]) / (python["states"] / python["seconds"])
        rows.append(
            dict(row="explore", case=name, compiled=compiled, python=python, whole=whole, ratio=ratio, load=_load())
        )
        print(
            f"explore | {name} | {python.get('states', 0):,} states{'' if python.get('whole') else ' (a prefix)'}:"
            f" compiled {compiled.get('seconds', 0):.2f} s, python {python.get('seconds', 0):.2f} s"
            f" | {ratio and f'{ratio:.0f}x'} | whole graph compiled: {whole.get('states', 0):,} states in "
            f"{whole.get('seconds', 0):.1f} s | load {_load()}",
            flush=True,
        )
        compiled = whole
        if compiled.get("memory"):
            per_transition = 12
            per_state = (compiled["memory"] - per_transition * compiled["transitions"]) / compiled["states"]
            rows.append(dict(row="memory", case=name, bytes_per_state=per_state, bytes_per_transition=per_transition))
            print(f"memory | {name} | {per_state:.0f} B a state + {per_transition} B a transition", flush=True)
    return rows


def cli_rows(kind: str, cases, quick: bool) -> list[dict]:
    rows = []
    for name, flags, small in cases:
        if quick and not small:
            continue
        command = [PYTHON, "-m", "exactdice.cli.main", "karbon", "odds", *flags.split()]
        if kind == "float":
            command.append("--float")
        run = _timed(command + ["--json"])
        answer = {}
        if run["code"] == 0:
            answer = json.loads(run["out"])
        figure = dict(
            row=kind,
            case=name,
            seconds=run["seconds"],
            gib=run["gib"],
            code=run["code"],
            states=answer.get("states"),
            transitions=answer.get("transitions"),
            load=_load(),
        )
        if kind == "optimal" and answer:
            figure.update(
                lower=answer.get("lower"),
                upper=answer.get("upper"),
                gap=answer.get("gap"),
                explored=answer.get("explored"),
                touched=answer.get("touched"),
            )
        elif answer:
            figure.update(win=answer.get("decimal", answer).get("win"))
        rows.append(figure)
        extra = (
            f"gap {figure.get('gap')}"
            if kind == "optimal"
            else f"{figure['states'] or '?'} states, {figure['transitions'] or '?'} transitions"
        )
        print(
            f"{kind} | {name} | {run['seconds']:.1f} s | {run['gib'] or 0:.2f} GiB | exit {run['code']} | {extra} "
            f"| load {_load()}",
            flush=True,
        )
    return rows


def peers_rows() -> list[dict]:
    run = _timed([PYTHON, str(ROOT / "scripts" / "bench_karbon_peers.py"), "--large", "--repeat", "2"])
    print(run["out"], flush=True)
    return [dict(row="peers", table=run["out"], code=run["code"])]


def _at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        default="explore,float,exact,optimal,peers",
        help="comma-separated: explore (and memory), float, exact, optimal, peers",
    )
    parser.add_argument("--quick", action="store_true", help="only the smaller cases")
    parser.add_argument(
        "--python-states",
        type=int,
        default=200_000,
        help="the Python walk's states at most per case (a prefix of larger graphs)",
    )
    parser.add_argument(
        "--repeats",
        type=_at_least_one,
        default=3,
        help="explorations of each case and walk, the fastest kept (default 3)",
    )
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    options = parser.parse_args(argv)
    rows = set(options.rows.split(","))
    figures = []
    print(f"# Compiled walk and certified floats, {time.strftime('%Y-%m-%d')}, load {_load()}", flush=True)
    if "explore" in rows:
        figures += explore_rows(options.quick, options.python_states, options.repeats)
    if "float" in rows:
        figures += cli_rows("float", FLOAT_CASES, options.quick)
    if "exact" in rows:
        figures += cli_rows("exact", EXACT_CASES, options.quick)
    if "optimal" in rows:
        figures += cli_rows("optimal", OPTIMAL_CASES, options.quick)
    if "peers" in rows:
        figures += peers_rows()
    if options.json:
        options.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
