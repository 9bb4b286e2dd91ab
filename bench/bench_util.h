/*
 * bench_util.h: what the MPI benchmark programs (pingpong.c, coll_bench.c,
 * rma_bench.c) share besides their sizes: where a rank runs, for the
 * context line each prints, and the stamps that vary and check the data.
 * Plain C and Linux only, no MPI: the programs build with any MPI's mpicc,
 * and this header with them.
 */
#ifndef SHMPI_BENCH_UTIL_H
#define SHMPI_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __linux__
#include <sched.h>
#endif

/* A stamp every this many bytes of a buffer (and in its last 8). */
#define BENCH_STAMP_STRIDE 4096

/* "cpus 0-3 (running on 2)" for this process, or "unknown" off Linux. */
static inline void bench_placement(char *out, size_t len) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(out, len, "unknown");
        return;
    }
    size_t n = (size_t)snprintf(out, len, "cpus ");
    int first = -1;
    for (int c = 0; c <= CPU_SETSIZE && n < len; ++c) {
        int in = c < CPU_SETSIZE && CPU_ISSET(c, &set);
        if (in && first < 0) first = c;
        if (!in && first >= 0) {
            if (first == c - 1) {
                n += (size_t)snprintf(out + n, len - n, "%d,", first);
            } else {
                n += (size_t)snprintf(out + n, len - n, "%d-%d,", first, c - 1);
            }
            first = -1;
        }
    }
    if (n > 0 && n < len && out[n - 1] == ',') out[--n] = '\0';
    if (n < len) snprintf(out + n, len - n, " (running on %d)", sched_getcpu());
#else
    snprintf(out, len, "unknown");
#endif
}

/* The 64-bit stamp of message or operation number `k` of size `size`. */
static inline uint64_t bench_stamp_of(uint64_t k, long size) {
    return (k + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)size;
}

/* Writes `value` at every stamped position of a `size`-byte buffer. */
static inline void bench_stamp(unsigned char *buf, long size, uint64_t value) {
    if (size < 8) {
        memcpy(buf, &value, (size_t)size);
        return;
    }
    for (long off = 0; off + 8 <= size; off += BENCH_STAMP_STRIDE) memcpy(buf + off, &value, 8);
    memcpy(buf + size - 8, &value, 8);
}

/* True when every stamped position of `buf` holds `value`. */
static inline int bench_stamp_ok(const unsigned char *buf, long size, uint64_t value) {
    if (size < 8) return memcmp(buf, &value, (size_t)size) == 0;
    for (long off = 0; off + 8 <= size; off += BENCH_STAMP_STRIDE) {
        if (memcmp(buf + off, &value, 8) != 0) return 0;
    }
    return memcmp(buf + size - 8, &value, 8) == 0;
}

#endif /* SHMPI_BENCH_UTIL_H */
