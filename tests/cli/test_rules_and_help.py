"""`exactdice <system> rules` says each reading and every knob; no help points outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from exactdice.cli.main import cli

SYSTEMS = {
    "karbon": lambda: __import__("exactdice.karbon.ruleset", fromlist=["RULE_CHOICES"]).RULE_CHOICES,
    "chronica": lambda: __import__("exactdice.chronica.ruleset", fromlist=["x"]).Rules().to_dict(),
    "contingency": lambda: __import__("exactdice.contingency.ruleset", fromlist=["x"]).Rules().to_dict(),
    "karst": lambda: __import__("exactdice.karst.ruleset", fromlist=["x"]).Rules().to_dict(),
}


def output(args, capsys):
    cli.main(args=args, prog_name="exactdice", standalone_mode=False)
    return capsys.readouterr().out


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_rules_names_every_knob_and_its_values(system, capsys):
    text = output([system, "rules"], capsys)
    assert len(text.splitlines()) > 20
    assert max(len(line) for line in text.splitlines()) < 100
    for knob in SYSTEMS[system]():
        assert re.search(rf"^  {re.escape(knob)}: ", text, re.MULTILINE), knob
    if system == "karbon":
        from exactdice.karbon.ruleset import RULE_CHOICES

        for knob, values in RULE_CHOICES.items():
            for value in values:
                assert re.search(rf"^      {re.escape(value)}: ", text, re.MULTILINE), (knob, value)


def every_help():
    texts = {}

    def walk(command, path, parent=None):
        context = click.Context(command, info_name=path[-1] if path else "exactdice", parent=parent)
        texts[" ".join(path)] = command.get_help(context)
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    walk(sub, path + [name], context)

    walk(cli, [])
    return texts


def test_no_help_and_no_readme_line_points_outside_the_repository():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    texts = {**every_help(), "README.md": readme}
    for name, text in texts.items():
        assert "../" not in text and "shared/spec" not in text and "seeds/" not in text, name


def test_serve_help_names_every_page_the_server_has():
    from click.testing import CliRunner

    from exactdice.web.app import PAGES

    text = " ".join(CliRunner().invoke(cli, ["serve", "--help"]).output.split())
    for _, title in PAGES.values():
        assert title in text


def test_help_examples_keep_their_line_continuations():
    # a lone backslash at a docstring's line end joins the lines (the example then runs on)
    from click.testing import CliRunner

    text = CliRunner().invoke(cli, ["karbon", "simulate", "--help"]).output
    assert "-w 1 -p 1 \\\n        --player-policy optimal --strategy s.json" in text
