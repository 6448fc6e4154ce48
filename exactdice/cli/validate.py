"""``exactdice validate <system>``: do a simulator's samples fit the exact distribution?

One subcommand per registered system (`exactdice.systems.SYSTEMS`), built from what the
system declares: its setup parameters become the flags, `RulesSystem.exact` gives the
exact law and `RulesSystem.outcome_column` the CSV column; a system with variants (Karst)
becomes a group with one subcommand per variant. The test itself is
`exactdice.validation.goodness_of_fit`, run by `exactdice.answers.validate_samples` (the page's
Validate runs it too). Systems are imported only when their subcommand is used, so
``exactdice validate --help`` stays fast.
"""

from __future__ import annotations

import click

from exactdice.cli.common import CommandGroup, emit_json, given_values, parameter_options, terminal_bars, with_flags
from exactdice.systems import get_system, system_names, system_summary
from exactdice.validation import DEFAULT_ALPHA, TESTS

__all__ = ["validate", "system_command"]

_OWN_PARAMETERS = ("samples", "counts", "column_name", "alpha", "test", "as_json")

_EPILOG = "Exit code 0: the samples fit the exact distribution; 1: they do not; 2: bad input."


def _own_options(function):
    options = [
        click.option(
            "--samples",
            type=click.Path(dir_okay=False),
            default=None,
            help="CSV file of samples with a header row; the outcome is read from the "
            "system's outcome column (see --column).",
        ),
        click.option(
            "--counts", default=None, help="Counts per outcome instead of a file, e.g. win=412,loss=371,tie=217."
        ),
        click.option(
            "--column",
            "column_name",
            default=None,
            help="Test this CSV column alone (default: the system's outcome column "
            "for this setup, and with --samples every further column with an "
            "exact law, each at alpha / k for k columns).",
        ),
        click.option(
            "--alpha",
            type=float,
            default=DEFAULT_ALPHA,
            show_default=True,
            help="Significance level: the samples do not fit when p < alpha.",
        ),
        click.option(
            "--test",
            type=click.Choice(TESTS),
            default="auto",
            show_default=True,
            help="auto: exact test when the count vectors can be enumerated (always "
            "for two outcomes), else Pearson chi-square with sparse outcomes "
            "pooled.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Print JSON: p_value, verdict, fits, test, n and outcomes "
            "{outcome: {observed, expected, p, z}} of the first column, and "
            "columns {column: the same} for every column tested.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def system_command(system, name: str | None = None) -> click.Command:
    """``exactdice validate <name>`` for one system (or one variant of a system; *name* is
    its computation's name, ``karst-death``).

    >>> from exactdice.systems import get_system
    >>> command = system_command(get_system("karst").variants["death"], "karst-death")
    >>> [parameter.name for parameter in command.params][:3]
    ['samples', 'counts', 'column_name']
    """
    computation = name or system.name

    def run(samples, counts, column_name, alpha, test, as_json, **values):
        from exactdice.answers.systems import validate_samples

        bars = terminal_bars()
        try:
            found = validate_samples(
                computation,
                given_values(values),
                samples=samples,
                counts=counts,
                column=column_name,
                alpha=alpha,
                test=test,
                progress=bars,
            )
        finally:
            if bars is not None:
                bars.close()
        if as_json:
            _emit(found, system, values)
        else:
            _print(found, system, alpha, samples if samples is not None else "--counts")
        if not found.fits:
            # SystemExit, not ctx.exit: click's non-standalone mode swallows ctx.exit codes
            raise SystemExit(1)

    def callback(**kwargs):
        own = {name: kwargs.pop(name) for name in _OWN_PARAMETERS}
        run(**own, **kwargs)

    flags = {parameter.name: parameter.flag for parameter in system.parameters}
    help_text = (
        f"{with_flags(system.summary, flags)} Check samples (e.g. the CSV of `exactdice ... simulate "
        f"--out FILE.csv`) against the exact distribution. Give the same setup flags "
        f"the samples were simulated with."
    )
    decorated = _own_options(parameter_options(system.parameters, roles=("setup", "rules"))(callback))
    command = click.command(name=system.name, help=help_text, epilog=_EPILOG)(decorated)
    command.parameter_flags = {"column": "--column"}
    return command


def _emit(found, system, values) -> None:
    """``--json``: the first column's report at the top, every column under ``columns``."""
    first = next(iter(found.reports))
    from exactdice.answers.systems import plain_value

    payload = {
        "system": system.name,
        "column": first,
        "setup": {name: plain_value(value) for name, value in values.items()},
    }
    payload.update(found.reports[first].to_json())
    payload["fits"] = found.fits
    payload["columns"] = {name: report.to_json() for name, report in found.reports.items()}
    emit_json(payload)


def _print(found, system, alpha: float, source: str) -> None:
    """Each column's report as text, and the verdict over all of them."""
    reports = found.reports
    first = next(iter(reports))
    click.echo(
        f"{system.name}: {reports[first].n} samples from {source} against the exact "
        f"distribution"
        + (f" ({len(reports)} columns, each tested at alpha {alpha:g} / {len(reports)})" if len(reports) > 1 else "")
    )
    for name, report in reports.items():
        click.echo(f"\ncolumn {name!r}:")
        click.echo(report.to_text())
    if len(reports) > 1:
        failed = [name for name, report in reports.items() if not report.fits]
        click.echo(
            "\n" + (f"does not fit: column(s) {', '.join(failed)}" if failed else f"fits: all {len(reports)} columns")
        )


def _variants_group(system) -> click.Group:
    group = CommandGroup(name=system.name, help=f"{system.summary} One subcommand each.")
    for name, variant in system.variants.items():
        group.add_command(system_command(variant, f"{system.name}-{name}"))
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
