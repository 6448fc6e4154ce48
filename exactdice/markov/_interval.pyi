"""Type stubs of the compiled certified-bounds core (`_interval.pyx`)."""

from collections.abc import Callable

import numpy

def chain_bounds(kind: numpy.ndarray, data: numpy.ndarray, offsets: numpy.ndarray, targets: numpy.ndarray,
                 weights: numpy.ndarray, outcomes: int, initial: int, tolerance: float, most_sweeps: int,
                 overrides: dict | None = ..., check: Callable[[], None] | None = ...
                 ) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, int, float]: ...
def chain_expectations(kind: numpy.ndarray, data: numpy.ndarray, offsets: numpy.ndarray, targets: numpy.ndarray,
                       weights: numpy.ndarray, mass: numpy.ndarray, initial: int, tolerance: float,
                       most_sweeps: int, overrides: dict | None = ..., check: Callable[[], None] | None = ...
                       ) -> tuple[numpy.ndarray, numpy.ndarray, float, int]: ...
