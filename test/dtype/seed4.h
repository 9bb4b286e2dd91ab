/*
 * seed4.h: what the seed 004 programs share.  Each rank owns the C array
 * int sendarray[100][150] of the seed; element [i][j] of rank r holds
 * seed4_value(r, i, j), so the root can tell where every int it gathered
 * came from.  Receive buffers start filled with SEED4_UNTOUCHED; the gaps
 * the examples leave between ranks' data must keep that value.
 */
#ifndef SHMPI_TEST_DTYPE_SEED4_H
#define SHMPI_TEST_DTYPE_SEED4_H

#include "../mpi/check.h"

#define SEED4_ROWS 100
#define SEED4_COLS 150
#define SEED4_UNTOUCHED (-7)

static inline int seed4_value(int rank, int i, int j) { return rank * 1000000 + i * 1000 + j; }

/* The seed's sendarray, filled for `rank`. */
static inline int (*seed4_array(int rank))[SEED4_COLS]
{
    int(*a)[SEED4_COLS] = (int(*)[SEED4_COLS])check_malloc(sizeof(int) * SEED4_ROWS * SEED4_COLS);
    for (int i = 0; i < SEED4_ROWS; ++i)
        for (int j = 0; j < SEED4_COLS; ++j)
            a[i][j] = seed4_value(rank, i, j);
    return a;
}

/* A receive buffer of n ints, all SEED4_UNTOUCHED. */
static inline int *seed4_rbuf(long n)
{
    int *r = (int *)check_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (long i = 0; i < n; ++i)
        r[i] = SEED4_UNTOUCHED;
    return r;
}

/* rbuf[at .. at + n) must hold column `col` of rank `from`, rows 0 .. n-1. */
static inline void seed4_check_column(const int *rbuf, long at, int n, int from, int col)
{
    for (int i = 0; i < n; ++i)
        CHECKF(rbuf[at + i] == seed4_value(from, i, col),
               "rbuf[%ld] = %d, expected row %d of column %d of rank %d (%d)", at + i, rbuf[at + i], i, col,
               from, seed4_value(from, i, col));
}

/* rbuf[at .. at + n) must be untouched. */
static inline void seed4_check_untouched(const int *rbuf, long at, long n)
{
    for (long i = 0; i < n; ++i)
        CHECKF(rbuf[at + i] == SEED4_UNTOUCHED, "rbuf[%ld] = %d was overwritten", at + i, rbuf[at + i]);
}

#endif /* SHMPI_TEST_DTYPE_SEED4_H */
