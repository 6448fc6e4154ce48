# A graph found and expanded one node at a time, in compiled code (see _graph.pyx).
from libc.stdint cimport int64_t, int32_t, uint8_t
from libcpp.vector cimport vector


cdef extern from "_mapped.h" nogil:
    cdef cppclass MappedArray[T]:
        void push_back(const T&) except +
        T* extend(size_t) except +
        T& operator[](size_t)
        T& back()
        T* data()
        size_t size()
        size_t capacity()
        void clear()
        void shrink_to_fit() except +
        void release()

    # a std::vector allocator asking for 2 MiB pages (tables read at random; see _mapped.h)
    cdef cppclass HugePages[T]:
        pass

    # a vector of copies of a value, filled on the other core ahead of its use (_mapped.h)
    cdef cppclass FilledAhead[T]:
        bint start(size_t count, const T& value)
        bint take(vector[T, HugePages[T]]& into, size_t count)
        void release()
        size_t bytes()


# node kinds (as exactdice.markov.graph's, and FRONTIER: found, not expanded yet)
cdef enum:
    TERMINAL = 0
    CHANCE = 1
    DECISION = 2
    FRONTIER = 3


cdef class GrowingGraph:
    # per node (grown as nodes are found): kind (TERMINAL, CHANCE, DECISION or FRONTIER),
    # data (outcome index, total weight, or +1/-1 for the deciding side), its edges
    # targets[first_edge:first_edge + edge_count] (first_edge -1 while a frontier node)
    cdef vector[uint8_t] kind
    cdef vector[int64_t] data
    cdef vector[int64_t] first_edge
    cdef vector[int32_t] edge_count
    # per edge: successor and integer weight (1 on a decision edge), in growable mappings
    cdef MappedArray[int32_t] targets
    cdef MappedArray[int64_t] weights
    cdef int64_t expanded_count
    # nodes whose total or weights pass 64 bits (data or weights hold -1): node -> (total, [weights])
    cdef dict big

    cdef int64_t node_count(self) noexcept
    cdef int add_node(self) except -1
    cdef int expand(self, int64_t node) except -1
    cdef int begin_edges(self, int64_t node, uint8_t kind, int64_t data) noexcept nogil
    cdef int end_edges(self, int64_t node) noexcept nogil
