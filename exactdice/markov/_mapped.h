/* A growable array in anonymous memory mappings: growing moves pages (mremap) instead of
   copying them, and capacity not yet written takes no memory, so a graph's edge arrays of
   several GiB never need twice their size while they grow (std::vector's reallocation
   does). Elsewhere than Linux it grows by realloc. */
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#ifdef __linux__
#include <sys/mman.h>
#endif

template <typename T>
class MappedArray {
    T* items = nullptr;
    std::size_t count = 0;
    std::size_t room = 0;

    void reserve_bytes(std::size_t wanted) {
        std::size_t bytes = wanted * sizeof(T);
#ifdef __linux__
        void* moved = items ? mremap(items, room * sizeof(T), bytes, MREMAP_MAYMOVE)
                            : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (moved == MAP_FAILED) throw std::bad_alloc();
#else
        void* moved = std::realloc(items, bytes);
        if (!moved) throw std::bad_alloc();
#endif
        items = static_cast<T*>(moved);
        room = wanted;
    }

  public:
    MappedArray() {}
    MappedArray(const MappedArray&) = delete;
    MappedArray& operator=(const MappedArray&) = delete;
    ~MappedArray() { release(); }

    void release() {
        if (items) {
#ifdef __linux__
            munmap(items, room * sizeof(T));
#else
            std::free(items);
#endif
        }
        items = nullptr;
        count = room = 0;
    }
    void push_back(const T& value) {
        if (count == room) reserve_bytes(room ? 2 * room : (1 << 16));
        items[count++] = value;
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
