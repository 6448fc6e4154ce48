"""``exactdice validate <system>``: do a simulator's samples fit the exact distribution?

One subcommand per registered system (`exactdice.systems.SYSTEMS`), built from what the
system declares: its setup parameters become the flags, `RulesSystem.exact` gives the
exact law and `RulesSystem.outcome_column` the CSV column; a system with variants (Karst)
becomes a group with one subcommand per variant. The test itself is
`exactdice.validation.goodness_of_fit`. Systems are imported only when their subcommand
is used, so ``exactdice validate --help`` stays fast.
"""

from __future__ import annotations

from fractions import Fraction

import click

from exactdice.cli.common import CommandGroup, emit_json, parameter_options
from exactdice.errors import InputError
from exactdice.systems import get_system, split_values, system_names, system_summary
from exactdice.validation import (DEFAULT_ALPHA, TESTS, fit_sample_columns, goodness_of_fit, parse_counts,
                                  read_sample_column, read_sample_columns)

__all__ = ["validate", "system_command"]

_OWN_PARAMETERS = ("samples", "counts", "column_name", "alpha", "test", "as_json")

_EPILOG = "Exit code 0: the samples fit the exact distribution; 1: they do not; 2: bad input."


def _own_options(function):
    options = [
        click.option("--samples", type=click.Path(dir_okay=False), default=None,
                     help="CSV file of samples with a header row; the outcome is read from the "
                          "system's outcome column (see --column)."),
        click.option("--counts", default=None,
                     help="Counts per outcome instead of a file, e.g. win=412,loss=371,tie=217."),
        click.option("--column", "column_name", default=None,
                     help="Test this CSV column alone (default: the system's outcome column "
                          "for this setup, and with --samples every further column with an "
                          "exact law, each at alpha / k for k columns)."),
        click.option("--alpha", type=float, default=DEFAULT_ALPHA, show_default=True,
                     help="Significance level: the samples do not fit when p < alpha."),
        click.option("--test", type=click.Choice(TESTS), default="auto", show_default=True,
                     help="auto: exact test when the count vectors can be enumerated (always "
                          "for two outcomes), else Pearson chi-square with sparse outcomes "
                          "pooled."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print JSON: p_value, verdict, fits, test, n and outcomes "
                          "{outcome: {observed, expected, p, z}} of the first column, and "
                          "columns {column: the same} for every column tested."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def system_command(system) -> click.Command:
    """``exactdice validate <name>`` for one system (or one variant of a system).

    >>> from exactdice.systems import get_system
    >>> command = system_command(get_system("karst").variants["death"])
    >>> [parameter.name for parameter in command.params][:3]
    ['samples', 'counts', 'column_name']
    """

    def run(samples, counts, column_name, alpha, test, as_json, **values):
        if not 0 < alpha < 1:  # the level typed, before it is shared among the columns
            raise InputError("alpha", f"must be strictly between 0 and 1, got {alpha:g}")
        if (samples is None) == (counts is None):
            raise InputError("samples", "give exactly one of `samples` FILE.csv or "
                                        "`counts` OUTCOME=N,...")
        if samples is not None:   # a device, FIFO or missing file is refused before any solve
            from exactdice.input_files import MAX_CSV_BYTES, check_input_file

            check_input_file(samples, "samples", "CSV", MAX_CSV_BYTES)
        setup_part, rules_part = split_values(system, values)
        setup, rules = system.setup(setup_part), system.rules(rules_part)
        headline = system.outcome_column(setup)
        # further columns with an exact law (rounds, omens, success dice, ...), read from a file
        exact, others = _exact_laws(system, setup, rules, with_columns=samples is not None)
        others.pop(headline, None)
        field = "samples" if samples is not None else "counts"
        if samples is not None and column_name is None:   # every column with a law, as the page does
            law = exact if exact is not None else system.exact(setup, rules)
            reports = fit_sample_columns(samples, headline, law, others, alpha=alpha, test=test, field=field)
        else:
            reports = _one_column(system, setup, rules, exact, others, samples, counts, column_name, headline,
                                  alpha, test, field)
        fitting = all(report.fits for report in reports.values())
        first = next(iter(reports))
        if as_json:
            payload = {"system": system.name, "column": first,
                       "setup": {name: _plain(value) for name, value in values.items()}}
            payload.update(reports[first].to_json())
            payload["fits"] = fitting
            payload["columns"] = {name: report.to_json() for name, report in reports.items()}
            emit_json(payload)
        else:
            source = samples if samples is not None else "--counts"
            click.echo(f"{system.name}: {reports[first].n} samples from {source} against the exact "
                       f"distribution" + (f" ({len(reports)} columns, each tested at alpha "
                                          f"{alpha:g} / {len(reports)})" if len(reports) > 1 else ""))
            for name, report in reports.items():
                click.echo(f"\ncolumn {name!r}:")
                click.echo(report.to_text())
            if len(reports) > 1:
                failed = [name for name, report in reports.items() if not report.fits]
                click.echo("\n" + (f"does not fit: column(s) {', '.join(failed)}" if failed
                                   else f"fits: all {len(reports)} columns"))
        if not fitting:
            # SystemExit, not ctx.exit: click's non-standalone mode swallows ctx.exit codes
            raise SystemExit(1)

    def callback(**kwargs):
        own = {name: kwargs.pop(name) for name in _OWN_PARAMETERS}
        run(**own, **kwargs)

    help_text = (f"{system.summary} Check samples (e.g. the CSV of `exactdice ... simulate "
                 f"--out FILE.csv`) against the exact distribution. Give the same setup flags "
                 f"the samples were simulated with.")
    decorated = _own_options(parameter_options(system.parameters)(callback))
    return click.command(name=system.name, help=help_text, epilog=_EPILOG)(decorated)


def _one_column(system, setup, rules, exact, others, samples, counts, column_name, headline, alpha, test,
                field) -> dict:
    """``--column NAME`` (or ``--counts``): that one column's report."""
    if column_name in others:
        if samples is None:
            raise InputError("column_name", f"column {column_name!r} is read from `samples` FILE.csv")
        read = read_sample_columns(samples, [column_name])
        if column_name not in read:
            read_sample_column(samples, column_name)  # names the missing column
        law = others[column_name]
        observed = law.fold(read[column_name])
        # a value the exact law never gives is an impossible outcome (a misfit), not a typo
        expected = dict(law.probabilities)
        expected.update({value: Fraction(0) for value in observed if value not in expected})
    else:  # the outcome, from its own column or one named by --column
        column_name = column_name or headline
        observed = read_sample_column(samples, column_name) if samples is not None else parse_counts(counts)
        expected = exact if exact is not None else system.exact(setup, rules)
    return {column_name: goodness_of_fit(expected, observed, alpha=alpha, test=test, field=field)}


def _exact_laws(system, setup, rules, *, with_columns: bool) -> tuple[dict | None, dict]:
    """(the outcome column's exact law, or None: not needed yet; the further columns' laws,
    none unless *with_columns*), from one solve where the system offers ``exact_laws``."""
    if not with_columns:
        return None, {}
    both = getattr(system, "exact_laws", None)
    if both is not None:
        exact, columns = both(setup, rules)
        return exact, dict(columns)
    columns = getattr(system, "column_distributions", None)
    return None, dict(columns(setup, rules)) if columns is not None else {}


def _variants_group(system) -> click.Group:
    group = CommandGroup(name=system.name, help=f"{system.summary} One subcommand each.")
    for variant in system.variants.values():
        group.add_command(system_command(variant))
    return group


class _RegistryGroup(CommandGroup):
    """A group with one subcommand per registered system, each built on first use."""

    def list_commands(self, ctx):
        return sorted(system_names())

    def format_commands(self, ctx, formatter):
        rows = [(name, system_summary(name)) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx, name):
        if name not in system_names():
            return None
        system = get_system(name)
        return _variants_group(system) if system.variants else system_command(system)


@click.group(cls=_RegistryGroup)
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


def _plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return str(value)
