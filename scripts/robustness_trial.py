"""Malformed inputs against the CLI and the page's API: counts tracebacks, hangs and memory
blow-ups (issue 36's second round).

Two sets: inputs written by hand (not the issue's own reproducers), and inputs generated
from nothing but each command's ``--help`` (its flags and their metavars, mutated by kind:
numbers, dice, files, choices), the way a tester who has not seen the code would try them.
Each CLI case is one ``exactdice`` process with a timeout and its peak memory read from the
kernel (``wait4``); each API case one request to an ``exactdice serve`` on loopback, with
its log checked for tracebacks. Bounded: every case has a timeout, the run a case count.

    python scripts/robustness_trial.py                # both sets, a summary and the failures
    python scripts/robustness_trial.py --json out.json

A case fails when it prints a traceback, runs past its timeout (a hang), peaks past
``--memory`` (a blow-up), answers a bad request with HTTP 500, or leaves a malformed input
accepted silently where the case says it must be refused.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

EXACTDICE = [sys.executable, "-m", "exactdice.cli.main"]


# ----- the hand-written CLI cases: (command line, must be refused) ---------------------------------


def hand_cli_cases(folder: Path) -> list[tuple[str, bool]]:
    files = _files(folder)
    cases = [
        # numbers at and past their edges (False: a quick answer is right too, only no crash)
        ("karbon odds -a 15 -c 15 -w 20 -p 200 --max-states 1000", True),
        ("karbon odds -a 1 -c 1 --max-states 99999999999999999999", False),
        ("karbon odds -a 1 -c 1 --precision -1 --player-policy optimal", True),
        ("karbon odds -a 1 -c 1 --precision nan --player-policy optimal", True),
        ("karbon odds -a 1 -c 1 --max-seconds inf --player-policy optimal --bounds --precision 0.5", False),
        ("karbon odds -a 1 -c 1 --max-seconds 0 --player-policy optimal", True),
        ("karbon odds -a 1 -c 1 --max-seconds -5 --player-policy optimal", True),
        ("karbon odds -a 1 -c 1 --fortune 99999999", False),
        ("karbon odds -a 1 -c 1 --fallout 201", True),
        ("karbon odds -a 1 -c 1 --digits 0", True),
        ("karbon odds -a 1 -c 1 --digits 1001", True),
        ("karbon odds -a 1 -c 1 --digits -3", True),
        ("karbon simulate -a 1 -c 1 --n -5", True),
        ("karbon simulate -a 1 -c 1 --n 0", True),
        ("karbon simulate -a 1 -c 1 --n 100000000000000", True),
        ("karbon simulate -a 1 -c 1 --seed -1 --n 10", True),
        ("karbon trace -a 1 -c 1 --seed 99999999999999999999999", False),
        ("contingency simulate --n 99999999999999 --difficulty 6", True),
        ("chronica simulate --side d6 --side d6 --n 99999999999999", True),
        ("karst simulate action --n 99999999999999", True),
        ("karst order --modifier 999999999999", False),
        ("contingency check --difficulty 6 --advantage 999999", False),
        ("karst death --negative-health 99999999", False),
        ("karst attack --defense 99999999999 --damage d8", False),
        ("karst attack --defense 10 --damage d8 --health 3 --then-death --aid 99999999", True),
        # dice and lists
        ("dist 'd6' --digits 5 --exact", False),
        ("dist '(' ", True),
        ("dist '4d6kh'", True),
        ("dist '4d6kh5'", True),
        ("dist '100d6kh99'", True),
        ("dist '999d999'", True),
        ("dist 'd999999+d999999'", True),
        ("dist '" + "(" * 150 + "d6" + ")" * 150 + "'", True),
        ("dist '" + "-" * 200 + "d6'", True),
        ("dist '1" + "0" * 40 + "'", True),
        ("dist 'd6 d6'", True),
        ("dist 'dd6'", True),
        ("dist '2d6kl-1'", True),
        ("dist -- '-d6-d6-d6'", False),
        ("karbon odds --player-dice d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6 --narrator-dice d6", False),
        ("karbon odds --player-dice 1000d6 --narrator-dice d6", True),
        ("karbon odds --player-dice d6 --narrator-dice d6 -a 3", True),
        ("karbon odds --player-dice d6", True),
        ("karbon odds -a 1 -c 1 --pool 9999d6", True),
        ("karbon odds -a 1 -c 1 --pool d0", True),
        ("karbon odds -a 1 -c 1 --reserve 'd6;d8'", True),
        ("karbon odds -a 1 -c 1 --pool none --reserve none", True),
        ("chronica contest --side d6", True),
        ("chronica contest --side '' --side d6", True),
        ("chronica contest --side d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6 --side d6,d6,d6,d6,d6,d6,d6,d6,d6,d6,d6", False),
        ("chronica contest" + " --side d4,d6" * 9, True),
        ("chronica contest --side d7 --side d6", False),
        ("chronica contest --side d6/d8/d10/d12/d20/d6/d8 --side d6", False),
        ("contingency check --dice d6,d8,d10,d12,d20,d4 --difficulty 6", True),
        ("contingency check --dice d6,d8 --difficulty 6", True),
        # policies and rules
        ("karbon odds -a 1 -c 1 --player-policy 'draw=d6>d6'", True),
        ("karbon odds -a 1 -c 1 --player-policy 'risk=always;risk_take=d20'", True),
        ("karbon odds -a 1 -c 1 --narrator-policy 'plans_take=d12'", True),
        ("karbon odds -a 1 -c 1 --narrator-policy kind --bounds", True),
        ("karbon odds -a 1 -c 1 --player-policy OPTIMAL --max-seconds 5", False),
        ("karbon odds -a 1 -c 1 --rule 'sudden_death=on;injury_peril=on'", True),
        ("karbon odds -a 1 -c 1 --rule objective=win --objective score --player-policy optimal", True),
        ("karbon odds -a 1 -c 1 --explain", True),
        ("karbon odds -a 1 -c 1 --float --exact", True),
        ("karbon odds -a 1 -c 1 --show-draws --player-dice d6 --narrator-dice d6", True),
        # files: input
        (f"karbon odds --state {files['missing']}", True),
        (f"karbon odds --state {files['folder']}", True),
        (f"karbon odds --state {files['empty']}", True),
        (f"karbon odds --state {files['binary']}", True),
        (f"karbon odds --state {files['list']}", True),
        (f"karbon odds --state {files['wide']}", True),
        (f"karbon odds --state {files['latin1']}", True),
        ("karbon odds --state /proc/self/status", True),
        ("karbon odds --state /dev/urandom", True),
        ("karbon odds --state /dev/stdin", True),
        (f"karbon simulate -a 1 -c 1 --player-policy optimal --n 3 --strategy {files['state']}", True),
        (f"validate karbon -a 1 -c 1 --samples {files['binary']}", True),
        (f"validate karbon -a 1 -c 1 --samples {files['empty']}", True),
        (f"validate karbon -a 1 -c 1 --samples {files['ragged']}", True),
        (f"validate karbon -a 1 -c 1 --samples {files['longvalue']}", True),
        ("validate karbon -a 1 -c 1 --samples /dev/urandom", True),
        (f"validate karbon -a 1 -c 1 --samples {files['state']} --counts win=1", True),
        ("validate karbon -a 1 -c 1 --counts win=1,win=2", True),
        ("validate karbon -a 1 -c 1 --counts 'win=99999999999999999999999'", True),
        ("validate karbon -a 1 -c 1 --counts 'win=1' --alpha 2", True),
        ("validate karbon -a 1 -c 1 --counts 'win=1' --alpha nan", True),
        # files: output
        (
            f"karbon odds -a 1 -c 1 -w 1 --player-policy optimal --pool d6 --reserve none --strategy {files['folder']}",
            True,
        ),
        ("karbon odds -a 1 -c 1 -w 1 --player-policy optimal --pool d6 --reserve none --strategy /dev/stdout", True),
        ("dist 3d6 --plot /dev/full", True),
        (f"dist 3d6 --plot {files['missing_dir']}/p.png", True),
        ("karbon table -a 1-2 -c 1-2 --format png", True),
        (f"karbon table -a 1-2 -c 1-2 -o {folder}/t.html --format md", True),
        ("karbon table -a 1-200 -c 1-200", True),
        ("karbon table -a 1 -c 1", True),
        ("karbon table -a 5-1 -c 1-2", True),
        # the environment
        ("--max-memory 0 dist d6", True),
        ("--max-memory 99999999999999999999T dist d6", False),
        ("--max-memory -1G dist d6", True),
        ("serve --port -1", True),
        ("serve --workers 1000", True),
        ("serve --worker-memory nan", True),
        ("serve --host '' --port 1", True),
        ("serve --host 0.0.0.0 --allow-remote ''", True),
        ("serve --host 0.0.0.0 --allow-remote 'a b'", True),
        ("nosuchcommand", True),
        ("karbon odds --no-such-flag", True),
    ]
    return [(command, refused) for command, refused in cases]


def _files(folder: Path) -> dict:
    paths = {
        "missing": folder / "missing.json",
        "folder": folder / "dir",
        "empty": folder / "empty.json",
        "binary": folder / "binary.bin",
        "list": folder / "list.json",
        "wide": folder / "wide.json",
        "latin1": folder / "latin1.json",
        "state": folder / "state.json",
        "ragged": folder / "ragged.csv",
        "longvalue": folder / "long.csv",
        "missing_dir": folder / "no" / "such",
    }
    paths["folder"].mkdir(exist_ok=True)
    paths["empty"].write_text("")
    paths["binary"].write_bytes(bytes(range(256)) * 100)
    paths["list"].write_text("[1, 2, 3]")
    paths["wide"].write_text(
        '{"player_dice": "' + "d6," * 100_000 + 'd6", "narrator_dice": "d6", "pool": "none", '
        '"reserve": "none", "consequence": 1}'
    )
    paths["latin1"].write_bytes('{"player_dice": "d6é"}'.encode("latin-1"))
    paths["state"].write_text(
        '{"player_dice": "d8", "narrator_dice": "d8", "pool": "none", "reserve": "none", "consequence": 1}'
    )
    paths["ragged"].write_text("outcome,rounds\nwin,3\nloss\nwin,2,7\n")
    paths["longvalue"].write_text("outcome\n" + "w" * 500 + "\n")
    return {name: str(path) for name, path in paths.items()}


# ----- the set generated from --help alone ---------------------------------------------------------

_BAD_NUMBERS = ["-1", "0", "1e9", "99999999999999999999", "1.5", "NaN", "inf", "", "x", "٣", "0x1f", "--"]
_BAD_DICE = ["d", "d0", "0d6", "6", "d-6", "d6,", ",", "d6,,d8", "99999d6", "d6;d8", "🎲", "d6" * 400]
_BAD_FILES = ["/dev/zero", "/dev/full", "/proc", "/", "", "nonexistent/x.csv"]
_BAD_TEXT = ["", " ", "=", "a=b=c", ";", "x" * 5000, "\x00", "optimal;optimal", "draw=d6>"]

_COMMANDS = [
    "dist",
    "karbon odds",
    "karbon simulate",
    "karbon trace",
    "karbon table",
    "karbon design",
    "karbon sensitivity",
    "contingency check",
    "contingency simulate",
    "contingency table",
    "chronica contest",
    "chronica simulate",
    "karst action",
    "karst opposed",
    "karst attack",
    "karst death",
    "karst order",
    "validate karbon",
    "validate contingency",
    "validate chronica",
]
_OPTION = re.compile(r"^\s+(?:-\w, )?(--[\w-]+)(?: ([A-Z][\w\[\]., |=-]*|\w+))?\s", re.MULTILINE)


def help_cases(count: int, seed: int) -> list[tuple[str, bool]]:
    """Malformed command lines made from each command's --help only: every option that takes
    a value gets a bad one of the kind its metavar suggests."""
    rng = random.Random(seed)
    options = {}
    for command in _COMMANDS:
        shown = subprocess.run(
            EXACTDICE + command.split() + ["--help"], capture_output=True, text=True, timeout=120
        ).stdout
        options[command] = [
            (flag, metavar or "") for flag, metavar in _OPTION.findall(shown) if metavar and flag not in ("--help",)
        ]
    cases = []
    while len(cases) < count:
        command = rng.choice(_COMMANDS)
        if not options[command]:
            continue
        flag, metavar = rng.choice(options[command])
        kind = metavar.upper()
        if any(word in kind for word in ("INTEGER", "FLOAT", "N", "RANGE")) and "TEXT" not in kind:
            value = rng.choice(_BAD_NUMBERS)
        elif any(word in kind for word in ("FILE", "PATH")):
            value = rng.choice(_BAD_FILES)
        elif "DICE" in kind or "dice" in flag or flag in ("--pool", "--reserve", "--side", "--damage"):
            value = rng.choice(_BAD_DICE)
        else:
            value = rng.choice(_BAD_TEXT + _BAD_NUMBERS[:4])
        setup = {
            "karbon": "-a 1 -c 1 -w 1",
            "validate karbon": "-a 1 -c 1 --counts win=1,loss=1,tie=1",
            "contingency": "--difficulty 6",
            "chronica": "--side d6 --side d6",
            "karst attack": "--defense 10",
            "validate contingency": "--difficulty 6 --counts success=1",
            "validate chronica": "--counts 0=1",
        }
        base = next((text for prefix, text in setup.items() if command.startswith(prefix)), "")
        extra = "" if flag in base.split() else base
        cases.append((f"{command} {extra} {flag} {shlex.quote(value)}", False))  # refused or answered: no crash
    return cases


# ----- running them ----------------------------------------------------------------------------


def run_cli(command: str, timeout: float, memory: int, folder: Path | None = None) -> dict:
    """One case: exit status, seconds, peak resident memory (the kernel's, via wait4), output."""
    began = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            EXACTDICE + shlex.split(command),
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=folder,
            env={**os.environ, "EXACTDICE_MAX_MEMORY": str(memory)},
        )
        hung = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - began > timeout:
                hung = True
                os.killpg(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    return {
        "case": command,
        "code": code,
        "seconds": round(time.monotonic() - began, 2),
        "hung": hung,
        "peak_mib": round(usage.ru_maxrss / 1024),
        "traceback": "Traceback" in stderr + stdout,
        "stderr": stderr[-400:],
    }


# ----- the API ----------------------------------------------------------------------------------


def api_cases() -> list[tuple[str, str, bytes, dict]]:
    """(method, path, body, headers) of malformed requests to the page's API."""
    json_type = {"Content-Type": "application/json"}
    cases = []

    def post(path, data, headers=json_type):
        cases.append(("POST", path, data if isinstance(data, bytes) else json.dumps(data).encode(), headers))

    for path in (
        "/api/karbon/odds",
        "/api/dist",
        "/api/karbon/grid",
        "/api/exact/chronica",
        "/api/exact/karst-death",
        "/api/validate/karbon",
        "/api/validate/contingency",
    ):
        post(path, b"")
        post(path, b"null")
        post(path, b"[]")
        post(path, b'"text"')
        post(path, b"{" * 50_000)
        post(path, b'{"a": 1,}')
        post(path, b'{"\xff\xfe": 1}')
        post(path, {"x" * 10_000: 1})
        post(path, {f"field{i}": i for i in range(500)})
        post(path, b"{}", {"Content-Type": "text/csv"})
        post(path, b"{}", {"Content-Type": "application/json", "Content-Length": "abc"})
        post(path, {"ability": [1, 2]})
    for body in (
        {"ability": 10**40},
        {"ability": -1e308},
        {"ability": "1e3"},
        {"ability": True},
        {"consequence": "١"},
        {"player_dice": "d6" * 300},
        {"pool": "99999d6"},
        {"player_policy": "draw=d100"},
        {"max_states": 10**12},
        {"max_seconds": -1},
        {"max_seconds": "inf"},
        {"rule_sudden_death": "maybe"},
        {"player_chips": 5},
        {"player_dice": "d6", "narrator_dice": "d6", "wins": 9, "consequence": 1},
        {"ability": 15, "challenge": 15, "consequence": 10, "peril": 10, "max_states": 1000},
    ):
        post("/api/karbon/odds", body)
    for expression in (
        "d1000000",
        "1000d1000",
        "d6" + "+d6" * 400,
        "(" * 300,
        "d6kh7",
        "",
        5,
        None,
        "99999999999d6",
        "d6/2",
        "100d6kh50",
        "d999999+d999999",
    ):
        post("/api/dist", {"expression": expression})
    for body in (
        {"row_values": "1-1000000"},
        {"row_values": "-5"},
        {"column_values": "1,1"},
        {"row_axis": "pool"},
        {"row_values": "1-10", "column_values": "1-11"},
        {"fortune": "x"},
    ):
        post("/api/karbon/grid", body)
    for system, body in (
        ("chronica", {"sides": "d8;" * 12 + "d8"}),
        ("chronica", {"sides": "d7; d6"}),
        ("chronica", {"sides": ""}),
        ("contingency", {"difficulty": 10**9}),
        ("karst-order", {"modifiers": ",".join(["0"] * 5000)}),
        ("karst-attack", {"damage": "1000d1000", "defense": 10}),
        ("nosuch", {}),
    ):
        post(f"/api/exact/{system}", body)
    for samples in (
        "",
        "outcome\n",
        "\x00" * 1000,
        "outcome\n" + "x" * 2_000_000 + "\n",
        "outcome\n" + "".join(f"v{i}\n" for i in range(200_000)),
        "a,b\n1\n",
    ):
        post("/api/validate/karbon", {"ability": 1, "challenge": 1, "samples": samples})
    for path in (
        "/api/jobs/../../etc/passwd",
        "/api/jobs/%00",
        "/api/jobs/1-xx?wait=9999",
        "/api/jobs/1-xx?wait=-1",
        "/api/tables/../../README",
        "/api/tables/%2e%2e%2fsecret",
        "/api/fields/../../x",
        "/static/../app.py",
    ):
        cases.append(("GET", path, b"", {}))
    cases.append(("DELETE", "/api/karbon/odds", b"", {}))
    cases.append(("POST", "/api/jobs/nonexistent/cancel", b"{}", json_type))
    return cases


def run_api(cases, timeout: float, memory: int, folder: Path) -> tuple[list[dict], dict]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = folder / "serve.log"
    server = subprocess.Popen(
        EXACTDICE + ["serve", "--port", str(port), "--no-cache", "--worker-memory", "2"],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),
        start_new_session=True,
    )
    import psutil

    watched = psutil.Process(server.pid)
    peak = 0
    try:
        _wait_port(port, 90)
        results = []
        for method, path, body, headers in cases:
            began = time.monotonic()
            status, data, error = _request(port, method, path, body, headers, timeout)
            job = data.get("job") if isinstance(data, dict) else None
            while job and data.get("status") in ("queued", "running") and time.monotonic() - began < timeout:
                status, data, error = _request(port, "GET", f"/api/jobs/{job}?wait=1", b"", {}, timeout)
            answered = time.monotonic() - began if not job else None
            long_job = bool(job and isinstance(data, dict) and data.get("status") in ("queued", "running"))
            if long_job:  # a long solve by request (progress, Cancel): cancelled here, not a hang
                _request(port, "POST", f"/api/jobs/{job}/cancel", b"{}", {"Content-Type": "application/json"}, 10)
            seconds = answered if answered is not None else 0.0
            try:
                peak = max(
                    peak,
                    watched.memory_info().rss
                    + sum(child.memory_info().rss for child in watched.children(recursive=True)),
                )
            except psutil.Error:
                pass
            results.append(
                {
                    "case": f"{method} {path} {body[:80]!r}",
                    "code": status,
                    "seconds": round(seconds, 2),
                    "hung": seconds > timeout or error == "timeout",
                    "server_error": status == 500,
                    "error": error,
                    "long_job_cancelled": long_job,
                }
            )
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    text = log.read_text()
    return results, {
        "log_tracebacks": text.count("Traceback"),
        "peak_server_mib": round(peak / 2**20),
        "log_tail": text[-2000:],
    }


def _wait_port(port, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _request(port, method, path, body, headers, timeout):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body or None, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        return response.status, data, None
    except socket.timeout:
        return None, None, "timeout"
    except (ConnectionError, http.client.HTTPException) as error:
        return None, None, type(error).__name__
    finally:
        connection.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--help-cases", type=int, default=120, help="cases generated from --help")
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--timeout", type=float, default=30, help="seconds a case may take (a hang past it)")
    parser.add_argument("--memory", type=int, default=2**30, help="bytes of peak memory past which a case blew up")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    arguments = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="exactdice-robustness-"))
    sets = {
        "cli, written": hand_cli_cases(folder),
        "cli, from --help": help_cases(arguments.help_cases, arguments.seed),
    }
    report = {}
    with ThreadPoolExecutor(arguments.parallel) as pool:
        for name, cases in sets.items():
            results = list(
                pool.map(
                    lambda case: dict(
                        run_cli(case[0], arguments.timeout, arguments.memory, folder), must_refuse=case[1]
                    ),
                    cases,
                )
            )
            report[name] = results
    api_results, server = run_api(api_cases(), arguments.timeout, arguments.memory, folder)
    report["api, written"] = api_results
    failures = []
    print(
        f"{'set':<18} {'cases':>5} {'tracebacks':>10} {'hangs':>5} {'blow-ups':>8} {'500s':>4} "
        f"{'not refused':>11} {'max s':>6} {'max MiB':>7}"
    )
    for name, results in report.items():
        tracebacks = sum(result.get("traceback", False) for result in results)
        hangs = sum(result["hung"] for result in results)
        blowups = sum(result.get("peak_mib", 0) * 2**20 > arguments.memory for result in results)
        errors = sum(result.get("server_error", False) for result in results)
        accepted = sum(result.get("must_refuse", False) and result["code"] == 0 for result in results)
        print(
            f"{name:<18} {len(results):>5} {tracebacks:>10} {hangs:>5} {blowups:>8} {errors:>4} {accepted:>11} "
            f"{max(result['seconds'] for result in results):>6} "
            f"{max(result.get('peak_mib', 0) for result in results):>7}"
        )
        failures += [
            result
            for result in results
            if result.get("traceback")
            or result["hung"]
            or result.get("server_error")
            or result.get("peak_mib", 0) * 2**20 > arguments.memory
            or (result.get("must_refuse") and result["code"] == 0)
        ]
    print(
        f"server: {server['log_tracebacks']} tracebacks in its log, peak {server['peak_server_mib']} MiB "
        f"(with its workers); long jobs cancelled at the timeout: "
        f"{sum(result.get('long_job_cancelled', False) for result in api_results)}"
    )
    for failure in failures:
        print("FAILED", json.dumps(failure)[:600])
    if arguments.json:
        arguments.json.write_text(json.dumps({"sets": report, "server": server}, indent=1))
    return 1 if failures or server["log_tracebacks"] else 0


if __name__ == "__main__":
    sys.exit(main())
