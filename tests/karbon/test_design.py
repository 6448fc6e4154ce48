"""Inverse design: the search finds what brute force (every cell solved) finds, without
assuming monotonicity, solves fewer cells than the grid, and its screens hold the exact values."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from exactdice.design import design_search, hoeffding_half_width
from exactdice.errors import InputError
from exactdice.karbon.design import karbon_design_problem, metric_value, screen_interval, solve_design_task
from exactdice.karbon.tables import contest_cell
from exactdice.tables.store import ResultStore

REPOSITORY = Path(__file__).resolve().parents[2]
AXES = {"ability": [1, 2], "challenge": [1, 2, 3, 4], "consequence": [1, 2]}
FIXED = {"peril": 1}
SAMPLES = 20_000


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One store for the module: screens and exact cells are solved once across the tests
    (the search's count of cells it needs does not depend on the cache)."""
    with ResultStore(tmp_path_factory.mktemp("design") / "s.sqlite") as shared:
        yield shared


@pytest.fixture(scope="module")
def brute_force():
    """Every cell of the grid solved directly (not through the design search)."""
    cells = {}
    for ability in AXES["ability"]:
        for challenge in AXES["challenge"]:
            for consequence in AXES["consequence"]:
                cells[(ability, challenge, consequence)] = contest_cell(
                    ability=ability, challenge=challenge, consequence=consequence, peril=1
                )
    return cells


def _ranked(brute_force, metric, target):
    return sorted((abs(metric_value(cell, metric) - target), point) for point, cell in brute_force.items())


def _best(brute_force, metric, target, count):
    """The *count* closest cells, and every cell tied with the last of them."""
    ranked = _ranked(brute_force, metric, target)
    return [item for item in ranked if item[0] <= ranked[count - 1][0]]


def _point(candidate):
    return (candidate.point["ability"], candidate.point["challenge"], candidate.point["consequence"])


@pytest.mark.parametrize(
    "metric,target",
    [
        ("win", Fraction(3, 10)),
        ("loss", Fraction(1, 2)),
        ("tie", Fraction(1, 5)),
        ("score", Fraction(2, 5)),
        ("rounds", Fraction(6)),
    ],
)
def test_the_search_finds_the_brute_force_best(store, brute_force, metric, target):
    problem = karbon_design_problem(AXES, FIXED, metric=metric, samples=SAMPLES)
    found = design_search(problem, target=target, best=3, store=store, workers=2)
    assert [(c.distance, _point(c)) for c in found.candidates] == _best(brute_force, metric, target, 3)
    for candidate in found.candidates:
        assert candidate.value == metric_value(brute_force[_point(candidate)], metric)
    if metric == "rounds":  # unbounded: no screen, every cell solved
        assert found.exhaustive and found.solved == found.grid_size == 16
    else:
        assert not found.exhaustive and found.screened == 16


def test_a_far_target_is_found_with_few_exact_solves(store, brute_force):
    # the grid's P(win) spread from about 0.05 to 0.31: a target of 0 leaves most cells
    # provably out of the top 2 by their screens
    problem = karbon_design_problem(AXES, FIXED, metric="win", samples=SAMPLES)
    found = design_search(problem, target=Fraction(0), best=2, store=store, workers=2)
    assert [(c.distance, _point(c)) for c in found.candidates] == _best(brute_force, "win", 0, 2)
    assert found.solved < found.grid_size / 2, found.solved


def test_tolerance_lists_every_setup_within_it(store, brute_force):
    target, tolerance = Fraction(1, 10), Fraction(3, 100)
    problem = karbon_design_problem(AXES, FIXED, metric="win", samples=SAMPLES)
    found = design_search(problem, target=target, tolerance=tolerance, store=store, workers=2)
    within = [(d, p) for d, p in _ranked(brute_force, "win", target) if d <= tolerance]
    assert within and [(c.distance, _point(c)) for c in found.candidates] == within
    assert found.within_tolerance


def test_a_non_monotone_line_from_the_committed_table():
    # W2 P1, Ability 1: P(win) rises with Challenge up to C4 and falls at C5, so a search
    # that assumed monotonicity in Challenge would bracket the wrong cell
    table = json.loads((REPOSITORY / "tables/karbon/ability_challenge_w2_p1_fixed.json").read_text())
    grid = table["tables"][0]
    values = [Fraction(text) for text in grid["metrics"][0]["exact"][0]]  # row Ability 1
    assert grid["metrics"][0]["name"] == "P(win)" and grid["rows"][0] == "1"
    assert values[0] < values[3] and values[3] > values[4]  # not monotone
    target = Fraction(8, 100)
    best = min(range(5), key=lambda index: abs(values[index] - target))
    problem = karbon_design_problem(
        {"challenge": [1, 2, 3, 4, 5]}, {"ability": 1, "consequence": 2, "peril": 1}, metric="win", samples=SAMPLES
    )
    found = design_search(problem, target=target, best=1, store=None, workers=2)
    assert [c.point["challenge"] for c in found.candidates] == [best + 1] == [4]
    assert found.candidates[0].value == values[best]


def test_screens_hold_the_exact_values(store, brute_force):
    risk = Fraction(1, 10**6)
    problem = karbon_design_problem(AXES, FIXED, metric="win", samples=SAMPLES)
    for point in problem.points():
        cell = problem.screen(point)
        counts = store.get(cell.key) or solve_design_task(cell.task)
        exact = brute_force[(point["ability"], point["challenge"], point["consequence"])]
        for metric in ("win", "loss", "tie", "score"):
            interval = screen_interval(counts, metric, risk)
            assert interval["low"] <= metric_value(exact, metric) <= interval["high"], (point, metric)


def test_hoeffding_half_width_is_rounded_up():
    import math

    for samples, risk in ((100, Fraction(1, 20)), (50_000, Fraction(1, 10**8))):
        assert hoeffding_half_width(samples, risk) > math.sqrt(math.log(2 / float(risk)) / (2 * samples))


def test_the_cells_are_cached_in_the_store(tmp_path):
    problem = karbon_design_problem(
        {"challenge": [1, 2, 3]}, {"ability": 2, "consequence": 1}, metric="win", samples=2_000
    )
    with ResultStore(tmp_path / "s.sqlite") as store:
        first = design_search(problem, target=Fraction(1, 2), best=1, store=store, workers=1)
        rows = len(store)
        again = design_search(problem, target=Fraction(1, 2), best=1, store=store, workers=1)
        assert len(store) == rows == 3 + first.solved
    assert again.candidates == first.candidates


@pytest.mark.parametrize(
    "axes,fixed,metric,field",
    [
        ({"colour": [1]}, {"ability": 1}, "win", "axes"),
        ({"challenge": [1]}, {"ability": 1, "challenge": 2}, "win", "axes"),
        ({"challenge": [1]}, {"ability": 1}, "glory", "metric"),
        ({"challenge": [0, 1]}, {"ability": 1}, "win", "axes"),  # the grid's value, "challenge=0: ..."
    ],
)
def test_bad_design_input_names_the_field(axes, fixed, metric, field):
    with pytest.raises(InputError) as caught:
        karbon_design_problem(axes, fixed, metric=metric)
    assert caught.value.field == field


def test_cli_design_text_and_json(tmp_path):
    from click.testing import CliRunner

    from exactdice.cli.main import cli

    runner = CliRunner()
    arguments = [
        "karbon",
        "design",
        "--target",
        "win=50%",
        "-a",
        "2",
        "-w",
        "1",
        "--vary",
        "challenge=1-3",
        "--samples",
        "2000",
        "--workers",
        "1",
        "--store",
        str(tmp_path / "s.sqlite"),
    ]
    text = runner.invoke(cli, arguments + ["--best", "1"])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].startswith("target: P(win) = 50.00 % over 3 setups (challenge 1-3)")
    best = min((1, 2, 3), key=lambda c: abs(contest_cell(2, c, 1, 0)["P(win)"] - Fraction(1, 2)))
    assert lines[2].split()[:2] == ["1", str(best)]
    assert lines[3].startswith("solved exactly: ")
    data = json.loads(runner.invoke(cli, arguments + ["--json", "--tolerance", "0.1"]).output)
    assert data["target"] == {"metric": "win", "meaning": "P(win)", "value": "1/2"}
    assert data["decimal"]["target"] == {"value": 0.5}
    for index, candidate in enumerate(data["candidates"]):
        value = contest_cell(2, candidate["setup"]["challenge"], 1, 0)["P(win)"]
        assert Fraction(candidate["value"]) == value
        assert data["decimal"]["candidates"][index]["value"] == float(value)
        assert Fraction(candidate["distance"]) == abs(value - Fraction(1, 2)) <= Fraction(1, 10)


@pytest.mark.parametrize(
    "extra,flag",
    [
        (["--target", "win=1.5", "-a", "2", "--vary", "challenge=1-2"], "--target"),
        (["--target", "glory=1", "-a", "2", "--vary", "challenge=1-2"], "--target"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=3-1"], "--vary"),
        (["--target", "win=0.5", "-a", "2", "--vary", "colour=1-2"], "--vary"),
        (["--target", "win=0.5", "-a", "2", "-c", "2", "--vary", "challenge=1-2"], "--challenge"),
        (["--target", "win=0.5", "--vary", "challenge=1-2"], "--ability"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=1-2", "--tolerance", "x"], "--tolerance"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=1-2", "--risk", "2"], "--risk"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=0-2"], "--vary: challenge=0"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=1-2", "--samples", "5"], "--samples"),
        (["--target", "win=0.5", "-a", "2", "--vary", "challenge=1-2", "--pool", "d7x"], "--pool"),
    ],
)
def test_cli_design_bad_input_is_one_line_naming_the_flag(extra, flag, capsys):
    from exactdice.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["karbon", "design", *extra, "--no-cache"])
    stderr = capsys.readouterr().err
    assert exit_.value.code == 2
    assert stderr.strip().count("\n") == 0 and flag in stderr, stderr


def test_one_process_pool_serves_the_screens_and_every_batch(monkeypatch):
    import importlib

    from exactdice import design as design_module

    sweep_module = importlib.import_module("exactdice.tables.sweep")
    started = []
    real_pool = sweep_module.local_process_pool

    def counted_pool(workers):
        started.append(workers)
        return real_pool(workers)

    monkeypatch.setattr(sweep_module, "local_process_pool", counted_pool)
    problem = design_module.DesignProblem(
        axes={"n": [1, 2, 3, 4, 5, 6]},
        cell=design_module._demo_cell,
        screen=design_module._demo_screen,
        interval=design_module._demo_interval,
        metric=lambda result: result["P(x)"],
        solve_fn=design_module._demo_solve,
    )
    # every point is within the tolerance: the screens, then three batches of two points
    found = design_search(problem, target=Fraction(1, 3), tolerance=Fraction(1), store=None, workers=2)
    assert found.solved == 6 and started == [2]
    alone = design_search(problem, target=Fraction(1, 3), tolerance=Fraction(1), store=None, workers=1)
    assert found.candidates == alone.candidates and started == [2]  # workers=1: no pool
