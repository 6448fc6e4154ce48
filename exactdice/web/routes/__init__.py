"""The server's routes, one module per page and its API: `pages` (the HTML pages), `karbon`
(the calculator, its what-if strip and a new grid), `systems` (the other games and every
form's fields), `validate`, `dist`, `tables` and `jobs` (a job's state and its Cancel).

Every endpoint is a plain function of its request; what it needs (the results store, the
job layer, the canonical tables, the templates) it reads from the app
(`exactdice.web.services.services`).
"""

from __future__ import annotations

from starlette.routing import BaseRoute

__all__ = ["all_routes"]


def all_routes() -> list[BaseRoute]:
    """Every route of the server, the pages first."""
    from exactdice.web.routes import dist, jobs, karbon, pages, systems, tables, validate

    return [
        *pages.ROUTES,
        *karbon.ROUTES,
        *systems.ROUTES,
        *validate.ROUTES,
        *dist.ROUTES,
        *tables.ROUTES,
        *jobs.ROUTES,
    ]
