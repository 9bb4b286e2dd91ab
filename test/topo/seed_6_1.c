/*
 * Seed 002, example 6.1: the MPI_Dims_create table.
 *
 *   dims before   call                          dims after
 *   (0,0)         MPI_DIMS_CREATE(6, 2, dims)   (3,2)
 *   (0,0)         MPI_DIMS_CREATE(7, 2, dims)   (7,1)
 *   (0,3,0)       MPI_DIMS_CREATE(6, 3, dims)   (2,3,1)
 *   (0,3,0)       MPI_DIMS_CREATE(7, 3, dims)   error
 *
 * Every rank computes the table (the function is local), with
 * MPI_ERRORS_RETURN so the erroneous call returns its error.
 */
#include "check.h"

static void expect_dims(int nnodes, int ndims, const int *before, const int *after)
{
    int dims[3];
    memcpy(dims, before, (size_t)ndims * sizeof(int));
    CHECK_MPI(MPI_Dims_create(nnodes, ndims, dims));
    for (int i = 0; i < ndims; ++i)
        CHECKF(dims[i] == after[i], "MPI_Dims_create(%d, %d): dims[%d] is %d, expected %d", nnodes,
               ndims, i, dims[i], after[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);

    expect_dims(6, 2, (const int[]){0, 0}, (const int[]){3, 2});
    expect_dims(7, 2, (const int[]){0, 0}, (const int[]){7, 1});
    expect_dims(6, 3, (const int[]){0, 3, 0}, (const int[]){2, 3, 1});

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int dims[3] = {0, 3, 0};
    int rc = MPI_Dims_create(7, 3, dims);
    CHECKF(rc != MPI_SUCCESS, "MPI_Dims_create(7, 3, (0,3,0)) succeeded with (%d,%d,%d)", dims[0],
           dims[1], dims[2]);
    CHECKF(check_error_class(rc) == MPI_ERR_DIMS || check_error_class(rc) == MPI_ERR_ARG,
           "MPI_Dims_create(7, 3, (0,3,0)): error class %d", check_error_class(rc));

    /* The table's grids fit the job: Dims_create over the world size. */
    int n = world_size();
    int d2[2] = {0, 0};
    CHECK_MPI(MPI_Dims_create(n, 2, d2));
    CHECKF(d2[0] * d2[1] == n && d2[0] >= d2[1], "MPI_Dims_create(%d, 2): (%d,%d)", n, d2[0], d2[1]);

    MPI_Finalize();
    return 0;
}
