"""Benchmark: one Chronica contest in exactdice and in icepool (same exact answers).

The contest: d12, d10, d10, d8, d6, d4 against d12, d12, d8, d8, d6, d6. icepool's
idiomatic tool is a `MultisetEvaluator` walking both pools' outcomes from the top; ours
computes P(win), P(tie) and the success dice with their sizes (timed also with the
concession dice), theirs P(win), P(tie) and the success dice count. The answers they
share are compared exactly; the time ratio is exactdice (no concessions) / icepool.

Run: ``python scripts/bench_chronica_peers.py`` (prints one line per tool and the ratio;
skips icepool with a printed line when it is not installed).
"""

from __future__ import annotations

import time
from fractions import Fraction

from exactdice.chronica.contest import solve_contest

PLAYER = (12, 10, 10, 8, 6, 4)
OPPOSITION = (12, 12, 8, 8, 6, 6)


def cpu_time(function, repeats: int = 5) -> tuple[float, object]:
    """Best CPU time over ``repeats`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        best = min(best, time.process_time() - start)
    return best, result


def exactdice_answer(concessions: bool = False):
    result = solve_contest([(PLAYER,), (OPPOSITION,)], concessions=concessions)
    return {
        "win": result.win,
        "tie": result.tie,
        "successes": {(w, n): p for w, table in result.successes.items() for n, p in table.items()},
    }


def icepool_answer():
    """The contest as an icepool MultisetEvaluator (highest outcomes first)."""
    import icepool

    class ChronicaContest(icepool.MultisetEvaluator):
        # state: None while tied; then (winner, success dice so far, done)
        def next_state(self, state, order, outcome, player, opposition):
            if order != icepool.Order.Descending:
                raise icepool.UnsupportedOrder()
            if state is None:
                if player == opposition:  # every die at this face is discarded in ties
                    return None
                winner = 0 if player > opposition else 1
                return (winner, abs(player - opposition), False)
            winner, successes, done = state
            if done:
                return state
            mine, theirs = (player, opposition) if winner == 0 else (opposition, player)
            if theirs:
                return (winner, successes, True)
            return (winner, successes + mine, False)

        def final_outcome(self, final_state, order, outcomes, *sizes):
            if final_state is None:
                return (-1, 0)
            return (final_state[0], final_state[1])

    die = {size: icepool.d(size) for size in set(PLAYER + OPPOSITION)}
    player = icepool.Pool([die[s] for s in PLAYER])
    opposition = icepool.Pool([die[s] for s in OPPOSITION])
    outcome = ChronicaContest().evaluate(player, opposition)
    total = outcome.denominator()
    probabilities = {key: Fraction(outcome.quantity(key), total) for key in outcome.outcomes()}
    win = tuple(sum(p for (w, _), p in probabilities.items() if w == side) for side in (0, 1))
    return {
        "win": win,
        "tie": probabilities.get((-1, 0), Fraction(0)),
        "successes": {key: p for key, p in probabilities.items() if key[0] != -1},
    }


def main() -> int:
    full_time, _ = cpu_time(lambda: exactdice_answer(concessions=True))
    ours_time, ours = cpu_time(exactdice_answer)
    print(
        f"exactdice: {ours_time * 1000:.1f} ms CPU (win, tie, success dice and their sizes); "
        f"{full_time * 1000:.1f} ms with concessions too"
    )
    try:
        import icepool  # noqa: F401
    except ImportError:
        print("icepool: not installed, skipped (pip install 'icepool>=2.1,<2.2')")
        return 0
    theirs_time, theirs = cpu_time(icepool_answer)
    print(f"icepool:   {theirs_time * 1000:.1f} ms CPU (MultisetEvaluator: win, tie, success dice count)")
    same = ours["win"] == theirs["win"] and ours["tie"] == theirs["tie"] and ours["successes"] == theirs["successes"]
    print(f"identical exact answers: {same}")
    print(f"time ratio exactdice / icepool: {ours_time / theirs_time:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
