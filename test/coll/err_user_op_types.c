/*
 * err_user_op_types.c: a reduction with a user operation where the odd
 * ranks pass a contiguous type of 3 MPI_INTs and the even ranks MPI_INT,
 * three times as many: the same type signature and bytes, but MPI-3.1
 * 5.9.1 asks for the same datatype on every rank, and the user function
 * sees whole elements of each rank's own type.  shmpi's algorithms cut a
 * reduction into chunks of whole elements, so the ranks would cut at
 * different places and wait for each other forever or fold misaligned
 * ints.  shmpi must report it instead: a rank that sees it gets
 * MPI_ERR_TYPE with a message that names the call and both element sizes
 * (errors return here), and ends the job with MPI_Abort(..., 0).  A rank
 * whose call returned success waits up to 30 s for that, then exits 2; a
 * hang, a wrong class or message (exit 1) or no error at all (exit 2) fail
 * the test.  With one rank there is nothing to mismatch: the sums are
 * checked and it exits 0.
 *
 * ERR_CALL picks the call (reduce, allreduce, reduce_scatter_block, scan;
 * allreduce when unset) and ERR_INTS the ints a rank passes (a multiple of
 * 3 times the ranks; 262152, just over 1 MiB, when unset).  shmpi only:
 * MPICH does not check this, and the message text is shmpi's.
 */
#include "coll_test.h"

static MPI_Datatype triple;

/* Sums ints, however they were grouped into elements. */
static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int n = *len * (*type == triple ? 3 : 1);
    for (int i = 0; i < n; ++i)
        ((int *)inout)[i] += ((const int *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const char *call = getenv("ERR_CALL") != NULL ? getenv("ERR_CALL") : "allreduce";
    const int ints = getenv("ERR_INTS") != NULL ? atoi(getenv("ERR_INTS")) : 262152;
    CHECKF(ints > 0 && ints % (3 * size) == 0, "ERR_INTS=%d is not a multiple of 3 x %d ranks", ints, size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &triple));
    CHECK_MPI(MPI_Type_commit(&triple));
    MPI_Op op;
    CHECK_MPI(MPI_Op_create(sum_ints, 1, &op));

    int *in = check_malloc(sizeof(int) * (size_t)ints);
    int *out = check_malloc(sizeof(int) * (size_t)ints);
    for (int i = 0; i < ints; ++i) {
        in[i] = rank * 1000 + i % 1000;
        out[i] = -1;
    }
    const int odd = rank % 2 == 1;
    const MPI_Datatype type = odd ? triple : MPI_INT;
    const int count = odd ? ints / 3 : ints;
    const char *name = NULL;
    int rc = MPI_SUCCESS;
    if (strcmp(call, "reduce") == 0) {
        name = "MPI_Reduce";
        rc = MPI_Reduce(in, out, count, type, op, 0, MPI_COMM_WORLD);
    } else if (strcmp(call, "allreduce") == 0) {
        name = "MPI_Allreduce";
        rc = MPI_Allreduce(in, out, count, type, op, MPI_COMM_WORLD);
    } else if (strcmp(call, "reduce_scatter_block") == 0) {
        name = "MPI_Reduce_scatter_block";
        rc = MPI_Reduce_scatter_block(in, out, count / size, type, op, MPI_COMM_WORLD);
    } else if (strcmp(call, "scan") == 0) {
        name = "MPI_Scan";
        rc = MPI_Scan(in, out, count, type, op, MPI_COMM_WORLD);
    } else {
        CHECKF(0, "ERR_CALL=%s is not one of reduce, allreduce, reduce_scatter_block, scan", call);
    }

    if (size == 1) {
        CHECKF(rc == MPI_SUCCESS, "%s on one rank failed", name);
        const int n = strcmp(call, "reduce_scatter_block") == 0 ? ints / size : ints;
        for (int i = 0; i < n; ++i)
            CHECKF(out[i] == in[i], "%s: int %d is %d, expected %d", name, i, out[i], in[i]);
        MPI_Op_free(&op);
        MPI_Type_free(&triple);
        free(in);
        free(out);
        MPI_Finalize();
        return 0;
    }
    expect_reported(rc, rank, name, MPI_ERR_TYPE, MPI_ERR_TYPE, "with elements of");
    /* Our call went through: another rank reports the mismatch and ends the job. */
    return await_report(rank, name);
}
