"""The README's "From Python" examples run as written (a copied example that fails is the
first thing a library user meets)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## From Python", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```python\n(.*?)```", SECTION, re.S)


def test_the_section_has_its_examples():
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_example_runs_as_written(block, capsys):
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert printed


def test_the_printed_values_are_the_ones_the_comments_say(capsys):
    from fractions import Fraction

    exec(compile(BLOCKS[0], "README.md", "exec"), {})
    assert capsys.readouterr().out.startswith("5/54 0.0925")
    exec(compile(BLOCKS[1], "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines()[-1] == "53.0 %  (exact: 575-digit fraction)"
    exec(compile(BLOCKS[2], "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines()[-1] == "3/4"
    exec(compile(BLOCKS[3], "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == str({"hit": Fraction(3, 5), "miss": Fraction(2, 5)})
