/* Seed 004, examples 4.6, 4.7 and 4.9 with point-to-point calls instead of
 * MPI_Gatherv: every rank sends a column of its 100 x 150 array as one
 * element of a vector type, and the root receives plain MPI_INTs at a
 * stride.  The receive matches the type signature (100 - r ints), not the
 * type.  Then the reverse: the root sends ints, the others receive them
 * into a column of their array. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int root = 0;
    const int rank = world_rank();
    const int gsize = world_size();
    int(*sendarray)[SEED4_COLS] = seed4_array(rank);

    /* 4.6: column 0, 100 ints, received at rbuf + i * stride. */
    const int stride = 110;
    MPI_Datatype stype;
    CHECK_MPI(MPI_Type_vector(100, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    MPI_Request req;
    CHECK_MPI(MPI_Isend(sendarray, 1, stype, root, 46, MPI_COMM_WORLD, &req));
    if (rank == root) {
        int *rbuf = seed4_rbuf((long)gsize * stride);
        for (int i = 0; i < gsize; ++i) {
            MPI_Status st;
            int n = -1;
            CHECK_MPI(MPI_Recv(rbuf + i * stride, 100, MPI_INT, i, 46, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
            CHECKF(n == 100, "4.6: got %d ints from rank %d", n, i);
            seed4_check_column(rbuf, (long)i * stride, 100, i, 0);
            seed4_check_untouched(rbuf, (long)i * stride + 100, stride - 100);
        }
        free(rbuf);
    }
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Type_free(&stype));

    /* 4.7 / 4.9: rank r sends 100 - r ints of column r; strides vary. */
    const int nsend = 100 - (rank % 100);
    CHECK_MPI(MPI_Type_vector(nsend, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    CHECK_MPI(MPI_Isend(&sendarray[0][rank % 100], 1, stype, root, 47, MPI_COMM_WORLD, &req));
    /* The request holds the type: freeing it now must not disturb the send. */
    CHECK_MPI(MPI_Type_free(&stype));
    if (rank == root) {
        long offset = 0;
        long *displs = (long *)check_malloc(sizeof(long) * (size_t)gsize);
        for (int i = 0; i < gsize; ++i) {
            displs[i] = offset;
            offset += 100 + 3 * i; /* stride[i] of example 4.9 */
        }
        int *rbuf = seed4_rbuf(offset);
        for (int i = 0; i < gsize; ++i) {
            MPI_Status st;
            int n = -1;
            CHECK_MPI(MPI_Recv(rbuf + displs[i], 100, MPI_INT, i, 47, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
            CHECKF(n == 100 - (i % 100), "4.7: got %d ints from rank %d", n, i);
        }
        for (int i = 0; i < gsize; ++i) {
            seed4_check_column(rbuf, displs[i], 100 - (i % 100), i, i % 100);
            seed4_check_untouched(rbuf, displs[i] + 100 - (i % 100), 3 * i + (i % 100));
        }
        free(rbuf);
        free(displs);
    }
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* The reverse: the root sends 100 ints; the others receive them into
     * column 5 of their array through the vector type. */
    CHECK_MPI(MPI_Type_vector(100, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    if (rank == root) {
        int col[100];
        for (int i = 0; i < 100; ++i)
            col[i] = -1000 - i;
        for (int i = 0; i < gsize; ++i)
            if (i != root)
                CHECK_MPI(MPI_Send(col, 100, MPI_INT, i, 48, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&sendarray[0][5], 1, stype, root, 48, MPI_COMM_WORLD, &st));
        int n = -1;
        CHECK_MPI(MPI_Get_elements(&st, stype, &n));
        CHECKF(n == 100, "MPI_Get_elements says %d", n);
        for (int i = 0; i < SEED4_ROWS; ++i)
            for (int j = 0; j < SEED4_COLS; ++j) {
                const int want = j == 5 ? -1000 - i : seed4_value(rank, i, j);
                CHECKF(sendarray[i][j] == want, "[%d][%d] = %d, expected %d", i, j, sendarray[i][j], want);
            }
    }
    CHECK_MPI(MPI_Type_free(&stype));
    free(sendarray);
    MPI_Finalize();
    return 0;
}
