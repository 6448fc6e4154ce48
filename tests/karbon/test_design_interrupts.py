"""``karbon sensitivity`` and ``karbon design`` stopped by Ctrl-C (SIGINT): exit code 130 within
2 s, no traceback, no worker process left behind, the finished contests kept in the store.

Each test starts the command in a subprocess on 2 local workers, waits until at least one
contest is in the store, sends SIGINT and checks the process tree with psutil. Every wait
has a timeout, so a sweep that ignored the signal fails the test instead of hanging it.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "tables"))
from test_sweep_interrupts import (  # noqa: E402 (the sweep tests' process checks)
    _stored_rows,
    assert_workers_gone_and_store_intact,
    interrupt_after_first_row,
)

_EXIT_SECONDS = 2.0
# about 40 contests of 0.2-3 s (sensitivity) and 5 of 1-20 s (design): far from done
# when the first one lands in the store
COMMANDS = {
    "sensitivity": ["karbon", "sensitivity", "-a", "2", "-c", "2", "-w", "2", "-p", "1"],
    "design": [
        "karbon",
        "design",
        "--target",
        "win=0.5",
        "-a",
        "3",
        "-w",
        "2",
        "-p",
        "1",
        "--vary",
        "challenge=1-5",
        "--exhaustive",
    ],
    # screened: the screens and the batches share one pool, which Ctrl-C must end too
    "screened design": [
        "karbon",
        "design",
        "--target",
        "win=0.5",
        "-a",
        "3",
        "-w",
        "2",
        "-p",
        "1",
        "--vary",
        "challenge=1-5",
        "--tolerance",
        "50%",
    ],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_ctrl_c_stops_cleanly(tmp_path, name):
    store = tmp_path / "s.sqlite"
    command = [sys.executable, "-m", "exactdice.cli.main", *COMMANDS[name], "--workers", "2", "--store", str(store)]
    code, took, workers, out, err = interrupt_after_first_row(command, store, signal.SIGINT, what="the command")
    assert code == 130, err
    assert took < _EXIT_SECONDS, f"exit after {took:.2f} s"
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "Aborted.", err
    assert out == ""
    assert_workers_gone_and_store_intact(workers, store)
    assert _stored_rows(store) >= 1
