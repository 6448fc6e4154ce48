"""``karbon sensitivity`` and ``karbon design`` stopped by Ctrl-C (SIGINT): exit code 130 within
2 s, no traceback, no worker process left behind, the finished contests kept in the store.

Each test starts the command in a subprocess on 2 local workers, waits until at least one
contest is in the store, sends SIGINT and checks the process tree with psutil. Every wait
has a timeout, so a sweep that ignored the signal fails the test instead of hanging it.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "tables"))
from test_sweep_interrupts import _live, _stored_rows  # noqa: E402 (the sweep tests' process checks)

_EXIT_SECONDS = 2.0
# about 40 contests of 0.2-3 s (sensitivity) and 5 of 1-20 s (design): far from done
# when the first one lands in the store
COMMANDS = {
    "sensitivity": ["karbon", "sensitivity", "-a", "2", "-c", "2", "-w", "2", "-p", "1"],
    "design": ["karbon", "design", "--target", "win=0.5", "-a", "3", "-w", "2", "-p", "1",
               "--vary", "challenge=1-5", "--exhaustive"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_ctrl_c_stops_cleanly(tmp_path, name):
    store = tmp_path / "s.sqlite"
    command = [sys.executable, "-m", "exactdice.cli.main", *COMMANDS[name], "--workers", "2",
               "--store", str(store)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while _stored_rows(store) < 1 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None, "the command finished before it could be interrupted"
        workers = psutil.Process(process.pid).children(recursive=True)
        assert workers, "the contests run in worker processes"
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
        out, err = process.communicate(timeout=30)
    assert code == 130, err
    assert took < _EXIT_SECONDS, f"exit after {took:.2f} s"
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "Aborted.", err
    assert out == ""
    deadline = time.monotonic() + _EXIT_SECONDS
    while _live(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live(workers) == []
    with sqlite3.connect(store) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert _stored_rows(store) >= 1
