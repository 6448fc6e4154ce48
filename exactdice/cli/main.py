"""Entry point of the ``exactdice`` command.

Subcommands live in their own modules and are imported only when used, so
``exactdice dist`` starts fast whatever else is installed.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys

import click

from exactdice.cli.common import ROOT_FLAGS, LazyGroup, command_flags, error_with_flags, running_command
from exactdice.core.exact import lift_digit_limit
from exactdice.errors import InputError
from exactdice.limits import (
    MEMORY_ENVIRONMENT_VARIABLE,
    memory_watchdog,
    out_of_memory_error,
    parse_size,
    ran_out_of_memory,
    set_memory_budget,
)

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

    def make_context(self, *args, **kwargs):
        with _output_errors():  # --help is printed while the context is made
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        try:
            with _output_errors():
                return super().invoke(ctx)
        except InputError as error:
            raise error_with_flags(error, command_flags(running_command(ctx))) from error.__cause__


@click.group(
    cls=RootGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Exit codes:
  0    done
  1    validate: the samples do not fit the exact distribution
  2    bad input, or work past a size, time or memory limit (one line names
       the flag and how to raise the limit)
  74   standard output could not be written (a full disk, /dev/full)
  130  interrupted (Ctrl-C, SIGTERM)
  141  the reader of standard output went away (| head): no message""",
)
@click.version_option(package_name="exactdice")
@click.option(
    "--max-memory",
    metavar="SIZE",
    default=None,
    help=f"Memory budget of a run, like 8G or 512M [default: ${MEMORY_ENVIRONMENT_VARIABLE}, "
    "else half of the machine's memory]; past it, work stops with a message.",
)
def cli(max_memory):
    """Exact odds for tabletop dice mechanics.

    Every probability is an exact fraction (shown with its decimal). Bad input
    exits with code 2 and a one-line message naming the flag at fault. Long
    solves stop at a memory budget (--max-memory, before the subcommand:
    exactdice --max-memory 16G karbon odds ...).
    """
    if max_memory is not None:
        set_memory_budget(parse_size(max_memory, "--max-memory"))


#: exit codes beyond 0 (success), 1 (`validate`: the samples do not fit) and 2 (bad input,
#: or work past a limit); documented in ``exactdice --help``
EXIT_OUTPUT_FAILED = 74  # sysexits.h EX_IOERR: standard output could not be written
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM, as a shell reports SIGINT
EXIT_OUTPUT_CLOSED = 141  # the reader of standard output went away (`| head`), as a shell reports SIGPIPE

#: errors of writing standard output: a closed pipe, a full or failing device, a closed stream
_OUTPUT_ERRNOS = {
    errno.EPIPE,
    errno.ENOSPC,
    errno.EIO,
    errno.EFBIG,
    errno.EDQUOT,
    errno.EBADF,
    errno.ECONNRESET,
    errno.ENXIO,
}


class OutputFailed(Exception):
    """Standard output could not be written (raised in place of click's own handling of
    EPIPE, which exits 1: the code `validate` gives samples that do not fit)."""

    def __init__(self, error: OSError):
        super().__init__(error.strerror or str(error))
        self.closed = error.errno in (errno.EPIPE, errno.ECONNRESET)


@contextlib.contextmanager
def _output_errors():
    """An `OSError` of writing to standard output, as `OutputFailed`. Every file the user
    names is written by `exactdice.output_files`, which turns its errors into `InputError`,
    so an errno of writing with no file name that reaches here is standard output's."""
    try:
        yield
    except OSError as error:
        if error.errno in _OUTPUT_ERRNOS and getattr(error, "filename", None) is None:
            raise OutputFailed(error) from None
        raise


class _ClosedStdout(io.TextIOBase):
    """Standard output when the process started with it closed (`exactdice ... >&-`):
    Python leaves ``sys.stdout`` None; writing is an error like any other of the output."""

    def writable(self):
        return True

    def write(self, text):
        raise OSError(errno.EBADF, "standard output is closed")


def _tell(text: str) -> None:
    """One line on stderr, which may be broken too (then nothing is said)."""
    try:
        click.echo(text, err=True)
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's own flush at exit finds
    nothing to complain about (Python's advice for SIGPIPE)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None):
    """Run the CLI; an `InputError` anywhere becomes a one-line message and exit code 2 (as
    does memory the system refuses: `exactdice.limits.out_of_memory_error`), a standard
    output that cannot be written one line and `EXIT_OUTPUT_FAILED` (a closed pipe: no
    message and `EXIT_OUTPUT_CLOSED`)."""
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    watchdog = memory_watchdog()
    try:
        try:
            with watchdog:
                code = cli.main(args=argv, prog_name="exactdice", standalone_mode=False)
            code = code if isinstance(code, int) else 0
        except SystemExit as exit_:  # `validate`'s verdict: the output is flushed first all the same
            code = exit_.code
        with _output_errors():
            sys.stdout.flush()
    except OutputFailed as failed:
        _silence_stdout()
        if failed.closed:
            sys.exit(EXIT_OUTPUT_CLOSED)
        _tell(f"exactdice: error: cannot write the output to standard output: {failed}")
        sys.exit(EXIT_OUTPUT_FAILED)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
    except click.UsageError as error:  # one line, like every other input error
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
        message = " ".join(error.format_message().split())
        _tell(f"exactdice: error: {message}{hint}")
        sys.exit(error.exit_code)
    except click.ClickException as error:
        _tell(f"exactdice: error: {' '.join(error.format_message().split())}")
        sys.exit(error.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        if watchdog.exceeded:  # the memory watchdog's interrupt, arriving late
            _tell(f"exactdice: error: --max-memory: {watchdog.exceeded}")
            sys.exit(2)
        _tell("Aborted.")
        sys.exit(EXIT_INTERRUPTED)
    except InputError as error:  # raised outside a command: the memory watchdog's, say
        _tell(f"exactdice: error: {error_with_flags(error, ROOT_FLAGS)}")
        sys.exit(2)
    except Exception as error:
        if not ran_out_of_memory(error):
            raise
        _tell(f"exactdice: error: {error_with_flags(out_of_memory_error(), ROOT_FLAGS)}")
        sys.exit(2)
    sys.exit(code)


if __name__ == "__main__":
    main()
