"""Printable tables: a grid of exact values over two setup axes, and its exporters."""

from exactdice.tables.grid import TableGrid

__all__ = ["TableGrid"]
