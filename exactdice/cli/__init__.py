"""The ``exactdice`` command line: a thin layer over the Python API."""
