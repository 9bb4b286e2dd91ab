/*
 * err_gatherv_sizes.c: MPI_Gatherv calls where the last rank sends another
 * size than the root expects from it, with the other blocks of a size the
 * root and its members copy between them in parts (large blocks go by
 * single copies, and the root of a Gatherv tells each member where its
 * block goes).  The sizes fall on either side of that and of the smaller
 * carries: the root gets MPI_ERR_COUNT for less, MPI_ERR_TRUNCATE for
 * more, every rank returns, and a matching Gatherv right after it brings
 * every block whole, at every root.  The standard leaves a signature
 * mismatch erroneous (MPICH does not report one that sends less): shmpi
 * only.
 */
#include "coll_test.h"

enum { SLOT = 400000, OTHERS = 70000, NCASES = 5 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    errors_return(comm);
    const int rank = world_rank();
    const int size = world_size();
    /* {what the root expects from the last rank, what that rank sends} */
    static const int cases[NCASES][2] = {
        {100000, 90000}, {90000, 100000}, {100000, 100}, {100, 100000}, {300000, 299999},
    };
    int *counts = check_malloc(sizeof(int) * (size_t)size);
    int *displs = check_malloc(sizeof(int) * (size_t)size);
    unsigned char *recv = check_malloc((size_t)size * SLOT);
    unsigned char *send = check_malloc(SLOT);
    memset(send, rank + 1, SLOT);
    for (int k = 0; k < NCASES; ++k) {
        for (int root = 0; root < size; ++root) {
            const int expect = cases[k][0], sent = cases[k][1];
            for (int r = 0; r < size; ++r) {
                counts[r] = r == size - 1 ? expect : OTHERS;
                displs[r] = r * SLOT;
            }
            const int mismatch = size > 1 && root != size - 1;
            const int mine = rank == size - 1 && mismatch ? sent : counts[rank];
            const int rc = MPI_Gatherv(send, mine, MPI_BYTE, recv, counts, displs, MPI_BYTE, root, comm);
            if (rank == root) {
                const int want = !mismatch ? MPI_SUCCESS : sent > expect ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
                CHECKF(check_error_class(rc) == want, "case %d, root %d: class %d, expected %d", k, root,
                       check_error_class(rc), want);
            }
            /* A matching call after it. */
            for (int r = 0; r < size; ++r) counts[r] = OTHERS + 1000 * r;
            memset(recv, 0, (size_t)size * SLOT);
            CHECK_MPI(MPI_Gatherv(send, counts[rank], MPI_BYTE, recv, counts, displs, MPI_BYTE, root, comm));
            if (rank != root) continue;
            for (int r = 0; r < size; ++r) {
                for (int i = 0; i < SLOT; ++i) {
                    const unsigned char want = i < counts[r] ? (unsigned char)(r + 1) : 0;
                    CHECKF(recv[(size_t)r * SLOT + (size_t)i] == want,
                           "case %d, root %d: byte %d of block %d is %d, expected %d", k, root, i, r,
                           recv[(size_t)r * SLOT + (size_t)i], want);
                }
            }
        }
    }
    CHECK_MPI(MPI_Comm_free(&comm));
    free(send);
    free(recv);
    free(displs);
    free(counts);
    MPI_Finalize();
    return 0;
}
