"""The icepool comparison of scripts/bench_chronica_peers.py gives identical exact answers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def test_icepool_agrees_exactly():
    pytest.importorskip("icepool")
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench_chronica_peers.py"
    spec = importlib.util.spec_from_file_location("bench_chronica_peers", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.exactdice_answer() == bench.icepool_answer()
