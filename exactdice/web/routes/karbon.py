"""The Karbon calculator's API: a contest's odds (``POST /api/karbon/odds``), its what-if strip
(``POST /api/karbon/whatif``), how long it lasts (``POST /api/karbon/length``) and a new grid
of contests (``POST /api/karbon/grid``), each
answered from the results store or by a job calling its library entry point
(`exactdice.web.tasks`)."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.routing import Route

from exactdice.web.forms import grid_fields, grid_request, karbon_fields, read_computation
from exactdice.web.http import form_errors, job_response, json_body
from exactdice.web.services import answered, keeper, services

__all__ = ["ROUTES"]

#: limits that change how far an answer goes, not the answer: no part of its key
_NOT_IN_THE_KEY = ("max_states", "max_seconds")


@form_errors
async def odds(request: Request):
    began, found = time.perf_counter(), services(request)
    values = read_computation("karbon", await json_body(request))
    key = found.store.key(
        "karbon", "odds", {name: value for name, value in values.items() if name not in _NOT_IN_THE_KEY}
    )
    cached = await found.store.get(key)
    if cached is not None:
        return answered(cached, began)
    # bounds depend on the seconds searched: only exact answers are kept
    job = found.jobs.submit(
        "karbon_odds",
        {"values": values},
        fields=karbon_fields(),
        on_done=keeper(request, key, keep=lambda result: result.get("kind") != "bounds"),
    )
    return job_response(job, 202)


async def _exact_only(request: Request, task: str):
    """A follow-up of the odds that the exact game alone answers (no bounds): the what-if strip,
    how long the contest lasts."""
    began, found = time.perf_counter(), services(request)
    values = read_computation("karbon", await json_body(request))
    values.pop("max_seconds", None)
    key = found.store.key("karbon", task, values)
    cached = await found.store.get(key)
    if cached is not None:
        return answered(cached, began)
    job = found.jobs.submit(task, {"values": values}, on_done=keeper(request, key), fields=karbon_fields())
    return job_response(job, 202)


@form_errors
async def what_if(request: Request):
    return await _exact_only(request, "what_if")


@form_errors
async def length(request: Request):
    return await _exact_only(request, "karbon_length")


@form_errors
async def grid(request: Request):
    began, found = time.perf_counter(), services(request)
    values, axes = grid_request(await json_body(request))
    key = found.store.key("karbon", "grid", {**values, "axes": [[name, listed] for name, listed in axes.items()]})
    cached = await found.store.get(key)
    if cached is not None:
        return answered(cached, began)
    job = found.jobs.submit(
        "karbon_grid",
        {"values": values, "axes": axes},
        on_done=keeper(request, key),
        fields=[field.name for field in grid_fields()],
    )
    return job_response(job, 202)


ROUTES = [
    Route("/api/karbon/odds", odds, methods=["POST"]),
    Route("/api/karbon/whatif", what_if, methods=["POST"]),
    Route("/api/karbon/length", length, methods=["POST"]),
    Route("/api/karbon/grid", grid, methods=["POST"]),
]
