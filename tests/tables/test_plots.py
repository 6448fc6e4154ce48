"""Heatmaps on each panel's own continuous colour scale with one metric per panel title; dist --plot."""

from __future__ import annotations

from fractions import Fraction

import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from exactdice.cli.main import cli
from exactdice.tables.grid import TableGrid
from exactdice.tables.plots import heatmap_png, panel_title
from exactdice.tables.shading import panel_scale


def karbon_like_grid():
    return TableGrid(
        "Karbon P(win): Ability x Challenge",
        "A",
        "C",
        ["1", "2"],
        ["1", "2", "3"],
        {
            "P(win)": [[Fraction(30, 100), Fraction(33, 100), Fraction(36, 100)]] * 2,
            "P(tie)": [[Fraction(1, 2)] * 3] * 2,
            "expected rounds": [[Fraction(7, 2), Fraction(4), None]] * 2,
        },
        probability_metrics=("P(win)", "P(tie)"),
    )


def test_each_panel_is_titled_with_its_own_metric_and_coloured_on_its_own_scale(monkeypatch):
    titles, images, bars, texts = [], [], [], []
    original_title, original_imshow, original_text = Axes.set_title, Axes.imshow, Axes.text
    original_colorbar = Figure.colorbar
    monkeypatch.setattr(
        Axes, "set_title", lambda self, text, *a, **k: (titles.append(text), original_title(self, text, *a, **k))[1]
    )
    monkeypatch.setattr(
        Axes, "imshow", lambda self, data, *a, **k: (images.append(data), original_imshow(self, data, *a, **k))[1]
    )
    monkeypatch.setattr(
        Axes,
        "text",
        lambda self, x, y, s, *a, **k: (texts.append((s, k["color"])), original_text(self, x, y, s, *a, **k))[1],
    )
    monkeypatch.setattr(
        Figure,
        "colorbar",
        lambda self, mappable, *a, **k: (bars.append(mappable.norm), original_colorbar(self, mappable, *a, **k))[1],
    )
    grid = karbon_like_grid()
    assert heatmap_png([grid])[:4] == b"\x89PNG"
    assert [title.splitlines()[0] for title in titles] == ["P(win)", "P(tie)", "expected rounds"]
    assert all("P(win)" not in title for title in titles[1:])  # no panel borrows the headline
    assert "every cell 50.0%" in titles[1]  # one value: one colour, said in the title, no colour bar
    # P(win) 30-36 %: its own range, lightest to darkest, three distinct colours (no bands)
    win = panel_scale(grid, "P(win)")
    assert (bars[0].vmin, bars[0].vmax) == (0.30, 0.36) and win.kind == "sequential"
    assert images[0][0] == [win.rgb(Fraction(30, 100)), win.rgb(Fraction(33, 100)), win.rgb(Fraction(36, 100))]
    assert len(set(images[0][0])) == 3
    rounds = bars[1]  # expected rounds: 3.5-4 on its own scale; the empty cell is white
    assert (rounds.vmin, rounds.vmax) == (3.5, 4.0) and images[2][0][2] == (1.0, 1.0, 1.0)
    # the numbers: the exact values' text, in the scale's text colour for their cell
    assert texts[:3] == [
        ("30.0%", win.text(Fraction(30, 100))),
        ("33.0%", win.text(Fraction(33, 100))),
        ("36.0%", win.text(Fraction(36, 100))),
    ]


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
    monkeypatch.setattr(
        Axes,
        "step",
        lambda self, x, y, *a, **k: (steps.append((list(x), list(y), k["label"])), original(self, x, y, *a, **k))[1],
    )
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
