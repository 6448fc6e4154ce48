"""One way to read a file the user named (``--state``, ``--strategy``, ``--samples``) and a
JSON document anyone sent: every failure is an `InputError` naming the flag, never a
traceback, a hang or a blow-up.

Refused before anything is read: a missing file, a folder, and every file that is not a
regular file (a FIFO would wait forever for a writer, ``/dev/zero`` never ends: neither can
be bounded), a file larger than its kind's byte limit (`MAX_JSON_BYTES`, `MAX_CSV_BYTES`),
and a JSON file whose parsed form would not fit the memory budget
(`exactdice.limits.memory_budget`). Then: text that is not UTF-8 or not JSON, nesting
deeper than `MAX_JSON_DEPTH` (counted before parsing, `json_depth`), and an object that
repeats a key (``json`` would keep the last one silently). The parse itself runs under an
address-space cap of what the budget leaves, so even a file built to parse into far more
memory than its size stops with a message.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "s.json")
>>> _ = open(path, "w").write('{"a": 1, "a": 2}')
>>> read_json_file(path, "--state")
Traceback (most recent call last):
...
exactdice.errors.InputError: --state: ... repeats the key "a" (each key may appear once)
>>> read_json_file("/dev/zero", "--state")
Traceback (most recent call last):
...
exactdice.errors.InputError: --state: /dev/zero is a character device, not a regular file; exactdice reads only regular files (a device or FIFO may never end)
"""

from __future__ import annotations

import json
import os
import re
import stat
from contextlib import contextmanager

from exactdice.errors import InputError, TooLargeError

__all__ = [
    "read_json_file",
    "read_json_bytes",
    "flat_json_object",
    "open_text_file",
    "check_input_file",
    "json_depth",
    "MAX_JSON_BYTES",
    "MAX_CSV_BYTES",
    "MAX_JSON_DEPTH",
    "JSON_MEMORY_FACTOR",
]

#: the largest JSON file read (a strategy of a few hundred thousand decisions is ~100 MB)
MAX_JSON_BYTES = 512 * 1024 * 1024
#: the largest CSV file of samples read (it is streamed: ~10^7 rows of several columns)
MAX_CSV_BYTES = 4 * 1024**3
#: the deepest nesting of lists and objects read (a strategy file nests 5 levels)
MAX_JSON_DEPTH = 64
#: parsed JSON takes about this many times its text in memory (3.5x measured on a strategy
#: file; a file of many small lists more, which the parse's address-space cap catches)
JSON_MEMORY_FACTOR = 4

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise _RepeatedKey(key)
        result[key] = value
    return result


def check_input_file(path, field: str, kind: str, max_bytes: int | None = None) -> int:
    """The size in bytes of the regular file *path*, checked without opening it (opening a
    FIFO waits for a writer): a missing file, a folder, a device, FIFO or socket, or a file
    past *max_bytes* is an `InputError` naming *field* (*kind* says what file it should be).

    >>> check_input_file("/no/such/file.csv", "samples", "CSV")
    Traceback (most recent call last):
    exactdice.errors.InputError: samples: no such file: /no/such/file.csv
    """
    shown = os.fspath(path)
    try:
        mode = os.stat(path)
    except FileNotFoundError:
        raise InputError(field, f"no such file: {shown}") from None
    except OSError as error:
        raise InputError(field, f"cannot read {shown}: {error.strerror or error}") from None
    if stat.S_ISDIR(mode.st_mode):
        raise InputError(field, f"{shown} is a directory, not a {kind} file")
    for test, words in _KINDS:
        if test(mode.st_mode):
            raise InputError(
                field,
                f"{shown} is {words}, not a regular file; exactdice reads only regular "
                "files (a device or FIFO may never end)",
            )
    if not stat.S_ISREG(mode.st_mode):
        raise InputError(field, f"{shown} is not a regular file")
    if max_bytes is not None and mode.st_size > max_bytes:
        raise TooLargeError(
            field, f"{shown} has {mode.st_size:,} bytes, more than the limit of {max_bytes:,} for a {kind} file"
        )
    return mode.st_size


def open_text_file(path, field: str, kind: str, max_bytes: int | None = None, **options):
    """*path* opened as UTF-8 text (``options`` go to `open`), after `check_input_file`;
    a file that cannot be opened is an `InputError` naming *field*.

    >>> open_text_file("/dev/null", "samples", "CSV")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: samples: /dev/null is a character device, not a regular file; ...
    """
    check_input_file(path, field, kind, max_bytes)
    try:
        return open(path, encoding="utf-8", **options)
    except OSError as error:
        raise InputError(field, f"cannot read {os.fspath(path)}: {error.strerror or error}") from None


def read_json_file(path, field: str):
    """The parsed JSON document in the file *path*; any problem is an `InputError` naming
    *field*, a file too large for the byte limit or the memory budget a `TooLargeError`."""
    shown = os.fspath(path)
    size = check_input_file(path, field, "JSON", MAX_JSON_BYTES)
    _refuse_past_the_budget(size, shown, field)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_JSON_BYTES + 1)  # bounded even if the file grows meanwhile
    except OSError as error:
        raise InputError(field, f"cannot read {shown}: {error.strerror or error}") from None
    if len(data) > MAX_JSON_BYTES:
        raise TooLargeError(field, f"{shown} has more than {MAX_JSON_BYTES:,} bytes, the limit for a JSON file")
    return read_json_bytes(data, field, shown)


def read_json_bytes(
    data: bytes, field: str, shown: str = "the document", max_depth: int = MAX_JSON_DEPTH, within_budget: bool = True
):
    """Parse JSON *data* (UTF-8 bytes): its nesting counted first (`json_depth`), the parse
    under the memory budget's address-space cap when *within_budget* (a process of one
    command; the web server bounds its bodies by their shape instead); every problem an
    `InputError` naming *field* (*shown* names the document in the message).

    >>> read_json_bytes(b"[" * 100 + b"]" * 100, "body")
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: body: the document nests lists/objects 100 levels deep; at most 64
    """
    depth = json_depth(data, max_depth)
    if depth > max_depth:
        raise InputError(field, f"{shown} nests lists/objects {depth} levels deep; at most {max_depth}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(field, f"{shown} is not UTF-8 text") from None
    try:
        if not within_budget:
            return json.loads(text, object_pairs_hook=_unique_keys)
        with _parse_within_budget(field, shown, len(data)):
            return json.loads(text, object_pairs_hook=_unique_keys)
    except _RepeatedKey as error:
        raise InputError(
            field, f"{shown} repeats the key {json.dumps(error.args[0])} (each key may appear once)"
        ) from None
    except json.JSONDecodeError as error:
        raise InputError(field, f"{shown} is not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:  # not reached past json_depth; kept as the parser's own guard
        raise InputError(field, f"{shown} nests lists/objects too deeply") from None


def flat_json_object(data: bytes, field: str, shown: str, max_members: int) -> dict:
    """A JSON object of plain values (no lists or objects inside) with at most *max_members*
    keys, its shape checked before parsing: what a form sends. Bounded by its shape, its
    parse takes about its own size in memory (no address-space cap, which would reach the
    other threads of a server).

    >>> flat_json_object(b'{"a": "[{", "b": 2}', "form", "the body", 10)
    {'a': '[{', 'b': 2}
    >>> flat_json_object(b'{"a": [[[1]]]}', "form", "the body", 10)
    Traceback (most recent call last):
    ...
    exactdice.errors.InputError: form: the body must be one JSON object of field values (no lists or objects inside); it nests 4 levels
    """
    outline = _JSON_STRING.sub(b'""', data)
    depth = json_depth(outline, stop_past=64)
    if depth > 1 or not outline.lstrip().startswith(b"{"):
        raise InputError(
            field,
            f"{shown} must be one JSON object of field values (no lists or objects inside)"
            + (f"; it nests {depth:,} levels" if depth > 1 else ""),
        )
    members = outline.count(b":")
    if members > max_members:
        raise InputError(field, f"{shown} has {members:,} fields; at most {max_members:,}")
    found = read_json_bytes(data, field, shown, max_depth=1, within_budget=False)
    for key, value in found.items():
        for text in (key, value):
            if isinstance(text, str) and _LONE_SURROGATE.search(text):
                # JSON's \ud800 escapes decode to no character at all: refused here, before
                # an answer or an error message tries to repeat it
                raise InputError(field, f"{shown} has a \\u escape that is no character (a lone surrogate)")
    return found


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


#: a JSON string (escapes included), matched in linear time
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(code for code in range(256) if code not in b"[]{}")


def json_depth(data: bytes, stop_past: int | None = None) -> int:
    """How deeply *data* (JSON text) nests lists and objects, counted without parsing: the
    brackets outside strings, at C speed (a regex, ``bytes.translate``, numpy's cumsum in
    chunks), so a body of a million ``[`` is measured in milliseconds, not recursed into.
    Past *stop_past* the count may stop early (any value above it is returned).

    >>> json_depth(b'{"a": [1, {"b": "[[[["}]}'), json_depth(b"[]"), json_depth(b"3")
    (3, 1, 0)
    """
    import numpy as np

    brackets = _JSON_STRING.sub(b'""', data).translate(None, _NOT_BRACKETS)
    if stop_past is not None and len(brackets) <= stop_past:
        return min(len(brackets), _small_depth(brackets))
    deepest, level, chunk = 0, 0, 1 << 24
    for start in range(0, len(brackets), chunk):
        codes = np.frombuffer(brackets, dtype=np.uint8, count=min(chunk, len(brackets) - start), offset=start)
        steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int64)
        levels = np.cumsum(steps) + level
        deepest, level = max(deepest, int(levels.max())), int(levels[-1])
        if stop_past is not None and deepest > stop_past:
            break
    return deepest


def _small_depth(brackets: bytes) -> int:
    deepest = level = 0
    for code in brackets:
        level += 1 if code in b"[{" else -1
        deepest = max(deepest, level)
    return deepest


def _refuse_past_the_budget(size: int, shown: str, field: str) -> None:
    """A JSON file whose parsed form would not fit what the memory budget leaves is refused
    before it is read, with the budget's flag."""
    from exactdice.limits import MEMORY_PARAMETER, memory_budget, resident_memory, size_text

    needed = size * (JSON_MEMORY_FACTOR + 1)
    left = memory_budget() - resident_memory()
    if needed > left:
        raise TooLargeError(
            field,
            f"{shown} has {size:,} bytes; reading it takes about {size_text(needed)}, more "
            f"than the {size_text(max(left, 0))} the memory budget leaves (raise it with "
            f"`{MEMORY_PARAMETER}`)",
        )


@contextmanager
def _parse_within_budget(field: str, shown: str, size: int):
    """Run a parse under an address-space cap of what the memory budget leaves (Linux), so a
    document that parses into far more memory than `JSON_MEMORY_FACTOR` says stops with a
    `TooLargeError` instead of taking the machine."""
    from exactdice.limits import MEMORY_PARAMETER, memory_budget, resident_memory, size_text

    try:
        import resource

        import psutil

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        left = max(memory_budget() - resident_memory(), 0)
        cap = psutil.Process().memory_info().vms + left + 64 * 2**20
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY:
            cap = min(cap, soft)
    except (ImportError, OSError, ValueError):  # no caps on this platform: the byte limits stand
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    except MemoryError:
        raise TooLargeError(
            field,
            f"{shown} ({size:,} bytes) parses into more memory than the "
            f"{size_text(left)} the budget leaves (raise it with "
            f"`{MEMORY_PARAMETER}`)",
        ) from None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
