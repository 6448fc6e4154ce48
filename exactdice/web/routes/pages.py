"""The HTML pages: each a Jinja2 template (``exactdice/web/templates``) inside the layout,
whose navigation lists `PAGES`."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from exactdice.web.services import services

__all__ = ["PAGES", "ROUTES"]

#: page path -> (template file, title in the navigation)
PAGES = {
    "/karbon": ("karbon.html", "Karbon contest"),
    "/systems": ("systems.html", "Other games"),
    "/validate": ("validate.html", "Validate"),
    "/dist": ("dist.html", "Distribution"),
    "/tables": ("tables.html", "Tables"),
}


async def page(request: Request):
    """One page in the layout."""
    template, title = PAGES[request.url.path]
    return services(request).templates.TemplateResponse(request, template, {"title": title, "pages": PAGES})


async def index(request: Request):
    return RedirectResponse("/karbon")


ROUTES = [Route("/", index), *(Route(path, page, methods=["GET"], name=path.strip("/")) for path in PAGES)]
