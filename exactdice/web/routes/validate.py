"""Validate (``POST /api/validate/{name}``): an uploaded CSV of simulated outcomes against a
computation's exact laws, tested in a worker as ``exactdice validate`` tests a file
(`exactdice.answers.validate_samples`); the outcome column's exact law is kept in the
results store, so asking again only counts and tests."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from exactdice.answers.systems import computations
from exactdice.errors import InputError
from exactdice.web.forms import FormError, fields, get_parameters, read_computation
from exactdice.web.http import errors, form_errors, job_response, json_body
from exactdice.web.services import services

__all__ = ["ROUTES"]

_OWN = ("samples", "column", "alpha")


def _own_fields(data: dict) -> tuple[str, str | None, float]:
    """The upload, the column asked for (blank: every column with a law) and alpha, checked."""
    text, column = data.pop("samples", None), data.pop("column", None)
    alpha_text = data.pop("alpha", "0.01")  # left out: 0.01; an emptied box is an error
    found = {}
    if not isinstance(text, str) or not text.strip():
        found["samples"] = "choose a CSV file of simulated outcomes (with a header row)"
    if column is not None and not isinstance(column, str):
        found["column"] = f"must be a column name, got {column!r}"
    try:
        alpha = float(alpha_text)
        if not 0 < alpha < 1:
            raise ValueError
    except (TypeError, ValueError):
        found["alpha"] = f"must be a number strictly between 0 and 1, for example 0.01, got {alpha_text!r}"
    if found:
        raise FormError(found)
    return text, (column or "").strip() or None, alpha


def _check_sample_head(text: str, name: str, values: dict, column: str | None) -> None:
    """The upload's header and first row read at once (the column missing, no rows: a 422
    now), when they are short; the whole file is counted in the worker."""
    from exactdice.web.tasks import uploaded

    declared = computations()[name].rules_system()
    column = column or declared.outcome_column(declared.setup(values))
    end = text.find("\n", text.find("\n") + 1)
    head = text if end < 0 else text[: end + 1]
    if len(head) > 65_536:
        return
    from exactdice.validation import read_sample_column

    with uploaded(head) as path:
        try:
            read_sample_column(path, column, field="samples")
        except InputError as error:
            raise FormError({"samples": error.message.replace(path, "the uploaded file")}) from None


def _setup_values(name: str, data: dict) -> dict:
    """The setup the samples were simulated with; no bounds here (a sample is tested against
    exact odds only)."""
    problems = {}
    if name == "karbon" and "max_seconds" in data:
        problems["max_seconds"] = (
            "is for certified bounds in the calculator; a sample is tested against exact odds only"
        )
        data.pop("max_seconds")
    try:
        values = read_computation(name, data)
    except FormError as error:
        raise FormError({**problems, **error.errors}) from None
    if problems:
        raise FormError(problems)
    values.pop("max_seconds", None)
    return values


@form_errors
async def validate(request: Request):
    name = request.path_params["system"]
    if name not in computations():
        return errors({"system": f"unknown system {name!r}; known: {', '.join(computations())}"}, 404)
    data = await json_body(request)
    own_errors, values_errors = {}, {}
    try:
        samples, column, alpha = _own_fields(data)
    except FormError as error:
        own_errors = error.errors
    try:
        values = _setup_values(name, data)
    except FormError as error:
        values_errors = error.errors
    if own_errors or values_errors:
        raise FormError({**own_errors, **values_errors})
    _check_sample_head(samples, name, values, column)
    found = services(request)
    key = found.store.key(name, "law", {name_: value for name_, value in values.items() if name_ != "max_states"})
    law = await found.store.get(key)

    def keep(result):
        if law is None:
            found.store.put(key, result["law"])

    job = found.jobs.submit(
        "validate",
        {
            "system": name,
            "values": values,
            "samples": samples,
            "column": column,
            "alpha": alpha,
            "law": None if law is None else dict(law),
        },
        on_done=keep,
        fields=[*_OWN, *(field.name for field in fields(get_parameters(name)))],
    )
    return job_response(job, 202)


ROUTES = [Route("/api/validate/{system}", validate, methods=["POST"])]
