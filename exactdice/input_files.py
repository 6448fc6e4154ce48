"""One way to read a JSON file the user named (``--state``, ``--strategy``), and to open any
text file the user named: every failure is an `InputError` naming the flag, never a traceback.

Refused: a missing or unreadable file, a file larger than `MAX_JSON_BYTES`, text that is not
UTF-8 or not JSON, nesting deeper than Python's parser allows, and an object that repeats a key (``json`` would keep the last one
silently).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "s.json")
>>> _ = open(path, "w").write('{"a": 1, "a": 2}')
>>> read_json_file(path, "--state")
Traceback (most recent call last):
...
exactdice.errors.InputError: --state: ... repeats the key "a" (each key may appear once)
"""

from __future__ import annotations

import json
import os
import sys

from exactdice.errors import InputError

__all__ = ["read_json_file", "open_text_file", "MAX_JSON_BYTES"]

MAX_JSON_BYTES = 512 * 1024 * 1024


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise _RepeatedKey(key)
        result[key] = value
    return result


def open_text_file(path, field: str, kind: str, **options):
    """*path* opened as UTF-8 text (``options`` go to `open`); a missing file, a directory
    or an unreadable file is an `InputError` naming *field* (*kind* says what file it
    should be: ``"JSON"``, ``"CSV"``).

    >>> open_text_file("/no/such/file.csv", "samples", "CSV")
    Traceback (most recent call last):
    exactdice.errors.InputError: samples: no such file: /no/such/file.csv
    """
    shown = os.fspath(path)
    try:
        return open(path, encoding="utf-8", **options)
    except FileNotFoundError:
        raise InputError(field, f"no such file: {shown}") from None
    except IsADirectoryError:
        raise InputError(field, f"{shown} is a directory, not a {kind} file") from None
    except OSError as error:
        raise InputError(field, f"cannot read {shown}: {error.strerror or error}") from None


def read_json_file(path, field: str):
    """The parsed JSON document in the file *path*; any problem is an `InputError` naming *field*."""
    shown = os.fspath(path)
    with open_text_file(path, field, "JSON") as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_JSON_BYTES:
                raise InputError(field, f"{shown} has {size:,} bytes, more than the limit of {MAX_JSON_BYTES:,}")
            text = handle.read()
        except UnicodeDecodeError:
            raise InputError(field, f"{shown} is not UTF-8 text") from None
        except OSError as error:
            raise InputError(field, f"cannot read {shown}: {error.strerror or error}") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except _RepeatedKey as error:
        raise InputError(field, f"{shown} repeats the key {json.dumps(error.args[0])} "
                                "(each key may appear once)") from None
    except json.JSONDecodeError as error:
        raise InputError(field, f"{shown} is not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:  # the parser's own depth guard: a clean error, not a crash
        raise InputError(field, f"{shown} nests lists/objects too deeply for Python's JSON "
                                f"parser (more than about {sys.getrecursionlimit()} levels)") from None
