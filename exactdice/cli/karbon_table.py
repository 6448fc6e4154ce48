"""``exactdice karbon table``: a printable grid of Karbon contests over two setup
parameters (a thin layer over `exactdice.answers.karbon_table`)."""

from __future__ import annotations

import click

from exactdice.cli.common import given_values, parameter_options
from exactdice.cli.table_commands import produce_tables, table_output_options
from exactdice.errors import InputError
from exactdice.integer_lists import parse_integer_list
from exactdice.karbon.system import NOT_SWEPT_PARAMETERS, PARAMETERS

__all__ = ["karbon_table"]


_AXES = ("ability", "challenge", "consequence", "peril", "fortune", "fallout")


@click.command("table")
@parameter_options(
    PARAMETERS,
    skip=NOT_SWEPT_PARAMETERS,
    roles=("setup", "rules"),
    lists={"ability": "1-5", "challenge": "1-5", "consequence": "2", "peril": "0", "fortune": "0", "fallout": "0"},
)
@table_output_options
def karbon_table(output_options, **values):
    """A printable grid of P(win) (with P(tie), P(loss) and expected rounds in the same
    file) over two setup parameters: the two given as ranges or lists are the axes.

    \b
    Examples:
      exactdice karbon table --ability 1-5 --challenge 1-5 --consequence 2 --peril 0 -o win.html
      exactdice karbon table -a 3 -c 3 --consequence 1-3 --peril 0-2 --format csv
    """
    from exactdice.answers.tables import karbon_table as table

    listed = {name: parse_integer_list(values.pop(name), name) for name in _AXES}
    axes = {name: numbers for name, numbers in listed.items() if len(numbers) > 1}
    if len(axes) != 2:
        raise InputError(
            "--ability",
            f"give exactly two parameters as ranges or lists (the table's axes); "
            f"got {len(axes)}: {', '.join(axes) or 'none'}",
        )
    values = given_values(values)
    values.update({name: numbers[0] for name, numbers in listed.items() if name not in axes})
    produce_tables(lambda **where: [table(values, axes, **where)], **output_options)
