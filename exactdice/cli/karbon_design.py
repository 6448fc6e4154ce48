"""``exactdice karbon design`` and ``exactdice karbon sensitivity``: a designer's questions
(a thin layer over `exactdice.karbon.design` and `exactdice.karbon.sensitivity`)."""

from __future__ import annotations

from fractions import Fraction

import click

from exactdice.cli import design_common
from exactdice.cli.common import (
    OutputFile,
    emit_json,
    fraction_text,
    given_values,
    json_option,
    parameter_options,
    terminal_bars,
)
from exactdice.cli.table_commands import DEFAULT_WORKERS, scheduler_option
from exactdice.errors import InputError
from exactdice.karbon.system import NOT_SWEPT_PARAMETERS, PARAMETERS
from exactdice.tables.store import STORE_ENVIRONMENT_VARIABLE
from exactdice.tables.sweep import store_and_executor

__all__ = ["design", "sensitivity", "parse_target", "parse_vary"]

_VARY_EXAMPLE = "challenge=1-8,peril=0-3"


def parse_target(text: str) -> tuple[str, Fraction]:
    """``win=0.6``, ``win=60%``, ``loss=3/5`` or ``rounds=4.5`` -> (metric, exact value).

    >>> parse_target("win=60%")
    ('win', Fraction(3, 5))
    """
    from exactdice.karbon.design import METRICS

    return design_common.parse_target(text, METRICS, unbounded=("rounds",))


def parse_vary(text: str, max_setups: int = design_common.DEFAULT_MAX_SETUPS) -> dict[str, list[int]]:
    """``challenge=1-8,peril=0-3`` -> ``{"challenge": [1..8], "peril": [0..3]}``.

    >>> parse_vary("challenge=1-3,peril=0")
    {'challenge': [1, 2, 3], 'peril': [0]}
    """
    from exactdice.karbon.design import VARIABLE_PARAMETERS

    parsers = {name: design_common.integer_values for name in VARIABLE_PARAMETERS}
    return design_common.parse_vary(text, parsers, _VARY_EXAMPLE, max_setups)


_SWEEP_OPTIONS = (
    click.option("--no-cache", is_flag=True, help="Neither read nor write the results store."),
    click.option(
        "--store",
        "store_path",
        type=OutputFile(),
        default=None,
        help=f"Results store [default: ${STORE_ENVIRONMENT_VARIABLE}, else ~/.cache/exactdice/results.sqlite].",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=DEFAULT_WORKERS,
        show_default=True,
        help="Processes solving contests in parallel.",
    ),
    scheduler_option,
)


def _contest_options(required=()):
    """The contest's options `design` and `sensitivity` share, from Karbon's registry parameters."""
    return parameter_options(PARAMETERS, skip=NOT_SWEPT_PARAMETERS, roles=("setup", "rules"), required=required)


def _sweep_options(function):
    """--no-cache, --store, --workers and --scheduler: where the contests are solved."""
    return design_common.with_options(function, _SWEEP_OPTIONS)


def _design_fixed(axes: dict, given: dict) -> dict:
    """The setup parameters given as flags; a parameter both given and varied is an error."""
    fixed = design_common.fixed_from_flags(axes, given)
    for name in ("ability", "challenge"):
        if name not in fixed and name not in axes:
            raise InputError(f"--{name}", f"give --{name} or vary it (--vary {name}=1-5)")
    return fixed


def _parse_risk(text: str) -> Fraction:
    risk = design_common.parse_number(text, "--risk", "a number like 1e-6")
    if not 0 < risk < 1:
        raise InputError("--risk", f"must be between 0 and 1 (exclusive), got {text}")
    return risk


@click.command("design")
@design_common.design_query_options(
    ("win", "loss", "tie", "score", "rounds"),
    "The grid: parameters and their values, e.g. challenge=1-8,peril=0-3,consequence=1-6 "
    "(ability, challenge, consequence, peril, fortune, fallout).",
    "win=0.6",
)
@_contest_options()
@click.option("--samples", type=int, default=None, help="Contests simulated to screen each setup [default: 50,000].")
@click.option(
    "--risk",
    "risk_text",
    default="1e-6",
    show_default=True,
    help="Chance allowed that some screen misses its exact value (all screens together).",
)
@click.option("--exhaustive", is_flag=True, help="Solve every setup exactly (no screening).")
@_sweep_options
def design(
    target_text,
    vary_text,
    tolerance,
    best,
    full_fractions,
    as_json,
    max_setups,
    samples,
    risk_text,
    exhaustive,
    no_cache,
    store_path,
    workers,
    scheduler,
    **values,
):
    """The setups whose exact P(win) (or loss, tie, score, expected rounds) is closest to a
    target, best first.

    \b
    Examples:
      exactdice karbon design --target win=0.6 --ability 3 --vary challenge=1-8,peril=0-3
      exactdice karbon design --target win=60% --tolerance 5% -a 2 --vary challenge=1-5,consequence=1-3
      exactdice karbon design --target rounds=4 -a 2 -w 2 --vary challenge=1-4 --json

    \b
    How few setups it solves: each setup is first screened by a seeded simulation
    (an interval that holds its exact value except with probability --risk, over
    all setups together); only setups whose interval can reach the answer are solved
    exactly, the most promising first. No monotonicity is assumed. Every value shown
    is exact. Expected rounds, optimal and kind play have no screen: every setup is
    solved. --exhaustive solves every setup in any case. Results are kept in the
    store, so asking again (another target on the same grid) reuses them.
    """
    from exactdice.answers import design as design_search
    from exactdice.karbon.design import DEFAULT_SAMPLES, METRICS, VARIABLE_PARAMETERS

    metric, target = parse_target(target_text)
    axes = parse_vary(vary_text, max_setups)
    given = given_values(values)
    fixed = _design_fixed(axes, {name: given.get(name) for name in VARIABLE_PARAMETERS})
    fixed.update({name: given[name] for name in ("training", "pool", "reserve") if name in given})
    tolerance_value = design_common.parse_tolerance(tolerance)
    risk = _parse_risk(risk_text)
    samples = samples or DEFAULT_SAMPLES
    bars = terminal_bars()
    try:
        with store_and_executor(store_path, no_cache=no_cache, scheduler=scheduler) as (store, executor):
            found = design_search(
                "karbon",
                axes,
                fixed,
                metric=metric,
                target=target,
                tolerance=tolerance_value,
                best=best,
                store=store,
                workers=workers,
                executor=executor,
                progress=bars,
                exhaustive=exhaustive,
                risk=risk,
                player=values["player_policy"],
                narrator=values["narrator_policy"],
                rules=tuple(values["rules"]),
                samples=samples,
            )
    finally:
        if bars is not None:
            bars.close()
    method = (
        "no screen (every setup solved)"
        if found.exhaustive
        else f"all screened by simulation ({samples:,} contests each)"
    )
    design_common.report_design(
        found,
        metric=metric,
        meaning=METRICS[metric],
        axes=axes,
        fixed=fixed,
        as_json=as_json,
        full_fractions=full_fractions,
        as_number=metric == "rounds",
        method=method,
        extra_json={
            "risk": None if found.risk is None else fraction_text(found.risk),
            "samples": None if found.exhaustive else samples,
        },
    )
    if not as_json and not found.exhaustive:
        click.echo(
            f"(the screens' intervals hold together with probability >= 1 - {float(found.risk):g};"
            " --exhaustive solves every setup)"
        )


# library errors name the design's parameters; these are the flags that set them
design.parameter_flags = {"metric": "--target", "axes": "--vary"}


# ----- sensitivity -------------------------------------------------------------------------


def _signed(value, metric: str) -> str:
    if value is None:
        return "undefined"
    if value == 0:
        return "0"  # exactly: a rounded +0.00 could hide a tiny change
    if metric == "expected rounds":
        return f"{float(value):+.4f}"
    return f"{100 * float(value):+.2f}"


@click.command("sensitivity")
@_contest_options(required=("ability", "challenge"))
@click.option(
    "--plot",
    "plot_path",
    type=OutputFile(),
    default=None,
    help="Also draw to this PNG: P(win) against each setup parameter one step down and up "
    "(the what-if strip), then the tornado of every change's effect on P(win).",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=None,
    help="Show only the TOP changes with the largest effect (text and chart; JSON keeps all).",
)
@click.option(
    "--max-states",
    type=int,
    default=None,
    help="Each contest's state budget; a change whose exact game passes it is skipped, with "
    "the reason (a player who risks every round explores millions of states on the "
    "default pool).  [default: 100,000]",
)
@_sweep_options
@json_option
def sensitivity(plot_path, top, max_states, no_cache, store_path, workers, scheduler, as_json, **values):
    """How P(win), P(loss), P(tie) and expected rounds move with each one-step change of a
    setup, sorted by effect (the largest move of any of the three probabilities).

    \b
    Changes: Ability, Challenge, Consequence, Peril, Fortune and Fallout one step down
    and up, Training flipped, each rule knob set to each other value, and each
    preference of a fixed player or narrator changed one at a time (for an order:
    each other option moved to the front). Every value is exact; the text shows
    changes in percentage points (rounds as numbers; "0" means exactly no change),
    the JSON exact differences.

    \b
    Examples:
      exactdice karbon sensitivity -a 3 -c 3 -w 2 -p 1
      exactdice karbon sensitivity -a 2 -c 2 --plot tornado.png --top 15 --json
    """
    from exactdice.answers import karbon_sensitivity
    from exactdice.karbon.sensitivity import DEFAULT_VARIANT_STATES, tornado_chart

    if plot_path:
        from exactdice.tables.charts import check_png_path

        check_png_path(plot_path, "--plot")
    bars = terminal_bars()
    try:
        with store_and_executor(store_path, no_cache=no_cache, scheduler=scheduler) as (store, executor):
            report = karbon_sensitivity(
                given_values(values),
                store=store,
                workers=workers,
                executor=executor,
                progress=bars,
                max_states=DEFAULT_VARIANT_STATES if max_states is None else max_states,
            )
    finally:
        if bars is not None:
            bars.close()
    if plot_path:
        tornado_chart(report, plot_path, top=top or 25)
    if as_json:
        _sensitivity_json(report, plot_path)
    else:
        _sensitivity_text(report, report.rows if top is None else report.rows[:top])
        if plot_path:
            click.echo(f"wrote the what-if strip and the tornado chart to {plot_path}", err=True)


def _sensitivity_json(report, plot_path) -> None:
    exact = design_common.exact_json
    emit_json(
        {
            "base": {key: (list(value) if isinstance(value, tuple) else value) for key, value in report.base.items()},
            "base_values": {metric: exact(value) for metric, value in report.base_values.items()},
            "changes": [
                {
                    "group": row.group,
                    "change": row.name,
                    "effect": exact(row.effect),
                    "values": {m: exact(v) for m, v in row.values.items()},
                    "deltas": {m: exact(v) for m, v in row.deltas.items()},
                }
                for row in report.rows
            ],
            "skipped": [{"change": name, "reason": _flags_in(reason)} for name, reason in report.skipped],
            "plot": plot_path,
        }
    )


def _sensitivity_text(report, rows) -> None:
    from exactdice.karbon.sensitivity import METRICS

    base, values = report.base, report.base_values
    rounds = values["expected rounds"]
    click.echo(
        f"base: A{base['ability']} C{base['challenge']} W{base['consequence']} P{base['peril']} "
        f"F{base['fortune']} K{base['fallout']}{' Training' if base['training'] else ''}: "
        f"P(win) {100 * float(values['P(win)']):.2f} %, "
        f"P(loss) {100 * float(values['P(loss)']):.2f} %, P(tie) {100 * float(values['P(tie)']):.2f} %, "
        + ("expected rounds undefined" if rounds is None else f"expected rounds {float(rounds):.3f}")
    )
    click.echo(f"{'change':<44} {'P(win)':>8} {'P(loss)':>8} {'P(tie)':>8} {'rounds':>8}")
    click.echo(f"{'':<44} {'points':>8} {'points':>8} {'points':>8} {'':>8}")
    for row in rows:
        click.echo(f"{row.name[:44]:<44} " + " ".join(f"{_signed(row.deltas[m], m):>8}" for m in METRICS))
    for name, reason in report.skipped:
        click.echo(f"skipped {name}: {_flags_in(reason)}")


def _flags_in(text: str) -> str:
    """Library text naming parameters, in the command's flags."""
    from exactdice.cli.common import command_flags, with_flags

    return with_flags(text, command_flags(click.get_current_context().command))
