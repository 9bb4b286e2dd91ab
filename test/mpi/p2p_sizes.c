/*
 * p2p_sizes: messages of every size class arrive complete and exact, and
 * MPI_Get_count / MPI_Get_elements report them.
 *
 * 1. Ring: each rank sends to its right neighbour and receives from its
 *    left one, for 0, 1, 7, 8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB and (with at
 *    most 4 ranks, to bound memory) 64 MiB, once with Irecv + Send and once
 *    with Isend + Recv.  Contents are patterned by (sender, size, index) and
 *    verified byte by byte; the bytes after the message in the receive
 *    buffer must stay untouched.
 * 2. Typed messages (MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_LONG_LONG,
 *    MPI_FLOAT, MPI_CHAR, MPI_UNSIGNED_CHAR) received into a larger buffer:
 *    values, MPI_Get_count and MPI_Get_elements(_x) in that type and in
 *    bytes.
 * 3. A 10-byte message: MPI_Get_count and MPI_Get_elements in MPI_INT give
 *    MPI_UNDEFINED (10 is not a multiple of 4), in MPI_SHORT give 5.
 */
#include "check.h"

enum { GUARD = 64, GUARD_BYTE = 0xA5 };

static void check_guard(const unsigned char *p, int n)
{
    for (int i = 0; i < GUARD; ++i)
        CHECKF(p[n + i] == GUARD_BYTE,
               "byte %d after a %d-byte message was overwritten (0x%02x)", i, n, p[n + i]);
}

/* 1. One message of n bytes around the ring; `nonblocking_send` chooses
 * Isend + Recv over Irecv + Send. */
static void ring_bytes(int rank, int size, int n, int nonblocking_send)
{
    int right = (rank + 1) % size;
    int left = (rank + size - 1) % size;
    uint64_t seed = (uint64_t)n * 2 + (uint64_t)nonblocking_send;
    unsigned char *out = check_malloc((size_t)n);
    unsigned char *in = check_malloc((size_t)n + GUARD);
    pattern_fill(out, (size_t)n, rank, seed);
    memset(in, GUARD_BYTE, (size_t)n + GUARD);

    MPI_Request req;
    MPI_Status st;
    if (nonblocking_send) {
        CHECK_MPI(MPI_Isend(out, n, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Recv(in, n + GUARD, MPI_BYTE, left, 1, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Irecv(in, n + GUARD, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Send(out, n, MPI_BYTE, right, 1, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&req, &st));
    }
    CHECKF(st.MPI_SOURCE == left && st.MPI_TAG == 1, "status source %d tag %d", st.MPI_SOURCE,
           st.MPI_TAG);
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == n, "a %d-byte message was received as %d bytes", n, count);
    int elements = -1;
    CHECK_MPI(MPI_Get_elements(&st, MPI_BYTE, &elements));
    CHECKF(elements == n, "MPI_Get_elements gave %d for a %d-byte message", elements, n);
    CHECK_PATTERN(in, n, left, seed);
    check_guard(in, n);
    free(out);
    free(in);
}

/* 2. Sends `count` elements of `type` (element size `elem`) filled by
 * `fill`, receives up to count + 5 elements, checks with `same`. */
typedef void (*fill_fn)(void *buf, int count, int rank);

static void fill_int(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((int *)b)[i] = rank * 1000003 + i * 7 - 50000;
}
static void fill_double(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((double *)b)[i] = rank + i * 0.25 - 1e9 / (i + 1);
}
static void fill_short(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((short *)b)[i] = (short)(rank * 131 + i * 3 - 20000);
}
static void fill_long_long(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((long long *)b)[i] = (long long)rank * 4000000000011LL - (long long)i * 1000000007LL;
}
static void fill_float(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((float *)b)[i] = (float)rank * 0.5f + (float)i * 1.25f;
}
static void fill_char(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((char *)b)[i] = (char)('a' + (rank + i) % 26);
}
static void fill_uchar(void *b, int count, int rank)
{
    for (int i = 0; i < count; ++i)
        ((unsigned char *)b)[i] = (unsigned char)(rank * 37 + i * 11);
}

static void ring_typed(int rank, int size, MPI_Datatype type, size_t elem, const char *name,
                       fill_fn fill, int count)
{
    int type_size = -1;
    CHECK_MPI(MPI_Type_size(type, &type_size));
    CHECKF(type_size == (int)elem, "MPI_Type_size(%s) gave %d, sizeof is %zu", name, type_size,
           elem);

    int right = (rank + 1) % size;
    int left = (rank + size - 1) % size;
    unsigned char *out = check_malloc(elem * (size_t)count);
    unsigned char *in = check_malloc(elem * (size_t)(count + 5));
    unsigned char *expect = check_malloc(elem * (size_t)count);
    fill(out, count, rank);
    fill(expect, count, left);
    memset(in, 0, elem * (size_t)(count + 5));

    MPI_Request req;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(in, count + 5, type, left, 2, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Send(out, count, type, right, 2, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&req, &st));

    CHECKF(memcmp(in, expect, elem * (size_t)count) == 0, "%d elements of %s differ", count,
           name);
    int got = -1;
    CHECK_MPI(MPI_Get_count(&st, type, &got));
    CHECKF(got == count, "MPI_Get_count(%s) gave %d, sent %d", name, got, count);
    CHECK_MPI(MPI_Get_elements(&st, type, &got));
    CHECKF(got == count, "MPI_Get_elements(%s) gave %d, sent %d", name, got, count);
    MPI_Count got_x = -1;
    CHECK_MPI(MPI_Get_elements_x(&st, type, &got_x));
    CHECKF(got_x == count, "MPI_Get_elements_x(%s) gave %lld, sent %d", name,
           (long long)got_x, count);
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECKF(got == count * (int)elem, "%d %s arrived as %d bytes", count, name, got);
    free(out);
    free(in);
    free(expect);
}

/* 3. */
static void ring_odd_bytes(int rank, int size)
{
    int right = (rank + 1) % size;
    int left = (rank + size - 1) % size;
    unsigned char out[10];
    unsigned char in[16];
    pattern_fill(out, sizeof out, rank, 10);
    MPI_Request req;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(in, (int)sizeof in, MPI_BYTE, left, 3, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Send(out, (int)sizeof out, MPI_BYTE, right, 3, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK_PATTERN(in, sizeof out, left, 10);

    int got = 0;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECKF(got == 10, "MPI_Get_count(MPI_BYTE) gave %d", got);
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &got));
    CHECKF(got == MPI_UNDEFINED, "MPI_Get_count(MPI_INT) of 10 bytes gave %d, not MPI_UNDEFINED",
           got);
    CHECK_MPI(MPI_Get_elements(&st, MPI_INT, &got));
    CHECKF(got == MPI_UNDEFINED,
           "MPI_Get_elements(MPI_INT) of 10 bytes gave %d, not MPI_UNDEFINED", got);
    CHECK_MPI(MPI_Get_count(&st, MPI_SHORT, &got));
    CHECKF(got == 5, "MPI_Get_count(MPI_SHORT) of 10 bytes gave %d", got);
    CHECK_MPI(MPI_Get_elements(&st, MPI_SHORT, &got));
    CHECKF(got == 5, "MPI_Get_elements(MPI_SHORT) of 10 bytes gave %d", got);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();

    /* 1. */
    const int sizes[] = {0, 1, 7, 8, 1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26};
    int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    if (size > 4)
        --nsizes; /* 64 MiB per rank only with few ranks */
    for (int i = 0; i < nsizes; ++i) {
        ring_bytes(rank, size, sizes[i], 0);
        ring_bytes(rank, size, sizes[i], 1);
    }

    /* 2. */
    const int counts[] = {1, 3, 1000, 100000};
    for (int i = 0; i < 4; ++i) {
        int c = counts[i];
        ring_typed(rank, size, MPI_INT, sizeof(int), "MPI_INT", fill_int, c);
        ring_typed(rank, size, MPI_DOUBLE, sizeof(double), "MPI_DOUBLE", fill_double, c);
        ring_typed(rank, size, MPI_SHORT, sizeof(short), "MPI_SHORT", fill_short, c);
        ring_typed(rank, size, MPI_LONG_LONG, sizeof(long long), "MPI_LONG_LONG",
                   fill_long_long, c);
        ring_typed(rank, size, MPI_FLOAT, sizeof(float), "MPI_FLOAT", fill_float, c);
        ring_typed(rank, size, MPI_CHAR, sizeof(char), "MPI_CHAR", fill_char, c);
        ring_typed(rank, size, MPI_UNSIGNED_CHAR, sizeof(unsigned char), "MPI_UNSIGNED_CHAR",
                   fill_uchar, c);
    }

    /* 3. */
    ring_odd_bytes(rank, size);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
