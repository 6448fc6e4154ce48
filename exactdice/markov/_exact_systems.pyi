"""Type stubs of the compiled small exact linear systems (`_exact_systems.pyx`)."""

from typing import Any

MAX_ROWS: int

def eliminate(rows: list[dict[int, int]], right_sides: list[list[Any]]) -> tuple[list[Any], list[list[Any]]] | None: ...
def solve_values(rows: list[dict[int, int]], right_sides: list[tuple[Any, Any]]) -> list[Any] | None: ...
def solve_vectors(
    rows: list[dict[int, int]], right_sides: list[tuple[Any, Any]]
) -> list[tuple[tuple[Any, ...], Any]] | None: ...
