"""The canonical tables: their list (``GET /api/tables``) and one file's tables as heatmap data
(``GET /api/tables/{name}``; only listed files: no path from the request reaches the disk)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from exactdice.web.http import errors
from exactdice.web.present import table_file_json
from exactdice.web.services import services

__all__ = ["ROUTES"]


async def listing(request: Request):
    return JSONResponse({"tables": list(services(request).tables)})


async def table_file(request: Request):
    name, tables = request.path_params["name"], services(request).tables
    if name not in tables:
        return errors({"table": f"no canonical table {name!r}; GET /api/tables lists them"}, 404)
    return JSONResponse(table_file_json(tables[name]))


ROUTES = [Route("/api/tables", listing, methods=["GET"]), Route("/api/tables/{name:path}", table_file, methods=["GET"])]
