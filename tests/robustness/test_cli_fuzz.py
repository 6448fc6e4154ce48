"""A fuzz suite for the whole CLI (issue 16): the issue's cases, then 240 generated bad inputs.

Every case asserts: no traceback; bad input exits 2 with exactly one line on stderr
("exactdice: error: ...") naming the flag at fault; and no case runs past a small work
budget (refused up front instead). Cases run in-process (the full entry point, with its
error handling) under a SIGALRM budget; the memory budget runs in a subprocess with a
timeout.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest

#: seconds one in-process case may take before it counts as "ran past the work budget"
#: (generous: the refusals take well under a second; CI machines are shared)
CASE_BUDGET_SECONDS = 20


@contextmanager
def work_budget(seconds=CASE_BUDGET_SECONDS):
    def _expired(signum, frame):
        raise TimeoutError(f"ran past the work budget of {seconds} s without refusing up front")

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def assert_one_line_error(result, flag):
    """Exit 2, nothing on stdout, one stderr line naming *flag*, no traceback."""
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("exactdice: error: "), result.stderr
    assert flag in lines[0], (flag, lines[0])
    assert result.stdout == "", result.stdout


@pytest.fixture
def run(run_cli):
    def invoke(arguments):
        with work_budget():
            return run_cli(arguments)

    return invoke


@pytest.fixture
def files(tmp_path):
    """Input files of the issue's cases and output targets that must be refused."""
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000)
    bad_strategy = tmp_path / "g.json"
    bad_strategy.write_text(json.dumps({"format": "exactdice-karbon-strategy/2", "decisions": "nope"}))
    repeated = tmp_path / "repeated.json"
    repeated.write_text(
        '{"player_dice": "d8", "player_dice": "d6", "narrator_dice": "d8", '
        '"pool": "none", "reserve": "none", "consequence": 1}'
    )
    state = tmp_path / "state.json"
    state.write_text(
        '{"player_dice": "d8", "narrator_dice": "d8", "pool": "none", "reserve": "none", "consequence": 1}'
    )
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    return {
        "nested": str(nested),
        "bad_strategy": str(bad_strategy),
        "repeated": str(repeated),
        "state": str(state),
        "fifo": str(fifo),
        "folder": str(folder),
    }


# ----- the issue's cases, each with the flag its message must name ---------------------------

ISSUE_CASES = [
    # tracebacks that must be clear errors
    ("karbon odds --state {nested}", "--state"),
    ("karbon simulate -a 1 -c 1 -w 1 --player-policy optimal --n 10 --strategy {bad_strategy}", "--strategy"),
    ("contingency check --dice 999d6 --any-size", "--dice"),
    ("validate karst death --counts death=100000000000000000000,stable=1 --negative-health 2", "--counts"),
    # nonsense that was silently accepted
    ("karbon odds -a 1 -c 1 --rule sudden_death=on --rule sudden_death=off", "--rule"),
    ("karbon odds -a 1 -c 1 --player-policy ''", "--player-policy"),
    ("karbon odds -a 1 -c 1 --player-policy ';;;'", "--player-policy"),
    ("karbon odds -a 1 -c 1 --narrator-policy 'hurt=injury;hurt=condition'", "--narrator-policy"),
    ("karbon odds --state {repeated}", "--state"),
    ("karbon odds --state {state} -a 3 -c 3", "--state"),
    ("contingency check --difficulty -5", "--difficulty"),
    ("contingency check --difficulty 1000000", "--difficulty"),
    ("karst attack --defense 10 --aid 2", "--aid"),
    ("karbon odds -a 1 -c 1 -w 1 --strategy {folder}/s.json", "--strategy"),
    ("dist ３d6", "EXPRESSION"),
    # work limits: refused up front
    ("dist 1000d1000", "EXPRESSION"),
    ("karst attack --defense 10 --damage 1000d1000 --health 1000000", "--damage"),
    ("karst attack --defense 10 --damage 100d1000 --health 20", "--damage"),
    ("karbon odds -a 1 -c 1 -p 100000 --max-states 100000", "--peril"),
    ("contingency check --modifier 1000000000", "--modifier"),
    ("contingency check --dice 5d4,5d6,5d8,5d10,5d12 --any-size", "--dice"),
    # output paths
    ("karst table --table action -o {fifo} --format pdf", "--output"),
    ("karst table --table action -o {folder} --format pdf", "--output"),
    ("karst table --table action -o /dev/null --format pdf", "--output"),
    ("contingency simulate --n 5 --out {fifo}", "--out"),
    # a second trial's, by a tester who had not seen the code
    ("contingency simulate --n 10 --seed -3", "--seed"),
    ("chronica simulate --side d8 --side d6 --n 5 --seed -1", "--seed"),
    ("karst simulate action --n 5 --seed -1", "--seed"),
    ("karst attack", "--defense"),
    ("karst simulate attack --n 5", "--defense"),
    ("karbon odds -a 3 -c 2 --player-policy optimal --max-seconds nan", "--max-seconds"),
    ("karbon odds -a 3 -c 2 --player-policy optimal --max-seconds inf", "--max-seconds"),
    ("contingency check --dice 501d6 --any-size --difficulty 4", "--dice"),
    ("karst attack --defense 12 --damage banana", "--damage"),
    # the memory budget's own flag
    ("--max-memory lots dist d6", "--max-memory"),
    ("--max-memory 1M dist d6", "--max-memory"),
]


def _argv(template, files):
    import shlex

    return shlex.split(template.format(**files))


@pytest.mark.parametrize("template, flag", ISSUE_CASES, ids=[case[0][:60] for case in ISSUE_CASES])
def test_the_issues_cases_are_one_line_errors(run, files, template, flag):
    assert_one_line_error(run(_argv(template, files)), flag)


#: seconds an allowed-but-large case may take: 1-2 s each on an idle 2-core machine, but up to
#: 30 s were seen while other jobs loaded it; the point is that they finish, not how fast
ALLOWED_CASE_BUDGET_SECONDS = 120


def test_what_was_slow_now_runs_quickly(run_cli):
    """Cases of the issue that are allowed: they finish (no blow-up), without an error."""
    two_hundred = [word for i in range(200) for word in ("--modifier", str(i % 5))]
    for argv in (
        ["contingency", "check", "--dice", "13d6", "--any-size"],
        ["karbon", "odds", "-a", "1", "-c", "1", "-p", "20", "--max-states", "100000"],
        ["karst", "order", *two_hundred],
    ):
        with work_budget(ALLOWED_CASE_BUDGET_SECONDS):
            result = run_cli(argv)
        assert result.exit_code == 0 and "Traceback" not in result.stderr, result.stderr


def test_an_order_roll_past_the_combatant_limit_is_refused(run):
    result = run(["karst", "order", *[word for _ in range(501) for word in ("--modifier", "0")]])
    assert_one_line_error(result, "--modifier")


# ----- 240 generated bad inputs -----------------------------------------------------------------

NOT_INTEGERS = ["abc", "1.5", "", "nan", "３", "1e3", "--", "0x10"]
HUGE = ["1000000000000000000000000000000", "99999999999"]
BAD_NOTATION = [
    "3d",
    "d0",
    "(((",
    "3d6+",
    "1000d1000",
    "３d6",
    "d6)",
    "kh",
    "2d6kh3",
    "",
    "d",
    "(" * 101 + "d6" + ")" * 101,
    "1d1000001",
    "3d6x",
    "5000d2",
    "--3",
    "d6++d6",
]
BAD_DICE_LIST = ["d7x", "0d6", "d1", "abc", "", ",", "2000d6", "d６", "d-6"]
BAD_POLICIES = ["", ";;;", "risk=maybe", "unknown=1", "risk=always;risk=never", "random", "draw=d7>d7", "break=nothing"]
BAD_RULES = ["sudden_death", "nope=1", "sudden_death=maybe", "=on", ""]

# (command before the bad value, flag, bad values, command after)
TARGETS = [
    (["dist"], "EXPRESSION", BAD_NOTATION, []),
    (["karbon", "odds", "-c", "1", "-w", "1", "--ability"], "--ability", NOT_INTEGERS + ["-1"] + HUGE, []),
    (["karbon", "odds", "-a", "1", "-w", "1", "--challenge"], "--challenge", NOT_INTEGERS + ["0", "-3"] + HUGE, []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--consequence"], "--consequence", NOT_INTEGERS + ["0", "21"] + HUGE, []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--peril"], "--peril", NOT_INTEGERS + ["-1"] + HUGE, []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--fallout"], "--fallout", NOT_INTEGERS + ["-2"] + HUGE, []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--fortune"], "--fortune", NOT_INTEGERS + ["-1"], []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--max-states"], "--max-states", NOT_INTEGERS + ["0", "-5"], []),
    (["karbon", "odds", "-a", "1", "-c", "1", "--player-policy"], "--player-policy", BAD_POLICIES, []),
    (
        ["karbon", "odds", "-a", "1", "-c", "1", "--narrator-policy"],
        "--narrator-policy",
        ["", ";;;", "hurt=maybe", "x=1", "plans=dice;plans=peril"],
        [],
    ),
    (["karbon", "odds", "-a", "1", "-c", "1", "--rule"], "--rule", BAD_RULES, []),
    (
        ["karbon", "odds", "--narrator-dice", "d8", "--player-dice"],
        "--player-dice",
        [value for value in BAD_DICE_LIST if value != "d1"],
        [],
    ),  # a d1 is a (dull) Karbon die
    (["karbon", "odds", "-a", "1", "-c", "1", "--pool"], "--pool", ["d7x", "0d6", "abc", "d6x"], []),
    (["contingency", "check", "--dice"], "--dice", BAD_DICE_LIST + ["d6,d6", "d6,d6,d6,d6,d6"], []),
    (["contingency", "check", "--difficulty"], "--difficulty", NOT_INTEGERS + ["0", "-5", "10001"] + HUGE, []),
    (["contingency", "check", "--modifier"], "--modifier", NOT_INTEGERS + ["1001", "-1001"] + HUGE, []),
    (["contingency", "check", "--modifiers"], "--modifiers", ["1,2", "a,b,c", "1,,2", "5000,0,0", ""], []),
    (["contingency", "check", "--advantage"], "--advantage", NOT_INTEGERS + ["-1"], []),
    (["contingency", "check", "--luck"], "--luck", ["sometimes", "", "ALWAYS"], []),
    (["karst", "attack", "--defense", "10", "--damage"], "--damage", BAD_NOTATION, []),
    (["karst", "attack", "--defense", "10", "--health"], "--health", NOT_INTEGERS + ["0", "-4", "10001"] + HUGE, []),
    (["karst", "attack", "--defense"], "--defense", NOT_INTEGERS, []),
    (["karst", "death", "--negative-health"], "--negative-health", NOT_INTEGERS + ["-1"], []),
    (
        ["karst", "attack", "--defense", "10", "--health", "3", "--then-death", "--aid"],
        "--aid",
        NOT_INTEGERS + ["-1"] + HUGE,
        [],
    ),
]


def _generated_cases(count=240, seed=16):
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        before, flag, values, after = rng.choice(TARGETS)
        value = rng.choice(values)
        if rng.random() < 0.2:  # noise: a second, valid flag after the bad one
            after = after + rng.choice([["--json"], []])
        cases.append((before + [value] + after, flag))
    return cases


GENERATED = _generated_cases()


def test_generated_bad_inputs_are_one_line_errors(run):
    started = time.monotonic()
    failures = []
    for argv, flag in GENERATED:
        result = run(argv)
        try:
            assert_one_line_error(result, flag)
        except AssertionError as error:
            failures.append(f"{argv!r}: {error}")
    assert not failures, "\n".join(failures[:20])
    assert len(GENERATED) >= 200
    # the whole batch stays small (each refusal is up front): a loose guard on a shared machine
    assert time.monotonic() - started < 240


@pytest.mark.parametrize("flag", ["-o", "--store", "--out"])
def test_generated_output_targets_are_refused(run, files, flag):
    commands = {
        "-o": ["karst", "table", "--table", "action", "--no-cache", "--format", "csv", "-o"],
        "--store": ["karst", "table", "--table", "action", "--format", "md", "--store"],
        "--out": ["karst", "simulate", "action", "--n", "5", "--out"],
    }
    named = {"-o": "--output", "--store": "--store", "--out": "--out"}[flag]
    for target in (files["fifo"], files["folder"], os.devnull, "/dev/zero"):
        assert_one_line_error(run(commands[flag] + [target]), named)


# ----- the memory budget, in a subprocess with a timeout ------------------------------------------


def test_a_long_solve_stops_at_the_memory_budget():
    """`karbon odds -a 3 -c 3 -w 3 -p 1 --player-policy risk=always` grew past 4.6 GiB in the
    issue; with a 64 MiB budget it stops with one line naming the size and the flag."""
    started = time.monotonic()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "exactdice.cli.main",
            "--max-memory",
            "64M",
            "karbon",
            "odds",
            "-a",
            "3",
            "-c",
            "3",
            "-w",
            "3",
            "-p",
            "1",
            "--player-policy",
            "risk=always",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("exactdice: error: --max-memory: the process reached ")
    assert "past the memory budget of 64.0 MiB" in lines[0] and "EXACTDICE_MAX_MEMORY" in lines[0]
    assert time.monotonic() - started < 120


def test_the_budget_comes_from_the_environment_too():
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "exactdice.cli.main",
            "karbon",
            "odds",
            "-a",
            "3",
            "-c",
            "3",
            "-w",
            "3",
            "-p",
            "1",
            "--player-policy",
            "risk=always",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "EXACTDICE_MAX_MEMORY": "64M"},
    )
    assert completed.returncode == 2 and "--max-memory: the process reached" in completed.stderr
