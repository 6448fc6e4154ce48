"""Benchmarks of the web server's submit-to-answer time for the README's main contest.

Skipped by default (``--benchmark-skip``); run with
``pytest tests/web/test_bench_web.py --benchmark-only``. The side-by-side figures (Python
API, web warm, web cached, CLI process) come from ``scripts/bench_web.py``.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from exactdice.web.app import create_app

from .contests import MAIN_CONTEST


def _ask(client, body):
    data = client.post("/api/karbon/odds", json=body).json()
    while data["status"] in ("queued", "running"):
        data = client.get(f"/api/jobs/{data['job']}?wait=1").json()
    return data


@pytest.fixture(scope="module")
def uncached():
    with TestClient(create_app(store_path=None, workers=2)) as client:
        _ask(client, dict(MAIN_CONTEST, peril=0))  # the fork server starts
        yield client


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    store = tmp_path_factory.mktemp("bench-store") / "results.sqlite"
    with TestClient(create_app(store_path=store, workers=2)) as client:
        _ask(client, MAIN_CONTEST)
        yield client


def test_benchmark_web_main_contest_warm(benchmark, uncached):
    data = benchmark.pedantic(_ask, args=(uncached, MAIN_CONTEST), rounds=5, iterations=1)
    assert data["status"] == "done" and data["result"]["provenance"]["states"] == 450


def test_benchmark_web_main_contest_cached(benchmark, cached):
    data = benchmark.pedantic(_ask, args=(cached, MAIN_CONTEST), rounds=20, iterations=1)
    assert data["cached"] is True and data["result"]["provenance"]["states"] == 450
