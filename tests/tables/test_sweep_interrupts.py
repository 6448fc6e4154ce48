"""A sweep stopped by Ctrl-C, SIGTERM or SIGKILL of its main process: it ends at once, leaves no
worker behind, keeps its finished cells in an intact store, and a re-run gives the same table.

Each test starts ``exactdice karbon table`` over four Karbon cells of a second or two at
most each in a subprocess, waits until at least one cell is in the store, sends the signal, and
checks the process tree with psutil.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

# four cells (A3, C 2-3, W3, P 0-1) of about 0.4 s each on an idle fast 2-core machine and
# 1-2 s on a busy one: long enough that the signal lands while cells are still running
# (with A2 W2 cells of 0.1 s a fast machine finished all four before it was handled)
_TABLE = ["karbon", "table", "-a", "3", "-c", "2-3", "-w", "3", "-p", "0-1", "--workers", "2", "--format", "json"]
_EXIT_SECONDS = 2.0


def _command(store, output):
    return [sys.executable, "-m", "exactdice.cli.main", *_TABLE, "--store", str(store), "-o", str(output)]


def _stored_rows(store) -> int:
    if not os.path.exists(store):
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def _live(processes):
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process.pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def interrupt_after_first_row(command, store, signum, what="the sweep"):
    """Start *command*, wait until *store* holds a finished cell, send *signum*.

    Returns (exit code, seconds from the signal to the exit, the worker processes seen
    before it, stdout, stderr). Every wait has a timeout, so a command that ignores the
    signal fails the test instead of hanging it.
    """
    # Ctrl-C's default action in the command, even where this test runs in the background of
    # a shell without job control (which starts it with SIGINT ignored, and Python keeps that)
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 240
        while _stored_rows(store) < 1 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None, f"{what} finished before it could be interrupted"
        workers = psutil.Process(process.pid).children(recursive=True)
        assert workers, f"{what} runs its cells in worker processes"
        sent = time.monotonic()
        process.send_signal(signum)
        code = process.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
        out, err = process.communicate(timeout=30)
    return code, took, workers, out, err


def assert_workers_gone_and_store_intact(workers, store):
    """No worker outlives its parent (a SIGKILLed parent's workers notice and exit), and the
    store passes SQLite's integrity check."""
    deadline = time.monotonic() + _EXIT_SECONDS
    while _live(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live(workers) == []
    with sqlite3.connect(store) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.fixture(scope="module")
def reference_output(tmp_path_factory):
    """The table of an uninterrupted sweep."""
    folder = tmp_path_factory.mktemp("reference")
    subprocess.run(_command(folder / "s.sqlite", folder / "t.json"), check=True, timeout=300, capture_output=True)
    return (folder / "t.json").read_bytes()


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_an_interrupted_sweep_ends_cleanly_and_resumes(tmp_path, reference_output, signal_name):
    store, output = tmp_path / "s.sqlite", tmp_path / "t.json"
    code, took, workers, _, _ = interrupt_after_first_row(_command(store, output), store, getattr(signal, signal_name))
    if signal_name == "SIGKILL":
        assert code == -signal.SIGKILL
    else:
        assert code == 130
        assert took < _EXIT_SECONDS, f"{signal_name}: exit after {took:.2f} s"
    # no worker survives its parent; the store is intact and keeps the finished cells
    assert_workers_gone_and_store_intact(workers, store)
    kept = _stored_rows(store)
    assert 1 <= kept < 4
    assert not output.exists()
    # the re-run solves only the rest and writes the same table as an uninterrupted run
    rerun = subprocess.run(_command(store, output), capture_output=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _stored_rows(store) == 4
    assert output.read_bytes() == reference_output
