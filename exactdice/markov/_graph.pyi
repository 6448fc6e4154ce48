"""Type stubs of the compiled growing graph (`_graph.pyx`)."""

import numpy

KINDS: dict[str, int]

class GrowingGraph:
    nodes: int
    expanded: int
    edges: int
    def expand_node(self, node: int) -> None: ...

class CsrGraph(GrowingGraph):
    def __init__(
        self,
        kind: numpy.ndarray,
        data: numpy.ndarray,
        offsets: numpy.ndarray,
        targets: numpy.ndarray,
        weights: numpy.ndarray,
        big: dict | None = ...,
    ) -> None: ...
