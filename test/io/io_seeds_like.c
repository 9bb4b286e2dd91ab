/*
 * A checkpoint/restart pattern (MPI-3.1 13.3 views with 4.1.4's
 * MPI_Type_create_darray): every rank of MPI_COMM_WORLD writes its block of
 * a 2-D global array of doubles (MPI_DISTRIBUTE_BLOCK in both dimensions
 * over the process grid of MPI_Dims_create; uneven, some blocks possibly
 * empty) with MPI_File_write_all through a darray filetype after a header;
 * then half the ranks (a sub-communicator of MPI_Comm_split) read it back
 * with a different decomposition (their own grid, BLOCK rows and CYCLIC(2)
 * columns) with MPI_File_read_all and check every element, and one reader
 * checks the whole file with the default view.  The local element order of
 * a darray (C order: the global order restricted to the local elements) and
 * its size are computed by hand.
 */
#include "io_common.h"

enum { HDR = 64 };

static double gval(int i, int j) { return i * 1000.0 + j + 0.5; }

/* Does process `p` of `np` own global index g of an axis of length len?
 * darg 0: block (MPI_DISTRIBUTE_DFLT_DARG, ceil(len / np) per process);
 * darg > 0: cyclic with blocks of darg. */
static int owns(int g, int len, int np, int p, int darg)
{
    if (darg == 0) {
        const int b = (len + np - 1) / np;
        return g / b == p;
    }
    return (g / darg) % np == p;
}

/* The indices of an axis owned by p, in increasing order; returns how many. */
static int owned(int len, int np, int p, int darg, int *out)
{
    int k = 0;
    for (int g = 0; g < len; ++g)
        if (owns(g, len, np, p, darg))
            out[k++] = g;
    return k;
}

/* The darray filetype of grid position `me` (rank in the grid, row-major)
 * of a dims[0] x dims[1] grid, and the rows/cols it owns. */
static MPI_Datatype darray(int gsize, int me, const int dims[2], const int gs[2], int coldarg,
                           int *rows, int *nrows, int *cols, int *ncols)
{
    int distribs[2] = {MPI_DISTRIBUTE_BLOCK,
                       coldarg == 0 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, coldarg == 0 ? MPI_DISTRIBUTE_DFLT_DARG : coldarg};
    int psizes[2] = {dims[0], dims[1]};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_darray(gsize, me, 2, gs, distribs, dargs, psizes, MPI_ORDER_C,
                                     MPI_DOUBLE, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    const int pr = me / dims[1], pc = me % dims[1];
    *nrows = owned(gs[0], dims[0], pr, 0, rows);
    *ncols = owned(gs[1], dims[1], pc, coldarg, cols);
    int size = -1;
    CHECK_MPI(MPI_Type_size(t, &size));
    CHECKF(size == *nrows * *ncols * (int)sizeof(double), "darray size %d, expected %d", size,
           *nrows * *ncols * (int)sizeof(double));
    MPI_Aint lb = -1, ext = -1;
    CHECK_MPI(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)gs[0] * gs[1] * (MPI_Aint)sizeof(double));
    return t;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank(), n = world_size();
    char path[IO_PATH_MAX];
    io_path(MPI_COMM_WORLD, "io_seeds_like", 0, path);

    int dims[2] = {0, 0};
    CHECK_MPI(MPI_Dims_create(n, 2, dims));
    const int gs[2] = {3 * dims[0] + 2, 2 * dims[1] + 3};
    int *rows = check_malloc((size_t)gs[0] * sizeof(int));
    int *cols = check_malloc((size_t)gs[1] * sizeof(int));
    int nrows = 0, ncols = 0;

    /* ---- write: all ranks, block x block ---- */
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    if (rank == 0) {
        char hdr[HDR];
        memset(hdr, 0, sizeof hdr);
        snprintf(hdr, sizeof hdr, "checkpoint %d x %d", gs[0], gs[1]);
        CHECK_MPI(MPI_File_write_at(fh, 0, hdr, HDR, MPI_CHAR, &st));
    }
    MPI_Datatype wt = darray(n, rank, dims, gs, 0, rows, &nrows, cols, &ncols);
    CHECK_MPI(MPI_File_set_view(fh, HDR, MPI_DOUBLE, wt, "native", MPI_INFO_NULL));
    const int mine = nrows * ncols;
    double *loc = check_malloc((size_t)mine * sizeof(double));
    for (int a = 0; a < nrows; ++a)
        for (int b = 0; b < ncols; ++b)
            loc[a * ncols + b] = gval(rows[a], cols[b]);
    CHECK_MPI(MPI_File_write_all(fh, loc, mine, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == mine);
    free(loc);
    CHECK_MPI(MPI_Type_free(&wt));
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- restart: the first half of the ranks read, block x cyclic(2) ---- */
    const int nr = (n + 1) / 2;
    MPI_Comm readers;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < nr ? 0 : MPI_UNDEFINED, rank, &readers));
    if (rank < nr) {
        CHECK(readers != MPI_COMM_NULL);
        int rr = -1;
        CHECK_MPI(MPI_Comm_rank(readers, &rr));
        CHECK(rr == rank);
        int rdims[2] = {0, 0};
        CHECK_MPI(MPI_Dims_create(nr, 2, rdims));
        CHECK_MPI(MPI_File_open(readers, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Offset size = -1;
        CHECK_MPI(MPI_File_get_size(fh, &size));
        CHECK(size == HDR + (MPI_Offset)gs[0] * gs[1] * 8);
        MPI_Datatype rt = darray(nr, rr, rdims, gs, 2, rows, &nrows, cols, &ncols);
        CHECK_MPI(MPI_File_set_view(fh, HDR, MPI_DOUBLE, rt, "native", MPI_INFO_NULL));
        const int cnt = nrows * ncols;
        double *got = check_malloc((size_t)(cnt + 1) * sizeof(double));
        for (int k = 0; k <= cnt; ++k)
            got[k] = -1.0;
        CHECK_MPI(MPI_File_read_all(fh, got, cnt, MPI_DOUBLE, &st));
        CHECK(io_count(&st, MPI_DOUBLE) == cnt);
        for (int a = 0; a < nrows; ++a)
            for (int b = 0; b < ncols; ++b)
                CHECKF(got[a * ncols + b] == gval(rows[a], cols[b]),
                       "element (%d, %d) read %g, expected %g", rows[a], cols[b],
                       got[a * ncols + b], gval(rows[a], cols[b]));
        CHECK(got[cnt] == -1.0);
        free(got);
        CHECK_MPI(MPI_Type_free(&rt));
        /* one reader checks the whole file through the default view */
        CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        if (rr == nr - 1) {
            char hdr[HDR], want[HDR];
            memset(want, 0, sizeof want);
            snprintf(want, sizeof want, "checkpoint %d x %d", gs[0], gs[1]);
            CHECK_MPI(MPI_File_read_at(fh, 0, hdr, HDR, MPI_CHAR, &st));
            CHECK(memcmp(hdr, want, HDR) == 0);
            double *all = check_malloc((size_t)gs[0] * gs[1] * sizeof(double));
            CHECK_MPI(MPI_File_read_at(fh, HDR, all, gs[0] * gs[1], MPI_DOUBLE, &st));
            CHECK(io_count(&st, MPI_DOUBLE) == gs[0] * gs[1]);
            for (int i = 0; i < gs[0]; ++i)
                for (int j = 0; j < gs[1]; ++j)
                    CHECKF(all[i * gs[1] + j] == gval(i, j), "file element (%d, %d) is %g", i, j,
                           all[i * gs[1] + j]);
            free(all);
        }
        CHECK_MPI(MPI_File_close(&fh));
        CHECK_MPI(MPI_Comm_free(&readers));
    } else {
        CHECK(readers == MPI_COMM_NULL);
    }

    free(rows);
    free(cols);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
