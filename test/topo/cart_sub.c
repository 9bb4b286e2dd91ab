/*
 * MPI_Cart_sub for every remain_dims mask (but the empty one, see
 * cart_sub_none.c) of a 3-D and a 4-D grid made by
 * MPI_Dims_create over the whole job (mixed periods).  For each mask every
 * process checks the sub-grid's size, shape, periods and its own rank and
 * coordinates in it; the members exchange their world ranks (allgather)
 * and check that member k of the sub-grid sits at the k-th point of the
 * kept dimensions with the caller's dropped coordinates; and a sub-grid of
 * a sub-grid (dropping its first kept dimension) agrees with the direct
 * mask.
 */
#include "check.h"

#define MAXD 4

static int rank_in(int nd, const int *dims, const int *coords)
{
    int r = 0;
    for (int i = 0; i < nd; ++i)
        r = r * dims[i] + coords[i];
    return r;
}

static void check_mask(MPI_Comm cart, int nd, const int *dims, const int *periods, int mask)
{
    int rank = -1, coords[MAXD], remain[MAXD];
    CHECK_MPI(MPI_Comm_rank(cart, &rank));
    CHECK_MPI(MPI_Cart_coords(cart, rank, nd, coords));
    int sub_dims[MAXD], sub_periods[MAXD], sub_coords[MAXD];
    int kept = 0, points = 1;
    for (int i = 0; i < nd; ++i) {
        remain[i] = (mask >> i) & 1;
        if (remain[i]) {
            sub_dims[kept] = dims[i];
            sub_periods[kept] = periods[i];
            sub_coords[kept] = coords[i];
            points *= dims[i];
            ++kept;
        }
    }
    MPI_Comm sub;
    CHECK_MPI(MPI_Cart_sub(cart, remain, &sub));
    int size = -1, srank = -1, nds = -1;
    CHECK_MPI(MPI_Comm_size(sub, &size));
    CHECK_MPI(MPI_Comm_rank(sub, &srank));
    CHECKF(size == points, "mask %#x: sub-grid of %d processes, expected %d", mask, size, points);
    CHECKF(srank == rank_in(kept, sub_dims, sub_coords), "mask %#x: rank %d, expected %d", mask, srank,
           rank_in(kept, sub_dims, sub_coords));
    CHECK_MPI(MPI_Cartdim_get(sub, &nds));
    CHECKF(nds == kept, "mask %#x: %d dimensions, expected %d", mask, nds, kept);
    int gd[MAXD], gp[MAXD], gc[MAXD];
    CHECK_MPI(MPI_Cart_get(sub, MAXD, gd, gp, gc));
    for (int k = 0; k < kept; ++k)
        CHECKF(gd[k] == sub_dims[k] && (gp[k] != 0) == (sub_periods[k] != 0) && gc[k] == sub_coords[k],
               "mask %#x: dimension %d is %d/%d at %d, expected %d/%d at %d", mask, k, gd[k], gp[k], gc[k],
               sub_dims[k], sub_periods[k], sub_coords[k]);

    /* Member k is the process at the k-th point of the kept dimensions. */
    int *members = check_malloc((size_t)size * sizeof(int));
    int me = world_rank();
    CHECK_MPI(MPI_Allgather(&me, 1, MPI_INT, members, 1, MPI_INT, sub));
    for (int k = 0; k < size; ++k) {
        int c[MAXD], kc[MAXD];
        int rest = k;
        for (int j = kept - 1; j >= 0; --j) {
            kc[j] = rest % sub_dims[j];
            rest /= sub_dims[j];
        }
        for (int i = 0, j = 0; i < nd; ++i)
            c[i] = remain[i] ? kc[j++] : coords[i];
        int wr = -1;
        CHECK_MPI(MPI_Cart_rank(cart, c, &wr));
        /* The grid was made with reorder = false: grid rank = world rank. */
        CHECKF(members[k] == wr, "mask %#x: member %d is world rank %d, expected %d", mask, k, members[k], wr);
    }
    free(members);

    /* A sub-grid of the sub-grid, dropping its first dimension (keeping
     * none is cart_sub_none.c's). */
    if (kept > 1) {
        int remain2[MAXD];
        for (int k = 0; k < kept; ++k)
            remain2[k] = k > 0;
        MPI_Comm sub2;
        CHECK_MPI(MPI_Cart_sub(sub, remain2, &sub2));
        int s2 = -1;
        CHECK_MPI(MPI_Comm_size(sub2, &s2));
        CHECKF(s2 == points / sub_dims[0], "sub-sub-grid of %d processes, expected %d", s2,
               points / sub_dims[0]);
        CHECK_MPI(MPI_Comm_free(&sub2));
    }
    CHECK_MPI(MPI_Comm_free(&sub));
}

static void every_mask(int nd)
{
    int dims[MAXD] = {0, 0, 0, 0};
    int periods[MAXD] = {1, 0, 1, 0};
    CHECK_MPI(MPI_Dims_create(world_size(), nd, dims));
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart));
    /* Mask 0 (no dimension kept) is cart_sub_none.c's. */
    for (int mask = 1; mask < (1 << nd); ++mask)
        check_mask(cart, nd, dims, periods, mask);
    CHECK_MPI(MPI_Comm_free(&cart));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    every_mask(3);
    every_mask(4);
    MPI_Finalize();
    return 0;
}
