"""The ``exactdice serve`` web app (Starlette): pages, a JSON API, background solves.

Every answer comes from the same library functions as the CLI (`exactdice.web.tasks`);
this module only checks fields (`exactdice.web.forms`), looks results up in the SQLite
results store, starts and stops jobs (`exactdice.web.jobs`) and turns exact numbers into
JSON: a probability is ``{"exact": "p/q", "percent": "12.34"}`` (the percentage rounded
from the exact fraction, never computed in floats).

>>> from starlette.testclient import TestClient
>>> with TestClient(create_app(store_path=None)) as client:
...     client.post("/api/dist", json={"expression": "d2"}).json()["outcomes"][0]["p"]["exact"]
'1/2'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from fractions import Fraction
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from exactdice.core.display import column_percent_text
from exactdice.core.exact import decimal_text, fraction_text, lift_digit_limit
from exactdice.errors import InputError
from exactdice.web.forms import karbon_grid as karbon_grid_arguments
from exactdice.web.forms import (DIST_FIELDS, GRID_FIELDS, KARBON_FIELD_NAMES, KARBON_FIELDS, FormError,
                                 field_descriptions, form_field, karbon_contest, karbon_key)
from exactdice.tables.store import ResultKey
from exactdice.web.jobs import JobManager
from exactdice.web.systems import SYSTEM_PAGES
from exactdice.web.tasks import WIDE_BOUNDS

__all__ = ["create_app", "TokenRequired", "TOKEN_ENVIRONMENT_VARIABLE", "TOKEN_HEADER", "with_labels", "exact_json", "MAX_UPLOAD_BYTES", "MAX_WAIT_SECONDS", "PAGES"]

HERE = Path(__file__).parent
MAX_UPLOAD_BYTES = 20_000_000
MAX_WAIT_SECONDS = 10.0
#: page path -> (template file, title)
PAGES = {"/karbon": ("karbon.html", "Karbon contest"), "/validate": ("validate.html", "Validate"),
         "/dist": ("dist.html", "Distribution"), "/systems": ("systems.html", "Other systems"),
         "/tables": ("tables.html", "Tables")}

lift_digit_limit()


def exact_json(value, digits: int = 2):
    """An exact number as ``{"exact": "p/q", "percent": ..., "shown": ..., "decimal": ...}``
    (None stays None). ``percent`` is a number for bars and sums; ``shown`` is what a person
    reads, where only an exact 0 or 1 reads "0" or "100" (`column_percent_text`).

    >>> exact_json(Fraction(1, 3))
    {'exact': '1/3', 'percent': '33.33', 'shown': '33.33', 'decimal': '0.3333333333'}
    >>> exact_json(Fraction(1, 30000))["shown"], exact_json(0)["shown"]
    ('0.0033', '0')
    """
    if value is None:
        return None
    value = Fraction(value)
    return {"exact": fraction_text(value), "percent": decimal_text(100 * value, digits),
            "shown": column_percent_text(value, digits), "decimal": decimal_text(value, 10)}


def _present_odds(result: dict) -> dict:
    """A contest's result as the page's JSON: exact fractions with their percentages (also
    the bounds' ``strategy_odds``); other None values left out."""
    shown = {name: value for name, value in result.items()
             if not isinstance(value, Fraction) and value is not None}
    for name, value in result.items():
        if isinstance(value, Fraction) or (name.startswith("expected_") and value is None):
            shown[name] = exact_json(value)
    if "strategy_odds" in result:
        shown["strategy_odds"] = {name: exact_json(value) for name, value in result["strategy_odds"].items()}
    if "policies" in result and "ruleset" in result:   # here, so answers stored before it have it too
        shown["in_words"] = _in_words(result["policies"], result["ruleset"])
    return shown


def _in_words(policies: dict, ruleset: dict) -> dict:
    """How both sides played and under which reading, in words, from the compact policy
    strings and knobs a result keeps (``policies`` stays in the CLI's syntax for programs).

    >>> _in_words({"player": "optimal", "narrator": "kind"}, {"sudden_death": "on"})["rules"]
    'sudden_death=on'
    """
    from exactdice.karbon import Rules, parse_narrator_policy, parse_player_policy

    return {"player": parse_player_policy(policies["player"]).words(),
            "narrator": parse_narrator_policy(policies["narrator"]).words(),
            "rules": Rules(**ruleset).differences()}


def _present_validation(result: dict) -> dict:
    """A fit report with each outcome's exact probability (keyed as in the CSV column), and
    where every column was tested, each column's report and the verdict over all of them."""
    shown = {"report": result["report"], "exact": {name: exact_json(p) for name, p in result["law"]}}
    if "columns" in result:
        shown.update(columns=result["columns"], fits=result["fits"])
    return shown


def _present_outcomes(result: dict) -> dict:
    """Each outcome with its probability and its name in words (answers stored before the
    words came have none: the outcome itself)."""
    return {"outcomes": [{"outcome": row[0], "p": exact_json(row[1]),
                          "words": row[2] if len(row) > 2 else row[0]} for row in result["outcomes"]]}


def _present_grid(result: dict) -> dict:
    """A grid made on the page, in the shape of a canonical table (see `_present_table_file`)."""
    from exactdice.karbon.tables import METRICS

    probability = {metric: metric.startswith("P(") for metric in METRICS}
    return {"row_label": result["row_axis"], "column_label": result["column_axis"],
            "rows": [str(value) for value in result["rows"]],
            "columns": [str(value) for value in result["columns"]],
            "metrics": [{"name": name, "probability": probability.get(name, False),
                         "cells": [[None if value is None else _table_cell(Fraction(value), probability.get(name, False))
                                    for value in row] for row in cells]}
                        for name, cells in result["metrics"]]}


def _present_dist(result: dict) -> dict:
    """A distribution as the page's JSON: each outcome with its exact P(exactly), P(at least)
    and P(at most), and the mean."""
    mean = result["mean"]
    return {"expression": result["expression"],
            "outcomes": [{"outcome": outcome, "p": exact_json(p), "at_least": exact_json(at_least),
                          "at_most": exact_json(at_most)} for outcome, p, at_least, at_most in result["outcomes"]],
            "mean": exact_json(mean), "mean_value": None if mean is None else fraction_text(mean)}


def _sized(payload: dict, status_code: int = 200) -> JSONResponse:
    """The JSON response, or past `MAX_ANSWER_BYTES` an error saying its size."""
    response = JSONResponse(payload, status_code=status_code)
    if len(response.body) > MAX_ANSWER_BYTES:
        return _errors({"form": f"the answer is {len(response.body):,} bytes, past the page's limit of "
                                f"{MAX_ANSWER_BYTES:,}; ask for less (the command line prints any size)"}, 413)
    return response


_PRESENT = {"dist": _present_dist, "karbon_grid": _present_grid, "karbon_odds": _present_odds, "validate_karbon": _present_validation,
            "validate_system": _present_validation,
            "system_exact": _present_outcomes}


#: every form field's label by name, for messages that quote a parameter (`max_states`)
_LABELS = {field.name: field.label or field.name
           for field in KARBON_FIELDS + GRID_FIELDS + tuple(f for page in SYSTEM_PAGES.values() for f in page.fields)}


#: the form fields a job's error may name (the forms' own and the validate page's)
_JOB_FIELDS = KARBON_FIELD_NAMES + ("samples", "column", "alpha", "row_values", "column_values") + tuple(
    field.name for page in SYSTEM_PAGES.values() for field in page.fields)


def with_labels(text: str) -> str:
    """A library message with its quoted parameters named as the page labels them (the CLI
    names its flags the same way, `exactdice.cli.common.error_with_flags`).

    >>> with_labels("give both `player_dice` and `narrator_dice`; raise the limit with `max_states`")
    'give both "Player hand" and "Narrator hand"; raise the limit with "Max states"'
    """
    return re.sub(r"`(\w+)`", lambda match: f'"{_LABELS[match[1]]}"' if match[1] in _LABELS else match[0], text)


def _errors(errors: dict, status: int = 422) -> JSONResponse:
    return JSONResponse({"status": "error", "errors": {name: with_labels(text) for name, text in errors.items()}},
                        status_code=status)


#: most fields one request may send (the Karbon form has under 40)
MAX_REQUEST_FIELDS = 200
#: the largest answer sent, in bytes of JSON; past it the size is the answer
MAX_ANSWER_BYTES = 32 * 2**20
#: the most totals a distribution shown on the page may have (a chart of more bars says nothing)
MAX_PAGE_TOTALS = 20_000


#: how long a dist request waits for its worker's answer before the page follows the job
DIST_WAIT_SECONDS = 2.0


async def _until_finished(job, seconds: float) -> None:
    """Wait up to *seconds* for *job* to end, on the event loop (no thread is held)."""
    deadline = time.monotonic() + seconds
    while not job.finished and time.monotonic() < deadline:
        await asyncio.sleep(min(0.02, max(0.0, deadline - time.monotonic())))


class _ClientGone(Exception):
    """The client closed the connection while its request was read: nobody to answer."""


async def _body_bytes(request: Request) -> bytes:
    """The request body, never more than `MAX_UPLOAD_BYTES`: a Content-Length past it is
    refused before anything is read, and a body that streams past it is cut there."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise FormError({"form": f"Content-Length {declared!r} is not a number of bytes"})
        if int(declared) > MAX_UPLOAD_BYTES:
            raise _TooLarge(int(declared))
    from starlette.requests import ClientDisconnect

    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                raise _TooLarge(None)
            chunks.append(chunk)
    except ClientDisconnect:
        raise _ClientGone() from None
    return b"".join(chunks)


class _TooLarge(Exception):
    """A request body past `MAX_UPLOAD_BYTES` (its declared size, or None: cut while streaming)."""

    def __init__(self, declared):
        super().__init__(declared)
        self.declared = declared


async def _json_body(request: Request) -> dict:
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


def default_tables_dir() -> Path | None:
    """The canonical tables, or None: ``exactdice/tables/canonical``, a link to the checkout's
    ``tables/`` and, in an installed wheel, the tables' JSON shipped as package data."""
    candidate = HERE.parent / "tables" / "canonical"
    return candidate if candidate.is_dir() else None


def _table_files(folder: Path | None) -> dict[str, Path]:
    """Table id (``system/name``) -> its JSON file, for every grid table under *folder*.

    Each JSON is asked what it is (its ``format``): only grid tables are listed; the
    sensitivity tables (``<system>/sensitivity/``), other JSON and unreadable files are not.
    """
    from exactdice.tables.export import JSON_FORMAT_NAME

    if folder is None:
        return {}
    return {path.relative_to(folder).with_suffix("").as_posix(): path
            for path in sorted(folder.glob("*/**/*.json")) if _json_format(path) == JSON_FORMAT_NAME}


def _json_format(path: Path) -> str | None:
    """The ``format`` a JSON file says it has, or None (not JSON, not an object, unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("format") if isinstance(data, dict) else None


def _present_table_file(path: Path) -> dict:
    """A canonical tables file as the page's JSON: each cell exact, with its percentage
    (probabilities) or its decimal (other metrics), rounded from the exact value."""
    data = json.loads(path.read_text(encoding="utf-8"))
    tables = []
    for table in data["tables"]:
        metrics = []
        for metric in table["metrics"]:
            cells = [[_stored_table_cell(text, metric.get("probability", False)) for text in row]
                     for row in metric["exact"]]
            metrics.append({"name": metric["name"], "probability": metric.get("probability", False),
                            "cells": cells})
        tables.append({"title": table["title"], "row_label": table["row_label"], "rows": table["rows"],
                       "column_label": table["column_label"], "columns": table["columns"],
                       "legend": table.get("legend", {}), "metrics": metrics})
    return {"tables": tables, "wide_bounds": decimal_text(WIDE_BOUNDS, 1)}


def _stored_table_cell(stored, probability: bool) -> dict | None:
    """A cell of a tables file: ``"p/q"``, None, or certified bounds ``{"lower", "upper"}``
    (shown "lower-upper"; the page shades a cell by the number its text starts with, here
    the lower bound, as the exporters do, unless the bounds are ``wide``: `WIDE_BOUNDS`)."""
    if stored is None:
        return None
    if isinstance(stored, dict):
        from exactdice.tables.export import bounds_text
        from exactdice.tables.grid import cell_from_data

        bounds = cell_from_data(stored)
        shown = bounds_text(bounds, percent=probability)
        return {"exact": f"[{stored['lower']}, {stored['upper']}]", "lower": stored["lower"],
                "upper": stored["upper"], "wide": bounds.upper - bounds.lower > WIDE_BOUNDS,
                ("percent" if probability else "value"): shown}
    return _table_cell(Fraction(stored), probability)


def _table_cell(value: Fraction, probability: bool) -> dict:
    if probability:
        return exact_json(value, 1)
    return {"exact": fraction_text(value), "value": decimal_text(value, 2)}


#: the environment variable that sets the token of a server open to the network
TOKEN_ENVIRONMENT_VARIABLE = "EXACTDICE_SERVE_TOKEN"
#: the request header (or ``token`` query parameter, for the page's unload beacon) carrying it
TOKEN_HEADER = "x-exactdice-token"


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
                response = JSONResponse({"status": "error", "errors": {"token": (
                    "this server is open to the network and needs its token (printed where exactdice "
                    "serve was started)" if not given else "wrong token")}}, status_code=401)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


#: Host headers the app answers by default (this machine; "testserver" is the test client's)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1", "testserver")


def create_app(store_path=None, workers: int = 2, tables_dir="default",
               worker_memory: int | None = None, allowed_hosts=LOCAL_HOSTS, token: str | None = None) -> Starlette:
    """The web app. ``store_path``: the SQLite results store (None: no cache);
    ``tables_dir``: the canonical tables to browse (default: the checkout's ``tables/``);
    ``worker_memory``: bytes of address space each worker process may use (None: no cap);
    ``allowed_hosts``: the Host headers it answers (another name is refused, so a web
    site that points its own name at 127.0.0.1 cannot reach it); ``token``: what every API
    request must carry (`TokenRequired`; a server open to the network), or None."""
    manager = JobManager(workers=workers, memory_limit=worker_memory)
    tables = _table_files(default_tables_dir() if tables_dir == "default" else
                          (Path(tables_dir) if tables_dir else None))

    def store_get(key):
        if store_path is None:
            return None
        from exactdice.tables.store import ResultStore

        with ResultStore(store_path) as store:
            return store.get(key)

    def store_put(key, value):
        if store_path is not None:
            from exactdice.tables.store import ResultStore

            with ResultStore(store_path) as store:
                store.put(key, value)

    def page(template: str, title: str) -> HTMLResponse:
        nav = "".join(f'<a href="{path}">{name}</a>' for path, (_, name) in PAGES.items())
        text = (HERE / "templates" / template).read_text(encoding="utf-8")
        layout = (HERE / "templates" / "layout.html").read_text(encoding="utf-8")
        return HTMLResponse(layout.replace("{{title}}", title).replace("{{nav}}", nav)
                            .replace("{{body}}", text))

    def page_route(path, template, title):
        async def endpoint(request):
            return page(template, title)
        return Route(path, endpoint, methods=["GET"], name=path.strip("/"))

    async def index(request):
        return RedirectResponse("/karbon")

    async def fields(request):
        system = request.path_params["system"]
        known = {"karbon": KARBON_FIELDS, "dist": DIST_FIELDS, "karbon-grid": GRID_FIELDS,
                 **{name: page.fields for name, page in SYSTEM_PAGES.items()}}
        if system not in known:
            return _errors({"system": f"unknown system {system!r}; known: {', '.join(known)}"}, 404)
        return JSONResponse({"fields": field_descriptions(known[system])})

    async def systems(request):
        return JSONResponse({"systems": [{"name": page.name, "title": page.title,
                                          "column": page.outcome_column()}
                                         for page in SYSTEM_PAGES.values()]})

    async def system_exact(request):
        began = time.perf_counter()
        page = SYSTEM_PAGES.get(request.path_params["system"])
        if page is None:
            return _errors({"system": f"unknown system {request.path_params['system']!r}; known: "
                                      f"{', '.join(SYSTEM_PAGES)}"}, 404)
        try:
            call = page.prepare(await _json_body(request))
        except FormError as error:
            return _errors(error.errors)
        key = _system_key(page, call)
        cached = await run_in_threadpool(store_get, key)
        if cached is not None:
            return JSONResponse({"status": "done", "cached": True, "result": _present_outcomes(cached),
                                 "seconds": round(time.perf_counter() - began, 4)})
        job = manager.submit("system_exact", {"system": call.system, "values": call.values},
                             on_done=lambda result: store_put(key, result))
        return job_response(job, 202)

    def job_response(job, status_code=200):
        snapshot = job.snapshot()
        if snapshot["result"] is not None:
            snapshot["result"] = _PRESENT[job.task](snapshot["result"])
            return _sized(snapshot, status_code)
        if snapshot["errors"]:
            snapshot["errors"] = {form_field(name, _JOB_FIELDS)
                                  if name != "form" else "form": with_labels(text)
                                  for name, text in snapshot["errors"].items()}
        return JSONResponse(snapshot, status_code=status_code)

    async def karbon_odds(request):
        began = time.perf_counter()
        try:
            setup, ruleset, player, narrator, limits = karbon_contest(await _json_body(request))
        except FormError as error:
            return _errors(error.errors)
        key = karbon_key(setup, ruleset, player, narrator)
        try:
            cached = await run_in_threadpool(store_get, key)
        except InputError as error:
            return _errors({"form": str(error)}, 500)
        if cached is not None:
            return JSONResponse({"status": "done", "cached": True, "result": _present_odds(cached),
                                 "seconds": round(time.perf_counter() - began, 4)})

        def keep_exact(result):  # bounds depend on the seconds searched: only exact answers are kept
            if result.get("kind") != "bounds":
                store_put(key, result)

        job = manager.submit("karbon_odds", {"setup": setup, "ruleset": ruleset, "player": player,
                                             "narrator": narrator, **limits}, on_done=keep_exact)
        return job_response(job, 202)

    async def job_status(request):   # waits without a thread: fifty pollers would hold the thread pool
        job = manager.get(request.path_params["job"])
        if job is None:
            return _errors({"job": f"no job {request.path_params['job']!r} (finished jobs are "
                                   "forgotten after a while; ask again)"}, 404)
        wait = request.query_params.get("wait", "0")
        try:
            seconds = float(wait)
            if not 0 <= seconds <= MAX_WAIT_SECONDS:
                raise ValueError
        except ValueError:
            return _errors({"wait": f"must be a number of seconds from 0 to {MAX_WAIT_SECONDS:g}, "
                                    f"got {wait!r}"})
        await _until_finished(job, seconds)
        return job_response(job)

    def cancel(request):  # a plain function: the kill and join run in a thread, not the event loop
        job = manager.get(request.path_params["job"])
        if job is None:
            return _errors({"job": f"no job {request.path_params['job']!r}"}, 404)
        job.cancel()
        return job_response(job)

    async def validate(request):
        system = request.path_params["system"]
        page = SYSTEM_PAGES.get(system)
        if system != "karbon" and page is None:
            return _errors({"system": f"unknown system {system!r}; known: karbon, {', '.join(SYSTEM_PAGES)}"}, 404)
        try:
            data = await _json_body(request)
            text = data.pop("samples", None)
            column = data.pop("column", None)   # blank: the system's outcome column for this setup
            alpha_text = data.pop("alpha", "0.01")   # left out: 0.01; an emptied box is an error
            errors = {}
            if not isinstance(text, str) or not text.strip():
                errors["samples"] = "choose a CSV file of simulated outcomes (with a header row)"
            if column is not None and not isinstance(column, str):
                errors["column"] = f"must be a column name, got {column!r}"
            try:
                alpha = float(alpha_text)
                if not 0 < alpha < 1:
                    raise ValueError
            except (TypeError, ValueError):
                errors["alpha"] = (f"must be a number strictly between 0 and 1, for example 0.01, got "
                                   f"{alpha_text!r}")
            if page is None and "max_seconds" in data:
                errors["max_seconds"] = ("is for certified bounds in the calculator; a sample is tested "
                                         "against exact odds only")
            try:
                prepared = karbon_contest(data) if page is None else page.prepare(data)
            except FormError as error:
                errors.update(error.errors)
            if errors:
                raise FormError(errors)
            all_columns = not column   # blank: the outcome column and every further one with a law, as the CLI
            if not column:
                column = "outcome" if page is None else page.outcome_column(prepared.values)
            _check_sample_head(text, column)
            if page is None:
                setup, ruleset, player, narrator, limits = prepared
                key = karbon_key(setup, ruleset, player, narrator)
                task, arguments = "validate_karbon", {"setup": setup, "ruleset": ruleset, "player": player,
                                                      "narrator": narrator, "max_states": limits["max_states"]}
            else:
                key = _system_key(page, prepared)
                task, arguments = "validate_system", {"system": system, "values": prepared.values}
            cached = await run_in_threadpool(store_get, key)   # the worker then only counts and tests
        except FormError as error:
            return _errors(error.errors)
        except InputError as error:
            return _errors({form_field(error.field, ("samples", "column", "alpha")): error.message})
        job = manager.submit(task, dict(arguments, samples=text, column=column, alpha=alpha, exact=cached,
                                        all_columns=all_columns),
                             on_done=None if cached is not None else lambda result: store_put(key, result["exact"]))
        return job_response(job, 202)

    async def dist(request):
        from exactdice.core.notation import notation_size

        try:
            data = await _json_body(request)
            unknown = [name for name in data if name != "expression"]
            if unknown:
                raise FormError({name: "unknown field" for name in unknown})
            expression = data.get("expression")
            if not isinstance(expression, str) or not expression.strip():
                raise FormError({"expression": "give a dice expression such as 3d6+2 or 4d6kh3"})
            if len(expression) > 500:
                raise FormError({"expression": f"is {len(expression)} characters long; at most 500"})
            totals, digits = notation_size(expression, field="expression")
            answer = totals * (8 * digits + 400)   # four exact values and their decimals a row
            if totals > MAX_PAGE_TOTALS or answer > MAX_ANSWER_BYTES:
                raise FormError({"expression": f"has up to {totals:,} totals (an answer of about "
                                               f"{answer / 2**20:,.0f} MiB); the page shows at most "
                                               f"{MAX_PAGE_TOTALS:,} (exactdice dist prints any size)"})
        except FormError as error:
            return _errors(error.errors)
        except InputError as error:
            return _errors({"expression": error.message})
        job = manager.submit("dist", {"expression": expression})
        await _until_finished(job, DIST_WAIT_SECONDS)   # most answers take milliseconds: answer at once
        if job.status == "done":
            return JSONResponse(_present_dist(job.result))
        if job.status == "error":
            return _errors({form_field(name, ("expression",)): with_labels(text)
                            for name, text in (job.errors or {}).items()})
        return job_response(job, 202)

    async def karbon_grid(request):
        began = time.perf_counter()
        try:
            grid = karbon_grid_arguments(await _json_body(request))
        except FormError as error:
            return _errors(error.errors)
        key = ResultKey("karbon", {}, {"result": "web_grid", **grid}, {})
        cached = await run_in_threadpool(store_get, key)
        if cached is not None:
            return JSONResponse({"status": "done", "cached": True, "result": _present_grid(cached),
                                 "seconds": round(time.perf_counter() - began, 4)})
        job = manager.submit("karbon_grid", grid, on_done=lambda result: store_put(key, result))
        return job_response(job, 202)

    async def table_list(request):
        return JSONResponse({"tables": list(tables)})

    async def table_file(request):
        name = request.path_params["name"]
        if name not in tables:  # only the listed files: no path from the request reaches the disk
            return _errors({"table": f"no canonical table {name!r}; GET /api/tables lists them"}, 404)
        return JSONResponse(_present_table_file(tables[name]))

    async def not_found(request, exc):
        if request.url.path.startswith("/api/"):
            return _errors({"path": f"no endpoint {request.url.path}"}, 404)
        return HTMLResponse("<p>No such page. <a href='/karbon'>Karbon calculator</a></p>", 404)

    async def method_not_allowed(request, exc):
        return _errors({"method": f"{request.method} is not allowed here"}, 405)

    async def store_or_input_error(request, exc):
        # e.g. a results store that became unreadable: a message, never a traceback
        return _errors({"form": str(exc)}, 500)

    async def too_large(request, exc):
        size = f"{exc.declared:,} bytes" if exc.declared is not None else f"more than {MAX_UPLOAD_BYTES:,} bytes"
        return JSONResponse({"status": "error", "errors": {"form": f"the request is {size}; at most "
                                                                   f"{MAX_UPLOAD_BYTES:,}"}},
                            status_code=413, headers={"Connection": "close"})

    async def client_gone(request, exc):   # nobody reads it; no traceback in the log
        return JSONResponse({"status": "error", "errors": {"form": "the client went away"}}, status_code=400)

    async def internal_error(request, exc):
        return _errors({"form": f"internal error ({type(exc).__name__}: {exc}); please report it"}, 500)

    routes = [Route("/", index), *(page_route(path, *info) for path, info in PAGES.items()),
              Route("/api/fields/{system}", fields),
              Route("/api/karbon/odds", karbon_odds, methods=["POST"]),
              Route("/api/validate/{system}", validate, methods=["POST"]),
              Route("/api/dist", dist, methods=["POST"]),
              Route("/api/systems", systems, methods=["GET"]),
              Route("/api/tables", table_list, methods=["GET"]),
              Route("/api/karbon/grid", karbon_grid, methods=["POST"]),
              Route("/api/tables/{name:path}", table_file, methods=["GET"]),
              Route("/api/exact/{system}", system_exact, methods=["POST"]),
              Route("/api/jobs/{job}", job_status, methods=["GET"]),
              Route("/api/jobs/{job}/cancel", cancel, methods=["POST"]),
              Mount("/static", StaticFiles(directory=HERE / "static"), name="static")]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            manager.shutdown()

    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: method_not_allowed,
                                        InputError: store_or_input_error, _TooLarge: too_large,
                                        _ClientGone: client_gone, 500: internal_error},
                    lifespan=lifespan,
                    middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
                    + ([Middleware(TokenRequired, token=token)] if token else []))
    app.state.jobs = manager
    app.state.store_path = store_path
    return app


def _system_key(page, call) -> ResultKey:
    """The results-store key of another system's exact outcomes on the page."""
    return ResultKey(page.name, {}, {"result": "web_exact", **call.values}, {})


def _check_sample_head(text: str, column: str) -> None:
    """The upload's header and first row read at once (the column missing, no rows: a 422
    now), when they are short; the whole file is counted in the worker."""
    from exactdice.web.tasks import sample_counts

    end = text.find("\n", text.find("\n") + 1)
    head = text if end < 0 else text[:end + 1]
    if len(head) <= 65_536:
        sample_counts(head, column)
