"""An embedded SQLite store of solved results, so long sweeps resume and re-runs are instant.

A result is keyed by ``(system, ruleset, setup, policies, exactdice version)``; the
last four are canonical JSON (sorted keys, no spaces), so equal inputs give equal keys.
Values are JSON with exact numbers tagged (`encode_result` / `decode_result`): a
`Fraction` is stored as ``{"fraction": "p/q"}``, never as a float, and a table cell
known only within certified bounds (`exactdice.tables.grid.Bounds`) as
``{"bounds": ["p/q", "r/s"]}``.

Each write is one SQLite transaction (journal mode WAL), so a run killed at any moment
leaves every row either whole or absent. A file that is not an SQLite database, or a
store held locked by another process for longer than the timeout, raises `InputError`
naming the path and what to do (the store is only a cache: deleting it is safe).

The default file is ``~/.cache/exactdice/results.sqlite``; the environment variable
``EXACTDICE_STORE`` or the CLI flag ``--store PATH`` overrides it.

>>> import tempfile, os
>>> from fractions import Fraction
>>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "r.sqlite"))
>>> key = ResultKey("demo", {"rule": 1}, {"a": 2}, {})
>>> store.put(key, {"P(win)": Fraction(1, 3)})
>>> store.get(key)
{'P(win)': Fraction(1, 3)}
>>> store.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from exactdice.core.exact import fraction_text
from exactdice.errors import InputError
from exactdice.tables.grid import Bounds
from exactdice.output_files import check_output_path

__all__ = [
    "ResultKey",
    "ResultStore",
    "default_store_path",
    "canonical_json",
    "encode_result",
    "decode_result",
    "open_store",
    "STORE_ENVIRONMENT_VARIABLE",
    "SCHEMA_VERSION",
]

STORE_ENVIRONMENT_VARIABLE = "EXACTDICE_STORE"
SCHEMA_VERSION = 1
_LOCK_TIMEOUT_SECONDS = 10.0
_FIELD = "store_path"


def default_store_path() -> Path:
    """``$EXACTDICE_STORE`` if set, else ``~/.cache/exactdice/results.sqlite``.

    Returns
    -------
    Path
        The default results store.

    Examples
    --------
    >>> isinstance(default_store_path(), Path)
    True
    """
    override = os.environ.get(STORE_ENVIRONMENT_VARIABLE)
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "exactdice" / "results.sqlite"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces, exact numbers tagged: the text of a key part.

    >>> canonical_json({"b": Fraction(1, 2), "a": (1, 2)})
    '{"a":[1,2],"b":{"fraction":"1/2"}}'
    """
    return json.dumps(encode_result(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def encode_result(value: Any) -> Any:
    """Turn a result (dicts, lists, tuples, ints, strings, Fractions, None) into plain JSON data.

    >>> encode_result({"p": Fraction(3, 4), "n": [1, None], "b": Bounds(0, Fraction(1, 2))})
    {'p': {'fraction': '3/4'}, 'n': [1, None], 'b': {'bounds': ['0', '1/2']}}
    """
    if isinstance(value, Fraction):
        return {"fraction": fraction_text(value)}
    if isinstance(value, Bounds):
        return {"bounds": [fraction_text(value.lower), fraction_text(value.upper)]}
    if isinstance(value, float):
        raise TypeError(f"refusing to store a float ({value!r}): results are exact")
    if isinstance(value, dict):
        encoded = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"result keys must be strings, got {key!r}")
            encoded[key] = encode_result(item)
        return encoded
    if isinstance(value, (list, tuple)):
        return [encode_result(item) for item in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if hasattr(value, "to_dict"):
        return encode_result(value.to_dict())
    raise TypeError(f"cannot store {type(value).__name__} {value!r} in a result")


def decode_result(value: Any) -> Any:
    """The inverse of `encode_result` (tuples come back as lists).

    >>> decode_result({"p": {"fraction": "3/4"}, "b": {"bounds": ["0", "1/2"]}})
    {'p': Fraction(3, 4), 'b': Bounds(lower=Fraction(0, 1), upper=Fraction(1, 2))}
    """
    if isinstance(value, dict):
        if set(value) == {"fraction"} and isinstance(value["fraction"], str):
            return Fraction(value["fraction"])
        if set(value) == {"bounds"} and isinstance(value["bounds"], list) and len(value["bounds"]) == 2:
            return Bounds(Fraction(value["bounds"][0]), Fraction(value["bounds"][1]))
        return {key: decode_result(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_result(item) for item in value]
    return value


@dataclass(frozen=True)
class ResultKey:
    """What a stored result depends on: system, ruleset, setup, policies (and the version).

    The mapping parts may hold Fractions; they are stored as canonical JSON.

    Parameters
    ----------
    system : str
        The rules system.
    ruleset : Any
        The reading of the rules, JSON-ready.
    setup : Any
        The setup, JSON-ready.
    policies : Any, optional
        The policies, JSON-ready.
    version : str, optional
        The code version the result belongs to (default: exactdice's).

    Examples
    --------
    >>> ResultKey("karst", {}, {"modifier": 1}, {}).parts()[2]
    '{"modifier":1}'
    """

    system: str
    ruleset: Any
    setup: Any
    policies: Any = None
    version: str | None = None

    def parts(self) -> tuple[str, str, str, str, str]:
        """The five text columns of the key in the store."""
        from exactdice import __version__

        return (
            self.system,
            canonical_json(self.ruleset),
            canonical_json(self.setup),
            canonical_json(self.policies if self.policies is not None else {}),
            self.version or __version__,
        )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    system TEXT NOT NULL,
    ruleset TEXT NOT NULL,
    setup TEXT NOT NULL,
    policies TEXT NOT NULL,
    version TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (system, ruleset, setup, policies, version)
);
"""


class ResultStore:
    """A results store in one SQLite file; safe to share between processes.

    Open it once in the parent process; worker processes do not touch it (the sweep
    writes each result from the parent as it arrives).

    Parameters
    ----------
    path : str or Path
        The SQLite file (created with its folder if missing).
    timeout : float, optional
        Seconds to wait for another process's lock.

    Raises
    ------
    InputError
        A path that cannot be opened as a store.

    Examples
    --------
    >>> import tempfile, os
    >>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "s.sqlite"))
    >>> len(store)
    0
    >>> store.close()
    """

    def __init__(self, path, *, timeout: float = _LOCK_TIMEOUT_SECONDS):
        self.path = Path(path).expanduser()
        self._timeout = timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(
                _FIELD, f"cannot create the folder of the results store {str(self.path)!r}: {error.strerror or error}"
            ) from None
        check_output_path(self.path, _FIELD)  # a regular file (or a new one), never a device or FIFO
        try:
            self._connection = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None)
        except sqlite3.Error as error:
            raise self._explain(error) from None
        try:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            with self._transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._connection.execute(statement)
                row = self._connection.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
                if row is None:
                    self._connection.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                elif row[0] != str(SCHEMA_VERSION):
                    raise InputError(
                        _FIELD,
                        f"results store {str(self.path)!r} has schema "
                        f"{row[0]}, this exactdice writes {SCHEMA_VERSION}; "
                        "delete the file (it is only a cache) or pass "
                        "another `store_path`",
                    )
        except sqlite3.Error as error:
            self._connection.close()
            raise self._explain(error) from None

    # ----- errors ---------------------------------------------------------------------

    def _explain(self, error: sqlite3.Error) -> InputError:
        text = str(error)
        where = repr(str(self.path))
        if "locked" in text or "busy" in text:
            return InputError(
                _FIELD,
                f"results store {where} is locked by another exactdice "
                f"process (waited {self._timeout:g} s); wait for it to "
                "finish, or pass `no_cache` or another `store_path`",
            )
        if isinstance(error, sqlite3.DatabaseError) and (
            "not a database" in text or "malformed" in text or "corrupt" in text or "disk image" in text
        ):
            return InputError(
                _FIELD,
                f"results store {where} is corrupt or not an exactdice "
                f"store ({text}); delete it (it is only a cache) or pass "
                "`no_cache` or another `store_path`",
            )
        return InputError(
            _FIELD, f"results store {where} cannot be used: {text}; pass `no_cache` or another `store_path`"
        )

    def _transaction(self):
        connection = self._connection

        class _Transaction:
            def __enter__(self_inner):
                connection.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, kind, value, traceback):
                if kind is None:
                    connection.execute("COMMIT")
                else:
                    connection.execute("ROLLBACK")
                return False

        return _Transaction()

    # ----- reading and writing --------------------------------------------------------

    def get(self, key: ResultKey) -> Any | None:
        """The stored result for *key*, or None when it has not been solved."""
        try:
            row = self._connection.execute(
                "SELECT result FROM results WHERE system=? AND ruleset=? AND setup=? AND policies=? AND version=?",
                key.parts(),
            ).fetchone()
        except sqlite3.Error as error:
            raise self._explain(error) from None
        if row is None:
            return None
        try:
            return decode_result(json.loads(row[0]))
        except (ValueError, TypeError) as error:
            raise InputError(
                _FIELD,
                f"results store {str(self.path)!r} holds an unreadable "
                f"result ({error}); delete it (it is only a cache) or pass "
                "no_cache",
            ) from None

    def put(self, key: ResultKey, result: Any) -> None:
        """Store one result in its own transaction (replacing any older value)."""
        text = json.dumps(encode_result(result), sort_keys=True, separators=(",", ":"))
        try:
            with self._transaction():
                self._connection.execute(
                    "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)", key.parts() + (text,)
                )
        except sqlite3.Error as error:
            raise self._explain(error) from None

    def __len__(self) -> int:
        try:
            return self._connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        except sqlite3.Error as error:
            raise self._explain(error) from None

    def integrity_ok(self) -> bool:
        """True when SQLite's own integrity check passes."""
        try:
            return self._connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        except sqlite3.Error:
            return False

    def close(self) -> None:
        """Close the connection (the file stays)."""
        self._connection.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def open_store(path: str | Path | None = None, *, no_cache: bool = False) -> ResultStore | None:
    """The store at *path* (default `default_store_path`), or None when *no_cache*.

    Parameters
    ----------
    path : str or Path, optional
        The SQLite file.
    no_cache : bool, default False
        Keep no results.

    Returns
    -------
    ResultStore or None
        The store, or None for no cache.

    Examples
    --------
    >>> open_store(no_cache=True) is None
    True
    """
    if no_cache:
        return None
    return ResultStore(path if path is not None else default_store_path())
