/*
 * check.h: the small shared toolkit of the multi-rank test programs.
 *
 * The programs use only the standard MPI-3.1 API, so they build unchanged
 * against shmpi, MPICH and Open MPI.  A failed check prints where it failed
 * (file:line), the rank in MPI_COMM_WORLD and the failed condition with an
 * optional explanation, then calls MPI_Abort, which ends the whole job with a
 * nonzero status.  Nothing is printed on success.
 *
 * Ranks may be oversubscribed (8 ranks on 2 cores): no program assumes that
 * another rank is running at any moment; they synchronise with messages only.
 * The helpers here use point-to-point calls only, so the programs exercise
 * nothing beyond the runtime and point-to-point parts of the library.
 */
#ifndef SHMPI_TEST_MPI_CHECK_H
#define SHMPI_TEST_MPI_CHECK_H

#include <mpi.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rank in MPI_COMM_WORLD, or -1 where MPI is not initialised (before
 * MPI_Init or after MPI_Finalize). */
static inline int check_world_rank(void)
{
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return -1;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Reports a failed check and ends the job: with MPI_Abort while MPI is
 * usable, with exit(1) otherwise.  Does not return. */
static inline void check_fail(const char *file, int line, const char *cond, const char *fmt,
                              ...)
{
    char detail[512] = "";
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    int rank = check_world_rank();
    fprintf(stderr, "%s:%d: rank %d: check failed: %s%s%s\n", file, line, rank, cond,
            detail[0] != '\0' ? ": " : "", detail);
    fflush(stderr);
    if (rank >= 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* CHECK(cond): ends the job when cond is false. */
#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond))                                                                        \
            check_fail(__FILE__, __LINE__, #cond, NULL);                                    \
    } while (0)

/* CHECKF(cond, fmt, ...): like CHECK, and explains the failure with a
 * printf-style message (e.g. the values involved). */
#define CHECKF(cond, ...)                                                                   \
    do {                                                                                    \
        if (!(cond))                                                                        \
            check_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                             \
    } while (0)

/* CHECK_MPI(call): the MPI call must return MPI_SUCCESS.  (Under the default
 * MPI_ERRORS_ARE_FATAL handler an error never returns; under
 * MPI_ERRORS_RETURN this names the code and its text.) */
#define CHECK_MPI(call)                                                                     \
    do {                                                                                    \
        int check_rc_ = (call);                                                             \
        if (check_rc_ != MPI_SUCCESS) {                                                     \
            char check_msg_[MPI_MAX_ERROR_STRING] = "";                                     \
            int check_len_ = 0;                                                             \
            MPI_Error_string(check_rc_, check_msg_, &check_len_);                           \
            check_fail(__FILE__, __LINE__, #call, "returned %d (%s)", check_rc_,            \
                       check_msg_);                                                         \
        }                                                                                   \
    } while (0)

/* The class of an error code, for checks on MPI_ERRORS_RETURN paths. */
static inline int check_error_class(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return -1;
    return cls;
}

/* `rc`, returned by the call `what` under MPI_ERRORS_RETURN, must be an
 * error of class `cls` whose message (MPI_Error_string) contains `text`:
 * for checks of shmpi's own messages. */
static inline void check_error_says(int rc, int cls, const char *what, const char *text)
{
    CHECKF(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS", what);
    CHECKF(check_error_class(rc) == cls, "%s: class %d, expected %d", what, check_error_class(rc),
           cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(rc, msg, &len));
    CHECKF(strstr(msg, text) != NULL, "%s: the message does not say \"%s\": %s", what, text, msg);
}

static inline int world_rank(void)
{
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    return rank;
}

static inline int world_size(void)
{
    int size = -1;
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    return size;
}

/* Whether a loop of `total` iterations slows down as it goes (a resource
 * that leaks, a list that grows): check_pace_step() after each iteration
 * times the first and the last `batch` of them, and check_pace_end() fails
 * when the last batch took over 10 times as long as the first and over
 * `slow` seconds an iteration, which a busy machine does not do to calls of
 * microseconds. */
struct check_pace {
    int total, batch;
    double t0, first;
};

static inline struct check_pace check_pace_start(int total, int batch)
{
    struct check_pace p = {total, batch, MPI_Wtime(), 0};
    return p;
}

static inline void check_pace_step(struct check_pace *p, int i)
{
    if (i == p->batch - 1)
        p->first = MPI_Wtime() - p->t0;
    if (i == p->total - p->batch - 1)
        p->t0 = MPI_Wtime();
}

static inline void check_pace_end(const struct check_pace *p, double slow, const char *what)
{
    const double last = MPI_Wtime() - p->t0;
    CHECKF(last <= 10 * p->first || last <= p->batch * slow,
           "the last %d %s took %.3f s, the first %d %.3f s: they slow down as they go", p->batch, what, last,
           p->batch, p->first);
}

/* A user operation (MPI_Op_create): the sum of ints. */
static inline void check_sum_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; ++i)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* malloc that ends the job when memory runs out. */
static inline void *check_malloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    CHECKF(p != NULL, "malloc(%zu) failed", bytes);
    return p;
}

/* ---- patterned contents ----
 *
 * Byte i of a buffer filled for (rank, seed) is a hash of all three, so a
 * byte delivered to the wrong offset, from the wrong sender or from the wrong
 * message is caught.  The seed names the message (its size, its sequence
 * number, ...).  One hash gives 8 bytes (bytes 8k to 8k + 7 are word k's,
 * lowest byte first): filling and checking were most of the time of the
 * collective tests that move megabytes at 16 ranks when each byte had a
 * hash of its own. */
static inline uint64_t pattern_word(int rank, uint64_t seed, size_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    x ^= ((uint64_t)(unsigned)rank + 1) * 0xC2B2AE3D27D4EB4Full;
    x ^= (seed + 1) * 0x165667B19E3779F9ull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

static inline unsigned char pattern_byte(int rank, uint64_t seed, size_t i)
{
    return (unsigned char)(pattern_word(rank, seed, i / 8) >> (8 * (i % 8)));
}

static inline void pattern_fill(void *buf, size_t bytes, int rank, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t w = pattern_word(rank, seed, i / 8);
        for (int j = 0; j < 8; ++j)
            p[i + (size_t)j] = (unsigned char)(w >> (8 * j));
    }
    for (; i < bytes; ++i)
        p[i] = pattern_byte(rank, seed, i);
}

/* Returns the index of the first byte that differs from the pattern of
 * (rank, seed), or `bytes` when all match. */
static inline size_t pattern_mismatch(const void *buf, size_t bytes, int rank, uint64_t seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t w = pattern_word(rank, seed, i / 8);
        uint64_t got = 0;
        for (int j = 0; j < 8; ++j)
            got |= (uint64_t)p[i + (size_t)j] << (8 * j);
        if (got != w)
            break; /* the byte loop below finds which */
    }
    for (; i < bytes; ++i)
        if (p[i] != pattern_byte(rank, seed, i))
            return i;
    return bytes;
}

/* CHECK_PATTERN(buf, bytes, rank, seed): every byte matches the pattern. */
#define CHECK_PATTERN(buf, bytes, rank, seed)                                               \
    do {                                                                                    \
        size_t check_n_ = (size_t)(bytes);                                                  \
        size_t check_at_ = pattern_mismatch((buf), check_n_, (rank), (seed));               \
        if (check_at_ != check_n_)                                                          \
            check_fail(__FILE__, __LINE__, "pattern of " #buf,                              \
                       "byte %zu of %zu is 0x%02x, expected 0x%02x (sender %d, seed %llu)", \
                       check_at_, check_n_, ((const unsigned char *)(buf))[check_at_],      \
                       pattern_byte((rank), (seed), check_at_), (int)(rank),                \
                       (unsigned long long)(seed));                                         \
    } while (0)

/* The ranks of MPI_COMM_WORLD as a ring: the next and the previous rank
 * (each other's with two ranks, oneself with one). */
static inline void ring_neighbours(int *next, int *prev)
{
    const int rank = world_rank();
    const int size = world_size();
    *next = (rank + 1) % size;
    *prev = (rank + size - 1) % size;
}

/* ---- a barrier made of messages ----
 *
 * Gather to rank 0, then release, on the tag TAG_SYNC.  Made of sends and
 * receives so the programs need no collectives.  Never call it while a
 * receive with MPI_ANY_TAG may be posted on the same communicator: it could
 * match the barrier's messages. */
#define TAG_SYNC 32000

static inline void sync_all(MPI_Comm comm)
{
    int rank = 0;
    int size = 0;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &size));
    char token = 0;
    if (rank == 0) {
        for (int r = 1; r < size; ++r)
            CHECK_MPI(MPI_Recv(&token, 1, MPI_CHAR, r, TAG_SYNC, comm, MPI_STATUS_IGNORE));
        for (int r = 1; r < size; ++r)
            CHECK_MPI(MPI_Send(&token, 1, MPI_CHAR, r, TAG_SYNC, comm));
    } else {
        CHECK_MPI(MPI_Send(&token, 1, MPI_CHAR, 0, TAG_SYNC, comm));
        CHECK_MPI(MPI_Recv(&token, 1, MPI_CHAR, 0, TAG_SYNC, comm, MPI_STATUS_IGNORE));
    }
}

/* ---- statuses ---- */

/* CHECK_EMPTY_STATUS(st): st is the "empty" status of MPI-3.1 3.7.3, which
 * the completion of a null or inactive request returns: source
 * MPI_ANY_SOURCE, tag MPI_ANY_TAG, and a count of 0. */
#define CHECK_EMPTY_STATUS(st)                                                              \
    do {                                                                                    \
        int check_count_ = -1;                                                              \
        CHECK_MPI(MPI_Get_count(&(st), MPI_BYTE, &check_count_));                           \
        CHECKF((st).MPI_SOURCE == MPI_ANY_SOURCE && (st).MPI_TAG == MPI_ANY_TAG &&          \
                   check_count_ == 0,                                                       \
               "status of a null request: source %d tag %d count %d, expected the empty "   \
               "status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0)",                  \
               (st).MPI_SOURCE, (st).MPI_TAG, check_count_);                                \
    } while (0)

/* Fills a status with values no completion would produce, so a check can
 * tell whether the library wrote it. */
static inline void status_poison(MPI_Status *st)
{
    memset(st, 0x5a, sizeof *st);
    st->MPI_SOURCE = -12345;
    st->MPI_TAG = -12345;
}

/* A small deterministic generator (xorshift64) for tests whose ranks must
 * draw the same pseudo-random plan: check_seed(s) on every rank, then the
 * same sequence of check_rand() calls. */
static inline unsigned long long *check_rng_state(void)
{
    static unsigned long long state = 0x9e3779b97f4a7c15ULL;
    return &state;
}

static inline void check_seed(unsigned long long seed) { *check_rng_state() = seed != 0 ? seed : 1; }

static inline unsigned check_rand(void)
{
    unsigned long long *s = check_rng_state();
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (unsigned)(*s >> 11);
}

#endif /* SHMPI_TEST_MPI_CHECK_H */
