"""``exactdice karbon simulate`` and ``exactdice karbon trace``: Karbon contests played with
real (pseudo-random) dice, independently of the exact model (see `exactdice.karbon.simulate`).

The lead attaches both to the ``karbon`` group with ``karbon.add_command(...)``.
"""

from __future__ import annotations

import click

from exactdice.cli.common import emit_json, json_option
from exactdice.cli.karbon import with_setup
from exactdice.errors import InputError
from exactdice.karbon.simulate import OUTCOMES, simulate_contests, summarize, write_samples_csv
from exactdice.karbon.trace import trace_contest

__all__ = ["simulate", "trace"]


def _check_strategy(strategy_file):
    """Strategy replay is not wired in yet: refuse it clearly instead of ignoring it."""
    if strategy_file is not None:
        raise InputError("--strategy", "replaying an exported strategy in the simulator is not available "
                                       "yet; simulate fixed or random policies")


@click.command()
@with_setup
@click.option("--n", "n", type=int, default=100_000, show_default=True, help="Number of contests to play.")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the random generator (PCG64).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write one CSV row per contest to this file (else print a summary).")
@click.option("--strategy", "strategy_file", type=click.Path(dir_okay=False), default=None,
              help="A strategy file from `karbon odds --strategy` to replay optimal/kind play.")
@json_option
def simulate(setup, ruleset, player, narrator, n, seed, out, strategy_file, as_json):
    """Play many Karbon contests die by die (independently of the exact model).

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
    """
    _check_strategy(strategy_file)
    result = simulate_contests(setup, ruleset, player, narrator, n=n, seed=seed)
    if out is not None:
        write_samples_csv(result, out)
        click.echo(f"wrote {n} contests to {out}", err=True)
    summary = summarize(result)
    if as_json:
        emit_json({"setup": setup.to_dict(), "ruleset": ruleset.to_dict(),
                   "policies": {"player": player.text(), "narrator": narrator.text()},
                   "seed": seed, **summary})
        return
    if out is not None:
        return
    click.echo(f"simulated {n} contests (seed {seed}; player {player.text()}; narrator {narrator.text()})")
    for name in OUTCOMES:
        entry = summary["outcomes"][name]
        error = (entry["share"] * (1 - entry["share"]) / n) ** 0.5
        click.echo(f"  {name:<11} {entry['count']:>10}  {entry['share']:.6f} +- {error:.6f}")
    for name, entry in summary["means"].items():
        click.echo(f"  mean {name:<11} {entry['mean']:.6f} +- {entry['standard_error']:.6f}")


@click.command()
@with_setup
@click.option("--seed", type=int, default=3, show_default=True, help="Seed of the random generator (PCG64).")
@json_option
def trace(setup, ruleset, player, narrator, seed, as_json):
    """Play one contest and tell it round by round in words: the rolls, hits and
    turncoats, the winner, the Opening, risk, peril, the Test, every Break and Glitch
    with the option chosen, and the track.

    \b
    Example:
      exactdice karbon trace -a 3 -c 3 -w 3 -p 1 --seed 3
    """
    lines = trace_contest(setup, ruleset, player, narrator, seed=seed)
    if as_json:
        emit_json({"seed": seed, "lines": lines})
        return
    for line in lines:
        click.echo(line)
