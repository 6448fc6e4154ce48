"""A bounded load test of ``exactdice serve`` on loopback: N clients, mixed fast and slow
jobs, for a fixed time (issue 36).

Each client loops until the time is up: most requests are fast (a page's field list, a
small dice distribution, a cached or tiny contest, a table file), some start a slow solve
(a mid-size Karbon contest, a grid, a Chronica contest) and follow it to its end or cancel
it. Reported: the latency of fast requests (median, 99th percentile, worst), whether every
slow job submitted reached an end (done, error or cancelled: none lost), and the server's
peak memory with its workers. Only 127.0.0.1 is contacted; the run stops by itself.

    python scripts/load_test.py --clients 50 --seconds 120
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

EXACTDICE = [sys.executable, "-m", "exactdice.cli.main"]

FAST = [
    ("GET", "/api/fields/karbon", None),
    ("GET", "/api/systems", None),
    ("GET", "/api/tables", None),
    ("POST", "/api/dist", {"expression": "3d6+2"}),
    ("POST", "/api/dist", {"expression": "4d6kh3"}),
    ("GET", "/karbon", None),
    ("GET", "/static/common.js", None),
    (
        "POST",
        "/api/karbon/odds",
        {"player_dice": "d6", "narrator_dice": "d10", "consequence": 1, "pool": "none", "reserve": "none"},
    ),
]
SLOW = [
    {"path": "/api/karbon/odds", "body": {"ability": 3, "challenge": 3, "consequence": 3, "peril": 1}},
    {"path": "/api/karbon/odds", "body": {"ability": 4, "challenge": 3, "consequence": 3, "peril": 1}},
    {"path": "/api/karbon/grid", "body": {"row_values": "1-2", "column_values": "1-2"}},
    {"path": "/api/exact/chronica", "body": {"sides": "d8,d8,d6; d10,d6; d8,d8"}},
]


class Load:
    def __init__(self, port: int, seconds: float, slow_share: float, seed: int):
        self.port, self.deadline, self.slow_share = port, time.monotonic() + seconds, slow_share
        self.seed = seed
        self.fast: list[float] = []
        self.by_path: dict[str, list[float]] = {}
        self.fast_failures: list[str] = []
        self.jobs: dict[str, str] = {}  # job id -> its last status
        self.slow_refused = 0
        self.lock = threading.Lock()

    def request(self, method, path, body=None, timeout=60):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            connection.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
            response = connection.getresponse()
            raw = response.read()
            try:
                return response.status, json.loads(raw)
            except ValueError:
                return response.status, None
        finally:
            connection.close()

    def client(self, number: int):
        rng = random.Random(self.seed * 1000 + number)
        while time.monotonic() < self.deadline:
            if rng.random() < self.slow_share:
                self.slow(rng)
            else:
                method, path, body = rng.choice(FAST)
                began = time.monotonic()
                try:
                    status, data = self.request(method, path, body)
                    if status not in (200, 202):
                        raise RuntimeError(f"HTTP {status}")
                    while path == "/api/dist" and data.get("status") in ("queued", "running"):
                        status, data = self.request("GET", f"/api/jobs/{data['job']}?wait=1")  # to the answer
                except Exception as error:  # noqa: BLE001 - counted, reported
                    with self.lock:
                        self.fast_failures.append(f"{path}: {error}")
                    continue
                with self.lock:
                    self.fast.append(time.monotonic() - began)
                    self.by_path.setdefault(f"{method} {path}", []).append(time.monotonic() - began)
                time.sleep(rng.uniform(0.05, 0.3))

    def slow(self, rng):
        job = rng.choice(SLOW)
        status, data = self.request("POST", job["path"], job["body"])
        if status == 200 and data and data.get("cached"):
            return
        if status != 202 or not data or "job" not in data:
            with self.lock:
                self.slow_refused += 1
            return
        identifier = data["job"]
        with self.lock:
            self.jobs[identifier] = data["status"]
        cancel_after = time.monotonic() + rng.uniform(1, 20) if rng.random() < 0.3 else None
        while data["status"] in ("queued", "running"):
            if cancel_after and time.monotonic() > cancel_after or time.monotonic() > self.deadline + 60:
                status, data = self.request("POST", f"/api/jobs/{identifier}/cancel", {})
                break
            status, data = self.request("GET", f"/api/jobs/{identifier}?wait=2")
            if status == 404:
                data = {"status": "lost"}
                break
        with self.lock:
            self.jobs[identifier] = data["status"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument(
        "--slow-share", type=float, default=0.05, help="share of a client's requests that are slow jobs"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--json", type=Path, default=None)
    arguments = parser.parse_args(argv)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"exactdice-load-{port}.log"
    server = subprocess.Popen(
        EXACTDICE + ["serve", "--port", str(port), "--no-cache", "--workers", str(arguments.workers)],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),
        start_new_session=True,
    )
    import psutil

    watched = psutil.Process(server.pid)
    peak = {"rss": 0, "processes": 0}
    stop = threading.Event()

    def sample():
        while not stop.wait(0.5):
            try:
                children = watched.children(recursive=True)
                total = watched.memory_info().rss + sum(child.memory_info().rss for child in children)
                peak["rss"] = max(peak["rss"], total)
                peak["processes"] = max(peak["processes"], 1 + len(children))
            except psutil.Error:
                pass

    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        load = Load(port, arguments.seconds, arguments.slow_share, arguments.seed)
        threading.Thread(target=sample, daemon=True).start()
        began = time.monotonic()
        clients = [threading.Thread(target=load.client, args=(number,)) for number in range(arguments.clients)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(arguments.seconds + 180)
        wall = time.monotonic() - began
    finally:
        stop.set()
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    fast = sorted(load.fast)
    ends = {}
    for status in load.jobs.values():
        ends[status] = ends.get(status, 0) + 1
    lost = sum(count for status, count in ends.items() if status not in ("done", "error", "cancelled"))
    text = log.read_text()
    result = {
        "clients": arguments.clients,
        "seconds": round(wall, 1),
        "fast_requests": len(fast),
        "fast_median_ms": round(1000 * statistics.median(fast), 1) if fast else None,
        "fast_p99_ms": round(1000 * fast[int(0.99 * (len(fast) - 1))], 1) if fast else None,
        "fast_max_ms": round(1000 * fast[-1], 1) if fast else None,
        "fast_failures": len(load.fast_failures),
        "slow_jobs": len(load.jobs),
        "slow_ends": ends,
        "slow_refused": load.slow_refused,
        "jobs_lost": lost,
        "peak_memory_mib": round(peak["rss"] / 2**20),
        "peak_processes": peak["processes"],
        "fast_p99_ms_by_request": {
            name: round(1000 * sorted(times)[int(0.99 * (len(times) - 1))], 1)
            for name, times in sorted(load.by_path.items())
        },
        "log_tracebacks": text.count("Traceback"),
    }
    print(json.dumps(result, indent=1))
    for failure in load.fast_failures[:10]:
        print("fast failure:", failure)
    if arguments.json:
        arguments.json.write_text(json.dumps(result, indent=1))
    ok = fast and result["fast_p99_ms"] < 1000 and lost == 0 and not load.fast_failures and not result["log_tracebacks"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
