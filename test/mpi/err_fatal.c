/*
 * err_fatal: under the default handler, MPI_ERRORS_ARE_FATAL, an error ends
 * the whole job with a nonzero status.  Registered with should_fail: this
 * program passes when the job FAILS.
 *
 * Rank 0 sends to rank `size` (no such rank).  The other ranks wait for a
 * message from rank 0 that only comes if the send wrongly returned; so a
 * correct library ends every rank, including the ones blocked in MPI_Recv,
 * and a wrong one lets the job finish with status 0, which fails the test.
 */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1;
    int size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int value = 42;
    if (rank == 0) {
        int rc = MPI_Send(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        /* Reached only when the error was not fatal. */
        fprintf(stderr, "err_fatal: MPI_Send to invalid rank %d returned %d instead of "
                "ending the job\n", size, rc);
        for (int r = 1; r < size; ++r)
            MPI_Send(&value, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
