"""The Karbon calculator's API: a contest's odds (``POST /api/karbon/odds``), its what-if strip
(``POST /api/karbon/whatif``) and a new grid of contests (``POST /api/karbon/grid``), each
answered from the results store or by a job calling its library entry point
(`exactdice.web.tasks`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from exactdice.web.forms import grid_fields, grid_request, karbon_fields, read_computation
from exactdice.web.http import form_errors, json_body
from exactdice.web.services import cached_or_started, services

__all__ = ["ROUTES"]

#: limits that change how far an answer goes, not the answer: no part of its key
_NOT_IN_THE_KEY = ("max_states", "max_seconds")


@form_errors
async def odds(request: Request):
    values = read_computation("karbon", await json_body(request))
    key = services(request).store.key("karbon", "odds", {name: value for name, value in values.items()
                                                         if name not in _NOT_IN_THE_KEY})
    # bounds depend on the seconds searched: only exact answers are kept
    return await cached_or_started(request, key, "karbon_odds", {"values": values},
                                   keep=lambda result: result.get("kind") != "bounds", fields=karbon_fields())


@form_errors
async def what_if(request: Request):
    values = read_computation("karbon", await json_body(request))
    values.pop("max_seconds", None)   # each change is solved exactly or skipped: no bounds
    key = services(request).store.key("karbon", "what_if", values)
    return await cached_or_started(request, key, "what_if", {"values": values}, fields=karbon_fields())


@form_errors
async def grid(request: Request):
    values, axes = grid_request(await json_body(request))
    key = services(request).store.key("karbon", "grid", {**values, "axes": [[name, listed] for name, listed
                                                                           in axes.items()]})
    return await cached_or_started(request, key, "karbon_grid", {"values": values, "axes": axes},
                                   fields=[field.name for field in grid_fields()])


ROUTES = [Route("/api/karbon/odds", odds, methods=["POST"]), Route("/api/karbon/whatif", what_if, methods=["POST"]),
          Route("/api/karbon/grid", grid, methods=["POST"])]
