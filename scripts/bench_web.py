"""Benchmark: submit-to-answer time of `exactdice serve` for the README's main contest.

Side by side in one run, for ``karbon odds --ability 3 --challenge 2 --consequence 2
--peril 1``:

* the Python API (`contest_odds`) in this process: the solve alone;
* the web server over HTTP on 127.0.0.1 (uvicorn in a thread of this process), warm (the
  fork server already started) but with nothing cached: POST, then the job is followed
  with ``GET /api/jobs/ID?wait=...`` until the answer arrives, as the page does;
* the same request answered from the results store (asked before);
* the CLI ``exactdice karbon odds`` as a new process (start-up + solve), the peer a
  terminal user has;
* the main contest asked while a long solve (A5 v C5, W4 P2) runs in another "tab", and
  the time from Cancel to the long solve's worker process being gone.

Wall-clock times (the server's work is in other processes), best and median of N runs,
and the ratios to the Python API. Run: ``python scripts/bench_web.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MAIN = {"ability": 3, "challenge": 2, "consequence": 2, "peril": 1}
LONG = {"ability": 5, "challenge": 5, "consequence": 4, "peril": 2}
CLI = [sys.executable, "-m", "exactdice.cli.main", "karbon", "odds", "-a", "3", "-c", "2", "-w", "2", "-p", "1"]


def serve(store_path):
    """Start the app on a free port; returns (url, stop function)."""
    import socket

    import uvicorn

    from exactdice.web.app import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(store_path=store_path, workers=2)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)

    def stop():
        server.should_exit = True
        thread.join(10)
        app.state.jobs.shutdown()

    return f"http://127.0.0.1:{port}", stop


def ask(client, url, body) -> dict:
    """One submit-to-answer round trip, as the page makes it."""
    data = client.post(f"{url}/api/karbon/odds", json=body).json()
    while data["status"] in ("queued", "running"):
        data = client.get(f"{url}/api/jobs/{data['job']}?wait=1").json()
    assert data["status"] == "done", data
    return data


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        times.append(time.perf_counter() - began)
    return min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    import httpx2 as httpx

    from exactdice.karbon import ContestSetup, contest_odds

    api = timed(lambda: contest_odds(ContestSetup(**MAIN)), repeats)
    rows = [("Python API contest_odds (solve only)", api)]
    with tempfile.TemporaryDirectory() as folder:
        url, stop_plain = serve(None)  # no store: every request solves
        cached_url, stop_cached = serve(Path(folder) / "results.sqlite")
        try:
            with httpx.Client(timeout=120) as client:
                ask(client, url, dict(MAIN, peril=0))  # warm-up: the fork server starts
                answer = ask(client, url, MAIN)
                assert answer["result"]["provenance"]["states"] == contest_odds(ContestSetup(**MAIN)).states
                rows.append(("web, warm, not cached (POST + poll)", timed(lambda: ask(client, url, MAIN), repeats)))
                ask(client, cached_url, MAIN)
                rows.append(
                    ("web, answer from the results store", timed(lambda: ask(client, cached_url, MAIN), repeats))
                )
                long_job = client.post(f"{url}/api/karbon/odds", json=LONG).json()["job"]
                time.sleep(1.0)
                rows.append(
                    ("web, not cached, while a long solve runs", timed(lambda: ask(client, url, MAIN), repeats))
                )
                began = time.perf_counter()
                client.post(f"{url}/api/jobs/{long_job}/cancel")
                cancel_seconds = time.perf_counter() - began
        finally:
            stop_plain()
            stop_cached()
    rows.append(
        (
            "CLI exactdice karbon odds (new process)",
            timed(lambda: subprocess.run(CLI, check=True, capture_output=True), max(2, repeats // 2)),
        )
    )
    print(f"main contest {MAIN}, {repeats} runs; load average {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'':45} {'best':>9} {'median':>9}  median / API")
    for name, (best, median) in rows:
        print(f"{name:45} {1000 * best:7.1f}ms {1000 * median:7.1f}ms  {median / api[1]:.2f}x")
    print(
        f"Cancel of the long solve: the answer came {1000 * cancel_seconds:.1f} ms after the request, "
        "its worker process gone"
    )


if __name__ == "__main__":
    main()
