"""A dice expression's exact distribution (``POST /api/dist``): sized up front, then solved in
the quick workers; most answers come at once, a longer one is a job to follow."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from exactdice.errors import InputError
from exactdice.web.forms import FormError
from exactdice.web.http import MAX_ANSWER_BYTES, errors, form_errors, job_response, json_body, until_finished
from exactdice.web.present import present, with_labels
from exactdice.web.services import services

__all__ = ["ROUTES", "MAX_PAGE_TOTALS", "DIST_WAIT_SECONDS"]

#: the most totals a distribution shown on the page may have (a chart of more bars says nothing)
MAX_PAGE_TOTALS = 20_000
#: how long a dist request waits for its worker's answer before the page follows the job
DIST_WAIT_SECONDS = 2.0


def _expression(data: dict) -> str:
    """The expression sent, checked and sized before any work (`FormError`)."""
    from exactdice.core.notation import notation_size

    unknown = [name for name in data if name != "expression"]
    if unknown:
        raise FormError({name: "unknown field" for name in unknown})
    expression = data.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise FormError({"expression": "give a dice expression such as 3d6+2 or 4d6kh3"})
    if len(expression) > 500:
        raise FormError({"expression": f"is {len(expression)} characters long; at most 500"})
    try:
        totals, digits = notation_size(expression, field="expression")
    except InputError as error:
        raise FormError({"expression": error.message}) from None
    answer = totals * (8 * digits + 400)  # four exact values and their decimals a row
    if totals > MAX_PAGE_TOTALS or answer > MAX_ANSWER_BYTES:
        raise FormError(
            {
                "expression": f"has up to {totals:,} totals (an answer of about {answer / 2**20:,.0f} MiB); "
                f"the page shows at most {MAX_PAGE_TOTALS:,} (exactdice dist prints any size)"
            }
        )
    return expression


@form_errors
async def dist(request: Request):
    expression = _expression(await json_body(request))
    job = services(request).jobs.submit("dist", {"expression": expression}, fields=("expression",))
    await until_finished(job, DIST_WAIT_SECONDS)  # most answers take milliseconds: answer at once
    if job.status == "done":
        return JSONResponse(present(job.result))
    if job.status == "error":
        return errors(
            {("expression" if name != "form" else name): with_labels(text) for name, text in (job.errors or {}).items()}
        )
    return job_response(job, 202)


ROUTES = [Route("/api/dist", dist, methods=["POST"])]
