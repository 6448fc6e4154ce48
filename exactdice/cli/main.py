"""Entry point of the ``exactdice`` command.

Subcommands live in their own modules and are imported only when used, so
``exactdice dist`` starts fast whatever else is installed.
"""

from __future__ import annotations

import sys

import click

from exactdice.cli.common import LazyGroup, command_flags, error_with_flags, running_command
from exactdice.core.exact import lift_digit_limit
from exactdice.errors import InputError
from exactdice.limits import MEMORY_ENVIRONMENT_VARIABLE, memory_watchdog, parse_size, set_memory_budget

lift_digit_limit()

# subcommand name -> "module:attribute" of its click command or group
SUBCOMMANDS = {
    "dist": "exactdice.cli.dist:dist",
    "karbon": "exactdice.cli.karbon:karbon",
    "contingency": "exactdice.cli.contingency:contingency",
    "chronica": "exactdice.cli.chronica:chronica",
    "karst": "exactdice.cli.karst:karst",
    "validate": "exactdice.cli.validate:validate",
    "serve": "exactdice.cli.serve:serve",
}


class RootGroup(LazyGroup):
    """The ``exactdice`` group: every subcommand is imported when it is used, and every
    registered system without a module of its own gets `exactdice.cli.system_commands`.

    An `InputError` from the library names a parameter; here it is given the flag of the
    command that ran (`exactdice.cli.common.error_with_flags`).
    """

    lazy_commands = SUBCOMMANDS

    def list_commands(self, ctx):
        from exactdice.systems import system_names

        return sorted(set(super().list_commands(ctx)) | set(system_names()))

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is not None:
            return command
        # a registered system without a hand-made module: commands from its declaration
        from exactdice.systems import get_system, system_names

        if name not in system_names() or get_system(name).variants:
            return None
        from exactdice.cli.system_commands import system_group

        return system_group(get_system(name))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except InputError as error:
            raise error_with_flags(error, command_flags(running_command(ctx))) from error.__cause__


@click.group(cls=RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="exactdice")
@click.option("--max-memory", metavar="SIZE", default=None,
              help=f"Memory budget of a run, like 8G or 512M [default: ${MEMORY_ENVIRONMENT_VARIABLE}, "
                   "else half of the machine's memory]; past it, work stops with a message.")
def cli(max_memory):
    """Exact odds for tabletop dice mechanics.

    Every probability is an exact fraction (shown with its decimal). Bad input
    exits with code 2 and a one-line message naming the flag at fault. Long
    solves stop at a memory budget (--max-memory, before the subcommand:
    exactdice --max-memory 16G karbon odds ...).
    """
    if max_memory is not None:
        set_memory_budget(parse_size(max_memory, "--max-memory"))


def main(argv=None):
    """Run the CLI; an `InputError` anywhere becomes a one-line message and exit code 2."""
    watchdog = memory_watchdog()
    try:
        with watchdog:
            code = cli.main(args=argv, prog_name="exactdice", standalone_mode=False)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
    except click.UsageError as error:  # one line, like every other input error
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
        message = " ".join(error.format_message().split())
        click.echo(f"exactdice: error: {message}{hint}", err=True)
        sys.exit(error.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        if watchdog.exceeded:  # the memory watchdog's interrupt, arriving late
            click.echo(f"exactdice: error: --max-memory: {watchdog.exceeded}", err=True)
            sys.exit(2)
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except InputError as error:
        click.echo(f"exactdice: error: {error}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
