/*
 * Cartesian grids on random shapes: for several grids made from the job
 * size (random number of dimensions, some fixed by hand, random periods,
 * sometimes smaller than the job), every process checks
 *   - MPI_COMM_NULL exactly for the ranks beyond the grid;
 *   - MPI_Topo_test, MPI_Cartdim_get, MPI_Cart_get, also on a MPI_Comm_dup;
 *   - MPI_Cart_coords / MPI_Cart_rank round trips for every rank, row-major;
 *   - periodic wrap in MPI_Cart_rank;
 *   - MPI_Cart_shift against coordinates, MPI_PROC_NULL off non-periodic
 *     edges, and a ring of messages along every dimension;
 *   - with reorder = true, that MPI_Cart_map names the same rank as
 *     MPI_Cart_create gives (where the MPI promises it).
 * All processes draw the same shapes from the same seed (and only the
 * shape choice draws from it, so ranks left out of a grid stay in step).
 */
#include "check.h"

/* Whether MPI_Cart_map / MPI_Graph_map name the rank that MPI_Cart_create /
 * MPI_Graph_create(reorder = true) then gives.  shmpi promises it and MPICH
 * does it; the standard only suggests it (MPI-3.1 7.5.8), and Open MPI 4.1
 * does not. */
static int map_matches_create(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    return strncmp(lib, "shmpi", 5) == 0 || strncmp(lib, "MPICH", 5) == 0;
}

static unsigned lcg_state = 12345;
static unsigned lcg(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (lcg_state >> 16) & 0x7fff;
}

static int expect_rank(int ndims, const int *dims, const int *coords)
{
    int r = 0;
    for (int i = 0; i < ndims; ++i)
        r = r * dims[i] + coords[i];
    return r;
}

static void check_grid(int ndims, const int *dims, const int *periods, int reorder)
{
    const int wrank = world_rank();
    int points = 1;
    for (int i = 0; i < ndims; ++i)
        points *= dims[i];
    int mapped = -2;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, ndims, dims, periods, &mapped));
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, reorder, &cart));
    if (!reorder && wrank >= points) {
        CHECKF(cart == MPI_COMM_NULL, "rank %d is beyond a grid of %d points but got a communicator", wrank,
               points);
    }
    if (reorder) {
        int r = MPI_UNDEFINED;
        if (cart != MPI_COMM_NULL)
            CHECK_MPI(MPI_Comm_rank(cart, &r));
        CHECKF(r == mapped || !map_matches_create(), "MPI_Cart_map said %d, MPI_Cart_create gave %d", mapped, r);
    }
    if (cart == MPI_COMM_NULL) {
        CHECKF(mapped == MPI_UNDEFINED || !map_matches_create(), "no communicator but MPI_Cart_map said %d", mapped);
        return;
    }
    int size = -1, rank = -1, status = -1, nd = -1;
    CHECK_MPI(MPI_Comm_size(cart, &size));
    CHECK_MPI(MPI_Comm_rank(cart, &rank));
    CHECKF(size == points, "grid of %d points has a communicator of %d", points, size);
    if (!reorder)
        CHECKF(rank == wrank, "reorder = false moved world rank %d to %d", wrank, rank);
    CHECK_MPI(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART);
    CHECK_MPI(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == ndims);

    int gdims[8], gperiods[8], mine[8], coords[8], wrapped[8];
    CHECK_MPI(MPI_Cart_get(cart, 8, gdims, gperiods, mine));
    for (int i = 0; i < ndims; ++i)
        CHECK(gdims[i] == dims[i] && (gperiods[i] != 0) == (periods[i] != 0));
    CHECKF(expect_rank(ndims, dims, mine) == rank, "my coordinates give rank %d, I am %d",
           expect_rank(ndims, dims, mine), rank);

    /* MPI_Comm_dup keeps the topology. */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(cart, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &status));
    CHECKF(status == MPI_CART, "MPI_Topo_test of a duplicate: %d", status);
    int ddims[8], dperiods[8], dcoords[8];
    CHECK_MPI(MPI_Cart_get(dup, 8, ddims, dperiods, dcoords));
    for (int i = 0; i < ndims; ++i)
        CHECK(ddims[i] == dims[i] && (dperiods[i] != 0) == (periods[i] != 0) && dcoords[i] == mine[i]);
    CHECK_MPI(MPI_Comm_free(&dup));

    for (int r = 0; r < size; ++r) {
        CHECK_MPI(MPI_Cart_coords(cart, r, ndims, coords));
        CHECKF(expect_rank(ndims, dims, coords) == r, "MPI_Cart_coords(%d) is not row-major", r);
        int back = -1;
        CHECK_MPI(MPI_Cart_rank(cart, coords, &back));
        CHECKF(back == r, "MPI_Cart_rank(MPI_Cart_coords(%d)) = %d", r, back);
        /* Periodic dimensions wrap, both ways. */
        for (int i = 0; i < ndims; ++i)
            wrapped[i] = periods[i] ? coords[i] + ((r + i) % 3 - 1) * dims[i] * (1 + r % 2) : coords[i];
        CHECK_MPI(MPI_Cart_rank(cart, wrapped, &back));
        CHECKF(back == r, "MPI_Cart_rank of wrapped coordinates of %d = %d", r, back);
    }

    for (int d = 0; d < ndims; ++d) {
        for (int disp = -dims[d] - 1; disp <= dims[d] + 1; ++disp) {
            int src = -5, dst = -5;
            CHECK_MPI(MPI_Cart_shift(cart, d, disp, &src, &dst));
            for (int s = -1; s <= 1; s += 2) {
                int c[8];
                memcpy(c, mine, sizeof c);
                c[d] += s * disp;
                int want;
                if (periods[d]) {
                    c[d] = ((c[d] % dims[d]) + dims[d]) % dims[d];
                    want = expect_rank(ndims, dims, c);
                } else if (c[d] < 0 || c[d] >= dims[d]) {
                    want = MPI_PROC_NULL;
                } else {
                    want = expect_rank(ndims, dims, c);
                }
                const int got = s < 0 ? src : dst;
                CHECKF(got == want, "MPI_Cart_shift(dim %d, disp %d): %s is %d, expected %d", d, disp,
                       s < 0 ? "source" : "dest", got, want);
            }
        }
        /* A message one step up dimension d. */
        int src = -1, dst = -1;
        CHECK_MPI(MPI_Cart_shift(cart, d, 1, &src, &dst));
        int out = rank, in = -7;
        CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, dst, 7, &in, 1, MPI_INT, src, 7, cart, MPI_STATUS_IGNORE));
        CHECKF(in == (src == MPI_PROC_NULL ? -7 : src), "shift message along %d: got %d from %d", d, in, src);
    }
    CHECK_MPI(MPI_Comm_free(&cart));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    /* The shapes of the seed: a ring, a 2-D torus, and zero dimensions. */
    check_grid(1, (const int[]){size}, (const int[]){1}, 0);
    int none[1] = {0}; /* zero dimensions; some MPIs refuse NULL arrays */
    check_grid(0, none, none, 0);
    for (int iter = 0; iter < 12; ++iter) {
        const int ndims = 1 + (int)(lcg() % 4);
        int dims[8] = {0}, periods[8];
        /* Sometimes a grid smaller than the job. */
        int points = size;
        if (lcg() % 3 == 0 && size > 1)
            points = 1 + (int)(lcg() % (unsigned)size);
        /* Sometimes fix the first dimension to a divisor. */
        if (lcg() % 2 == 0 && ndims > 1) {
            int d = 1 + (int)(lcg() % (unsigned)points);
            while (points % d != 0)
                --d;
            dims[0] = d;
        }
        CHECK_MPI(MPI_Dims_create(points, ndims, dims));
        for (int i = 0; i < ndims; ++i)
            periods[i] = (int)(lcg() % 2);
        check_grid(ndims, dims, periods, (int)(lcg() % 2));
    }
    MPI_Finalize();
    return 0;
}
