/*
 * cancel_send.h: what p2p_cancel_send.c and p2p_cancel_unmatched.c share:
 * message bytes that depend on a seed, and a send cancelled with nothing to
 * receive it.
 */
#ifndef SHMPI_TEST_MPI_CANCEL_SEND_H
#define SHMPI_TEST_MPI_CANCEL_SEND_H

#include "check.h"

static inline void fill(unsigned char *p, int n, int seed)
{
    for (int i = 0; i < n; ++i) p[i] = (unsigned char)(seed * 37 + i * 11 + (i >> 9));
}

static inline void expect(const unsigned char *p, int n, int seed, const char *what)
{
    for (int i = 0; i < n; ++i)
        CHECKF(p[i] == (unsigned char)(seed * 37 + i * 11 + (i >> 9)), "%s: byte %d", what, i);
}

static inline void expect_cancelled(MPI_Request *r, const char *what)
{
    MPI_Status st;
    CHECK_MPI(MPI_Cancel(r));
    CHECK_MPI(MPI_Wait(r, &st));  /* must return: nothing receives it */
    int flag = 0;
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECKF(flag, "%s: the wait returned, but the send was not cancelled", what);
}

/* Pairs of MPI_COMM_WORLD ranks (0,1), (2,3), ...: this rank's pair, with
 * its rank in it in *me, or MPI_COMM_NULL for a last odd rank. */
static inline MPI_Comm world_pair(int *me)
{
    int rank = -1, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int in_pair = rank < size - size % 2;
    MPI_Comm pair = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, in_pair ? rank / 2 : MPI_UNDEFINED, rank, &pair));
    *me = -1;
    if (pair != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_rank(pair, me));
    return pair;
}

#endif /* SHMPI_TEST_MPI_CANCEL_SEND_H */
