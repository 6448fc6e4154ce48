"""The package as a user gets it: ``python -m build`` makes an sdist and a wheel that
``twine check`` passes, and the wheel installed in a fresh venv (not this checkout) runs the
main command, prints its version and serves the canonical tables on the web page."""

from __future__ import annotations

import json
import site
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

import exactdice

ROOT = Path(__file__).parents[2]
TABLE_FILES = sorted(
    path.relative_to(ROOT / "tables").with_suffix("").as_posix() for path in (ROOT / "tables").glob("*/*.json")
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The sdist and wheel of this checkout (the build fetches its backend from the index)."""
    pytest.importorskip("build", reason="the docs extra installs build and twine")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """A fresh venv holding only the wheel; its dependencies are this environment's (a .pth
    file), so nothing is downloaded and this checkout is not on its path."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    new_site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (new_site / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    wheel = next(built.glob("*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    return venv


def test_twine_check_passes(built):
    pytest.importorskip("twine")
    files = sorted(str(path) for path in built.iterdir())
    assert len(files) == 2 and {Path(name).suffix for name in files} == {".gz", ".whl"}
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_wheel_holds_the_package_data(built):
    names = set(zipfile.ZipFile(next(built.glob("*.whl"))).namelist())
    assert "exactdice/py.typed" in names
    assert {"exactdice/web/templates/karbon.html", "exactdice/web/static/tables.js"} <= names
    assert {f"exactdice/tables/canonical/{name}.json" for name in TABLE_FILES} <= names
    assert not any(name.endswith((".pdf", ".png", ".html")) for name in names if "/canonical/" in name)
    assert any(name.endswith("licenses/LICENSE") for name in names)
    # the compiled parts, built for this machine (where a compiler is: the build then has them)
    compiled = ("karbon/_walk", "markov/_graph", "markov/_interval", "markov/_exact_pass", "markov/_exact_systems")
    for module in (*compiled, "markov/_gmp_cpu"):
        assert any(name.startswith(f"exactdice/{module}") and name.endswith(".so") for name in names), module


def test_the_sdist_holds_the_compiled_parts_sources(built):
    import tarfile

    with tarfile.open(next(built.glob("*.tar.gz"))) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {
        "setup.py",
        "exactdice/karbon/_walk.pyx",
        "exactdice/markov/_graph.pyx",
        "exactdice/markov/_graph.pxd",
        "exactdice/markov/_interval.pyx",
        "exactdice/markov/_mapped.h",
        "exactdice/markov/_exact_pass.pyx",
        "exactdice/markov/_exact_systems.pyx",
        "exactdice/markov/_gmp_cpu.pyx",
        "exactdice/markov/_loaded.pxd",
    } <= names


def test_the_installed_wheel_runs_the_main_command(installed, tmp_path):
    exe = str(installed / "bin" / "exactdice")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip().endswith(exactdice.__version__), version
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import exactdice; print(exactdice.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert str(installed) in where and str(ROOT) not in where
    odds = subprocess.run(
        [exe, "karbon", "odds", "--ability", "3", "--challenge", "2", "--consequence", "2", "--peril", "1"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert odds.returncode == 0, odds.stderr
    assert "P(win)   15.9 %" in odds.stdout
    assert "not built" not in odds.stderr  # the compiled walk explored it
    compiled = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "from exactdice.karbon.compiled import compiled_available; print(compiled_available())",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert compiled.strip() == "True"


def test_the_installed_wheel_serves_the_canonical_tables(installed, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(installed / "bin" / "exactdice"), "serve", "--port", str(port), "--no-cache"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tables", timeout=5) as answer:
                    listed = json.loads(answer.read())
                break
            except OSError:
                assert server.poll() is None, server.communicate()
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.2)
        assert sorted(listed["tables"]) == TABLE_FILES
    finally:
        server.terminate()
        server.communicate(timeout=30)
