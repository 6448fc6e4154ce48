"""Karbon contests against Storm: the same explored chain (fixed policies, a DTMC) or MDP
(an optimal player against a fixed narrator, Pmax of winning) handed to Storm's exact
engine; identical rationals are checked and the time ratios printed, wall and CPU
seconds, with the load average (the machine may be shared: read the same-run ratios).

Run: python scripts/bench_karbon_peers.py [--large] [--before FILE] [--visits] [--repeat N]

``--visits`` also times, on each MDP's solved strategy, the two exact forward passes
that could give its odds and expectations: `exactdice.markov.forward` (one shared
denominator, what fixed chains use) and the solver's own (per-state denominators, what
optimal play uses), and checks they agree.

Every timing is the best of ``--repeat`` runs (default 2), after one warm-up solve of a
small contest (imports, FLINT), so one-time costs are not compared.

``--before FILE`` also solves every graph with another version of
``exactdice/markov/solver.py`` (say ``git show main:exactdice/markov/solver.py >
/tmp/solver_before.py``) in the same run, checks that every answer (odds, never-ends,
value, expectations, strategy) is identical and prints the speed-up.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
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
    (
        "optimal player: d8 v d8, pool d6, reserve d6, W2 P1",
        dict(player_dice={8: 1}, narrator_dice={8: 1}, pool={6: 1}, reserve={6: 1}, consequence=2, peril=1),
        "optimal",
    ),
    (
        "optimal player: d6 v d10, pool d4, reserve d4, W1 P1",
        dict(player_dice={6: 1}, narrator_dice={10: 1}, pool={4: 1}, reserve={4: 1}, consequence=1, peril=1),
        "optimal",
    ),
]
LARGE = [
    ("fixed A4 v C3, W3 P1", dict(ability=4, challenge=3, consequence=3, peril=1), "fixed"),
    (
        "optimal player: d6 v d8, no pool, no reserve, W4 P1",
        dict(player_dice={6: 1}, narrator_dice={8: 1}, pool={}, reserve={}, consequence=4, peril=1),
        "optimal",
    ),
]


def build_model(setup_kwargs, player_kind, ruleset):
    setup = ContestSetup(**setup_kwargs)
    player, narrator = PlayerPolicy(kind=player_kind), NarratorPolicy()
    if setup.player_dice is None and player_kind == "optimal":
        return DrawSearchModel(setup, ruleset, player, narrator)
    start = setup.start(player, narrator)
    return KarbonModel(start.sizes, start.situation(), ruleset, player, narrator)


def load_solver(path):
    """The ``solve`` function of another version of the solver module."""
    spec = importlib.util.spec_from_file_location("solver_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.solve


def timed(function, *args, repeat=1, **kwargs):
    """(result, wall s, CPU s), the best of ``repeat`` calls."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function(*args, **kwargs)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return result, best_wall, best_cpu


def compare_visit_passes(rows, graph, payoff, endless, repeat):
    """Append (states, forward.py s (CPU), solver's pass s (CPU), ratio) for an MDP."""
    from exactdice.markov.arithmetic import ExactArithmetic
    from exactdice.markov.forward import forward_pass
    from exactdice.markov.solver import _Solver

    numbers = ExactArithmetic()
    solver = _Solver(
        graph,
        numbers,
        [numbers.number(payoff.get(name, 0)) for name in graph.outcomes],
        numbers.number(endless),
        vectors=False,
    )
    solver.run(False)
    shared, shared_s, shared_cpu = timed(
        forward_pass, graph, solver.chosen_edge, solver.alive, solver.components, repeat=repeat
    )
    own, own_s, own_cpu = timed(solver.visits, repeat=repeat)
    same = own == (shared.absorption, shared.never_ends, shared.expected_steps, shared.expected_rewards)
    rows.append(
        f"| {graph.num_states:,} | {shared_s:.2f} ({shared_cpu:.2f}) | {own_s:.2f} ({own_cpu:.2f}) | "
        f"{shared_cpu / own_cpu:.1f}x | {'yes' if same else 'NO'} |"
    )


def answers(solution):
    return (
        solution.absorption,
        solution.never_ends,
        solution.value,
        solution.expected_steps,
        solution.expected_rewards,
        solution.strategy,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also A4 v C3 and a 287,000-state MDP (minutes)")
    parser.add_argument(
        "--before", type=Path, metavar="FILE", help="another version of exactdice/markov/solver.py to time side by side"
    )
    parser.add_argument(
        "--visits", action="store_true", help="also time both exact forward passes on each MDP's strategy"
    )
    parser.add_argument("--repeat", type=int, default=2, help="timings are the best of this many runs")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat: must be at least 1")
    try:
        from bench_markov_peers import storm_probability
        import stormpy  # noqa: F401
    except ImportError:
        print("karbon vs Storm: stormpy is not installed (pip install stormpy==2.0.0); skipped")
        return
    solve_before = load_solver(args.before) if args.before else None
    # Pmax [F "win"] is the win objective; the fixed chains are the same under either objective
    ruleset = Rules(objective="win")
    payoff, endless = payoffs(ruleset)
    warm_up = explore(build_model(CASES[-1][1], "optimal", ruleset), progress=False)
    for solver in (solve, solve_before) if solve_before else (solve,):
        solver(warm_up, payoff=payoff, nonterminating_payoff=endless, progress=False)
    storm_probability(warm_up, "win")
    print("## Karbon vs Storm 2.0 exact (identical rationals checked)\n")
    before_columns = "| before solve s (CPU) | before / now (CPU) |" if solve_before else "|"
    print(
        "| case | states | transitions | load | exactdice explore s | exactdice solve s (CPU) "
        f"{before_columns} Storm build + check s (CPU) | Storm / exactdice (explore + solve) "
        "| Storm / exactdice solve (CPU) | identical |"
    )
    print("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if solve_before else "") + "---:|---:|---:|---|")
    visit_rows = []
    for name, setup_kwargs, player_kind in CASES + (LARGE if args.large else []):
        model = build_model(setup_kwargs, player_kind, ruleset)
        graph, explore_s, _ = timed(explore, model, repeat=args.repeat, progress=False)
        kwargs = dict(payoff=payoff, nonterminating_payoff=endless, progress=False)
        same = True
        before = ""
        if solve_before:
            old, old_s, old_cpu = timed(solve_before, graph, repeat=args.repeat, **kwargs)
        solution, solve_s, solve_cpu = timed(solve, graph, repeat=args.repeat, **kwargs)
        if solve_before:
            same = answers(old) == answers(solution)
            before = f" {old_s:.2f} ({old_cpu:.2f}) | {old_s / solve_s:.1f}x ({old_cpu / solve_cpu:.1f}x) |"
        (storm_value, _, _), storm, storm_cpu = timed(storm_probability, graph, "win", repeat=args.repeat)
        same = same and storm_value == solution.absorption["win"]
        print(
            f"| {name} | {graph.num_states:,} | {graph.num_transitions:,} | {os.getloadavg()[0]:.1f} | "
            f"{explore_s:.2f} | {solve_s:.2f} ({solve_cpu:.2f}) |{before} {storm:.2f} ({storm_cpu:.2f}) | "
            f"{storm / (explore_s + solve_s):.1f}x | {storm / solve_s:.1f}x ({storm_cpu / solve_cpu:.1f}x) | "
            f"{'yes' if same else 'NO'} |",
            flush=True,
        )
        if args.visits and player_kind == "optimal":
            compare_visit_passes(visit_rows, graph, payoff, endless, args.repeat)
    if visit_rows:
        print("\n| MDP states | forward.py pass s (CPU) | solver's visits pass s (CPU) | CPU ratio | identical |")
        print("|---:|---:|---:|---:|---|")
        print("\n".join(visit_rows))


if __name__ == "__main__":
    main()
