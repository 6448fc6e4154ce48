"""``exactdice karbon``: exact odds of Karbon contests (a thin layer over `exactdice.answers`).

Every option of the setup, the rules and the limits is made from Karbon's registry
parameters (`exactdice.karbon.system.PARAMETERS`); the values a user gave go to the library
as they are, by name (`exactdice.cli.common.given_values`), and its answer is printed by
`exactdice.cli.karbon_output`.
"""

from __future__ import annotations

import functools

import click

from exactdice.cli.common import (
    LazyGroup,
    OutputFile,
    display_options,
    given_values,
    json_option,
    parameter_options,
    terminal_bars,
)
from exactdice.cli.karbon_output import print_bounds, print_odds
from exactdice.errors import InputError
from exactdice.karbon.system import PARAMETERS

__all__ = ["karbon", "karbon_setup_options", "with_setup", "refuse_strategy_without_choices"]


def karbon_setup_options(function):
    """The setup, policy and knob options shared by odds, simulate, trace and validate: one
    per parameter declared in `exactdice.karbon.system.PARAMETERS`."""
    return parameter_options(PARAMETERS, roles=("setup", "rules"))(function)


def refuse_strategy_without_choices(player, narrator) -> None:
    """A strategy file is about the choices of optimal/kind sides; with fixed (or random)
    policies on both sides there are none, so asking for one is an error, not an empty file."""
    if player.kind != "optimal" and narrator.kind not in ("optimal", "kind"):
        raise InputError(
            "strategy",
            "needs a side that chooses: `player_policy` optimal or "
            "`narrator_policy` optimal or kind (fixed policies make no decisions)",
        )


def with_setup(function):
    """Decorate a command so it receives ``setup, ruleset, player, narrator`` built from the
    options (`exactdice.answers.karbon.karbon_request`)."""
    names = [parameter.name for parameter in PARAMETERS if parameter.role != "limits" and parameter.on_cli]

    @karbon_setup_options
    @functools.wraps(function)
    def wrapper(**options):
        from exactdice.answers.karbon import karbon_request

        request = karbon_request(given_values({name: options.pop(name) for name in names}))
        return function(request.setup, request.ruleset, request.player, request.narrator, **options)

    return wrapper


class _KarbonGroup(LazyGroup):
    """The karbon group; simulate and trace live in `exactdice.cli.karbon_sim` (which imports
    this module for the shared options), the others below in modules of their own, so they
    are looked up when first used (`karbon odds` does not import the tables' machinery)."""

    lazy_commands = {
        "table": "exactdice.cli.karbon_table:karbon_table",
        "simulate": "exactdice.cli.karbon_sim:simulate",
        "trace": "exactdice.cli.karbon_sim:trace",
        "rules": "exactdice.cli.rules:karbon_rules",
        "design": "exactdice.cli.karbon_design:design",
        "sensitivity": "exactdice.cli.karbon_design:sensitivity",
    }


@click.group(cls=_KarbonGroup, context_settings={"help_option_names": ["-h", "--help"]})
def karbon():
    """Karbon contests: exact odds of a whole multi-round contest.

    \b
    A contest is a Markov state graph: every reachable position (hands, pool,
    reserve, chips, stacks, track, peril) is solved exactly, so P(win), P(loss)
    and P(tie) are exact fractions that sum to exactly 1.
    """


@karbon.command()
@parameter_options(PARAMETERS)
@click.option(
    "--float",
    "use_float",
    is_flag=True,
    help="Certified floats instead of exact fractions: each number printed as an interval that "
    "holds the exact value, at most 1e-9 wide; much faster on large contests.",
)
@display_options
@click.option(
    "--explain",
    is_flag=True,
    help="With an optimal player: print the first round's risk decisions in words, with the values behind them.",
)
@click.option("--show-draws", is_flag=True, help="With an optimal player: list the value of every draw it could make.")
@click.option(
    "--strategy",
    "strategy_path",
    type=OutputFile(),
    help="Write the chosen action at every decision state to this JSON file "
    "(format in exactdice/karbon/strategy.py; `karbon simulate --strategy` replays it).",
)
@click.option(
    "--bounds",
    "use_bounds",
    is_flag=True,
    help="With an optimal player: certified lower and upper bounds on the value instead of the "
    "exact game (also used when the exact game passes --max-states, or explores past a "
    "tenth of --max-seconds, 3 s without it).",
)
@click.option(
    "--plot",
    "plot_path",
    type=OutputFile(),
    help="Also draw how long the contest lasts to this PNG: the exact P(ended by round n), "
    "n = 1, 2, ... until less than 1 % is left, with that tail stated (exact solves only).",
)
@json_option
def odds(use_float, display, explain, show_draws, strategy_path, use_bounds, plot_path, as_json, **values):
    """Exact P(win), P(loss), P(tie) of a contest, with expected rounds, Breaks,
    Glitches, injuries and conditions.

    \b
    Examples:
      exactdice karbon odds --ability 3 --challenge 2 --consequence 2 --peril 1
      exactdice karbon odds --player-dice d8,d8,d10 --narrator-dice 2d10 -w 3
      exactdice karbon odds -a 2 -c 2 --player-policy "break=advantage>security" --rule sudden_death=on --json
      exactdice karbon odds -a 1 -c 1 -w 1 --pool d6,d8,d10 --reserve none --fortune 1 \\
          --player-policy optimal --narrator-policy optimal --show-draws --explain
      exactdice karbon odds -a 1 -c 1 -w 1 --player-policy optimal --bounds --precision 0.01

    Both sides play fixed preferences by default (the habits of a table that plays by
    the book; `exactdice karbon rules` says them): optimal play with the default pool
    explores millions of states (README, "Limits"). Ask for it with --player-policy optimal;
    past --max-states or a tenth of --max-seconds of exploring (3 s without it; or with --bounds) it is
    answered with certified bounds: a lower bound the returned strategy guarantees, an
    upper bound no play beats (Ctrl-C stops early and prints the bounds reached).
    Text output: percentages first, the exact fractions' sizes beside them (--exact
    prints them in full); --json gives everything.
    """
    from exactdice.answers.karbon import karbon_odds, karbon_request

    values = given_values(values)
    _refuse_options_that_do_nothing(
        karbon_request(values), values, use_float, use_bounds, display, explain, show_draws, strategy_path, plot_path
    )
    bars = terminal_bars()
    try:
        answer = karbon_odds(
            values,
            arithmetic="float" if use_float else "exact",
            bounds=use_bounds,
            advice=explain,
            draw_values=show_draws,
            length=bool(plot_path),
            progress=bars,
        )
    finally:
        if bars is not None:
            bars.close()
    shown = dict(as_json=as_json, explain=explain, show_draws=show_draws, strategy_path=strategy_path)
    if answer.kind == "bounds":
        too_large = None
        if answer.too_large is not None:
            too_large = _flags_in(answer.too_large.message)
            click.echo(
                f"the exact game is too large ({too_large}); certified bounds instead"
                + ("; no --plot (it needs the exact game)" if plot_path else ""),
                err=True,
            )
        print_bounds(answer, display, too_large=too_large, **shown)
        return
    print_odds(answer, display, length=_plot_length(answer, plot_path), **shown)


# library errors name the request's parameters; these are the flags that set them
odds.parameter_flags = {"arithmetic": "--float", "advice": "--explain", "strategy": "--strategy", "bounds": "--bounds"}


def _flags_in(text: str) -> str:
    from exactdice.cli.common import command_flags, with_flags

    return with_flags(text, command_flags(click.get_current_context().command))


def _refuse_options_that_do_nothing(
    request, values, use_float, use_bounds, display, explain, show_draws, strategy_path, plot_path
) -> None:
    """Options the rest of the command would ignore are an error, not a silent no-op; in the
    order a user meets them."""
    _refuse_choices_nobody_makes(request, explain, show_draws, strategy_path)
    _refuse_bounds_limits_without_bounds(request, values)
    if use_float and use_bounds:
        raise InputError("--float", "certifies the whole game's numbers; --bounds computes bounds instead (drop one)")
    if use_float and display.exact:
        raise InputError("--exact", "certified floats have no exact fractions to print (drop --float or --exact)")
    if plot_path:
        from exactdice.tables.charts import check_png_path

        check_png_path(plot_path, "--plot")
        if use_float or use_bounds:
            raise InputError("--plot", f"draws the exact game's length: drop {'--float' if use_float else '--bounds'}")


def _refuse_choices_nobody_makes(request, explain, show_draws, strategy_path) -> None:
    """--show-draws, --strategy and --explain are about an optimal side's choices."""
    optimal = request.player.kind == "optimal"
    if show_draws and not optimal:
        raise InputError("--show-draws", "needs --player-policy optimal (a fixed player has one draw)")
    if show_draws and request.setup.player_dice is not None:
        raise InputError("--show-draws", "needs a draw (--ability/--challenge), not explicit hands or --state")
    if strategy_path:
        refuse_strategy_without_choices(request.player, request.narrator)
    if explain and not optimal:
        raise InputError("--explain", "needs --player-policy optimal (a fixed player makes no choices)")


def _refuse_bounds_limits_without_bounds(request, values) -> None:
    """--precision and --max-seconds steer certified bounds, which only optimal play against a
    narrator who does not help can have."""
    for name in ("precision", "max_seconds"):
        flag = "--" + name.replace("_", "-")
        if name in values and request.player.kind != "optimal":
            raise InputError(
                flag,
                "is for certified bounds on optimal play: needs --player-policy optimal "
                "(a fixed player's odds are exact)",
            )
        if name in values and request.narrator.kind == "kind":
            raise InputError(
                flag, "is for certified bounds, which need --narrator-policy fixed, random or optimal (not kind)"
            )


def _plot_length(answer, plot_path) -> dict | None:
    """Draw how long the contest lasts to ``plot_path``; its exact values for the JSON."""
    if not plot_path:
        return None
    from exactdice.karbon.length import contest_length
    from exactdice.tables.charts import chart_png, write_chart_png

    write_chart_png(chart_png(answer.charts["length"]), plot_path, "--plot")
    click.echo(f"wrote how long the contest lasts to {plot_path}", err=True)
    return contest_length(answer.detail).to_json()
