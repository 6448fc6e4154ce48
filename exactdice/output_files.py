"""One safe way to write a file the user named (``-o``, ``--out``, ``--strategy``, ``--store``).

Rules, the same for every command:

* Only regular files are written. A path that names a directory, a device (``/dev/null``,
  ``/dev/full``), a FIFO or a socket is refused with an `InputError` naming the flag; it is
  never replaced.
* A symlink is followed: the file it points to is written (and the link stays a link). A
  link whose target is not a regular file is refused like that target.
* The data goes to a temporary file in the target's folder, which is renamed over the
  target when complete, so a failed or interrupted write leaves the old file whole and a
  reader never sees half a file. An existing file keeps its permission bits.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> write_output(os.path.join(folder, "a.txt"), "hello\\n", "--out").read_text()
'hello\\n'
>>> write_output(folder, "x", "--out")
Traceback (most recent call last):
...
exactdice.errors.InputError: --out: ... is a directory, not a file; give a file name
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from exactdice.errors import InputError

__all__ = ["check_output_path", "open_output", "write_output", "STDOUT", "STDOUT_ALIASES"]

#: the file name that means standard output
STDOUT = "-"
#: names of standard output that are not files to replace (writing a temporary file beside
#: the target and renaming it would leave the shell's redirection pointing at the old file)
STDOUT_ALIASES = ("-", "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1")

_KINDS = (
    (stat.S_ISDIR, "a directory, not a file; give a file name"),
    (stat.S_ISCHR, "a character device, not a regular file; exactdice writes only regular files"),
    (stat.S_ISBLK, "a block device, not a regular file; exactdice writes only regular files"),
    (stat.S_ISFIFO, "a FIFO (named pipe), not a regular file; exactdice writes only regular files"),
    (stat.S_ISSOCK, "a socket, not a regular file; exactdice writes only regular files"),
)


def check_output_path(path, field: str) -> Path:
    """The regular file to write for the user's *path* (a symlink resolved to its target).

    Raises `InputError` naming *field* when the path (or a link's target) is not a regular
    file that may be created or replaced, or its folder does not exist.

    >>> check_output_path("/dev/null", "-o")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: -o: '/dev/null' is a character device, not a regular file; exactdice writes only regular files
    """
    given = os.fspath(path)
    if not given:
        raise InputError(field, "empty file name")
    target = Path(os.path.realpath(Path(given).expanduser()))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise InputError(field, f"cannot use {given!r}: {error.strerror or error}") from None
    if mode is not None and not stat.S_ISREG(mode):
        shown = f"{given!r} (a link to {str(target)!r})" if os.path.islink(given) else repr(given)
        for test, words in _KINDS:
            if test(mode):
                raise InputError(field, f"{shown} is {words}")
        raise InputError(field, f"{shown} is not a regular file")
    if not target.parent.is_dir():
        raise InputError(field, f"folder {str(target.parent)!r} of {given!r} does not exist")
    return target


@contextmanager
def open_output(path, field: str, *, binary: bool = False, newline: str | None = ""):
    """Open a temporary file next to *path* for writing; on success it replaces *path*.

    On an exception the temporary file is removed and *path* is untouched. ``OSError``
    while writing becomes an `InputError` naming *field*.

    ``-`` writes to standard output (a CSV into a pipe: ``--out -``).

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open_output(target, "--out") as handle:
    ...     _ = handle.write("a,b\\n")
    >>> open(target).read()
    'a,b\\n'
    """
    if os.fspath(path) == STDOUT:
        import sys

        yield sys.stdout.buffer if binary else sys.stdout
        return
    with _replacing(check_output_path(path, field), path, field, binary=binary, newline=newline) as stream:
        yield stream


def write_output(path, data: str | bytes, field: str) -> Path:
    """Write *data* (text as UTF-8, or bytes) to *path* by `open_output`; returns the file written."""
    target = check_output_path(path, field)
    with _replacing(target, path, field, binary=isinstance(data, bytes), newline="") as stream:
        stream.write(data)
    return target


@contextmanager
def _replacing(target: Path, given, field: str, *, binary: bool, newline: str | None):
    """A temporary file next to *target* (checked by `check_output_path`), renamed over it
    when the block ends without an exception."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as error:
        raise InputError(field, f"cannot write in {str(target.parent)!r}: {error.strerror or error}") from None
    try:
        if binary:
            stream = os.fdopen(handle, "wb")
        else:
            stream = os.fdopen(handle, "w", encoding="utf-8", newline=newline)
        with stream:
            yield stream
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise InputError(field, f"cannot write {os.fspath(given)!r}: {error.strerror or error}") from None
        raise


def _umask_by_setting() -> int:
    # os.umask can only be read by setting it, which is not safe while other threads create
    # files (the web server writes from threads): done once, at import, as the fallback
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: this process's umask when the module was imported (where /proc cannot tell the current one)
_UMASK_AT_IMPORT = _umask_by_setting()


def _current_umask() -> int:
    """The process's umask, read without changing it (Linux: ``/proc/self/status``);
    elsewhere the umask at import."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return _UMASK_AT_IMPORT


def _mode_for(target: Path) -> int:
    """Permission bits: those of the file replaced, else what ``open()`` would give (umask)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_current_umask()
