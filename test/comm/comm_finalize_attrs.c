/*
 * MPI_Finalize deletes the attributes of MPI_COMM_SELF first (MPI-3.1
 * 8.7.1), with MPI still usable inside the delete callback: libraries hook
 * their clean-up there.
 *
 * On rank 0 a second attribute, set last and so deleted first, has a delete
 * callback that fails.  Under MPI_ERRORS_RETURN MPI_Finalize still
 * finalizes: the other callback runs, MPI_Finalized says so, and the job
 * ends with status 0 (the other ranks do not wait for rank 0 for ever, nor
 * does the launcher report it).  shmpi returns the callback's error there;
 * MPICH 4.0 returns MPI_SUCCESS.
 */
#include "check.h"

static int ran;
static int failed_ran;

static int on_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval, (void)value, (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    CHECKF(!finalized, "the delete callback ran after MPI_Finalize");
    CHECK(comm == MPI_COMM_SELF);
    int size = 0;
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ++ran;
    return MPI_SUCCESS;
}

static int fail_on_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    ++failed_ran;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int key, failing_key;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &key, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fail_on_finalize, &failing_key, NULL));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
    if (rank == 0) CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, failing_key, NULL));
    const int rc = MPI_Finalize();
    int finalized = 0;
    MPI_Finalized(&finalized);
    const int failed_want = rank == 0 ? 1 : 0;
#ifdef SHMPI
    const int rc_ok = rank == 0 ? rc != MPI_SUCCESS : rc == MPI_SUCCESS;
#else
    const int rc_ok = 1;
#endif
    if (ran != 1 || failed_ran != failed_want || finalized != 1 || !rc_ok) {
        fprintf(stderr,
                "comm_finalize_attrs: rank %d: the delete callbacks ran %d and %d times (expected 1 and %d), "
                "MPI_Finalize returned %d, MPI_Finalized says %d\n",
                rank, ran, failed_ran, failed_want, rc, finalized);
        return 1;
    }
    return 0;
}
