/* MPI_Pack, MPI_Unpack and MPI_Pack_size: a header, a column of a matrix
 * and an array of structs packed one after another into one buffer, sent
 * as MPI_PACKED around a ring, and unpacked in order into other layouts;
 * and a message sent with a derived type, received as MPI_PACKED and
 * unpacked. */
#include <stddef.h>

#include "../mpi/check.h"

struct item {
    int id;
    double w;
    char c;
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank(), size = world_size();
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    enum { ROWS = 500, COLS = 6, ITEMS = 300 };

    double *m = (double *)check_malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; ++i)
        m[i] = rank * 1e6 + i;
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));

    struct item items[ITEMS];
    for (int i = 0; i < ITEMS; ++i) {
        items[i].id = rank * 1000 + i;
        items[i].w = i * 0.5;
        items[i].c = (char)('A' + i % 26);
    }
    int ibl[3] = {1, 1, 1};
    MPI_Aint idisp[3] = {offsetof(struct item, id), offsetof(struct item, w), offsetof(struct item, c)};
    MPI_Datatype ity[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, itype;
    CHECK_MPI(MPI_Type_create_struct(3, ibl, idisp, ity, &itype));
    CHECK_MPI(MPI_Type_commit(&itype));
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_get_extent(itype, &lb, &ext));
    CHECKF(lb == 0 && ext == (MPI_Aint)sizeof(struct item), "struct item: lb %ld extent %ld, C says %zu",
           (long)lb, (long)ext, sizeof(struct item));

    /* Pack: header, column 2, every item. */
    int s1, s2, s3;
    CHECK_MPI(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1));
    CHECK_MPI(MPI_Pack_size(1, col, MPI_COMM_WORLD, &s2));
    CHECK_MPI(MPI_Pack_size(ITEMS, itype, MPI_COMM_WORLD, &s3));
    CHECKF(s2 >= ROWS * 8 && s3 >= ITEMS * 13, "MPI_Pack_size: %d and %d are too small", s2, s3);
    const int cap = s1 + s2 + s3;
    char *packed = (char *)check_malloc((size_t)cap);
    int pos = 0;
    const int header = rank + 100;
    CHECK_MPI(MPI_Pack(&header, 1, MPI_INT, packed, cap, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(m + 2, 1, col, packed, cap, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(items, ITEMS, itype, packed, cap, &pos, MPI_COMM_WORLD));
    CHECKF(pos <= cap, "position %d beyond the packed size %d", pos, cap);

    char *in = (char *)check_malloc((size_t)cap);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(packed, pos, MPI_PACKED, to, 1, in, cap, MPI_PACKED, from, 1, MPI_COMM_WORLD, &st));
    int got = 0;
    CHECK_MPI(MPI_Get_count(&st, MPI_PACKED, &got));

    /* Unpack into other layouts: the column into a plain array, the items
     * into an array of structs. */
    int p = 0, h = -1;
    double column[ROWS];
    struct item back[ITEMS];
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_Unpack(in, got, &p, &h, 1, MPI_INT, MPI_COMM_WORLD));
    CHECKF(h == from + 100, "header %d", h);
    CHECK_MPI(MPI_Unpack(in, got, &p, column, ROWS, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int i = 0; i < ROWS; ++i)
        CHECKF(column[i] == from * 1e6 + i * COLS + 2, "column[%d] = %g", i, column[i]);
    CHECK_MPI(MPI_Unpack(in, got, &p, back, ITEMS, itype, MPI_COMM_WORLD));
    for (int i = 0; i < ITEMS; ++i)
        CHECKF(back[i].id == from * 1000 + i && back[i].w == i * 0.5 && back[i].c == (char)('A' + i % 26),
               "item %d: %d %g %c", i, back[i].id, back[i].w, back[i].c);
    CHECKF(p == got, "unpacked %d of %d bytes", p, got);

    /* Sent with the column type, received as MPI_PACKED, unpacked as doubles. */
    CHECK_MPI(MPI_Sendrecv(m + 5, 1, col, to, 2, in, cap, MPI_PACKED, from, 2, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_PACKED, &got));
    p = 0;
    CHECK_MPI(MPI_Unpack(in, got, &p, column, ROWS, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int i = 0; i < ROWS; ++i)
        CHECKF(column[i] == from * 1e6 + i * COLS + 5, "column[%d] = %g", i, column[i]);

    /* Unpack straight into a column of a matrix. */
    double *m2 = (double *)check_malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; ++i)
        m2[i] = -1;
    p = 0;
    CHECK_MPI(MPI_Unpack(in, got, &p, m2 + 1, 1, col, MPI_COMM_WORLD));
    for (int i = 0; i < ROWS * COLS; ++i) {
        const double want = i % COLS == 1 ? from * 1e6 + (i / COLS) * COLS + 5 : -1;
        CHECKF(m2[i] == want, "m2[%d] = %g, expected %g", i, m2[i], want);
    }

    CHECK_MPI(MPI_Type_free(&itype));
    CHECK_MPI(MPI_Type_free(&col));
    free(m2);
    free(in);
    free(packed);
    free(m);
    MPI_Finalize();
    return 0;
}
