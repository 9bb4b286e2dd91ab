/*
 * err_short.c: collectives whose two sides disagree on the amount of data,
 * with the sender sending less than the receiver expects.  MPI makes that
 * erroneous; other MPIs often let it pass silently, shmpi reports it
 * (MPI_ERR_COUNT) and, under MPI_ERRORS_ARE_FATAL, ends the job.  The first
 * part checks the class under MPI_ERRORS_RETURN on the ranks that detect
 * it (Alltoall with a derived type, Gather, Bcast); the last call is
 * fatal.  The Bcast comes after the Alltoall: its ranks disagree on the
 * call's size, which a later collective on the communicator may report
 * again (docs/COLLECTIVES.md, "Errors").  shmpi only, should_fail.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    int send[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int *recv = check_malloc(sizeof(int) * 8 * (size_t)size);

    errors_return(MPI_COMM_WORLD);
    errors_return(MPI_COMM_SELF);
    /* The root's own block: it sends itself 4 ints but expects 8. */
    CHECK_CLASS(MPI_Gather(send, 4, MPI_INT, recv, 8, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT);
    /* Alltoall: every rank sends each 2 ints (every other int of 3, a
     * derived type) where 4 are expected; every rank detects it, for its
     * own block as for the others'. */
    MPI_Datatype pair;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    CHECK_MPI(MPI_Type_commit(&pair));
    int *strided = check_malloc(sizeof(int) * 3 * (size_t)size);
    for (int i = 0; i < 3 * size; ++i) strided[i] = i;
    CHECK_CLASS(MPI_Alltoall(strided, 1, pair, recv, 4, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_MPI(MPI_Type_free(&pair));
    free(strided);
    /* Bcast: the root sends 4 ints, the others expect 8. */
    const int rc = MPI_Bcast(send, rank == 0 ? 4 : 8, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0)
        CHECKF(check_error_class(rc) == MPI_ERR_COUNT, "a short broadcast gave class %d", check_error_class(rc));
    errors_fatal(MPI_COMM_WORLD);
    errors_fatal(MPI_COMM_SELF);
    if (rank == 0)
        printf("err_short: classes as expected; now the fatal mismatch\n");

    /* Fatal: the last rank sends 2 ints of the 4 the root expects. */
    MPI_Gather(send, rank == size - 1 ? 2 : 4, MPI_INT, recv, 4, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(recv);
    MPI_Finalize();
    return size == 1 ? 3 : 0;
}
