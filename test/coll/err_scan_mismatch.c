/*
 * err_scan_mismatch.c: an MPI_Scan (MPI_Exscan with an odd number of
 * ranks) where rank size / 2 passes one int more than the others, 160 KB
 * a rank: more than a chunk of shmpi's chain of ranks, and past its cells.
 * MPI makes that erroneous; the job must not hang, and a rank that sees
 * it gets MPI_ERR_TRUNCATE or MPI_ERR_COUNT with a message that names the
 * call (errors return here).  That rank checks both and ends the job with
 * MPI_Abort(..., 0), the job's exit status 0.  A rank whose call returned
 * success waits up to 30 s for that, then exits 2; a hang, a wrong class
 * or message (exit 1) or no error at all (exit 2) fail the test.  With one
 * rank there is nothing to mismatch, and it exits 0.  shmpi only: the
 * message text is shmpi's.
 */
#include "coll_test.h"

enum { N = 40000 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    if (size == 1) {
        MPI_Finalize();
        return 0;
    }
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int exclusive = size % 2 == 1;
    const char *name = exclusive ? "MPI_Exscan" : "MPI_Scan";
    int *in = check_malloc(sizeof(int) * (N + 1));
    int *out = check_malloc(sizeof(int) * (N + 1));
    for (int i = 0; i <= N; ++i)
        in[i] = rank + i;
    const int count = rank == size / 2 ? N + 1 : N;
    const int rc = exclusive ? MPI_Exscan(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                             : MPI_Scan(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_reported(rc, rank, name, MPI_ERR_TRUNCATE, MPI_ERR_COUNT, NULL);
    /* Our call went through: another rank reports the mismatch and ends the job. */
    return await_report(rank, name);
}
