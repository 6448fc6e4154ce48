"""Sphinx configuration of the exactdice documentation (MyST Markdown pages, furo theme).

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (the tests run the same
build and every example on the pages: ``pytest tests/docs``).
"""

import exactdice

project = "exactdice"
author = "The exactdice maintainers"
copyright = "2026, The exactdice maintainers"
version = release = exactdice.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_click",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# flags stay flags: no "--" turned into a dash, no curly quotes in commands
smartquotes = False
exclude_patterns = ["_build", "examples", "README.md"]  # README.md: included by contributing.md

# MyST: ``{doc}`` and ``[text](page.md)`` links are checked; headings get anchors for ``page.md#anchor``
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# API reference: numpydoc-style sections (Parameters, Returns, Raises), read by napoleon
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True}
# docstrings name code in `single backquotes`: a link where Sphinx knows the name
default_role = "py:obj"


def _load_every_command():
    """Load the command line's lazily imported commands into their groups, so sphinx-click
    (which lists a group's loaded ``commands`` once it has any) documents every command."""
    import click

    from exactdice.cli.main import cli

    def load(group, context):
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            if name not in group.commands:
                group.add_command(command, name)
            if isinstance(command, click.Group):
                load(command, click.Context(command, parent=context, info_name=name))

    load(cli, click.Context(cli, info_name="exactdice"))


_load_every_command()

html_theme = "furo"
html_title = f"exactdice {release}"
html_static_path = []
# no network in the build: nothing is fetched (no intersphinx, no remote images)
