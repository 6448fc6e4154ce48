"""What the routes are given (the app's ``state.services``): the results store, the job layer,
the canonical tables and the templates, made once by `exactdice.web.app.create_app` and
read by every route from its request, so a test can give the app others.

>>> import asyncio
>>> store = PageStore(None)
>>> asyncio.run(store.get(store.key("karst-death", "exact", {"negative_health": 2}))) is None
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

__all__ = ["Services", "PageStore", "services", "keeper", "answered", "ANSWER_FORMAT"]

#: the version of the answers' data the store keeps for the page (part of every key)
ANSWER_FORMAT = 2


class PageStore:
    """The SQLite results store of the page's answers, opened per use (None: no cache)."""

    def __init__(self, path):
        self.path = path

    @staticmethod
    def key(name: str, kind: str, values: dict):
        """The store key of one computation's answer of one kind to these values."""
        from exactdice.tables.store import ResultKey

        system = name.split("-")[0]
        # a float (seconds) is no part of an exact key: as its text
        plain = {field: repr(value) if isinstance(value, float) else value for field, value in values.items()}
        return ResultKey(system, {}, {"result": f"web_{kind}/{ANSWER_FORMAT}", "computation": name, **plain}, {})

    def get_now(self, key):
        """The stored answer, or None (no store, or not stored)."""
        if self.path is None:
            return None
        from exactdice.tables.store import ResultStore

        with ResultStore(self.path) as store:
            return store.get(key)

    def put(self, key, value) -> None:
        """Keep an answer (a worker's thread calls it as a job finishes)."""
        if self.path is not None:
            from exactdice.tables.store import ResultStore

            with ResultStore(self.path) as store:
                store.put(key, value)

    async def get(self, key):
        """`get_now` off the event loop."""
        return await run_in_threadpool(self.get_now, key)


@dataclass
class Services:
    """The store, the jobs, the canonical tables (id -> JSON file) and the templates."""

    store: PageStore
    jobs: Any
    tables: dict = field(default_factory=dict)
    templates: Any = None
    tables_dir: Path | None = None


def services(request: Request) -> Services:
    """The services of the app serving *request*."""
    return request.app.state.services


def keeper(request: Request, key, keep=None):
    """What a job calls with its answer: keep it in the store under *key* (where *keep* says
    so: bounds depend on the seconds searched)."""
    store = services(request).store

    def kept(result) -> None:
        if keep is None or keep(result):
            store.put(key, result)

    return kept


def answered(data, began: float) -> JSONResponse:
    """An answer found in the store, as the page reads a finished job's."""
    from exactdice.web.present import present

    return JSONResponse(
        {"status": "done", "cached": True, "result": present(data), "seconds": round(time.perf_counter() - began, 4)}
    )
