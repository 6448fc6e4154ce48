"""The canonical tables: their list (``GET /api/tables``) and one file's tables as heatmap data
(``GET /api/tables/{name}``; only listed files: no path from the request reaches the disk)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from exactdice.web.http import errors
from exactdice.web.present import table_file_json
from exactdice.web.services import services

__all__ = ["ROUTES"]


@functools.lru_cache(maxsize=256)
def _title(path) -> str:
    """The first table's title in a table file (a narrator reads titles, not file names)."""
    try:
        tables = json.loads(Path(path).read_text(encoding="utf-8"))["tables"]
        return tables[0]["title"] + (f" (and {len(tables) - 1} more)" if len(tables) > 1 else "")
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return ""


async def listing(request: Request):
    tables = services(request).tables
    return JSONResponse({"tables": list(tables), "titles": {name: _title(path) for name, path in tables.items()}})


async def table_file(request: Request):
    name, tables = request.path_params["name"], services(request).tables
    if name not in tables:
        return errors({"table": f"no canonical table {name!r}; GET /api/tables lists them"}, 404)
    return JSONResponse(table_file_json(tables[name]))


ROUTES = [Route("/api/tables", listing, methods=["GET"]), Route("/api/tables/{name:path}", table_file, methods=["GET"])]
