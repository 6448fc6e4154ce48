"""The CLI at its edges (issue 36): a standard output that is full, closed or goes away,
input files that never end, counts past their limits, flags that contradict each other.

Each case runs the real ``exactdice`` entry point in a subprocess (the output device, the
file descriptors and the exit status are what is tested) with a timeout and an address-space
cap, so a regression shows as a failure, not a hung or swapped machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

EXACTDICE = [sys.executable, "-m", "exactdice.cli.main"]
#: address space a case may use (the issue's bar is 1 GiB resident; the interpreter with
#: numpy and scipy maps more than it touches)
ADDRESS_SPACE = 3 * 2**30


def _limit_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(arguments, *, stdout=subprocess.PIPE, timeout=60, preexec_fn=_limit_memory, **options):
    """``exactdice ARGUMENTS`` in a subprocess: (exit status, stdout text, stderr text, seconds)."""
    began = time.monotonic()
    completed = subprocess.run(EXACTDICE + list(arguments), stdout=stdout, stderr=subprocess.PIPE,
                               timeout=timeout, preexec_fn=preexec_fn, **options)
    out = completed.stdout.decode(errors="replace") if completed.stdout is not None else ""
    return completed.returncode, out, completed.stderr.decode(errors="replace"), time.monotonic() - began


def one_line_error(stderr: str, *needles: str) -> str:
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("exactdice: error: "), stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ----- standard output: full, closed, gone ------------------------------------------------------

@pytest.mark.parametrize("arguments", [["dist", "3d6"], ["--help"], ["dist", "--help"],
                                       ["karbon", "odds", "-a", "1", "-c", "1", "-w", "1", "--json"]])
def test_a_full_stdout_is_one_line_and_its_own_exit_code(arguments):
    with open("/dev/full", "wb") as full:
        code, _, stderr, _ = run(arguments, stdout=full)
    assert code == 74, stderr
    one_line_error(stderr, "cannot write the output to standard output", "No space left on device")


def test_a_closed_stdout_is_one_line_and_its_own_exit_code():
    code, _, stderr, _ = run(["dist", "3d6"], stdout=None, preexec_fn=lambda: (_limit_memory(), os.close(1)))
    assert code == 74, stderr
    one_line_error(stderr, "standard output is closed")


def _piped_into_head(arguments, lines=1):
    """``exactdice ARGUMENTS | head -n LINES``: exactdice's exit status and stderr."""
    producer = subprocess.Popen(EXACTDICE + arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=_limit_memory)
    head = subprocess.run(["head", "-n", str(lines)], stdin=producer.stdout, capture_output=True, timeout=60)
    producer.stdout.close()
    stderr = producer.stderr.read().decode()
    return producer.wait(60), head.stdout.decode(), stderr


def test_a_closed_pipe_exits_quietly_with_the_sigpipe_status():
    code, shown, stderr = _piped_into_head(["dist", "400d6"])
    assert shown.startswith("400d6: ")
    assert code == 141 and stderr == "", (code, stderr)


def test_validate_into_a_closed_pipe_does_not_claim_the_samples_misfit(tmp_path):
    """Exit 1 means "does not fit": a reader that went away is not a verdict."""
    samples = tmp_path / "s.csv"   # hit 3/5 exactly: fits
    samples.write_text("outcome\n" + "hit\n" * 6000 + "miss\n" * 4000)
    arguments = ["validate", "karst", "attack", "--samples", str(samples), "--modifier", "3",
                 "--defense", "12", "--damage", "d8"]
    assert run(arguments)[0] == 0
    reading, writing = os.pipe()
    os.close(reading)   # the reader is gone before anything is written
    try:
        code, _, stderr, _ = run(arguments, stdout=writing)
    finally:
        os.close(writing)
    assert code == 141 and stderr == "", (code, stderr)
