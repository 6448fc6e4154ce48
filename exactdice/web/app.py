"""The ``exactdice serve`` web app (Starlette): pages, a JSON API, background solves.

`create_app` puts the parts together: the services every route reads from its request
(`exactdice.web.services`: the results store, the job layer, the canonical tables, the
Jinja2 templates), the routes (`exactdice.web.routes`, one module per page and its API), the
errors every request may meet, and the hosts and token it answers. Every answer comes from
the same library entry points as the CLI's (`exactdice.answers`, run in worker processes by
`exactdice.web.tasks`), as JSON with exact numbers (`exactdice.web.present`).

>>> from starlette.testclient import TestClient
>>> with TestClient(create_app(store_path=None)) as client:
...     client.post("/api/dist", json={"expression": "d2"}).json()["outcomes"][0]["p"]["exact"]
'1/2'
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from exactdice.core.exact import lift_digit_limit
from exactdice.errors import InputError
from exactdice.web.http import (
    LOCAL_HOSTS,
    MAX_UPLOAD_BYTES,
    MAX_WAIT_SECONDS,
    TOKEN_ENVIRONMENT_VARIABLE,
    TOKEN_HEADER,
    ClientGone,
    TokenRequired,
    TooLarge,
    errors,
)
from exactdice.web.jobs import JobManager
from exactdice.web.present import exact_json, table_files, with_labels
from exactdice.web.routes import all_routes
from exactdice.web.routes.pages import PAGES
from exactdice.web.services import PageStore, Services

__all__ = [
    "create_app",
    "default_tables_dir",
    "TokenRequired",
    "TOKEN_ENVIRONMENT_VARIABLE",
    "TOKEN_HEADER",
    "LOCAL_HOSTS",
    "with_labels",
    "exact_json",
    "MAX_UPLOAD_BYTES",
    "MAX_WAIT_SECONDS",
    "PAGES",
]

HERE = Path(__file__).parent

lift_digit_limit()


def default_tables_dir() -> Path | None:
    """The canonical tables, or None: ``exactdice/tables/canonical``, a link to the checkout's
    ``tables/`` and, in an installed wheel, the tables' JSON shipped as package data."""
    candidate = HERE.parent / "tables" / "canonical"
    return candidate if candidate.is_dir() else None


async def _not_found(request: Request, exc):
    if request.url.path.startswith("/api/"):
        return errors({"path": f"no endpoint {request.url.path}"}, 404)
    return HTMLResponse("<p>No such page. <a href='/karbon'>Karbon calculator</a></p>", 404)


async def _method_not_allowed(request: Request, exc):
    return errors({"method": f"{request.method} is not allowed here"}, 405)


async def _store_or_input_error(request: Request, exc):
    # e.g. a results store that became unreadable: a message, never a traceback
    return errors({"form": str(exc)}, 500)


async def _too_large(request: Request, exc):
    size = f"{exc.declared:,} bytes" if exc.declared is not None else f"more than {MAX_UPLOAD_BYTES:,} bytes"
    return JSONResponse(
        {"status": "error", "errors": {"form": f"the request is {size}; at most {MAX_UPLOAD_BYTES:,}"}},
        status_code=413,
        headers={"Connection": "close"},
    )


async def _client_gone(request: Request, exc):  # nobody reads it; no traceback in the log
    return JSONResponse({"status": "error", "errors": {"form": "the client went away"}}, status_code=400)


async def _internal_error(request: Request, exc):
    return errors({"form": f"internal error ({type(exc).__name__}: {exc}); please report it"}, 500)


_HANDLERS = {
    404: _not_found,
    405: _method_not_allowed,
    InputError: _store_or_input_error,
    TooLarge: _too_large,
    ClientGone: _client_gone,
    500: _internal_error,
}


def create_app(
    store_path=None,
    workers: int = 2,
    tables_dir="default",
    worker_memory: int | None = None,
    allowed_hosts=LOCAL_HOSTS,
    token: str | None = None,
    jobs=None,
) -> Starlette:
    """The web app. ``store_path``: the SQLite results store (None: no cache);
    ``tables_dir``: the canonical tables to browse (default: the checkout's ``tables/``);
    ``worker_memory``: bytes of address space each worker process may use (None: no cap);
    ``allowed_hosts``: the Host headers it answers (another name is refused, so a web site
    that points its own name at 127.0.0.1 cannot reach it); ``token``: what every API
    request must carry (`TokenRequired`; a server open to the network), or None; ``jobs``:
    the job layer (default: a `JobManager` of ``workers`` processes)."""
    folder = default_tables_dir() if tables_dir == "default" else (Path(tables_dir) if tables_dir else None)
    services = Services(
        store=PageStore(store_path),
        jobs=jobs or JobManager(workers=workers, memory_limit=worker_memory),
        tables=table_files(folder),
        templates=Jinja2Templates(directory=HERE / "templates"),
        tables_dir=folder,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app):
        start_workers = getattr(services.jobs, "start_worker_server", None)
        if start_workers is not None:  # (a job layer given by the caller may have none)
            start_workers()
        try:
            yield
        finally:
            services.jobs.shutdown()

    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    if token:
        middleware.append(Middleware(TokenRequired, token=token))
    app = Starlette(
        routes=[*all_routes(), Mount("/static", StaticFiles(directory=HERE / "static"), name="static")],
        exception_handlers=_HANDLERS,
        lifespan=lifespan,
        middleware=middleware,
    )
    app.state.services = services
    app.state.jobs = services.jobs
    app.state.store_path = store_path
    return app
