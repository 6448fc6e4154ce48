"""The web server's JSON API through an HTTP test client: every endpoint and every error.

Answers are compared with the Python API's exact values (`contest_odds`, `parse_dice`,
`goodness_of_fit`); limit messages with the CLI's own message.
"""

from __future__ import annotations

import io
import json
import signal
import time
from contextlib import redirect_stderr
from fractions import Fraction

import pytest
from starlette.testclient import TestClient

from exactdice.core.exact import fraction_text
from exactdice.core.notation import parse_dice
from exactdice.karbon import ContestSetup, contest_odds
from exactdice.answers.systems import computations
from exactdice.web.app import create_app, exact_json
from exactdice.web.jobs import CANCELLED_EXIT_CODE, JobManager

from .contests import LONG_CONTEST, MAIN_CONTEST, TINY_CONTEST, sample_csv

SYSTEM_PAGES = [name for name, found in computations().items() if found.system != "karbon"]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    store = tmp_path_factory.mktemp("web-store") / "results.sqlite"
    with TestClient(create_app(store_path=store, workers=2)) as test_client:
        yield test_client


def answer(client, url, body, timeout=120):
    """POST, then follow the job (if one was started) to its end."""
    response = client.post(url, json=body)
    data = response.json()
    deadline = time.monotonic() + timeout
    while data.get("status") in ("queued", "running"):
        assert time.monotonic() < deadline, data
        data = client.get(f"/api/jobs/{data['job']}?wait=2").json()
    return response.status_code, data


def exact(value: dict) -> Fraction:
    return Fraction(value["exact"])


def outcomes(rows: list) -> dict:
    """An answer's outcome rows as {outcome: exact probability}."""
    return {row["outcome"]: exact(row["p"]) for row in rows}


# ----- pages and static files -------------------------------------------------------------


def test_pages_are_served(client):
    assert client.get("/", follow_redirects=False).headers["location"] == "/karbon"
    for path, title in (("/karbon", "Karbon contest"), ("/validate", "Validate"), ("/dist", "Distribution")):
        page = client.get(path)
        assert page.status_code == 200 and f"<title>{title}" in page.text
        assert 'href="/validate"' in page.text  # the navigation
        assert 'rel="icon" href="/static/favicon.svg"' in page.text
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    chart = client.get("/static/chart.umd.min.js")
    assert chart.status_code == 200 and "Chart.js v4.5.1" in chart.text[:200]
    assert client.get("/static/common.js").status_code == 200


def test_unknown_paths_and_methods(client):
    page = client.get("/nowhere")
    assert page.status_code == 404 and "Karbon calculator" in page.text
    api = client.get("/api/nowhere")
    assert api.status_code == 404 and api.json()["errors"] == {"path": "no endpoint /api/nowhere"}
    wrong = client.get("/api/karbon/odds")
    assert wrong.status_code == 405 and "GET is not allowed" in wrong.json()["errors"]["method"]


def test_fields_describe_the_forms(client):
    fields = {field["name"]: field for field in client.get("/api/fields/karbon").json()["fields"]}
    assert fields["consequence"]["default"] == 2 and fields["consequence"]["low"] == 1
    assert fields["pool"]["default"] == "7d6,5d8,3d10"
    assert fields["rule_tie_order"]["choices"] == ["player_first", "narrator_first"]
    # a knob's help says what it decides and what each value means (`karbon rules`' words)
    assert fields["rule_sudden_death"]["help"] == (
        "Rule knob sudden_death, what follows a tie: off = the tie stands | on = a one-place "
        "sudden-death contest (chips and stacks emptied), so no ties (the spec's reading: off)."
    )
    assert client.get("/api/fields/dist").json()["fields"][0]["name"] == "expression"
    missing = client.get("/api/fields/nope")
    assert missing.status_code == 404 and "unknown system 'nope'" in missing.json()["errors"]["system"]


# ----- Karbon odds --------------------------------------------------------------------------


def test_main_contest_matches_the_python_api_and_is_cached(client):
    code, data = answer(client, "/api/karbon/odds", MAIN_CONTEST)
    assert code in (200, 202) and data["status"] == "done"
    expected = contest_odds(ContestSetup(ability=3, challenge=2, consequence=2, peril=1))
    result = data["result"]
    shown = outcomes(result["outcomes"])
    for name in ("win", "loss", "tie", "never_ends"):
        assert shown[name] == getattr(expected, name)
    assert sum(shown.values()) == 1
    for name in ("rounds", "breaks", "glitches", "injuries", "conditions"):
        assert exact(result["expectations"][name]) == getattr(expected, f"expected_{name}")
    assert result["provenance"]["states"] == expected.states
    assert result["outcomes"][0]["p"]["percent"] == exact_json(expected.win)["percent"]
    assert [row["words"] for row in result["outcomes"]] == [
        "the player wins",
        "the player loses",
        "a tie",
        "never ends",
    ]
    assert result["draws"] == {"player": "3d8", "narrator": "2d8"}
    # how long it lasts (asked after the odds), drawn from the library's exact values
    from exactdice.karbon.length import contest_length

    length = contest_length(expected)
    code, lasting = answer(client, "/api/karbon/length", MAIN_CONTEST)
    assert lasting["status"] == "done", lasting
    curve = lasting["result"]["charts"]["length"]["curves"][0]["points"]
    assert [point["x"] for point in curve] == list(length.rounds)
    assert [exact(point["y"]) for point in curve] == list(length.ended_by)
    again = client.post("/api/karbon/odds", json=MAIN_CONTEST)
    assert again.status_code == 200 and again.json()["cached"] is True
    assert again.json()["result"]["outcomes"] == result["outcomes"]
    # the same contest spelled with every default written out is the same key
    spelled = dict(
        MAIN_CONTEST,
        fortune="0",
        fallout=0,
        training=False,
        pool="7d6,5d8,3d10",
        rule_tie_order="player_first",
        player_policy="fixed",
    )
    assert client.post("/api/karbon/odds", json=spelled).json().get("cached") is True


def test_explicit_hands_and_knobs_reach_the_solver(client):
    body = dict(TINY_CONTEST, rule_sudden_death="on")
    code, data = answer(client, "/api/karbon/odds", body)
    from exactdice.karbon import Rules

    expected = contest_odds(
        ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}),
        Rules().with_rules(["sudden_death=on"]),
    )
    assert outcomes(data["result"]["outcomes"])["win"] == expected.win
    assert data["result"]["provenance"]["rules"]["sudden_death"] == "on"
    assert data["result"]["in_words"] == {
        "player": expected.player_policy.words(),
        "narrator": expected.narrator_policy.words(),
        "rules": "sudden_death=on",
    }


def test_optimal_player_gives_advice_in_words(client):
    body = {
        "ability": 1,
        "challenge": 1,
        "consequence": 1,
        "pool": "d6,d8,d10",
        "reserve": "none",
        "fortune": 1,
        "player_policy": "optimal",
    }
    code, data = answer(client, "/api/karbon/odds", body)
    assert data["status"] == "done", data
    assert data["result"]["advice"] and data["result"]["advice"][0].startswith("Draw:")


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"ability": -1}, "ability", "must be >= 0, got -1"),
        ({"challenge": 0}, "challenge", "must be >= 1, got 0"),
        ({"ability": "three"}, "ability", "must be a whole number, got 'three'"),
        ({"ability": 2.5}, "ability", "must be a whole number"),
        ({"ability": True}, "ability", "must be a whole number"),
        ({"ability": ""}, "ability", "is empty (or not a number); give a whole number, for example 3"),
        ({"peril": "  "}, "peril", "is empty"),
        ({"consequence": 11}, "consequence", "must be <= 10 on this page (the command line takes more), got 11"),
        ({"max_states": 0}, "max_states", "must be >= 1"),
        ({"training": "maybe"}, "training", "must be true or false"),
        ({"rule_tie_order": "random"}, "rule_tie_order", "must be one of player_first | narrator_first"),
        ({"pool": 7}, "pool", "must be text"),
        ({"pool": "x" * 501}, "pool", "at most 500"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"pool": "d7,zz"}, "pool", ""),
        ({"player_policy": "risk=sometimes"}, "player_policy", ""),
        ({"narrator_policy": "cruel"}, "narrator_policy", ""),
        ({"player_dice": "d8"}, "player_dice", "give both"),
        ({"draw_chips": True}, "draw_chips", "only applies to explicit hands"),
    ],
)
def test_bad_fields_are_named(client, body, field, words):
    response = client.post("/api/karbon/odds", json=dict(MAIN_CONTEST, **body))
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert field in errors and words in errors[field], errors


def test_a_blank_box_the_answer_does_not_read_is_no_error(client):
    # explicit hands: no draw, so Ability and Challenge are not read
    code, data = answer(client, "/api/karbon/odds", dict(TINY_CONTEST, ability="", challenge=" "))
    assert data["status"] == "done", data
    # a grid's axis: its own box is not read
    response = client.post(
        "/api/karbon/grid",
        json={"row_values": "1", "column_values": "1", "consequence": 1, "ability": "", "challenge": ""},
    )
    assert response.status_code in (200, 202), response.json()
    response = client.post("/api/karbon/grid", json={"row_values": "1", "column_values": "1", "peril": ""})
    assert response.status_code == 422 and "is empty" in response.json()["errors"]["peril"]


def test_all_bad_fields_at_once_and_bad_bodies(client):
    errors = client.post("/api/karbon/odds", json={"ability": -1, "challenge": "x"}).json()["errors"]
    assert set(errors) == {"ability", "challenge"}
    # a bad number and what the library finds wrong (a die, a policy) come back together
    errors = client.post(
        "/api/karbon/odds",
        json={"ability": 99, "pool": "d6,zz", "player_policy": "risk=sometimes", "narrator_policy": "fixed"},
    ).json()["errors"]
    assert set(errors) == {"ability", "pool", "player_policy"} and '"zz" is not a die' in errors["pool"]
    for content in (b"not json", b"[1, 2]"):
        response = client.post("/api/karbon/odds", content=content, headers={"Content-Type": "application/json"})
        assert response.status_code == 422 and "form" in response.json()["errors"]
    plain = client.post("/api/karbon/odds", content=b'{"ability": 3}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 422 and "Content-Type: application/json" in plain.json()["errors"]["form"]
    huge = client.post(
        "/api/karbon/odds", content=b"{" + b" " * 20_000_001 + b"}", headers={"Content-Type": "application/json"}
    )
    assert huge.status_code == 413 and "at most 20,000,000" in huge.json()["errors"]["form"]


def test_work_past_the_limit_is_refused_with_the_cli_message(client):
    from exactdice.cli.main import main

    # (a contest this module has not cached: a stored answer needs no exploring)
    code, data = answer(client, "/api/karbon/odds", dict(MAIN_CONTEST, peril=0, max_states=50))
    assert data["status"] == "error"
    message = data["errors"]["max_states"]
    assert message.startswith("reached 50 states (limit 50)")
    stderr = io.StringIO()
    with redirect_stderr(stderr), pytest.raises(SystemExit) as exit_:
        main(["karbon", "odds", "-a", "3", "-c", "2", "-w", "2", "-p", "0", "--max-states", "50"])
    assert exit_.value.code == 2
    # the same words; the CLI names its flag where the page names its field by its label
    cli_words = message.replace('"Max states"', "--max-states")
    assert stderr.getvalue().strip() == f"exactdice: error: --max-states: {cli_words}"


#: an optimal player on the default pool's draw: past any exact reach (README, "Limits")
OPTIMAL_PAST_REACH = {
    "ability": 1,
    "challenge": 1,
    "consequence": 1,
    "player_policy": "optimal",
    "max_states": 3000,
    "max_seconds": 60,
}


def test_an_optimal_player_past_max_states_gets_the_cli_bounds(client):
    from exactdice.karbon import NarratorPolicy, PlayerPolicy
    from exactdice.karbon.bounds import bounded_odds, interval_text

    code, data = answer(client, "/api/karbon/odds", OPTIMAL_PAST_REACH)
    assert data["status"] == "done", data
    result = data["result"]
    assert result["kind"] == "bounds" and result["objective"].startswith("expected score")
    assert (
        result["too_large"] == ('reached 3,000 states (limit 3,000) while exploring; raise the limit with "Max states"')
        and result["draws"] is None
    )  # drawn: searched
    # the same search through the Python API (stopped by its state budget, so the same bounds)
    found = bounded_odds(
        ContestSetup(ability=1, challenge=1, consequence=1),
        None,
        PlayerPolicy(kind="optimal"),
        NarratorPolicy(),
        max_states=3000,
        certify_states=3000,
        max_seconds=60,
        workers=0,
    )
    assert found.stopped == "states" and not result["reached"]
    assert result["stopped"] == 'it reached "Max states" (raise it)'
    assert result["explored"] == found.explored
    # rounded outward: the printed interval still holds the exact bounds
    lower, upper = Fraction(result["lower"]["decimal"]), Fraction(result["upper"]["decimal"])
    assert lower <= Fraction(found.lower) < lower + Fraction(1, 10**4)
    assert upper - Fraction(1, 10**4) < Fraction(found.upper) <= upper
    assert found.lower_kind == result["lower_kind"] == "exact"
    assert Fraction(result["lower"]["exact"]) == found.lower
    assert outcomes(result["strategy_outcomes"])["win"] == found.win
    assert exact(result["fixed_value"]) == found.fixed_value
    # the advice's bounds are rounded outward too, as the interval is
    low, high = found.draw_bounds["d8"]
    assert result["advice"][0].startswith(
        f"Draw: the strategy takes d8; bounds on the value of each draw: d8 {interval_text(low, high)}"
    )
    # bounds depend on the time given: never answered from the results store
    again = client.post("/api/karbon/odds", json=OPTIMAL_PAST_REACH).json()
    assert not again.get("cached")
    answer(client, "/api/karbon/odds", OPTIMAL_PAST_REACH)  # (let it end before the next test)


def test_exploring_past_a_tenth_of_bounds_seconds_turns_to_bounds(client):
    # the default pool's draw under optimal play passes millions of states (minutes of
    # exploring): the exact attempt gets a tenth of Bounds seconds, not the whole Max states
    code, data = answer(client, "/api/karbon/odds", dict(OPTIMAL_PAST_REACH, max_states=3_000_000, max_seconds=2))
    assert data["status"] == "done", data
    assert data["result"]["too_large"] == 'more than 0.2 s of exploring, a tenth of "Bounds seconds"'
    assert data["result"]["explored"] > 0


def test_bounds_with_explicit_hands_name_the_hands(client):
    body = dict(
        TINY_CONTEST,
        player_dice="d8,d8",
        narrator_dice="d10",
        pool="d6",
        reserve="d6",
        consequence=2,
        player_policy="optimal",
        max_states=500,
        max_seconds=30,
    )
    code, data = answer(client, "/api/karbon/odds", body)
    assert data["status"] == "done" and data["result"]["kind"] == "bounds", data
    assert data["result"]["draws"] == {"player": "2d8", "narrator": "d10"}
    assert data["result"]["advice"][0].startswith("First round: ")


def test_no_bounds_when_not_asked_for_or_not_possible(client):
    # Bounds seconds 0: the state limit's message, as before
    code, data = answer(client, "/api/karbon/odds", dict(OPTIMAL_PAST_REACH, max_seconds=0))
    assert data["status"] == "error" and data["errors"]["max_states"].startswith("reached 3,000 states")
    # a fixed player's odds are exact or nothing: the limit's message whatever Bounds seconds says
    code, data = answer(client, "/api/karbon/odds", dict(MAIN_CONTEST, peril=0, max_states=50, max_seconds=30))
    assert data["status"] == "error" and data["errors"]["max_states"].startswith("reached 50 states")
    # nor against a kind narrator (bounds need a narrator that does not help)
    code, data = answer(client, "/api/karbon/odds", dict(OPTIMAL_PAST_REACH, narrator_policy="kind"))
    assert data["status"] == "error" and data["errors"]["max_states"].startswith("reached 3,000 states")
    for value, words in ((-1, "must be >= 0"), (601, "must be <= 600 on this page")):
        response = client.post("/api/karbon/odds", json=dict(OPTIMAL_PAST_REACH, max_seconds=value))
        assert response.status_code == 422 and words in response.json()["errors"]["max_seconds"]


# ----- jobs -----------------------------------------------------------------------------------


def test_cancel_stops_the_worker_process_and_a_quick_solve_is_not_blocked(client):
    manager = client.app.state.jobs
    started = client.post("/api/karbon/odds", json=LONG_CONTEST)
    assert started.status_code == 202
    job_id = started.json()["job"]
    job = manager.get(job_id)
    deadline = time.monotonic() + 30
    while job.status != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.status == "running" and job._process.is_alive()
    # a quick contest in another "tab" answers while the long one runs
    began = time.perf_counter()
    code, quick = answer(client, "/api/karbon/odds", dict(TINY_CONTEST, consequence=2), timeout=30)
    assert quick["status"] == "done" and time.perf_counter() - began < 20
    status = client.get(f"/api/jobs/{job_id}").json()
    assert status["status"] == "running" and status["progress"]
    cancelled = client.post(f"/api/jobs/{job_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert not job._process.is_alive()
    assert job.exit_code == CANCELLED_EXIT_CODE == -signal.SIGTERM  # ended by the signal, nothing else
    assert client.get(f"/api/jobs/{job_id}").json()["status"] == "cancelled"
    # cancelling again is harmless and says so
    assert client.post(f"/api/jobs/{job_id}/cancel").json()["status"] == "cancelled"


def _run_in_a_forked_worker(monkeypatch, task, memory_limit=None):
    """What `run_task` sends for a task of its own, run in a forked process as a worker is."""
    import multiprocessing

    from exactdice.web import tasks

    monkeypatch.setitem(tasks.TASKS, "probe", lambda progress=None: task())
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=tasks.run_task, args=(sending, "probe", {}, memory_limit))
    process.start()
    sending.close()
    messages = []
    try:
        while True:
            messages.append(receiving.recv())
    except EOFError:
        pass
    process.join(30)
    return messages


def test_a_capped_worker_has_a_memory_budget_below_its_cap(monkeypatch):
    from exactdice.limits import memory_budget
    from exactdice.processes import worker_memory_budget

    cap = 8 * 2**30  # above this test process's address space, below half of a 24 GiB machine
    expected = min(memory_budget(), worker_memory_budget(cap))
    assert _run_in_a_forked_worker(monkeypatch, memory_budget, cap) == [("done", expected)]
    assert worker_memory_budget(cap) == cap - cap // 5


def test_a_worker_past_its_memory_budget_gets_the_servers_advice(monkeypatch):
    from exactdice.errors import TooLargeError
    from exactdice.limits import MEMORY_PARAMETER

    def past_the_budget():
        raise TooLargeError(MEMORY_PARAMETER, "the process reached 3 GiB ...; raise it with `max_memory` ...")

    ((kind, errors),) = _run_in_a_forked_worker(monkeypatch, past_the_budget)
    assert kind == "input_error"
    assert errors == {
        "max_states": "the solve ran out of memory (a worker may use the machine's memory; raise it "
        "with exactdice serve --worker-memory GIB, or lower `max_states`)"
    }


def test_every_cancelled_worker_ends_with_the_same_exit_status():
    # cancelling at once, just after the start and mid-solve: always ended by SIGTERM (the job's
    # thread and the cancelling thread once both waited for the process and one read 255)
    from exactdice.web.forms import read_computation

    arguments = {"values": read_computation("karbon", dict(LONG_CONTEST))}
    manager = JobManager(workers=2)
    try:
        for delay in (0.0, 0.05, 0.2, 0.5, 0.0, 0.3):
            job = manager.submit("karbon_odds", arguments)
            deadline = time.monotonic() + 30
            while job.status != "running" and time.monotonic() < deadline:
                time.sleep(0.01)
            assert job.status == "running"
            time.sleep(delay)
            assert job.cancel()
            assert job.status == "cancelled" and job.exit_code == CANCELLED_EXIT_CODE, job.exit_code
            assert not job._process.is_alive() and job._process.exitcode == CANCELLED_EXIT_CODE
            assert not job.cancel()  # a second cancel does nothing
    finally:
        manager.shutdown()


_FIRST_RUN = r"""
import importlib, json, sys
from exactdice.web import tasks
from exactdice.web.forms import read_computation
for name in tasks.WORKER_MODULES:
    importlib.import_module(name)
values = read_computation("karbon", dict(json.loads(sys.argv[1])))
imported = {}
for task in ("karbon_odds", "karbon_length", "what_if"):
    before = set(sys.modules)
    tasks.TASKS[task](values)
    imported[task] = sorted(
        name for name in set(sys.modules) - before
        if name.partition(".")[0] not in sys.stdlib_module_names and not name.startswith("_")
    )
print(json.dumps(imported))
"""


def test_a_jobs_worker_starts_with_what_the_pages_tasks_import():
    """The fork server imports `WORKER_MODULES`, so a job's worker (a fork of it) imports no
    package when its task first runs: each one would cost every job its import time."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _FIRST_RUN, json.dumps(MAIN_CONTEST)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"karbon_odds": [], "karbon_length": [], "what_if": []}


_STARTED_SERVER = r"""
import time
import psutil
from starlette.testclient import TestClient
from exactdice.web.app import create_app

with TestClient(create_app(store_path=None)):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = psutil.Process().children()
        if any("forkserver" in " ".join(child.cmdline()) for child in children):
            print("running")
            break
        time.sleep(0.05)
"""


def test_the_server_starts_its_worker_server_before_the_first_job():
    """The fork server (which imports the tasks' modules) starts with the app, not with its
    first job, so the first answer does not wait for it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _STARTED_SERVER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "running"


def test_a_cancelled_grid_ends_by_the_signal_too():
    """A grid runs through the sweep, which turns SIGTERM into an interrupt in a command's
    process: in a worker it must not (the load test once found its traceback in the log)."""
    from exactdice.web.forms import grid_request

    values, axes = grid_request({"row_values": "1-5", "column_values": "1-5", "consequence": 5, "peril": 2})
    manager = JobManager(workers=1)
    try:
        job = manager.submit("karbon_grid", {"values": values, "axes": axes})
        deadline = time.monotonic() + 30
        while job.progress.stage != "cells" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job.progress.stage == "cells" and not job.finished  # the sweep is running
        assert job.cancel() and job.exit_code == CANCELLED_EXIT_CODE
    finally:
        manager.shutdown()


def test_job_errors(client):
    missing = client.get("/api/jobs/no-such-job")
    assert missing.status_code == 404 and "no job 'no-such-job'" in missing.json()["errors"]["job"]
    assert client.post("/api/jobs/no-such-job/cancel").status_code == 404
    started = client.post("/api/karbon/odds", json=dict(TINY_CONTEST, consequence=3))
    job_id = started.json().get("job")
    if job_id is None:  # already cached from an earlier run of this module's store
        return
    for wait in ("soon", "-1", "11"):
        response = client.get(f"/api/jobs/{job_id}?wait={wait}")
        assert response.status_code == 422 and "from 0 to 10" in response.json()["errors"]["wait"]


# ----- Validate -----------------------------------------------------------------------------


def _tiny_law():
    odds = contest_odds(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}))
    return odds


def test_validate_fitting_and_misfitting_samples(client):
    from exactdice.validation import goodness_of_fit

    odds = _tiny_law()
    n = 2000
    fitting = {"win": round(n * odds.win), "loss": round(n * odds.loss)}
    fitting["tie"] = n - fitting["win"] - fitting["loss"]
    code, data = answer(client, "/api/validate/karbon", dict(TINY_CONTEST, samples=sample_csv(fitting)))
    assert data["status"] == "done", data
    report = data["result"]["report"]
    law = {"win": odds.win, "loss": odds.loss, "tie": odds.tie, "unfinished": odds.never_ends}
    assert report["fits"] is True
    assert report["p_value"] == goodness_of_fit(law, fitting).p_value
    skewed = {"win": fitting["win"] + 150, "loss": fitting["loss"] - 150, "tie": fitting["tie"]}
    code, data = answer(client, "/api/validate/karbon", dict(TINY_CONTEST, samples=sample_csv(skewed)))
    report = data["result"]["report"]
    assert report["fits"] is False and report["verdict"].startswith("does not fit")
    expected = goodness_of_fit(law, skewed)
    assert report["p_value"] == expected.p_value
    assert report["outcomes"]["win"]["z"] == pytest.approx(expected.rows[0].z, rel=0, abs=0)  # same float
    assert data["result"]["exact"]["win"]["exact"] == fraction_text(odds.win)


@pytest.mark.parametrize(
    "extra, field, words",
    [
        ({"samples": ""}, "samples", "choose a CSV file"),
        ({"samples": "outcome\nwin\n", "column": "result"}, "samples", "has no column 'result'"),
        ({"samples": "outcome\nwin\nvictory\n"}, "samples", "victory"),
        ({"samples": "outcome,rounds\nwin\n"}, "samples", "line 2: 1 fields"),
        ({"samples": "outcome\n"}, "samples", "has a header but no sample rows"),
        ({"samples": "outcome\nwin\n", "alpha": "2"}, "alpha", "strictly between 0 and 1"),
        ({"samples": "outcome\nwin\n", "alpha": "often"}, "alpha", "strictly between 0 and 1"),
        ({"samples": "outcome\nwin\n", "alpha": ""}, "alpha", "strictly between 0 and 1, for example 0.01"),
        ({"samples": "outcome\nwin\n", "column": 3}, "column", "must be a column name"),
        ({"samples": "outcome\nwin\n", "ability": -2, "player_dice": ""}, "ability", ">= 0"),
        ({"samples": "outcome\nwin\n", "max_seconds": 20}, "max_seconds", "tested against exact odds only"),
    ],
)
def test_validate_errors_are_named(client, extra, field, words):
    body = dict(MAIN_CONTEST, **extra)
    response = client.post("/api/validate/karbon", json=body)
    if response.status_code == 202:  # an error only the solve finds
        code, data = answer(client, "/api/validate/karbon", body)
        errors = data["errors"]
    else:
        assert response.status_code == 422
        errors = response.json()["errors"]
    assert field in errors and words in errors[field], errors
    assert "/tmp" not in str(errors)  # the temporary file's path is not shown


# ----- dist -------------------------------------------------------------------------------------


def test_dist_matches_the_python_api(client):
    response = client.post("/api/dist", json={"expression": "4d6kh3"})
    assert response.status_code == 200
    data = response.json()
    distribution = parse_dice("4d6kh3")
    rows = {row["outcome"]: row for row in data["outcomes"]}
    for outcome, p in distribution.probabilities().items():
        assert exact(rows[str(outcome)]["p"]) == p
        assert exact(rows[str(outcome)]["at_least"]) == distribution.survival()[outcome]
        assert exact(rows[str(outcome)]["at_most"]) == distribution.cdf()[outcome]
    assert exact(data["mean"]) == distribution.mean()
    assert sum(exact(row["p"]) for row in data["outcomes"]) == 1


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"expression": ""}, "expression", "give a dice expression"),
        ({}, "expression", "give a dice expression"),
        ({"expression": "3q6"}, "expression", ""),
        ({"expression": "1001d6"}, "expression", "more than 1000 dice in one expression (the limit)"),
        ({"expression": "d6" + "+d6" * 200}, "expression", "at most 500"),
        ({"expression": "d6", "mode": "x"}, "mode", "unknown field"),
    ],
)
def test_dist_errors_are_named(client, body, field, words):
    response = client.post("/api/dist", json=body)
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert field in errors and words in errors[field], errors


def test_without_a_store_nothing_is_cached():
    with TestClient(create_app(store_path=None, workers=1)) as plain:
        first = answer(plain, "/api/karbon/odds", TINY_CONTEST)[1]
        second = plain.post("/api/karbon/odds", json=TINY_CONTEST)
        assert first["status"] == "done" and second.status_code == 202


# ----- Contingency, Chronica, Karst ---------------------------------------------------------


def _library_outcomes(system):
    """The law each page should show, from the systems' own modules (not the registry)."""
    from exactdice.chronica import expected_distribution as chronica_law
    from exactdice.contingency.check import expected_distribution as contingency_law, skill_check
    from exactdice.contingency.ruleset import Rules as ContingencyRules
    from exactdice.karst import expected_distribution as karst_law

    if system == "contingency":
        return contingency_law(skill_check("d6,d8,d10", difficulty=7, advantage=1), ContingencyRules(luck="if-failing"))
    if system == "chronica":
        return chronica_law([((8, 8, 6),), ((10, 6),), ((12,),)])
    if system == "karst-attack":
        return karst_law("attack", modifier=3, defense=12, damage="d8", health=6, unaware=True)
    if system == "karst-order":
        return karst_law("order", modifiers=(2, 0, -1), combatant=2)
    return karst_law("death", negative_health=3, modifier=1)


SYSTEM_BODIES = {
    "contingency": {"difficulty": 7, "advantage": 1, "luck": "if-failing"},
    "chronica": {"sides": "d8,d8,d6; d10,d6; d12"},
    "karst-attack": {"modifier": 3, "defense": 12, "damage": "d8", "health": 6, "unaware": True},
    "karst-death": {"negative_health": 3, "modifier": 1},
    "karst-order": {"modifiers": "2,0,-1", "combatant": 2},
}


def test_every_registered_system_but_karbon_has_a_page(client):
    from exactdice.systems import get_system, system_names

    expected = []
    for name in system_names():
        if name != "karbon":
            variants = get_system(name).variants
            expected += [f"{name}-{variant}" for variant in variants] if variants else [name]
    assert [entry["name"] for entry in client.get("/api/systems").json()["systems"]] == expected


@pytest.mark.parametrize("system", sorted(SYSTEM_BODIES))
def test_other_systems_match_the_python_api(client, system):
    assert system in [entry["name"] for entry in client.get("/api/systems").json()["systems"]]
    code, data = answer(client, f"/api/exact/{system}", SYSTEM_BODIES[system])
    assert data["status"] == "done", data
    shown = {row["outcome"]: exact(row["p"]) for row in data["result"]["outcomes"]}
    assert shown == {str(name): Fraction(p) for name, p in _library_outcomes(system).items()}
    assert sum(shown.values()) == 1
    again = client.post(f"/api/exact/{system}", json=SYSTEM_BODIES[system])
    assert again.json()["cached"] is True and again.json()["result"] == data["result"]
    fields = client.get(f"/api/fields/{system}").json()["fields"]
    assert fields and all(field["label"] for field in fields)


SPEC_MICRO_EXAMPLES = {  # the specs' worked micro-examples, where a page starts with one
    "chronica": {"0": Fraction(5, 12), "1": Fraction(5, 12), "tie": Fraction(1, 6)},
    "karst-death": {"death": Fraction(3, 4), "stable": Fraction(1, 4)},
}


@pytest.mark.parametrize("system", sorted(SYSTEM_PAGES))
def test_every_system_page_answers_its_untouched_form(client, system):
    fields = client.get(f"/api/fields/{system}").json()["fields"]
    body = {field["name"]: "" if field["start"] is None else field["start"] for field in fields}
    code, data = answer(client, f"/api/exact/{system}", body)
    assert data["status"] == "done", (body, data)
    shown = {row["outcome"]: exact(row["p"]) for row in data["result"]["outcomes"]}
    assert sum(shown.values()) == 1
    if system in SPEC_MICRO_EXAMPLES:
        assert shown == SPEC_MICRO_EXAMPLES[system]
    words = [row["words"] for row in data["result"]["outcomes"]]
    declared = computations()[system].rules_system()
    assert words == [declared.outcome_words(row["outcome"]) for row in data["result"]["outcomes"]]
    if system == "chronica":
        assert words == ["the player (side 0) wins", "side 1 wins", "a tie"]
    # a value the page fills in with an example is still needed from a request
    examples = [field["name"] for field in fields if field["start"] != field["default"]]
    assert bool(examples) == (system not in ("karst-action", "karst-opposed"))  # all have defaults
    if examples:
        code, data = answer(
            client, f"/api/exact/{system}", {name: value for name, value in body.items() if name not in examples}
        )
        assert data.get("status") != "done" and set(data["errors"]) & set(examples), data


@pytest.mark.parametrize(
    "system, body, field, words",
    [
        ("contingency", {"dice": "d6,zz,d10", "difficulty": 6}, "dice", "zz"),
        ("contingency", {"difficulty": 6, "advantage": -1}, "advantage", "must be >= 0, got -1"),
        ("contingency", {}, "difficulty", "needs a difficulty"),
        ("contingency", {"difficulty": 6, "luck": "sometimes"}, "luck", "must be one of never | always | if-failing"),
        ("chronica", {"sides": "d8"}, "sides", "at least two sides"),
        ("chronica", {"sides": "d8,x; d6"}, "sides", ""),
        ("chronica", {"sides": "d8; d6", "target": "x"}, "target", ""),
        ("karst-attack", {"defense": 12, "health": 5, "damage": "2q"}, "damage", ""),
        ("karst-attack", {"modifier": 1}, "defense", "required"),
        ("karst-death", {"negative_health": "many"}, "negative_health", "whole number"),
        ("karst-death", {"negative_health": 2, "luck": 1}, "luck", "unknown field"),
        ("karst-order", {"modifiers": "2,x"}, "modifiers", "whole numbers"),
        # a tester's trial: an emptied box with a default, damage without a health, a death
        # roll without a knock-out
        ("contingency", {"dice": "", "difficulty": 6}, "dice", "is empty; give a value, for example d6,d8,d10"),
        ("contingency", {"dice": "   ", "difficulty": 6}, "dice", "is empty"),
        ("karst-attack", {"defense": 12, "damage": "sword"}, "damage", "sword"),
        ("karst-attack", {"defense": 12, "then_death": True}, "then_death", 'give "Health" too'),
    ],
)
def test_other_systems_errors_are_named(client, system, body, field, words):
    response = client.post(f"/api/exact/{system}", json=body)
    if response.status_code == 202:  # found by the computation itself, in the worker
        errors = answer(client, f"/api/exact/{system}", body)[1]["errors"]
    else:
        assert response.status_code == 422
        errors = response.json()["errors"]
    assert field in errors and words in errors[field], errors


def test_a_lone_surrogate_is_refused_not_echoed_into_a_server_error(client):
    body = b'{"ability": 2, "challenge": 2, "pool": "\\ud800"}'
    response = client.post("/api/karbon/odds", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "lone surrogate" in response.json()["errors"]["form"]


@pytest.mark.parametrize("seconds", ["nan", "inf", "-inf"])
def test_seconds_must_be_finite(client, seconds):
    response = client.post("/api/karbon/odds", json={"player_policy": "optimal", "max_seconds": seconds})
    assert response.status_code == 422, response.json()
    assert "max_seconds" in response.json()["errors"]


def test_unknown_system(client):
    response = client.post("/api/exact/monopoly", json={})
    assert response.status_code == 404 and "unknown system 'monopoly'" in response.json()["errors"]["system"]
    assert client.get("/systems").status_code == 200


# ----- Tables -------------------------------------------------------------------------------


def test_tables_list_and_cells_are_the_canonical_exact_values(client):
    import json

    from exactdice.web.app import default_tables_dir

    names = client.get("/api/tables").json()["tables"]
    folder = default_tables_dir()
    # every grid table (each system's folder), none of the sensitivity tables (their own folders)
    assert names == sorted(path.relative_to(folder).with_suffix("").as_posix() for path in folder.glob("*/*.json"))
    assert list(folder.glob("*/sensitivity/*.json")) and not any("sensitivity" in name for name in names)
    name = "karbon/ability_challenge_w2_p1_fixed"
    shown = client.get(f"/api/tables/{name}").json()["tables"][0]
    stored = json.loads((folder / f"{name}.json").read_text())["tables"][0]
    assert shown["rows"] == stored["rows"] and shown["columns"] == stored["columns"]
    for metric_shown, metric_stored in zip(shown["metrics"], stored["metrics"]):
        assert metric_shown["name"] == metric_stored["name"]
        for row_shown, row_stored in zip(metric_shown["cells"], metric_stored["exact"]):
            assert [cell["exact"] for cell in row_shown] == row_stored
    win = shown["metrics"][0]["cells"][2][1]  # Ability 3, Challenge 2
    assert win["percent"] == exact_json(Fraction(stored["metrics"][0]["exact"][2][1]), 1)["percent"]


def test_the_page_lists_only_the_json_files_that_say_they_are_grid_tables(tmp_path):
    import shutil

    from exactdice.web.app import default_tables_dir

    grid = "karbon/ability_challenge_w1_p0_fixed"
    (tmp_path / "karbon" / "sensitivity").mkdir(parents=True)
    shutil.copy(default_tables_dir() / f"{grid}.json", tmp_path / f"{grid}.json")
    shutil.copy(
        default_tables_dir() / "karbon" / "sensitivity" / "rules.json",
        tmp_path / "karbon" / "sensitivity" / "rules.json",
    )
    (tmp_path / "karbon" / "notes.json").write_text('{"format": "something-else/1", "tables": 3}')
    (tmp_path / "karbon" / "list.json").write_text("[1, 2]")
    (tmp_path / "karbon" / "broken.json").write_text("{not json")
    with TestClient(create_app(store_path=None, workers=1, tables_dir=tmp_path)) as local:
        title = json.loads((tmp_path / f"{grid}.json").read_text())["tables"][0]["title"]
        assert local.get("/api/tables").json() == {"tables": [grid], "titles": {grid: title}}
        assert local.get(f"/api/tables/{grid}").json()["tables"][0]["rows"]
        for skipped in ("karbon/notes", "karbon/list", "karbon/broken", "karbon/sensitivity/rules"):
            response = local.get(f"/api/tables/{skipped}")
            assert response.status_code == 404 and "no canonical table" in response.json()["errors"]["table"]


def test_table_errors(client, tmp_path):
    for name in ("nope", "../pyproject", "karbon/../../pyproject"):
        response = client.get(f"/api/tables/{name}")
        errors = response.json()["errors"]  # (a client may fold ".." away: then no such endpoint)
        assert response.status_code == 404 and (
            "no canonical table" in errors.get("table", "") or errors.get("path", "").startswith("no endpoint")
        )
    raw = client.get("/api/tables/karbon%2F..%2F..%2Fpyproject")
    assert raw.status_code == 404 and "[project]" not in raw.text
    with TestClient(create_app(store_path=None, workers=1, tables_dir=tmp_path)) as empty:
        assert empty.get("/api/tables").json() == {"tables": [], "titles": {}}


def test_new_karbon_grid_cells_are_the_table_function_s_exact_values(client):
    from exactdice.karbon.tables import contest_cell

    body = {
        "row_axis": "peril",
        "row_values": "0,1",
        "column_axis": "consequence",
        "column_values": "1-2",
        "ability": 2,
        "challenge": 1,
        "pool": "4d6,3d8,2d10",
        "rule_sudden_death": "on",
    }
    code, data = answer(client, "/api/karbon/grid", body)
    assert data["status"] == "done", data
    result = data["result"]
    assert result["rows"] == ["0", "1"] and result["columns"] == ["1", "2"]
    assert result["row_label"] == "Peril P" and [m["name"] for m in result["metrics"]][0] == "P(win)"
    for r, peril in enumerate((0, 1)):
        for c, consequence in enumerate((1, 2)):
            cell = contest_cell(
                ability=2,
                challenge=1,
                consequence=consequence,
                peril=peril,
                pool="4d6,3d8,2d10",
                reserve="5d6",
                rules=("sudden_death=on",),
            )
            for metric in result["metrics"]:
                assert exact(metric["cells"][r][c]) == cell[metric["name"]]
    assert client.post("/api/karbon/grid", json=body).json()["cached"] is True


@pytest.mark.parametrize(
    "body, field, words",
    [
        ({"row_axis": "peril", "column_axis": "peril"}, "column_axis", "must differ"),
        ({"row_values": "1-20"}, "row_values", '"1-20" goes up to 20; Ability (A) goes from 0 to 15 on this page'),
        (
            {"row_values": "1-11", "column_values": "1-10"},
            "row_values",
            "11 x 10 = 110 cells, each one exact solve; at most 100 on this page (exactdice karbon table makes more)",
        ),
        ({"column_values": "x"}, "column_values", "is not a number"),
        ({"column_values": "2,2"}, "column_values", "names a value twice"),
        ({"column_values": "0-2"}, "column_values", '"0-2" goes down to 0; Challenge (C) goes from 1 to 15'),
        ({"pool": "zz"}, "pool", "is not a die"),
        ({"row_axis": "luck"}, "row_axis", "must be one of"),
        ({"player_dice": "d8"}, "player_dice", "unknown field"),
    ],
)
def test_new_grid_errors_are_named(client, body, field, words):
    response = client.post("/api/karbon/grid", json=body)
    assert response.status_code == 422
    errors = response.json()["errors"]
    assert field in errors and words in errors[field], errors


def test_a_mid_contest_position_matches_the_cli_state_file(client, tmp_path):
    import json

    from exactdice.karbon import read_state_file

    state = {
        "player_dice": "d8,d8",
        "narrator_dice": "d10",
        "pool": "2d6,d8",
        "reserve": "d6",
        "player_chips": 2,
        "narrator_chips": 1,
        "player_stack": 3,
        "narrator_stack": 0,
        "wins": 1,
        "losses": 0,
        "peril": 1,
        "consequence": 3,
    }
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    expected = contest_odds(read_state_file(path))
    code, data = answer(client, "/api/karbon/odds", state)
    assert data["status"] == "done", data
    shown = outcomes(data["result"]["outcomes"])
    for name in ("win", "loss", "tie", "never_ends"):
        assert shown[name] == getattr(expected, name)
    response = client.post("/api/karbon/odds", json={"wins": 1})
    assert response.status_code == 422 and "needs explicit hands" in response.json()["errors"]["wins"]
    full = client.post("/api/karbon/odds", json=dict(state, losses=1, wins=2))
    assert full.status_code == 422 and "track would be full" in full.json()["errors"]["wins"]


def test_a_worker_past_its_memory_cap_stops_with_a_message():
    # 300 MB of address space: a worker maps about 270 MB before it solves, and this contest
    # needs more; it must stop with a message about memory, not die silently
    with TestClient(create_app(store_path=None, workers=1, worker_memory=300 * 2**20)) as small:
        code, data = answer(small, "/api/karbon/odds", dict(MAIN_CONTEST, ability=5, challenge=5, consequence=3))
    assert data["status"] == "error"
    message = data["errors"].get("max_states") or data["errors"].get("form")
    assert "memory" in message, data


def test_validate_other_systems_against_their_exact_laws(client):
    from exactdice.validation import goodness_of_fit

    law = _library_outcomes("karst-death")  # death 3/4-ish: negative health 3, modifier 1
    counts = {name: round(1000 * p) for name, p in law.items()}
    body = dict(SYSTEM_BODIES["karst-death"], samples=sample_csv(counts))
    for attempt in ("solved", "cached"):
        code, data = answer(client, "/api/validate/karst-death", body)
        assert data["status"] == "done", data
        report = data["result"]["report"]
        assert report["p_value"] == goodness_of_fit(law, counts).p_value and report["fits"] is True
        assert data["result"]["exact"]["death"]["exact"] == fraction_text(law["death"])
    chronica = {"0": 10, "1": 80, "2": 10, "tie": 0}  # far from the exact law
    rows = ["winner"] + [name for name, count in chronica.items() for _ in range(count)]
    code, data = answer(
        client, "/api/validate/chronica", dict(SYSTEM_BODIES["chronica"], samples="\n".join(rows) + "\n")
    )
    assert data["result"]["report"]["fits"] is False
    expected = goodness_of_fit(_library_outcomes("chronica"), chronica)
    assert data["result"]["report"]["p_value"] == expected.p_value


def test_validate_unknown_system_and_other_system_field_errors(client):
    response = client.post("/api/validate/monopoly", json={})
    assert response.status_code == 404 and "unknown system 'monopoly'" in response.json()["errors"]["system"]
    response = client.post(
        "/api/validate/contingency", json={"difficulty": 6, "advantage": -1, "samples": "outcome\nfailure\n"}
    )
    assert response.status_code == 422 and ">= 0" in response.json()["errors"]["advantage"]
    response = client.post("/api/validate/chronica", json={"sides": "d6; d6", "samples": "outcome\n0\n"})
    assert response.status_code == 422
    assert "has no column 'winner'" in response.json()["errors"]["samples"]


def test_only_local_host_names_are_answered(client):
    assert client.get("/karbon", headers={"Host": "127.0.0.1:8000"}).status_code == 200
    assert client.get("/karbon", headers={"Host": "localhost:8000"}).status_code == 200
    rebound = client.get("/api/fields/karbon", headers={"Host": "evil.example:8000"})
    assert rebound.status_code == 400


def test_a_broken_store_is_a_message_not_a_traceback(tmp_path):
    bad = tmp_path / "broken.sqlite"
    with TestClient(create_app(store_path=bad, workers=1)) as broken:
        bad.write_bytes(b"this is not an SQLite database at all, " * 200)
        for url, body in (
            ("/api/karbon/odds", TINY_CONTEST),
            ("/api/exact/karst-death", {"negative_health": 2}),
            ("/api/karbon/grid", {"row_values": "1", "column_values": "1-2"}),
        ):
            response = broken.post(url, json=body)
            assert response.status_code == 500, (url, response.text)
            message = response.json()["errors"]["form"]
            assert "results store" in message and "Traceback" not in response.text


def test_validate_tests_every_column_the_cli_tests_with_the_same_verdict(client, tmp_path):
    """Issue 36: the page tested only the outcome column where the CLI tests all six."""
    import csv
    import json as json_module
    from contextlib import redirect_stdout

    from exactdice.cli.main import main

    samples = tmp_path / "s.csv"
    main_flags = ["-a", "1", "-c", "1", "-w", "1", "--pool", "2d8", "--reserve", "none"]
    with pytest.raises(SystemExit):
        main(["karbon", "simulate", *main_flags, "--n", "3000", "--seed", "3", "--out", str(samples)])
    rows = list(csv.DictReader(samples.open()))
    for row in rows:  # one column made wrong: a simulator that counts two rounds too many
        row["rounds"] = str(int(row["rounds"]) + 2)
    with samples.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    printed = io.StringIO()
    with redirect_stdout(printed), pytest.raises(SystemExit) as exit_:
        main(["validate", "karbon", "--samples", str(samples), *main_flags, "--json"])
    cli = json_module.loads(printed.getvalue())
    assert exit_.value.code == 1 and cli["fits"] is False
    body = {
        "ability": 1,
        "challenge": 1,
        "consequence": 1,
        "pool": "2d8",
        "reserve": "none",
        "samples": samples.read_text(),
    }
    code, data = answer(client, "/api/validate/karbon", body)
    assert data["status"] == "done", data
    page = data["result"]
    assert (
        set(page["columns"])
        == set(cli["columns"])
        == {"outcome", "rounds", "breaks", "glitches", "injuries", "conditions"}
    )
    assert page["fits"] is False and not page["columns"]["rounds"]["fits"]
    for name, report in cli["columns"].items():
        assert page["columns"][name]["p_value"] == report["p_value"], name
        assert page["columns"][name]["fits"] == report["fits"], name
