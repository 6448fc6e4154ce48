# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""`GrowingGraph`: a graph in flat arrays whose nodes are found and expanded one at a time,
the base of compiled explorers (`exactdice.karbon._walk.CompiledWalk`) and what the
compiled solvers (`exactdice.markov._interval`) read and grow.

A node is found as a frontier node (kind `FRONTIER`) and expanded later, in any order,
by the explorer's `expand`; its edges are appended to the edge arrays then, so a node's
edges are contiguous (``first_edge``, ``edge_count``) though nodes need not be expanded
in id order. Explored breadth first, the first edges are the CSR offsets.
"""

#: node kinds, for Python callers
KINDS = {"terminal": TERMINAL, "chance": CHANCE, "decision": DECISION, "frontier": FRONTIER}


cdef class GrowingGraph:
    """Flat arrays of a graph that grows; see the module's docstring."""

    def __cinit__(self):
        self.big = {}
        self.expanded_count = 0

    cdef int64_t node_count(self) noexcept:
        return self.kind.size()

    cdef int add_node(self) except -1:
        """A new frontier node (its id: the count before)."""
        self.kind.push_back(FRONTIER)
        self.data.push_back(0)
        self.first_edge.push_back(-1)
        self.edge_count.push_back(0)
        return 0

    cdef int expand(self, int64_t node) except -1:
        """Give the node its kind, data and edges (the explorer's part)."""
        raise NotImplementedError("a GrowingGraph's explorer expands its nodes")

    cdef int begin_edges(self, int64_t node, uint8_t kind, int64_t data) noexcept nogil:
        """Start recording the node's expansion: its edges are the ones appended until
        `end_edges`."""
        self.kind[node] = kind
        self.data[node] = data
        self.first_edge[node] = self.targets.size()
        return 0

    cdef int end_edges(self, int64_t node) noexcept nogil:
        self.edge_count[node] = <int32_t>(self.targets.size() - self.first_edge[node])
        self.expanded_count += 1
        return 0

    @property
    def nodes(self):
        """Nodes found (expanded or not)."""
        return self.kind.size()

    @property
    def expanded(self):
        """Nodes expanded."""
        return self.expanded_count

    @property
    def edges(self):
        return self.targets.size()

    def expand_node(self, int64_t node):
        """Expand a frontier node (from Python: tests and callers that drive the search)."""
        if not 0 <= node < <int64_t>self.kind.size():
            raise IndexError(node)
        if self.kind[node] == FRONTIER:
            self.expand(node)


cdef class CsrGraph(GrowingGraph):
    """A whole graph from CSR arrays (`exactdice.markov.arrays.Csr`): every node expanded,
    for the compiled solvers to read. ``big`` as `GrowingGraph.big`."""

    def __init__(self, kind, data, offsets, targets, weights, big=None):
        cdef int64_t n = len(kind), node, edge
        cdef const uint8_t[:] kinds = kind
        cdef const int64_t[:] datas = data
        cdef const int64_t[:] firsts = offsets
        cdef const int32_t[:] successors = targets
        cdef const int64_t[:] masses = weights
        for node in range(n):
            self.kind.push_back(kinds[node])
            self.data.push_back(datas[node])
            self.first_edge.push_back(firsts[node])
            self.edge_count.push_back(<int32_t>(firsts[node + 1] - firsts[node]))
        for edge in range(successors.shape[0]):
            self.targets.push_back(successors[edge])
            self.weights.push_back(masses[edge])
        self.expanded_count = n
        self.big = dict(big or {})

    cdef int expand(self, int64_t node) except -1:
        return 0
