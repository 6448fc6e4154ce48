# A symbol of a shared library this process has loaded already (the GMP gmpy2 loaded, the
# BLAS numpy loaded), found without loading anything: Cython's posix.dlfcn lacks RTLD_NOLOAD.

cdef extern from "dlfcn.h" nogil:
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_LAZY
    int RTLD_NOLOAD


cdef inline void* loaded_symbol(bytes library, const char* name) noexcept:
    """``name``'s address in the loaded file ``library``; NULL where either is not found."""
    cdef void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD)
    return NULL if handle == NULL else dlsym(handle, name)
