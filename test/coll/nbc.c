/*
 * The nonblocking collectives (MPI-3.1 5.12), each against results computed
 * by hand: every root, MPI_IN_PLACE where the standard allows it, empty,
 * small and rendezvous-sized messages, a non-commutative user operation
 * (2x2 matrix products, whose rank order shows), derived datatypes, and
 * several collectives outstanding at once on two communicators, completed
 * in the reverse order of their start.
 */
#include "coll_test.h"

static int rank, size;

/* A 2x2 matrix of unsigned ints; products wrap modulo 2^32. */
typedef struct {
    unsigned a, b, c, d;
} mat;

static mat mat_mul(mat x, mat y)
{
    mat r = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    return r;
}

/* inout = in * inout: `in` holds the lower ranks' product. */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    mat *x = in;
    mat *y = inout;
    for (int i = 0; i < *len; ++i)
        y[i] = mat_mul(x[i], y[i]);
}

/* mat_op that first asks about the datatype it is given: a freed type's
 * pending operation completes normally (MPI-3.1 4.1.9), and the handle it
 * passes its function is as good as when the operation began. */
static void mat_op_asking(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb = -1, extent = -1;
    int bytes = -1;
    CHECK_MPI(MPI_Type_get_extent(*type, &lb, &extent));
    CHECK_MPI(MPI_Type_size(*type, &bytes));
    CHECKF(lb == 0 && extent == (MPI_Aint)sizeof(mat) && bytes == (int)sizeof(mat),
           "the user function's datatype: lb %ld, extent %ld, size %d", (long)lb, (long)extent, bytes);
    mat_op(in, inout, len, type);
}

static mat mat_of(int r, int i)
{
    mat m = {(unsigned)(r + 2), (unsigned)(i + 1), (unsigned)(3 * r + i), 1u};
    return m;
}

/* The product of ranks lo..hi-1's matrices i, in rank order. */
static mat mat_prod(int lo, int hi, int i)
{
    mat p = {1, 0, 0, 1};
    for (int r = lo; r < hi; ++r)
        p = mat_mul(p, mat_of(r, i));
    return p;
}

static int mat_eq(mat x, mat y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }

static MPI_Datatype mat_type;
static MPI_Op mat_mpi_op;

static int value(int r, int i, int salt) { return r * 1000003 + i * 7 + salt; }

static void wait1(MPI_Request *req)
{
    MPI_Status st;
    CHECK_MPI(MPI_Wait(req, &st));
    CHECK(*req == MPI_REQUEST_NULL);
}

static const int counts[] = {0, 1, 1000, 70000}; /* 70000 ints: above the eager limit */
enum { NCOUNTS = sizeof counts / sizeof counts[0] };

static void test_barrier(void)
{
    MPI_Request reqs[3];
    for (int k = 0; k < 3; ++k)
        CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[k]));
    MPI_Status st[3];
    CHECK_MPI(MPI_Waitall(3, reqs, st));
    for (int k = 0; k < 3; ++k)
        CHECK(reqs[k] == MPI_REQUEST_NULL);
}

static void test_bcast(void)
{
    for (int ci = 0; ci < NCOUNTS; ++ci) {
        const int n = counts[ci];
        int *buf = check_malloc((size_t)n * sizeof(int) + 1);
        for (int root = 0; root < size; ++root) {
            for (int i = 0; i < n; ++i)
                buf[i] = rank == root ? value(root, i, 1) : -1;
            MPI_Request req;
            CHECK_MPI(MPI_Ibcast(buf, n, MPI_INT, root, MPI_COMM_WORLD, &req));
            wait1(&req);
            for (int i = 0; i < n; ++i)
                CHECKF(buf[i] == value(root, i, 1), "Ibcast root %d count %d: [%d] = %d", root, n, i, buf[i]);
        }
        free(buf);
    }
}

static void test_reduce(void)
{
    for (int ci = 0; ci < NCOUNTS; ++ci) {
        const int n = counts[ci];
        int *in = check_malloc((size_t)n * sizeof(int) + 1);
        int *out = check_malloc((size_t)n * sizeof(int) + 1);
        for (int root = 0; root < size; ++root) {
            for (int in_place = 0; in_place < 2; ++in_place) {
                const int ip = in_place && rank == root;
                for (int i = 0; i < n; ++i) {
                    in[i] = value(rank, i, root);
                    out[i] = ip ? in[i] : -7;
                }
                MPI_Request req;
                CHECK_MPI(MPI_Ireduce(ip ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req));
                wait1(&req);
                if (rank != root)
                    continue;
                for (int i = 0; i < n; ++i) {
                    int want = 0;
                    for (int r = 0; r < size; ++r)
                        want += value(r, i, root);
                    CHECKF(out[i] == want, "Ireduce root %d count %d in_place %d: [%d] = %d, want %d", root, n,
                           ip, i, out[i], want);
                }
            }
        }
        free(in);
        free(out);
    }
    /* Non-commutative: the product in rank order, at every root. */
    enum { M = 3 };
    mat in[M], out[M];
    for (int root = 0; root < size; ++root) {
        for (int i = 0; i < M; ++i)
            in[i] = mat_of(rank, i);
        MPI_Request req;
        CHECK_MPI(MPI_Ireduce(in, out, M, mat_type, mat_mpi_op, root, MPI_COMM_WORLD, &req));
        wait1(&req);
        if (rank == root)
            for (int i = 0; i < M; ++i)
                CHECKF(mat_eq(out[i], mat_prod(0, size, i)), "Ireduce (matrices) root %d element %d", root, i);
    }
}

static void test_allreduce(void)
{
    for (int ci = 0; ci < NCOUNTS; ++ci) {
        const int n = counts[ci];
        int *in = check_malloc((size_t)n * sizeof(int) + 1);
        int *out = check_malloc((size_t)n * sizeof(int) + 1);
        for (int in_place = 0; in_place < 2; ++in_place) {
            for (int i = 0; i < n; ++i) {
                in[i] = value(rank, i, 5);
                out[i] = in_place ? in[i] : -7;
            }
            MPI_Request req;
            CHECK_MPI(MPI_Iallreduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req));
            wait1(&req);
            for (int i = 0; i < n; ++i)
                CHECKF(out[i] == value(size - 1, i, 5), "Iallreduce count %d in_place %d: [%d] = %d", n, in_place,
                       i, out[i]);
        }
        free(in);
        free(out);
    }
    enum { M = 5 };
    mat in[M], out[M];
    for (int i = 0; i < M; ++i)
        in[i] = mat_of(rank, i);
    MPI_Request req;
    CHECK_MPI(MPI_Iallreduce(in, out, M, mat_type, mat_mpi_op, MPI_COMM_WORLD, &req));
    wait1(&req);
    for (int i = 0; i < M; ++i)
        CHECKF(mat_eq(out[i], mat_prod(0, size, i)), "Iallreduce (matrices) element %d", i);
}

static void test_scans(void)
{
    enum { M = 4 };
    mat in[M], out[M];
    for (int in_place = 0; in_place < 2; ++in_place) {
        for (int i = 0; i < M; ++i) {
            in[i] = mat_of(rank, i);
            out[i] = in_place ? in[i] : mat_of(-5, -5);
        }
        MPI_Request req;
        CHECK_MPI(MPI_Iscan(in_place ? MPI_IN_PLACE : in, out, M, mat_type, mat_mpi_op, MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int i = 0; i < M; ++i)
            CHECKF(mat_eq(out[i], mat_prod(0, rank + 1, i)), "Iscan in_place %d element %d", in_place, i);

        for (int i = 0; i < M; ++i) {
            in[i] = mat_of(rank, i);
            out[i] = in_place ? in[i] : mat_of(-5, -5);
        }
        CHECK_MPI(MPI_Iexscan(in_place ? MPI_IN_PLACE : in, out, M, mat_type, mat_mpi_op, MPI_COMM_WORLD, &req));
        wait1(&req);
        if (rank > 0)
            for (int i = 0; i < M; ++i)
                CHECKF(mat_eq(out[i], mat_prod(0, rank, i)), "Iexscan in_place %d element %d", in_place, i);
    }
    /* A large sum scan. */
    const int n = 70000;
    int *a = check_malloc((size_t)n * sizeof(int));
    int *b = check_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; ++i)
        a[i] = value(rank, i, 9);
    MPI_Request req;
    CHECK_MPI(MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    wait1(&req);
    for (int i = 0; i < n; i += 97) {
        int want = 0;
        for (int r = 0; r <= rank; ++r)
            want += value(r, i, 9);
        CHECKF(b[i] == want, "Iscan sum [%d] = %d, want %d", i, b[i], want);
    }
    free(a);
    free(b);
}

static void test_reduce_scatter(void)
{
    int *rc = check_malloc((size_t)size * sizeof(int));
    int total = 0;
    for (int r = 0; r < size; ++r) {
        rc[r] = r + 1;
        total += rc[r];
    }
    int *in = check_malloc((size_t)total * sizeof(int));
    int *out = check_malloc((size_t)total * sizeof(int));
    int offset = 0;
    for (int r = 0; r < rank; ++r)
        offset += rc[r];
    for (int in_place = 0; in_place < 2; ++in_place) {
        for (int i = 0; i < total; ++i) {
            in[i] = value(rank, i, 3);
            out[i] = in_place ? in[i] : -7;
        }
        MPI_Request req;
        CHECK_MPI(MPI_Ireduce_scatter(in_place ? MPI_IN_PLACE : in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int i = 0; i < rc[rank]; ++i) {
            int want = 0;
            for (int r = 0; r < size; ++r)
                want += value(r, offset + i, 3);
            CHECKF(out[i] == want, "Ireduce_scatter in_place %d: [%d] = %d, want %d", in_place, i, out[i], want);
        }
    }
    /* The block form, 3 elements each. */
    const int k = 3;
    int *bin = check_malloc((size_t)(k * size) * sizeof(int));
    int bout[3];
    for (int i = 0; i < k * size; ++i)
        bin[i] = value(rank, i, 4);
    MPI_Request req;
    CHECK_MPI(MPI_Ireduce_scatter_block(bin, bout, k, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    wait1(&req);
    for (int i = 0; i < k; ++i) {
        int want = 0;
        for (int r = 0; r < size; ++r)
            want += value(r, rank * k + i, 4);
        CHECKF(bout[i] == want, "Ireduce_scatter_block [%d] = %d, want %d", i, bout[i], want);
    }
    free(bin);
    free(rc);
    free(in);
    free(out);
}

static void test_gather_scatter(void)
{
    const int n = 5;
    int *all = check_malloc((size_t)(n * size) * sizeof(int));
    int mine[5];
    int *rc = check_malloc((size_t)size * sizeof(int));
    int *dis = check_malloc((size_t)size * sizeof(int));
    /* v forms: rank r has r % 3 + 1 elements, placed in reverse rank order. */
    int total = 0;
    for (int r = size - 1; r >= 0; --r) {
        rc[r] = r % 3 + 1;
        dis[r] = total;
        total += rc[r];
    }
    int *vall = check_malloc((size_t)total * sizeof(int));
    for (int root = 0; root < size; ++root) {
        for (int in_place = 0; in_place < 2; ++in_place) {
            const int ip = in_place && rank == root;
            MPI_Request req;
            /* Igather */
            for (int i = 0; i < n; ++i)
                mine[i] = value(rank, i, 11);
            for (int i = 0; i < n * size; ++i)
                all[i] = ip && i / n == rank ? mine[i % n] : -1;
            CHECK_MPI(MPI_Igather(ip ? MPI_IN_PLACE : mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD, &req));
            wait1(&req);
            if (rank == root)
                for (int i = 0; i < n * size; ++i)
                    CHECKF(all[i] == value(i / n, i % n, 11), "Igather root %d in_place %d: [%d] = %d", root, ip,
                           i, all[i]);
            /* Igatherv */
            for (int i = 0; i < total; ++i)
                vall[i] = -1;
            if (ip)
                for (int i = 0; i < rc[rank]; ++i)
                    vall[dis[rank] + i] = value(rank, i, 12);
            for (int i = 0; i < rc[rank]; ++i)
                mine[i] = value(rank, i, 12);
            CHECK_MPI(MPI_Igatherv(ip ? MPI_IN_PLACE : mine, rc[rank], MPI_INT, vall, rc, dis, MPI_INT, root,
                                   MPI_COMM_WORLD, &req));
            wait1(&req);
            if (rank == root)
                for (int r = 0; r < size; ++r)
                    for (int i = 0; i < rc[r]; ++i)
                        CHECKF(vall[dis[r] + i] == value(r, i, 12), "Igatherv root %d: rank %d element %d", root, r, i);
            /* Iscatter */
            for (int i = 0; i < n * size; ++i)
                all[i] = rank == root ? value(i / n, i % n, 13) : -1;
            for (int i = 0; i < n; ++i)
                mine[i] = -1;
            CHECK_MPI(MPI_Iscatter(all, n, MPI_INT, ip ? MPI_IN_PLACE : mine, n, MPI_INT, root, MPI_COMM_WORLD, &req));
            wait1(&req);
            if (!ip)
                for (int i = 0; i < n; ++i)
                    CHECKF(mine[i] == value(rank, i, 13), "Iscatter root %d: [%d] = %d", root, i, mine[i]);
            /* Iscatterv */
            for (int r = 0; r < size; ++r)
                for (int i = 0; i < rc[r]; ++i)
                    vall[dis[r] + i] = rank == root ? value(r, i, 14) : -1;
            for (int i = 0; i < n; ++i)
                mine[i] = -1;
            CHECK_MPI(MPI_Iscatterv(vall, rc, dis, MPI_INT, ip ? MPI_IN_PLACE : mine, rc[rank], MPI_INT, root,
                                    MPI_COMM_WORLD, &req));
            wait1(&req);
            if (!ip)
                for (int i = 0; i < rc[rank]; ++i)
                    CHECKF(mine[i] == value(rank, i, 14), "Iscatterv root %d: [%d] = %d", root, i, mine[i]);
        }
    }
    free(all);
    free(rc);
    free(dis);
    free(vall);
}

static void test_allgather_alltoall(void)
{
    const int n = 3;
    int *all = check_malloc((size_t)(n * size) * sizeof(int));
    int *send = check_malloc((size_t)(n * size) * sizeof(int));
    int *rc = check_malloc((size_t)size * sizeof(int));
    int *rd = check_malloc((size_t)size * sizeof(int));
    int *sc = check_malloc((size_t)size * sizeof(int));
    int *sd = check_malloc((size_t)size * sizeof(int));
    int *rbytes = check_malloc((size_t)size * sizeof(int));
    int *sbytes = check_malloc((size_t)size * sizeof(int));
    MPI_Datatype *types = check_malloc((size_t)size * sizeof(MPI_Datatype));
    int mine[3];
    MPI_Request req;
    for (int in_place = 0; in_place < 2; ++in_place) {
        /* Iallgather */
        for (int i = 0; i < n; ++i)
            mine[i] = value(rank, i, 21);
        for (int i = 0; i < n * size; ++i)
            all[i] = in_place && i / n == rank ? mine[i % n] : -1;
        CHECK_MPI(MPI_Iallgather(in_place ? MPI_IN_PLACE : mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int i = 0; i < n * size; ++i)
            CHECKF(all[i] == value(i / n, i % n, 21), "Iallgather in_place %d: [%d] = %d", in_place, i, all[i]);
        /* Iallgatherv: rank r has r % 3 + 1 elements, in reverse rank order */
        int total = 0;
        for (int r = size - 1; r >= 0; --r) {
            rc[r] = r % 3 + 1;
            rd[r] = total;
            total += rc[r];
        }
        for (int i = 0; i < rc[rank]; ++i)
            mine[i] = value(rank, i, 22);
        for (int i = 0; i < total; ++i)
            all[i] = -1;
        if (in_place)
            for (int i = 0; i < rc[rank]; ++i)
                all[rd[rank] + i] = mine[i];
        CHECK_MPI(MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, rc[rank], MPI_INT, all, rc, rd, MPI_INT,
                                  MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < rc[r]; ++i)
                CHECKF(all[rd[r] + i] == value(r, i, 22), "Iallgatherv in_place %d: rank %d element %d", in_place, r,
                       i);
        /* Ialltoall: block j of rank r holds value(r, j * n + i) */
        for (int i = 0; i < n * size; ++i) {
            send[i] = value(rank, i, 23);
            all[i] = in_place ? send[i] : -1;
        }
        CHECK_MPI(MPI_Ialltoall(in_place ? MPI_IN_PLACE : send, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < n; ++i)
                CHECKF(all[j * n + i] == value(j, rank * n + i, 23), "Ialltoall in_place %d: from %d element %d",
                       in_place, j, i);
        /* Ialltoallv: rank r sends (r + j) % 3 + 1 elements to j; blocks in
         * reverse order on both sides. */
        int st = 0, rt = 0;
        for (int j = size - 1; j >= 0; --j) {
            sc[j] = (rank + j) % 3 + 1;
            sd[j] = st;
            st += sc[j];
            rc[j] = (j + rank) % 3 + 1;
            rd[j] = rt;
            rt += rc[j];
        }
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < sc[j]; ++i)
                send[sd[j] + i] = value(rank, j * 10 + i, 24);
        for (int i = 0; i < rt; ++i)
            all[i] = -1;
        if (in_place) /* the same layout on both sides: counts are symmetric */
            memcpy(all, send, (size_t)st * sizeof(int));
        CHECK_MPI(MPI_Ialltoallv(in_place ? MPI_IN_PLACE : send, sc, sd, MPI_INT, all, rc, rd, MPI_INT,
                                 MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < rc[j]; ++i)
                CHECKF(all[rd[j] + i] == value(j, rank * 10 + i, 24), "Ialltoallv in_place %d: from %d element %d",
                       in_place, j, i);
        /* Ialltoallw: the same, with byte displacements and one type per peer */
        for (int j = 0; j < size; ++j) {
            sbytes[j] = sd[j] * (int)sizeof(int);
            rbytes[j] = rd[j] * (int)sizeof(int);
            types[j] = MPI_INT;
        }
        for (int i = 0; i < rt; ++i)
            all[i] = -1;
        if (in_place)
            memcpy(all, send, (size_t)st * sizeof(int));
        CHECK_MPI(MPI_Ialltoallw(in_place ? MPI_IN_PLACE : send, sc, sbytes, types, all, rc, rbytes, types,
                                 MPI_COMM_WORLD, &req));
        wait1(&req);
        for (int j = 0; j < size; ++j)
            for (int i = 0; i < rc[j]; ++i)
                CHECKF(all[rd[j] + i] == value(j, rank * 10 + i, 24), "Ialltoallw in_place %d: from %d element %d",
                       in_place, j, i);
    }
    free(all);
    free(send);
    free(rc);
    free(rd);
    free(sc);
    free(sd);
    free(rbytes);
    free(sbytes);
    free(types);
}

/* Derived types on both sides: every other int of a vector against
 * contiguous ints. */
static void test_derived(void)
{
    const int n = 600;
    MPI_Datatype strided;
    CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &strided));
    CHECK_MPI(MPI_Type_commit(&strided));
    int *buf = check_malloc((size_t)(2 * n) * sizeof(int));
    for (int i = 0; i < 2 * n; ++i)
        buf[i] = rank == 0 ? value(0, i, 31) : -1;
    MPI_Request req;
    CHECK_MPI(MPI_Ibcast(buf, 1, strided, 0, MPI_COMM_WORLD, &req));
    /* Freeing the type while the collective runs is allowed. */
    MPI_Datatype copy = strided;
    CHECK_MPI(MPI_Type_free(&copy));
    wait1(&req);
    for (int i = 0; i < 2 * n; ++i)
        CHECKF(buf[i] == (i % 2 == 0 || rank == 0 ? value(0, i, 31) : -1), "Ibcast (vector) [%d] = %d", i, buf[i]);

    /* A non-commutative user operation on a type freed while its
     * Iallreduce is pending, whose function asks about that type.  The other
     * ranks start only once rank 0 has freed it, so rank 0 combines after. */
    MPI_Datatype asked;
    MPI_Op asking;
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &asked));
    CHECK_MPI(MPI_Type_commit(&asked));
    CHECK_MPI(MPI_Op_create(mat_op_asking, 0, &asking));
    mat mats[3], prods[3];
    for (int i = 0; i < 3; ++i)
        mats[i] = mat_of(rank, i);
    if (rank != 0)
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Iallreduce(mats, prods, 3, asked, asking, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Type_free(&asked));
    CHECK_MPI(MPI_Op_free(&asking));
    if (rank == 0)
        for (int r = 1; r < size; ++r)
            CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, r, 77, MPI_COMM_WORLD));
    wait1(&req);
    for (int i = 0; i < 3; ++i)
        CHECKF(mat_eq(prods[i], mat_prod(0, size, i)), "Iallreduce (freed type, asking op) [%d]", i);

#ifdef SHMPI
    /* Iallreduce on a vector type: the sums land in every other int.  (A
     * predefined operation on a derived type of one basic type: MPICH 4.0's
     * nonblocking reductions refuse it.) */
    MPI_Datatype strided2;
    CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &strided2));
    CHECK_MPI(MPI_Type_commit(&strided2));
    int *in = check_malloc((size_t)(2 * n) * sizeof(int));
    for (int i = 0; i < 2 * n; ++i) {
        in[i] = value(rank, i, 32);
        buf[i] = -3;
    }
    CHECK_MPI(MPI_Iallreduce(in, buf, 1, strided2, MPI_SUM, MPI_COMM_WORLD, &req));
    wait1(&req);
    for (int i = 0; i < 2 * n; ++i) {
        int want = -3;
        if (i % 2 == 0) {
            want = 0;
            for (int r = 0; r < size; ++r)
                want += value(r, i, 32);
        }
        CHECKF(buf[i] == want, "Iallreduce (vector) [%d] = %d, want %d", i, buf[i], want);
    }
    CHECK_MPI(MPI_Type_free(&strided2));
    free(in);
#endif
    free(buf);
}

/* Many collectives outstanding at once, on two communicators, completed in
 * reverse order; blocking collectives and point-to-point in between. */
static void test_outstanding(void)
{
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    enum { K = 6 };
    MPI_Request reqs[K];
    int b1[4], b2[4], sum[4], sum_in[4], g[64], ring_out, ring_in = -1;
    const int root = size - 1;
    for (int i = 0; i < 4; ++i) {
        b1[i] = rank == 0 ? value(0, i, 41) : -1;
        b2[i] = rank == root ? value(root, i, 42) : -1;
        sum_in[i] = value(rank, i, 43);
    }
    int mine = value(rank, 0, 44);
    CHECK_MPI(MPI_Ibcast(b1, 4, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]));
    CHECK_MPI(MPI_Ibarrier(dup, &reqs[1]));
    CHECK_MPI(MPI_Iallreduce(sum_in, sum, 4, MPI_INT, MPI_SUM, dup, &reqs[2]));
    CHECK_MPI(MPI_Ibcast(b2, 4, MPI_INT, root, MPI_COMM_WORLD, &reqs[3]));
    CHECK_MPI(MPI_Igather(&mine, 1, MPI_INT, g, 1, MPI_INT, 0, dup, &reqs[4]));
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[5]));
    /* A blocking collective and a ring exchange while they run. */
    int x = rank, xs = 0;
    CHECK_MPI(MPI_Allreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(xs == size * (size - 1) / 2);
    ring_out = value(rank, 0, 45);
    CHECK_MPI(MPI_Sendrecv(&ring_out, 1, MPI_INT, (rank + 1) % size, 7, &ring_in, 1, MPI_INT,
                           (rank - 1 + size) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(ring_in == value((rank - 1 + size) % size, 0, 45));
    for (int k = K - 1; k >= 0; --k)
        wait1(&reqs[k]);
    for (int i = 0; i < 4; ++i) {
        CHECK(b1[i] == value(0, i, 41));
        CHECK(b2[i] == value(root, i, 42));
        int want = 0;
        for (int r = 0; r < size; ++r)
            want += value(r, i, 43);
        CHECK(sum[i] == want);
    }
    if (rank == 0)
        for (int r = 0; r < size; ++r)
            CHECK(g[r] == value(r, 0, 44));
    CHECK_MPI(MPI_Comm_free(&dup));
}

/* Completion by MPI_Test alone, and MPI_Waitany over a mix. */
static void test_test_loop(void)
{
    int in = rank + 1, out = 0;
    MPI_Request req;
    CHECK_MPI(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    int flag = 0;
    long polls = 0;
    while (!flag) {
        CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        ++polls;
    }
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(out == size * (size + 1) / 2);

    MPI_Request two[2];
    int v = rank == 0 ? 99 : 0;
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &two[0]));
    CHECK_MPI(MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &two[1]));
    for (int k = 0; k < 2; ++k) {
        int index = -1;
        CHECK_MPI(MPI_Waitany(2, two, &index, MPI_STATUS_IGNORE));
        CHECK(index == 0 || index == 1);
        CHECK(two[index] == MPI_REQUEST_NULL);
    }
    CHECK(v == 99);
}

/* The NBX pattern (Hoefler et al.): synchronous sends to a few targets,
 * then receive whatever comes while a nonblocking barrier, started once
 * our own sends are matched, tells when everybody is done. */
static void test_nbx(void)
{
    const int tag = 77;
    int targets[2], ntargets = 0;
    for (int d = 1; d <= 2 && d < size; ++d)
        targets[ntargets++] = (rank + d) % size;
    int payload[2];
    MPI_Request sends[2];
    for (int t = 0; t < ntargets; ++t) {
        payload[t] = rank * 100 + targets[t];
        CHECK_MPI(MPI_Issend(&payload[t], 1, MPI_INT, targets[t], tag, MPI_COMM_WORLD, &sends[t]));
    }
    /* How many messages come to us: from rank - 1 and rank - 2 (distinct,
     * not ourselves). */
    int expected = 0;
    for (int d = 1; d <= 2 && d < size; ++d)
        ++expected;
    int got = 0, barrier_started = 0, done = 0;
    MPI_Request barrier = MPI_REQUEST_NULL;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st));
        if (flag) {
            int v = -1;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECKF(v == st.MPI_SOURCE * 100 + rank, "NBX: got %d from %d", v, st.MPI_SOURCE);
            ++got;
        }
        if (!barrier_started) {
            int all = 0;
            MPI_Status st2[2];
            CHECK_MPI(MPI_Testall(ntargets, sends, &all, st2));
            if (all) {
                CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
                barrier_started = 1;
            }
        } else {
            CHECK_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
        }
    }
    CHECKF(got == expected, "NBX: received %d messages, expected %d", got, expected);
}

/* Ineighbor_allgather and Ineighbor_alltoall on a periodic ring. */
static void test_neighbor(void)
{
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int me = -1;
    CHECK_MPI(MPI_Comm_rank(ring, &me));
    const int left = (me - 1 + size) % size, right = (me + 1) % size;
    int v = value(me, 0, 51), got[2] = {-1, -1};
    MPI_Request req;
    CHECK_MPI(MPI_Ineighbor_allgather(&v, 1, MPI_INT, got, 1, MPI_INT, ring, &req));
    wait1(&req);
    CHECKF(got[0] == value(left, 0, 51) && got[1] == value(right, 0, 51), "Ineighbor_allgather got %d %d", got[0],
           got[1]);
    /* Block 0 goes left, block 1 right; from the left comes its block 1. */
    int out[2] = {value(me, 0, 52), value(me, 1, 52)};
    got[0] = got[1] = -1;
    CHECK_MPI(MPI_Ineighbor_alltoall(out, 1, MPI_INT, got, 1, MPI_INT, ring, &req));
    wait1(&req);
    CHECKF(got[0] == value(left, 1, 52) && got[1] == value(right, 0, 52), "Ineighbor_alltoall got %d %d", got[0],
           got[1]);
    CHECK_MPI(MPI_Comm_free(&ring));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    CHECK_MPI(MPI_Type_commit(&mat_type));
    CHECK_MPI(MPI_Op_create(mat_op, 0, &mat_mpi_op));

    test_barrier();
    test_bcast();
    test_reduce();
    test_allreduce();
    test_scans();
    test_reduce_scatter();
    test_gather_scatter();
    test_allgather_alltoall();
    test_derived();
    test_outstanding();
    test_test_loop();
    test_nbx();
    test_neighbor();

    CHECK_MPI(MPI_Op_free(&mat_mpi_op));
    CHECK_MPI(MPI_Type_free(&mat_type));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
