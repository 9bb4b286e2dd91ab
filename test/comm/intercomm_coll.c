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
#include "check.h"

#define MAXN 64
#define POISON (-999999)

/* An intercommunicator and what this rank knows of its groups. */
struct ic {
    const char *name;
    MPI_Comm comm;
    int side, lrank, size[2];
    int world[2][MAXN]; /* world[g][i]: the world rank of rank i of group g */
};

static int lsize(const struct ic *c)
{
    return c->size[c->side];
}

static int rsize(const struct ic *c)
{
    return c->size[1 - c->side];
}

/* The world rank of remote rank j. */
static int rw(const struct ic *c, int j)
{
    return c->world[1 - c->side][j];
}

static void make_ic(struct ic *c, int parity)
{
    const int n = world_size(), me = world_rank();
    memset(c, 0, sizeof *c);
    c->name = parity ? "parity" : "thirds";
    for (int pass = 0; pass < n; ++pass) {
        const int w = parity ? n - 1 - pass : pass;
        const int g = parity ? w % 2 : (w >= n / 3 + 1);
        if (w == me) {
            c->side = g;
            c->lrank = c->size[g];
        }
        c->world[g][c->size[g]++] = w;
    }
    MPI_Comm local;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, c->side, c->lrank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, c->world[1 - c->side][0], 77,
                                   &c->comm));
    CHECK_MPI(MPI_Comm_free(&local));
    int r = -1, rs = -1;
    CHECK_MPI(MPI_Comm_rank(c->comm, &r));
    CHECK_MPI(MPI_Comm_remote_size(c->comm, &rs));
    CHECK(r == c->lrank && rs == rsize(c));
}

/* A value that names its sender (world rank a), a second party or sequence
 * number b, and an element index i. */
static int val(int a, int b, int i)
{
    return a * 10000 + b * 100 + i + 1;
}

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

/* ---- a non-commutative operation ----
 *
 * Decimal concatenation of numbers whose digits are 1..9: associative, not
 * commutative, so a reduction over ranks 0, 1, 2 with digits 3, 5, 9 must
 * give 359, and any other order shows. */
static long long digits_of(long long v)
{
    long long p = 1;
    while (p <= v)
        p *= 10;
    return p;
}

static void concat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    long long *a = (long long *)in, *b = (long long *)inout;
    for (int i = 0; i < *len; ++i)
        b[i] = a[i] * digits_of(b[i]) + b[i];
}

static MPI_Op concat;

/* The digit world rank w contributes at element i. */
static long long digit(int w, int i)
{
    return (w + 3 * i) % 9 + 1;
}

/* The concatenation of the digits of group g at element i. */
static long long concat_of(const struct ic *c, int g, int i)
{
    long long acc = 0;
    for (int j = 0; j < c->size[g]; ++j)
        acc = acc * 10 + digit(c->world[g][j], i);
    return acc;
}

/* The sum of world rank w's contributions val(w, 0, i) over group g. */
static int sum_of(const struct ic *c, int g, int i)
{
    int acc = 0;
    for (int j = 0; j < c->size[g]; ++j)
        acc += val(c->world[g][j], 0, i);
    return acc;
}

/* The root argument of a rooted collective whose root is rank `root` of
 * group `rside`. */
static int root_arg(const struct ic *c, int rside, int root)
{
    if (c->side != rside)
        return root;
    return c->lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static int is_root(const struct ic *c, int rside, int root)
{
    return c->side == rside && c->lrank == root;
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
    const int len = rsize(c) * count + 1;
    int *buf = check_malloc(len * sizeof(int)), *want = check_malloc(len * sizeof(int));
    poison(buf, len);
    poison(want, len);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < count; ++i)
            want[j * count + i] = val(rw(c, j), seq, i);
    CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, buf, count, MPI_INT, arg, c->comm));
    check_buf(c, "gather", buf, want, len);
    free(buf);
    free(want);
}

/* The count remote rank j sends in Gatherv/receives in Scatterv. */
static int vcount(int j, int seq)
{
    return (j + seq) % 3;
}

/* Displacements for blocks of counts[0..m), laid out from the last block to
 * the first with a gap of one element before each; returns the extent. */
static int reverse_displs(const int *counts, int m, int *displs)
{
    int pos = 0;
    for (int j = m - 1; j >= 0; --j) {
        pos += 1;
        displs[j] = pos;
        pos += counts[j];
    }
    return pos + 1;
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
    const int len = reverse_displs(counts, rsize(c), displs);
    int *buf = check_malloc(len * sizeof(int)), *want = check_malloc(len * sizeof(int));
    poison(buf, len);
    poison(want, len);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < counts[j]; ++i)
            want[displs[j] + i] = val(rw(c, j), seq, i);
    CHECK_MPI(MPI_Gatherv(NULL, 0, MPI_INT, buf, counts, displs, MPI_INT, arg, c->comm));
    check_buf(c, "gatherv", buf, want, len);
    free(buf);
    free(want);
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

/* ---- Reduce ---- */

static void t_reduce(const struct ic *c, int rside, int root, int count, int noncomm)
{
    const int arg = root_arg(c, rside, root);
    const MPI_Datatype type = noncomm ? MPI_LONG_LONG : MPI_INT;
    const MPI_Op op = noncomm ? concat : MPI_SUM;
    if (c->side == rside && !is_root(c, rside, root)) {
        CHECK_MPI(MPI_Reduce(NULL, NULL, count, type, op, arg, c->comm));
        return;
    }
    long long lin[8], lout[8];
    int iin[8], iout[8];
    for (int i = 0; i < 8; ++i) {
        lin[i] = digit(world_rank(), i);
        iin[i] = val(world_rank(), 0, i);
        lout[i] = POISON;
        iout[i] = POISON;
    }
    if (c->side != rside) {
        CHECK_MPI(MPI_Reduce(noncomm ? (void *)lin : (void *)iin, NULL, count, type, op, arg,
                             c->comm));
        return;
    }
    /* The root's send buffer is not significant (MPI-3.1 5.9.1), but MPICH
     * 4.0 rejects a NULL one: an unused buffer. */
    CHECK_MPI(MPI_Reduce(noncomm ? (void *)lin : (void *)iin, noncomm ? (void *)lout : (void *)iout,
                         count, type, op, arg, c->comm));
    for (int i = 0; i < 8; ++i) {
        if (noncomm) {
            const long long want = i < count ? concat_of(c, 1 - c->side, i) : POISON;
            CHECKF(lout[i] == want, "%s: reduce (concat) element %d: %lld, expected %lld",
                   c->name, i, lout[i], want);
        } else {
            const int want = i < count ? sum_of(c, 1 - c->side, i) : POISON;
            CHECKF(iout[i] == want, "%s: reduce (sum) element %d: %d, expected %d", c->name, i,
                   iout[i], want);
        }
    }
}

/* ---- Allgather, Allgatherv ---- */

/* sc[g]: the count each rank of group g sends. */
static void t_allgather(const struct ic *c, const int sc[2], int seq)
{
    const int mine = sc[c->side], theirs = sc[1 - c->side];
    int out[8];
    for (int i = 0; i < mine; ++i)
        out[i] = val(world_rank(), seq, i);
    const int len = rsize(c) * theirs + 1;
    int *buf = check_malloc(len * sizeof(int)), *want = check_malloc(len * sizeof(int));
    poison(buf, len);
    poison(want, len);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < theirs; ++i)
            want[j * theirs + i] = val(rw(c, j), seq, i);
    CHECK_MPI(MPI_Allgather(out, mine, MPI_INT, buf, theirs, MPI_INT, c->comm));
    check_buf(c, "allgather", buf, want, len);
    free(buf);
    free(want);
}

/* The count local rank r of group g sends in Allgatherv. */
static int agv_count(int g, int r, int seq)
{
    return (r + g + seq) % 3;
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
    const int len = reverse_displs(counts, rsize(c), displs);
    int *buf = check_malloc(len * sizeof(int)), *want = check_malloc(len * sizeof(int));
    poison(buf, len);
    poison(want, len);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < counts[j]; ++i)
            want[displs[j] + i] = val(rw(c, j), seq, i);
    CHECK_MPI(MPI_Allgatherv(out, mine, MPI_INT, buf, counts, displs, MPI_INT, c->comm));
    check_buf(c, "allgatherv", buf, want, len);
    free(buf);
    free(want);
}

/* ---- Alltoall, Alltoallv, Alltoallw ---- */

/* sc[g]: the count each rank of group g sends to each remote rank. */
static void t_alltoall(const struct ic *c, const int sc[2])
{
    const int mine = sc[c->side], theirs = sc[1 - c->side], me = world_rank();
    const int slen = rsize(c) * mine + 1, rlen = rsize(c) * theirs + 1;
    int *out = check_malloc(slen * sizeof(int)), *buf = check_malloc(rlen * sizeof(int)),
        *want = check_malloc(rlen * sizeof(int));
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < mine; ++i)
            out[j * mine + i] = val(me, rw(c, j), i);
    poison(buf, rlen);
    poison(want, rlen);
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < theirs; ++i)
            want[j * theirs + i] = val(rw(c, j), me, i);
    CHECK_MPI(MPI_Alltoall(out, mine, MPI_INT, buf, theirs, MPI_INT, c->comm));
    check_buf(c, "alltoall", buf, want, rlen);
    free(out);
    free(buf);
    free(want);
}

/* The count a rank with local rank a sends to remote rank b. */
static int a2av_count(int a, int b)
{
    return (a + 2 * b) % 3;
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
    const int rlen = reverse_displs(rcounts, rsize(c), rdispls);
    int *out = check_malloc(slen * sizeof(int)), *buf = check_malloc(rlen * sizeof(int)),
        *want = check_malloc(rlen * sizeof(int));
    poison(out, slen);
    poison(buf, rlen);
    poison(want, rlen);
    for (int j = 0; j < rsize(c); ++j) {
        for (int i = 0; i < scounts[j]; ++i)
            out[sdispls[j] + i] = val(me, rw(c, j), i);
        for (int i = 0; i < rcounts[j]; ++i)
            want[rdispls[j] + i] = val(rw(c, j), me, i);
    }
    CHECK_MPI(MPI_Alltoallv(out, scounts, sdispls, MPI_INT, buf, rcounts, rdispls, MPI_INT,
                            c->comm));
    check_buf(c, "alltoallv", buf, want, rlen);
    free(out);
    free(buf);
    free(want);
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
    int *out = check_malloc(slen * sizeof(int)), *buf = check_malloc(rlen * sizeof(int)),
        *want = check_malloc(rlen * sizeof(int));
    poison(out, slen);
    poison(buf, rlen);
    poison(want, rlen);
    for (int j = 0; j < m; ++j) {
        for (int i = 0; i < sints[j]; ++i)
            out[sidx[j] + i] = val(me, rw(c, j), i + 50);
        for (int i = 0; i < rcounts[j]; ++i)
            want[ridx[j] + i] = val(rw(c, j), me, i + 50);
    }
    CHECK_MPI(MPI_Alltoallw(out, scounts, sdispls, stypes, buf, rcounts, rdispls, rtypes,
                            c->comm));
    check_buf(c, "alltoallw", buf, want, rlen);
    for (int k = 1; k <= 3; ++k)
        CHECK_MPI(MPI_Type_free(&contig[k]));
    free(out);
    free(buf);
    free(want);
}

/* ---- Allreduce ---- */

static void t_allreduce(const struct ic *c, int count, int noncomm)
{
    long long lin[8], lout[8];
    int iin[8], iout[8];
    for (int i = 0; i < 8; ++i) {
        lin[i] = digit(world_rank(), i);
        iin[i] = val(world_rank(), 0, i);
        lout[i] = POISON;
        iout[i] = POISON;
    }
    if (noncomm)
        CHECK_MPI(MPI_Allreduce(lin, lout, count, MPI_LONG_LONG, concat, c->comm));
    else
        CHECK_MPI(MPI_Allreduce(iin, iout, count, MPI_INT, MPI_SUM, c->comm));
    for (int i = 0; i < 8; ++i) {
        if (noncomm) {
            const long long want = i < count ? concat_of(c, 1 - c->side, i) : POISON;
            CHECKF(lout[i] == want, "%s: allreduce (concat) element %d: %lld, expected %lld",
                   c->name, i, lout[i], want);
        } else {
            const int want = i < count ? sum_of(c, 1 - c->side, i) : POISON;
            CHECKF(iout[i] == want, "%s: allreduce (sum) element %d: %d, expected %d", c->name,
                   i, iout[i], want);
        }
    }
}

/* ---- Reduce_scatter_block, Reduce_scatter ---- */

/* Checks block [first, first + len) of the reduction of the other group's
 * vectors, poison after it. */
static void check_scattered(const struct ic *c, const char *what, const void *buf, int first,
                            int len, int noncomm)
{
    for (int i = 0; i <= len; ++i) {
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

/* The vector this rank contributes: count elements. */
static void *contribution(int count, int noncomm)
{
    if (noncomm) {
        long long *v = check_malloc(count * sizeof(long long));
        for (int i = 0; i < count; ++i)
            v[i] = digit(world_rank(), i);
        return v;
    }
    int *v = check_malloc(count * sizeof(int));
    for (int i = 0; i < count; ++i)
        v[i] = val(world_rank(), 0, i);
    return v;
}

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

/* count = size[0] * size[1] * k in both groups: recvcount = count / (local
 * size) = (remote size) * k. */
static void t_reduce_scatter_block(const struct ic *c, int k, int noncomm)
{
    const int count = c->size[0] * c->size[1] * k;
    const int recvcount = count / lsize(c);
    void *in = contribution(count, noncomm), *out = poisoned(recvcount + 1, noncomm);
    CHECK_MPI(MPI_Reduce_scatter_block(in, out, recvcount, noncomm ? MPI_LONG_LONG : MPI_INT,
                                       noncomm ? concat : MPI_SUM, c->comm));
    check_scattered(c, "reduce_scatter_block", out, c->lrank * recvcount, recvcount, noncomm);
    free(in);
    free(out);
}

/* recvcounts of group g: 0, 2, 4, ... with the rest of `total` to the last
 * rank (group 0) or the same reversed (group 1). */
static void rs_counts(const struct ic *c, int g, int total, int *counts)
{
    const int m = c->size[g];
    int sum = 0;
    for (int i = 0; i < m - 1; ++i) {
        counts[g == 0 ? i : m - 1 - i] = 2 * i;
        sum += 2 * i;
    }
    counts[g == 0 ? m - 1 : 0] = total - sum;
}

static void t_reduce_scatter(const struct ic *c, int noncomm)
{
    const int big = c->size[0] > c->size[1] ? c->size[0] : c->size[1];
    const int total = (big - 1) * (big - 2) + 3; /* at least either group's 0 + 2 + 4 + ... */
    int counts[MAXN];
    rs_counts(c, c->side, total, counts);
    int first = 0;
    for (int i = 0; i < c->lrank; ++i)
        first += counts[i];
    void *in = contribution(total, noncomm), *out = poisoned(counts[c->lrank] + 1, noncomm);
    CHECK_MPI(MPI_Reduce_scatter(in, out, counts, noncomm ? MPI_LONG_LONG : MPI_INT,
                                 noncomm ? concat : MPI_SUM, c->comm));
    check_scattered(c, "reduce_scatter", out, first, counts[c->lrank], noncomm);
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
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size();
    /* A concatenation of up to 18 digits fits a long long: groups of up to
     * 18 ranks. */
    CHECKF(n <= 24, "written for at most 24 ranks");
    if (n < 2) {
        CHECK_MPI(MPI_Finalize());
        return 0;
    }
    CHECK_MPI(MPI_Op_create(concat_op, 0, &concat));
    for (int parity = 0; parity < 2; ++parity) {
        struct ic c;
        make_ic(&c, parity);
        run_all(&c);
        CHECK_MPI(MPI_Comm_free(&c.comm));
    }
    CHECK_MPI(MPI_Op_free(&concat));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
