"""The other games and every form: the computations the registry offers
(``GET /api/systems``), a form's fields (``GET /api/fields/{name}``) and a computation's exact
outcomes with its pictures (``POST /api/exact/{name}``)."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from exactdice.answers.systems import computations
from exactdice.web.forms import DIST_FIELDS, fields, get_parameters, grid_fields, read_computation
from exactdice.web.http import errors, form_errors, job_response, json_body
from exactdice.web.services import answered, keeper, services

__all__ = ["ROUTES"]


def _form(name: str):
    """The fields of the form called *name* (a computation, ``dist`` or ``karbon-grid``), or None."""
    if name == "dist":
        return DIST_FIELDS
    if name == "karbon-grid":
        return grid_fields()
    if name in computations():
        return fields(get_parameters(name))
    return None


async def form_fields(request: Request):
    shown = _form(request.path_params["system"])
    if shown is None:
        known = ", ".join([*computations(), "dist", "karbon-grid"])
        return errors({"system": f"unknown system {request.path_params['system']!r}; known: {known}"}, 404)
    return JSONResponse({"fields": [field.describe() for field in shown]})


def _column(name: str) -> str:
    """A computation's outcome column with the defaults (the usual one where a value is needed)."""
    from exactdice.errors import InputError

    declared = computations()[name].rules_system()
    try:
        return declared.outcome_column(declared.setup({}))
    except InputError:
        return "outcome"


async def listing(request: Request):
    """Every computation but Karbon's (the calculator has a page of its own), by task."""
    return JSONResponse(
        {
            "systems": [
                {"name": name, "title": found.task, "column": _column(name)}
                for name, found in computations().items()
                if found.system != "karbon"
            ]
        }
    )


@form_errors
async def exact(request: Request):
    name = request.path_params["system"]
    if name not in computations() or name == "karbon":
        known = ", ".join(other for other in computations() if other != "karbon")
        return errors({"system": f"unknown system {name!r}; known: {known}"}, 404)
    began, found = time.perf_counter(), services(request)
    values = read_computation(name, await json_body(request))
    key = found.store.key(name, "exact", values)
    cached = await found.store.get(key)
    if cached is not None:
        return answered(cached, began)
    job = found.jobs.submit(
        "system_exact",
        {"system": name, "values": values},
        on_done=keeper(request, key),
        fields=[field.name for field in _form(name)],
    )
    return job_response(job, 202)


ROUTES = [
    Route("/api/fields/{system}", form_fields),
    Route("/api/systems", listing, methods=["GET"]),
    Route("/api/exact/{system}", exact, methods=["POST"]),
]
