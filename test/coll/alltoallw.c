/*
 * alltoallw.c: MPI_Alltoallw, with a datatype per peer and displacements in
 * bytes.  Rank i sends rank j count(i, j) = (i + j) % 3 + 1 ints, none when
 * (i + j) % 4 == 3, each the value 1000 i + 10 j + k:
 *   - to even peers as count(i, j) MPI_INTs, to odd peers as one vector of
 *     count(i, j) ints with stride 2 (the ints between are not sent);
 *   - each peer's block 256 bytes after the previous one.
 * Rank i receives from rank j into blocks in reverse rank order (rank j's
 * block at 256 (n - 1 - j) bytes), as MPI_INTs from even peers and as one
 * contiguous type of count(i, j) ints from odd ones.  Then the same with
 * MPI_IN_PLACE (count(i, j) is symmetric, as MPI_IN_PLACE requires), and
 * on MPI_COMM_SELF.  Bytes outside the received blocks stay untouched.
 * Then again with every empty block given as count 0 of MPI_DATATYPE_NULL,
 * which programs pass for peers they exchange nothing with (MPICH takes
 * it since 4.0.1).
 */
#include "coll_test.h"

enum { STRIDE_BYTES = 256, SLOT_INTS = STRIDE_BYTES / (int)sizeof(int), UNTOUCHED = -7 };

static int count_of(int i, int j) { return (i + j) % 4 == 3 ? 0 : (i + j) % 3 + 1; }
static int value_of(int i, int j, int k) { return 1000 * i + 10 * j + k; }

/* Runs one MPI_Alltoallw on `comm` (in place or not; with empty blocks as
 * count 0 of MPI_DATATYPE_NULL or not) and checks it. */
static void exchange(MPI_Comm comm, int in_place, int null_when_empty)
{
    int rank = 0;
    int n = 0;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &n));
    int *send = check_malloc((size_t)n * STRIDE_BYTES);
    int *recv = check_malloc((size_t)n * STRIDE_BYTES);
    int *scounts = check_malloc(sizeof(int) * (size_t)n);
    int *sdispls = check_malloc(sizeof(int) * (size_t)n);
    int *rcounts = check_malloc(sizeof(int) * (size_t)n);
    int *rdispls = check_malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *stypes = check_malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rtypes = check_malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int k = 0; k < n * SLOT_INTS; ++k) {
        send[k] = UNTOUCHED;
        recv[k] = UNTOUCHED;
    }
    for (int j = 0; j < n; ++j) {
        const int c = count_of(rank, j);
        /* Send side. */
        sdispls[j] = j * STRIDE_BYTES;
        if (null_when_empty && c == 0) {
            stypes[j] = MPI_DATATYPE_NULL;
            scounts[j] = 0;
        } else if (j % 2 == 0) {
            stypes[j] = MPI_INT;
            scounts[j] = c;
            for (int k = 0; k < c; ++k)
                send[j * SLOT_INTS + k] = value_of(rank, j, k);
        } else {
            CHECK_MPI(MPI_Type_vector(c, 1, 2, MPI_INT, &stypes[j]));
            CHECK_MPI(MPI_Type_commit(&stypes[j]));
            scounts[j] = 1;
            for (int k = 0; k < c; ++k)
                send[j * SLOT_INTS + 2 * k] = value_of(rank, j, k);
        }
        /* Receive side: what rank j sends us. */
        const int from = count_of(j, rank);
        rdispls[j] = (n - 1 - j) * STRIDE_BYTES;
        if (null_when_empty && from == 0) {
            rtypes[j] = MPI_DATATYPE_NULL;
            rcounts[j] = 0;
        } else if (j % 2 == 0) {
            rtypes[j] = MPI_INT;
            rcounts[j] = from;
        } else {
            CHECK_MPI(MPI_Type_contiguous(from, MPI_INT, &rtypes[j]));
            CHECK_MPI(MPI_Type_commit(&rtypes[j]));
            rcounts[j] = 1;
        }
        if (in_place) {
            /* The data to send sits in the receive block, as the receive
             * type describes it: count(rank, j) == count(j, rank). */
            for (int k = 0; k < from; ++k)
                recv[(n - 1 - j) * SLOT_INTS + k] = value_of(rank, j, k);
        }
    }
    if (in_place) {
        CHECK_MPI(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, recv, rcounts, rdispls, rtypes, comm));
    } else {
        CHECK_MPI(MPI_Alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, comm));
    }
    for (int j = 0; j < n; ++j) {
        const int from = count_of(j, rank);
        const int *block = recv + (n - 1 - j) * SLOT_INTS;
        for (int k = 0; k < SLOT_INTS; ++k) {
            const int want = k < from ? value_of(j, rank, k) : UNTOUCHED;
            CHECKF(block[k] == want, "%s: block from rank %d, int %d is %d, expected %d",
                   in_place ? "in place" : "out of place", j, k, block[k], want);
        }
    }
    for (int j = 0; j < n; ++j) {
        if (stypes[j] != MPI_INT && stypes[j] != MPI_DATATYPE_NULL)
            CHECK_MPI(MPI_Type_free(&stypes[j]));
        if (rtypes[j] != MPI_INT && rtypes[j] != MPI_DATATYPE_NULL)
            CHECK_MPI(MPI_Type_free(&rtypes[j]));
    }
    free(send);
    free(recv);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(stypes);
    free(rtypes);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int round = 0; round < 3; ++round) {
        exchange(MPI_COMM_WORLD, 0, 0);
        exchange(MPI_COMM_WORLD, 1, 0);
    }
    exchange(MPI_COMM_SELF, 0, 0);
    exchange(MPI_COMM_SELF, 1, 0);
    exchange(MPI_COMM_WORLD, 0, 1);
    exchange(MPI_COMM_WORLD, 1, 1);
    MPI_Finalize();
    return 0;
}
