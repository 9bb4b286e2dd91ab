/*
 * random_types.c: every collective with random nested derived datatypes,
 * checked byte for byte against results each rank computes on its own.
 *
 * Each iteration draws, the same on every rank: a communicator (the world,
 * a duplicate, or a split with the ranks in reverse order), a collective
 * (the sixteen of issue 4, blocking or nonblocking), a root, MPI_IN_PLACE
 * or not, a basic type, and two nested derived types built from it (any
 * of contiguous, vector, hvector, indexed, hindexed, indexed_block, struct,
 * resized, subarray, dup, up to three deep, with negative strides and
 * displacements).  Senders use one type, receivers the other or the basic
 * type, with counts whose type signatures match.
 *
 * The expected receive buffer is computed locally from every rank's
 * (deterministic) send data with MPI_Pack and MPI_Unpack only, and the
 * reductions with MPI_Reduce_local in rank order; the whole buffer is
 * compared, so data in the wrong place, a missing block and a write into a
 * gap of the type map all show.
 *
 * Reductions on derived types run with shmpi only: MPICH 4.0 and Open MPI
 * refuse predefined operations on them.  RANDOM_TYPES_ITERATIONS overrides
 * the iteration count, RANDOM_TYPES_SEED the seed.
 */
#include "coll_test.h"

#include <inttypes.h>
#include <stdio.h>

enum { BUF = 1 << 16, ORG = 1 << 15, MAXN = 64, MAXTYPES = 64 };

static unsigned char *sbuf, *rbuf, *expect, *tmp, *pk, *pk2, *acc, *nxt;

static int ri(int lo, int hi) { return lo + (int)(check_rand() % (unsigned)(hi - lo + 1)); }

/* The derived types of one iteration, freed at its end. */
static MPI_Datatype made[MAXTYPES];
static int nmade;

/* A type whose signature is a number of copies of the basic type b, whose
 * extent is e; displacements are whole multiples of e. */
static MPI_Datatype gen(int depth, MPI_Datatype b, MPI_Aint e)
{
    if (depth <= 0 || ri(0, 3) == 0 || nmade + 4 > MAXTYPES)
        return b;
    MPI_Datatype o = gen(depth - 1, b, e);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int n = ri(1, 3);
    int bl[3];
    int di[3];
    MPI_Aint ad[3];
    MPI_Datatype ty[3];
    switch (ri(0, 9)) {
    case 0:
        CHECK_MPI(MPI_Type_contiguous(ri(1, 3), o, &t));
        break;
    case 1:
        CHECK_MPI(MPI_Type_vector(ri(1, 3), ri(1, 2), ri(-3, 4), o, &t));
        break;
    case 2:
        CHECK_MPI(MPI_Type_create_hvector(ri(1, 3), ri(1, 2), ri(-3, 6) * e, o, &t));
        break;
    case 3:
        for (int i = 0; i < n; ++i) {
            bl[i] = ri(1, 2);
            di[i] = ri(-4, 8);
        }
        CHECK_MPI(MPI_Type_indexed(n, bl, di, o, &t));
        break;
    case 4:
        for (int i = 0; i < n; ++i) {
            bl[i] = ri(1, 2);
            ad[i] = ri(-8, 16) * e;
        }
        CHECK_MPI(MPI_Type_create_hindexed(n, bl, ad, o, &t));
        break;
    case 5:
        for (int i = 0; i < n; ++i)
            di[i] = ri(-4, 8);
        CHECK_MPI(MPI_Type_create_indexed_block(n, ri(1, 2), di, o, &t));
        break;
    case 6:
        for (int i = 0; i < n; ++i) {
            bl[i] = ri(1, 2);
            ad[i] = ri(-8, 16) * e;
            ty[i] = i == 0 ? o : gen(depth - 1, b, e);
        }
        CHECK_MPI(MPI_Type_create_struct(n, bl, ad, ty, &t));
        break;
    case 7:
        CHECK_MPI(MPI_Type_create_resized(o, ri(-2, 2) * e, ri(1, 8) * e, &t));
        break;
    case 8: {
        int nd = ri(1, 2);
        int sz[2];
        int ss[2];
        int st[2];
        for (int i = 0; i < nd; ++i) {
            sz[i] = ri(1, 4);
            ss[i] = ri(1, sz[i]);
            st[i] = ri(0, sz[i] - ss[i]);
        }
        CHECK_MPI(MPI_Type_create_subarray(nd, sz, ss, st, ri(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, o, &t));
        break;
    }
    default:
        CHECK_MPI(MPI_Type_dup(o, &t));
        break;
    }
    made[nmade++] = t;
    return t;
}

/* Whether count copies of t, at ORG in a buffer of BUF bytes, stay inside
 * the buffer (and, for receive sides, write no byte twice: a receive into
 * overlapping locations is erroneous). */
static int fits(MPI_Datatype t, int count, int receiving)
{
    int size = 0;
    MPI_Aint lb = 0;
    MPI_Aint ext = 0;
    MPI_Aint tlb = 0;
    MPI_Aint text = 0;
    CHECK_MPI(MPI_Type_size(t, &size));
    CHECK_MPI(MPI_Type_get_extent(t, &lb, &ext));
    CHECK_MPI(MPI_Type_get_true_extent(t, &tlb, &text));
    if (count == 0 || size == 0)
        return 1;
    const MPI_Aint lo = tlb + (ext < 0 ? (MPI_Aint)(count - 1) * ext : 0);
    const MPI_Aint hi = tlb + text + (ext > 0 ? (MPI_Aint)(count - 1) * ext : 0);
    if (lo < -ORG / 2 || hi > ORG / 2 || (long)size * count > ORG / 2)
        return 0;
    if (!receiving)
        return 1;
    memset(pk, 1, (size_t)size * (size_t)count);
    memset(tmp, 0, BUF);
    int pos = 0;
    CHECK_MPI(MPI_Unpack(pk, size * count, &pos, tmp + ORG, count, t, MPI_COMM_SELF));
    long written = 0;
    for (long i = 0; i < BUF; ++i)
        written += tmp[i];
    return written == (long)size * count;
}

/* Non-commutative: 2x2 matrix products modulo 2^32, inout = in * inout. */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; ++i, a += 4, b += 4) {
        const unsigned c0 = a[0] * b[0] + a[1] * b[2];
        const unsigned c1 = a[0] * b[1] + a[1] * b[3];
        const unsigned c2 = a[2] * b[0] + a[3] * b[2];
        const unsigned c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0;
        b[1] = c1;
        b[2] = c2;
        b[3] = c3;
    }
}

/* What one iteration drew. */
static struct {
    long it;
    MPI_Datatype b;       /* basic type (or the 4-unsigned matrix) */
    MPI_Op op;            /* for reductions */
    int reduction;
} cur;

static MPI_Datatype mat;
static MPI_Op mat_mul;

/* Rank q's send data (and initial receive buffer for MPI_IN_PLACE). */
static void fill(unsigned char *buf, int q)
{
    const long it = cur.it;
    const MPI_Datatype b = cur.b;
    if (!cur.reduction) {
        for (long i = 0; i < BUF; ++i)
            buf[i] = (unsigned char)(i * 13 + q * 71 + it * 7 + (i >> 9));
        return;
    }
    memset(buf, 0, BUF);
    const int prod = cur.op == MPI_PROD;
    if (b == MPI_DOUBLE) {
        for (long i = 0; i < BUF / 8; ++i)
            ((double *)buf)[i] = (double)((i * 7 + q * 3 + it) % 17) - 8.0;
    } else if (b == MPI_2INT) {
        for (long i = 0; i < BUF / 8; ++i) {
            ((int *)buf)[2 * i] = (int)((i * 5 + q * 3 + it) % 7);
            ((int *)buf)[2 * i + 1] = (int)((i + q * 11) % 13);
        }
    } else if (b == MPI_DOUBLE_INT) {
        for (long i = 0; i < BUF / 16; ++i) {
            const double v = (double)((i * 5 + q * 3 + it) % 7);
            const int x = (int)((i + q * 11) % 13);
            memcpy(buf + 16 * i, &v, sizeof v);
            memcpy(buf + 16 * i + 8, &x, sizeof x);
        }
    } else if (b == MPI_SHORT) {
        for (long i = 0; i < BUF / 2; ++i)
            ((short *)buf)[i] = (short)(prod ? (i + q + it) % 3 - 1 : (i * 3 + q + it) % 9 - 4);
    } else if (b == MPI_INT) {
        for (long i = 0; i < BUF / 4; ++i)
            ((int *)buf)[i] = (int)(prod ? (i + q + it) % 3 - 1 : (i * 3 + q + it) % 9 - 4);
    } else if (b == MPI_LONG_LONG) {
        for (long i = 0; i < BUF / 8; ++i)
            ((long long *)buf)[i] = prod ? (i + q + it) % 3 - 1 : (i * 3 + q + it) % 9 - 4;
    } else {
        for (long i = 0; i < BUF / 4; ++i)
            ((unsigned *)buf)[i] = (unsigned)(i * 2654435761u + (unsigned)q * 40503u + (unsigned)it);
    }
}

/* Unpacks into `expect` at byte offset `to` (from ORG) what rank q sends
 * from byte offset `from` of its buffer as scount x stype, received as
 * rcount x rtype. */
static void expect_move(int q, MPI_Aint from, int scount, MPI_Datatype stype, MPI_Aint to, int rcount,
                        MPI_Datatype rtype)
{
    fill(tmp, q);
    int pos = 0;
    CHECK_MPI(MPI_Pack(tmp + ORG + from, scount, stype, pk, BUF, &pos, MPI_COMM_SELF));
    int upos = 0;
    CHECK_MPI(MPI_Unpack(pk, pos, &upos, expect + ORG + to, rcount, rtype, MPI_COMM_SELF));
    CHECK(upos == pos);
}

/* Rank q's contribution of count x t as count*k contiguous basic values. */
static void contribution(unsigned char *out, int q, int count, MPI_Datatype t, int k)
{
    fill(tmp, q);
    int pos = 0;
    CHECK_MPI(MPI_Pack(tmp + ORG, count, t, pk, BUF, &pos, MPI_COMM_SELF));
    memset(out, 0, BUF);
    int upos = 0;
    CHECK_MPI(MPI_Unpack(pk, pos, &upos, out, count * k, cur.b, MPI_COMM_SELF));
}

/* acc = contribution(first) op ... op contribution(last), in rank order. */
static void reduce_range(int first, int last, int count, MPI_Datatype t, int k)
{
    contribution(acc, first, count, t, k);
    for (int q = first + 1; q <= last; ++q) {
        contribution(nxt, q, count, t, k);
        if (count * k > 0)
            CHECK_MPI(MPI_Reduce_local(acc, nxt, count * k, cur.b, cur.op));
        memcpy(acc, nxt, BUF);
    }
}

/* Unpacks `count` elements of t starting at element `skip` of acc into
 * expect at ORG. */
static void expect_reduced(int skip, int count, MPI_Datatype t, int k)
{
    int bsize = 0;
    MPI_Aint blb = 0;
    MPI_Aint bext = 0;
    CHECK_MPI(MPI_Type_size(cur.b, &bsize));
    CHECK_MPI(MPI_Type_get_extent(cur.b, &blb, &bext));
    int pos = 0;
    CHECK_MPI(MPI_Pack(acc + (MPI_Aint)skip * k * bext, count * k, cur.b, pk2, BUF, &pos, MPI_COMM_SELF));
    int upos = 0;
    CHECK_MPI(MPI_Unpack(pk2, pos, &upos, expect + ORG, count, t, MPI_COMM_SELF));
}

static const char *const names[] = {"Bcast",      "Reduce",        "Allreduce", "Gather",         "Gatherv",
                                    "Scatter",    "Scatterv",      "Allgather", "Allgatherv",     "Alltoall",
                                    "Alltoallv",  "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan",
                                    "Alltoallw"};

enum { BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV, ALLTOALL,
       ALLTOALLV, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, ALLTOALLW, NCOLL };

static int is_reduction(int c)
{
    return c == REDUCE || c == ALLREDUCE || c == REDUCE_SCATTER || c == REDUCE_SCATTER_BLOCK || c == SCAN ||
           c == EXSCAN;
}

/* Elements of T that rank q sends to rank j (or contributes) in the
 * v-collectives: 0, half or all of cnt, by rank and iteration. */
static int share(int q, int j, int cnt) { return (int)((q + j + cur.it) % 3) * cnt / 2; }

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int wrank = world_rank();
    long iters = 400;
    const char *v = getenv("RANDOM_TYPES_ITERATIONS");
    if (v != NULL && *v != '\0')
        iters = atol(v);
    unsigned long long seed = 0x5DEECE66Dull;
    v = getenv("RANDOM_TYPES_SEED");
    if (v != NULL && *v != '\0')
        seed = strtoull(v, NULL, 0);
    check_seed(seed);

    sbuf = check_malloc(BUF);
    rbuf = check_malloc(BUF);
    expect = check_malloc(BUF);
    tmp = check_malloc(BUF);
    pk = check_malloc(BUF);
    pk2 = check_malloc(BUF);
    acc = check_malloc(BUF);
    nxt = check_malloc(BUF);
    CHECK_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    CHECK_MPI(MPI_Type_commit(&mat));
    CHECK_MPI(MPI_Op_create(mat_op, 0, &mat_mul));
    long checked = 0;

    for (long it = 0; it < iters; ++it) {
        nmade = 0;
        cur.it = it;
        /* Every draw below is the same on every rank. */
        MPI_Comm comm = MPI_COMM_WORLD;
        const int cm = ri(0, 3);
        const int modulus = ri(2, 3);
        const int color = ri(0, 1) ? 0 : wrank % modulus;
        if (cm == 1)
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        else if (cm >= 2)
            CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, cm == 2 ? wrank : -wrank, &comm));
        int r = 0;
        int n = 0;
        CHECK_MPI(MPI_Comm_rank(comm, &r));
        CHECK_MPI(MPI_Comm_size(comm, &n));
        CHECK(n <= MAXN);

        const int c = ri(0, NCOLL - 1);
        const int root = ri(0, MAXN - 1) % n;
        const int nonblocking = ri(0, 2) == 0;
        int in_place = ri(0, 3) == 0;
        const int cnt = ri(0, 12);
        const MPI_Datatype bases[] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_LONG_LONG, MPI_2INT, MPI_DOUBLE_INT,
                                      MPI_UNSIGNED};
        cur.b = bases[ri(0, 6)];
        cur.reduction = is_reduction(c);
        cur.op = MPI_SUM;
        const int opdraw = ri(0, 5);
        const int matdraw = ri(0, 2) == 0;
        if (cur.reduction) {
            if (cur.b == MPI_2INT || cur.b == MPI_DOUBLE_INT)
                cur.op = opdraw % 2 ? MPI_MINLOC : MPI_MAXLOC;
            else if (cur.b == MPI_DOUBLE)
                cur.op = opdraw % 2 ? MPI_MAX : MPI_MIN; /* exact in any order */
            else if (cur.b == MPI_UNSIGNED) {
                const MPI_Op uops[] = {MPI_BXOR, MPI_BOR, MPI_SUM, MPI_MAX, MPI_BXOR, MPI_BAND};
                cur.op = uops[opdraw];
                if (matdraw) {
                    cur.b = mat;
                    cur.op = mat_mul;
                }
            } else {
                const MPI_Op iops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_LXOR};
                cur.op = iops[opdraw];
            }
        }
        MPI_Aint blb = 0;
        MPI_Aint bext = 0;
        int bsize = 0;
        CHECK_MPI(MPI_Type_get_extent(cur.b, &blb, &bext));
        CHECK_MPI(MPI_Type_size(cur.b, &bsize));
        MPI_Datatype T = gen(ri(0, 3), cur.b, bext);
        MPI_Datatype R = gen(ri(0, 3), cur.b, bext);
        int derived_reduction = 1;
#if !defined(SHMPI)
        derived_reduction = 0; /* MPICH and Open MPI refuse predefined operations on derived types */
#endif
        if (cur.b == mat || (cur.reduction && !derived_reduction)) {
            T = cur.b; /* mat_op reads its buffers as plain matrices */
            R = cur.b;
        }
        if (T != cur.b)
            CHECK_MPI(MPI_Type_commit(&T));
        if (R != cur.b)
            CHECK_MPI(MPI_Type_commit(&R));
        int tsize = 0;
        int rsize = 0;
        CHECK_MPI(MPI_Type_size(T, &tsize));
        CHECK_MPI(MPI_Type_size(R, &rsize));
        const int k = tsize / bsize;  /* T holds k basic values */
        const int kr = rsize / bsize; /* R holds kr */
        /* Receivers take R where its size divides the message, else the basic type. */
        const int use_r = (cnt * k) % kr == 0;
        const MPI_Datatype RR = use_r ? R : cur.b;
        const int rcnt = use_r ? cnt * k / kr : cnt * k;
        MPI_Aint tlb = 0;
        MPI_Aint text = 0;
        MPI_Aint rlb = 0;
        MPI_Aint rext = 0;
        CHECK_MPI(MPI_Type_get_extent(T, &tlb, &text));
        CHECK_MPI(MPI_Type_get_extent(RR, &rlb, &rext));
        int gaps[MAXN]; /* random spacing, in elements, between the v-collectives' blocks */
        for (int j = 0; j < MAXN; ++j)
            gaps[j] = ri(0, 2);

        /* The case must fit the buffers, and receive sides must not overlap. */
        int runnable = fits(T, cnt * n, 0) && fits(T, cnt * n, cur.reduction) && fits(RR, rcnt * n, 1);
        if (c == ALLTOALL && in_place && RR != T)
            runnable = runnable && fits(T, cnt * n, 1);
        if (c == REDUCE && COLL_SKIP_MPICH_6540(in_place, root, (size_t)tsize * cnt))
            in_place = 0;
        if ((c == REDUCE_SCATTER || c == REDUCE_SCATTER_BLOCK) &&
            COLL_SKIP_MPICH_RS_IN_PLACE(in_place, (size_t)tsize * cnt * n))
            in_place = 0;

        int counts[MAXN];
        int displs[MAXN];
        int scounts[MAXN];
        int sdispls[MAXN];
        MPI_Datatype stypes[MAXN];
        MPI_Datatype rtypes[MAXN];
        int total = 0; /* v-collectives: elements of the basic type (or T) the layout spans */
        if (c == GATHERV || c == ALLGATHERV || c == SCATTERV) {
            for (int q = 0; q < n; ++q) {
                counts[q] = share(q, 0, cnt) * k;
                displs[q] = total + gaps[q];
                total = displs[q] + counts[q];
            }
            runnable = runnable && fits(cur.b, total, c != SCATTERV) && fits(T, cnt * n, c == SCATTERV);
        }
        if (c == REDUCE_SCATTER) {
            for (int q = 0; q < n; ++q) {
                counts[q] = share(q, 0, cnt);
                total += counts[q];
            }
            runnable = runnable && fits(T, total, 1);
        }
        if (c == ALLGATHERV && COLL_SKIP_MPICH_6374(n))
            runnable = 0;
        if (c == ALLTOALLV || c == ALLTOALLW) {
            int so = 0;
            int ro = 0;
            for (int j = 0; j < n; ++j) {
                scounts[j] = share(r, j, cnt);
                sdispls[j] = so + gaps[j];
                so = sdispls[j] + scounts[j];
                counts[j] = share(j, r, cnt) * k;
                displs[j] = ro + gaps[(j + 7) % MAXN];
                ro = displs[j] + counts[j];
            }
            /* every rank must agree to run: the spans depend on the rank */
            int ok = fits(T, so, 0) && fits(cur.b, ro, 1);
            CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm));
            runnable = runnable && ok;
        }
        if (!runnable) {
            for (int i = 0; i < nmade; ++i)
                CHECK_MPI(MPI_Type_free(&made[i]));
            if (comm != MPI_COMM_WORLD)
                CHECK_MPI(MPI_Comm_free(&comm));
            continue;
        }

        fill(sbuf, r);
        memset(rbuf, 0xEE, BUF);
        if (in_place)
            fill(rbuf, r);
        memcpy(expect, rbuf, BUF);
        void *S = sbuf + ORG;
        void *D = rbuf + ORG;
        if (in_place)
            S = MPI_IN_PLACE;
        MPI_Request req = MPI_REQUEST_NULL;
        int significant = 1; /* whether this rank's receive buffer is defined afterwards */

        switch (c) {
        case BCAST:
            if (r == root) {
                fill(rbuf, r);
                memcpy(expect, rbuf, BUF);
                CHECK_MPI(nonblocking ? MPI_Ibcast(D, cnt, T, root, comm, &req) : MPI_Bcast(D, cnt, T, root, comm));
            } else {
                CHECK_MPI(nonblocking ? MPI_Ibcast(D, rcnt, RR, root, comm, &req)
                                      : MPI_Bcast(D, rcnt, RR, root, comm));
                expect_move(root, 0, cnt, T, 0, rcnt, RR);
            }
            break;
        case REDUCE:
            if (r != root && in_place) {
                S = sbuf + ORG; /* MPI_IN_PLACE belongs to the root alone */
                memset(rbuf, 0xEE, BUF);
            }
            CHECK_MPI(nonblocking ? MPI_Ireduce(S, D, cnt, T, cur.op, root, comm, &req)
                                  : MPI_Reduce(S, D, cnt, T, cur.op, root, comm));
            significant = r == root;
            if (significant) {
                reduce_range(0, n - 1, cnt, T, k);
                expect_reduced(0, cnt, T, k);
            }
            break;
        case ALLREDUCE:
            CHECK_MPI(nonblocking ? MPI_Iallreduce(S, D, cnt, T, cur.op, comm, &req)
                                  : MPI_Allreduce(S, D, cnt, T, cur.op, comm));
            reduce_range(0, n - 1, cnt, T, k);
            expect_reduced(0, cnt, T, k);
            break;
        case SCAN:
        case EXSCAN:
            if (c == SCAN)
                CHECK_MPI(nonblocking ? MPI_Iscan(S, D, cnt, T, cur.op, comm, &req)
                                      : MPI_Scan(S, D, cnt, T, cur.op, comm));
            else
                CHECK_MPI(nonblocking ? MPI_Iexscan(S, D, cnt, T, cur.op, comm, &req)
                                      : MPI_Exscan(S, D, cnt, T, cur.op, comm));
            significant = c == SCAN || r > 0; /* Exscan leaves rank 0's buffer undefined */
            if (significant) {
                reduce_range(0, c == SCAN ? r : r - 1, cnt, T, k);
                expect_reduced(0, cnt, T, k);
            }
            break;
        case REDUCE_SCATTER:
        case REDUCE_SCATTER_BLOCK: {
            int before = 0;
            if (c == REDUCE_SCATTER) {
                for (int q = 0; q < r; ++q)
                    before += counts[q];
                CHECK_MPI(nonblocking ? MPI_Ireduce_scatter(S, D, counts, T, cur.op, comm, &req)
                                      : MPI_Reduce_scatter(S, D, counts, T, cur.op, comm));
            } else {
                total = cnt * n;
                before = cnt * r;
                counts[r] = cnt;
                CHECK_MPI(nonblocking ? MPI_Ireduce_scatter_block(S, D, cnt, T, cur.op, comm, &req)
                                      : MPI_Reduce_scatter_block(S, D, cnt, T, cur.op, comm));
            }
            reduce_range(0, n - 1, total, T, k);
            expect_reduced(before, counts[r], T, k);
            if (in_place) {
                /* only this rank's block of the result is defined: compare the bytes its type map covers */
                if (req != MPI_REQUEST_NULL)
                    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
                memset(tmp, 0, BUF);
                memset(pk, 1, (size_t)tsize * counts[r] + 1);
                int pos = 0;
                CHECK_MPI(MPI_Unpack(pk, tsize * counts[r], &pos, tmp + ORG, counts[r], T, MPI_COMM_SELF));
                for (long i = 0; i < BUF; ++i)
                    if (!tmp[i])
                        expect[i] = rbuf[i] = 0;
            }
            break;
        }
        case GATHER:
            if (r != root && in_place)
                S = sbuf + ORG;
            CHECK_MPI(nonblocking ? MPI_Igather(S, cnt, T, D, rcnt, RR, root, comm, &req)
                                  : MPI_Gather(S, cnt, T, D, rcnt, RR, root, comm));
            significant = r == root;
            for (int q = 0; significant && q < n; ++q)
                if (!(in_place && q == root))
                    expect_move(q, 0, cnt, T, (MPI_Aint)q * rcnt * rext, rcnt, RR);
            break;
        case GATHERV:
            if (r != root && in_place)
                S = sbuf + ORG;
            CHECK_MPI(nonblocking ? MPI_Igatherv(S, share(r, 0, cnt), T, D, counts, displs, cur.b, root, comm, &req)
                                  : MPI_Gatherv(S, share(r, 0, cnt), T, D, counts, displs, cur.b, root, comm));
            significant = r == root;
            for (int q = 0; significant && q < n; ++q)
                if (!(in_place && q == root))
                    expect_move(q, 0, share(q, 0, cnt), T, (MPI_Aint)displs[q] * bext, counts[q], cur.b);
            break;
        case SCATTER:
            S = sbuf + ORG;
            if (in_place && r == root)
                D = MPI_IN_PLACE;
            CHECK_MPI(nonblocking ? MPI_Iscatter(S, cnt, T, D, rcnt, RR, root, comm, &req)
                                  : MPI_Scatter(S, cnt, T, D, rcnt, RR, root, comm));
            if (!(in_place && r == root))
                expect_move(root, (MPI_Aint)r * cnt * text, cnt, T, 0, rcnt, RR);
            break;
        case SCATTERV:
            S = sbuf + ORG;
            if (in_place && r == root)
                D = MPI_IN_PLACE;
            CHECK_MPI(nonblocking
                          ? MPI_Iscatterv(S, counts, displs, cur.b, D, share(r, 0, cnt), T, root, comm, &req)
                          : MPI_Scatterv(S, counts, displs, cur.b, D, share(r, 0, cnt), T, root, comm));
            if (!(in_place && r == root))
                expect_move(root, (MPI_Aint)displs[r] * bext, counts[r], cur.b, 0, share(r, 0, cnt), T);
            break;
        case ALLGATHER:
            CHECK_MPI(nonblocking ? MPI_Iallgather(S, cnt, T, D, rcnt, RR, comm, &req)
                                  : MPI_Allgather(S, cnt, T, D, rcnt, RR, comm));
            for (int q = 0; q < n; ++q)
                if (!(in_place && q == r))
                    expect_move(q, (MPI_Aint)(in_place ? q * rcnt * rext : 0), in_place ? rcnt : cnt,
                                in_place ? RR : T, (MPI_Aint)q * rcnt * rext, rcnt, RR);
            break;
        case ALLGATHERV:
            CHECK_MPI(nonblocking
                          ? MPI_Iallgatherv(S, share(r, 0, cnt), T, D, counts, displs, cur.b, comm, &req)
                          : MPI_Allgatherv(S, share(r, 0, cnt), T, D, counts, displs, cur.b, comm));
            for (int q = 0; q < n; ++q)
                if (!(in_place && q == r))
                    expect_move(q, in_place ? (MPI_Aint)displs[q] * bext : 0, in_place ? counts[q] : share(q, 0, cnt),
                                in_place ? cur.b : T, (MPI_Aint)displs[q] * bext, counts[q], cur.b);
            break;
        case ALLTOALL:
            if (in_place) {
                /* in place, the one type describes both sides */
                CHECK_MPI(nonblocking ? MPI_Ialltoall(S, 0, MPI_DATATYPE_NULL, D, cnt, T, comm, &req)
                                      : MPI_Alltoall(S, 0, MPI_DATATYPE_NULL, D, cnt, T, comm));
                for (int q = 0; q < n; ++q)
                    expect_move(q, (MPI_Aint)r * cnt * text, cnt, T, (MPI_Aint)q * cnt * text, cnt, T);
            } else {
                CHECK_MPI(nonblocking ? MPI_Ialltoall(S, cnt, T, D, rcnt, RR, comm, &req)
                                      : MPI_Alltoall(S, cnt, T, D, rcnt, RR, comm));
                for (int q = 0; q < n; ++q)
                    expect_move(q, (MPI_Aint)r * cnt * text, cnt, T, (MPI_Aint)q * rcnt * rext, rcnt, RR);
            }
            break;
        case ALLTOALLV:
        case ALLTOALLW: {
            S = sbuf + ORG; /* no MPI_IN_PLACE here: the types differ between the sides */
            if (c == ALLTOALLV) {
                CHECK_MPI(nonblocking ? MPI_Ialltoallv(S, scounts, sdispls, T, D, counts, displs, cur.b, comm, &req)
                                      : MPI_Alltoallv(S, scounts, sdispls, T, D, counts, displs, cur.b, comm));
            } else {
                int sbytes[MAXN];
                int rbytes[MAXN];
                for (int j = 0; j < n; ++j) {
                    sbytes[j] = (int)(sdispls[j] * text);
                    rbytes[j] = (int)(displs[j] * bext);
                    stypes[j] = T;
                    rtypes[j] = cur.b;
                }
                CHECK_MPI(nonblocking
                              ? MPI_Ialltoallw(S, scounts, sbytes, stypes, D, counts, rbytes, rtypes, comm, &req)
                              : MPI_Alltoallw(S, scounts, sbytes, stypes, D, counts, rbytes, rtypes, comm));
            }
            for (int q = 0; q < n; ++q) {
                /* rank q's displacement for its block to r */
                int so = 0;
                int qdispl = 0;
                for (int j = 0; j <= r; ++j) {
                    qdispl = so + gaps[j];
                    so = qdispl + share(q, j, cnt);
                }
                expect_move(q, (MPI_Aint)qdispl * text, share(q, r, cnt), T, (MPI_Aint)displs[q] * bext, counts[q],
                            cur.b);
            }
            break;
        }
        default:
            CHECK(0);
        }
        if (req != MPI_REQUEST_NULL)
            CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (significant) {
            size_t first = BUF;
            for (size_t i = 0; i < BUF; ++i)
                if (rbuf[i] != expect[i]) {
                    first = i;
                    break;
                }
            CHECKF(first == BUF,
                   "iteration %ld: %s%s%s on %d ranks (rank %d, root %d, count %d, %d basic values per "
                   "element): byte %ld from the origin is 0x%02x, expected 0x%02x",
                   it, nonblocking ? "nonblocking " : "", names[c], in_place ? " in place" : "", n, r, root, cnt, k,
                   (long)first - ORG, rbuf[first], expect[first]);
            ++checked;
        }
        for (int i = 0; i < nmade; ++i)
            CHECK_MPI(MPI_Type_free(&made[i]));
        if (comm != MPI_COMM_WORLD)
            CHECK_MPI(MPI_Comm_free(&comm));
    }
    long all = 0;
    CHECK_MPI(MPI_Reduce(&checked, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (wrank == 0) {
        CHECKF(all > iters / 4, "only %ld receive buffers checked in %ld iterations", all, iters);
        printf("random_types: %ld iterations, %ld receive buffers checked\n", iters, all);
    }
    CHECK_MPI(MPI_Op_free(&mat_mul));
    CHECK_MPI(MPI_Type_free(&mat));
    free(sbuf);
    free(rbuf);
    free(expect);
    free(tmp);
    free(pk);
    free(pk2);
    free(acc);
    free(nxt);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
