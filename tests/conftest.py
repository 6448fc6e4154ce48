"""Fixtures every test folder may use."""

import pytest


@pytest.fixture
def python_walk(monkeypatch):
    """Explore Karbon with the Python walk (the reference): for tests of its own parts
    (caches, keyed expansion, exploring workers, a patched rule)."""
    monkeypatch.setenv("EXACTDICE_WALK", "python")
