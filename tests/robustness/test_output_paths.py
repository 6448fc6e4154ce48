"""Every command that writes a file writes only regular files: a FIFO, a device, a folder is
refused (exit 2, one line naming the flag) and left as it was; a symlink is followed to its
target (the link stays a link); a write goes through a temporary file renamed into place."""

from __future__ import annotations

import os
import stat

import pytest
from exactdice.errors import InputError
from exactdice.output_files import check_output_path, open_output, write_output

# (arguments before the path, the flag, arguments after): every flag that writes a file
WRITERS = [
    (["karst", "table", "--table", "action", "--no-cache", "--format", "pdf", "-o"], "--output", []),
    (["karst", "table", "--table", "action", "--format", "md", "--store"], "--store", []),
    (["contingency", "simulate", "--dice", "d6,d6,d6", "--n", "10", "--out"], "--out", []),
    (["chronica", "simulate", "--side", "d6", "--side", "d6", "--n", "10", "--out"], "--out", []),
    (["karst", "simulate", "action", "--n", "10", "--out"], "--out", []),
    (["karbon", "simulate", "-a", "1", "-c", "1", "-w", "1", "--n", "10", "--out"], "--out", []),
    (["karbon", "odds", "-a", "1", "-c", "1", "-w", "1", "--strategy"], "--strategy", []),
    (["dist", "3d6", "--plot"], "--plot", []),
    (["karbon", "odds", "-a", "1", "-c", "1", "-w", "1", "--plot"], "--plot", []),
    (["contingency", "check", "--dice", "d6,d6,d6", "--plot"], "--plot", []),
    (["karst", "attack", "--defense", "12", "--plot"], "--plot", []),
    (
        ["karbon", "sensitivity", "-a", "1", "-c", "1", "-w", "1", "--no-cache", "--workers", "1", "--plot"],
        "--plot",
        [],
    ),
    (["karbon", "sensitivity", "-a", "1", "-c", "1", "-w", "1", "--workers", "1", "--store"], "--store", []),
    (
        ["karbon", "design", "--target", "win=0.5", "-a", "1", "--vary", "challenge=1-2", "--workers", "1", "--store"],
        "--store",
        [],
    ),
]


def _kinds(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    to_device = tmp_path / "to-null"
    to_device.symlink_to(os.devnull)
    to_fifo = tmp_path / "to-fifo"
    to_fifo.symlink_to(fifo)
    return {
        "a FIFO": fifo,
        "a directory": folder,
        "a link to a device": to_device,
        "a link to a FIFO": to_fifo,
        "a device": os.devnull,
    }


@pytest.mark.parametrize("before, flag, after", WRITERS, ids=[w[0][0] + " " + w[0][1] + " " + w[1] for w in WRITERS])
def test_no_writer_replaces_a_fifo_a_device_a_folder_or_a_link(tmp_path, before, flag, after, monkeypatch, run_cli):
    monkeypatch.setenv("EXACTDICE_STORE", str(tmp_path / "store.sqlite"))
    for name, path in _kinds(tmp_path).items():
        before_stat = os.lstat(path)
        result = run_cli(before + [str(path)] + after)
        assert result.exit_code == 2, (name, result.output)
        assert f"{flag}: " in result.output and "not a" in result.output, (name, result.output)
        assert "Traceback" not in result.output
        after_stat = os.lstat(path)
        assert (after_stat.st_mode, after_stat.st_ino) == (before_stat.st_mode, before_stat.st_ino), name
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)  # the device case, checked without root


def test_a_symlink_to_a_file_is_followed_and_stays_a_link(tmp_path, run_cli):
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = run_cli(["contingency", "simulate", "--dice", "d6,d6,d6", "--n", "5", "--out", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("trial,") and len(target.read_text().splitlines()) == 6
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # the replaced file keeps its mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]  # no temp left


def test_a_failed_write_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with open_output(target, "--out") as handle:
            handle.write("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_a_missing_folder_and_an_empty_name_name_the_flag(tmp_path):
    with pytest.raises(InputError, match=r"^--out: folder .* does not exist"):
        write_output(tmp_path / "no" / "t.txt", "x", "--out")
    with pytest.raises(InputError, match=r"^-o: empty file name"):
        check_output_path("", "-o")


def test_a_new_file_gets_the_umask_mode(tmp_path):
    mask = os.umask(0o027)
    try:
        written = write_output(tmp_path / "new.bin", b"\x00\x01", "--out")
    finally:
        os.umask(mask)
    assert written.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o640


def test_a_write_checks_the_path_once_and_never_sets_the_umask(tmp_path, monkeypatch):
    # os.umask can be read only by setting it: not safe while the web server's threads
    # create files, so a write must not call it
    import exactdice.output_files as output_files

    expected_mode = 0o666 & ~output_files._current_umask()
    checks = []
    real_check = output_files.check_output_path

    def counted_check(path, field):
        checks.append(path)
        return real_check(path, field)

    def no_umask(mask):
        raise AssertionError("os.umask called while writing")

    monkeypatch.setattr(output_files, "check_output_path", counted_check)
    monkeypatch.setattr(os, "umask", no_umask)
    written = output_files.write_output(tmp_path / "new.txt", "x", "--out")
    assert written == tmp_path / "new.txt" and written.read_text() == "x"
    assert stat.S_IMODE(os.stat(written).st_mode) == expected_mode
    assert len(checks) == 1
    with output_files.open_output(tmp_path / "other.csv", "--out") as handle:
        handle.write("a\n")
    assert len(checks) == 2
    assert stat.S_IMODE(os.stat(tmp_path / "other.csv").st_mode) == expected_mode


def test_the_umask_is_read_without_setting_it():
    import exactdice.output_files as output_files

    mask = os.umask(0o027)
    try:
        assert output_files._current_umask() == 0o027
    finally:
        os.umask(mask)
    assert output_files._current_umask() == mask
