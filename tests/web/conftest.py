"""Fixtures of the web tests: the app on a real port, and a real headless Chromium.

The browser is Debian's Chromium driven through its own chromedriver
(``/usr/bin/chromium``, ``/usr/bin/chromedriver``); nothing downloads a browser. When
either is missing the browser tests are skipped with the reason printed.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("EXACTDICE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EXACTDICE_CHROMEDRIVER", "/usr/bin/chromedriver")


def browser_missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) and os.access(path, os.X_OK)):
            return (
                f"{path} is not installed (apt-get install chromium chromium-driver); "
                "the browser tests need Debian's Chromium and its driver"
            )
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install -e '.[test]')"
    return None


def pytest_report_header(config):
    reason = browser_missing_reason()
    return [f"web browser tests: {'SKIPPED: ' + reason if reason else 'Chromium at ' + CHROMIUM}"]


def screenshot_dir(tmp_path_factory) -> Path:
    """Where the page screenshots go: $EXACTDICE_SCREENSHOT_DIR (e.g. tables/web) or a temp dir."""
    chosen = os.environ.get("EXACTDICE_SCREENSHOT_DIR")
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("screenshots")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RunningServer:
    """The app served by uvicorn on 127.0.0.1 in a thread of the test process."""

    def __init__(self, store_path):
        import uvicorn

        from exactdice.web.app import create_app

        self.app = create_app(store_path=store_path, workers=2)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc_info):
        self.server.should_exit = True
        self.thread.join(15)
        self.app.state.jobs.shutdown()
        return False


@pytest.fixture(scope="session")
def live_server(tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "results.sqlite"
    with RunningServer(store) as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    reason = browser_missing_reason()
    if reason:
        print(f"\nSKIPPING browser tests: {reason}")
        pytest.skip(reason)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not fetch anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="exactdice-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1200,1300",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory):
    return screenshot_dir(tmp_path_factory)
