"""``exactdice <system> rules``: the reading of a system's rules and every knob, in words.

>>> from click.testing import CliRunner
>>> "sudden_death" in CliRunner().invoke(rules_command("karbon"), []).output
True
"""

from __future__ import annotations

import importlib
import textwrap

import click

__all__ = ["rules_command", "rules_text"]


def rules_text(system: str) -> str:
    """The reading of ``system`` (``exactdice/<system>/reading.py``) with its knobs, the
    parameters it names shown as the command line's flags."""
    from exactdice.cli.common import with_flags
    from exactdice.systems import get_system

    declared = get_system(system)
    parameters = [
        parameter for member in (declared.variants or {"": declared}).values() for parameter in member.parameters
    ]
    flags = {parameter.name: parameter.flag for parameter in parameters}
    reading = importlib.import_module(f"exactdice.{system}.reading")
    lines = [
        with_flags(reading.READING.rstrip(), flags),
        "",
        textwrap.fill(f"Knobs, the default first ({with_flags(reading.SETUP, flags)}):", 92, subsequent_indent="  "),
    ]
    for name, (decides, values) in reading.KNOBS.items():
        lines.append(textwrap.fill(f"{name}: {decides}", 92, initial_indent="  ", subsequent_indent="    "))
        for value, meaning in values.items():
            lines.append(
                textwrap.fill(f"{value}: {meaning}", 92, initial_indent="      ", subsequent_indent="        ")
            )
    return "\n".join(lines)


def rules_command(system: str) -> click.Command:
    """The ``rules`` subcommand of one system."""

    @click.command("rules", help=f"Print how exactdice reads the {system} rules, and every knob.")
    def rules():
        click.echo(rules_text(system))

    return rules


karbon_rules = rules_command("karbon")


def attach_shared_commands(group: click.Group, system: str, table: click.Command, design: click.Command) -> None:
    """Give a system's group the commands every system has: ``table``, ``rules`` and ``design``
    (each defined with the other systems' ones, so they read alike)."""
    group.add_command(table, "table")
    group.add_command(rules_command(system))
    group.add_command(design, "design")
