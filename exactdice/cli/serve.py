"""``exactdice serve``: the local web page (a thin layer over `exactdice.web`)."""

from __future__ import annotations

import click

from exactdice.cli.common import OutputFile
from exactdice.errors import InputError

__all__ = ["serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (the default is this machine only).")
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on (1-65535).")
@click.option("--store", "store", type=OutputFile(), default=None,
              help="The SQLite results store (default: $EXACTDICE_STORE or ~/.cache/exactdice/results.sqlite).")
@click.option("--no-cache", is_flag=True, help="Keep no results between requests.")
@click.option("--workers", type=int, default=2, show_default=True,
              help="Solves run at once, each in its own process (the rest wait their turn).")
@click.option("--worker-memory", type=float, default=4.0, show_default=True,
              help="GiB of address space each worker process may use; a solve past it stops with a message.")
def serve(host, port, store, no_cache, workers, worker_memory):
    """A contest calculator in the browser: open http://HOST:PORT/ after starting it.

    \b
    Pages: Karbon contest, Validate (a CSV of simulated outcomes), Distribution
    (dice notation), Other systems (Contingency, Chronica, Karst), Tables (the
    committed tables, and a Karbon grid of your own).
    Long solves run in worker processes with progress and a Cancel button;
    answers are kept in the results store, so asking again is instant.

    \b
    Example:
      exactdice serve --port 8000
    """
    if not 1 <= port <= 65535:
        raise InputError("--port", f"must be from 1 to 65535, got {port}")
    if not 1 <= workers <= 64:
        raise InputError("--workers", f"must be from 1 to 64, got {workers}")
    if not 0.5 <= worker_memory <= 1024:
        raise InputError("--worker-memory", f"must be from 0.5 to 1024 (GiB), got {worker_memory:g}")
    if store and no_cache:
        raise InputError("--no-cache", "contradicts --store (give one of them)")
    from exactdice.tables.store import ResultStore, default_store_path

    store_path = None if no_cache else (store or default_store_path())
    if store_path is not None:
        ResultStore(store_path).close()   # a bad path is a one-line error now, not per request
    import uvicorn

    from exactdice.web.app import LOCAL_HOSTS, create_app

    # bound to this machine: answer only its own names; bound wider: any name
    hosts = LOCAL_HOSTS if host in ("127.0.0.1", "localhost", "::1") else ("*",)

    click.echo(f"exactdice serve: http://{host}:{port}/  (Ctrl+C stops it)", err=True)
    uvicorn.run(create_app(store_path=store_path, workers=workers, worker_memory=int(worker_memory * 2 ** 30),
                           allowed_hosts=hosts),
                host=host, port=port,
                log_level="warning")


# library errors name parameters; `exactdice.cli.main` shows this command's flags instead
serve.parameter_flags = {"store_path": "--store"}
