/*
 * The blocking collectives on intercommunicators (MPI-3.1 5.2.2, 5.2.3 and
 * each collective's intercommunicator paragraph).  Needs two nonempty
 * groups, so with one rank it only initialises and finalises.
 *
 * Two intercommunicators: "thirds" (group 0 = world ranks [0, n/3 + 1),
 * group 1 the rest, both in world order: unequal sizes from 3 ranks on) and
 * "parity" (even and odd world ranks, each in descending world order).
 * Every value depends on the sender's world rank (and on the receiver's,
 * where each receiver gets its own block), so a misplaced block is caught;
 * receive buffers are poisoned, and what must stay untouched (gaps between
 * blocks, the buffers of the root group's other ranks) is checked too.
 *
 * Rooted collectives: in the root's group the root passes MPI_ROOT and the
 * others MPI_PROC_NULL (with NULL buffers: their buffers are not
 * significant); the other group passes the root's rank in the root's group.
 * Data flows between the root and the other group only:
 *   Bcast    the root's buffer to every rank of the other group.  Every
 *            root of both groups; count 0; an MPI_Type_vector.
 *   Gather   each remote rank's block, in remote rank order, at the root;
 *            recvcount is the count per remote rank.  A derived send type.
 *   Gatherv  recvcounts and displs (one per remote rank; counts of 0, gaps).
 *   Scatter, Scatterv  the root's block j to remote rank j.
 *   Reduce   the reduction of the other group's buffers, in its rank order
 *            (a non-commutative operation), at the root.  Every root of
 *            both groups; MPI_SUM and count 0 too.
 * Non-rooted: each group's result comes from the other group:
 *   Barrier.
 *   Allgather   every rank gets the other group's blocks in rank order; the
 *               two groups may send different counts (even 0 one way).
 *   Allgatherv  the same with per-rank counts and displacements.
 *   Alltoall    block j of a rank's send buffer goes to remote rank j, block
 *               i of its receive buffer comes from remote rank i; counts may
 *               differ between the two directions.
 *   Alltoallv, Alltoallw  the same with per-pair counts (and types).
 *   Allreduce   each group gets the reduction of the other group's buffers
 *               (same count on both sides), in the other group's rank order.
 *   Reduce_scatter_block  each group provides vectors of
 *               count = (local size) * recvcount elements, the same count in
 *               both groups (so recvcount differs where the sizes do); the
 *               reduction of the other group's vectors is scattered over the
 *               local group in blocks of recvcount, block i to local rank i.
 *   Reduce_scatter  each group provides vectors of
 *               count = sum of its recvcounts (one per local rank), the same
 *               count in both groups; the reduction of the other group's
 *               vectors is scattered over the local group, recvcounts[i]
 *               elements to local rank i.
 */
#include "intercomm.h"

static void poison(int *buf, int len)
{
    for (int i = 0; i < len; ++i)
        buf[i] = POISON;
}

/* buf[0, len) must equal want[0, len). */
static void check_buf(const struct ic *c, const char *what, const int *buf, const int *want,
                      int len)
{
    for (int i = 0; i < len; ++i)
        CHECKF(buf[i] == want[i], "%s: %s: element %d is %d, expected %d (side %d rank %d)",
               c->name, what, i, buf[i], want[i], c->side, c->lrank);
}

/* A receive buffer and the contents it must have after the call, len ints
 * each, both poisoned to start with. */
struct rbuf {
    int *buf, *want;
    int len;
};

static struct rbuf rbuf_new(int len)
{
    struct rbuf r = {check_malloc(len * sizeof(int)), check_malloc(len * sizeof(int)), len};
    poison(r.buf, len);
    poison(r.want, len);
    return r;
}

/* r->buf must equal r->want; frees both. */
static void rbuf_check(const struct ic *c, const char *what, struct rbuf *r)
{
    check_buf(c, what, r->buf, r->want, r->len);
    free(r->buf);
    free(r->want);
}
/* ---- Bcast ---- */

static void t_bcast(const struct ic *c, int rside, int root, int count, int seq)
{
    int buf[16], want[16];
    const int arg = root_arg(c, rside, root);
    const int rootw = c->world[rside][root];
    poison(buf, 16);
    poison(want, 16);
    for (int i = 0; i < count; ++i) {
        if (is_root(c, rside, root))
            buf[i] = val(rootw, seq, i);
        if (c->side != rside || is_root(c, rside, root))
            want[i] = val(rootw, seq, i);
    }
    CHECK_MPI(MPI_Bcast(buf, count, MPI_INT, arg, c->comm));
    check_buf(c, "bcast", buf, want, 16);
}

/* Bcast of one MPI_Type_vector (every other int) on both sides. */
static void t_bcast_vector(const struct ic *c, int rside, int root, int seq)
{
    enum { N = 5 };
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int buf[2 * N + 2], want[2 * N + 2];
    const int rootw = c->world[rside][root];
    poison(buf, 2 * N + 2);
    poison(want, 2 * N + 2);
    for (int i = 0; i < N; ++i) {
        if (is_root(c, rside, root))
            buf[2 * i] = val(rootw, seq, i);
        if (c->side != rside || is_root(c, rside, root))
            want[2 * i] = val(rootw, seq, i);
    }
    CHECK_MPI(MPI_Bcast(buf, 1, vec, root_arg(c, rside, root), c->comm));
    check_buf(c, "bcast of a vector", buf, want, 2 * N + 2);
    CHECK_MPI(MPI_Type_free(&vec));
}

/* ---- Gather, Gatherv ---- */

static void t_gather(const struct ic *c, int rside, int root, int count, int derived, int seq)
{
    const int arg = root_arg(c, rside, root);
    if (c->side == rside && !is_root(c, rside, root)) {
        CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, arg, c->comm));
        return;
    }
    if (c->side != rside) {
        int out[8];
        for (int i = 0; i < count; ++i)
            out[i] = val(world_rank(), seq, i);
        if (derived) {
            MPI_Datatype t;
            CHECK_MPI(MPI_Type_contiguous(count, MPI_INT, &t));
            CHECK_MPI(MPI_Type_commit(&t));
            CHECK_MPI(MPI_Gather(out, 1, t, NULL, 0, MPI_INT, arg, c->comm));
            CHECK_MPI(MPI_Type_free(&t));
        } else {
            CHECK_MPI(MPI_Gather(out, count, MPI_INT, NULL, 0, MPI_INT, arg, c->comm));
        }
        return;
    }
    struct rbuf r = rbuf_new(rsize(c) * count + 1);
    want_blocks(c, r.want, count, seq);
    CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, r.buf, count, MPI_INT, arg, c->comm));
    rbuf_check(c, "gather", &r);
}

static void t_gatherv(const struct ic *c, int rside, int root, int seq)
{
    const int arg = root_arg(c, rside, root);
    if (c->side == rside && !is_root(c, rside, root)) {
        CHECK_MPI(MPI_Gatherv(NULL, 0, MPI_INT, NULL, NULL, NULL, MPI_INT, arg, c->comm));
        return;
    }
    if (c->side != rside) {
        int out[4];
        const int k = vcount(c->lrank, seq);
        for (int i = 0; i < k; ++i)
            out[i] = val(world_rank(), seq, i);
        CHECK_MPI(MPI_Gatherv(out, k, MPI_INT, NULL, NULL, NULL, MPI_INT, arg, c->comm));
        return;
    }
    int counts[MAXN], displs[MAXN];
    for (int j = 0; j < rsize(c); ++j)
        counts[j] = vcount(j, seq);
    struct rbuf r = rbuf_new(reverse_displs(counts, rsize(c), displs));
    want_blocksv(c, r.want, counts, displs, seq, 0);
    CHECK_MPI(MPI_Gatherv(NULL, 0, MPI_INT, r.buf, counts, displs, MPI_INT, arg, c->comm));
    rbuf_check(c, "gatherv", &r);
}

/* ---- Scatter, Scatterv ---- */

static void t_scatter(const struct ic *c, int rside, int root, int count, int seq)
{
    const int arg = root_arg(c, rside, root);
    const int rootw = c->world[rside][root];
    if (c->side == rside) {
        int *out = NULL;
        if (is_root(c, rside, root)) {
            out = check_malloc((size_t)rsize(c) * count * sizeof(int));
            for (int j = 0; j < rsize(c); ++j)
                for (int i = 0; i < count; ++i)
                    out[j * count + i] = val(rootw, rw(c, j), i + seq);
        }
        CHECK_MPI(MPI_Scatter(out, count, MPI_INT, NULL, 0, MPI_INT, arg, c->comm));
        free(out);
        return;
    }
    int buf[10], want[10];
    poison(buf, 10);
    poison(want, 10);
    for (int i = 0; i < count; ++i)
        want[i] = val(rootw, world_rank(), i + seq);
    CHECK_MPI(MPI_Scatter(NULL, 0, MPI_INT, buf, count, MPI_INT, arg, c->comm));
    check_buf(c, "scatter", buf, want, 10);
}

static void t_scatterv(const struct ic *c, int rside, int root, int seq)
{
    const int arg = root_arg(c, rside, root);
    const int rootw = c->world[rside][root];
    if (c->side == rside) {
        int *out = NULL, counts[MAXN], displs[MAXN];
        if (is_root(c, rside, root)) {
            for (int j = 0; j < rsize(c); ++j)
                counts[j] = vcount(j, seq);
            const int len = reverse_displs(counts, rsize(c), displs);
            out = check_malloc(len * sizeof(int));
            poison(out, len);
            for (int j = 0; j < rsize(c); ++j)
                for (int i = 0; i < counts[j]; ++i)
                    out[displs[j] + i] = val(rootw, rw(c, j), i + seq);
            CHECK_MPI(MPI_Scatterv(out, counts, displs, MPI_INT, NULL, 0, MPI_INT, arg, c->comm));
        } else {
            CHECK_MPI(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, NULL, 0, MPI_INT, arg, c->comm));
        }
        free(out);
        return;
    }
    int buf[6], want[6];
    poison(buf, 6);
    poison(want, 6);
    const int k = vcount(c->lrank, seq);
    for (int i = 0; i < k; ++i)
        want[i] = val(rootw, world_rank(), i + seq);
    CHECK_MPI(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, buf, k, MPI_INT, arg, c->comm));
    check_buf(c, "scatterv", buf, want, 6);
}

/* ---- Allgather, Allgatherv ---- */

/* sc[g]: the count each rank of group g sends. */
static void t_allgather(const struct ic *c, const int sc[2], int seq)
{
    const int mine = sc[c->side], theirs = sc[1 - c->side];
    int out[8];
    for (int i = 0; i < mine; ++i)
        out[i] = val(world_rank(), seq, i);
    struct rbuf r = rbuf_new(rsize(c) * theirs + 1);
    want_blocks(c, r.want, theirs, seq);
    CHECK_MPI(MPI_Allgather(out, mine, MPI_INT, r.buf, theirs, MPI_INT, c->comm));
    rbuf_check(c, "allgather", &r);
}

static void t_allgatherv(const struct ic *c, int seq)
{
    const int other = 1 - c->side;
    const int mine = agv_count(c->side, c->lrank, seq);
    int out[4], counts[MAXN], displs[MAXN];
    for (int i = 0; i < mine; ++i)
        out[i] = val(world_rank(), seq, i);
    for (int j = 0; j < rsize(c); ++j)
        counts[j] = agv_count(other, j, seq);
    struct rbuf r = rbuf_new(reverse_displs(counts, rsize(c), displs));
    want_blocksv(c, r.want, counts, displs, seq, 0);
    CHECK_MPI(MPI_Allgatherv(out, mine, MPI_INT, r.buf, counts, displs, MPI_INT, c->comm));
    rbuf_check(c, "allgatherv", &r);
}

/* ---- Alltoall, Alltoallv, Alltoallw ---- */

/* sc[g]: the count each rank of group g sends to each remote rank. */
static void t_alltoall(const struct ic *c, const int sc[2])
{
    const int mine = sc[c->side], theirs = sc[1 - c->side], me = world_rank();
    int *out = check_malloc((rsize(c) * mine + 1) * sizeof(int));
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < mine; ++i)
            out[j * mine + i] = val(me, rw(c, j), i);
    struct rbuf r = rbuf_new(rsize(c) * theirs + 1);
    want_blocks(c, r.want, theirs, me);
    CHECK_MPI(MPI_Alltoall(out, mine, MPI_INT, r.buf, theirs, MPI_INT, c->comm));
    rbuf_check(c, "alltoall", &r);
    free(out);
}

static void t_alltoallv(const struct ic *c)
{
    const int me = world_rank();
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];
    for (int j = 0; j < rsize(c); ++j) {
        scounts[j] = a2av_count(c->lrank, j);
        rcounts[j] = a2av_count(j, c->lrank);
    }
    const int slen = reverse_displs(scounts, rsize(c), sdispls);
    int *out = check_malloc(slen * sizeof(int));
    poison(out, slen);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < scounts[j]; ++i)
            out[sdispls[j] + i] = val(me, rw(c, j), i);
    struct rbuf r = rbuf_new(reverse_displs(rcounts, rsize(c), rdispls));
    want_blocksv(c, r.want, rcounts, rdispls, me, 0);
    CHECK_MPI(MPI_Alltoallv(out, scounts, sdispls, MPI_INT, r.buf, rcounts, rdispls, MPI_INT,
                            c->comm));
    rbuf_check(c, "alltoallv", &r);
    free(out);
}

/* Alltoallw: to remote rank j, one element of a contiguous type of
 * a2av_count(lrank, j) + 1 ints; received as that many MPI_INTs; byte
 * displacements, blocks in reverse order. */
static void t_alltoallw(const struct ic *c)
{
    const int me = world_rank(), m = rsize(c);
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN], sints[MAXN], sidx[MAXN],
        ridx[MAXN];
    MPI_Datatype stypes[MAXN], rtypes[MAXN], contig[4];
    for (int k = 1; k <= 3; ++k) {
        CHECK_MPI(MPI_Type_contiguous(k, MPI_INT, &contig[k]));
        CHECK_MPI(MPI_Type_commit(&contig[k]));
    }
    for (int j = 0; j < m; ++j) {
        sints[j] = a2av_count(c->lrank, j) + 1;
        scounts[j] = 1;
        stypes[j] = contig[sints[j]];
        rcounts[j] = a2av_count(j, c->lrank) + 1;
        rtypes[j] = MPI_INT;
    }
    const int slen = reverse_displs(sints, m, sidx);
    const int rlen = reverse_displs(rcounts, m, ridx);
    for (int j = 0; j < m; ++j) {
        sdispls[j] = sidx[j] * (int)sizeof(int);
        rdispls[j] = ridx[j] * (int)sizeof(int);
    }
    int *out = check_malloc(slen * sizeof(int));
    poison(out, slen);
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < sints[j]; ++i)
            out[sidx[j] + i] = val(me, rw(c, j), i + 50);
    struct rbuf r = rbuf_new(rlen);
    want_blocksv(c, r.want, rcounts, ridx, me, 50);
    CHECK_MPI(MPI_Alltoallw(out, scounts, sdispls, stypes, r.buf, rcounts, rdispls, rtypes,
                            c->comm));
    rbuf_check(c, "alltoallw", &r);
    for (int k = 1; k <= 3; ++k)
        CHECK_MPI(MPI_Type_free(&contig[k]));
    free(out);
}

/* ---- Reduce, Allreduce, Reduce_scatter_block, Reduce_scatter ----
 *
 * Each rank reduces contribution(count, noncomm): with concat over long
 * longs (noncomm), else with MPI_SUM over ints. */

static void *poisoned(int count, int noncomm)
{
    if (noncomm) {
        long long *v = check_malloc(count * sizeof(long long));
        for (int i = 0; i < count; ++i)
            v[i] = POISON;
        return v;
    }
    int *v = check_malloc(count * sizeof(int));
    poison(v, count);
    return v;
}

/* buf[0, extent) holds elements [first, first + len) of the reduction of
 * the other group's vectors, then poison. */
static void check_reduced(const struct ic *c, const char *what, const void *buf, int first,
                          int len, int extent, int noncomm)
{
    for (int i = 0; i < extent; ++i) {
        if (noncomm) {
            const long long got = ((const long long *)buf)[i];
            const long long want = i < len ? concat_of(c, 1 - c->side, first + i) : POISON;
            CHECKF(got == want, "%s: %s (concat) element %d of block at %d: %lld, expected %lld",
                   c->name, what, i, first, got, want);
        } else {
            const int got = ((const int *)buf)[i];
            const int want = i < len ? sum_of(c, 1 - c->side, first + i) : POISON;
            CHECKF(got == want, "%s: %s (sum) element %d of block at %d: %d, expected %d",
                   c->name, what, i, first, got, want);
        }
    }
}

/* At most 8 elements (count <= 8): the rest of the 8 must stay poisoned. */
static void t_reduce(const struct ic *c, int rside, int root, int count, int noncomm)
{
    const int arg = root_arg(c, rside, root);
    const MPI_Datatype type = noncomm ? MPI_LONG_LONG : MPI_INT;
    const MPI_Op op = noncomm ? concat : MPI_SUM;
    if (c->side == rside && !is_root(c, rside, root)) {
        CHECK_MPI(MPI_Reduce(NULL, NULL, count, type, op, arg, c->comm));
        return;
    }
    void *in = contribution(count, noncomm);
    if (c->side != rside) {
        CHECK_MPI(MPI_Reduce(in, NULL, count, type, op, arg, c->comm));
    } else {
        /* The root's send buffer is not significant (MPI-3.1 5.9.1), but
         * MPICH 4.0 rejects a NULL one: an unused buffer. */
        void *out = poisoned(8, noncomm);
        CHECK_MPI(MPI_Reduce(in, out, count, type, op, arg, c->comm));
        check_reduced(c, "reduce", out, 0, count, 8, noncomm);
        free(out);
    }
    free(in);
}

/* As t_reduce, at every rank. */
static void t_allreduce(const struct ic *c, int count, int noncomm)
{
    void *in = contribution(count, noncomm), *out = poisoned(8, noncomm);
    CHECK_MPI(MPI_Allreduce(in, out, count, noncomm ? MPI_LONG_LONG : MPI_INT,
                            noncomm ? concat : MPI_SUM, c->comm));
    check_reduced(c, "allreduce", out, 0, count, 8, noncomm);
    free(in);
    free(out);
}

/* count = size[0] * size[1] * k in both groups: recvcount = count / (local
 * size) = (remote size) * k. */
static void t_reduce_scatter_block(const struct ic *c, int k, int noncomm)
{
    const int count = c->size[0] * c->size[1] * k;
    const int recvcount = count / lsize(c);
    void *in = contribution(count, noncomm), *out = poisoned(recvcount + 1, noncomm);
    CHECK_MPI(MPI_Reduce_scatter_block(in, out, recvcount, noncomm ? MPI_LONG_LONG : MPI_INT,
                                       noncomm ? concat : MPI_SUM, c->comm));
    check_reduced(c, "reduce_scatter_block", out, c->lrank * recvcount, recvcount, recvcount + 1,
                  noncomm);
    free(in);
    free(out);
}

static void t_reduce_scatter(const struct ic *c, int noncomm)
{
    int counts[MAXN], first;
    const int total = rs_counts(c, counts, &first), mine = counts[c->lrank];
    void *in = contribution(total, noncomm), *out = poisoned(mine + 1, noncomm);
    CHECK_MPI(MPI_Reduce_scatter(in, out, counts, noncomm ? MPI_LONG_LONG : MPI_INT,
                                 noncomm ? concat : MPI_SUM, c->comm));
    check_reduced(c, "reduce_scatter", out, first, mine, mine + 1, noncomm);
    free(in);
    free(out);
}

/* ---- all of it ---- */

static void run_all(const struct ic *c)
{
    const int last[2] = {c->size[0] - 1, c->size[1] - 1};

    CHECK_MPI(MPI_Barrier(c->comm));

    /* Bcast and Reduce from every root of both groups. */
    for (int g = 0; g < 2; ++g)
        for (int r = 0; r < c->size[g]; ++r) {
            t_bcast(c, g, r, 3, 10 * g + r);
            t_reduce(c, g, r, 3, 1);
        }
    for (int g = 0; g < 2; ++g) {
        t_bcast(c, g, last[g], 0, 1);
        t_bcast_vector(c, g, last[g], 2);
        t_reduce(c, g, 0, 4, 0);
        t_reduce(c, g, last[g], 0, 1);
    }

    CHECK_MPI(MPI_Barrier(c->comm));

    /* The other rooted ones, root 0 of group 0 and the last rank of group 1. */
    for (int g = 0; g < 2; ++g) {
        const int r = g == 0 ? 0 : last[1];
        t_gather(c, g, r, 2, 0, 3 + g);
        t_gather(c, g, r, 3, 1, 5 + g);
        t_gather(c, g, r, 0, 0, 7);
        t_gatherv(c, g, r, g);
        t_scatter(c, g, r, 2, g);
        t_scatter(c, g, r, 0, 0);
        t_scatterv(c, g, r, 1 + g);
    }

    const int s23[2] = {2, 3}, s01[2] = {0, 1}, s00[2] = {0, 0};
    t_allgather(c, s23, 1);
    t_allgather(c, s01, 2);
    t_allgatherv(c, 0);
    t_allgatherv(c, 1);
    t_alltoall(c, s23);
    t_alltoall(c, s01);
    t_alltoall(c, s00);
    t_alltoallv(c);
    t_alltoallw(c);

    CHECK_MPI(MPI_Barrier(c->comm));

    t_allreduce(c, 5, 1);
    t_allreduce(c, 5, 0);
    t_allreduce(c, 0, 0);
    t_reduce_scatter_block(c, 1, 1);
    t_reduce_scatter_block(c, 2, 0);
    t_reduce_scatter_block(c, 0, 0);
    t_reduce_scatter(c, 1);
    t_reduce_scatter(c, 0);

    CHECK_MPI(MPI_Barrier(c->comm));
}

int main(int argc, char **argv)
{
    if (!ic_init(&argc, &argv))
        return 0;
    for (int parity = 0; parity < 2; ++parity) {
        struct ic c;
        make_ic(&c, parity, 77);
        int r = -1, rs = -1;
        CHECK_MPI(MPI_Comm_rank(c.comm, &r));
        CHECK_MPI(MPI_Comm_remote_size(c.comm, &rs));
        CHECK(r == c.lrank && rs == rsize(&c));
        run_all(&c);
        CHECK_MPI(MPI_Comm_free(&c.comm));
    }
    ic_finalize();
    return 0;
}
