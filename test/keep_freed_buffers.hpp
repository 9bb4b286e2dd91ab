// For unit tests that allocate and free buffers of megabytes over and over:
// glibc keeps freed buffers in the heap for the next allocation instead of
// mapping and unmapping each one, so the kernel does not zero fresh pages
// for every case (in test_dtype_random that was 10 s of 15).  ASan and TSan
// have their own allocators and ignore it.
#pragma once

#include <malloc.h>

namespace shmpi_test {

/// Call once, before the allocations (forked ranks inherit it).
inline bool keep_freed_buffers() {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
}

}  // namespace shmpi_test
