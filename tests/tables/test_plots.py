"""Heatmaps on a continuous colour scale with one metric per panel title; dist --plot."""

from __future__ import annotations

from fractions import Fraction

import pytest
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm

from exactdice.cli.main import cli
from exactdice.tables.grid import TableGrid
from exactdice.tables.plots import heatmap_png, panel_title


def karbon_like_grid():
    return TableGrid("Karbon P(win): Ability x Challenge", "A", "C", ["1", "2"], ["1", "2", "3"],
                     {"P(win)": [[Fraction(30, 100), Fraction(33, 100), Fraction(36, 100)]] * 2,
                      "P(tie)": [[Fraction(1, 2)] * 3] * 2,
                      "expected rounds": [[Fraction(7, 2), Fraction(4), None]] * 2},
                     probability_metrics=("P(win)", "P(tie)"))


def test_each_panel_is_titled_with_its_own_metric_and_the_scale_is_continuous(monkeypatch):
    titles, images = [], []
    original_title, original_imshow = Axes.set_title, Axes.imshow
    monkeypatch.setattr(Axes, "set_title", lambda self, text, *a, **k: (titles.append(text), original_title(self, text, *a, **k))[1])
    monkeypatch.setattr(Axes, "imshow", lambda self, data, *a, **k: (images.append(k), original_imshow(self, data, *a, **k))[1])
    assert heatmap_png([karbon_like_grid()])[:4] == b"\x89PNG"
    assert [title.splitlines()[0] for title in titles] == ["P(win)", "P(tie)", "expected rounds"]
    assert all("P(win)" not in title for title in titles[1:])  # no panel borrows the headline
    for options in images:
        assert not isinstance(options["norm"], BoundaryNorm)
    probability = images[0]["norm"]
    assert (probability.vmin, probability.vmax) == (0.0, 1.0)
    colours = [images[0]["cmap"](probability(x)) for x in (0.30, 0.33, 0.36)]
    assert len(set(colours)) == 3  # 30 %, 33 % and 36 % no longer share one band's colour
    rounds = images[2]["norm"]
    assert (rounds.vmin, rounds.vmax) == (3.5, 4.0)


def test_panel_title_takes_every_metric_name_out_of_the_grid_title():
    grid = karbon_like_grid()
    assert panel_title(grid, "P(tie)") == "P(tie)\nKarbon: Ability x Challenge"


def run(args, capsys):
    try:
        code = cli.main(args=args, prog_name="exactdice", standalone_mode=False)
    except SystemExit as exit_:
        code = exit_.code
    return code or 0, capsys.readouterr()


def test_dist_plot_writes_a_png_with_the_distribution_and_its_curves(tmp_path, capsys, monkeypatch):
    from matplotlib.axes import Axes

    steps = []
    original = Axes.step
    monkeypatch.setattr(Axes, "step", lambda self, x, y, *a, **k: (steps.append((list(x), list(y), k["label"])), original(self, x, y, *a, **k))[1])
    path = tmp_path / "3d6.png"
    code, captured = run(["dist", "3d6", "--plot", str(path)], capsys)
    assert code == 0 and path.read_bytes()[:4] == b"\x89PNG"
    (xs, at_least, label_least), (_, at_most, label_most) = steps
    assert (label_least, label_most) == ("at least x", "at most x")
    assert xs == list(range(3, 19)) and at_least[0] == 100 and at_most[-1] == 100
    assert at_least[7] == pytest.approx(100 * 0.625) and at_most[7] == pytest.approx(50)  # 3d6 >= 10, <= 10


def test_dist_plot_needs_a_png_path():
    from exactdice.errors import InputError

    with pytest.raises(InputError, match="--plot"):
        cli.main(args=["dist", "3d6", "--plot", "out.jpg"], prog_name="exactdice", standalone_mode=False)
