"""Type stubs of the compiled certified-bounds core (`_interval.pyx`)."""

from collections.abc import Callable

import numpy

MOST_OUTCOMES: int
REACHED: int

def strongly_connected(offsets: numpy.ndarray, targets: numpy.ndarray) -> list[list[int]]: ...
def reachable_components(offsets: numpy.ndarray, targets: numpy.ndarray, initial: int) -> object: ...
def outcome_reach(
    kind: numpy.ndarray, data: numpy.ndarray, offsets: numpy.ndarray, targets: numpy.ndarray, parts: object
) -> numpy.ndarray: ...
def chain_bounds(
    kind: numpy.ndarray,
    data: numpy.ndarray,
    offsets: numpy.ndarray,
    targets: numpy.ndarray,
    weights: numpy.ndarray,
    outcomes: int,
    reach: numpy.ndarray,
    tolerance: float,
    most_sweeps: int,
    parts: object,
    overrides: dict | None = ...,
    check: Callable[[], None] | None = ...,
) -> tuple[numpy.ndarray, numpy.ndarray, int, float]: ...
def chain_expectations(
    kind: numpy.ndarray,
    data: numpy.ndarray,
    offsets: numpy.ndarray,
    targets: numpy.ndarray,
    weights: numpy.ndarray,
    mass: numpy.ndarray,
    tolerance: float,
    most_sweeps: int,
    parts: object,
    overrides: dict | None = ...,
    check: Callable[[], None] | None = ...,
) -> tuple[numpy.ndarray, numpy.ndarray, float, int]: ...

class GameSearch:
    trajectories: int
    sweeps: int
    end_component_passes: int
    end_components: int
    lower: float
    upper: float
    def __init__(
        self, graph: object, payoffs: list[float], endless: float, initial: int = ..., seed: int = ...
    ) -> None: ...
    def run(
        self,
        precision: float,
        max_seconds: float | None = ...,
        max_nodes: int | None = ...,
        progress: Callable[..., None] | None = ...,
        progress_every: float = ...,
        stop_check: Callable[[float, float], str | None] | None = ...,
        check: Callable[[], None] | None = ...,
        sweep_growth: float = ...,
    ) -> tuple[str, list]: ...
    def solve_all(
        self, tolerance: float, most_sweeps: int = ..., check: Callable[[], None] | None = ...
    ) -> tuple[int, float]: ...
    def sweep(self, passes: int = ...) -> int: ...
    def settle_end_components(self) -> int: ...
    def bounds(self, node: int) -> tuple[float, float]: ...
    def raise_lower(self, node: int, value: float) -> None: ...
    def best_actions(self, tie: float = ...) -> dict[int, int]: ...
    def strategy_edges(self, tie: float = ...) -> dict[int, int]: ...
    def memory_bytes(self) -> int: ...
