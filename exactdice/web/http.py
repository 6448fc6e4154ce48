"""The server's edges over HTTP: request bodies read within their limits, errors and answers
as JSON, the token a server open to the network asks for, and a job's state as the page
reads it.

Every error is ``{"status": "error", "errors": {field: message}}`` (422 for bad fields), its
library text naming the fields by their labels (`exactdice.web.present.with_labels`).
"""

from __future__ import annotations

import asyncio
import functools
import time

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from exactdice.errors import InputError
from exactdice.web.forms import FormError, form_field
from exactdice.web.present import present, with_labels

__all__ = [
    "json_body",
    "errors",
    "sized",
    "job_response",
    "until_finished",
    "form_errors",
    "TokenRequired",
    "TooLarge",
    "ClientGone",
    "MAX_UPLOAD_BYTES",
    "MAX_REQUEST_FIELDS",
    "MAX_ANSWER_BYTES",
    "MAX_WAIT_SECONDS",
    "TOKEN_ENVIRONMENT_VARIABLE",
    "TOKEN_HEADER",
    "LOCAL_HOSTS",
]

MAX_UPLOAD_BYTES = 20_000_000
#: most fields one request may send (the Karbon form has under 40)
MAX_REQUEST_FIELDS = 200
#: the largest answer sent, in bytes of JSON; past it the size is the answer
MAX_ANSWER_BYTES = 32 * 2**20
#: the longest a job's status request may wait for it to end
MAX_WAIT_SECONDS = 10.0
#: the environment variable that sets the token of a server open to the network
TOKEN_ENVIRONMENT_VARIABLE = "EXACTDICE_SERVE_TOKEN"
#: the request header (or ``token`` query parameter, for the page's unload beacon) carrying it
TOKEN_HEADER = "x-exactdice-token"
#: Host headers the app answers by default (this machine; "testserver" is the test client's)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1", "testserver")


class ClientGone(Exception):
    """The client closed the connection while its request was read: nobody to answer."""


class TooLarge(Exception):
    """A request body past `MAX_UPLOAD_BYTES` (its declared size, or None: cut while streaming)."""

    def __init__(self, declared):
        super().__init__(declared)
        self.declared = declared


async def _body_bytes(request: Request) -> bytes:
    """The request body, never more than `MAX_UPLOAD_BYTES`: a Content-Length past it is
    refused before anything is read, and a body that streams past it is cut there."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise FormError({"form": f"Content-Length {declared!r} is not a number of bytes"})
        if int(declared) > MAX_UPLOAD_BYTES:
            raise TooLarge(int(declared))
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                raise TooLarge(None)
            chunks.append(chunk)
    except ClientDisconnect:
        raise ClientGone() from None
    return b"".join(chunks)


async def json_body(request: Request) -> dict:
    """The request's one flat JSON object of field values (`FormError` otherwise)."""
    # JSON only: a browser sends that cross-site only after asking (CORS), which this
    # server never allows, so another site cannot start work here
    if not request.headers.get("content-type", "").startswith("application/json"):
        raise FormError({"form": "send the fields as JSON (Content-Type: application/json)"})
    from exactdice.input_files import flat_json_object

    body = await _body_bytes(request)
    try:
        return flat_json_object(body or b"{}", "form", "the request body", MAX_REQUEST_FIELDS)
    except InputError as error:
        raise FormError({"form": error.message}) from None


def errors(found: dict, status: int = 422) -> JSONResponse:
    """``{field: message}`` as the page's error answer."""
    return JSONResponse(
        {"status": "error", "errors": {name: with_labels(text) for name, text in found.items()}}, status_code=status
    )


def sized(payload: dict, status_code: int = 200) -> JSONResponse:
    """The JSON response, or past `MAX_ANSWER_BYTES` an error saying its size."""
    response = JSONResponse(payload, status_code=status_code)
    if len(response.body) > MAX_ANSWER_BYTES:
        return errors(
            {
                "form": f"the answer is {len(response.body):,} bytes, past the page's limit of "
                f"{MAX_ANSWER_BYTES:,}; ask for less (the command line prints any size)"
            },
            413,
        )
    return response


def job_response(job, status_code: int = 200) -> JSONResponse:
    """A job's state for the page: its answer as the page's JSON once done, its errors
    under the form's fields (``job.fields``; others go to the form's line)."""
    snapshot = job.snapshot()
    if snapshot["result"] is not None:
        snapshot["result"] = present(snapshot["result"])
        return sized(snapshot, status_code)
    if snapshot["errors"]:
        snapshot["errors"] = {
            form_field(name, job.fields) if name != "form" else "form": with_labels(text)
            for name, text in snapshot["errors"].items()
        }
    return JSONResponse(snapshot, status_code=status_code)


def form_errors(endpoint):
    """An endpoint whose `FormError` (bad fields) is the page's 422 naming each field."""

    @functools.wraps(endpoint)
    async def checked(request: Request):
        try:
            return await endpoint(request)
        except FormError as error:
            return errors(error.errors)

    return checked


async def until_finished(job, seconds: float) -> None:
    """Wait up to *seconds* for *job* to end, on the event loop (no thread is held)."""
    deadline = time.monotonic() + seconds
    while not job.finished and time.monotonic() < deadline:
        await asyncio.sleep(min(0.02, max(0.0, deadline - time.monotonic())))


class TokenRequired:
    """ASGI middleware: every ``/api/`` request must carry the server's token (header
    `TOKEN_HEADER`, or ``?token=``); pages and static files need none (they hold no data).
    A header, not a cookie, so another site's page cannot send it along."""

    def __init__(self, app, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            import secrets
            from urllib.parse import parse_qs

            given = dict(scope.get("headers") or ()).get(TOKEN_HEADER.encode(), b"").decode("latin-1")
            given = given or parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                response = JSONResponse(
                    {
                        "status": "error",
                        "errors": {
                            "token": (
                                "this server is open to the network and needs its token (printed where exactdice "
                                "serve was started)"
                                if not given
                                else "wrong token"
                            )
                        },
                    },
                    status_code=401,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
