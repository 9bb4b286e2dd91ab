/*
 * typemap.h: checks that a datatype moves exactly the bytes of a type map
 * written out by hand, in the order of the map, through point-to-point
 * messages.  Standard MPI only: the programs build with MPICH and Open MPI.
 *
 * A map is a list of (displacement, bytes) entries.  tm_exchange() sends
 * `count` elements of the type around a ring of all ranks three ways:
 *   1. type to type: the receiver's buffer must hold the sender's bytes at
 *      exactly the map's places, and its own sentinel everywhere else;
 *   2. type to MPI_BYTE: the bytes arrive in map order (the type signature
 *      is what matches, not the type);
 *   3. MPI_BYTE to type: the reverse.
 */
#ifndef SHMPI_TEST_DTYPE_TYPEMAP_H
#define SHMPI_TEST_DTYPE_TYPEMAP_H

#include "../mpi/check.h"

struct tm_entry {
    long disp;
    long len;
};

#define TM_SENTINEL 0xA5
#define TM_TAG 4242

/* The bytes [lo, hi) that `count` elements of the map touch. */
static inline void tm_span(const struct tm_entry *map, int n, long extent, int count, long *lo, long *hi)
{
    long step = (long)(count - 1) * extent;
    long a = 0, b = 0;
    for (int i = 0; i < n; ++i) {
        if (i == 0 || map[i].disp < a)
            a = map[i].disp;
        if (i == 0 || map[i].disp + map[i].len > b)
            b = map[i].disp + map[i].len;
    }
    *lo = a + (step < 0 ? step : 0);
    *hi = b + (step > 0 ? step : 0);
}

/* Total bytes of data in one element. */
static inline long tm_size(const struct tm_entry *map, int n)
{
    long s = 0;
    for (int i = 0; i < n; ++i)
        s += map[i].len;
    return s;
}

/* The stream of `count` elements at `base`: the map's bytes in order. */
static inline void tm_stream(const unsigned char *base, const struct tm_entry *map, int n, long extent,
                             int count, unsigned char *out)
{
    for (int e = 0; e < count; ++e)
        for (int i = 0; i < n; ++i) {
            memcpy(out, base + e * extent + map[i].disp, (size_t)map[i].len);
            out += map[i].len;
        }
}

/* Fails the job unless the arena [lo, hi) around `base` holds `stream` at
 * the map's places and TM_SENTINEL everywhere else. */
static inline void tm_check_placed(const unsigned char *base, long lo, long hi, const struct tm_entry *map,
                                   int n, long extent, int count, const unsigned char *stream,
                                   const char *what)
{
    unsigned char *want = (unsigned char *)check_malloc((size_t)(hi - lo));
    memset(want, TM_SENTINEL, (size_t)(hi - lo));
    unsigned char *w = want - lo;
    for (int e = 0; e < count; ++e)
        for (int i = 0; i < n; ++i) {
            memcpy(w + e * extent + map[i].disp, stream, (size_t)map[i].len);
            stream += map[i].len;
        }
    for (long d = lo; d < hi; ++d)
        CHECKF(base[d] == w[d], "%s: byte at displacement %ld is 0x%02x, expected 0x%02x", what, d,
               base[d], w[d]);
    free(want);
}

/* The ring exchange described at the top, for `count` elements of `type`
 * whose map (one element) and extent are given. */
static inline void tm_exchange(MPI_Datatype type, const struct tm_entry *map, int n, long extent, int count,
                               const char *name)
{
    const int rank = world_rank();
    const int size = world_size();
    const int to = (rank + 1) % size;
    const int from = (rank + size - 1) % size;
    long lo, hi;
    tm_span(map, n, extent, count, &lo, &hi);
    const long bytes = tm_size(map, n) * count;

    unsigned char *send_arena = (unsigned char *)check_malloc((size_t)(hi - lo));
    unsigned char *recv_arena = (unsigned char *)check_malloc((size_t)(hi - lo));
    unsigned char *stream = (unsigned char *)check_malloc((size_t)bytes + 1);
    unsigned char *got = (unsigned char *)check_malloc((size_t)bytes + 1);
    unsigned char *sbase = send_arena - lo;
    unsigned char *rbase = recv_arena - lo;
    MPI_Status st;
    int k = 0;

    /* What `from` sends: its pattern, seen through the map. */
    pattern_fill(send_arena, (size_t)(hi - lo), from, (uint64_t)count);
    tm_stream(sbase, map, n, extent, count, stream);
    /* What this rank sends. */
    pattern_fill(send_arena, (size_t)(hi - lo), rank, (uint64_t)count);

    /* 1. type to type */
    memset(recv_arena, TM_SENTINEL, (size_t)(hi - lo));
    CHECK_MPI(MPI_Sendrecv(sbase, count, type, to, TM_TAG, rbase, count, type, from, TM_TAG,
                           MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, type, &k));
    CHECKF(k == count, "%s: MPI_Get_count says %d, sent %d", name, k, count);
    tm_check_placed(rbase, lo, hi, map, n, extent, count, stream, name);

    /* 2. type to bytes */
    memset(got, 0, (size_t)bytes + 1);
    CHECK_MPI(MPI_Sendrecv(sbase, count, type, to, TM_TAG, got, (int)bytes, MPI_BYTE, from, TM_TAG,
                           MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &k));
    CHECKF(k == bytes, "%s: received %d bytes, expected %ld", name, k, bytes);
    for (long i = 0; i < bytes; ++i)
        CHECKF(got[i] == stream[i], "%s: packed byte %ld is 0x%02x, expected 0x%02x", name, i, got[i],
               stream[i]);

    /* 3. bytes to type: send what this rank would pack. */
    unsigned char *mine = (unsigned char *)check_malloc((size_t)bytes + 1);
    tm_stream(sbase, map, n, extent, count, mine);
    memset(recv_arena, TM_SENTINEL, (size_t)(hi - lo));
    CHECK_MPI(MPI_Sendrecv(mine, (int)bytes, MPI_BYTE, to, TM_TAG, rbase, count, type, from, TM_TAG,
                           MPI_COMM_WORLD, &st));
    tm_check_placed(rbase, lo, hi, map, n, extent, count, stream, name);

    free(mine);
    free(got);
    free(stream);
    free(recv_arena);
    free(send_arena);
}

/* Checks size, lb, extent, true lb and true extent of a type. */
static inline void tm_check_bounds(MPI_Datatype t, int size, long lb, long extent, long true_lb,
                                   long true_extent, const char *name)
{
    int s = -1;
    MPI_Aint l, e, tl, te;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECK_MPI(MPI_Type_get_extent(t, &l, &e));
    CHECK_MPI(MPI_Type_get_true_extent(t, &tl, &te));
    CHECKF(s == size && l == lb && e == extent && tl == true_lb && te == true_extent,
           "%s: size %d lb %ld extent %ld true_lb %ld true_extent %ld; expected %d %ld %ld %ld %ld", name, s,
           (long)l, (long)e, (long)tl, (long)te, size, lb, extent, true_lb, true_extent);
}

/* type1 of seed 003: {(double, 0), (char, 8)}, extent 16. */
static inline MPI_Datatype tm_type1(void)
{
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_struct(2, bl, d, ty, &t));
    return t;
}

#endif /* SHMPI_TEST_DTYPE_TYPEMAP_H */
