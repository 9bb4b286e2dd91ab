/*
 * Seed 002, example 6.4: MPI_Cart_create makes a 2 x 3 x 4 grid (24
 * processes).  MPI_Cart_sub with remain_dims = (true, false, true) makes
 * three communicators of eight processes each, 2 x 4 grids;
 * remain_dims = (false, false, true) makes six of four processes each,
 * 1-dimensional.  The program checks both, then every other non-empty mask:
 * the size,
 * shape and periods of the sub-grid, each member's rank (its coordinates
 * in the kept dimensions, row-major), and, with an allreduce inside the
 * sub-grid, that all members agree on the dropped coordinates.
 */
#include "check.h"

static void check_sub(MPI_Comm cart, const int *remain, int expect_size)
{
    static const int dims[3] = {2, 3, 4};
    static const int periods[3] = {1, 0, 1};
    int rank = -1;
    int coords[3];
    CHECK_MPI(MPI_Comm_rank(cart, &rank));
    CHECK_MPI(MPI_Cart_coords(cart, rank, 3, coords));

    MPI_Comm sub;
    CHECK_MPI(MPI_Cart_sub(cart, remain, &sub));
    CHECK(sub != MPI_COMM_NULL);
    int size = -1, sub_rank = -1, status = -1, ndims = -1;
    CHECK_MPI(MPI_Comm_size(sub, &size));
    CHECK_MPI(MPI_Comm_rank(sub, &sub_rank));
    CHECKF(size == expect_size, "remain (%d,%d,%d): size %d, expected %d", remain[0], remain[1], remain[2],
           size, expect_size);
    CHECK_MPI(MPI_Topo_test(sub, &status));
    CHECKF(status == MPI_CART, "MPI_Topo_test of a sub-grid: %d", status);
    CHECK_MPI(MPI_Cartdim_get(sub, &ndims));
    int kept = 0;
    int expect_rank = 0;
    int sub_dims[3], sub_periods[3], sub_coords[3];
    if (ndims > 0)
        CHECK_MPI(MPI_Cart_get(sub, 3, sub_dims, sub_periods, sub_coords));
    for (int i = 0; i < 3; ++i) {
        if (!remain[i])
            continue;
        CHECKF(sub_dims[kept] == dims[i] && (sub_periods[kept] != 0) == (periods[i] != 0),
               "sub-grid dimension %d: %d periodic %d, expected %d periodic %d", kept, sub_dims[kept],
               sub_periods[kept], dims[i], periods[i]);
        CHECKF(sub_coords[kept] == coords[i], "sub-grid coordinate %d: %d, expected %d", kept,
               sub_coords[kept], coords[i]);
        expect_rank = expect_rank * dims[i] + coords[i];
        ++kept;
    }
    CHECKF(ndims == kept, "MPI_Cartdim_get: %d, expected %d", ndims, kept);
    CHECKF(sub_rank == expect_rank, "rank in the sub-grid: %d, expected %d", sub_rank, expect_rank);

    /* Everyone in the sub-grid shares the dropped coordinates. */
    int dropped = 0;
    for (int i = 0; i < 3; ++i)
        if (!remain[i])
            dropped = dropped * dims[i] + coords[i];
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&dropped, &sum, 1, MPI_INT, MPI_SUM, sub));
    CHECKF(sum == dropped * size, "sub-grid members disagree on the dropped coordinates (%d, sum %d)",
           dropped, sum);
    CHECK_MPI(MPI_Comm_free(&sub));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECKF(world_size() == 24, "example 6.4 runs on 24 processes, not %d", world_size());
    const int dims[3] = {2, 3, 4};
    const int periods[3] = {1, 0, 1};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));

    /* The example's two calls. */
    check_sub(cart, (const int[]){1, 0, 1}, 8);
    check_sub(cart, (const int[]){0, 0, 1}, 4);
    /* Every other mask but the empty one (cart_sub_none.c). */
    for (int mask = 1; mask < 8; ++mask) {
        const int remain[3] = {mask & 1, (mask >> 1) & 1, (mask >> 2) & 1};
        int size = 1;
        for (int i = 0; i < 3; ++i)
            if (remain[i])
                size *= dims[i];
        check_sub(cart, remain, size);
    }

    CHECK_MPI(MPI_Comm_free(&cart));
    MPI_Finalize();
    return 0;
}
