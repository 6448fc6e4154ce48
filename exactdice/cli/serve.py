"""``exactdice serve``: the local web page (a thin layer over `exactdice.web`)."""

from __future__ import annotations

import os

import click

from exactdice.cli.common import OutputFile
from exactdice.errors import InputError

__all__ = ["serve"]


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (the default is this machine only)."
)
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on (1-65535).")
@click.option(
    "--store",
    "store",
    type=OutputFile(),
    default=None,
    help="The SQLite results store (default: $EXACTDICE_STORE or ~/.cache/exactdice/results.sqlite).",
)
@click.option("--no-cache", is_flag=True, help="Keep no results between requests.")
@click.option(
    "--workers",
    type=int,
    default=2,
    show_default=True,
    help="Solves run at once, each in its own process (the rest wait their turn; dice "
    "distributions have two more lanes of their own).",
)
@click.option(
    "--worker-memory",
    type=float,
    default=4.0,
    show_default=True,
    help="GiB of address space each worker process may use; a solve past it stops with a message.",
)
@click.option(
    "--allow-remote",
    "remote_names",
    metavar="NAME[,NAME...]",
    default=None,
    help="Serve other machines too (needed with a --host that is not loopback): the host names "
    "or addresses they use to reach this one (others are refused). Every API request then "
    "needs the token printed at start (the page asks for it once; "
    "$EXACTDICE_SERVE_TOKEN sets it).",
)
def serve(host, port, store, no_cache, workers, worker_memory, remote_names):
    """A contest calculator in the browser: open http://HOST:PORT/ after starting it.

    \b
    Pages: Karbon contest (with how long it lasts and what moves the odds),
    Other games (Contingency skill checks, Chronica contests, Karst rolls, with
    their chance curves), Validate (a CSV of simulated outcomes), Distribution
    (dice notation), Tables (the committed tables, and a Karbon grid of your own).
    Long solves run in worker processes with progress and a Cancel button;
    exact answers are kept in the results store, so asking again is instant
    (bounds on optimal play depend on the time given: they are searched anew).
    It serves this machine only, unless --allow-remote names the host names
    other machines use (it then prints a warning and a token to give them).

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
        ResultStore(store_path).close()  # a bad path is a one-line error now, not per request
    remote = _remote_names(remote_names)
    listening = _bound_socket(host, port)
    if not _is_loopback(listening) and remote is None:
        listening.close()
        raise InputError(
            "--host",
            f"{host} is reachable from other machines; to serve them add --allow-remote "
            "NAME[,NAME...] (the names they use to reach this one; every request then "
            "needs the token printed at start), or leave --host out to serve this "
            "machine only",
        )
    import secrets

    import uvicorn

    from exactdice.web.app import LOCAL_HOSTS, TOKEN_ENVIRONMENT_VARIABLE, create_app

    token = None
    hosts = LOCAL_HOSTS
    if remote is not None:
        token = os.environ.get(TOKEN_ENVIRONMENT_VARIABLE) or secrets.token_urlsafe(18)
        hosts = LOCAL_HOSTS + tuple(remote) + ((host,) if host not in ("0.0.0.0", "::", "") else ())
        click.echo(
            f"exactdice serve: WARNING: open to the network on {host}:{port}: anyone who reaches it "
            f"with the token can start solves ({workers} at a time, up to {worker_memory:g} GiB each). "
            f"Names answered: {', '.join(remote)}.",
            err=True,
        )
        click.echo(f"exactdice serve: token {token}  (open http://{remote[0]}:{port}/#token={token})", err=True)
    click.echo(f"exactdice serve: http://{host}:{port}/  (Ctrl+C stops it)", err=True)
    app = create_app(
        store_path=store_path,
        workers=workers,
        worker_memory=int(worker_memory * 2**30),
        allowed_hosts=hosts,
        token=token,
    )
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])


def _remote_names(text) -> list[str] | None:
    """The names of ``--allow-remote`` (None: not given)."""
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise InputError(
            "--allow-remote",
            "give the host names or addresses other machines use to reach "
            "this one, e.g. --allow-remote myhost.lan,192.168.1.20",
        )
    bad = [name for name in names if not all(part.isalnum() or part in "-.:[]_" for part in name)]
    if bad:
        raise InputError("--allow-remote", f"{bad[0]!r} is not a host name or address")
    return names


def _bound_socket(host: str, port: int):
    """A listening socket on host:port, bound here so a bad address or a port in use is a
    one-line error naming the flag (uvicorn logs its own line and exits 3)."""
    import errno
    import socket

    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as error:
        raise InputError("--host", f"cannot use {host!r}: {getattr(error, 'strerror', None) or error}") from None
    listening = socket.socket(family, kind, protocol)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind(address)
        listening.listen(128)
    except OSError as error:
        listening.close()
        if error.errno == errno.EADDRINUSE:
            raise InputError(
                "--port", f"port {port} on {host} is in use (another program listens there); choose another with --port"
            ) from None
        if error.errno == errno.EACCES:
            raise InputError("--port", f"port {port} needs privileges this user lacks (use one above 1023)") from None
        if error.errno == errno.EADDRNOTAVAIL:
            raise InputError("--host", f"{host} is not an address of this machine") from None
        raise InputError("--host", f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    listening.set_inheritable(True)
    return listening


def _is_loopback(listening) -> bool:
    import ipaddress

    address = listening.getsockname()[0]
    return ipaddress.ip_address(address.split("%")[0]).is_loopback


# library errors name parameters; `exactdice.cli.main` shows this command's flags instead
serve.parameter_flags = {"store_path": "--store"}
