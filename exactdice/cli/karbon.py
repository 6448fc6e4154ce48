"""``exactdice karbon``: exact odds of Karbon contests (a thin layer over `exactdice.karbon`)."""

from __future__ import annotations

import functools
import textwrap

import click

from exactdice.cli.common import (LazyGroup, OutputFile, display_options, emit_json, error_with_flags,
                                  fraction_text, json_option, parameter_options)
from exactdice.core.display import Display
from exactdice.cli.table_commands import produce_tables, table_output_options
from exactdice.errors import InputError, TooLargeError
from exactdice.integer_lists import parse_integer_list
from exactdice.karbon.dice import dice_text, parse_dice_list
from exactdice.karbon.policies import parse_narrator_policy, parse_player_policy
from exactdice.karbon.ruleset import RULE_CHOICES, Rules
from exactdice.karbon.setup import DEFAULT_POOL, DEFAULT_RESERVE
from exactdice.karbon.solve import DEFAULT_MAX_STATES, contest_odds
from exactdice.karbon.system import PARAMETERS, SYSTEM, contest_from_values
from exactdice.systems import split_values

__all__ = ["karbon", "karbon_setup_options", "setup_from_options"]

#: most cells of one `karbon table` (each is one exact solve)
MAX_TABLE_CELLS = 400

_RULES_HELP = "; ".join(f"{name}={'|'.join(values)}" for name, values in RULE_CHOICES.items())


def karbon_setup_options(function):
    """The setup, policy and knob options shared by odds, simulate, trace and validate: one
    per parameter declared in `exactdice.karbon.system.PARAMETERS`."""
    return parameter_options(PARAMETERS)(function)


def setup_from_options(**values):
    """(setup, ruleset, player policy, narrator policy) from the shared options."""
    if values.get("state_file"):
        _refuse_setup_flags_with_state()
    refuse_empty_policies(values.get("player_policy"), values.get("narrator_policy"))
    setup_part, rules_part = split_values(SYSTEM, values)
    ruleset = SYSTEM.rules(rules_part)
    contest, player, narrator = contest_from_values(setup_part)
    _refuse_an_objective_nobody_pursues(values, player, narrator)
    return contest, ruleset, player, narrator


def _refuse_an_objective_nobody_pursues(values, player, narrator) -> None:
    """``--objective win`` (or ``--rule objective=...``) says what optimal play maximises; with
    fixed (or random) policies on both sides nobody chooses, so it would change nothing."""
    by_rule = any(str(rule).replace(" ", "").startswith("objective=") for rule in values.get("rules") or ())
    if (values.get("objective") or by_rule) and player.kind != "optimal" and narrator.kind not in ("optimal", "kind"):
        raise InputError("--objective" if values.get("objective") else "--rule",
                         "is what optimal play maximises: it needs --player-policy optimal or --narrator-policy "
                         "optimal|kind (with fixed policies nobody chooses, so it would change nothing)")


_SETUP_FLAGS = ("ability", "challenge", "consequence", "peril", "fortune", "training", "fallout",
                "player_dice", "narrator_dice", "draw_chips", "pool", "reserve")


def _refuse_setup_flags_with_state():
    """A --state file replaces the setup flags: giving both is an error, not a silent choice."""
    context = click.get_current_context(silent=True)
    if context is None:
        return
    given = [f"--{name.replace('_', '-')}" for name in _SETUP_FLAGS
             if context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
    if given:
        raise InputError("--state", f"a state file replaces the setup flags; drop {', '.join(given)} "
                                    "(or drop --state)")


def refuse_empty_policies(player_policy, narrator_policy) -> None:
    """An empty ``--player-policy ""`` is a slip, not a request for the default (the library
    reads "" as the default; on the command line the default is to leave the flag out)."""
    for flag, text, choices in (("--player-policy", player_policy, '"optimal"'),
                                ("--narrator-policy", narrator_policy, '"optimal", "kind", "random"')):
        if text is not None and not str(text).strip():
            raise InputError(flag, f'is empty; give {choices}, "fixed" or key=value preferences '
                                   "(or leave the flag out for the default)")


def refuse_strategy_without_choices(player, narrator) -> None:
    """``--strategy`` is about the choices of optimal/kind sides; with fixed (or random)
    policies on both sides there are none, so the flag is an error, not an empty file."""
    if player.kind != "optimal" and narrator.kind not in ("optimal", "kind"):
        raise InputError("--strategy", "needs a side that chooses: --player-policy optimal or "
                                       "--narrator-policy optimal|kind (fixed policies make no decisions)")


def with_setup(function):
    """Decorate a command so it receives ``setup, ruleset, player, narrator`` built from the options."""
    names = [parameter.name for parameter in PARAMETERS]

    @karbon_setup_options
    @functools.wraps(function)
    def wrapper(**options):
        built = setup_from_options(**{name: options.pop(name) for name in names})
        return function(*built, **options)
    return wrapper


class _KarbonGroup(LazyGroup):
    """The karbon group; simulate and trace live in `exactdice.cli.karbon_sim` (which imports
    this module for the shared options), so they are looked up when first used."""

    lazy_commands = {"simulate": "exactdice.cli.karbon_sim:simulate",
                     "trace": "exactdice.cli.karbon_sim:trace",
                     "rules": "exactdice.cli.rules:karbon_rules",
                     "design": "exactdice.cli.karbon_design:design",
                     "sensitivity": "exactdice.cli.karbon_design:sensitivity"}


@click.group(cls=_KarbonGroup, context_settings={"help_option_names": ["-h", "--help"]})
def karbon():
    """Karbon contests: exact odds of a whole multi-round contest.

    \b
    A contest is a Markov state graph: every reachable position (hands, pool,
    reserve, chips, stacks, track, peril) is solved exactly, so P(win), P(loss)
    and P(tie) are exact fractions that sum to exactly 1.
    """


@karbon.command()
@with_setup
@click.option("--float", "use_float", is_flag=True, help="Certified floats instead of exact fractions: each number printed as an interval that "
                   "holds the exact value, at most 1e-9 wide; much faster on large contests.")
@click.option("--max-states", type=int, default=DEFAULT_MAX_STATES, show_default=True,
              help="Stop exploring past this many states (the message says how many were reached).")
@display_options
@click.option("--explain", is_flag=True,
              help="With an optimal player: print the first round's risk decisions in words, with the values behind them.")
@click.option("--show-draws", is_flag=True,
              help="With an optimal player: list the value of every draw it could make.")
@click.option("--strategy", "strategy", type=OutputFile(),
              help="Write the chosen action at every decision state to this JSON file "
                   "(format in exactdice/karbon/strategy.py; `karbon simulate --strategy` replays it).")
@click.option("--bounds", "use_bounds", is_flag=True,
              help="With an optimal player: certified lower and upper bounds on the value instead of the "
                   "exact game (also used when the exact game passes --max-states, or explores past a "
                   "tenth of --max-seconds, 10 s without it).")
@click.option("--precision", type=float, default=1e-3, show_default=True,
              help="With bounds: stop once upper - lower <= this.")
@click.option("--plot", "plot_path", type=OutputFile(),
              help="Also draw how long the contest lasts to this PNG: the exact P(ended by round n), "
                   "n = 1, 2, ... until less than 1 % is left, with that tail stated (exact solves only).")
@click.option("--max-seconds", type=float, default=None,
              help="With an optimal player: explore the exact game for at most a tenth of this (10 s "
                   "without it), then answer with bounds instead (the whole answer then takes up to about "
                   "1.6 times this). "
                   "With bounds: stop the search after this many seconds and report the bounds reached "
                   "(the exact check of the strategy follows, within --max-states and half as many "
                   "seconds more; where its game is explored but not solved in time, the lower bound "
                   "is the strategy's own value in floats, outward rounded, after a fifth of that "
                   "time more; where not explored, the search's own). Default: no limit; the search "
                   "stops at --precision, the state or memory budget, or Ctrl-C.")
@json_option
def odds(setup, ruleset, player, narrator, use_float, max_states, display, explain, show_draws,
         strategy, use_bounds, precision, plot_path, max_seconds, as_json):
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
    past --max-states or a tenth of --max-seconds of exploring (10 s without it; or with --bounds) it is
    answered with certified bounds: a lower bound the returned strategy guarantees, an
    upper bound no play beats (Ctrl-C stops early and prints the bounds reached).
    Text output: percentages first, the exact fractions' sizes beside them (--exact
    prints them in full); --json gives everything.
    """
    strategy_path = strategy
    _check_odds_options(setup, player, narrator, max_states, explain, show_draws, strategy_path,
                        precision, max_seconds)
    _refuse_flags_that_would_do_nothing(player, narrator, use_float, use_bounds, display)
    _check_plot(plot_path, use_float, use_bounds)
    bounded = functools.partial(_bounded_odds, setup, ruleset, player, narrator, max_states,
                                precision, max_seconds, show_draws, strategy_path, as_json, explain, display)
    if use_bounds:
        _check_bounds_options(player, narrator)
        return bounded()
    from exactdice.karbon.attempt import attempt_words, exact_attempt_seconds
    from exactdice.karbon.bounds import bounds_apply

    can_bound = bounds_apply(player, narrator) and not use_float
    try:  # where bounds can answer, the exact game gets a tenth of the time, not more (attempt.py)
        result = contest_odds(setup, ruleset, player, narrator,
                              arithmetic="float" if use_float else "exact", max_states=max_states,
                              explore_seconds=exact_attempt_seconds(max_seconds) if can_bound else None,
                              draw_values=show_draws or (explain and setup.player_dice is None),
                              all_states=explain)
    except TooLargeError as error:
        if not can_bound:
            raise
        too_large = error_with_flags(error, {"max_states": "--max-states"}).message
        if error.field == "explore_seconds":
            too_large += f", {attempt_words(max_seconds, '--max-seconds')}"
    else:
        too_large = None
    if too_large is not None:  # outside the except: the partly explored graph is freed first
        click.echo(f"the exact game is too large ({too_large}); certified bounds instead"
                   + ("; no --plot (it needs the exact game)" if plot_path else ""), err=True)
        return bounded(too_large=too_large)
    payload = _odds_payload(result, show_draws, strategy_path)
    if plot_path:
        payload["contest_length"] = _plot_contest_length(result, plot_path)
    if as_json:
        if explain:  # the same sentences as the text, one string each
            from exactdice.karbon.solve import explain_first_round
            payload["explanation"] = explain_first_round(result, display.significant)
        emit_json(payload)
        return
    if use_float:
        display = Display(digits=display.digits, float_preview=True)
    _print_odds(result, payload, display, explain, show_draws, strategy_path)


def _refuse_flags_that_would_do_nothing(player, narrator, use_float, use_bounds, display) -> None:
    """Flags that the rest of the command would ignore are an error, not a silent no-op."""
    context = click.get_current_context()
    given = {name for name in ("precision", "max_seconds")
             if context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}
    flag = "--precision" if "precision" in given else "--max-seconds"
    if given and player.kind != "optimal":
        raise InputError(flag, "is for certified bounds on optimal play: needs --player-policy optimal "
                               "(a fixed player's odds are exact)")
    if given and narrator.kind == "kind":
        raise InputError(flag, "is for certified bounds, which need --narrator-policy fixed, random or "
                               "optimal (not kind)")
    if use_float and use_bounds:
        raise InputError("--float", "certifies the whole game's numbers; --bounds computes bounds instead "
                                    "(drop one)")
    if use_float and display.exact:
        raise InputError("--exact", "certified floats have no exact fractions to print (drop --float or --exact)")


def _check_plot(plot_path, use_float, use_bounds) -> None:
    if plot_path:
        from exactdice.tables.charts import check_png_path
        check_png_path(plot_path, "--plot")
    if plot_path and (use_float or use_bounds):
        raise InputError("--plot", f"draws the exact game's length: drop {'--float' if use_float else '--bounds'}")


def _plot_contest_length(result, plot_path) -> dict:
    """Draw the contest's length to ``plot_path``; its exact values for the JSON."""
    from exactdice.karbon.charts import length_chart
    from exactdice.karbon.length import contest_length
    from exactdice.tables.charts import chart_png, write_chart_png

    length = contest_length(result)
    write_chart_png(chart_png(length_chart(length)), plot_path, "--plot")
    click.echo(f"wrote how long the contest lasts to {plot_path}", err=True)
    return length.to_json()


def _check_odds_options(setup, player, narrator, max_states, explain, show_draws, strategy_path,
                        precision, max_seconds) -> None:
    """The checks of `odds`' own flags against each other and the policies, in the order
    a user meets them."""
    if max_states < 1:
        raise InputError("--max-states", f"must be >= 1, got {max_states}")
    if show_draws and player.kind != "optimal":
        raise InputError("--show-draws", "needs --player-policy optimal (a fixed player has one draw)")
    if show_draws and setup.player_dice is not None:
        raise InputError("--show-draws", "needs a draw (--ability/--challenge), not explicit hands or --state")
    if strategy_path:
        refuse_strategy_without_choices(player, narrator)
    if explain and player.kind != "optimal":
        raise InputError("--explain", "needs --player-policy optimal (a fixed player makes no choices)")
    if not precision > 0:
        raise InputError("--precision", f"must be > 0, got {precision}")
    if max_seconds is not None and not max_seconds > 0:
        raise InputError("--max-seconds", f"must be > 0, got {max_seconds}")


def _odds_payload(result, show_draws, strategy_path) -> dict:
    """The JSON of an exact `odds` answer (writing the strategy file, when asked, on the way)."""
    payload = result.to_json()
    if strategy_path:
        from exactdice.karbon.strategy import write_strategy
        sides = {situation: result.model.who_decides(situation) for situation in result.strategy}
        payload["strategy_decisions"] = write_strategy(
            strategy_path, result.model.sizes, result.strategy, sides, payload["ruleset"],
            payload["policies"], result.setup.to_dict() if result.setup is not None else None)
    if show_draws:
        payload["draw_values"] = {text: (fraction_text(value) if result.exact else float(value))
                                  for text, value in result.draw_values.items()}
    return payload


def _print_odds(result, payload, display, explain, show_draws, strategy_path) -> None:
    """The text output of an exact `odds` answer: `odds_lines`, then the draws, the strategy
    file and the explanation when asked."""
    for line in odds_lines(result, display, state_file=click.get_current_context().params.get("state_file")):
        click.echo(line)
    if show_draws:
        click.echo("value of each player draw (what optimal play maximises: the expected score, win 1, "
                   "tie 1/2, or P(win) with objective=win):")
        for text, value in sorted(result.draw_values.items(), key=lambda item: -item[1]):
            click.echo(f"  {text:>12}  {display.expectation(value)}")
    if strategy_path:
        click.echo(f"strategy: {payload['strategy_decisions']:,} decisions written to {strategy_path}")
    if explain:
        from exactdice.karbon.solve import explain_first_round
        click.echo("first round, the player's risk choices:")
        for line in explain_first_round(result, display.significant):
            click.echo(textwrap.fill(line, 98, initial_indent="  ", subsequent_indent="    "))


def odds_lines(result, display: Display, state_file=None) -> list[str]:
    """The text output of `karbon odds`: percentages and decimals first, in lines under 100 characters."""
    if result.bounds is not None:
        return _certified_lines(result, display, state_file)
    lines = [_odds_heading(result, state_file),
             f"  P(win)   {display.probability(result.win)}",
             f"  P(loss)  {display.probability(result.loss)}",
             f"  P(tie)   {display.probability(result.tie)}"]
    if result.never_ends:
        lines.append(f"  P(never ends)  {display.probability(result.never_ends)}")
    for label, value in (("rounds", result.expected_rounds), ("Breaks", result.expected_breaks),
                         ("Glitches", result.expected_glitches), ("injuries", result.expected_injuries),
                         ("conditions", result.expected_conditions)):
        lines.append(f"  expected {label:<11} {display.expectation(value)}")
    lines.append(f"{result.states:,} states, {result.transitions:,} transitions, solved in "
                 f"{result.seconds:.2f} s" + ("" if result.exact else " (float preview, not exact)"))
    lines.extend(_policy_lines(result.player_policy, result.narrator_policy))
    lines.append(f"rules:    {result.ruleset.differences()} (exactdice karbon rules)")
    if not display.exact and result.exact:
        lines.append("every fraction in full: --exact; everything for programs: --json")
    return lines


def _certified_lines(result, display: Display, state_file=None) -> list[str]:
    """`odds_lines` for certified floats: each number with the interval that holds it."""
    bounds = result.bounds
    digits = max(display.significant, 10)

    def shown(name, percent):
        interval = bounds[name]
        if interval is None:
            return "undefined (play may never end)"
        low, high = interval
        if high == float("inf"):
            return f"at least {low:.{digits}g} (no upper bound certified)"
        scale, unit = (100, " %") if percent else (1, "")
        return f"{low * scale:.{digits}g} to {high * scale:.{digits}g}{unit}"

    lines = [_odds_heading(result, state_file),
             f"  P(win)   {shown('win', True)}", f"  P(loss)  {shown('loss', True)}",
             f"  P(tie)   {shown('tie', True)}"]
    if bounds["never_ends"][1] > 0:
        lines.append(f"  P(never ends)  {shown('never_ends', True)}")
    for label, name in (("rounds", "rounds"), ("Breaks", "breaks"), ("Glitches", "glitches"),
                        ("injuries", "injuries"), ("conditions", "conditions")):
        lines.append(f"  expected {label:<11} {shown(f'expected_{name}', False)}")
    if result.player_policy.kind == "optimal" or result.narrator_policy.kind in ("optimal", "kind"):
        objective = "P(win)" if result.ruleset.objective == "win" else "expected score"
        lines.append(f"  value ({objective}) of optimal play  {shown('value', False)}; the odds above are the "
                     "play of the strategies found")
    lines.append(f"{result.states:,} states, {result.transitions:,} transitions, solved in {result.seconds:.2f} s; "
                 f"certified floats: each exact value lies in its interval, within {result.tolerance:g}")
    lines.extend(_policy_lines(result.player_policy, result.narrator_policy))
    lines.append(f"rules:    {result.ruleset.differences()} (exactdice karbon rules)")
    return lines


def _policy_lines(player, narrator) -> list[str]:
    """Both sides' policies in words, each on its own lines under 100 characters."""
    lines = []
    for label, policy in (("player:   ", player), ("narrator: ", narrator)):
        lines.extend(textwrap.wrap(policy.words(), 98, initial_indent=label, subsequent_indent=" " * 10))
    return lines


def _odds_heading(result, state_file) -> str:
    """The first line of `odds_lines`: who draws (or holds) what, the track, peril and extras."""
    setup = result.setup
    if setup is not None and state_file is not None:
        return f"Karbon contest from the state in {state_file}"
    if setup is not None and setup.player_dice is not None:
        heading = f"Karbon contest: player {dice_text(result.player_draw)} v narrator {dice_text(result.narrator_draw)}"
    else:
        heading = (f"Karbon contest: player draws {dice_text(result.player_draw)}, "
                   f"narrator draws {dice_text(result.narrator_draw)}")
    if setup is None:
        return heading
    extras = [f"Fortune {setup.fortune}" if setup.fortune else "", "Training" if setup.training else "",
              f"Fallout {setup.fallout}" if setup.fallout else ""]
    return heading + f"; track {setup.consequence}, peril {setup.peril}" + "".join(
        f", {extra}" for extra in extras if extra)


def _check_bounds_options(player, narrator):
    if player.kind != "optimal":
        raise InputError("--bounds", "needs --player-policy optimal (a fixed player's odds are exact)")
    if narrator.kind == "kind":
        raise InputError("--bounds", "needs --narrator-policy fixed, random or optimal (not kind)")


class _GapBar:
    """A tqdm bar on stderr (when it is a terminal) showing the gap shrinking."""

    def __init__(self):
        import sys

        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=None, unit="states", desc="bounds", leave=False)

    def __call__(self, lower, upper, explored, seconds):
        from exactdice.karbon.bounds import interval_text

        if self.bar is not None:
            self.bar.n = explored
            self.bar.set_postfix_str(f"gap {upper - lower:.5f} {interval_text(lower, upper, 5)}")

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _bounded_odds(setup, ruleset, player, narrator, max_states, precision, max_seconds, show_draws,
                  strategy_path, as_json, explain=False, display=None, too_large=None):
    """Certified bounds, printed or as JSON; ``too_large``: why the exact game was not
    solved (in the JSON as ``too_large``; the text says it on stderr before)."""
    from exactdice.karbon.bounds import bounded_odds, interval_text

    bar = _GapBar()
    try:
        result = bounded_odds(setup, ruleset, player, narrator, precision=precision, max_seconds=max_seconds,
                              max_states=max_states, certify_states=max_states, progress=bar)
    finally:
        bar.close()
    payload = result.to_json()
    if too_large:
        payload["too_large"] = too_large
    if strategy_path:
        from exactdice.karbon.strategy import write_strategy
        payload["strategy_decisions"] = write_strategy(
            strategy_path, result.model.sizes, result.strategy, result.sides, payload["ruleset"],
            payload["policies"], setup.to_dict())
    if as_json:
        if explain:
            from exactdice.karbon.bounds import explain_bounded_first_round
            payload["explanation"] = explain_bounded_first_round(result, display.significant)
        emit_json(payload)
        return
    click.echo(textwrap.fill(_bounds_heading(setup, result), 98, subsequent_indent="  "))
    for line in result.summary_lines(decimals=display.digits or 6, exact=display.exact, policies=False):
        click.echo(textwrap.fill(line, 98, subsequent_indent="  "))
    for line in _policy_lines(result.player_policy, result.narrator_policy):
        click.echo(line)
    if show_draws and result.draw_bounds:
        left, certified = result.best_draws()
        click.echo("bounds on the value of each player draw:")
        for text, (low, high) in sorted(result.draw_bounds.items(), key=lambda item: -item[1][0]):
            click.echo(f"  {text:>12}  {interval_text(low, high, 6)}")
        click.echo(f"best draw certified: {left[0]}" if certified else
                   f"draws still in contention: {', '.join(left)}")
    if strategy_path:
        click.echo(f"strategy: {payload['strategy_decisions']:,} decisions written to {strategy_path}"
                   + ("" if result.lower_kind == "exact" else " (explored states only; the fixed "
                                                               "preferences elsewhere)"))
    if explain:
        _echo_bounded_explanation(result, display)


def _bounds_heading(setup, result) -> str:
    """The first line of a bounded answer: the contest and what is bounded."""
    if setup.player_dice is not None:
        contest = f"player {dice_text(setup.player_dice)} v narrator {dice_text(setup.narrator_dice)}"
    else:
        contest = f"Ability {setup.ability} v Challenge {setup.challenge} (the draw searched)"
    objective = "P(win)" if result.ruleset.objective == "win" else "the expected score, win 1, tie 1/2"
    return (f"Karbon contest: {contest}; track {setup.consequence}, peril {setup.peril}. "
            f"Certified bounds on {objective} of the optimal player")


def _echo_bounded_explanation(result, display: Display) -> None:
    """``--explain`` with bounds: the strategy's draw and first-round risk choices, each with
    the bounds on both choices (`exactdice.karbon.bounds.explain_bounded_first_round`)."""
    from exactdice.karbon.bounds import explain_bounded_first_round

    for line in explain_bounded_first_round(result, display.significant):
        click.echo(textwrap.fill(line, 98, initial_indent="  ", subsequent_indent="    "))


@karbon.command("table")
@click.option("--ability", "-a", default="1-5", show_default=True, help="A value, a range (1-5) or a list (1,3,5).")
@click.option("--challenge", "-c", default="1-5", show_default=True, help="As --ability.")
@click.option("--consequence", "-w", default="2", show_default=True, help="As --ability.")
@click.option("--peril", "-p", default="0", show_default=True, help="As --ability.")
@click.option("--fortune", default="0", show_default=True, help="As --ability.")
@click.option("--fallout", default="0", show_default=True, help="As --ability.")
@click.option("--pool", default=dice_text(DEFAULT_POOL), show_default=True, help="The main pool.")
@click.option("--reserve", default=dice_text(DEFAULT_RESERVE), show_default=True, help="The reserve.")
@click.option("--player-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--narrator-policy", default="fixed", show_default=True, help="As for `karbon odds`.")
@click.option("--rule", "rules", multiple=True, metavar="NAME=VALUE", help=f"A ruleset knob (repeatable). {_RULES_HELP}.")
@table_output_options
def karbon_table(ability, challenge, consequence, peril, fortune, fallout, pool, reserve,
                 player_policy, narrator_policy, rules, output_options):
    """A printable grid of P(win) (with P(tie), P(loss) and expected rounds in the same
    file) over two setup parameters: the two given as ranges or lists are the axes.

    \b
    Examples:
      exactdice karbon table --ability 1-5 --challenge 1-5 --consequence 2 --peril 0 -o win.html
      exactdice karbon table -a 3 -c 3 --consequence 1-3 --peril 0-2 --format csv
    """
    from exactdice.karbon.tables import contest_grid

    given = {"ability": ability, "challenge": challenge, "consequence": consequence, "peril": peril,
             "fortune": fortune, "fallout": fallout}
    values = {name: parse_integer_list(text, f"--{name}") for name, text in given.items()}
    axes = [name for name, listed in values.items() if len(listed) > 1]
    if len(axes) != 2:
        raise InputError("--ability", f"give exactly two parameters as ranges or lists (the table's axes); "
                                      f"got {len(axes)}: {', '.join(axes) or 'none'}")
    cells = len(values[axes[0]]) * len(values[axes[1]])
    if cells > MAX_TABLE_CELLS:
        raise TooLargeError(f"--{axes[0]}", f"{len(values[axes[0]])} x {len(values[axes[1]])} = {cells:,} cells, each "
                                            f"one exact solve; at most {MAX_TABLE_CELLS:,} in one table")
    from exactdice.karbon.setup import ContestSetup

    for pick in (min, max):   # the corners' limits (a hand, the track, peril) checked before any solve
        ContestSetup(**{name: pick(listed) for name, listed in values.items()},
                     pool=parse_dice_list(pool, "pool"), reserve=parse_dice_list(reserve, "reserve"))
    Rules().with_rules(rules)
    refuse_empty_policies(player_policy, narrator_policy)
    parse_player_policy(player_policy), parse_narrator_policy(narrator_policy)
    fixed = {name: listed[0] for name, listed in values.items() if name not in axes}
    fixed.update(pool=pool, reserve=reserve)
    grid = contest_grid(axes[0], values[axes[0]], axes[1], values[axes[1]], fixed,
                        player=player_policy, narrator=narrator_policy, rules=tuple(rules))
    produce_tables([grid], **output_options)
