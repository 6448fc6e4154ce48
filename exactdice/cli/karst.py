"""``exactdice karst``: exact Karst action, opposed, attack, death and order rolls, and simulators."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import click

from exactdice.cli.common import (
    CommandGroup,
    OutputFile,
    display_options,
    emit_json,
    fraction_text,
    given_values,
    json_option,
    parameter_options,
    write_csv_rows,
)
from exactdice.core.display import Display, percent_text
from exactdice.errors import InputError
from exactdice.karst.death import solve_death
from exactdice.karst.knockout import KnockoutSetup, damage_per_hit, knockout_then_death, solve_knockout
from exactdice.karst.rolls import action_success, attack_hit, opposed as opposed_roll, order_before, order_places
from exactdice.karst.ruleset import Rules
from exactdice.karst.system import ROLLS
from exactdice.systems import get_system
from exactdice.karst.simulate import COLUMNS, simulate as simulate_columns, simulate_rows

__all__ = ["karst"]


@click.group(cls=CommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
def karst():
    """Karst rolls: d6 action rolls, d20 attacks, knock-outs, death rolls, order rolls.

    Every probability is exact: the text shows percentages first with the exact
    fraction (all of it with --exact), --json gives every exact value as "p/q" with
    its decimal. The text lists rounds until less than 0.1 % of the mass remains
    (--exact: until less than 10^-12); the JSON lists them all.
    """


def _echo_rounds(label, rounds, display: Display):
    """The distribution of rounds: every round while more than 0.1 % of the mass is left
    (with --exact, as far as the model lists them), then the rest in one line."""
    click.echo(f"{label}:")
    left = 1
    for number, p in rounds.probabilities.items():
        if not display.exact and left < Fraction(1, 1000):
            break
        click.echo(f"  {number:>4}: {display.probability(p)}")
        left -= p
    click.echo(f"  rest: {display.probability(left)}")


def _roll_options(roll: str, skip=()):
    """The options of one Karst roll, from its registry parameters (`exactdice.karst.system.ROLLS`)."""
    return parameter_options(ROLLS[roll][0], skip=skip)


def _rules(roll: str, values: dict) -> Rules:
    """The roll's rules (aid, opposed) from its values, checked by the registry."""
    return get_system("karst").variants[roll].rules(given_values(values))


@karst.command()
@_roll_options("action")
@display_options
@json_option
def action(modifier, display, as_json):
    """P(success) of an action roll: d6 + modifier >= 6; a natural 1 fails, a natural 6 succeeds.

    JSON keys: modifier, success.
    """
    p = action_success(modifier)
    if as_json:
        emit_json({"modifier": modifier, "success": fraction_text(p)})
        return
    click.echo(f"action roll d6{modifier:+d}: P(success) {display.probability(p)}")


@karst.command()
@_roll_options("opposed")
@display_options
@json_option
def opposed(modifier, versus, display, as_json, **rule):
    """Opposed action rolls: who prevails. JSON keys: first, second, neither, rules."""
    rules = _rules("opposed", rule)
    result = opposed_roll(modifier, versus, rules)
    if as_json:
        emit_json(
            {
                "modifier": modifier,
                "vs": versus,
                "rules": rules.to_dict(),
                **{name: fraction_text(p) for name, p in result.items()},
            }
        )
        return
    click.echo(f"opposed action rolls d6{modifier:+d} vs d6{versus:+d} ({rules.describe()}):")
    for name, p in result.items():
        click.echo(f"  {name:<8} {display.probability(p)}")


def _refuse_death_options_without_then_death(then_death: bool, aid: int, death_modifier: int) -> None:
    """--aid and --death-modifier shape the death roll, which only --then-death makes."""
    for flag, value in (("--aid", aid), ("--death-modifier", death_modifier)):
        if value and not then_death:
            raise InputError(flag, "applies to the death roll: add --then-death (and --health)")


@karst.command()
@_roll_options("attack")
@click.option(
    "--plot", "plot_path", type=OutputFile(), help="Also draw P(hit) against defense to this PNG (--defense marked)."
)
@display_options
@json_option
def attack(modifier, defense, damage, health, unaware, then_death, aid, death_modifier, plot_path, display, as_json):
    """Attack rolls: P(hit), and with --health the knock-out chain.

    \b
    A natural 20 hits, a natural 1 misses, otherwise d20 + modifier >= defense.
    A hit deals the damage, at least 1, doubled on the first attack with --unaware.
    JSON keys: hit; with --health: rounds (round -> p, plus rest), expected_rounds,
    knockout (a list of rounds, negative_health, p), negative_health; with
    --then-death: death, stable.
    """
    _refuse_death_options_without_then_death(then_death, aid, death_modifier)
    rules = Rules(aid=aid)
    if then_death and health is None:
        raise InputError("--then-death", "needs --health")
    damage_per_hit(damage)  # a bad expression is an error even when only the hit chance is asked
    if plot_path:
        _plot_hits(modifier, defense, plot_path)
    hit = attack_hit(modifier, defense)
    payload = {"setup": {"modifier": modifier, "defense": defense}, "hit": fraction_text(hit)}
    chain = death = None
    if health is not None:
        setup = KnockoutSetup(modifier, defense, damage, health, unaware)
        chain = solve_knockout(setup)
        payload = {"setup": setup.to_dict(), **chain.to_json()}
        if then_death:
            death = knockout_then_death(chain, death_modifier, rules)
            payload.update(
                {
                    "rules": rules.to_dict(),
                    "death_modifier": death_modifier,
                    "death": fraction_text(death["death"]),
                    "stable": fraction_text(death["stable"]),
                }
            )
    if as_json:
        emit_json(payload)
        return
    click.echo(f"attack d20{modifier:+d} vs defense {defense}: P(hit) {display.probability(hit)}")
    if chain is None:
        return
    click.echo(chain.setup.describe())
    click.echo(f"expected rounds to knock-out: {display.expectation(chain.expected_rounds)}")
    click.echo("negative health left at knock-out:")
    for value, p in chain.negative_health.items():
        click.echo(f"  {value:>3}: {display.probability(p)}")
    _echo_rounds("rounds to knock-out (P(exactly r))", chain.rounds, display)
    if death is not None:
        click.echo(f"then the death roll ({rules.describe()}, modifier {death_modifier:+d}):")
        click.echo(f"  P(death)   {display.probability(death['death'])}")
        click.echo(f"  P(stable)  {display.probability(death['stable'])}")


def _plot_hits(modifier, defense, plot_path) -> None:
    from exactdice.karst.charts import hit_chart
    from exactdice.tables.charts import chart_png, write_chart_png

    write_chart_png(chart_png(hit_chart(modifier, defense)), plot_path, "--plot")
    click.echo(f"wrote P(hit) by defense to {plot_path}", err=True)


@karst.command()
@_roll_options("death")
@display_options
@json_option
def death(negative_health, aid, modifier, display, as_json):
    """Death rolls: P(death), P(stable), expected rounds and the distribution of rounds.

    \b
    d6 - h + modifier, minimum 1: a natural 6 or 6+ is stable, a 1 is death,
    anything else rolls again at the end of the next round. Rounds count from the
    first round after the fall (0 when the first roll settles it).
    JSON keys: death, stable, expected_rounds, rounds (round -> p, plus rest).
    """
    solution = solve_death(negative_health, modifier, Rules(aid=aid))
    if as_json:
        emit_json(solution.to_json())
        return
    click.echo(f"death roll, negative health {negative_health}, modifier {modifier:+d}, aid {aid} per round")
    click.echo(f"  P(death)         {display.probability(solution.death)}")
    click.echo(f"  P(stable)        {display.probability(solution.stable)}")
    click.echo(f"  expected rounds  {display.expectation(solution.expected_rounds)}")
    _echo_rounds("rounds (P(exactly r))", solution.rounds, display)


@karst.command()
@_roll_options("order", skip=("combatant",))
@display_options
@json_option
def order(modifiers, two_actions, surprised, display, as_json):
    """Order rolls: each combatant's place (ties share the better place) and who acts first.

    \b
    Example: exactdice karst order --modifier 2 --modifier 0 --modifier -1 --two-actions 1
    JSON keys: places (one map place -> p per combatant; null when surprised),
    before (before[i][j] = P(combatant i+1 acts strictly before combatant j+1)).
    """
    places = order_places(modifiers, two_actions, surprised)
    before = order_before(modifiers, two_actions, surprised)
    if as_json:
        emit_json(
            {
                "modifiers": list(modifiers),
                "two_actions": list(two_actions),
                "surprised": list(surprised),
                "places": [None if p is None else {str(k): fraction_text(v) for k, v in p.items()} for p in places],
                "before": [[None if v is None else fraction_text(v) for v in row] for row in before],
            }
        )
        return
    for number, (modifier, place) in enumerate(zip(modifiers, places), start=1):
        if place is None:
            click.echo(f"combatant {number} ({modifier:+d}): surprised, does not act")
            continue
        text = ", ".join(f"{k}: {display.probability(v)}" for k, v in place.items())
        click.echo(f"combatant {number} ({modifier:+d}): place {text}")
    click.echo("P(row acts strictly before column):")
    rows = [
        [str(i)] + ["-" if v is None else percent_text(v, display.significant) for v in row]
        for i, row in enumerate(before, start=1)
    ]
    for line in display.table([""] + [str(j) for j in range(1, len(before) + 1)], rows):
        click.echo(line)


# ----- simulators -------------------------------------------------------------------------


def _simulation_options(function):
    function = click.option(
        "--out",
        type=OutputFile(allow_dash=True),
        default=None,
        help="Write one CSV row per trial here, or - for standard output (without it, print a summary).",
    )(function)
    function = click.option(
        "--seed", type=click.IntRange(min=0), default=7, show_default=True, help="Seed of numpy's PCG64."
    )(function)
    function = click.option("--n", "n", type=int, default=100_000, show_default=True, help="Trials.")(function)
    return function


def _run_simulation(kind, n, seed, out, rules=Rules(), columns_setup=None, **setup):
    if out is not None:
        rows = simulate_rows(kind, n=n, seed=seed, rules=rules, **setup)
        write_csv_rows(out, COLUMNS(kind, **(columns_setup or {})), rows)
        click.echo(f"wrote {n} trials to {out}", err=True)
        return
    arrays = simulate_columns(kind, n=n, seed=seed, rules=rules, **setup)
    click.echo(f"simulated {n} {kind} trials (seed {seed})")
    for name, values in arrays.items():
        if name == "trial":
            continue
        counts = Counter(str(value) for value in values)
        if len(counts) <= 12:
            shares = ", ".join(f"{k or '-'}: {percent_text(Fraction(c, n))}" for k, c in sorted(counts.items()))
            click.echo(f"  {name}: {shares}")
        else:
            click.echo(f"  {name}: mean {sum(float(v) for v in values) / n:.6f}")


@karst.group(cls=CommandGroup)
def simulate():
    """Simulate rolls with real (pseudo-random) dice, independently of the exact model.

    \b
    CSV columns (one row per trial):
      action  trial, natural, total, outcome (success|failure)
      opposed trial, natural, total, versus_natural, versus_total, outcome (first|second|neither)
      attack  trial, natural, total, outcome (hit|miss), damage;  with --health:
              trial, rounds, hits, negative_health, outcome (death|stable with --then-death)
      death   trial, rolls, rounds, final_negative_health, outcome (death|stable)
      order   trial, score_1.., place_1.. (empty for a surprised combatant)
    """


@simulate.command("action")
@_roll_options("action")
@_simulation_options
def simulate_action(modifier, n, seed, out):
    """Action rolls. Columns: trial, natural, total, outcome."""
    _run_simulation("action", n, seed, out, modifier=modifier)


@simulate.command("opposed")
@_roll_options("opposed")
@_simulation_options
def simulate_opposed(modifier, versus, n, seed, out, **rule):
    """Opposed action rolls. Columns: trial, natural, total, versus_natural, versus_total, outcome."""
    _run_simulation("opposed", n, seed, out, _rules("opposed", rule), modifier=modifier, versus=versus)


@simulate.command("attack")
@_roll_options("attack")
@_simulation_options
def simulate_attack(modifier, defense, damage, health, unaware, then_death, aid, death_modifier, n, seed, out):
    """Attack rolls or knock-out chains (with --health). Columns: see `karst simulate --help`."""
    _refuse_death_options_without_then_death(then_death, aid, death_modifier)
    _run_simulation(
        "attack",
        n,
        seed,
        out,
        Rules(aid=aid),
        {"health": health},
        modifier=modifier,
        defense=defense,
        damage=damage,
        health=health,
        unaware=unaware,
        then_death=then_death,
        death_modifier=death_modifier,
    )


@simulate.command("death")
@_roll_options("death")
@_simulation_options
def simulate_death(negative_health, aid, modifier, n, seed, out):
    """Death rolls. Columns: trial, rolls, rounds, final_negative_health, outcome."""
    _run_simulation("death", n, seed, out, Rules(aid=aid), negative_health=negative_health, modifier=modifier)


@simulate.command("order")
@_roll_options("order", skip=("combatant",))
@_simulation_options
def simulate_order(modifiers, two_actions, surprised, n, seed, out):
    """Order rolls. Columns: trial, score_I and place_I per combatant."""
    _run_simulation(
        "order",
        n,
        seed,
        out,
        Rules(),
        {"combatants": len(modifiers)},
        modifiers=modifiers,
        two_actions=two_actions,
        surprised=surprised,
    )


def _attach_shared_commands():
    """The table, rules and design commands live with the other systems' ones."""
    from exactdice.cli.rules import attach_shared_commands
    from exactdice.cli.system_design import karst_design
    from exactdice.cli.table_commands import karst_table

    attach_shared_commands(karst, "karst", table=karst_table, design=karst_design)


_attach_shared_commands()
