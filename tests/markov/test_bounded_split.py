"""A bounded search split among worker processes at a "max" root (`exactdice.markov.bounded_split`)."""

import os
from fractions import Fraction

import pytest

from exactdice.errors import InputError, InternalError
from exactdice.markov.bounded import BoundedSolver, BoundsView
from exactdice.markov.bounded_split import split_bounded_run
from exactdice.markov.model import Decision
from exactdice.markov.synthetic import GamblersRuin
from exactdice.processes import fork_supported

needs_fork = pytest.mark.skipif(not fork_supported(), reason="the searches run in forked worker processes")
GOAL = 5


class PickAStart(GamblersRuin):
    """The "max" side picks where a fair gambler's ruin on 0..GOAL starts (one of
    ``starts``): worth max(starts) / GOAL. Every part's root is named "root"."""

    def __init__(self, starts):
        super().__init__(goal=GOAL, start=None, up=1, down=1)
        self.starts = starts

    def initial_state(self):
        return "root"

    def expand(self, state):
        if state == "root":
            return Decision("max", tuple((str(start), start, None) for start in self.starts))
        return super().expand(state)


@pytest.mark.parametrize("in_processes", [False, pytest.param(True, marks=needs_fork)])
def test_joined_bounds_contain_the_best_parts_value_and_close(in_processes):
    parts = [PickAStart([1, 2]), PickAStart([3]), PickAStart([4, 1])]
    found, best = split_bounded_run(parts, BoundedSolver, precision=1e-6, root="root", in_processes=in_processes)
    assert found.stopped == "precision" and best == 2
    assert found.lower <= Fraction(4, 5) <= Fraction(found.upper) and found.gap <= 1e-6
    assert found.strategy["root"] == "4"  # the best part's choice
    view = found.solver
    assert isinstance(view, BoundsView)
    # the root's name is every part's: it holds the joined bounds and no part's decision
    assert view.bounds_of("root") == (found.lower, found.upper) and view.decision_bounds("root") is None
    low, high = view.bounds_of(2)  # a state below the first part's root
    assert low <= Fraction(2, 5) <= Fraction(high)
    assert found.expanded > 3 and found.history[-1][1:3] == (found.lower, found.upper)


def test_a_part_that_cannot_change_the_gap_stops_with_its_own_gap_open():
    """A part whose upper bound is within the precision of the best lower bound found
    stops at once: nothing it could still find changes the root's gap by more. (Run one
    part after the other here, so the second sees the first's bounds from its start.)"""
    strong, weak = PickAStart([GOAL]), GamblersRuin(goal=10**6, start=10**5, up=1, down=1)  # 1 and 0.1
    found, best = split_bounded_run([strong, weak], BoundedSolver, precision=1e-3, in_processes=False)
    assert best == 0 and found.stopped == "precision" and (found.lower, found.upper) == (1, 1)
    assert found.parts[1]["stopped"] == "precision" and found.parts[1]["expanded"] == 0
    assert found.parts[1]["upper"] - found.parts[1]["lower"] == 1  # its own gap: wide open


@needs_fork
def test_a_workers_error_is_raised_here():
    def failing(model):
        raise InputError("payoff", "a bad payoff, in the worker")

    with pytest.raises(InputError, match="a bad payoff, in the worker"):
        split_bounded_run([PickAStart([1]), PickAStart([2])], failing, precision=1e-3)


@needs_fork
def test_a_worker_that_dies_is_reported_not_waited_for():
    def dying(model):
        os._exit(3)

    with pytest.raises(InternalError, match="exit code 3"):
        split_bounded_run([PickAStart([1]), PickAStart([2])], dying, precision=1e-3)


@needs_fork
def test_ctrl_c_here_stops_every_worker_with_sound_bounds():
    """The workers ignore SIGINT; a KeyboardInterrupt in this process (here: raised by the
    progress report) stops them at their next report, with the bounds they reached."""
    reports = []

    def progress(lower, upper, expanded, seconds):
        reports.append(upper - lower)
        if len(reports) == 2:
            raise KeyboardInterrupt

    far = [GamblersRuin(goal=100_000, start=50_000, up=1, down=1), GamblersRuin(goal=100_000, start=1, up=1, down=1)]
    found, best = split_bounded_run(far, BoundedSolver, precision=1e-12, progress=progress)
    assert found.stopped == "interrupted" and best in (0, 1)
    assert found.lower <= 0.5 <= found.upper
    assert len(reports) >= 3  # reports go on until every worker has stopped, then the final one
