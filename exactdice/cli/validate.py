"""``exactdice validate <system>``: do a simulator's samples fit the exact distribution?

Each subcommand is built with `exactdice.validation.validation_command` from the system's
Python API (its ``expected_distribution``-style function and its simulator's outcome
column). System packages are imported only when their subcommand is used, so
``exactdice validate --help`` stays fast.
"""

from __future__ import annotations

import click

from exactdice.validation import validation_command

__all__ = ["validate", "SUBCOMMAND_BUILDERS"]


# ----- Contingency ---------------------------------------------------------------------------


def _contingency_command() -> click.Command:
    # the same setup flags, defaults and parsing as `exactdice contingency simulate`
    from exactdice.cli.contingency import _build, _setup_options
    from exactdice.contingency import OUTCOME_COLUMN, OUTCOMES, expected_distribution
    from exactdice.contingency.check import column_distributions

    def expected(**setup):
        return expected_distribution(*_build(**setup))

    def columns(**setup):
        return column_distributions(*_build(**setup))

    return validation_command(
        "contingency",
        "Check samples of Contingency skill checks (e.g. from `exactdice contingency simulate "
        "--difficulty N --out FILE.csv`) against the exact P(outcome): "
        f"{', '.join(OUTCOMES)}. Give the same setup flags the samples were simulated with "
        f"(--difficulty is needed); the outcome is read from CSV column {OUTCOME_COLUMN!r}. "
        "Every other column with an exact law is tested too: total, result_die, player_omens, "
        "gm_omens.",
        [_setup_options], expected, OUTCOME_COLUMN, columns_fn=columns)


# ----- Karbon --------------------------------------------------------------------------------


def _karbon_command() -> click.Command:
    # the same setup, policy and knob flags as `exactdice karbon odds|simulate`
    from exactdice.cli.karbon import karbon_setup_options, setup_from_options
    from exactdice.karbon.count_laws import column_distributions
    from exactdice.karbon.simulate import OUTCOME_COLUMN, OUTCOMES, expected_distribution

    def expected(**options):
        return expected_distribution(*setup_from_options(**options))

    def columns(**options):
        return column_distributions(*setup_from_options(**options))

    return validation_command(
        "karbon",
        "Check samples of Karbon contests (e.g. from `exactdice karbon simulate ... --out "
        "FILE.csv`) against the exact P(outcome): "
        f"{', '.join(OUTCOMES)} (unfinished: the contest never ends). Give the same setup, "
        f"policy and --rule flags the samples were simulated with; the outcome is read from "
        f"CSV column {OUTCOME_COLUMN!r}. With fixed policies the count columns (rounds, "
        f"breaks, glitches, injuries, conditions) are tested against their exact laws too. "
        f"The exact solve can take seconds for large setups.",
        [karbon_setup_options], expected, OUTCOME_COLUMN, columns_fn=columns)


# ----- Chronica -------------------------------------------------------------------------------


def _chronica_command() -> click.Command:
    # the same setup flags, defaults and parsing as `exactdice chronica simulate`
    from exactdice.chronica import expected_distribution
    from exactdice.chronica.contest import column_distributions
    from exactdice.cli.chronica import _contest_options, _setup

    def expected(**setup):
        sides, target, rules = _setup(**setup)
        return expected_distribution(sides, rules, target)

    def columns(**setup):
        sides, target, rules = _setup(**setup)
        return column_distributions(sides, rules, target)

    return validation_command(
        "chronica",
        "Check samples of Chronica Mutanis Mundi contests (e.g. from `exactdice chronica "
        "simulate --side ... --out FILE.csv`) against the exact P(winner): side 0, 1, ... "
        "or tie, and every other column with an exact law: successes, success_sizes, "
        "concessions_<i>. Give the same --side flags and knobs the samples were simulated "
        "with; the outcome is read from CSV column 'winner'.",
        [_contest_options], expected, "winner", columns_fn=columns)


# ----- Karst ---------------------------------------------------------------------------------

_KARST_HELP = {
    "action": ("Karst action rolls (d6 + modifier): column 'outcome', success | failure.",
               "the CSV of `exactdice karst simulate action`"),
    "attack": ("Karst attacks (d20 + modifier against defense). Without --health: column "
               "'outcome', hit | miss. With --health: whole knock-out chains, column "
               "'negative_health' (the health below zero at the knock-out); with "
               "--then-death as well: column 'outcome', death | stable.",
               "the CSV of `exactdice karst simulate attack`"),
    "death": ("Karst death rolls from negative health H: column 'outcome', death | stable.",
              "the CSV of `exactdice karst simulate death`"),
    "order": ("Karst initiative order: the place of one combatant (--combatant I, numbered "
              "from 1 in the order of --modifier), column 'place_I'.",
              "the CSV of `exactdice karst simulate order`"),
}


def _karst_setup_options(kind: str) -> list:
    death_options = [
        click.option("--aid", type=int, default=0, show_default=True,
                     help="Aid actions per round (each an extra death roll)."),
    ]
    if kind == "action":
        return [click.option("--modifier", type=int, default=0, show_default=True,
                             help="Added to the d6.")]
    if kind == "attack":
        return [
            click.option("--modifier", type=int, default=0, show_default=True,
                         help="Attack modifier added to the d20."),
            click.option("--defense", type=int, required=True, help="The target's defense."),
            click.option("--damage", default="d6", show_default=True,
                         help="Weapon damage, a sum of dice like 2d4+1."),
            click.option("--health", type=int, default=None,
                         help="Target health: validate whole knock-out chains."),
            click.option("--unaware", is_flag=True, help="Double the damage of the first attack."),
            click.option("--then-death", is_flag=True,
                         help="Chain the knock-out into the death roll."),
            *death_options,
            click.option("--death-modifier", type=int, default=0, show_default=True,
                         help="Death-roll modifier (with --then-death)."),
        ]
    if kind == "death":
        return [
            click.option("--negative-health", type=int, required=True, help="h = -health >= 0."),
            *death_options,
            click.option("--modifier", type=int, default=0, show_default=True,
                         help="Added to every death roll."),
        ]
    return [
        click.option("--modifier", "modifiers", type=int, multiple=True, required=True,
                     help="One per combatant, repeated: --modifier 2 --modifier 0."),
        click.option("--two-actions", type=int, multiple=True,
                     help="Combatant I takes two actions."),
        click.option("--surprised", type=int, multiple=True, help="Combatant I is surprised."),
        click.option("--combatant", type=int, default=1, show_default=True,
                     help="Whose place to validate (numbered from 1)."),
    ]


def _karst_command(kind: str) -> click.Command:
    from exactdice.karst import KarstRules, category_column, expected_distribution
    from exactdice.karst.expected import column_distributions

    def expected(aid=0, **setup):
        return expected_distribution(kind, rules=KarstRules(aid=aid), **setup)

    def columns(aid=0, **setup):
        return column_distributions(kind, rules=KarstRules(aid=aid), **setup)

    description, source = _KARST_HELP[kind]
    return validation_command(
        kind, f"Check samples ({source}) against the exact distribution. {description} Give "
              f"the same setup flags the samples were simulated with.",
        _karst_setup_options(kind), expected, lambda **setup: category_column(kind, **setup),
        column_help="'outcome', or as described above", columns_fn=columns)


class _KarstGroup(click.Group):
    def list_commands(self, ctx):
        return list(_KARST_HELP)

    def get_command(self, ctx, name):
        return _karst_command(name) if name in _KARST_HELP else None


@click.group("karst", cls=_KarstGroup)
def _karst_group():
    """Karst rolls: validate action, attack, death or order samples (one subcommand each,
    matching `exactdice karst simulate action|attack|death|order`)."""


def _karst_group_command() -> click.Command:
    return _karst_group


# ----- the group ------------------------------------------------------------------------------

#: subcommand name -> function building its click command (imports the system on first use)
SUBCOMMAND_BUILDERS = {
    "contingency": _contingency_command,
    "karst": _karst_group_command,
    "chronica": _chronica_command,
    "karbon": _karbon_command,
}


#: one line per subcommand for ``exactdice validate --help`` (listing them imports nothing)
SUBCOMMAND_SUMMARIES = {
    "contingency": "Contingency skill checks: success, success-with-condition, failure.",
    "karst": "Karst rolls: action | attack | death | order (one subcommand each).",
    "chronica": "Chronica contests: the winning side or tie.",
    "karbon": "Karbon contests: win, loss, tie or unfinished.",
}


class _LazySystemGroup(click.Group):
    """A click group whose per-system subcommands are built on first use."""

    def list_commands(self, ctx):
        return sorted(SUBCOMMAND_BUILDERS)

    def format_commands(self, ctx, formatter):
        rows = [(name, SUBCOMMAND_SUMMARIES.get(name) or self.get_command(ctx, name).get_short_help_str())
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx, name):
        builder = SUBCOMMAND_BUILDERS.get(name)
        return None if builder is None else builder()


@click.group(cls=_LazySystemGroup)
def validate():
    """Compare simulated samples with the exact distribution of a system.

    \b
    Give a CSV file of samples with --samples FILE.csv (one row per trial with a
    header row, as written by `exactdice <system> simulate --out FILE.csv` or any
    other simulator), or counts per outcome with --counts win=412,loss=371,tie=217,
    plus the setup flags the samples were made with.

    \b
    The test: an exact binomial/multinomial test when the count vectors can be
    enumerated, otherwise Pearson chi-square with sparse outcomes (expected < 5)
    pooled. Prints each outcome's observed and expected counts, its exact
    probability and its deviation z in standard errors, the p-value and a verdict.

    \b
    Exit code 0: the samples fit (p >= --alpha); 1: they do not; 2: bad input.
    """
