"""The solver's bars reported as data (`exactdice.progress.solver_bars`) under memory pressure."""

from __future__ import annotations


def test_a_bar_left_half_made_by_a_failed_allocation_does_not_break_the_others():
    # tqdm registers a bar before making it: one whose making ran out of memory stays in
    # its registry without a file, and the sink must pass over it (it raised an
    # AttributeError in a worker past its memory cap, hiding the memory message)
    from tqdm import tqdm

    from exactdice.progress import solver_bars

    half_made = tqdm.__new__(tqdm)
    seen = []
    try:
        with solver_bars(seen.append):
            bar = tqdm(total=10, desc="solving", unit="states", mininterval=0)
            bar.update(4)
            bar.close()
    finally:
        tqdm._instances.discard(half_made)
    assert seen and seen[-1].stage == "solving" and seen[-1].done == 4 and seen[-1].total == 10
