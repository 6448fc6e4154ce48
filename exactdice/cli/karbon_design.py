"""``exactdice karbon design`` and ``exactdice karbon sensitivity``: a designer's questions
(a thin layer over `exactdice.karbon.design` and `exactdice.karbon.sensitivity`)."""

from __future__ import annotations

import sys
from fractions import Fraction

import click

from exactdice.cli.common import emit_json, fraction_text, json_option
from exactdice.cli.table_commands import DEFAULT_WORKERS, scheduler_option
from exactdice.errors import InputError
from exactdice.karbon.dice import dice_text
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE
from exactdice.tables.store import STORE_ENVIRONMENT_VARIABLE

__all__ = ["design", "sensitivity", "parse_target", "parse_vary"]

_SHORT_FRACTION = 40


def parse_target(text: str) -> tuple[str, Fraction]:
    """``win=0.6``, ``win=60%``, ``loss=3/5`` or ``rounds=4.5`` -> (metric, exact value).

    >>> parse_target("win=60%")
    ('win', Fraction(3, 5))
    """
    from exactdice.karbon.design import METRICS

    metric, equals, value = text.partition("=")
    metric, value = metric.strip().lower(), value.strip()
    if not equals or metric not in METRICS:
        raise InputError("--target", f'write METRIC=VALUE with METRIC one of {", ".join(METRICS)}, '
                                     f'e.g. win=0.6; got "{text}"')
    try:
        number = Fraction(value[:-1]) / 100 if value.endswith("%") else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InputError("--target", f'"{value}" is not a number (0.6, 60% or 3/5)') from None
    if metric != "rounds" and not 0 <= number <= 1:
        raise InputError("--target", f"a probability target must be from 0 to 1 (0% to 100%), got {value}")
    if metric == "rounds" and number < 0:
        raise InputError("--target", f"expected rounds cannot be negative, got {value}")
    return metric, number


def parse_vary(text: str) -> dict[str, list[int]]:
    """``challenge=1-8,peril=0-3`` -> ``{"challenge": [1..8], "peril": [0..3]}``.

    >>> parse_vary("challenge=1-3,peril=0")
    {'challenge': [1, 2, 3], 'peril': [0]}
    """
    from exactdice.karbon.design import VARIABLE_PARAMETERS

    axes: dict[str, list[int]] = {}
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        if "=" not in part:
            if not axes:
                raise InputError("--vary", f'write NAME=RANGE[,NAME=RANGE...], e.g. challenge=1-8,peril=0-3; '
                                           f'got "{text}"')
            # "challenge=1,3,5": a bare number continues the previous parameter's list
            name = list(axes)[-1]
            axes[name] += _values(part, name)
            continue
        name, _, values = part.partition("=")
        name = name.strip().lower()
        if name not in VARIABLE_PARAMETERS:
            raise InputError("--vary", f"cannot vary {name!r}; choose from {', '.join(VARIABLE_PARAMETERS)}")
        if name in axes:
            raise InputError("--vary", f"{name} is given twice")
        axes[name] = _values(values.strip(), name)
    if not axes:
        raise InputError("--vary", "give at least one NAME=RANGE, e.g. challenge=1-8")
    for name, values in axes.items():
        if len(set(values)) != len(values):
            raise InputError("--vary", f"{name} lists a value twice")
    return axes


def _values(text: str, name: str) -> list[int]:
    low, dash, high = text.partition("-")
    try:
        if dash:
            start, stop = int(low), int(high)
            if stop < start:
                raise ValueError
            if stop - start > 1000:
                raise InputError("--vary", f"{name}={text} has {stop - start + 1} values; at most 1001")
            return list(range(start, stop + 1))
        return [int(text)]
    except ValueError:
        raise InputError("--vary", f'{name}: "{text}" is not a number or a range like 1-8') from None


def _percent_or_number(value: Fraction, metric: str) -> str:
    return f"{float(value):.4f}" if metric == "rounds" else f"{100 * float(value):.2f} %"


def _exact_text(value: Fraction, full: bool) -> str:
    text = fraction_text(value)
    if full or len(text) <= _SHORT_FRACTION:
        return text
    numerator, _, denominator = text.partition("/")
    return f"({len(numerator)}/{len(denominator)}-digit fraction)"


def _exact_json(value: Fraction | None) -> str | None:
    # an exact "p/q" string; emit_json adds its decimal in the document's "decimal" mirror
    return None if value is None else fraction_text(value)


@click.command("design")
@click.option("--target", "target_text", required=True, metavar="METRIC=VALUE",
              help="What to aim at: win, loss, tie (probabilities: 0.6, 60% or 3/5), score "
                   "(P(win) + P(tie)/2) or rounds (expected rounds), e.g. win=0.6.")
@click.option("--vary", "vary_text", required=True, metavar="NAME=RANGE,...",
              help="The grid: parameters and their values, e.g. challenge=1-8,peril=0-3,consequence=1-6 "
                   "(ability, challenge, consequence, peril, fortune, fallout).")
@click.option("--tolerance", default=None, metavar="VALUE",
              help="List every setup within this distance of the target (0.05 or 5%); "
                   "without it, the --best closest.")
@click.option("--best", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many of the closest setups to list (without --tolerance).")
@click.option("--ability", "-a", type=int, default=None, help="Fixed Ability (or vary it).")
@click.option("--challenge", "-c", type=int, default=None, help="Fixed Challenge (or vary it).")
@click.option("--consequence", "-w", type=int, default=None, help="Fixed Consequence W [default: 2].")
@click.option("--peril", "-p", type=int, default=None, help="Fixed Peril P [default: 0].")
@click.option("--fortune", type=int, default=None, help="Fixed Fortune F [default: 0].")
@click.option("--fallout", type=int, default=None, help="Fixed Fallout K [default: 0].")
@click.option("--training", is_flag=True, help="The player gains 1 chip per d8 drawn.")
@click.option("--pool", default=dice_text(DEFAULT_POOL), show_default=True, help="The main pool.")
@click.option("--reserve", default=dice_text(DEFAULT_RESERVE), show_default=True, help="The reserve.")
@click.option("--player-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--narrator-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--rule", "rules", multiple=True, metavar="NAME=VALUE", help="A ruleset knob (repeatable), as for `karbon odds`.")
@click.option("--samples", type=int, default=None,
              help="Contests simulated to screen each setup [default: 50,000].")
@click.option("--risk", "risk_text", default="1e-6", show_default=True,
              help="Chance allowed that some screen misses its exact value (all screens together).")
@click.option("--exhaustive", is_flag=True, help="Solve every setup exactly (no screening).")
@click.option("--exact", "full_fractions", is_flag=True, help="Print exact values in full, however long.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the results store.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
              help=f"Results store [default: ${STORE_ENVIRONMENT_VARIABLE}, else ~/.cache/exactdice/results.sqlite].")
@click.option("--workers", type=click.IntRange(min=1), default=DEFAULT_WORKERS, show_default=True,
              help="Processes solving setups in parallel.")
@scheduler_option
@json_option
def design(target_text, vary_text, tolerance, best, ability, challenge, consequence, peril, fortune,
           fallout, training, pool, reserve, player_policy, narrator_policy, rules, samples, risk_text,
           exhaustive, full_fractions, no_cache, store_path, workers, scheduler, as_json):
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
    from exactdice.karbon.design import DEFAULT_SAMPLES, METRICS, karbon_design_problem
    from exactdice.design import design_search
    from exactdice.tables.store import open_store
    from exactdice.tables.sweep import executor_for

    metric, target = parse_target(target_text)
    axes = parse_vary(vary_text)
    given = {"ability": ability, "challenge": challenge, "consequence": consequence, "peril": peril,
             "fortune": fortune, "fallout": fallout}
    for name in axes:
        if given.get(name) is not None:
            raise InputError(f"--{name}", f"{name} is varied by --vary; drop --{name} or take it out of --vary")
    fixed = {name: value for name, value in given.items() if value is not None}
    for name in ("ability", "challenge"):
        if name not in fixed and name not in axes:
            raise InputError(f"--{name}", f"give --{name} or vary it (--vary {name}=1-5)")
    fixed.update(training=training, pool=pool, reserve=reserve)
    tolerance_value = None
    if tolerance is not None:
        try:
            text = tolerance.strip()
            tolerance_value = Fraction(text[:-1]) / 100 if text.endswith("%") else Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise InputError("--tolerance", f'"{tolerance}" is not a number (0.05 or 5%)') from None
        if tolerance_value < 0:
            raise InputError("--tolerance", f"must be >= 0, got {tolerance}")
    try:
        risk = Fraction(risk_text)
    except (ValueError, ZeroDivisionError):
        raise InputError("--risk", f'"{risk_text}" is not a number like 1e-6') from None
    if not 0 < risk < 1:
        raise InputError("--risk", f"must be between 0 and 1 (exclusive), got {risk_text}")
    problem = karbon_design_problem(axes, fixed, metric=metric, player=player_policy,
                                    narrator=narrator_policy, rules=tuple(rules),
                                    samples=samples or DEFAULT_SAMPLES)
    store = open_store(store_path, no_cache=no_cache)
    try:
        with executor_for(scheduler) as executor:
            found = design_search(problem, target=target, tolerance=tolerance_value, best=best,
                                  store=store, workers=workers, executor=executor,
                                  progress=sys.stderr.isatty(), exhaustive=exhaustive, risk=risk)
    finally:
        if store is not None:
            store.close()

    names = list(axes)
    if as_json:
        emit_json({
            "target": {"metric": metric, "meaning": METRICS[metric], "value": _exact_json(target)},
            "tolerance": None if tolerance_value is None else _exact_json(tolerance_value),
            "fixed": fixed, "varied": axes,
            "candidates": [{"setup": candidate.point, "value": _exact_json(candidate.value),
                            "distance": _exact_json(candidate.distance)}
                           for candidate in found.candidates],
            "within_tolerance": found.within_tolerance,
            "grid_size": found.grid_size, "solved_exactly": found.solved,
            "screened": found.screened, "exhaustive": found.exhaustive,
            "risk": None if found.risk is None else fraction_text(found.risk),
            "samples": None if found.exhaustive else (samples or DEFAULT_SAMPLES),
        })
        return
    shown = _percent_or_number(target, metric)
    click.echo(f"target: {METRICS[metric]} = {shown}"
               + ("" if tolerance_value is None else f" ± {_percent_or_number(tolerance_value, metric)}")
               + f" over {found.grid_size:,} setups ("
               + ", ".join(f"{name} {values[0]}-{values[-1]}" if len(values) > 2 else
                           f"{name} {','.join(map(str, values))}" for name, values in axes.items()) + ")")
    if tolerance_value is not None and not found.within_tolerance:
        click.echo("no setup lies within the tolerance; the closest:")
    header = "  ".join(f"{name:>11}" for name in names)
    click.echo(f"rank  {header}  {METRICS[metric] if metric == 'rounds' else METRICS[metric][:8]:>10}"
               f"  {'distance':>10}  exact")
    for rank, candidate in enumerate(found.candidates, start=1):
        cells = "  ".join(f"{candidate.point[name]:>11}" for name in names)
        click.echo(f"{rank:>4}  {cells}  {_percent_or_number(candidate.value, metric):>10}"
                   f"  {_percent_or_number(candidate.distance, metric):>10}"
                   f"  {_exact_text(candidate.value, full_fractions)}")
    share = found.solved / found.grid_size
    line = f"solved exactly: {found.solved:,} of {found.grid_size:,} setups ({100 * share:.0f} %)"
    if found.exhaustive:
        line += "; no screen (every setup solved)"
    else:
        line += f"; all screened by simulation ({samples or DEFAULT_SAMPLES:,} contests each)"
    click.echo(line)
    if not found.exhaustive:
        click.echo(f"(the screens' intervals hold together with probability >= 1 - {float(found.risk):g};"
                   " --exhaustive solves every setup)")


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
@click.option("--ability", "-a", type=int, required=True, help="Dice the player draws (A >= 0).")
@click.option("--challenge", "-c", type=int, required=True, help="Dice the narrator draws (C >= 1).")
@click.option("--consequence", "-w", type=int, default=2, show_default=True, help="Length W of the victory track.")
@click.option("--peril", "-p", type=int, default=0, show_default=True, help="Starting peril dice P.")
@click.option("--fortune", type=int, default=0, show_default=True, help="The player's Fortune F.")
@click.option("--fallout", type=int, default=0, show_default=True, help="Fallout K.")
@click.option("--training", is_flag=True, help="The player gains 1 chip per d8 drawn.")
@click.option("--pool", default=dice_text(DEFAULT_POOL), show_default=True, help="The main pool.")
@click.option("--reserve", default=dice_text(DEFAULT_RESERVE), show_default=True, help="The reserve.")
@click.option("--player-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--narrator-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--rule", "rules", multiple=True, metavar="NAME=VALUE", help="A ruleset knob (repeatable), as for `karbon odds`.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Also write a PNG tornado chart of the change of P(win) to this file.")
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="Show only the TOP changes with the largest effect (text and chart; JSON keeps all).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the results store.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
              help=f"Results store [default: ${STORE_ENVIRONMENT_VARIABLE}, else ~/.cache/exactdice/results.sqlite].")
@click.option("--workers", type=click.IntRange(min=1), default=DEFAULT_WORKERS, show_default=True,
              help="Processes solving contests in parallel.")
@scheduler_option
@json_option
def sensitivity(ability, challenge, consequence, peril, fortune, fallout, training, pool, reserve,
                player_policy, narrator_policy, rules, plot_path, top, no_cache, store_path, workers,
                scheduler, as_json):
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
    from exactdice.karbon.sensitivity import METRICS, base_arguments, karbon_sensitivity, tornado_chart
    from exactdice.tables.store import open_store
    from exactdice.tables.sweep import executor_for

    base = base_arguments(ability, challenge, consequence, peril, fortune, fallout, training, pool,
                          reserve, player_policy, narrator_policy, tuple(rules))
    if plot_path:
        from exactdice.tables.export import format_from_path  # noqa: F401 (keeps the export layer's checks near)
        if not str(plot_path).lower().endswith(".png"):
            raise InputError("--plot", f"the chart is a PNG: give a path ending in .png, got {plot_path}")
    store = open_store(store_path, no_cache=no_cache)
    try:
        with executor_for(scheduler) as executor:
            report = karbon_sensitivity(base, store=store, workers=workers, executor=executor,
                                        progress=sys.stderr.isatty())
    finally:
        if store is not None:
            store.close()
    if plot_path:
        tornado_chart(report, plot_path, top=top or 25)
    rows = report.rows if top is None else report.rows[:top]
    if as_json:
        exact = _exact_json
        emit_json({
            "base": {key: (list(value) if isinstance(value, tuple) else value) for key, value in base.items()},
            "base_values": {metric: exact(value) for metric, value in report.base_values.items()},
            "changes": [{"group": row.group, "change": row.name, "effect": exact(row.effect),
                         "values": {m: exact(v) for m, v in row.values.items()},
                         "deltas": {m: exact(v) for m, v in row.deltas.items()}} for row in report.rows],
            "skipped": [{"change": name, "reason": reason} for name, reason in report.skipped],
            "plot": plot_path,
        })
        return
    values = report.base_values
    click.echo(f"base: A{ability} C{challenge} W{consequence} P{peril} F{fortune} K{fallout}"
               f"{' Training' if training else ''}: P(win) {100 * float(values['P(win)']):.2f} %, "
               f"P(loss) {100 * float(values['P(loss)']):.2f} %, P(tie) {100 * float(values['P(tie)']):.2f} %, "
               + ("expected rounds undefined" if values["expected rounds"] is None
                  else f"expected rounds {float(values['expected rounds']):.3f}"))
    click.echo(f"{'change':<44} {'P(win)':>8} {'P(loss)':>8} {'P(tie)':>8} {'rounds':>8}")
    click.echo(f"{'':<44} {'points':>8} {'points':>8} {'points':>8} {'':>8}")
    for row in rows:
        click.echo(f"{row.name[:44]:<44} " + " ".join(f"{_signed(row.deltas[m], m):>8}" for m in METRICS))
    for name, reason in report.skipped:
        click.echo(f"skipped {name}: {reason}")
    if plot_path:
        click.echo(f"wrote the tornado chart to {plot_path}", err=True)
