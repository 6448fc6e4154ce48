"""Line charts of exact values (`exactdice.tables.charts`), and the Contingency and Karst
checks' chance against difficulty or defense drawn by the CLI's --plot."""

from __future__ import annotations

import io
from fractions import Fraction

import matplotlib.image
import pytest
from matplotlib.axes import Axes

from exactdice.cli.main import main
from exactdice.contingency.check import skill_check, solve_check
from exactdice.errors import InputError
from exactdice.karst.rolls import attack_hit
from exactdice.tables.charts import Chart, Curve, chart_png, charts_png, write_chart_png


@pytest.fixture
def drawn(monkeypatch):
    """Every curve drawn: (label, xs, ys) as matplotlib received them."""
    lines = []
    original = Axes.plot
    monkeypatch.setattr(
        Axes,
        "plot",
        lambda self, xs, ys, *a, **k: (
            lines.append((k.get("label"), list(xs), list(ys))),
            original(self, xs, ys, *a, **k),
        )[1],
    )
    return lines


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def decoded(png: bytes):
    return matplotlib.image.imread(io.BytesIO(png), format="png")


def test_a_chart_keeps_its_exact_values_and_draws_them_as_percentages(drawn):
    chart = Chart("t", "x", "P", (Curve("a", (1, 2), (Fraction(1, 3), 1)), Curve("b", (1, 2), (0, Fraction(1, 2)))))
    assert chart.curves[0].ys == (Fraction(1, 3), Fraction(1))
    image = decoded(chart_png(chart))
    assert image.shape[:2] == (420, 700)
    assert drawn == [("a", [1.0, 2.0], [float(Fraction(1, 3)) * 100, 100.0]), ("b", [1.0, 2.0], [0.0, 50.0])]
    assert decoded(charts_png([chart, chart], "two")).shape[1] > 600
    with pytest.raises(ValueError, match="2 x values but 1 y values"):
        Curve("c", (1, 2), (1,))


def test_a_chart_is_written_only_to_a_png_path(tmp_path):
    with pytest.raises(InputError, match="plot: the chart is a PNG: give a path ending in .png"):
        write_chart_png(b"x", tmp_path / "c.jpg")
    folder = tmp_path / "folder.png"
    folder.mkdir()
    with pytest.raises(InputError, match="plot: .* is a directory"):
        write_chart_png(b"x", folder)


def test_contingency_check_plot_draws_p_success_by_difficulty(tmp_path, capsys, drawn):
    path = tmp_path / "check.png"
    code, out, err = run_cli(
        ["contingency", "check", "--dice", "d6,d8,d10", "--difficulty", "6", "--plot", str(path)], capsys
    )
    assert code == 0 and "P(success)" in out and "wrote P(success) by difficulty" in err
    assert decoded(path.read_bytes()).shape[1] >= 700
    solution = solve_check(skill_check([6, 8, 10], difficulty=6))
    (success_label, levels, success), (condition_label, _, condition) = drawn
    assert (success_label, condition_label) == ("success", "success, a condition allowed")
    assert levels == [float(level) for level in solution.p_at_least]
    assert success == [float(p) * 100 for p in solution.p_at_least.values()]
    assert condition == [float(p) * 100 for p in solution.p_at_least_with_condition.values()]
    assert success[5] == pytest.approx(100 * 13 / 48)  # difficulty 6 (Hard): 13/48, as the text says
    code, _, err = run_cli(["contingency", "check", "--dice", "d6,d8,d10", "--plot", str(tmp_path / "c.svg")], capsys)
    assert code == 2 and "--plot: the chart is a PNG" in err


def test_karst_attack_plot_draws_p_hit_by_defense(tmp_path, capsys, drawn):
    path = tmp_path / "attack.png"
    code, out, err = run_cli(["karst", "attack", "--modifier", "3", "--defense", "12", "--plot", str(path)], capsys)
    assert code == 0 and "P(hit) 60 %" in out and "wrote P(hit) by defense" in err
    assert decoded(path.read_bytes()).shape[1] >= 700
    ((label, defenses, hits),) = drawn
    assert label == "d20+3" and defenses == [float(d) for d in range(4, 25)]
    assert hits == [float(attack_hit(3, defense)) * 100 for defense in range(4, 25)]
    assert hits[0] == 95 and hits[-1] == 5 and hits[defenses.index(12.0)] == 60
    code, _, err = run_cli(["karst", "attack", "--defense", "12", "--plot", str(tmp_path / "a.pdf")], capsys)
    assert code == 2 and "--plot: the chart is a PNG" in err
