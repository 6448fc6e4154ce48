"""What ``exactdice karbon odds`` prints: an exact answer (or certified floats) and a bounded
one, as text under 100 characters a line or as ``--json``, from the answer shapes of
`exactdice.answers` (their ``detail`` holds the library's own objects)."""

from __future__ import annotations

import textwrap

import click

from exactdice.cli.common import emit_json, fraction_text
from exactdice.core.display import Display
from exactdice.karbon.dice import dice_text

__all__ = ["print_odds", "print_bounds", "odds_lines"]


def print_odds(
    answer,
    display: Display,
    *,
    as_json: bool,
    explain: bool,
    show_draws: bool,
    strategy_path,
    length: dict | None = None,
) -> None:
    """An exact `odds` answer (or certified floats), as text or ``--json``."""
    result = answer.detail
    payload = _odds_payload(result, show_draws, strategy_path)
    if length is not None:
        payload["contest_length"] = length
    if as_json:
        if explain:  # the same sentences as the text, one string each
            from exactdice.karbon.solve import explain_first_round

            payload["explanation"] = explain_first_round(result, display.significant)
        emit_json(payload)
        return
    if not result.exact:
        display = Display(digits=display.digits, float_preview=True)
    _print_odds(result, payload, display, explain, show_draws, strategy_path)


def _odds_payload(result, show_draws, strategy_path) -> dict:
    """The JSON of an exact `odds` answer (writing the strategy file, when asked, on the way)."""
    payload = result.to_json()
    if strategy_path:
        from exactdice.karbon.strategy import write_strategy

        sides = {situation: result.model.who_decides(situation) for situation in result.strategy}
        payload["strategy_decisions"] = write_strategy(
            strategy_path,
            result.model.sizes,
            result.strategy,
            sides,
            payload["ruleset"],
            payload["policies"],
            result.setup.to_dict() if result.setup is not None else None,
        )
    if show_draws:
        payload["draw_values"] = {
            text: (fraction_text(value) if result.exact else float(value)) for text, value in result.draw_values.items()
        }
    return payload


def _print_odds(result, payload, display, explain, show_draws, strategy_path) -> None:
    """The text output of an exact `odds` answer: `odds_lines`, then the draws, the strategy
    file and the explanation when asked."""
    for line in odds_lines(result, display, state_file=click.get_current_context().params.get("state_file")):
        click.echo(line)
    if show_draws:
        click.echo(
            "value of each player draw (what optimal play maximises: the expected score, win 1, "
            "tie 1/2, or P(win) with objective=win):"
        )
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
    lines = [
        _odds_heading(result, state_file),
        f"  P(win)   {display.probability(result.win)}",
        f"  P(loss)  {display.probability(result.loss)}",
        f"  P(tie)   {display.probability(result.tie)}",
    ]
    if result.never_ends:
        lines.append(f"  P(never ends)  {display.probability(result.never_ends)}")
    for label, value in (
        ("rounds", result.expected_rounds),
        ("Breaks", result.expected_breaks),
        ("Glitches", result.expected_glitches),
        ("injuries", result.expected_injuries),
        ("conditions", result.expected_conditions),
    ):
        lines.append(f"  expected {label:<11} {display.expectation(value)}")
    lines.append(
        f"{result.states:,} states, {result.transitions:,} transitions, solved in "
        f"{result.seconds:.2f} s" + ("" if result.exact else " (float preview, not exact)")
    )
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

    lines = [
        _odds_heading(result, state_file),
        f"  P(win)   {shown('win', True)}",
        f"  P(loss)  {shown('loss', True)}",
        f"  P(tie)   {shown('tie', True)}",
    ]
    if bounds["never_ends"][1] > 0:
        lines.append(f"  P(never ends)  {shown('never_ends', True)}")
    for label, name in (
        ("rounds", "rounds"),
        ("Breaks", "breaks"),
        ("Glitches", "glitches"),
        ("injuries", "injuries"),
        ("conditions", "conditions"),
    ):
        lines.append(f"  expected {label:<11} {shown(f'expected_{name}', False)}")
    if result.player_policy.kind == "optimal" or result.narrator_policy.kind in ("optimal", "kind"):
        objective = "P(win)" if result.ruleset.objective == "win" else "expected score"
        lines.append(
            f"  value ({objective}) of optimal play  {shown('value', False)}; the odds above are the "
            "play of the strategies found"
        )
    lines.append(
        f"{result.states:,} states, {result.transitions:,} transitions, solved in {result.seconds:.2f} s; "
        f"certified floats: each exact value lies in its interval, within {result.tolerance:g}"
    )
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
        heading = (
            f"Karbon contest: player draws {dice_text(result.player_draw)}, "
            f"narrator draws {dice_text(result.narrator_draw)}"
        )
    if setup is None:
        return heading
    extras = [
        f"Fortune {setup.fortune}" if setup.fortune else "",
        "Training" if setup.training else "",
        f"Fallout {setup.fallout}" if setup.fallout else "",
    ]
    return (
        heading
        + f"; track {setup.consequence}, peril {setup.peril}"
        + "".join(f", {extra}" for extra in extras if extra)
    )


def print_bounds(
    answer,
    display: Display,
    *,
    as_json: bool,
    explain: bool,
    show_draws: bool,
    strategy_path,
    too_large: str | None = None,
) -> None:
    """A bounded answer, printed or as JSON; ``too_large``: why the exact game was not
    solved, in the command's flags (in the JSON as ``too_large``; the text says it on
    stderr before)."""
    from exactdice.karbon.bounds import interval_text

    result = answer.detail
    payload = result.to_json()
    if too_large:
        payload["too_large"] = too_large
    if strategy_path:
        from exactdice.karbon.strategy import write_strategy

        payload["strategy_decisions"] = write_strategy(
            strategy_path,
            result.model.sizes,
            result.strategy,
            result.sides,
            payload["ruleset"],
            payload["policies"],
            answer.provenance.setup,
        )
    if as_json:
        if explain:
            from exactdice.karbon.bounds import explain_bounded_first_round

            payload["explanation"] = explain_bounded_first_round(result, display.significant)
        emit_json(payload)
        return
    click.echo(textwrap.fill(_bounds_heading(answer.provenance.setup, result), 98, subsequent_indent="  "))
    for line in result.summary_lines(decimals=display.digits or 6, exact=display.exact, policies=False):
        click.echo(textwrap.fill(_with_flags(line), 98, subsequent_indent="  "))
    for line in _policy_lines(result.player_policy, result.narrator_policy):
        click.echo(line)
    if show_draws and result.draw_bounds:
        left, certified = result.best_draws()
        click.echo("bounds on the value of each player draw:")
        for text, (low, high) in sorted(result.draw_bounds.items(), key=lambda item: -item[1][0]):
            click.echo(f"  {text:>12}  {interval_text(low, high, 6)}")
        click.echo(f"best draw certified: {left[0]}" if certified else f"draws still in contention: {', '.join(left)}")
    if strategy_path:
        click.echo(
            f"strategy: {payload['strategy_decisions']:,} decisions written to {strategy_path}"
            + ("" if result.lower_kind == "exact" else " (explored states only; the fixed preferences elsewhere)")
        )
    if explain:
        _echo_bounded_explanation(result, display)


def _with_flags(text: str) -> str:
    """Library text naming parameters, in the running command's flags."""
    from exactdice.cli.common import command_flags, with_flags

    return with_flags(text, command_flags(click.get_current_context().command))


def _bounds_heading(setup: dict, result) -> str:
    """The first line of a bounded answer: the contest and what is bounded."""
    if setup.get("player_dice") is not None:
        contest = f"player {setup['player_dice']} v narrator {setup['narrator_dice']}"
    else:
        contest = f"Ability {setup['ability']} v Challenge {setup['challenge']} (the draw searched)"
    objective = "P(win)" if result.ruleset.objective == "win" else "the expected score, win 1, tie 1/2"
    return (
        f"Karbon contest: {contest}; track {setup['consequence']}, peril {setup['peril']}. "
        f"Certified bounds on {objective} of the optimal player"
    )


def _echo_bounded_explanation(result, display: Display) -> None:
    """``--explain`` with bounds: the strategy's draw and first-round risk choices, each with
    the bounds on both choices (`exactdice.karbon.bounds.explain_bounded_first_round`)."""
    from exactdice.karbon.bounds import explain_bounded_first_round

    for line in explain_bounded_first_round(result, display.significant):
        click.echo(textwrap.fill(line, 98, initial_indent="  ", subsequent_indent="    "))
