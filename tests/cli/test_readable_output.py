"""Readable text, complete JSON: every command's JSON gives each exact value as a "p/q"
string and the same value as a number in the ``decimal`` mirror; the README's main
command prints a short page with the percentages first."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from exactdice.cli.main import cli

EXACT = re.compile(r"-?\d+(/\d+)?")

# floats that are not exact values: measurements, test statistics, observed shares
NOT_EXACT_FLOATS = {"seconds", "share", "p_value", "statistic", "expected", "z", "alpha"}
# simulators report observations (shares, means, standard errors), which are not exact values
SIMULATIONS = {"karbon simulate", "chronica simulate"}


def run(args, capsys):
    try:
        code = cli.main(args=args, prog_name="exactdice", standalone_mode=False)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code or 0, captured.out, captured.err


def exact_strings(value, path=()):
    """(path, text) of every exact string in a JSON value, outside the ``decimal`` mirror."""
    if isinstance(value, str) and EXACT.fullmatch(value):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (path == () and key == "decimal"):
                yield from exact_strings(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from exact_strings(item, path + (index,))


def loose_floats(value, path=()):
    """(path) of every float outside the ``decimal`` mirror."""
    if isinstance(value, float):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            if not (path == () and key == "decimal"):
                yield from loose_floats(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from loose_floats(item, path + (index,))


def at(document, path):
    for key in path:
        document = document[key]
    return document


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """CSV samples for the validate commands (made by the simulators)."""
    folder = tmp_path_factory.mktemp("samples")
    made = {}
    for name, args in {
        "chronica": ["chronica", "simulate", "--side", "d8,d6", "--side", "d10"],
        "contingency": ["contingency", "simulate", "--difficulty", "6"],
        "karbon": ["karbon", "simulate", "-a", "1", "-c", "1", "-w", "1"],
        "death": ["karst", "simulate", "death", "--negative-health", "1"],
        "action": ["karst", "simulate", "action"],
        "opposed": ["karst", "simulate", "opposed", "--modifier", "1"],
        "attack": ["karst", "simulate", "attack", "--defense", "12", "--health", "6"],
        "order": ["karst", "simulate", "order", "--modifier", "1", "--modifier", "0"],
    }.items():
        path = str(folder / f"{name}.csv")
        code = cli.main(args=args + ["--n", "2000", "--out", path], prog_name="exactdice", standalone_mode=False)
        assert not code
        made[name] = path
    return made


# every command with --json (the test below checks the list is complete)
JSON_COMMANDS = {
    "dist": ["dist", "3d6+d4"],
    "karbon odds": ["karbon", "odds", "-a", "2", "-c", "2", "-w", "2", "-p", "1"],
    "karbon odds (optimal, draws)": [
        "karbon",
        "odds",
        "-a",
        "1",
        "-c",
        "1",
        "-w",
        "1",
        "--pool",
        "d6,d8",
        "--reserve",
        "none",
        "--player-policy",
        "optimal",
        "--show-draws",
    ],
    "karbon simulate": ["karbon", "simulate", "-a", "1", "-c", "1", "-w", "1", "--n", "100"],
    "karbon trace": ["karbon", "trace", "-a", "1", "-c", "1", "-w", "1"],
    "karbon design": [
        "karbon",
        "design",
        "--target",
        "win=0.5",
        "-a",
        "2",
        "-w",
        "1",
        "--vary",
        "challenge=1-2",
        "--samples",
        "1000",
        "--workers",
        "1",
        "--no-cache",
    ],
    "karbon sensitivity": [
        "karbon",
        "sensitivity",
        "-a",
        "1",
        "-c",
        "1",
        "-w",
        "1",
        "--pool",
        "d8,d8",
        "--reserve",
        "none",
        "--workers",
        "1",
        "--no-cache",
    ],
    "contingency check": ["contingency", "check", "--difficulty", "6", "--luck", "if-failing"],
    "contingency design": ["contingency", "design", "--target", "success=0.6", "--vary", "difficulty=1-11"],
    "karst design": ["karst", "design", "--target", "hit=0.6", "--modifier", "3", "--vary", "defense=8-20"],
    "chronica design": [
        "chronica",
        "design",
        "--target",
        "win=0.5",
        "--vary",
        "dice=1-2",
        "--size",
        "d8",
        "--against-dice",
        "2",
        "--against-size",
        "d6",
    ],
    "chronica contest": ["chronica", "contest", "--side", "d8,d8,d6", "--side", "d10,d6"],
    "chronica simulate": ["chronica", "simulate", "--side", "d8", "--side", "d6", "--n", "100"],
    "karst action": ["karst", "action", "--modifier", "1"],
    "karst opposed": ["karst", "opposed", "--modifier", "1"],
    "karst attack": ["karst", "attack", "--defense", "12", "--health", "6", "--then-death"],
    "karst death": ["karst", "death", "--negative-health", "2"],
    "karst order": ["karst", "order", "--modifier", "1", "--modifier", "0"],
    "validate chronica": ["validate", "chronica", "--side", "d8,d6", "--side", "d10", "--samples", "@chronica"],
    "validate contingency": ["validate", "contingency", "--difficulty", "6", "--samples", "@contingency"],
    "validate karbon": ["validate", "karbon", "-a", "1", "-c", "1", "-w", "1", "--samples", "@karbon"],
    "validate karst action": ["validate", "karst", "action", "--samples", "@action"],
    "validate karst opposed": ["validate", "karst", "opposed", "--modifier", "1", "--samples", "@opposed"],
    "validate karst attack": [
        "validate",
        "karst",
        "attack",
        "--defense",
        "12",
        "--health",
        "6",
        "--samples",
        "@attack",
    ],
    "validate karst death": ["validate", "karst", "death", "--negative-health", "1", "--samples", "@death"],
    "validate karst order": ["validate", "karst", "order", "--modifier", "1", "--modifier", "0", "--samples", "@order"],
}


def test_the_list_holds_every_command_with_json():
    import click

    found = set()

    def walk(command, path, parent=None):
        context = click.Context(command, info_name=path[-1] if path else "exactdice", parent=parent)
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    walk(sub, path + [name], context)
        elif any(parameter.name == "as_json" for parameter in command.params):
            found.add(" ".join(path))

    walk(cli, [])
    listed = {name.split(" (")[0] for name in JSON_COMMANDS}
    assert found <= listed, f"commands with --json missing from the test: {sorted(found - listed)}"


@pytest.mark.parametrize("name", list(JSON_COMMANDS))
def test_every_exact_value_has_a_decimal(name, samples, capsys):
    args = [samples[arg[1:]] if arg.startswith("@") else arg for arg in JSON_COMMANDS[name]]
    code, out, err = run(args + ["--json"], capsys)
    assert code in (0, 1), err  # validate exits 1 when samples do not fit; the JSON is the same
    document = json.loads(out)
    found = list(exact_strings(document))
    for path, text in found:
        value = Fraction(text)
        if abs(value) > 10**300:  # a count with no float (a denominator)
            continue
        assert at(document["decimal"], path) == float(value), (path, text)
    for path in [] if name in SIMULATIONS else loose_floats(document):
        assert str(path[-1]) in NOT_EXACT_FLOATS, f"{name}: a float outside the decimal mirror at {path}"
    if name.startswith("karbon odds"):
        assert sum(Fraction(document[key]) for key in ("win", "loss", "tie", "never_ends")) == 1
        for key in ("expected_rounds", "expected_breaks", "expected_glitches"):
            assert isinstance(document["decimal"][key], float)


def test_float_preview_is_labelled_and_has_no_exact_strings(capsys):
    code, out, _ = run(["karbon", "odds", "-a", "1", "-c", "1", "-w", "1", "--float", "--json"], capsys)
    document = json.loads(out)
    assert code == 0 and document["exact"] is False and isinstance(document["win"], float)


README_COMMAND = ["karbon", "odds", "--ability", "3", "--challenge", "2", "--consequence", "2", "--peril", "1"]


def test_the_readme_main_command_is_one_short_page_with_percentages_first(capsys):
    code, out, _ = run(README_COMMAND, capsys)
    lines = out.splitlines()
    assert code == 0
    assert len(lines) <= 25
    assert max(len(line) for line in lines) < 100
    assert re.fullmatch(r"  P\(win\)   15\.9 %  \(exact: [\d,]+-digit fraction\)", lines[1])
    assert lines[2].startswith("  P(loss)  31.1 %") and lines[3].startswith("  P(tie)   53.0 %")
    assert not any(re.search(r"\d{25}", line) for line in lines)  # no long fraction anywhere
    assert any(line.startswith("player:   draws d6") for line in lines)  # policies in words
    assert not any("draw=d6>d8>d10" in line for line in lines)


def test_exact_prints_every_fraction_in_full_and_json_agrees(capsys):
    _, out, _ = run(README_COMMAND + ["--exact"], capsys)
    _, document, _ = run(README_COMMAND + ["--json"], capsys)
    document = json.loads(document)
    win_line = out.splitlines()[1]
    assert win_line.endswith("= " + document["win"])
    assert document["decimal"]["win"] == float(Fraction(document["win"]))


def test_digits_sets_the_significant_digits_and_cuts_exact_fractions(capsys):
    _, out, _ = run(README_COMMAND + ["--digits", "5"], capsys)
    assert out.splitlines()[1].startswith("  P(win)   15.906 %")
    _, out, _ = run(README_COMMAND + ["--exact", "--digits", "4"], capsys)
    assert re.search(r"= 3899\.\.\.\(\d+ digits\)/2451\.\.\.\(\d+ digits\)", out.splitlines()[1])
    with pytest.raises(Exception, match="--digits"):
        run(README_COMMAND + ["--digits", "0"], capsys)


def test_state_output_has_no_draws_line(tmp_path, capsys):
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps(
            {"player_dice": "d8,d8", "narrator_dice": "d10", "pool": "none", "reserve": "none", "consequence": 1}
        )
    )
    code, out, _ = run(["karbon", "odds", "--state", str(state)], capsys)
    assert code == 0
    assert "draws:" not in out and "player draws" not in out
    assert out.splitlines()[0] == f"Karbon contest from the state in {state}"


def test_explain_says_the_choice_and_the_alternative_in_words(capsys):
    code, out, _ = run(
        [
            "karbon",
            "odds",
            "-a",
            "1",
            "-c",
            "1",
            "-w",
            "1",
            "--pool",
            "d6,d8,d10",
            "--reserve",
            "none",
            "--fortune",
            "1",
            "--player-policy",
            "optimal",
            "--narrator-policy",
            "optimal",
            "--explain",
        ],
        capsys,
    )
    assert code == 0
    text = " ".join(out.split())
    assert "of first rolls: the player wins the roll (with 1 hit), an Opening gives d10 to the player." in text
    assert "Risk: no. Not risking gives P(win) 70.3 % (score 0.703); risking would give 56.0 % (score 0.560)." in text


def test_dist_text_is_in_percentages_with_short_fractions(capsys):
    code, out, _ = run(["dist", "2d6"], capsys)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "2d6: 11 outcomes, mean 7  (7), variance 5.83  (35/6)"
    assert lines[1].split() == ["outcome", "probability", "at", "least", "at", "most", "exact"]
    assert lines[2].split() == ["2", "2.78", "%", "100", "%", "2.78", "%", "1/36"]


def test_the_readme_shows_what_the_main_command_prints(capsys):
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    shown = readme.split("$ exactdice karbon odds --ability 3 --challenge 2 --consequence 2 --peril 1\n")[1]
    shown = shown.split("```")[0].rstrip("\n").splitlines()
    _, out, _ = run(README_COMMAND, capsys)
    timing = re.compile(r"solved in [\d.]+ s")
    assert [timing.sub("solved in", line) for line in shown] == [
        timing.sub("solved in", line) for line in out.splitlines()
    ]


@pytest.mark.parametrize(
    "args,first_lines",
    [
        (
            ["karst", "death", "--negative-health", "2"],
            [
                "death roll, negative health 2, modifier +0, aid 0 per round",
                "  P(death)         75 %  (3/4)",
                "  P(stable)        25 %  (1/4)",
                "  expected rounds  0.500  (1/2)",
            ],
        ),
        (
            ["chronica", "contest", "--side", "d8,d8,d6", "--side", "d10,d6"],
            [
                "Rules: tie rule all-discarded, push off, physical dice off",
                "  side 0: 2d8,d6",
                "  side 1: d10,d6",
                "",
                "P(side 0 wins)   54.3 %  (521/960)",
            ],
        ),
        (["karst", "action", "--modifier", "2", "--exact"], ["action roll d6+2: P(success) 50 %  = 1/2"]),
    ],
)
def test_system_commands_show_percentages_first(args, first_lines, capsys):
    code, out, _ = run(args, capsys)
    assert code == 0 and out.splitlines()[: len(first_lines)] == first_lines


def test_karst_rounds_stop_at_a_thousandth_with_the_exact_rest(capsys):
    _, out, _ = run(["karst", "death", "--negative-health", "2"], capsys)
    lines = out.splitlines()
    assert lines[-1] == "  rest: 0.0457 %  (1/2187)"  # 1 - sum of rounds 0..6 = (1/3)^7
    _, out, _ = run(["karst", "death", "--negative-health", "2", "--exact"], capsys)
    assert len(out.splitlines()) > 25 and out.splitlines()[-1].startswith("  rest: ")
