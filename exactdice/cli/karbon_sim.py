"""``exactdice karbon simulate`` and ``exactdice karbon trace``: Karbon contests played with
real (pseudo-random) dice, independently of the exact model (see `exactdice.karbon.simulate`).

The lead attaches both to the ``karbon`` group with ``karbon.add_command(...)``.
"""

from __future__ import annotations

import textwrap

import click

from exactdice.errors import InputError
from exactdice.cli.common import OutputFile, emit_json, played_json_option
from exactdice.cli.karbon import refuse_strategy_without_choices, with_setup
from exactdice.karbon.simulate import OUTCOMES, summarize, write_samples_csv
from exactdice.karbon.simulate import simulate as simulate_contests
from exactdice.karbon.trace import trace_contest

__all__ = ["simulate", "trace", "solved_strategy"]

_STRATEGY_HELP = (
    "A strategy file from `karbon odds --strategy` that plays the optimal/kind side(s). "
    "Without it, optimal/kind policies are solved first, which can take long."
)


def solved_strategy(setup, ruleset, player, narrator) -> dict:
    """Solve the contest exactly and return its strategy as a table, as `load_strategy` would read
    the file ``karbon odds --strategy`` writes (no file is written).

    >>> from exactdice.karbon import ContestSetup, Rules, NarratorPolicy, PlayerPolicy
    >>> setup = ContestSetup(player_dice={6: 1}, narrator_dice={8: 1}, consequence=1, pool={}, reserve={})
    >>> table = solved_strategy(setup, Rules(), PlayerPolicy(kind="optimal"), NarratorPolicy())
    >>> table[None]["policies"]["player"], len(table) > 1
    ('optimal', True)
    """
    from exactdice.karbon.solve import contest_odds
    from exactdice.karbon.strategy import FORMAT, decision_key, describe_decision

    result = contest_odds(setup, ruleset, player, narrator)
    sizes = result.model.sizes
    table: dict = {
        decision_key(*describe_decision(sizes, situation)): action for situation, action in result.strategy.items()
    }
    table[None] = {
        "format": FORMAT,
        "ruleset": ruleset.to_dict(),
        "policies": {"player": player.text(), "narrator": narrator.text()},
        "dice_sizes": list(sizes.sizes),
    }
    return table


def _strategy_for(setup, ruleset, player, narrator, strategy_file):
    """The strategy to replay: the file, or a fresh solve when a side plays optimal/kind."""
    if strategy_file is not None:
        refuse_strategy_without_choices(player, narrator)
        return strategy_file
    if player.kind == "optimal" or narrator.kind in ("optimal", "kind"):
        click.echo("solving the contest exactly for the optimal/kind strategy (this can take long) ...", err=True)
        return solved_strategy(setup, ruleset, player, narrator)
    return None


@click.command()
@with_setup
@click.option("--n", "n", type=int, default=100_000, show_default=True, help="Number of contests to play.")
@click.option(
    "--seed", type=click.IntRange(min=0), default=7, show_default=True, help="Seed of the random generator (PCG64)."
)
@click.option(
    "--out",
    type=OutputFile(allow_dash=True),
    default=None,
    help="Write one CSV row per contest to this file, or - for standard output (else print a summary).",
)
@click.option("--strategy", "strategy", type=click.Path(dir_okay=False), default=None, help=_STRATEGY_HELP)
@played_json_option
def simulate(setup, ruleset, player, narrator, n, seed, out, strategy, as_json):
    """Play many Karbon contests die by die (independently of the exact model).

    Fixed and random policies are played by the simulator itself; an optimal or kind
    side replays a strategy: `--strategy FILE` from `karbon odds ... --strategy FILE`
    (same setup, ruleset and policies; a mismatch is refused), or, without it, the
    contest is solved exactly first to get one (this can take long: minutes and GBs
    for big setups, as for `karbon odds`).

    \b
    CSV columns (one row per contest):
      trial       contest number, from 0
      outcome     win | loss | tie | unfinished (still going after 10,000 rounds)
      rounds      rounds played (0 if the Fallout Glitches ended it)
      breaks      Break marks made
      glitches    Glitch marks made (Fallout and Peril Glitches included)
      injuries    injuries taken (hurt)
      conditions  conditions taken (hurt)
    `exactdice validate karbon --samples FILE.csv` compares the outcome column with the exact odds.

    \b
    Examples:
      exactdice karbon simulate -a 3 -c 3 -w 3 -p 1 --n 100000 --seed 7 --out samples.csv
      exactdice karbon simulate -a 2 -c 2 --narrator-policy random --rule sudden_death=on --json
      exactdice karbon odds --player-dice d6 --narrator-dice d8 --pool d4 --reserve d4 -w 1 -p 1 \\
          --player-policy optimal --strategy s.json
      exactdice karbon simulate --player-dice d6 --narrator-dice d8 --pool d4 --reserve d4 -w 1 -p 1 \\
          --player-policy optimal --strategy s.json --n 100000
    """
    if as_json and out == "-":
        raise InputError("--json", "and --out - would both print to standard output; give --out a file name")
    strategy_file = strategy
    strategy = _strategy_for(setup, ruleset, player, narrator, strategy_file)
    result = simulate_contests(setup, ruleset, player, narrator, n=n, seed=seed, strategy=strategy)
    if out is not None:
        write_samples_csv(result, out)
        click.echo(f"wrote {n} contests to {out}", err=True)
    summary = summarize(result)
    if as_json:
        emit_json(
            {
                "setup": setup.to_dict(),
                "ruleset": ruleset.to_dict(),
                "policies": {"player": player.text(), "narrator": narrator.text()},
                "seed": seed,
                "strategy": strategy_file if strategy_file else ("solved" if strategy else None),
                **summary,
            }
        )
        return
    if out is not None:
        return
    click.echo(f"simulated {n:,} contests (seed {seed}); observed shares +- one standard error:")
    for name in OUTCOMES:
        entry = summary["outcomes"][name]
        error = (entry["share"] * (1 - entry["share"]) / n) ** 0.5
        click.echo(f"  {name:<11} {entry['count']:>10}  {entry['share'] * 100:6.2f} % +- {error * 100:.2f} %")
    for name, entry in summary["means"].items():
        click.echo(f"  mean {name:<11} {entry['mean']:.4g} +- {entry['standard_error']:.2g}")
    for label, policy in (("player:   ", player), ("narrator: ", narrator)):
        for line in textwrap.wrap(policy.words(), 98, initial_indent=label, subsequent_indent=" " * 10):
            click.echo(line)


@click.command()
@with_setup
@click.option(
    "--seed", type=click.IntRange(min=0), default=3, show_default=True, help="Seed of the random generator (PCG64)."
)
@click.option("--strategy", "strategy", type=click.Path(dir_okay=False), default=None, help=_STRATEGY_HELP)
@played_json_option
def trace(setup, ruleset, player, narrator, seed, strategy, as_json):
    """Play one contest and tell it round by round in words: the rolls, hits and
    turncoats, the winner, the Opening, risk, peril, the Test, every Break and Glitch
    with the option chosen, and the track. Optimal/kind sides replay a strategy, as in
    `karbon simulate` (solved first when no --strategy file is given).

    \b
    Example:
      exactdice karbon trace -a 3 -c 3 -w 3 -p 1 --seed 3
    """
    strategy = _strategy_for(setup, ruleset, player, narrator, strategy)
    lines = trace_contest(setup, ruleset, player, narrator, seed=seed, strategy=strategy)
    if as_json:
        emit_json({"seed": seed, "lines": lines})
        return
    for line in lines:
        click.echo(line)
