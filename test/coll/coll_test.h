/*
 * coll_test.h: what the collective test programs share, on top of
 * test/mpi/check.h (CHECK, CHECK_MPI, patterned buffers, check_malloc).
 *
 * The programs are plain MPI-3.1 C: they build unchanged against shmpi,
 * MPICH and Open MPI, and compute every expected result by hand, so they
 * check the standard's semantics rather than one implementation's.  Checks
 * that only shmpi promises (the canonical reduction order, its error
 * messages) sit inside #ifdef SHMPI.
 *
 * Message sizes are those of the test plan: 0, 1 and 8 bytes, 1 KiB,
 * 64 KiB and 4 MiB.  COLL_TEST_MAX_BYTES in the environment lowers the
 * largest one (for quick runs by hand).
 */
#ifndef SHMPI_TEST_COLL_TEST_H
#define SHMPI_TEST_COLL_TEST_H

#include "check.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const size_t coll_sizes_all[] = {0, 1, 8, 1024, 65536, 4u << 20};
enum { COLL_NSIZES = sizeof coll_sizes_all / sizeof coll_sizes_all[0] };

/* The largest size tested: 4 MiB unless COLL_TEST_MAX_BYTES says less. */
static inline size_t coll_max_bytes(void)
{
    const char *v = getenv("COLL_TEST_MAX_BYTES");
    size_t max = coll_sizes_all[COLL_NSIZES - 1];
    if (v != NULL && *v != '\0') {
        size_t want = (size_t)strtoull(v, NULL, 10);
        if (want < max)
            max = want;
    }
    return max;
}

/* Bytes to allocate for a buffer of the largest size (at least 4 KiB, for
 * the fixed-size checks at the end of the programs). */
static inline size_t coll_buf_bytes(void)
{
    const size_t max = coll_max_bytes();
    return max < 4096 ? 4096 : max;
}

/* Iterates `s` over the sizes up to coll_max_bytes(). */
#define FOR_EACH_SIZE(s)                                                                    \
    for (size_t coll_i_ = 0, s = 0;                                                         \
         coll_i_ < COLL_NSIZES && (s = coll_sizes_all[coll_i_]) <= coll_max_bytes(); ++coll_i_)

/* The roots worth testing for a message of `bytes`: every rank for small
 * and medium messages; the first, a middle and the last rank for the
 * largest (to bound the run time at 16 ranks). */
static inline int coll_root_wanted(int root, int size, size_t bytes)
{
    if (bytes <= 65536)
        return 1;
    return root == 0 || root == size / 2 || root == size - 1;
}

#define FOR_EACH_ROOT(root, size, bytes)                                                    \
    for (int root = 0; root < (size); ++root)                                               \
        if (coll_root_wanted(root, (size), (bytes)))

/* MPICH 4.0 mishandles MPI_Reduce with MPI_IN_PLACE at a root other than 0
 * (pmodels/mpich#6540, fixed in 4.1.2): it crashes once the message is a
 * few KiB and leaves the root's own contribution out of smaller ones.  The
 * programs skip that case under MPICH; it is valid MPI and shmpi runs it. */
/* MPICH 4.0 also stops on a failed assertion ("memcpy argument memory
 * ranges overlap", source and destination equal) in MPI_Reduce_scatter with
 * MPI_IN_PLACE when a rank's share starts at offset 0 and is large; skipped
 * the same way. */
/* And MPICH 4.0's MPI_Allgatherv on a one-rank communicator copies the
 * data to the start of the receive buffer, whatever the displacement
 * (pmodels/mpich#6374, fixed in 4.1). */
#if defined(MPICH_VERSION)
#define COLL_SKIP_MPICH_6540(in_place, root, bytes) ((in_place) && (root) != 0 && (bytes) > 0)
#define COLL_SKIP_MPICH_RS_IN_PLACE(in_place, bytes) ((in_place) && (bytes) > 65536)
#define COLL_SKIP_MPICH_6374(ranks) ((ranks) == 1)
#else
#define COLL_SKIP_MPICH_6540(in_place, root, bytes) 0
#define COLL_SKIP_MPICH_RS_IN_PLACE(in_place, bytes) 0
#define COLL_SKIP_MPICH_6374(ranks) 0
#endif

/* A guard area after a buffer: filled with a known byte before the call,
 * checked after it, so a collective that writes past the end is caught. */
enum { COLL_GUARD = 64 };
#define COLL_GUARD_BYTE 0xa5

static inline void guard_set(void *buf, size_t bytes)
{
    memset((unsigned char *)buf + bytes, COLL_GUARD_BYTE, COLL_GUARD);
}

#define CHECK_GUARD(buf, bytes)                                                             \
    do {                                                                                    \
        const unsigned char *g_ = (const unsigned char *)(buf) + (bytes);                   \
        for (int gi_ = 0; gi_ < COLL_GUARD; ++gi_)                                          \
            CHECKF(g_[gi_] == COLL_GUARD_BYTE, "byte %d after the %zu-byte buffer was "      \
                   "overwritten (0x%02x)", gi_, (size_t)(bytes), g_[gi_]);                  \
    } while (0)

/* An int that depends on (rank, index, seed): the contributions of the
 * reduction tests.  Small enough that a sum over 16 ranks cannot overflow,
 * and, as a double, exact in any order. */
static inline int coll_value(int rank, size_t i, uint64_t seed)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)rank + 1) * 0xC2B2AE3D27D4EB4Full ^
                 (seed + 7) * 0x165667B19E3779F9ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (int)(x % 2000001u) - 1000000;
}

/* The world communicator with MPI_ERRORS_RETURN, for checks of error
 * classes; restores MPI_ERRORS_ARE_FATAL with the other call. */
static inline void errors_return(MPI_Comm comm) { CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)); }
static inline void errors_fatal(MPI_Comm comm) { CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL)); }

/* CHECK_CLASS(call, cls): the call fails with error class cls. */
#define CHECK_CLASS(call, cls)                                                              \
    do {                                                                                    \
        int cc_rc_ = (call);                                                                \
        int cc_cls_ = check_error_class(cc_rc_);                                            \
        char cc_msg_[MPI_MAX_ERROR_STRING] = "";                                            \
        int cc_len_ = 0;                                                                    \
        if (cc_rc_ != MPI_SUCCESS)                                                          \
            MPI_Error_string(cc_rc_, cc_msg_, &cc_len_);                                    \
        CHECKF(cc_cls_ == (cls), "%s returned class %d (%s), expected %s (%d)", #call,      \
               cc_cls_, cc_msg_, #cls, (cls));                                              \
    } while (0)

/* For programs that make one erroneous collective call under
 * MPI_ERRORS_RETURN, where some rank must report it (shmpi only).
 * expect_reported(): `rc` is that call's result; a failure must be of
 * class `cls_a` or `cls_b` with a message that names the call `name` and
 * contains `text` (when not NULL); the rank prints it and ends the job with
 * MPI_Abort(..., 0), the job's exit status 0.  A rank whose call
 * succeeded then calls await_report(), which waits up to 30 s for that
 * end and returns 2: no rank reported the error. */
static inline void expect_reported(int rc, int rank, const char *name, int cls_a, int cls_b, const char *text)
{
    if (rc == MPI_SUCCESS)
        return;
    int cls = 0;
    int len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    CHECKF(cls == cls_a || cls == cls_b, "rank %d: %s gave class %d: %s", rank, name, cls, msg);
    CHECKF(strstr(msg, name) != NULL, "rank %d: the message does not name %s: %s", rank, name, msg);
    CHECKF(text == NULL || strstr(msg, text) != NULL, "rank %d: the message does not say '%s': %s", rank, text,
           msg);
    printf("rank %d: %s: %s\n", rank, name, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 0);
}

static inline int await_report(int rank, const char *name)
{
    sleep(30);
    fprintf(stderr, "rank %d: no rank reported the erroneous %s\n", rank, name);
    return 2;
}

#endif /* SHMPI_TEST_COLL_TEST_H */
