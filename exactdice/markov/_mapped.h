/* A growable array in anonymous memory mappings: growing moves pages (mremap) instead of
   copying them, and capacity not yet written takes no memory, so a graph's edge arrays of
   several GiB never need twice their size while they grow (std::vector's reallocation
   does). Elsewhere than Linux it grows by realloc.

   A page is mapped and zeroed by the kernel when it is first written, and for a walk that
   writes gigabytes of edges that costs as much as a sixth of its time (more under a
   virtual machine). So on Linux a helper thread maps the pages a few MiB ahead of the
   writer (madvise MADV_POPULATE_WRITE, Linux 5.14; it changes no byte), on the other
   core. The writer waits for a helper only before the mapping moves or goes; a helper
   forked away from its process is not waited for. Where no thread can be started, or the
   kernel declines, the pages are mapped as they are written, as before.

   `HugePages` is a std::vector allocator for the tables read at random (the walk's hash
   tables): a block of 2 MiB or more is aligned to 2 MiB and marked for transparent huge
   pages, so one TLB entry covers 512 times the memory. A look-up in a table of hundreds of
   MiB otherwise waits on a page walk as well as on the memory. The mark is a hint: where
   huge pages are off it changes nothing. `FilledAhead` makes such a table's next slots on
   the other core, before the table grows into them. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define EXD_INLINE __attribute__((always_inline)) inline
#define EXD_OUT_OF_LINE __attribute__((noinline))
#else
#define EXD_INLINE inline
#define EXD_OUT_OF_LINE
#endif

constexpr std::size_t HUGE_PAGE_BYTES = std::size_t(1) << 21;

inline void* huge_page_alloc(std::size_t bytes) {
    // (malloc's alignment serves every type the walk keeps: none is over-aligned)
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE_BYTES) {
        std::size_t rounded = (bytes + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
        void* block = nullptr;
        if (posix_memalign(&block, HUGE_PAGE_BYTES, rounded) != 0) throw std::bad_alloc();
        madvise(block, rounded, MADV_HUGEPAGE);
        return block;
    }
#endif
    void* block = std::malloc(bytes ? bytes : 1);
    if (!block) throw std::bad_alloc();
    return block;
}

template <typename T>
struct HugePages {
    static_assert(alignof(T) <= alignof(std::max_align_t), "malloc would not align it");
    using value_type = T;
    HugePages() noexcept {}
    template <typename U>
    HugePages(const HugePages<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(huge_page_alloc(n * sizeof(T))); }
    void deallocate(T* block, std::size_t) noexcept { std::free(block); }
};
template <typename T, typename U>
bool operator==(const HugePages<T>&, const HugePages<U>&) { return true; }
template <typename T, typename U>
bool operator!=(const HugePages<T>&, const HugePages<U>&) { return false; }

#ifdef __linux__
// whether this process may run on two processors or more (else a helper would take the
// writer's)
inline bool several_processors() {
    cpu_set_t usable;
    return sched_getaffinity(0, sizeof(usable), &usable) == 0 && CPU_COUNT(&usable) >= 2;
}

// start ``run(argument)`` in a detached thread with a stack of ``stack_bytes``: whether it started
inline bool start_helper(void* (*run)(void*), void* argument, std::size_t stack_bytes) {
    pthread_attr_t attributes;
    pthread_t thread;
    bool started = pthread_attr_init(&attributes) == 0;
    if (started) {
        pthread_attr_setstacksize(&attributes, stack_bytes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&thread, &attributes, run, argument) == 0;
        pthread_attr_destroy(&attributes);
    }
    return started;
}
#endif

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
#define EXD_PREFILL 1
// bytes a helper maps ahead of the writer, started each time the writer has used half (so
// an array shorter than half of it starts none)
constexpr std::size_t PREFILL_BYTES = std::size_t(16) << 20;
// the helper's stack: it makes one system call and allocates nothing (a thread that
// allocated would get a malloc arena of its own, 64 MiB of address space)
constexpr std::size_t PREFILL_STACK_BYTES = std::size_t(64) << 10;

// false once the kernel or the system declined (no MADV_POPULATE_WRITE, no thread to be
// had), and where this process may run on one processor only (the helper would take the
// writer's)
inline std::atomic<bool>& prefill_wanted() {
    static std::atomic<bool> wanted{several_processors()};
    return wanted;
}
#endif

template <typename T>
class MappedArray {
    T* items = nullptr;
    std::size_t count = 0;
    std::size_t room = 0;
    std::size_t limit = 0;  // push_back leaves its fast path here (room, or the next prefill)
#ifdef EXD_PREFILL
    static constexpr std::size_t PREFILL_ITEMS = PREFILL_BYTES / sizeof(T);
    std::size_t next_prefill = PREFILL_ITEMS / 2;  // count at which the next helper starts
    std::size_t prefilled = 0;                      // items [0, prefilled) are mapped or being mapped
    // the running helper's range and its end (the helper reads and writes nothing else)
    std::uintptr_t helper_first = 0;
    std::size_t helper_length = 0;
    std::atomic<bool> helper_done{true};
    pid_t helper_process = 0;

    static void* run_helper(void* self) {
        auto* array = static_cast<MappedArray*>(self);
        if (madvise(reinterpret_cast<void*>(array->helper_first), array->helper_length, MADV_POPULATE_WRITE) != 0)
            prefill_wanted().store(false, std::memory_order_relaxed);
        array->helper_done.store(true, std::memory_order_release);
        return nullptr;
    }

    void wait_for_helper() {
        if (helper_process == getpid()) {  // a helper forked away is not in this process
            while (!helper_done.load(std::memory_order_acquire)) sched_yield();
        }
        helper_process = 0;
    }

    void prefill() {
        wait_for_helper();
        next_prefill = count + PREFILL_ITEMS / 2;
        std::size_t until = std::min(room, count + PREFILL_ITEMS);
        if (until <= prefilled || !prefill_wanted().load(std::memory_order_relaxed)) return;
        long page = sysconf(_SC_PAGESIZE);
        helper_first = reinterpret_cast<std::uintptr_t>(items + prefilled) & ~static_cast<std::uintptr_t>(page - 1);
        helper_length = reinterpret_cast<std::uintptr_t>(items + until) - helper_first;
        helper_done.store(false, std::memory_order_relaxed);
        if (!start_helper(run_helper, this, PREFILL_STACK_BYTES)) {  // the writer maps its own pages
            helper_done.store(true, std::memory_order_relaxed);
            prefill_wanted().store(false, std::memory_order_relaxed);
            return;
        }
        prefilled = until;
        helper_process = getpid();
    }
#endif

    void reserve_bytes(std::size_t wanted) {
        std::size_t bytes = wanted * sizeof(T);
#ifdef __linux__
#ifdef EXD_PREFILL
        wait_for_helper();
        prefilled = std::min(prefilled, wanted);
#endif
        void* moved = items ? mremap(items, room * sizeof(T), bytes, MREMAP_MAYMOVE)
                            : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (moved == MAP_FAILED) throw std::bad_alloc();
#else
        void* moved = std::realloc(items, bytes);
        if (!moved) throw std::bad_alloc();
#endif
        items = static_cast<T*>(moved);
        room = wanted;
        set_limit();
    }

    void set_limit() {
#ifdef EXD_PREFILL
        limit = std::min(room, next_prefill);
#else
        limit = room;
#endif
    }

    EXD_OUT_OF_LINE void make_room(std::size_t wanted = 1) {
        std::size_t size = room ? room : (1 << 16);
        while (size < count + wanted) size *= 2;
        if (size != room) reserve_bytes(size);
#ifdef EXD_PREFILL
        if (count + wanted > next_prefill) prefill();
#endif
        set_limit();
    }

  public:
    MappedArray() {}
    MappedArray(const MappedArray&) = delete;
    MappedArray& operator=(const MappedArray&) = delete;
    ~MappedArray() { release(); }

    void release() {
        if (items) {
#ifdef __linux__
#ifdef EXD_PREFILL
            wait_for_helper();
            prefilled = 0;
            next_prefill = PREFILL_ITEMS / 2;
#endif
            munmap(items, room * sizeof(T));
#else
            std::free(items);
#endif
        }
        items = nullptr;
        count = room = limit = 0;
    }
    EXD_INLINE void push_back(const T& value) {
        if (count >= limit) make_room();
        items[count++] = value;
    }
    // ``wanted`` new items at the end, to be written through the pointer returned
    EXD_INLINE T* extend(std::size_t wanted) {
        if (count + wanted > limit) make_room(wanted);
        T* first = items + count;
        count += wanted;
        return first;
    }
    T& operator[](std::size_t i) { return items[i]; }
    T& back() { return items[count - 1]; }
    T* data() { return items; }
    std::size_t size() const { return count; }
    std::size_t capacity() const { return room; }
    void clear() { count = 0; }
    void shrink_to_fit() {
        if (!items || count == room) return;
        if (count == 0) { release(); return; }
        reserve_bytes(count);
    }
};

#ifdef __linux__
#define EXD_FILL_AHEAD 1
// `FilledAhead`'s helper allocates (a block, and malloc's own bookkeeping)
constexpr std::size_t FILL_STACK_BYTES = std::size_t(256) << 10;

// false once no thread could be had, and where this process may run on one processor only
inline std::atomic<bool>& fill_ahead_wanted() {
    static std::atomic<bool> wanted{several_processors()};
    return wanted;
}
#endif

/* `count` copies of a value in a std::vector (`HugePages`), made on another core ahead of
   their use: a hash table's next, larger slots. Growing the table then neither waits for
   the kernel to map and zero the fresh pages nor for the fill. One block at a time; where
   no thread can be had, or the process may run on one processor only, `take` says no and
   the table fills its own slots, as before. */
template <typename T>
class FilledAhead {
    using Block = std::vector<T, HugePages<T>>;
    Block block;
#ifdef EXD_FILL_AHEAD
    std::size_t wanted = 0;
    T value{};
    std::atomic<bool> done{true};
    bool failed = false;
    pid_t helper_process = 0;  // 0: no block started

    static void* run(void* self) {
        auto* ahead = static_cast<FilledAhead*>(self);
        try {
            ahead->block.assign(ahead->wanted, ahead->value);
        } catch (...) {  // (bad_alloc) the table fills its own slots
            ahead->failed = true;
        }
        ahead->done.store(true, std::memory_order_release);
        return nullptr;
    }

    void wait() {
        if (!helper_process) return;
        if (helper_process == getpid()) {
            while (!done.load(std::memory_order_acquire)) sched_yield();
        } else if (!done.load(std::memory_order_acquire)) {
            // forked away from a helper mid-fill: its block is forgotten (not freed)
            new (&block) Block();
            failed = true;
        }
        helper_process = 0;
    }
#endif

  public:
    FilledAhead() {}
    FilledAhead(const FilledAhead&) = delete;
    FilledAhead& operator=(const FilledAhead&) = delete;
    ~FilledAhead() { release(); }

    // begin a block of ``count`` copies of ``value`` (unless one is under way or kept, or
    // no helper can be had): whether it was begun
    bool start(std::size_t count, const T& with) {
#ifdef EXD_FILL_AHEAD
        if (helper_process || !block.empty() || !fill_ahead_wanted().load(std::memory_order_relaxed))
            return false;
        wanted = count;
        value = with;
        failed = false;
        done.store(false, std::memory_order_relaxed);
        if (!start_helper(run, this, FILL_STACK_BYTES)) {
            done.store(true, std::memory_order_relaxed);
            fill_ahead_wanted().store(false, std::memory_order_relaxed);
            return false;
        }
        helper_process = getpid();
        return true;
#else
        (void)count;
        (void)with;
        return false;
#endif
    }

    // the block into ``into`` if it holds ``count`` items (waiting for it); else false
    bool take(Block& into, std::size_t count) {
#ifdef EXD_FILL_AHEAD
        wait();
        bool fits = !failed && block.size() == count;
        if (fits) into.swap(block);
        Block().swap(block);
        return fits;
#else
        (void)into;
        (void)count;
        return false;
#endif
    }

    void release() {
#ifdef EXD_FILL_AHEAD
        wait();
#endif
        Block().swap(block);
    }

    // the memory the block takes (or will)
    std::size_t bytes() const {
#ifdef EXD_FILL_AHEAD
        if (helper_process) return wanted * sizeof(T);
#endif
        return block.capacity() * sizeof(T);
    }
};
