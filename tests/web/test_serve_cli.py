"""``exactdice serve`` as a user starts it: a real process on 127.0.0.1, and its flag errors."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

SERVE = [sys.executable, "-m", "exactdice.cli.main", "serve"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_answers_on_localhost_and_stops(tmp_path):
    port = _free_port()
    store = tmp_path / "results.sqlite"
    process = subprocess.Popen(
        SERVE + ["--port", str(port), "--store", str(store)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/karbon", timeout=5) as page:
                    assert page.status == 200 and "Karbon contest calculator" in page.read().decode()
                break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        # bound to the loopback address only (the default --host): ss's local-address column
        try:
            listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True)
        except FileNotFoundError:
            listening = None
        if listening is not None and listening.returncode == 0 and listening.stdout.strip():
            local = [line.split()[3] for line in listening.stdout.strip().splitlines()]
            assert local == [f"127.0.0.1:{port}"], listening.stdout
        assert store.exists()
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--port", "0"], "exactdice: error: --port: must be from 1 to 65535, got 0"),
        (["--port", "70000"], "exactdice: error: --port: must be from 1 to 65535, got 70000"),
        (["--workers", "0"], "exactdice: error: --workers: must be from 1 to 64, got 0"),
        (["--worker-memory", "0.1"], "exactdice: error: --worker-memory: must be from 0.5 to 1024 (GiB), got 0.1"),
        (["--no-cache", "--store", "x.sqlite"], "exactdice: error: --no-cache: contradicts --store (give one of them)"),
    ],
)
def test_serve_flag_errors(arguments, message):
    result = subprocess.run(SERVE + arguments, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.strip() == message


def test_serve_refuses_a_store_that_is_not_a_database(tmp_path):
    bad = tmp_path / "not-a-store.sqlite"
    bad.write_text("hello, I am not SQLite" * 100)
    result = subprocess.run(
        SERVE + ["--store", str(bad), "--port", str(_free_port())], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.startswith("exactdice: error: --store: results store") and "corrupt" in result.stderr
    assert "Traceback" not in result.stderr


# ----- the network: loopback only unless --allow-remote, then a token (issue 36) --------------


def test_a_port_in_use_and_a_bad_host_are_one_line_errors():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(SERVE + ["--port", str(port), "--no-cache"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.strip() == (
        f"exactdice: error: --port: port {port} on 127.0.0.1 is in use (another program listens there); "
        "choose another with --port"
    )
    for host, words in (
        ("no.such.host.invalid", "--host: cannot use 'no.such.host.invalid'"),
        ("192.0.2.1", "--host: 192.0.2.1 is not an address of this machine"),
    ):
        result = subprocess.run(
            SERVE + ["--host", host, "--port", str(_free_port()), "--no-cache"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2 and result.stderr.startswith(f"exactdice: error: {words}"), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_binding_past_loopback_needs_allow_remote():
    result = subprocess.run(
        SERVE + ["--host", "0.0.0.0", "--port", str(_free_port()), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(
        "exactdice: error: --host: 0.0.0.0 is reachable from other machines; to serve them add --allow-remote NAME"
    )


def _wait_listening(port, process):
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return
        except OSError:
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.2)


def _get(port, path, host="127.0.0.1", headers=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_allow_remote_warns_keeps_the_host_check_and_needs_the_token():
    import os

    port = _free_port()
    process = subprocess.Popen(
        SERVE + ["--host", "0.0.0.0", "--port", str(port), "--no-cache", "--allow-remote", "dice.example"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "EXACTDICE_SERVE_TOKEN": "s3cret"},
    )
    try:
        _wait_listening(port, process)
        assert _get(port, "/karbon", host="dice.example:8000") == 200  # pages: no token
        assert _get(port, "/api/systems", host="dice.example") == 401  # the API: the token
        assert _get(port, "/api/systems", host="dice.example", headers={"X-Exactdice-Token": "wrong"}) == 401
        assert _get(port, "/api/systems", host="dice.example", headers={"X-Exactdice-Token": "s3cret"}) == 200
        assert _get(port, "/api/systems?token=s3cret", host="localhost") == 200
        assert _get(port, "/api/systems", host="evil.example", headers={"X-Exactdice-Token": "s3cret"}) == 400
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert "WARNING: open to the network on 0.0.0.0" in stderr and "Names answered: dice.example" in stderr
    assert "token s3cret  (open http://dice.example:" in stderr and "Traceback" not in stderr
