/*
 * derived.c: collectives on derived datatypes.
 *
 *  - Bcast, Gather, Scatter, Allgather (also in place) and Alltoall with
 *    strided (vector) and resized types on one side and plain ints on the
 *    other: the data lands where the type map says, and the gaps between
 *    the elements stay untouched.
 *  - Predefined operations on a derived type built from one basic type:
 *    MPI_SUM on a vector of doubles, MPI_MAXLOC on a contiguous type of
 *    MPI_DOUBLE_INT pairs (shmpi only: MPICH 4.0 refuses them).
 *  - A user operation on a struct type with a hole: the function sees the
 *    elements laid out as the type describes.
 *  - MPI_SUM on a struct that mixes basic types is MPI_ERR_OP; an
 *    uncommitted type is MPI_ERR_TYPE.
 */
#include "coll_test.h"

#include <stddef.h>

enum { N = 50, HOLE = -99 };

typedef struct {
    double value;
    int count;
    char pad[4];
} record;

/* inout = in + inout, field by field. */
static void add_records(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
    (void)type;
    const record *in = invec;
    record *io = inoutvec;
    for (int i = 0; i < *len; ++i) {
        io[i].value += in[i].value;
        io[i].count += in[i].count;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();

    /* Every other int: N elements spread over 2N ints. */
    MPI_Datatype every_other;
    CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    int *strided = check_malloc(sizeof(int) * 2 * N * (size_t)size);
    int *plain = check_malloc(sizeof(int) * N * (size_t)size);

    /* ---- Bcast of a strided type ---- */
    for (int root = 0; root < size; ++root) {
        for (int i = 0; i < 2 * N; ++i)
            strided[i] = rank == root ? (i % 2 ? HOLE : root * 1000 + i / 2) : HOLE;
        CHECK_MPI(MPI_Bcast(strided, 1, every_other, root, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * N; ++i)
            CHECKF(strided[i] == (i % 2 ? HOLE : root * 1000 + i / 2), "bcast from %d: int %d is %d", root, i,
                   strided[i]);
    }

    /* ---- Gather: strided send, plain receive; Scatter the other way ---- */
    for (int i = 0; i < 2 * N; ++i)
        strided[i] = i % 2 ? HOLE : rank * 1000 + i / 2;
    for (int root = 0; root < size; ++root) {
        CHECK_MPI(MPI_Gather(strided, 1, every_other, plain, N, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int r = 0; r < size; ++r)
                for (int i = 0; i < N; ++i)
                    CHECKF(plain[r * N + i] == r * 1000 + i, "gather to %d: block %d int %d", root, r, i);
    }
    for (int root = 0; root < size; ++root) {
        for (int i = 0; i < N * size; ++i)
            plain[i] = (i / N) * 1000 + i % N + root;
        int mine[2 * N];
        for (int i = 0; i < 2 * N; ++i)
            mine[i] = HOLE;
        CHECK_MPI(MPI_Scatter(plain, N, MPI_INT, mine, 1, every_other, root, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * N; ++i)
            CHECKF(mine[i] == (i % 2 ? HOLE : rank * 1000 + i / 2 + root), "scatter from %d: int %d", root, i);
    }

    /* ---- Allgather into a resized type: rank r's ints interleave ---- */
    {
        MPI_Datatype spaced; /* one int, extent of `size` ints */
        CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(sizeof(int) * (size_t)size), &spaced));
        CHECK_MPI(MPI_Type_commit(&spaced));
        /* Receive type: N of them, then resized to one int so that block r
         * starts at int r. */
        MPI_Datatype column, column1;
        CHECK_MPI(MPI_Type_contiguous(N, spaced, &column));
        CHECK_MPI(MPI_Type_create_resized(column, 0, sizeof(int), &column1));
        CHECK_MPI(MPI_Type_commit(&column1));
        int mine[N];
        for (int i = 0; i < N; ++i)
            mine[i] = rank * 1000 + i;
        for (int i = 0; i < N * size; ++i)
            plain[i] = HOLE;
        CHECK_MPI(MPI_Allgather(mine, N, MPI_INT, plain, 1, column1, MPI_COMM_WORLD));
        for (int i = 0; i < N * size; ++i)
            CHECKF(plain[i] == (i % size) * 1000 + i / size, "allgather interleaved: int %d is %d", i, plain[i]);
        /* In place: my own column is already there. */
        for (int i = 0; i < N * size; ++i)
            plain[i] = i % size == rank ? rank * 1000 + i / size : HOLE;
        CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, plain, 1, column1, MPI_COMM_WORLD));
        for (int i = 0; i < N * size; ++i)
            CHECKF(plain[i] == (i % size) * 1000 + i / size, "allgather in place: int %d is %d", i, plain[i]);
        CHECK_MPI(MPI_Type_free(&column1));
        CHECK_MPI(MPI_Type_free(&column));
        CHECK_MPI(MPI_Type_free(&spaced));
    }

    /* ---- Alltoall: strided on both sides ---- */
    {
        int *s = check_malloc(sizeof(int) * 2 * N * (size_t)size);
        int *r = check_malloc(sizeof(int) * 2 * N * (size_t)size);
        MPI_Datatype block; /* N ints every other one, extent 2N ints */
        CHECK_MPI(MPI_Type_create_resized(every_other, 0, (MPI_Aint)(sizeof(int) * 2 * N), &block));
        CHECK_MPI(MPI_Type_commit(&block));
        for (int i = 0; i < 2 * N * size; ++i) {
            s[i] = i % 2 ? HOLE : rank * 100000 + (i / (2 * N)) * 1000 + (i % (2 * N)) / 2;
            r[i] = HOLE;
        }
        CHECK_MPI(MPI_Alltoall(s, 1, block, r, 1, block, MPI_COMM_WORLD));
        for (int i = 0; i < 2 * N * size; ++i) {
            const int from = i / (2 * N);
            CHECKF(r[i] == (i % 2 ? HOLE : from * 100000 + rank * 1000 + (i % (2 * N)) / 2),
                   "alltoall: int %d is %d", i, r[i]);
        }
        CHECK_MPI(MPI_Type_free(&block));
        free(s);
        free(r);
    }

#if defined(SHMPI)
    /* MPI-3.1 allows predefined operations on the types of its lists;
     * shmpi also applies them to a derived type made of one such type (as
     * MPI-4 does), MPICH 4.0 refuses. */
    /* ---- MPI_SUM on a vector of doubles ---- */
    {
        MPI_Datatype dv;
        CHECK_MPI(MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &dv));
        CHECK_MPI(MPI_Type_commit(&dv));
        double in[3 * N], out[3 * N];
        for (int i = 0; i < 3 * N; ++i) {
            in[i] = i % 3 ? -1.0 : rank + 0.5 * i;
            out[i] = -7.0;
        }
        CHECK_MPI(MPI_Allreduce(in, out, 1, dv, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 3 * N; ++i) {
            const double want = i % 3 ? -7.0 : size * (size - 1) / 2.0 + size * 0.5 * i;
            CHECKF(out[i] == want, "sum of a double vector: double %d is %g, expected %g", i, out[i], want);
        }
        for (int i = 0; i < 3 * N; ++i)
            out[i] = in[i];
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, 1, dv, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 3 * N; ++i) {
            const double want = i % 3 ? -1.0 : size * (size - 1) / 2.0 + size * 0.5 * i;
            CHECKF(out[i] == want, "in place: double %d is %g, expected %g", i, out[i], want);
        }
        CHECK_MPI(MPI_Type_free(&dv));
    }

    /* ---- MPI_MAXLOC on a contiguous type of MPI_DOUBLE_INT ---- */
    {
        MPI_Datatype pairs;
        CHECK_MPI(MPI_Type_contiguous(4, MPI_DOUBLE_INT, &pairs));
        CHECK_MPI(MPI_Type_commit(&pairs));
        struct {
            double v;
            int i;
        } in[8], out[8];
        for (int k = 0; k < 8; ++k) {
            in[k].v = (double)((rank + k) % 3);
            in[k].i = rank;
        }
        CHECK_MPI(MPI_Allreduce(in, out, 2, pairs, MPI_MAXLOC, MPI_COMM_WORLD));
        for (int k = 0; k < 8; ++k) {
            double best = -1;
            int who = -1;
            for (int r = 0; r < size; ++r)
                if ((double)((r + k) % 3) > best) {
                    best = (double)((r + k) % 3);
                    who = r;
                }
            CHECKF(out[k].v == best && out[k].i == who, "maxloc pair %d: (%g, %d), expected (%g, %d)", k, out[k].v,
                   out[k].i, best, who);
        }
        CHECK_MPI(MPI_Type_free(&pairs));
    }
#endif

    /* ---- A user operation on a struct with a hole ---- */
    {
        MPI_Datatype rec;
        const int lens[2] = {1, 1};
        const MPI_Aint disps[2] = {offsetof(record, value), offsetof(record, count)};
        const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
        MPI_Datatype raw;
        CHECK_MPI(MPI_Type_create_struct(2, lens, disps, types, &raw));
        CHECK_MPI(MPI_Type_create_resized(raw, 0, sizeof(record), &rec));
        CHECK_MPI(MPI_Type_commit(&rec));
        MPI_Op add;
        CHECK_MPI(MPI_Op_create(add_records, 1, &add));
        record in[N], out[N];
        for (int i = 0; i < N; ++i) {
            in[i].value = rank * 0.25 + i;
            in[i].count = rank + 1;
            memset(in[i].pad, 0x11, sizeof in[i].pad);
            out[i].value = -1;
            out[i].count = -1;
        }
        for (int root = 0; root < size; ++root) {
            CHECK_MPI(MPI_Reduce(in, out, N, rec, add, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < N; ++i)
                    CHECKF(out[i].value == size * (size - 1) * 0.125 + (double)size * i &&
                               out[i].count == size * (size + 1) / 2,
                           "user op on a struct, record %d: (%g, %d)", i, out[i].value, out[i].count);
        }
        /* MPI_SUM is not defined on a struct of a double and an int. */
        errors_return(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_Allreduce(in, out, N, rec, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        errors_fatal(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Op_free(&add));
        CHECK_MPI(MPI_Type_free(&rec));
        CHECK_MPI(MPI_Type_free(&raw));
    }

    /* ---- An uncommitted type ---- */
    {
        MPI_Datatype loose;
        CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &loose));
        errors_return(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_Bcast(plain, 1, loose, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Allgather(plain, 1, loose, strided, 1, loose, MPI_COMM_WORLD), MPI_ERR_TYPE);
        errors_fatal(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Type_free(&loose));
    }

    CHECK_MPI(MPI_Type_free(&every_other));
    free(strided);
    free(plain);
    MPI_Finalize();
    return 0;
}
