# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Karbon's rules walk, compiled: the same transitions as `exactdice.karbon.model`, over
situations packed into a few 64-bit words and interned in a flat hash table.

`CompiledWalk.explore` visits every situation reachable from the start, breadth first,
and records the graph as flat arrays (CSR): per node its kind, its total weight (chance),
its outcome (terminal) or side (decision), its reward mass; per edge the successor and
the integer weight; per decision edge the option's label and rewards. The Python walk
(`KarbonModel`) stays the reference: the property tests compare the two graphs state
for state and edge for edge.

A large walk can use two threads: the expanding one finds each node's roll outcomes and
their rests of rounds and writes them to a ring of work items (the spool); a second thread,
which holds no GIL, sums them into the node's edges and records them, node by node in the
order they were found, so the graph is the same as in one thread. The expanding side waits
for the summing side to catch up before it moves an array the summing side reads or writes.

Every weight is exact: a path's probability is an integer over ``roll denominator *
2**e`` (the risk and peril dice are d8 and a random narrator flips fair coins, so every
factor past the roll is a power of two), summed in unsigned 128-bit integers with every
multiplication and addition checked. A setup whose numbers would not fit (very large
hands, dozens of peril dice) raises `WalkOverflow`, and the caller walks it in Python.
"""

cimport cython
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint8_t, int16_t
from libc.string cimport memset, memcpy
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from cython.operator cimport dereference as deref
from cpython.exc cimport PyErr_CheckSignals

from exactdice.errors import InternalError
from exactdice.markov._graph cimport (
    CHANCE, DECISION, FRONTIER, TERMINAL, FilledAhead, GrowingGraph, HugePages, MappedArray,
)

cdef extern from *:
    """
    typedef unsigned __int128 exd_u128;
    static inline int exd_mul(exd_u128 a, exd_u128 b, exd_u128 *r) { return __builtin_mul_overflow(a, b, r); }
    static inline int exd_add(exd_u128 a, exd_u128 b, exd_u128 *r) { return __builtin_add_overflow(a, b, r); }
    static inline int exd_bits(exd_u128 x) {
        unsigned long long hi = (unsigned long long)(x >> 64), lo = (unsigned long long)x;
        return hi ? 128 - __builtin_clzll(hi) : (lo ? 64 - __builtin_clzll(lo) : 0);
    }
    static inline exd_u128 exd_gcd(exd_u128 a, exd_u128 b) {
        while (b) {
            if (!((a | b) >> 64)) {  /* 64-bit remainders from here on */
                unsigned long long x = (unsigned long long)a, y = (unsigned long long)b;
                while (y) { unsigned long long t = x % y; x = y; y = t; }
                return x;
            }
            exd_u128 t = a % b; a = b; b = t;
        }
        return a;
    }
    static inline unsigned long long exd_hi(exd_u128 x) { return (unsigned long long)(x >> 64); }
    static inline unsigned long long exd_lo(exd_u128 x) { return (unsigned long long)x; }
    static inline exd_u128 exd_make(unsigned long long hi, unsigned long long lo) {
        return ((exd_u128)hi << 64) | lo;
    }
    static inline exd_u128 exd_shl(exd_u128 x, int s) { return s >= 128 ? 0 : x << s; }
    static inline void exd_prefetch(const void* p) { __builtin_prefetch(p, 0, 3); }
    static inline void exd_prefetch_write(void* p) { __builtin_prefetch(p, 1, 3); }
    /* a new last item, value-initialised in place (resize's slow path is out of line) */
    template <class V> static inline typename V::value_type* exd_append(V& v) {
        v.emplace_back();
        return &v.back();
    }
    static inline unsigned long long exd_mix(unsigned long long x) {
        x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 27; x *= 0x94d049bb133111ebULL; x ^= x >> 31;
        return x;
    }
    #include <sched.h>
    #include <stdint.h>
    #include <time.h>
    static inline int64_t exd_load(const int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void exd_store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    /* one more round of a wait: spin a little, then give the core away, then sleep */
    static inline int exd_idle(int rounds) {
        if (rounds < 64) {
    #if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
    #endif
        } else if (rounds < 4096) {
            sched_yield();
        } else {
            struct timespec pause = {0, 20000};
            nanosleep(&pause, NULL);
            return rounds;
        }
        return rounds + 1;
    }
    """
    ctypedef unsigned long long u128 "exd_u128"
    bint exd_mul(u128 a, u128 b, u128 *r) nogil
    bint exd_add(u128 a, u128 b, u128 *r) nogil
    int exd_bits(u128 x) nogil
    u128 exd_gcd(u128 a, u128 b) nogil
    uint64_t exd_hi(u128 x) nogil
    uint64_t exd_lo(u128 x) nogil
    u128 exd_make(uint64_t hi, uint64_t lo) nogil
    u128 exd_shl(u128 x, int s) nogil
    uint64_t exd_mix(uint64_t x) nogil
    void exd_prefetch(const void* p) nogil
    void exd_prefetch_write(void* p) nogil
    Branch* exd_append(vector[Branch]& v) nogil
    int64_t exd_load(const int64_t* p) nogil
    void exd_store(int64_t* p, int64_t v) nogil
    int exd_idle(int rounds) nogil


class WalkOverflow(ArithmeticError):
    """A number of the walk (a weight, a packed field) does not fit its compiled width."""


# ----- situations -------------------------------------------------------------------------

DEF MAXK = 7            # die types a compiled walk takes
DEF MAXW = 4            # 64-bit words a packed situation takes at most
DEF STACK = 5           # chips that make a completion
DEF RISK_DICE = 3
DEF MAX_OPTIONS = 512
DEF ROLL_AHEAD = 16     # roll outcomes a rest's slot is fetched ahead of its use
DEF FIND_AHEAD = 4      # ... and looked up ahead of its use (its branches fetched)
DEF MAX_WALK_DEPTH = 4096  # nested calls of `_walk` in one expansion (coin flips, rolls, peril)
DEF OPTIONS_KEPT = 16   # room for a decision's options, made once a walk
DEF ACC_SLOTS = 1024    # a node's branches: the slots its table starts with (`_Acc`)
DEF RESTS_MADE_AHEAD = 1048576  # a rests' table of this many slots (32 MiB) or more gets
                                # its next slots made on the other core (`FilledAhead`)
DEF ONE_EDGE = -1       # a rest of round that is one edge of weight 1 (`RestSlot`)

# the spool (`Work`): what a node's expansion hands to the summing side
DEF SPOOL_SIZE = 16384  # work items in the ring (a power of two)
DEF WRITE_AHEAD = 64     # items whose ring line the expanding side takes ahead of writing
DEF SUM_AHEAD = 12      # items whose rest's branches the summing side fetches ahead
DEF W_ITEM = -2         # a branch: successor, reward code, weight over the node's 2**exponent
DEF W_OPTION = -3       # a decision's option: successor, reward code, label
DEF W_CHANCE = -10      # a node's head: its id, what follows, how many items
DEF W_DECISION = -11
DEF W_TERMINAL = -12

# phases, in the order of `_PHASE_NAMES`
DEF PH_POS = 0
DEF PH_END = 1
DEF PH_RISK = 2
DEF PH_TAKE = 3
DEF PH_BREAK = 4
DEF PH_SWAP = 5
DEF PH_GIVE = 6
DEF PH_GLITCH = 7
DEF PH_HURT = 8
DEF PH_PLANS = 9
DEF PH_PLANSTAKE = 10
DEF PH_SIDESWIPE = 11
DEF PH_SWIPEDICE = 12
DEF PH_PERIL = 13
DEF PH_RISKROLL = 14
DEF PH_TEST = 15
DEF PH_EXTERNAL = 16

_PHASE_NAMES = (None, "end", "risk", "take", "break", "swap", "give", "glitch", "hurt", "plans",
                "planstake", "sideswipe", "swipedice", "peril", "riskroll", "test")
_PHASES = {name: index for index, name in enumerate(_PHASE_NAMES) if name}

DEF WIN_P = 0
DEF WIN_N = 1
DEF WIN_T = 2
_WINNERS = ("p", "n", "t")

# who decides / how a node is kept
DEF SIDE_NONE = 0
DEF SIDE_MAX = 1
DEF SIDE_MIN = -1


# option labels: small numbers for words, tagged numbers for dice and swaps
DEF L_NO = 1
DEF L_YES = 2
DEF L_SECURITY = 3
DEF L_DISCARD = 4
DEF L_FOOTDICE = 5
DEF L_ADVANTAGE = 6
DEF L_NONE = 7
DEF L_HURT = 8
DEF L_PLANS = 9
DEF L_SIDESWIPE = 10
DEF L_INJURY = 11
DEF L_CONDITION = 12
DEF L_DICE = 13
DEF L_PERIL = 14
DEF L_CHIPS = 15
_WORDS = {1: "no", 2: "yes", 3: "security", 4: "footing-discard", 5: "footing-dice", 6: "advantage",
          7: "none", 8: "hurt", 9: "plans", 10: "sideswipe", 11: "injury", 12: "condition", 13: "dice",
          14: "peril", 15: "chips"}
_WORD_LABELS = {word: label for label, word in _WORDS.items()}
cdef uint64_t TAG_DICE = (<uint64_t>1) << 62
cdef uint64_t TAG_SWAP = (<uint64_t>2) << 62
cdef uint64_t TAG_EXTERNAL = (<uint64_t>3) << 62
cdef uint64_t TAG_MASK = (<uint64_t>3) << 62

# rewards along a path, packed 8 bits a counter: rounds, breaks, glitches, injuries, conditions
DEF R_ROUND = 1
DEF R_BREAK = 0x100
DEF R_GLITCH = 0x10000
DEF R_INJURY = 0x1000000
DEF R_CONDITION = 0x100000000
DEF REWARD_COUNTERS = 5


cdef struct Pos:
    int16_t ph[MAXK]
    int16_t nh[MAXK]
    int16_t pool[MAXK]
    int16_t res[MAXK]
    int64_t pchips
    int64_t nchips
    int32_t pstack
    int32_t nstack
    int32_t wins
    int32_t losses
    int32_t peril
    int32_t track


cdef struct Sit:
    Pos pos
    int32_t phase
    int32_t winner    # risk, take, peril, riskroll
    int32_t count     # take: dice to take; end: outcome index; external: its number
    int32_t qpre      # the Test's queue: 1 = G^qa then the placement of qwin; 0 = the rewards
    int32_t qwin      #   after placement, qa Breaks and qb Glitches in the ruleset's order
    int32_t qa
    int32_t qb


cdef struct Option:
    Sit nxt
    uint64_t reward
    uint64_t label


cdef struct Branch:
    # one (successor, reward) of a node being expanded: weight over 2**(node's exponent)
    int64_t target
    int32_t reward_code
    u128 weight


cdef struct Work:
    # one item of the spool. A node's head: start = node, count = W_CHANCE, W_DECISION or
    # W_TERMINAL, extra = its exponent (W_ITEM's), side or outcome, weight = the items that
    # follow. Then per item: a roll outcome's rest (count >= 0: the rest's branches
    # rest_branches[start:start + count] over 2**extra, times weight; ONE_EDGE: one edge to
    # start, reward code extra, weight over 1), a branch (W_ITEM) or an option (W_OPTION:
    # weight = its label).
    u128 weight
    int64_t start
    int32_t count
    int32_t extra


cdef struct RollEntry:
    u128 weight
    int32_t winner
    int32_t gain_p
    int32_t gain_n
    int32_t hands_token   # the hands after the roll, as a number (`hand_ids`)
    int32_t hands_empty   # both hands empty after the roll
    int16_t ph[MAXK]
    int16_t nh[MAXK]


cdef inline int _sum(const int16_t* counts, int k) noexcept nogil:
    cdef int i, total = 0
    for i in range(k):
        total += counts[i]
    return total


cdef inline bint _any(const int16_t* counts, int k) noexcept nogil:
    cdef int i
    for i in range(k):
        if counts[i]:
            return True
    return False


cdef inline int64_t _min64(int64_t a, int64_t b) noexcept nogil:
    return a if a < b else b


cdef inline int64_t _max64(int64_t a, int64_t b) noexcept nogil:
    return a if a > b else b


cdef u128 _comb(int n, int k) noexcept nogil:
    cdef u128 result = 1
    cdef int i
    if k < 0 or k > n:
        return 0
    for i in range(1, k + 1):
        result = result * <u128>(n - k + i) // <u128>i
    return result


cdef inline uint64_t _dice_label(const int16_t* counts, int k) noexcept nogil:
    cdef uint64_t label = TAG_DICE
    cdef int i
    for i in range(k):
        label |= (<uint64_t>counts[i] & 0xFF) << (8 * i)
    return label


cdef inline uint64_t _swap_label(const int16_t* out, const int16_t* into, int k) noexcept nogil:
    cdef uint64_t label = TAG_SWAP
    cdef int i
    for i in range(k):
        label |= (<uint64_t>out[i] & 0xF) << (4 * i + 32)
        label |= (<uint64_t>into[i] & 0xF) << (4 * i)
    return label


# ----- the hash table of packed situations -------------------------------------------------

@cython.final
cdef class _KeyTable:
    """Packed keys (``width`` words each) -> ids 0..n-1 in order of first sight."""

    cdef int width
    cdef vector[uint64_t, HugePages[uint64_t]] keys
    cdef vector[int32_t, HugePages[int32_t]] slots     # ids (a walk refuses more than 2**31 states)
    cdef uint64_t mask
    cdef int64_t count

    def __cinit__(self, int width, int64_t capacity=1024):
        self.width = width
        cdef int64_t size = 1024
        while size < 2 * capacity:
            size *= 2
        self.slots.assign(size, -1)
        self.mask = size - 1
        self.count = 0

    cdef inline uint64_t _hash(self, const uint64_t* key) noexcept nogil:
        cdef uint64_t h = 0x9E3779B97F4A7C15ULL
        cdef int i
        for i in range(self.width):
            h = exd_mix(h ^ key[i])
        return h

    cdef inline bint _equal(self, int64_t id, const uint64_t* key) noexcept nogil:
        cdef const uint64_t* stored = &self.keys[id * self.width]
        cdef int i
        for i in range(self.width):
            if stored[i] != key[i]:
                return False
        return True

    cdef int64_t find(self, const uint64_t* key) noexcept nogil:
        cdef uint64_t slot = self._hash(key) & self.mask
        cdef int64_t id
        while True:
            id = self.slots[slot]
            if id < 0:
                return -1
            if self._equal(id, key):
                return id
            slot = (slot + 1) & self.mask

    cdef int64_t add(self, const uint64_t* key, bint* added) noexcept nogil:
        """The id of ``key``, a new one if it was not there (``added`` says which)."""
        cdef uint64_t slot = self._hash(key) & self.mask
        cdef int64_t id
        cdef int i
        while True:
            id = self.slots[slot]
            if id < 0:
                break
            if self._equal(id, key):
                added[0] = False
                return id
            slot = (slot + 1) & self.mask
        id = self.count
        self.count += 1
        for i in range(self.width):
            self.keys.push_back(key[i])
        self.slots[slot] = <int32_t>id
        added[0] = True
        if 2 * self.count > <int64_t>self.slots.size():
            self._grow()
        return id

    cdef void _grow(self) noexcept nogil:
        self._place_all(2 * self.slots.size())

    cdef void _place_all(self, int64_t size) noexcept nogil:
        """Every id in ``size`` fresh slots."""
        cdef int64_t id
        cdef uint64_t slot
        self.slots.assign(size, -1)
        self.mask = size - 1
        for id in range(self.count):
            slot = self._hash(&self.keys[id * self.width]) & self.mask
            while self.slots[slot] >= 0:
                slot = (slot + 1) & self.mask
            self.slots[slot] = <int32_t>id

    cdef void drop_slots(self) noexcept nogil:
        """Free the slots and the keys' spare room: the keys still name the ids, and
        `find` and `add` need `restore_slots` first."""
        self.slots.clear()
        self.slots.shrink_to_fit()
        self.keys.shrink_to_fit()

    cdef void restore_slots(self) noexcept nogil:
        """The slots again, after `drop_slots` (nothing otherwise)."""
        cdef int64_t size = 1024
        if self.slots.empty():
            while 2 * self.count > size:
                size *= 2
            self._place_all(size)

    cdef void clear(self) noexcept nogil:
        self.keys.clear()
        self.keys.shrink_to_fit()
        self.slots.assign(1024, -1)
        self.slots.shrink_to_fit()
        self.mask = 1023
        self.count = 0


cdef struct PairSlot:
    uint64_t first
    uint64_t second
    int64_t id


@cython.final
cdef class _PairTable:
    """Two-word keys -> ids 0..n-1 in order of first sight, the keys kept in the slots
    (one memory access a look-up: these tables are hit for every roll outcome)."""

    cdef vector[PairSlot, HugePages[PairSlot]] slots
    cdef uint64_t mask
    cdef int64_t count

    def __cinit__(self):
        self.clear()

    cdef inline uint64_t _hash(self, uint64_t first, uint64_t second) noexcept nogil:
        return exd_mix(exd_mix(first ^ 0x9E3779B97F4A7C15ULL) ^ second)

    cdef int64_t find(self, const uint64_t* key) noexcept nogil:
        cdef uint64_t slot = self._hash(key[0], key[1]) & self.mask
        cdef PairSlot* at
        while True:
            at = &self.slots[slot]
            if at.id < 0:
                return -1
            if at.first == key[0] and at.second == key[1]:
                return at.id
            slot = (slot + 1) & self.mask

    cdef int64_t add(self, const uint64_t* key, bint* added) noexcept nogil:
        cdef uint64_t slot = self._hash(key[0], key[1]) & self.mask
        cdef PairSlot* at
        while True:
            at = &self.slots[slot]
            if at.id < 0:
                break
            if at.first == key[0] and at.second == key[1]:
                added[0] = False
                return at.id
            slot = (slot + 1) & self.mask
        at.first = key[0]
        at.second = key[1]
        at.id = self.count
        self.count += 1
        added[0] = True
        if 2 * self.count > <int64_t>self.slots.size():
            self._grow()
        return self.count - 1

    cdef void _grow(self) noexcept nogil:
        cdef vector[PairSlot, HugePages[PairSlot]] old
        old.swap(self.slots)
        cdef PairSlot empty
        empty.first = empty.second = 0
        empty.id = -1
        self.slots.assign(2 * old.size(), empty)
        self.mask = self.slots.size() - 1
        cdef size_t i
        cdef uint64_t slot
        for i in range(old.size()):
            if old[i].id >= 0:
                slot = self._hash(old[i].first, old[i].second) & self.mask
                while self.slots[slot].id >= 0:
                    slot = (slot + 1) & self.mask
                self.slots[slot] = old[i]

    cdef void clear(self) noexcept nogil:
        cdef PairSlot empty
        empty.first = empty.second = 0
        empty.id = -1
        self.slots.assign(1024, empty)
        self.slots.shrink_to_fit()
        self.mask = 1023
        self.count = 0

    cdef int64_t bytes(self) noexcept nogil:
        return self.slots.capacity() * sizeof(PairSlot)


cdef struct RestSlot:
    uint64_t first
    uint64_t second
    int64_t start       # the rest's first branch in ``rest_branches``; -1: an empty slot
    int32_t length      # ONE_EDGE: the rest is one edge of weight 1, held in the slot:
    int32_t exponent    #   ``start`` its target, ``exponent`` its reward code; else the
                        #   branches' weights are over 2**exponent


@cython.final
cdef class _RestTable:
    """Rests of rounds by their two-word key, each slot holding where the rest's branches
    are: a look-up is one memory access, and `prefetch` starts that access early (a node
    looks up a rest for every roll outcome, in a table too large for the cache)."""

    cdef vector[RestSlot, HugePages[RestSlot]] slots
    cdef FilledAhead[RestSlot] next_slots  # the grown table's empty slots, made ahead
    cdef uint64_t mask
    cdef int64_t count
    cdef int64_t moves     # times the slots moved (grown, cleared): a found slot is stale
    cdef int64_t made_ahead_from  # slots from which the next slots are made ahead
    cdef int64_t kept             # rests and branches the walk keeps (its `rest_kept`)
    cdef int64_t made_ahead       # next slots begun on the other core
    cdef int64_t grown_ahead      # times the table grew into them

    def __cinit__(self, int64_t kept, int64_t made_ahead_from=RESTS_MADE_AHEAD):
        self.kept = kept
        self.made_ahead_from = made_ahead_from
        self.clear()

    cdef inline uint64_t hash(self, const uint64_t* key) noexcept nogil:
        return exd_mix(exd_mix(key[0] ^ 0x9E3779B97F4A7C15ULL) ^ key[1])

    cdef inline void prefetch(self, uint64_t hash) noexcept nogil:
        exd_prefetch(&self.slots[hash & self.mask])

    cdef const RestSlot* find(self, const uint64_t* key, uint64_t hash) noexcept nogil:
        """The slot of ``key`` (``hash``: its `hash`), or NULL."""
        cdef uint64_t slot = hash & self.mask
        cdef RestSlot* at
        while True:
            at = &self.slots[slot]
            if at.start < 0:
                return NULL
            if at.first == key[0] and at.second == key[1]:
                return at
            slot = (slot + 1) & self.mask

    cdef void add(self, const uint64_t* key, int64_t start, int32_t length, int32_t exponent,
                  int64_t branches) noexcept nogil:
        """Remember a rest not in the table (``branches``: the walk's, this rest's too)."""
        cdef uint64_t slot = self.hash(key) & self.mask
        while self.slots[slot].start >= 0:
            slot = (slot + 1) & self.mask
        cdef RestSlot* at = &self.slots[slot]
        at.first, at.second = key[0], key[1]
        at.start, at.length, at.exponent = start, length, exponent
        self.count += 1
        cdef int64_t size = self.slots.size()
        if 2 * self.count > size:
            self._grow()
        elif (16 * self.count == 7 * size  # 7/8 of the way to growing
              and size >= self.made_ahead_from and self._grows_before_forgotten(branches)):
            if self.next_slots.start(2 * size, _empty_rest_slot()):
                self.made_ahead += 1

    cdef inline bint _grows_before_forgotten(self, int64_t branches) noexcept nogil:
        """Whether the table will grow before the walk forgets its rests (past `kept`
        rests and branches), at the branches a rest has had so far."""
        cdef int64_t growth = self.slots.size() // 2 + 1
        return growth + branches + (growth - self.count) * branches // self.count <= self.kept + 1

    cdef void _grow(self) noexcept nogil:
        cdef vector[RestSlot, HugePages[RestSlot]] old
        old.swap(self.slots)
        self.moves += 1
        if self.next_slots.take(self.slots, 2 * old.size()):
            self.grown_ahead += 1
        else:
            self.slots.assign(2 * old.size(), _empty_rest_slot())
        self.mask = self.slots.size() - 1
        cdef size_t i
        cdef uint64_t slot
        for i in range(old.size()):
            if old[i].start >= 0:
                slot = self.hash(&old[i].first) & self.mask
                while self.slots[slot].start >= 0:
                    slot = (slot + 1) & self.mask
                self.slots[slot] = old[i]

    cdef void clear(self) noexcept nogil:
        self.next_slots.release()
        self.slots.assign(1024, _empty_rest_slot())
        self.slots.shrink_to_fit()
        self.mask = 1023
        self.count = 0
        self.moves += 1

    cdef int64_t bytes(self) noexcept nogil:
        return self.slots.capacity() * sizeof(RestSlot) + self.next_slots.bytes()


cdef inline RestSlot _empty_rest_slot() noexcept nogil:
    cdef RestSlot empty
    memset(&empty, 0, sizeof(RestSlot))
    empty.start = -1
    return empty


cdef struct PendingRest:
    # a roll outcome of the node being expanded, looked up a few outcomes ahead
    uint64_t key[2]
    uint64_t hash
    const RestSlot* found    # NULL: not looked up, or not remembered
    int64_t moves            # the table's `moves` when it was looked up


# ----- a node's branches, summed by (successor, reward code) ---------------------------------

cdef void _wait_for(const int64_t* count, int64_t wanted, const int64_t* failed) noexcept nogil:
    """Wait until ``count`` reaches ``wanted`` (written by another thread), or ``failed``."""
    cdef int rounds = 0
    while exd_load(count) < wanted and not exd_load(failed):
        rounds = exd_idle(rounds)


cdef int _overflow(const char* what) except -1 nogil:
    """Raise `WalkOverflow` (from the summing side too, which holds no GIL)."""
    with gil:
        raise WalkOverflow(what.decode())


@cython.final
cdef class _Acc:
    """Branches (target id, reward code, weight over 2**exponent), summed by key."""

    cdef vector[Branch] items
    # per slot: (generation << 32) | item index; a slot of another generation is empty,
    # so a reset is a new generation
    cdef vector[uint64_t] slots
    cdef uint64_t generation
    cdef int exponent
    cdef bint mixed_codes      # two reward codes met (else every item's successor is its own)

    def __cinit__(self):
        self.slots.assign(ACC_SLOTS, 0)
        self.generation = 1
        self.exponent = 0

    cdef void reset(self) noexcept nogil:
        self.items.clear()
        self.exponent = 0
        self.mixed_codes = False
        self._next_generation()

    cdef inline void _next_generation(self) noexcept nogil:
        self.generation += 1
        if self.generation >> 31:
            self.slots.assign(self.slots.size(), 0)
            self.generation = 1

    cdef int add(self, int64_t target, int32_t code, u128 weight, int exponent) except -1 nogil:
        """Add weight / 2**exponent to the branch (target, code)."""
        cdef u128 total
        cdef size_t i
        cdef int shift
        if exponent != self.exponent:
            if exponent > self.exponent:
                shift = exponent - self.exponent
                for i in range(self.items.size()):
                    if exd_bits(self.items[i].weight) + shift > 127:
                        _overflow("a node's weights pass 128 bits")
                    self.items[i].weight = exd_shl(self.items[i].weight, shift)
                self.exponent = exponent
            shift = self.exponent - exponent
            if exd_bits(weight) + shift > 127:
                _overflow("a node's weights pass 128 bits")
            weight = exd_shl(weight, shift)
        elif exd_hi(weight) >> 63:
            _overflow("a node's weights pass 128 bits")
        cdef uint64_t* slots = self.slots.data()
        cdef Branch* items = self.items.data()
        cdef uint64_t mask = self.slots.size() - 1, generation = self.generation
        cdef uint64_t slot = exd_mix((<uint64_t>target << 20) ^ <uint64_t>code) & mask
        cdef Branch* found
        while slots[slot] >> 32 == generation:
            found = &items[<uint32_t>slots[slot]]
            if found.target == target and found.reward_code == code:
                if exd_add(found.weight, weight, &total):
                    _overflow("a node's weights pass 128 bits")
                found.weight = total
                return 0
            slot = (slot + 1) & mask
        cdef size_t n = self.items.size()
        if n and items[0].reward_code != code:
            self.mixed_codes = True
        slots[slot] = (generation << 32) | n
        # written in place: a branch built on the stack and copied in stalls the store
        # forwarding (its weight written as two halves, read back as one)
        cdef Branch* branch = exd_append(self.items)
        branch.target = target
        branch.reward_code = code
        branch.weight = weight
        if 2 * (n + 1) > mask + 1:
            self._grow()
        return 0

    cdef int append_distinct(self, int64_t target, int32_t code, u128 weight) except -1 nogil:
        """`add` for a branch known to meet no other of the node's (at weight / 2**0): no
        look-up. A node's branches all come this way or all through `add`."""
        if self.exponent or exd_hi(weight) >> 63:
            _overflow("a node's weights pass 128 bits")
        cdef size_t n = self.items.size()
        if n and self.items[0].reward_code != code:
            self.mixed_codes = True
        cdef Branch* branch = exd_append(self.items)
        branch.target = target
        branch.reward_code = code
        branch.weight = weight
        return 0

    cdef void _grow(self) noexcept nogil:
        """Twice the slots, the items placed again."""
        cdef size_t i
        self.slots.assign(2 * self.slots.size(), 0)
        self.generation = 1
        cdef uint64_t mask = self.slots.size() - 1, slot, generation = self.generation
        cdef uint64_t* slots = self.slots.data()
        for i in range(self.items.size()):
            slot = exd_mix((<uint64_t>self.items[i].target << 20) ^ <uint64_t>self.items[i].reward_code) & mask
            while slots[slot] >> 32 == generation:
                slot = (slot + 1) & mask
            slots[slot] = (generation << 32) | i


# ----- the walk ------------------------------------------------------------------------------

@cython.final
cdef class CompiledWalk(GrowingGraph):
    """One Karbon contest's rules walk, compiled; see the module's docstring.

    Built from a `KarbonModel`'s parameters by `exactdice.karbon.compiled`.
    """

    # the contest
    cdef int k
    cdef int sizes[MAXK]
    cdef int hit_faces[MAXK]
    cdef int miss_faces[MAXK]
    cdef int turn_faces[MAXK]
    cdef int best_first[MAXK]
    cdef int rank[MAXK]
    cdef int risk_take_order[MAXK]
    cdef int plans_take_order[MAXK]
    cdef int give_order[MAXK]
    # the ruleset
    cdef bint peril_to_stack, one_reward, player_first, sudden_death, injury_peril, picker_player
    # the policies
    cdef bint player_decides, narrator_decides, narrator_random, risk_always
    cdef int narrator_side
    cdef uint64_t break_order[4]
    cdef uint64_t glitch_order[3]
    cdef uint64_t sideswipe_take, hurt_choice, plans_choice
    # the walk's shape
    cdef bint cap_chips, fold_chips, split_rolls, peril_recurs
    cdef bint outcomes_distinct  # a round start's roll outcomes each reach a state of their own
    # packing: bit widths of each field
    cdef int width
    cdef int count_bits[MAXK]
    cdef int chip_bits, stack_bits, mark_bits, peril_bits, track_bits, base_track
    # the graph (its nodes and edges are the `GrowingGraph`'s): situations by node id,
    # reward masses per node (with ``keep_rewards``), decision edges' labels and rewards
    cdef _KeyTable states
    cdef bint keep_rewards
    cdef vector[int64_t] mass
    cdef vector[uint8_t] has_mass
    cdef vector[int64_t] label_edges
    cdef vector[uint64_t] labels
    cdef vector[int32_t] label_rewards
    cdef dict big_mass         # node -> (reward mass ...), where one passes 2**63 - 1
    # reward codes: packed rewards -> small ints
    cdef vector[uint64_t] reward_values
    # roll tables by hand pair
    cdef _PairTable roll_keys
    cdef vector[int64_t] roll_start
    cdef vector[int64_t] roll_length
    cdef MappedArray[RollEntry] roll_entries
    # rest of a round by post-roll situation: (exponent, branches); keyed by the node's
    # context (all but hands, chips and stacks: `contexts`) and what the roll changed
    cdef _KeyTable contexts
    cdef _PairTable hand_ids
    cdef _PairTable roll_outcomes  # a roll table's merged outcomes while it is built
    cdef _RestTable rests
    cdef vector[Branch, HugePages[Branch]] rest_branches
    cdef int64_t rest_kept
    cdef int64_t unfit_value            # a field `_pack` met that does not fit its width
    cdef int unfit_bits                 #   (0: none)
    cdef int64_t rest_clears            # times the rests were forgotten (past ``rest_kept``)
    cdef vector[PendingRest] pending    # the roll outcomes of the node being expanded
    # a node's branches; `acc` is the one the walk adds to (the node's, or a scratch one
    # while a rest of round or an option's certain end is walked)
    cdef _Acc acc, walk_acc, scratch_acc  # the walk's branches (acc: the one in use)

    # the spool: expanding writes a node's work (`Work`), the summing side sums it into the
    # node's edges and records them, in a second thread past ``summing_after`` transitions
    cdef vector[Work] spool
    cdef int64_t written                # items written (the expanding side)
    cdef int64_t room_until             #   ... that fit before it must look at `summed`
    cdef int64_t published              # items the summing side may read (atomic)
    cdef int64_t summed                 # items the summing side has read (atomic)
    cdef int64_t stop_summing           # 1: sum what is published, then stop; 2: stop now (atomic)
    cdef int64_t summing_failed         # the summing thread raised `summing_error` (atomic)
    cdef object summing_thread, summing_error
    cdef int64_t summing_after          # transitions recorded before the summing thread starts (-1: never)
    cdef int64_t summed_in_thread       # items the summing thread read (for measurements and tests)
    cdef bint threaded, broken
    cdef int64_t sum_read, sum_left, sum_node  # the summing side: items read; the node open
    cdef int32_t sum_kind, sum_extra
    cdef bint sum_open
    cdef _Acc sum_acc                   # the open node's branches summed
    cdef _Acc merged                    # the recorded node's weights summed per successor
    cdef vector[u128] code_weights      #   ... and per reward code (of the codes met)
    cdef vector[int32_t] codes_met      #   ... the codes met
    cdef vector[int64_t] big_notes      # (node, 0: weights or 1: masses, count) of numbers past
    cdef vector[u128] big_values        #   64 bits, for `big` and `big_mass` (the GIL's side)
    cdef int64_t max_states
    # external nodes (the draws in front of the contest): given from Python
    cdef list external_nodes
    cdef list external_keys
    cdef dict external_index
    # the options of a round's walk, a list per depth of `_walk` (0: `_expand`'s own)
    cdef vector[vector[Option]] option_lists
    cdef int walk_depth
    # binomial hit weights of n d8: hits 1-3 of 8
    cdef vector[u128] binomial
    cdef vector[int64_t] binomial_start

    def __cinit__(self):
        self.option_lists.resize(MAX_WALK_DEPTH + 1)  # (never moved: `_walk` holds them)
        self.big_mass = {}
        self.external_nodes = []
        self.external_keys = []
        self.external_index = {}

    def __init__(self, config):
        """``config``: a dict of plain ints, bools and tuples (`exactdice.karbon.compiled`)."""
        cdef int i
        sizes = tuple(config["sizes"])
        if len(sizes) > MAXK:
            raise WalkOverflow(f"{len(sizes)} die types (the compiled walk takes {MAXK})")
        self.k = len(sizes)
        for i in range(self.k):
            self.sizes[i] = sizes[i]
            self.hit_faces[i] = min(3, sizes[i])
            self.miss_faces[i] = max(0, min(sizes[i], 5) - 3)
            self.turn_faces[i] = sizes[i] - self.hit_faces[i] - self.miss_faces[i]
        for name, target in (("best_first", 0), ("risk_take_order", 1), ("plans_take_order", 2),
                             ("give_order", 3)):
            order = tuple(config[name])
            for i in range(self.k):
                if target == 0:
                    self.best_first[i] = order[i]
                    self.rank[order[i]] = i
                elif target == 1:
                    self.risk_take_order[i] = order[i]
                elif target == 2:
                    self.plans_take_order[i] = order[i]
                else:
                    self.give_order[i] = order[i]
        self.peril_to_stack = config["peril_to_stack"]
        self.one_reward = config["one_reward"]
        self.player_first = config["player_first"]
        self.sudden_death = config["sudden_death"]
        self.injury_peril = config["injury_peril"]
        self.picker_player = config["picker_player"]
        self.player_decides = config["player_decides"]
        self.narrator_decides = config["narrator_decides"]
        self.narrator_side = SIDE_MAX if config["narrator_kind"] else SIDE_MIN
        self.narrator_random = config["narrator_random"]
        self.risk_always = config["risk_always"]
        for i, word in enumerate(config["break_order"]):
            self.break_order[i] = _WORD_LABELS[word]
        for i, word in enumerate(config["glitch_order"]):
            self.glitch_order[i] = _WORD_LABELS[word]
        self.sideswipe_take = _WORD_LABELS[config["sideswipe_take"]]
        self.hurt_choice = _WORD_LABELS[config["hurt"]]
        self.plans_choice = _WORD_LABELS[config["plans"]]
        self.cap_chips = config["cap_chips"]
        self.fold_chips = config["fold_chips"]
        self.split_rolls = config["split_rolls"]
        self.peril_recurs = config["peril_recurs"]
        self.rest_kept = config.get("rest_kept", 4_000_000)
        # (`_expand_round_start`; "merge_round_outcomes" merges them anyway, for the tests)
        self.outcomes_distinct = ((self.split_rolls or self.player_decides)
                                  and not config.get("merge_round_outcomes", False))
        self._layout(config)
        self.states = _KeyTable(self.width, config.get("expected_states", 1024))
        self.roll_keys = _PairTable()
        self.rests = _RestTable(self.rest_kept, config.get("rests_made_ahead_from", RESTS_MADE_AHEAD))
        self.contexts = _KeyTable(self.width, 1024)
        self.hand_ids = _PairTable()
        self.roll_outcomes = _PairTable()
        self.walk_acc = _Acc()
        self.scratch_acc = _Acc()
        self.sum_acc = _Acc()
        self.merged = _Acc()
        self.acc = self.walk_acc
        self.spool.resize(SPOOL_SIZE)
        self.room_until = SPOOL_SIZE
        self.summing_after = config.get("summing_after", -1)
        self.keep_rewards = config.get("keep_rewards", True)
        self.reward_values.push_back(0)
        self._binomials(config["max_peril"])

    cdef void _binomials(self, int most):
        """Hit weights of n d8 (hits on 1-3), n = 0..most (at most 3 * 42 bits: u128)."""
        cdef int n, hits
        cdef u128 weight, power
        for n in range(most + 1):
            self.binomial_start.push_back(self.binomial.size())
            for hits in range(n + 1):
                weight = _comb(n, hits)
                for _ in range(hits):
                    weight *= 3
                for _ in range(n - hits):
                    weight *= 5
                self.binomial.push_back(weight)
        self.binomial_start.push_back(self.binomial.size())

    def _layout(self, config):
        """Bit widths of the packed fields; raises `WalkOverflow` past `MAXW` words."""
        cdef int i, bits
        totals = config["totals"]
        bits = 5 + 2 + 3 + 1 + 2 + 8 + 8  # phase, winner, count, queue form, its winner, its counts
        for i in range(self.k):
            self.count_bits[i] = max(1, int(totals[i]).bit_length())
            bits += 4 * self.count_bits[i]
        self.chip_bits = max(1, int(config["max_chips"]).bit_length())
        self.stack_bits = 3
        self.mark_bits = max(1, int(config["max_marks"]).bit_length())
        self.peril_bits = max(1, int(config["max_peril"]).bit_length())
        self.base_track = config["base_track"]
        self.track_bits = 2
        bits += 2 * self.chip_bits + 2 * self.stack_bits + 2 * self.mark_bits + self.peril_bits + self.track_bits
        self.width = (bits + 63) // 64
        if self.width > MAXW:
            raise WalkOverflow(f"a situation takes {bits} bits (the compiled walk packs {64 * MAXW})")

    # ----- packing -------------------------------------------------------------------------

    cdef int _pack(self, const Sit* s, uint64_t* key) except -1:
        cdef int word = 0, shift = 0, i
        cdef const Pos* p = &s.pos
        memset(key, 0, MAXW * 8)
        self.unfit_bits = 0
        # values go in low bits first; a field never straddles past the last word
        if s.phase == PH_EXTERNAL:
            key[0] = (<uint64_t>s.count << 5) | PH_EXTERNAL
            return 0
        self._put(key, &word, &shift, s.phase, 5)
        if s.phase == PH_END:
            self._put(key, &word, &shift, s.count, 3)
            return self._packed()
        self._put(key, &word, &shift, s.winner, 2)
        self._put(key, &word, &shift, s.count, 3)
        self._put(key, &word, &shift, s.qpre, 1)
        self._put(key, &word, &shift, s.qwin, 2)
        self._put(key, &word, &shift, s.qa, 8)
        self._put(key, &word, &shift, s.qb, 8)
        for i in range(self.k):
            self._put(key, &word, &shift, p.ph[i], self.count_bits[i])
            self._put(key, &word, &shift, p.nh[i], self.count_bits[i])
            self._put(key, &word, &shift, p.pool[i], self.count_bits[i])
            self._put(key, &word, &shift, p.res[i], self.count_bits[i])
        self._put(key, &word, &shift, p.pchips, self.chip_bits)
        self._put(key, &word, &shift, p.nchips, self.chip_bits)
        self._put(key, &word, &shift, p.pstack, self.stack_bits)
        self._put(key, &word, &shift, p.nstack, self.stack_bits)
        self._put(key, &word, &shift, p.wins, self.mark_bits)
        self._put(key, &word, &shift, p.losses, self.mark_bits)
        self._put(key, &word, &shift, p.peril, self.peril_bits)
        self._put(key, &word, &shift, p.track - self.base_track, self.track_bits)
        return self._packed()

    cdef int _packed(self) except -1:
        """Raise for a field `_put` could not fit."""
        if self.unfit_bits:
            raise WalkOverflow(f"a situation's field holds {self.unfit_value} (compiled width {self.unfit_bits} bits)")
        return 0

    cdef inline void _put(self, uint64_t* key, int* word, int* shift, int64_t value, int bits) noexcept nogil:
        """Put ``value`` in the next ``bits`` bits, or note it in ``unfit_value`` and
        ``unfit_bits`` (`_pack` raises once the whole key is packed)."""
        if value < 0 or value >= ((<int64_t>1) << bits):
            if not self.unfit_bits:  # the first field that does not fit is the one named
                self.unfit_value, self.unfit_bits = value, bits
            return
        cdef uint64_t v = <uint64_t>value
        key[word[0]] |= v << shift[0]
        if shift[0] + bits > 64:
            key[word[0] + 1] |= v >> (64 - shift[0])
        shift[0] += bits
        if shift[0] >= 64:
            shift[0] -= 64
            word[0] += 1

    cdef inline int64_t _get(self, const uint64_t* key, int* word, int* shift, int bits) noexcept nogil:
        cdef uint64_t v = key[word[0]] >> shift[0]
        if shift[0] + bits > 64:
            v |= key[word[0] + 1] << (64 - shift[0])
        v &= ((<uint64_t>1) << bits) - 1
        shift[0] += bits
        if shift[0] >= 64:
            shift[0] -= 64
            word[0] += 1
        return <int64_t>v

    cdef void _unpack(self, const uint64_t* key, Sit* s) noexcept nogil:
        cdef int word = 0, shift = 0, i
        cdef Pos* p = &s.pos
        memset(s, 0, sizeof(Sit))
        s.phase = <int32_t>self._get(key, &word, &shift, 5)
        if s.phase == PH_EXTERNAL:
            s.count = <int32_t>(key[0] >> 5)
            return
        if s.phase == PH_END:
            s.count = <int32_t>self._get(key, &word, &shift, 3)
            return
        s.winner = <int32_t>self._get(key, &word, &shift, 2)
        s.count = <int32_t>self._get(key, &word, &shift, 3)
        s.qpre = <int32_t>self._get(key, &word, &shift, 1)
        s.qwin = <int32_t>self._get(key, &word, &shift, 2)
        s.qa = <int32_t>self._get(key, &word, &shift, 8)
        s.qb = <int32_t>self._get(key, &word, &shift, 8)
        for i in range(self.k):
            p.ph[i] = <int16_t>self._get(key, &word, &shift, self.count_bits[i])
            p.nh[i] = <int16_t>self._get(key, &word, &shift, self.count_bits[i])
            p.pool[i] = <int16_t>self._get(key, &word, &shift, self.count_bits[i])
            p.res[i] = <int16_t>self._get(key, &word, &shift, self.count_bits[i])
        p.pchips = self._get(key, &word, &shift, self.chip_bits)
        p.nchips = self._get(key, &word, &shift, self.chip_bits)
        p.pstack = <int32_t>self._get(key, &word, &shift, self.stack_bits)
        p.nstack = <int32_t>self._get(key, &word, &shift, self.stack_bits)
        p.wins = <int32_t>self._get(key, &word, &shift, self.mark_bits)
        p.losses = <int32_t>self._get(key, &word, &shift, self.mark_bits)
        p.peril = <int32_t>self._get(key, &word, &shift, self.peril_bits)
        p.track = <int32_t>self._get(key, &word, &shift, self.track_bits) + self.base_track

    # ----- rewards ---------------------------------------------------------------------------

    cdef int32_t _reward_code(self, uint64_t packed) except -1:
        """A small number for a packed reward (a contest meets a few dozen at most)."""
        cdef size_t i
        for i in range(self.reward_values.size()):
            if self.reward_values[i] == packed:
                return <int32_t>i
        if self.threaded and self.reward_values.size() == self.reward_values.capacity():
            self._drain()  # the summing side reads the values where they are
        self.reward_values.push_back(packed)
        return <int32_t>(self.reward_values.size() - 1)

    # ----- the round start (spec 4.1-4.3) ------------------------------------------------------

    cdef void _capped(self, Pos* p) noexcept nogil:
        """`KarbonModel._capped`: chips in hand cut to what can still make a difference."""
        cdef int64_t breaks = p.track - p.wins - p.losses
        cdef bint sideswipe_possible = p.track - p.losses >= 2
        cdef int64_t player_cap = _max64(0, STACK * breaks - p.pstack)
        cdef int64_t narrator_cap = _max64(_max64(STACK * (p.track - p.losses) - p.nstack,
                                                  STACK * breaks if sideswipe_possible else 0), 1)
        if p.pchips > player_cap:
            p.pchips = player_cap
        if p.nchips > narrator_cap:
            p.nchips = narrator_cap

    cdef int _hand_roll(self, const int16_t* hand, vector[int64_t]& outcomes, vector[u128]& weights) except -1:
        """The joint law of (hits, turncoats of each type) of a hand: outcome keys packed
        8 bits a field (hits lowest), integer weights over the product of the sides."""
        cdef vector[int64_t] next_outcomes
        cdef vector[u128] next_weights
        cdef unordered_map[int64_t, size_t] where
        cdef int i, hits, turns, count
        cdef size_t j
        cdef int64_t key
        cdef u128 single, w, total
        outcomes.clear()
        weights.clear()
        outcomes.push_back(0)
        weights.push_back(1)
        for i in range(self.k):
            count = hand[i]
            if not count:
                continue
            next_outcomes.clear()
            next_weights.clear()
            where.clear()
            for hits in range(count + 1):
                for turns in range(count - hits + 1):
                    single = self._multinomial(count, hits, turns, i)
                    if single == 0:
                        continue
                    for j in range(outcomes.size()):
                        if exd_mul(weights[j], single, &w):
                            raise WalkOverflow("a hand's roll weights pass 128 bits")
                        key = outcomes[j] + hits + ((<int64_t>turns) << (8 * (i + 1)))
                        found = where.find(key)
                        if found == where.end():
                            where[key] = next_outcomes.size()
                            next_outcomes.push_back(key)
                            next_weights.push_back(w)
                        else:
                            if exd_add(next_weights[deref(found).second], w, &total):
                                raise WalkOverflow("a hand's roll weights pass 128 bits")
                            next_weights[deref(found).second] = total
            outcomes.swap(next_outcomes)
            weights.swap(next_weights)
        return 0

    cdef u128 _multinomial(self, int count, int hits, int turns, int i) except? 0:
        """Weight of ``hits`` hits and ``turns`` turncoats among ``count`` dice of type i."""
        cdef int misses = count - hits - turns, n
        cdef u128 w = _comb(count, hits) * _comb(count - hits, turns), w2
        cdef int faces[3]
        cdef int times[3]
        faces[0], faces[1], faces[2] = self.hit_faces[i], self.turn_faces[i], self.miss_faces[i]
        times[0], times[1], times[2] = hits, turns, misses
        for j in range(3):
            for n in range(times[j]):
                if exd_mul(w, faces[j], &w2):
                    raise WalkOverflow("a hand's roll weights pass 128 bits")
                w = w2
        return w

    cdef int64_t _roll_table(self, const Pos* p) except -1:
        """The index of the roll table of the position's hands (`KarbonModel._roll_table`):
        entries (weight, winner, chips gained, hands after the Opening), remembered."""
        cdef uint64_t key[2]
        cdef int i
        cdef bint added
        key[0] = 0
        key[1] = 0
        for i in range(self.k):
            if p.ph[i] > 255 or p.nh[i] > 255:
                raise WalkOverflow("a hand holds more than 255 dice of one type")
            key[0] |= (<uint64_t>p.ph[i]) << (8 * i)
            key[1] |= (<uint64_t>p.nh[i]) << (8 * i)
        cdef int64_t index = self.roll_keys.add(key, &added)
        if not added:
            return index
        self.roll_start.push_back(self.roll_entries.size())
        self._build_roll_table(p)
        self.roll_length.push_back(self.roll_entries.size() - self.roll_start[index])
        return index

    cdef int _build_roll_table(self, const Pos* p) except -1:
        """Both hands' rolls combined: the side with more turncoats offers them (an Opening),
        the hits decide the winner and the chips gained (spec 4.1-4.3)."""
        cdef vector[int64_t] player_outcomes, narrator_outcomes
        cdef vector[u128] player_weights, narrator_weights
        self._hand_roll(p.ph, player_outcomes, player_weights)
        self._hand_roll(p.nh, narrator_outcomes, narrator_weights)
        # entries merged by (turncoats offered, who offers / winner / gains), in order of
        # first sight
        cdef _PairTable where = self.roll_outcomes
        cdef vector[pair[int64_t, int64_t]] keys
        cdef vector[u128] sums
        cdef pair[int64_t, int64_t] key
        cdef uint64_t words[2]
        cdef size_t a, b
        cdef int hits_p, hits_n, turns_p, turns_n, winner, gain_p, gain_n, offer, i
        cdef int64_t offered, index
        cdef bint added
        cdef u128 w, total
        where.clear()
        for a in range(player_outcomes.size()):
            hits_p = player_outcomes[a] & 0xFF
            turns_p = _turncoats(player_outcomes[a], self.k)
            for b in range(narrator_outcomes.size()):
                hits_n = narrator_outcomes[b] & 0xFF
                turns_n = _turncoats(narrator_outcomes[b], self.k)
                if turns_p > turns_n:
                    offer, offered = 1, player_outcomes[a] >> 8
                elif turns_n > turns_p:
                    offer, offered = 2, narrator_outcomes[b] >> 8
                else:
                    offer, offered = 0, 0
                if hits_p > hits_n:
                    winner, gain_p, gain_n = WIN_P, hits_p, 0
                elif hits_n > hits_p:
                    winner, gain_p, gain_n = WIN_N, 0, hits_n
                else:
                    winner, gain_p, gain_n = WIN_T, hits_p, hits_n
                key.first = offered
                key.second = (offer << 22) | (winner << 20) | (gain_p << 10) | gain_n
                if exd_mul(player_weights[a], narrator_weights[b], &w):
                    raise WalkOverflow("a roll's weights pass 128 bits")
                words[0], words[1] = <uint64_t>key.first, <uint64_t>key.second
                index = where.add(words, &added)
                if added:
                    keys.push_back(key)
                    sums.push_back(w)
                else:
                    if exd_add(sums[index], w, &total):
                        raise WalkOverflow("a roll's weights pass 128 bits")
                    sums[index] = total
        cdef RollEntry entry
        for a in range(keys.size()):
            offered = keys[a].first
            entry.weight = sums[a]
            entry.winner = (keys[a].second >> 20) & 3
            entry.gain_p = (keys[a].second >> 10) & 0x3FF
            entry.gain_n = keys[a].second & 0x3FF
            offer = (keys[a].second >> 22) & 3
            for i in range(self.k):
                turns_p = (offered >> (8 * i)) & 0xFF
                if offer == 1:
                    entry.ph[i] = p.ph[i] - turns_p
                    entry.nh[i] = p.nh[i] + turns_p
                elif offer == 2:
                    entry.ph[i] = p.ph[i] + turns_p
                    entry.nh[i] = p.nh[i] - turns_p
                else:
                    entry.ph[i] = p.ph[i]
                    entry.nh[i] = p.nh[i]
            entry.hands_token = self._hands_token(entry.ph, entry.nh)
            entry.hands_empty = not (_any(entry.ph, self.k) or _any(entry.nh, self.k))
            self.roll_entries.push_back(entry)
        return 0

    cdef int32_t _hands_token(self, const int16_t* ph, const int16_t* nh) except -1:
        cdef uint64_t key[2]
        cdef int i
        cdef bint added
        key[0] = 0
        key[1] = 0
        for i in range(self.k):
            key[0] |= (<uint64_t>ph[i]) << (8 * i)
            key[1] |= (<uint64_t>nh[i]) << (8 * i)
        return <int32_t>self.hand_ids.add(key, &added)

    cdef void _after_roll(self, const Pos* p, const RollEntry* entry, Sit* s) noexcept nogil:
        """`KarbonModel.after_roll`: the risk situation after a roll outcome."""
        cdef int i
        memset(s, 0, sizeof(Sit))
        s.pos = p[0]
        for i in range(self.k):
            s.pos.ph[i] = entry.ph[i]
            s.pos.nh[i] = entry.nh[i]
        s.pos.pchips += entry.gain_p
        s.pos.nchips += entry.gain_n
        s.phase = PH_RISK
        s.winner = entry.winner
        if self.fold_chips:
            self._fold(&s.pos, entry.winner)

    cdef void _fold(self, Pos* p, int winner) noexcept nogil:
        """`placement_folded`: a side about to place holds its stack in hand."""
        if not (_any(p.ph, self.k) or _any(p.nh, self.k) or p.peril):
            return
        if winner != WIN_N and p.pstack:
            p.pchips += p.pstack
            p.pstack = 0
        if winner != WIN_P and p.nstack and not (self.peril_to_stack and p.peril):
            p.nchips += p.nstack
            p.nstack = 0

    cdef int64_t _intern(self, Sit* s) except -2:
        """The node id of a situation (a round start is capped first, as `round_start`)."""
        cdef uint64_t key[MAXW]
        cdef bint added
        if s.phase == PH_POS and self.cap_chips:
            self._capped(&s.pos)
        self._pack(s, key)
        cdef int64_t id = self.states.add(key, &added)
        if added:
            if id >= self.max_states:
                raise _StateLimit(id)
            if self.threaded and self._node_arrays_full():
                self._drain()  # the summing side writes into them where they are
            self.add_node()
            if self.keep_rewards:
                self.mass.resize(REWARD_COUNTERS * (id + 1), 0)
                self.has_mass.push_back(0)
        return id

    cdef int _emit(self, Sit* s, u128 num, int exponent, uint64_t reward) except -1:
        return self.acc.add(self._intern(s), self._reward_code(reward), num, exponent)

    # ----- the walk of a round (`KarbonModel._walk`) --------------------------------------------

    cdef int _walk(self, Sit s, u128 num, int exponent, uint64_t reward, bint top) except -1:
        """`_walk_with` with the option list of its depth (made once a walk, not once a call)."""
        if self.walk_depth >= MAX_WALK_DEPTH:
            raise WalkOverflow(f"a round's walk nested deeper than {MAX_WALK_DEPTH}")
        self.walk_depth += 1
        self._walk_with(s, num, exponent, reward, top, self.option_lists[self.walk_depth])
        self.walk_depth -= 1  # (left as it is on an error: `_expand` starts again from 0)
        return 0

    cdef int _walk_with(self, Sit s, u128 num, int exponent, uint64_t reward, bint top,
                        vector[Option]& options) except -1:
        cdef bint at_top
        cdef int side, n, chosen, i
        cdef u128 w
        while True:
            if s.phase == PH_POS:
                return self._emit(&s, num, exponent, reward)
            at_top = top
            top = False
            if s.phase == PH_END:
                return self._emit(&s, num, exponent, reward)
            if s.phase == PH_RISKROLL:
                return self._risk_roll(&s, num, exponent, reward)
            if s.phase == PH_PERIL:
                return self._peril(&s, num, exponent, reward)
            if s.phase == PH_TEST:
                reward = self._test_step(&s, reward)
                continue
            if not self.player_decides:
                if s.phase == PH_RISK:
                    s.phase = PH_RISKROLL if self.risk_always else PH_PERIL
                    continue
                if s.phase == PH_TAKE:
                    self._fixed_take_next(&s)
                    continue
            options.reserve(OPTIONS_KEPT)  # grown once, not option by option
            options.clear()
            side = self._options(&s, options)
            n = options.size()
            if n == 1:
                reward += options[0].reward
                s = options[0].nxt
                continue
            if side != SIDE_NONE and not at_top:
                return self._emit(&s, num, exponent, reward)
            chosen = self._fixed_choice(&s, options)
            if chosen < 0:  # a coin flip (random narrator): two equally likely paths
                if n != 2:
                    raise InternalError(f"a coin flip among {n} options")
                for i in range(n):
                    self._walk(options[i].nxt, num, exponent + 1, reward + options[i].reward, False)
                return 0
            reward += options[chosen].reward
            s = options[chosen].nxt

    cdef int _risk_roll(self, Sit* s, u128 num, int exponent, uint64_t reward) except -1:
        cdef int pool_size = _sum(s.pos.pool, self.k), hits, take
        cdef int64_t start = self.binomial_start[RISK_DICE]
        cdef Sit nxt
        cdef u128 w
        for hits in range(RISK_DICE + 1):
            nxt = s[0]
            nxt.pos.nchips += RISK_DICE - hits
            take = min(hits, pool_size)
            if take:
                nxt.phase = PH_TAKE
                nxt.count = take
            else:
                nxt.phase = PH_PERIL
            if exd_mul(num, self.binomial[start + hits], &w):
                raise WalkOverflow("a path's weight passes 128 bits")
            self._walk(nxt, w, exponent + 3 * RISK_DICE, reward, False)
        return 0

    cdef int _peril(self, Sit* s, u128 num, int exponent, uint64_t reward) except -1:
        cdef Sit nxt = s[0]
        cdef int hits, stack, peril = s.pos.peril
        cdef u128 w
        nxt.phase = PH_TEST
        nxt.qpre = 1
        nxt.qwin = s.winner
        nxt.qa = 0
        nxt.qb = 0
        nxt.winner = 0
        nxt.count = 0
        if peril == 0:
            return self._walk(nxt, num, exponent, reward, False)
        if peril + 1 >= <int>self.binomial_start.size():
            raise WalkOverflow(f"{peril} peril dice (the compiled walk rolls at most "
                               f"{self.binomial_start.size() - 2})")
        cdef int64_t start = self.binomial_start[peril]
        cdef Sit after
        for hits in range(peril + 1):
            after = nxt
            if self.peril_to_stack:
                stack = s.pos.nstack + hits
                after.pos.nstack = stack % STACK
                after.qa = stack // STACK
            else:
                after.pos.nchips += hits
            if exd_mul(num, self.binomial[start + hits], &w):
                raise WalkOverflow("a path's weight passes 128 bits")
            self._walk(after, w, exponent + 3 * peril, reward, False)
        return 0

    # ----- the Test (spec 4.7) ----------------------------------------------------------------

    cdef uint64_t _test_step(self, Sit* s, uint64_t reward) except? 0xFFFFFFFFFFFFFFFF:
        """Resolve the head of the Test's queue in place; returns the reward."""
        cdef int head  # 0 place, 1 Break, 2 Glitch, -1 empty
        if s.qpre:
            head = 2 if s.qa > 0 else 0
        elif s.qa == 0 and s.qb == 0:
            head = -1
        elif self.player_first:
            head = 1 if s.qa > 0 else 2
        else:
            head = 2 if s.qb > 0 else 1
        if head == -1:
            s.phase = PH_POS
            s.qpre = s.qwin = s.qa = s.qb = 0
            return reward
        if head == 0:
            self._placement(s)
            return reward
        if head == 1:
            s.pos.wins += 1
            reward += R_BREAK
            s.qa -= 1
            s.phase = PH_BREAK
        else:
            s.pos.losses += 1
            reward += R_GLITCH
            if s.qpre:
                s.qa -= 1
            else:
                s.qb -= 1
            s.phase = PH_GLITCH
        self._track_check(s)
        return reward

    cdef void _placement(self, Sit* s) noexcept nogil:
        cdef int winner = s.qwin, breaks = 0, glitches = 0
        cdef int64_t chips, total
        cdef Pos* p = &s.pos
        if winner == WIN_P or winner == WIN_T:
            if self.one_reward:
                if p.pstack + p.pchips >= STACK:
                    p.pchips = p.pchips - (STACK - p.pstack)
                    p.pstack = 0
                    breaks = 1
                else:
                    p.pstack = <int32_t>(p.pstack + p.pchips)
                    p.pchips = 0
            else:
                total = p.pstack + p.pchips
                p.pchips = 0
                p.pstack = <int32_t>(total % STACK)
                breaks = <int>(total // STACK)
        if winner == WIN_N or winner == WIN_T:
            if self.one_reward:
                if p.nstack + p.nchips >= STACK:
                    p.nchips = p.nchips - (STACK - p.nstack)
                    p.nstack = 0
                    glitches = 1
                else:
                    p.nstack = <int32_t>(p.nstack + p.nchips)
                    p.nchips = 0
            else:
                total = p.nstack + p.nchips
                p.nchips = 0
                p.nstack = <int32_t>(total % STACK)
                glitches = <int>(total // STACK)
        s.qpre = 0
        s.qwin = 0
        s.qa = breaks
        s.qb = glitches

    cdef void _track_check(self, Sit* s) noexcept nogil:
        """`KarbonModel._track_check`: the end when the track is full (sudden death goes on)."""
        cdef Pos* p = &s.pos
        if p.wins + p.losses < p.track:
            return
        if p.wins != p.losses or not self.sudden_death:
            s.count = 0 if p.wins > p.losses else (1 if p.losses > p.wins else 2)
            memset(&s.pos, 0, sizeof(Pos))
            s.phase = PH_END
            s.winner = s.qpre = s.qwin = s.qa = s.qb = 0
            return
        p.track += 1
        p.pchips = p.nchips = 0
        p.pstack = p.nstack = 0
        s.phase = PH_POS
        s.winner = s.count = s.qpre = s.qwin = s.qa = s.qb = 0

    # ----- decisions (spec 5 and 7) -------------------------------------------------------------

    cdef int _options(self, Sit* s, vector[Option]& options) except -100:
        """The options at a decision situation, in the spec's order; returns the side that
        decides as a node (`SIDE_NONE` where a fixed or random policy decides)."""
        cdef int who = 0  # 0 player, 1 narrator
        cdef int phase = s.phase
        if phase == PH_RISK:
            self._risk_options(s, options)
        elif phase == PH_TAKE:
            self._take_options(s, options)
        elif phase == PH_BREAK:
            self._break_options(s, options)
        elif phase == PH_SWAP:
            self._swap_options(s, options)
        elif phase == PH_GIVE:
            self._give_options(s, options)
            who = 1
        elif phase == PH_GLITCH:
            self._glitch_options(s, options)
        elif phase == PH_HURT:
            self._hurt_options(s, options)
            who = 1
        elif phase == PH_PLANS:
            self._plans_options(s, options)
            who = 1
        elif phase == PH_PLANSTAKE:
            self._planstake_options(s, options)
            who = 1
        elif phase == PH_SIDESWIPE:
            self._sideswipe_options(s, options)
        elif phase == PH_SWIPEDICE:
            self._give_options(s, options)
            who = 0 if self.picker_player else 1
        else:
            raise InternalError(f"phase {phase} is no decision")
        if options.size() > MAX_OPTIONS:
            raise WalkOverflow(f"{options.size()} options at one decision")
        if who == 0:
            return SIDE_MAX if self.player_decides else SIDE_NONE
        return self.narrator_side if self.narrator_decides else SIDE_NONE

    cdef inline void _option(self, vector[Option]& options, const Sit* nxt, uint64_t reward,
                             uint64_t label) noexcept:
        cdef Option option
        option.nxt = nxt[0]
        option.reward = reward
        option.label = label
        options.push_back(option)

    cdef inline void _to_test(self, Sit* t) noexcept nogil:
        t.phase = PH_TEST

    cdef void _risk_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt = s[0]
        nxt.phase = PH_PERIL
        self._option(options, &nxt, 0, L_NO)
        nxt.phase = PH_RISKROLL
        self._option(options, &nxt, 0, L_YES)

    cdef void _take_options(self, const Sit* s, vector[Option]& options):
        cdef vector[int16_t] takes
        cdef int n = _compositions(s.pos.pool, self.k, s.count, takes), c, i
        cdef Sit nxt
        for c in range(n):
            nxt = s[0]
            nxt.phase = PH_PERIL
            nxt.count = 0
            for i in range(self.k):
                nxt.pos.ph[i] += takes[c * self.k + i]
                nxt.pos.pool[i] -= takes[c * self.k + i]
            self._option(options, &nxt, 0, _dice_label(&takes[c * self.k], self.k))

    cdef void _fixed_take_next(self, Sit* s) noexcept:
        """The pre-peril situation after a fixed player's take (`_fixed_take_next`)."""
        cdef int16_t taken[MAXK]
        cdef int i
        _take_by_preference(s.pos.pool, self.k, s.count, self.risk_take_order, taken)
        for i in range(self.k):
            s.pos.ph[i] += taken[i]
            s.pos.pool[i] -= taken[i]
        s.phase = PH_PERIL
        s.count = 0

    cdef void _break_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt
        if s.pos.peril > 0:
            nxt = s[0]
            nxt.phase = PH_TEST
            nxt.pos.peril -= 1
            self._option(options, &nxt, 0, L_SECURITY)
        if s.pos.nchips > 0:
            nxt = s[0]
            nxt.phase = PH_TEST
            nxt.pos.nchips = 0
            self._option(options, &nxt, 0, L_DISCARD)
        if _any(s.pos.nh, self.k):
            nxt = s[0]
            nxt.phase = PH_GIVE
            self._option(options, &nxt, 0, L_FOOTDICE)
        if self._advantage_applicable(&s.pos):
            nxt = s[0]
            nxt.phase = PH_SWAP
            self._option(options, &nxt, 0, L_ADVANTAGE)
        if options.size() == 0:
            nxt = s[0]
            nxt.phase = PH_TEST
            self._option(options, &nxt, 0, L_NONE)

    cdef bint _advantage_applicable(self, const Pos* p) noexcept:
        cdef int h, r
        cdef int16_t out[MAXK]
        cdef int16_t into[MAXK]
        if self.player_decides:
            for h in range(self.k):
                if p.ph[h]:
                    for r in range(self.k):
                        if p.res[r] and h != r:
                            return True
            return False
        return self._greedy_swap(p, out, into) > 0

    cdef int _greedy_swap(self, const Pos* p, int16_t* out, int16_t* into) noexcept:
        """The fixed advantage: the worst hand die for the best reserve die while that
        improves the hand, twice at most; returns the swaps made."""
        cdef int16_t hand[MAXK]
        cdef int16_t reserve[MAXK]
        cdef int i, swaps = 0, worst, best, round_
        for i in range(self.k):
            hand[i] = p.ph[i]
            reserve[i] = p.res[i]
            out[i] = 0
            into[i] = 0
        for round_ in range(2):
            worst = -1
            best = -1
            for i in range(self.k):
                if hand[i] and (worst < 0 or self.rank[i] > self.rank[worst]):
                    worst = i
                if reserve[i] and (best < 0 or self.rank[i] < self.rank[best]):
                    best = i
            if worst < 0 or best < 0 or self.rank[best] >= self.rank[worst]:
                break
            hand[worst] -= 1
            reserve[worst] += 1
            hand[best] += 1
            reserve[best] -= 1
            out[worst] += 1
            into[best] += 1
            swaps += 1
        return swaps

    cdef void _swap_options(self, const Sit* s, vector[Option]& options):
        cdef vector[int16_t] outs, intos
        cdef int size, n_out, n_in, a, b, i
        cdef bint overlap
        cdef Sit nxt
        for size in (1, 2):
            n_out = _compositions(s.pos.ph, self.k, size, outs)
            n_in = _compositions(s.pos.res, self.k, size, intos)
            for a in range(n_out):
                for b in range(n_in):
                    overlap = False
                    for i in range(self.k):
                        if outs[a * self.k + i] and intos[b * self.k + i]:
                            overlap = True
                    if overlap:
                        continue
                    nxt = s[0]
                    nxt.phase = PH_TEST
                    for i in range(self.k):
                        nxt.pos.ph[i] += intos[b * self.k + i] - outs[a * self.k + i]
                        nxt.pos.res[i] += outs[a * self.k + i] - intos[b * self.k + i]
                    self._option(options, &nxt, 0, _swap_label(&outs[a * self.k], &intos[b * self.k], self.k))

    cdef void _give_options(self, const Sit* s, vector[Option]& options):
        cdef vector[int16_t] given
        cdef int total = _sum(s.pos.nh, self.k)
        cdef int n = _compositions(s.pos.nh, self.k, min(2, total), given), c, i
        cdef Sit nxt
        for c in range(n):
            nxt = s[0]
            nxt.phase = PH_TEST
            for i in range(self.k):
                nxt.pos.nh[i] -= given[c * self.k + i]
                nxt.pos.ph[i] += given[c * self.k + i]
            self._option(options, &nxt, 0, _dice_label(&given[c * self.k], self.k))

    cdef void _glitch_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt = s[0]
        nxt.phase = PH_HURT
        self._option(options, &nxt, 0, L_HURT)
        nxt.phase = PH_PLANS
        self._option(options, &nxt, 0, L_PLANS)
        if s.pos.wins >= 1:
            nxt.phase = PH_SIDESWIPE
            nxt.pos.wins -= 1
            self._option(options, &nxt, 0, L_SIDESWIPE)

    cdef void _hurt_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt = s[0]
        nxt.phase = PH_TEST
        nxt.pos.pchips += 2
        if self.injury_peril:
            nxt.pos.peril += 1
        self._option(options, &nxt, R_INJURY, L_INJURY)
        nxt = s[0]
        nxt.phase = PH_TEST
        self._option(options, &nxt, R_CONDITION, L_CONDITION)

    cdef void _plans_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt = s[0]
        nxt.phase = PH_PLANSTAKE if _sum(s.pos.pool, self.k) else PH_TEST
        self._option(options, &nxt, 0, L_DICE)
        nxt = s[0]
        nxt.phase = PH_TEST
        nxt.pos.peril += 1
        self._option(options, &nxt, 0, L_PERIL)

    cdef void _planstake_options(self, const Sit* s, vector[Option]& options):
        cdef vector[int16_t] taken
        cdef int total = _sum(s.pos.pool, self.k)
        cdef int n = _compositions(s.pos.pool, self.k, min(2, total), taken), c, i
        cdef Sit nxt
        for c in range(n):
            nxt = s[0]
            nxt.phase = PH_TEST
            for i in range(self.k):
                nxt.pos.pool[i] -= taken[c * self.k + i]
                nxt.pos.nh[i] += taken[c * self.k + i]
            self._option(options, &nxt, 0, _dice_label(&taken[c * self.k], self.k))

    cdef void _sideswipe_options(self, const Sit* s, vector[Option]& options):
        cdef Sit nxt = s[0]
        nxt.phase = PH_TEST
        nxt.pos.pchips += nxt.pos.nchips
        nxt.pos.nchips = 0
        self._option(options, &nxt, 0, L_CHIPS)
        nxt = s[0]
        nxt.phase = PH_SWIPEDICE if _any(s.pos.nh, self.k) else PH_TEST
        self._option(options, &nxt, 0, L_DICE)

    cdef int _fixed_choice(self, const Sit* s, vector[Option]& options) except -2:
        """The index of the option a fixed policy picks; -1 for a fair coin."""
        cdef uint64_t wanted = 0
        cdef int16_t taken[MAXK]
        cdef int16_t into[MAXK]
        cdef int i, j, total
        cdef int phase = s.phase
        if phase == PH_RISK:
            wanted = L_YES if self.risk_always else L_NO
        elif phase == PH_TAKE:
            _take_by_preference(s.pos.pool, self.k, s.count, self.risk_take_order, taken)
            wanted = _dice_label(taken, self.k)
        elif phase == PH_BREAK:
            for i in range(4):
                for j in range(options.size()):
                    if options[j].label == self.break_order[i]:
                        return j
        elif phase == PH_SWAP:
            self._greedy_swap(&s.pos, taken, into)
            wanted = _swap_label(taken, into, self.k)
        elif phase == PH_GIVE:
            _take_by_preference(s.pos.nh, self.k, 2, self.give_order, taken)
            wanted = _dice_label(taken, self.k)
        elif phase == PH_GLITCH:
            for i in range(3):
                for j in range(options.size()):
                    if options[j].label == self.glitch_order[i]:
                        return j
        elif phase == PH_HURT:
            if self.narrator_random:
                return -1
            wanted = self.hurt_choice
        elif phase == PH_PLANS:
            if self.narrator_random:
                return -1
            wanted = self.plans_choice
        elif phase == PH_PLANSTAKE:
            total = _sum(s.pos.pool, self.k)
            _take_by_preference(s.pos.pool, self.k, min(2, total), self.plans_take_order, taken)
            wanted = _dice_label(taken, self.k)
        elif phase == PH_SIDESWIPE:
            wanted = self.sideswipe_take
        elif phase == PH_SWIPEDICE:
            total = _sum(s.pos.nh, self.k)
            if self.picker_player:
                _take_by_preference(s.pos.nh, self.k, min(2, total), self.best_first, taken)
            else:
                _take_by_preference(s.pos.nh, self.k, min(2, total), self.give_order, taken)
            wanted = _dice_label(taken, self.k)
        for j in range(options.size()):
            if options[j].label == wanted:
                return j
        raise InternalError(f"the fixed policy's choice {wanted} is not among the options at phase {phase}")

    # ----- expanding a node ------------------------------------------------------------------

    cdef int _expand_round_start(self, int64_t node, Sit* s) except -1:
        """`KarbonModel._round_start_chance`: the roll, then the rest of the round after each
        roll outcome (remembered per post-roll situation), summed into the node's edges here,
        or spooled for the summing thread.

        A post-roll situation differs from the round start only in the hands, the chips,
        the stacks (folded, `_fold`) and the winner, so it is remembered under the round
        start's other fields (a context, packed once a node) and those few numbers. The
        rests are looked up a few outcomes ahead of their use, their slots and branches
        fetched from memory ahead of that again (`_look_ahead`): the look-ups, in a table
        too large for the cache, are what exploring waits on.

        Where each rest is the one edge to the post-roll state (the cut after the roll, or
        a deciding player), the outcomes' edges are appended without being merged
        (`outcomes_distinct`): a roll table's entries differ in the hands after the roll
        (the turncoats offered, and by whom) or, with the same hands, in the winner or the
        hits gained, and the post-roll state keeps the hands, the winner and the chips
        (with the same hands and winner, the same stacks folded in), uncapped: no two
        outcomes reach one state."""
        cdef int64_t table = self._roll_table(&s.pos)
        cdef int64_t first = self.roll_start[table], length = self.roll_length[table], e
        cdef const RestSlot* rest
        cdef PendingRest* pending
        cdef Work* work
        cdef int64_t start
        cdef int32_t count, exponent
        cdef bint spooled = self.threaded
        self._pending_keys(s, first, length)
        for e in range(min(length, ROLL_AHEAD)):
            self.rests.prefetch(self.pending[e].hash)
        if spooled:
            self._head(node, W_CHANCE, 0, length)
        else:
            self.sum_acc.reset()
        for e in range(length):
            self._look_ahead(e, length)
            pending = &self.pending[e]
            rest = pending.found if pending.moves == self.rests.moves else NULL
            if rest == NULL:
                rest = self.rests.find(pending.key, pending.hash)
            if rest == NULL:
                self._rest_of_round(s, &self.roll_entries[first + e], pending.key)
                rest = self.rests.find(pending.key, pending.hash)
            start, count, exponent = rest.start, rest.length, rest.exponent
            if not spooled:
                if self.outcomes_distinct:  # each rest is one edge, to the post-roll state
                    if count != ONE_EDGE:
                        raise InternalError("a rest of several edges where each is one edge")
                    self.sum_acc.append_distinct(start, exponent, self.roll_entries[first + e].weight)
                else:
                    self._sum_rest(self.roll_entries[first + e].weight, start, count, exponent)
                continue
            work = self._work()
            work.weight = self.roll_entries[first + e].weight
            work.start, work.count, work.extra = start, count, exponent
        return 0 if spooled else self._record_chance(node)

    cdef void _look_ahead(self, int64_t e, int64_t length) noexcept nogil:
        """While outcome ``e`` is summed: fetch the slot of outcome ``e + ROLL_AHEAD`` and
        look up the rest of outcome ``e + FIND_AHEAD`` (its slot fetched by now), fetching
        the start of its branches."""
        cdef PendingRest* ahead
        if e + ROLL_AHEAD < length:
            self.rests.prefetch(self.pending[e + ROLL_AHEAD].hash)
        if e + FIND_AHEAD < length:
            ahead = &self.pending[e + FIND_AHEAD]
            ahead.found = self.rests.find(ahead.key, ahead.hash)
            ahead.moves = self.rests.moves
            if ahead.found != NULL and ahead.found.length > 0:
                exd_prefetch(&self.rest_branches[ahead.found.start])

    cdef int _pending_keys(self, const Sit* s, int64_t first, int64_t length) except -1:
        """The key of the rest of round after each roll outcome of the round start ``s``."""
        cdef const Pos* p = &s.pos
        cdef uint64_t context = self._context(s)
        cdef const RollEntry* entry
        cdef PendingRest* pending
        cdef int64_t pchips, nchips, e
        cdef int32_t pstack, nstack
        self.pending.resize(length)
        for e in range(length):
            entry = &self.roll_entries[first + e]
            exd_prefetch(entry + ROLL_AHEAD)  # a prefetch past the table's end does not fault
            pchips, nchips, pstack, nstack = p.pchips + entry.gain_p, p.nchips + entry.gain_n, p.pstack, p.nstack
            if self.fold_chips and not (entry.hands_empty and not p.peril):
                if entry.winner != WIN_N and pstack:
                    pchips += pstack
                    pstack = 0
                if entry.winner != WIN_P and nstack and not (self.peril_to_stack and p.peril):
                    nchips += nstack
                    nstack = 0
            if pchips >= (1 << 24) or nchips >= (1 << 24):
                raise WalkOverflow("chips in hand past 2**24")
            pending = &self.pending[e]
            pending.key[0] = (context << 32) | <uint64_t>entry.hands_token
            pending.key[1] = (<uint64_t>entry.winner | (<uint64_t>pchips << 2) | (<uint64_t>nchips << 26)
                              | (<uint64_t>pstack << 50) | (<uint64_t>nstack << 54))
            pending.hash = self.rests.hash(pending.key)
            pending.found = NULL
            pending.moves = -1
        return 0

    cdef uint64_t _context(self, const Sit* s) except? 0xFFFFFFFFFFFFFFFF:
        """A number for the round start's fields that a roll does not change."""
        cdef Sit context = s[0]
        cdef uint64_t key[MAXW]
        cdef bint added
        cdef int i
        for i in range(self.k):
            context.pos.ph[i] = 0
            context.pos.nh[i] = 0
        context.pos.pchips = context.pos.nchips = 0
        context.pos.pstack = context.pos.nstack = 0
        self._pack(&context, key)
        cdef int64_t number = self.contexts.add(key, &added)
        if number >= (1 << 31):
            raise WalkOverflow("more than 2**31 round-start contexts")
        return <uint64_t>number

    cdef int _rest_of_round(self, const Sit* s, const RollEntry* entry, const uint64_t* key) except -1:
        """Remember the round after one roll outcome, with the round counted: its branches
        over one power of two (the rests forgotten all at once past ``rest_kept``
        branches); with the cut after the roll (``split_rolls``) or a deciding player,
        the one edge to the post-roll (risk) situation."""
        cdef Sit risk
        cdef size_t i
        if <int64_t>self.rest_branches.size() + self.rests.count > self.rest_kept:
            self._drain()  # the spool may name the branches
            self.rests.clear()
            self.rest_branches.clear()
            self.rest_clears += 1
        self._after_roll(&s.pos, entry, &risk)
        cdef int64_t start = self.rest_branches.size()
        if self.split_rolls or self.player_decides:
            self.rests.add(key, self._intern(&risk), ONE_EDGE, self._reward_code(R_ROUND),
                           self.rest_branches.size())
            return 0
        # walked into the scratch branches: the node's own are in use
        self.scratch_acc.reset()
        self.acc = self.scratch_acc
        try:
            self._walk(risk, 1, 0, R_ROUND, False)
        finally:
            self.acc = self.walk_acc
        if self.threaded and self.rest_branches.size() + self.scratch_acc.items.size() > self.rest_branches.capacity():
            self._drain()  # the summing side reads the branches where they are
        for i in range(self.scratch_acc.items.size()):
            self.rest_branches.push_back(self.scratch_acc.items[i])
        self.rests.add(key, start, self.scratch_acc.items.size(), self.scratch_acc.exponent,
                       self.rest_branches.size())
        return 0

    # ----- the spool: the expanding side -----------------------------------------------------

    cdef inline Work* _work(self) except NULL:
        """The next item of the spool, to be filled before anything else is spooled."""
        if self.written >= self.room_until:
            self._make_room()
        cdef Work* work = &self.spool[self.written & (SPOOL_SIZE - 1)]
        # the line the summing thread read last: taken back for writing ahead of its use
        exd_prefetch_write(&self.spool[(self.written + WRITE_AHEAD) & (SPOOL_SIZE - 1)])
        self.written += 1
        return work

    cdef int _head(self, int64_t node, int32_t what, int32_t extra, int64_t items) except -1:
        cdef Work* work = self._work()
        work.start, work.count, work.extra, work.weight = node, what, extra, <u128>items
        return 0

    cdef int _spool_branches(self, int64_t node) except -1:
        """The walk's branches (``walk_acc``) as the node's items."""
        cdef _Acc acc = self.walk_acc
        cdef size_t i
        cdef Work* work
        self._head(node, W_CHANCE, acc.exponent, acc.items.size())
        for i in range(acc.items.size()):
            work = self._work()
            work.start, work.count = acc.items[i].target, W_ITEM
            work.extra, work.weight = acc.items[i].reward_code, acc.items[i].weight
        return 0

    cdef int _spool_option(self, int64_t target, int32_t code, uint64_t label) except -1:
        cdef Work* work = self._work()
        work.start, work.count, work.extra, work.weight = target, W_OPTION, code, label
        return 0

    cdef int _make_room(self) except -1:
        """Wait for the summing side to read the oldest items (sum them, in this thread)."""
        if not self.threaded:
            self._sum_spool(self.written)
            self.room_until = self.written + SPOOL_SIZE
            return 0
        self._wait_summed(self.written - SPOOL_SIZE + 1)
        self.room_until = exd_load(&self.summed) + SPOOL_SIZE
        return 0

    cdef int _drain(self) except -1:
        """Wait until the summing side has read every item (and sum them, in this thread);
        the summing side reads nothing until more is published."""
        if self.threaded:
            self._wait_summed(self.written)
        else:
            self._sum_spool(self.written)
        return self._flush_big()

    cdef int _wait_summed(self, int64_t wanted) except -1:
        """Publish every item written and wait until the summing thread has read ``wanted``."""
        exd_store(&self.published, self.written)
        with nogil:
            _wait_for(&self.summed, wanted, &self.summing_failed)
        return self._summing_error()

    cdef int _summing_error(self) except -1:
        if exd_load(&self.summing_failed):
            self._stop_summing(True)
            raise self.summing_error
        return 0

    cdef bint _node_arrays_full(self) noexcept nogil:
        """Whether adding a node moves an array the summing side writes into."""
        return (self.kind.size() == self.kind.capacity() or self.data.size() == self.data.capacity()
                or self.first_edge.size() == self.first_edge.capacity()
                or self.edge_count.size() == self.edge_count.capacity()
                or (self.keep_rewards and (self.mass.size() + REWARD_COUNTERS > self.mass.capacity()
                                           or self.has_mass.size() == self.has_mass.capacity())))

    cdef int _flush_big(self) except -1:
        """The numbers past 64 bits the summing side noted, into `big` and `big_mass`."""
        cdef size_t i = 0, at = 0
        cdef int64_t node, count, j
        while i < self.big_notes.size():
            node, count = self.big_notes[i], self.big_notes[i + 2]
            values = [_to_python(self.big_values[at + j]) for j in range(count)]
            if self.big_notes[i + 1] == 0:
                self.big[node] = (values[0], values[1:])
            else:
                self.big_mass[node] = tuple(values)
            i += 3
            at += count
        self.big_notes.clear()
        self.big_values.clear()
        return 0

    # ----- the spool: the summing side -------------------------------------------------------

    cdef int _sum_spool(self, int64_t until) except -1 nogil:
        """Sum the spooled items up to ``until`` into their nodes' edges, recording each node
        when its last item is read (`_record_chance`)."""
        cdef const Work* work
        cdef const Work* ahead
        while self.sum_read < until:
            work = &self.spool[self.sum_read & (SPOOL_SIZE - 1)]
            self.sum_read += 1
            if not self.sum_open:
                self.sum_open = True
                self.sum_node, self.sum_kind, self.sum_extra = work.start, work.count, work.extra
                self.sum_left = <int64_t>work.weight
                if self.sum_kind == W_CHANCE:
                    self.sum_acc.reset()
                elif self.sum_kind == W_DECISION:
                    self.begin_edges(self.sum_node, DECISION, self.sum_extra)
            else:
                self.sum_left -= 1
                if work.count >= ONE_EDGE:
                    if self.sum_read + SUM_AHEAD < until:
                        ahead = &self.spool[(self.sum_read + SUM_AHEAD) & (SPOOL_SIZE - 1)]
                        if ahead.count > 0:
                            exd_prefetch(&self.rest_branches[ahead.start])
                            if ahead.count > 2:
                                exd_prefetch(&self.rest_branches[ahead.start + 2])
                    self._sum_rest(work.weight, work.start, work.count, work.extra)
                elif work.count == W_ITEM:
                    self.sum_acc.add(work.start, work.extra, work.weight, self.sum_extra)
                elif work.count == W_OPTION:
                    self.label_edges.push_back(self.targets.size())
                    self.labels.push_back(<uint64_t>work.weight)
                    self.label_rewards.push_back(work.extra)
                    self.targets.push_back(<int32_t>work.start)
                    self.weights.push_back(1)
            if self.sum_left == 0:
                self.sum_open = False
                if self.sum_kind == W_CHANCE:
                    self._record_chance(self.sum_node)
                elif self.sum_kind == W_DECISION:
                    self.end_edges(self.sum_node)
                else:
                    self.begin_edges(self.sum_node, TERMINAL, self.sum_extra)
                    self.end_edges(self.sum_node)
        return 0

    cdef inline int _sum_rest(self, u128 weight, int64_t start, int32_t count, int32_t exponent) except -1 nogil:
        """Add a roll outcome's rest of round (`Work`), times the outcome's weight."""
        cdef int64_t j
        cdef u128 w
        if count == ONE_EDGE:
            return self.sum_acc.add(start, exponent, weight, 0)
        for j in range(start, start + count):
            if exd_mul(weight, self.rest_branches[j].weight, &w):
                _overflow("a node's weights pass 128 bits")
            self.sum_acc.add(self.rest_branches[j].target, self.rest_branches[j].reward_code, w, exponent)
        return 0

    cdef int _summing_loop(self) except -1 nogil:
        """The summing thread: sum what is published until told to stop."""
        cdef int64_t until, stop
        cdef int rounds = 0
        while True:
            # the stop is read before what is published: the expanding side publishes its
            # last items before it says stop, so once stop is seen, `published` is final
            stop = exd_load(&self.stop_summing)
            if stop == 2:
                return 0
            until = exd_load(&self.published)
            if self.sum_read < until:
                self.summed_in_thread += until - self.sum_read
                self._sum_spool(until)
                exd_store(&self.summed, self.sum_read)
                rounds = 0
            elif stop:
                return 0
            else:
                rounds = exd_idle(rounds)

    def _summing_main(self):
        try:
            with nogil:
                self._summing_loop()
        except BaseException as error:
            self.summing_error = error
            exd_store(&self.summing_failed, 1)

    cdef int _start_summing(self) except -1:
        """Sum in a second thread from here on."""
        import threading
        self._drain()
        exd_store(&self.summed, self.sum_read)
        exd_store(&self.published, self.written)
        self.room_until = self.written + SPOOL_SIZE
        self.stop_summing = 0
        self.summing_failed = 0
        thread = threading.Thread(target=self._summing_main, name="exactdice-walk-summing", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: go on in this one
            return 0
        self.summing_thread = thread
        self.threaded = True
        return 0

    cdef int _stop_summing(self, bint abandon) except -1:
        """Stop the summing thread: after it has summed every item, or at once (``abandon``;
        the walk cannot go on)."""
        if self.summing_thread is None:
            return 0
        exd_store(&self.published, self.written)
        exd_store(&self.stop_summing, 2 if abandon else 1)
        thread, self.summing_thread = self.summing_thread, None
        self.threaded = False
        self.broken = True  # until every item is summed
        try:
            thread.join()
        except BaseException:  # (Ctrl-C while waiting) stop it at once
            exd_store(&self.stop_summing, 2)
            thread.join()
            raise
        if abandon:
            return 0
        if exd_load(&self.summing_failed):
            raise self.summing_error
        if self.sum_read != self.written or self.sum_open:
            raise InternalError(f"the summing thread stopped at item {self.sum_read} of {self.written}")
        self.broken = False
        self._flush_big()
        return 0

    cdef int _record_chance(self, int64_t node) except -1 nogil:
        """Store the summed branches as the node's edges: weights divided by their gcd over
        (successor, rewards), as `KarbonModel` normalises them, then summed per successor
        (`exactdice.markov.graph.BranchMerger`) with the reward mass."""
        cdef Branch* items = self.sum_acc.items.data()
        cdef size_t i, n = self.sum_acc.items.size()
        cdef u128 divisor = 0, total = 0, w, m
        for i in range(n):
            if divisor == 1:
                break
            divisor = exd_gcd(items[i].weight, divisor)
        if divisor == 0:
            with gil:
                raise InternalError("a chance node without branches")
        cdef bint any_mass = False, big_weight = False
        cdef bint mixed = self.sum_acc.mixed_codes
        cdef const uint64_t* values = self.reward_values.data()
        cdef int64_t target
        self.begin_edges(node, CHANCE, 0)
        self.merged.reset()
        for i in range(n):  # a small table per node: its successors stay in the cache
            w = items[i].weight if divisor == 1 else items[i].weight // divisor
            items[i].weight = w
            if exd_add(total, w, &m):
                _overflow("a node's weights pass 128 bits")
            total = m
            if mixed:  # else the items are the edges (one code: distinct successors)
                self.merged.add(items[i].target, 0, w, 0)
                if values[items[i].reward_code]:
                    any_mass = True
        if not mixed:
            any_mass = values[items[0].reward_code] != 0
        cdef const Branch* edges = self.merged.items.data() if mixed else items
        cdef size_t count = self.merged.items.size() if mixed else n
        cdef int32_t* edge_targets = self.targets.extend(count)
        cdef int64_t* edge_weights = self.weights.extend(count)
        for i in range(count):
            target = edges[i].target
            if target > 0x7FFFFFFF:
                _overflow("more than 2**31 states")
            edge_targets[i] = <int32_t>target
            w = edges[i].weight
            if exd_hi(w) or exd_lo(w) >> 63:
                big_weight = True
                edge_weights[i] = -1
            else:
                edge_weights[i] = <int64_t>w
        self.data[node] = <int64_t>total if exd_bits(total) <= 63 else -1
        if big_weight or exd_bits(total) > 63:
            self.big_notes.push_back(node)
            self.big_notes.push_back(0)
            self.big_notes.push_back(1 + count)
            self.big_values.push_back(total)
            for i in range(count):
                self.big_values.push_back(edges[i].weight)
        self.end_edges(node)
        if self.keep_rewards:
            self.has_mass[node] = any_mass
            self._record_mass(node, any_mass, total)
        return 0

    cdef int _record_mass(self, int64_t node, bint any_mass, u128 total) except -1 nogil:
        """The node's reward mass per counter: sum(weight * amount) over its branches (their
        weights normalised, summing to ``total``), the weights summed per reward first."""
        cdef const Branch* items = self.sum_acc.items.data()
        cdef const uint64_t* values = self.reward_values.data()
        cdef u128 masses[REWARD_COUNTERS]
        cdef u128 product, m
        cdef uint64_t amount
        cdef size_t i, n = self.sum_acc.items.size()
        cdef int c
        cdef int32_t code
        cdef bint big_mass = False
        for c in range(REWARD_COUNTERS):
            masses[c] = 0
        if any_mass:
            if self.code_weights.size() < self.reward_values.size():
                self.code_weights.resize(self.reward_values.size(), 0)
            for i in range(self.codes_met.size()):  # the last node's sums, zeroed
                self.code_weights[self.codes_met[i]] = 0
            self.codes_met.clear()
            if self.sum_acc.mixed_codes:
                for i in range(n):  # (each sum is at most ``total``)
                    code = items[i].reward_code
                    if self.code_weights[code] == 0:
                        self.codes_met.push_back(code)
                    self.code_weights[code] += items[i].weight
            else:
                self.codes_met.push_back(items[0].reward_code)
                self.code_weights[items[0].reward_code] = total
            for i in range(self.codes_met.size()):
                code = self.codes_met[i]
                for c in range(REWARD_COUNTERS):
                    amount = (values[code] >> (8 * c)) & 0xFF
                    if amount:
                        if exd_mul(self.code_weights[code], amount, &product) or exd_add(masses[c], product, &m):
                            _overflow("a node's reward mass passes 128 bits")
                        masses[c] = m
        for c in range(REWARD_COUNTERS):
            if exd_bits(masses[c]) > 63:
                big_mass = True
            self.mass[REWARD_COUNTERS * node + c] = <int64_t>masses[c] if exd_bits(masses[c]) <= 63 else -1
        if big_mass:
            self.big_notes.push_back(node)
            self.big_notes.push_back(1)
            self.big_notes.push_back(REWARD_COUNTERS)
            for c in range(REWARD_COUNTERS):
                self.big_values.push_back(masses[c])
        return 0

    # ----- a node's work ------------------------------------------------------------------

    cdef int _expand(self, int64_t node, Sit* s) except -1:
        """Record the node, or spool its work (its roll outcomes' rests, its branches, its
        options) for the summing side to record."""
        cdef vector[Option]* options = &self.option_lists[0]
        cdef int side
        self.walk_depth = 0
        if s.phase == PH_POS:
            return self._expand_round_start(node, s)
        if s.phase == PH_END:
            return self._head(node, W_TERMINAL, s.count, 0)
        if s.phase == PH_EXTERNAL:
            return self._expand_external(node, s.count)
        if PH_RISK <= s.phase <= PH_SWIPEDICE:
            options.reserve(OPTIONS_KEPT)
            options.clear()
            side = self._options(s, options[0])
            if side != SIDE_NONE and options.size() > 1:
                return self._spool_decision(node, side, options[0])
        if self.threaded:
            self.walk_acc.reset()
            self._walk(s[0], 1, 0, 0, True)
            return self._spool_branches(node)
        self.sum_acc.reset()  # summed where they are walked
        self.acc = self.sum_acc
        try:
            self._walk(s[0], 1, 0, 0, True)
        finally:
            self.acc = self.walk_acc
        return self._record_chance(node)

    cdef int _spool_decision(self, int64_t node, int side, vector[Option]& options) except -1:
        """A decision node: each option an edge (`KarbonModel._action`): straight to the
        next node where what follows the option is certain."""
        cdef size_t i
        cdef Sit target
        cdef uint64_t reward
        cdef int64_t id
        self._head(node, W_DECISION, side, options.size())
        for i in range(options.size()):
            target = options[i].nxt
            reward = options[i].reward
            id = -1
            if target.phase == PH_PERIL or target.phase == PH_RISKROLL or target.phase == PH_TEST:
                id = self._certain_target(&target, &reward)
            if id < 0:
                id = self._intern(&target)
            self._spool_option(id, self._reward_code(reward), options[i].label)
        return 0

    cdef int64_t _certain_target(self, Sit* s, uint64_t* reward) except -2:
        """The node an option leads to for certain (one branch of probability 1), adding
        its rewards; -1 when a chance event or an open decision follows."""
        cdef int64_t result = -1
        self.scratch_acc.reset()
        self.acc = self.scratch_acc
        try:
            self._walk(s[0], 1, 0, 0, False)
        finally:
            self.acc = self.walk_acc
        if (self.scratch_acc.items.size() == 1
                and self.scratch_acc.items[0].weight == exd_shl(1, self.scratch_acc.exponent)):
            result = self.scratch_acc.items[0].target
            reward[0] += self.reward_values[self.scratch_acc.items[0].reward_code]
        return result

    # ----- external nodes (the draws) ----------------------------------------------------------

    def add_external(self, situation, side, actions):
        """Declare a node given from Python: ``side`` "max"/"min" (a decision) or "chance";
        ``actions`` ``(label, successor situation, weight)``; returns its number."""
        number = len(self.external_nodes)
        self.external_nodes.append((side, tuple(actions)))
        self.external_keys.append(situation)
        self.external_index[situation] = number
        return number

    cdef int _expand_external(self, int64_t node, int number) except -1:
        side, actions = self.external_nodes[number]
        cdef Sit target
        if side == "chance":
            self.walk_acc.reset()
            for label, successor, weight in actions:
                self._situation_from_python(successor, &target)
                self.walk_acc.add(self._intern(&target), 0, weight, 0)
            return self._spool_branches(node)
        self._head(node, W_DECISION, SIDE_MAX if side == "max" else SIDE_MIN, len(actions))
        for index, (label, successor, weight) in enumerate(actions):
            self._situation_from_python(successor, &target)
            self._spool_option(self._intern(&target), 0, TAG_EXTERNAL | ((<uint64_t>number) << 16) | <uint64_t>index)
        return 0

    # ----- Python situations <-> packed ----------------------------------------------------------

    cdef int _situation_from_python(self, situation, Sit* s) except -1:
        memset(s, 0, sizeof(Sit))
        number = self.external_index.get(situation) if type(situation) is tuple else None
        if number is not None:
            s.phase = PH_EXTERNAL
            s.count = number
            return 0
        if len(situation) == 12 and not isinstance(situation[0], str):  # a Position
            self._position_from_python(situation, &s.pos)
            s.phase = PH_POS
            return 0
        phase = situation[0]
        if phase == "end":
            s.phase = PH_END
            s.count = ("win", "loss", "tie").index(situation[1])
            return 0
        s.phase = _PHASES[phase]
        self._position_from_python(situation[1], &s.pos)
        if s.phase in (PH_RISK, PH_PERIL, PH_RISKROLL):
            s.winner = _WINNERS.index(situation[2])
        elif s.phase == PH_TAKE:
            s.winner = _WINNERS.index(situation[2])
            s.count = situation[3]
        else:
            self._queue_from_python(situation[2], s)
        return 0

    cdef int _queue_from_python(self, queue, Sit* s) except -1:
        queue = tuple(queue)
        if "place" in queue:
            at = queue.index("place")
            if queue[:at] != ("G",) * at or len(queue) != at + 2:
                raise ValueError(f"queue {queue!r} is not one the walk makes")
            s.qpre, s.qa, s.qwin = 1, at, _WINNERS.index(queue[at + 1])
            return 0
        breaks, glitches = queue.count("B"), queue.count("G")
        expected = (("B",) * breaks + ("G",) * glitches if self.player_first
                    else ("G",) * glitches + ("B",) * breaks)
        if queue != expected:
            raise ValueError(f"queue {queue!r} is not one the walk makes")
        s.qpre, s.qa, s.qb = 0, breaks, glitches
        return 0

    cdef int _position_from_python(self, position, Pos* p) except -1:
        cdef int i
        for i in range(self.k):
            p.ph[i] = position[0][i]
            p.nh[i] = position[1][i]
            p.pool[i] = position[2][i]
            p.res[i] = position[3][i]
        p.pchips, p.nchips, p.pstack, p.nstack = position[4], position[5], position[6], position[7]
        p.wins, p.losses, p.peril, p.track = position[8], position[9], position[10], position[11]
        return 0

    cdef object _position_to_python(self, const Pos* p):
        cdef int i
        cdef tuple fields = (tuple([p.ph[i] for i in range(self.k)]), tuple([p.nh[i] for i in range(self.k)]),
                  tuple([p.pool[i] for i in range(self.k)]), tuple([p.res[i] for i in range(self.k)]),
                  p.pchips, p.nchips, p.pstack, p.nstack, p.wins, p.losses, p.peril, p.track)
        return tuple.__new__(_Position, fields)

    cdef object _queue_to_python(self, const Sit* s):
        if s.qpre:
            return ("G",) * s.qa + ("place", _WINNERS[s.qwin])
        if self.player_first:
            return ("B",) * s.qa + ("G",) * s.qb
        return ("G",) * s.qb + ("B",) * s.qa

    cdef object _situation_to_python(self, const Sit* s):
        if s.phase == PH_EXTERNAL:
            return self.external_keys[s.count]
        if s.phase == PH_POS:
            return self._position_to_python(&s.pos)
        if s.phase == PH_END:
            return ("end", ("win", "loss", "tie")[s.count])
        name = _PHASE_NAMES[s.phase]
        position = self._position_to_python(&s.pos)
        if s.phase in (PH_RISK, PH_PERIL, PH_RISKROLL):
            return (name, position, _WINNERS[s.winner])
        if s.phase == PH_TAKE:
            return (name, position, _WINNERS[s.winner], s.count)
        return (name, position, self._queue_to_python(s))

    def state(self, int64_t node):
        """The situation of node ``node`` as the Python walk names it."""
        cdef Sit s
        if not 0 <= node < self.states.count:
            raise IndexError(node)
        self._unpack(&self.states.keys[node * self.width], &s)
        return self._situation_to_python(&s)

    def node_of(self, situation):
        """The node id of a situation (as the Python walk names it), or -1."""
        cdef Sit s
        cdef uint64_t key[MAXW]
        try:
            self._situation_from_python(situation, &s)
            self._pack(&s, key)
        except (ValueError, TypeError, IndexError, KeyError, WalkOverflow, OverflowError):
            return -1
        self.states.restore_slots()
        return self.states.find(key)

    def action_label(self, int64_t edge):
        """The label (see `label`) of decision edge ``edge``."""
        cdef int64_t low = 0, high = self.label_edges.size(), middle
        while low < high:
            middle = (low + high) // 2
            if self.label_edges[middle] < edge:
                low = middle + 1
            else:
                high = middle
        if low >= <int64_t>self.label_edges.size() or self.label_edges[low] != edge:
            raise KeyError(edge)
        return self.label(self.labels[low])

    def first_edge_of(self, int64_t node):
        """The first edge of an expanded node (-1 for a frontier node)."""
        return self.first_edge[node]

    def node_edges(self, int64_t node):
        """(kind, data, [(target, weight), ...]) of an expanded node (kind as `GrowingGraph`)."""
        cdef int64_t first = self.first_edge[node], edge
        return (self.kind[node], self.data[node],
                [(self.targets[edge], self.weights[edge]) for edge in range(first, first + self.edge_count[node])]
                if first >= 0 else [])

    def label(self, uint64_t label):
        """An option's label: a word, a dice composition (counts), a swap (out, into) or an
        external action's name."""
        cdef uint64_t tag = label & TAG_MASK
        cdef int i
        if tag == 0:
            return _WORDS[label]
        if tag == TAG_DICE:
            return ("dice", tuple([(label >> (8 * i)) & 0xFF for i in range(self.k)]))
        if tag == TAG_SWAP:
            return ("swap", tuple([(label >> (4 * i + 32)) & 0xF for i in range(self.k)]),
                    tuple([(label >> (4 * i)) & 0xF for i in range(self.k)]))
        number, index = (label >> 16) & 0xFFFFFFFF, label & 0xFFFF
        return self.external_nodes[number][1][index][0]

    # ----- exploring ---------------------------------------------------------------------------

    def start(self, initial, int64_t max_states):
        """Find the initial situation (node 0) and set the state limit."""
        cdef Sit s
        self.max_states = max_states
        self.states.restore_slots()
        self._situation_from_python(initial, &s)
        if s.phase == PH_POS and self.cap_chips:
            self._capped(&s.pos)
        self._intern(&s)

    cdef int expand(self, int64_t node) except -1:
        cdef Sit s
        if self.broken:
            raise InternalError("the walk was stopped in the middle of a node and cannot go on")
        if self.spool.empty():  # (freed with the caches, as the situation table's slots)
            self.spool.resize(SPOOL_SIZE)
            self.states.restore_slots()
        self._unpack(&self.states.keys[node * self.width], &s)
        self._expand(node, &s)
        if self.threaded:
            exd_store(&self.published, self.written)
            return self._summing_error()
        self._sum_spool(self.written)
        self._flush_big()
        self.written = self.sum_read = 0  # nothing is open: the ring's first items stay in the cache
        self.room_until = SPOOL_SIZE
        return 0

    def explore(self, initial, int64_t max_states, check=None, int64_t check_every=1024):
        """Visit every situation reachable from ``initial``, breadth first.

        ``check(expanded, found)`` is called every ``check_every`` expansions (progress,
        memory, time limits: it may raise). Raises `StateLimit` past ``max_states``.
        """
        cdef int64_t node = 0, summing_after = self.summing_after
        self.start(initial, max_states)
        try:
            while node < self.states.count:
                if summing_after >= 0 and <int64_t>self.targets.size() >= summing_after:
                    summing_after = -1
                    self._start_summing()
                if self.kind[node] == FRONTIER:
                    self.expand(node)
                node += 1
                if not node % check_every:
                    PyErr_CheckSignals()
                    if check is not None:
                        check(node, self.states.count)
        except BaseException:
            self._stop_summing(True)
            raise
        self._stop_summing(False)
        if check is not None:
            check(node, self.states.count)
        return node

    # ----- the graph's arrays --------------------------------------------------------------------

    @property
    def external_count(self):
        """Nodes declared from Python (`add_external`)."""
        return len(self.external_nodes)

    @property
    def num_states(self):
        return self.states.count

    @property
    def num_transitions(self):
        return self.targets.size()

    def memory_bytes(self):
        """Bytes held now by the graph, the situation table and the caches."""
        return sum(self.memory_parts().values())

    def memory_parts(self):
        """`memory_bytes` by array (for measurements): the graph's, the situation table's
        keys and slots, and the caches'."""
        return {
            "state keys": 8 * self.states.keys.capacity(), "state slots": 4 * self.states.slots.capacity(),
            "kind": self.kind.capacity(), "data": 8 * self.data.capacity(),
            "first edges": 8 * self.first_edge.capacity(), "edge counts": 4 * self.edge_count.capacity(),
            "targets": 4 * self.targets.size(), "weights": 8 * self.weights.size(),  # mapped: unwritten room is free
            "masses": 8 * self.mass.capacity() + self.has_mass.capacity(),
            "labels": 8 * self.label_edges.capacity() + 8 * self.labels.capacity() + 4 * self.label_rewards.capacity(),
            "roll tables": sizeof(RollEntry) * self.roll_entries.size() + self.roll_keys.bytes(),
            "rests": sizeof(Branch) * self.rest_branches.capacity() + self.rests.bytes(),
            "spool": sizeof(Work) * self.spool.capacity(),
        }

    # ----- the graph's arrays --------------------------------------------------------------------

    def stats(self):
        """Sizes of the caches (for measurements)."""
        return {"roll_tables": self.roll_keys.count, "roll_entries": self.roll_entries.size(),
                "rests": self.rests.count, "rest_branches": self.rest_branches.size(),
                "rest_clears": self.rest_clears, "rests_made_ahead": self.rests.made_ahead,
                "rests_grown_ahead": self.rests.grown_ahead,
                "summed_in_thread": self.summed_in_thread,
                "reward_codes": self.reward_values.size()}

    def drop_caches(self):
        """Free the roll tables, the remembered rests of rounds and the situation table's
        hash slots once exploring is over (node ids still decode; `node_of` and exploring
        further make the slots again)."""
        self.roll_keys.clear()
        self.roll_entries.clear()
        self.roll_entries.shrink_to_fit()
        self.roll_start.clear()
        self.roll_length.clear()
        self.rests.clear()
        self.rest_branches.clear()
        self.rest_branches.shrink_to_fit()
        self.pending.clear()
        self.pending.shrink_to_fit()
        self.spool.clear()
        self.spool.shrink_to_fit()
        self.hand_ids.clear()
        self.contexts.clear()
        self.kind.shrink_to_fit()
        self.data.shrink_to_fit()
        self.first_edge.shrink_to_fit()
        self.edge_count.shrink_to_fit()
        self.targets.shrink_to_fit()
        self.weights.shrink_to_fit()
        self.mass.shrink_to_fit()
        self.has_mass.shrink_to_fit()
        self.states.drop_slots()

    def views(self):
        """The graph's arrays as numpy views of the walk's own memory (no copy; the walk
        must outlive them and explore no further), and the numbers past 64 bits."""
        import numpy
        return {
            "kind": _view_uint8(self.kind), "data": _view_int64(self.data.data(), self.data.size()), "offsets": self._offsets(),
            "targets": _view_int32(self.targets.data(), self.targets.size()),
            "weights": _view_int64(self.weights.data(), self.weights.size()),
            "mass": _view_int64(self.mass.data(), self.mass.size()).reshape(-1, REWARD_COUNTERS) if self.keep_rewards else None,
            "has_mass": _view_uint8(self.has_mass).view(numpy.bool_) if self.keep_rewards else None,
            "label_edges": _view_int64(self.label_edges.data(), self.label_edges.size()),
            "labels": [self.labels[i] for i in range(self.labels.size())],
            "label_rewards": [self.label_rewards[i] for i in range(self.label_rewards.size())],
            "reward_values": [self.reward_values[i] for i in range(self.reward_values.size())],
            "big": self.big, "big_mass": self.big_mass,
        }

    def _offsets(self):
        """The CSR offsets (node i's edges are offsets[i]:offsets[i + 1]): the first edges,
        which follow each other when every node was expanded in id order."""
        import numpy
        cdef int64_t n = self.kind.size(), i
        offsets = numpy.empty(n + 1, dtype=numpy.int64)
        cdef int64_t[::1] view = offsets
        cdef int64_t at = 0
        for i in range(n):
            if self.first_edge[i] != at:
                raise InternalError("the graph was not expanded in id order (or not whole)")
            view[i] = at
            at += self.edge_count[i]
        view[n] = at
        return offsets


class _StateLimit(Exception):
    """Exploring found more situations than ``max_states``."""


StateLimit = _StateLimit

_Position = None


def bind_position(cls):
    """Tell the module which class a position decodes to (`exactdice.karbon.position.Position`)."""
    global _Position
    _Position = cls


def _empty(dtype):
    import numpy
    return numpy.zeros(0, dtype=dtype)


cdef object _view_int64(int64_t* values, size_t count):
    import numpy
    if count == 0:
        return _empty(numpy.int64)
    return numpy.asarray(<int64_t[:count]>values)


cdef object _view_int32(int32_t* values, size_t count):
    import numpy
    if count == 0:
        return _empty(numpy.int32)
    return numpy.asarray(<int32_t[:count]>values)


cdef object _view_uint8(vector[uint8_t]& values):
    import numpy
    if values.size() == 0:
        return _empty(numpy.uint8)
    return numpy.asarray(<uint8_t[:values.size()]>values.data())


cdef object _to_python(u128 value):
    return (int(exd_hi(value)) << 64) | int(exd_lo(value))


cdef inline int _turncoats(int64_t outcome, int k) noexcept nogil:
    cdef int i, total = 0
    for i in range(k):
        total += (outcome >> (8 * (i + 1))) & 0xFF
    return total


cdef int _compositions(const int16_t* available, int k, int count, vector[int16_t]& out) noexcept:
    """Every multiset of ``count`` dice from ``available`` (k counts each, flat), in the
    order of `exactdice.karbon.dice.compositions`; returns how many."""
    out.clear()
    if count > _sum(available, k):
        return 0
    cdef int16_t prefix[MAXK]
    _build(available, k, 0, count, prefix, out)
    return out.size() // k if k else 0


cdef void _build(const int16_t* available, int k, int index, int left, int16_t* prefix,
                 vector[int16_t]& out) noexcept:
    cdef int take, i
    if index == k:
        if left == 0:
            for i in range(k):
                out.push_back(prefix[i])
        return
    take = available[index] if available[index] < left else left
    while take >= 0:
        prefix[index] = take
        _build(available, k, index + 1, left - take, prefix, out)
        take -= 1


cdef void _take_by_preference(const int16_t* available, int k, int count, const int* order,
                              int16_t* taken) noexcept nogil:
    cdef int i, index, take, left = count
    for i in range(k):
        taken[i] = 0
    for i in range(k):
        if left == 0:
            break
        index = order[i]
        take = available[index] if available[index] < left else left
        taken[index] = take
        left -= take
