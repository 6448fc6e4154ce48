"""A job's state (``GET /api/jobs/{job}?wait=S``, held on the event loop: fifty pollers hold no
thread) and its Cancel (``POST /api/jobs/{job}/cancel``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from exactdice.web.http import MAX_WAIT_SECONDS, errors, job_response, until_finished
from exactdice.web.services import services

__all__ = ["ROUTES"]


async def job_status(request: Request):
    job = services(request).jobs.get(request.path_params["job"])
    if job is None:
        return errors(
            {"job": f"no job {request.path_params['job']!r} (finished jobs are forgotten after a while; ask again)"},
            404,
        )
    wait = request.query_params.get("wait", "0")
    try:
        seconds = float(wait)
        if not 0 <= seconds <= MAX_WAIT_SECONDS:
            raise ValueError
    except ValueError:
        return errors({"wait": f"must be a number of seconds from 0 to {MAX_WAIT_SECONDS:g}, got {wait!r}"})
    await until_finished(job, seconds)
    return job_response(job)


def cancel(request: Request):
    """A plain function: the stop and the wait for the worker run in a thread, not the event loop."""
    job = services(request).jobs.get(request.path_params["job"])
    if job is None:
        return errors({"job": f"no job {request.path_params['job']!r}"}, 404)
    job.cancel()
    return job_response(job)


ROUTES = [
    Route("/api/jobs/{job}", job_status, methods=["GET"]),
    Route("/api/jobs/{job}/cancel", cancel, methods=["POST"]),
]
