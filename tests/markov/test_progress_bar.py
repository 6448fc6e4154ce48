"""The exploring bar counts the states the limit counts, with the limit as its total."""

import tqdm

from exactdice.markov import explore
from exactdice.markov.synthetic import GamblersRuin


class RecordingBar:
    made = []

    def __init__(self, total=None, **options):
        self.total, self.n, self.closed = total, 0, False
        RecordingBar.made.append(self)

    def update(self, count):
        self.n += count

    def close(self):
        self.closed = True


def test_the_bar_total_is_the_limit_and_its_count_the_states_found(monkeypatch):
    monkeypatch.setattr(tqdm, "tqdm", RecordingBar)
    RecordingBar.made.clear()
    graph = explore(GamblersRuin(goal=3000, start=1500, up=1, down=1), max_states=5000, progress=True)
    (bar,) = RecordingBar.made
    assert bar.total == 5000
    assert bar.n == graph.num_states == 3001
    assert bar.closed


def test_the_bar_is_closed_before_the_state_limit_error_is_raised(monkeypatch):
    """Past ``max_states`` the error must not be printed on the bar's line."""
    import pytest

    from exactdice.errors import TooLargeError

    monkeypatch.setattr(tqdm, "tqdm", RecordingBar)
    RecordingBar.made.clear()
    with pytest.raises(TooLargeError):
        explore(GamblersRuin(goal=3000, start=1500, up=1, down=1), max_states=2000, progress=True)
    (bar,) = RecordingBar.made
    assert bar.closed


def test_the_exact_pass_bar_counts_every_state_by_either_path(monkeypatch):
    """A fixed chain's forward pass shows a "solving" bar up to the number of states,
    with the loops in this process or in a worker."""
    from exactdice.markov import loop_pool
    from exactdice.markov.forward import forward_pass
    from exactdice.markov.synthetic import ContestChain
    from exactdice.processes import fork_supported

    monkeypatch.setattr(tqdm, "tqdm", RecordingBar)
    monkeypatch.setattr(loop_pool, "MIN_TRANSITIONS", 0)
    monkeypatch.setattr(loop_pool, "MIN_LOOPS", 1)
    graph = explore(ContestChain(size=400, branches=10, seed=4), workers=0)
    for workers in (0, 1) if fork_supported() else (0,):
        RecordingBar.made.clear()
        forward_pass(graph, workers=workers, progress=True)
        (bar,) = RecordingBar.made
        assert bar.total == bar.n == graph.num_states and bar.closed
    RecordingBar.made.clear()
    forward_pass(graph, workers=0, progress=False)
    assert RecordingBar.made == []
