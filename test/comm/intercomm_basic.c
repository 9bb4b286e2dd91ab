/*
 * Intercommunicators (MPI-3.1 6.6): construction, inquiry and
 * point-to-point.  Needs two nonempty groups, so with one rank it only
 * initialises and finalises.
 *
 * MPI_COMM_WORLD is split into two groups in several ways (each group listed
 * below in its local rank order, as world ranks):
 *   halves    [0, n/2) and [n/2, n): unequal at odd n; local leaders 0.
 *   parity    even and odd world ranks; local leaders 0.
 *   reversed  the halves, each in descending world order, with the local
 *             leader the group's last local rank (nonzero where the group
 *             has two ranks or more).
 *   partial   (n >= 3) the halves of the world without its last rank, which
 *             takes no part.
 * and MPI_Intercomm_create builds the intercommunicator from a local
 * communicator made by MPI_Comm_split, with a peer communicator that is
 * MPI_COMM_WORLD (halves, parity, reversed, partial), a duplicate of it
 * (parity again) or a copy of it in reversed rank order (reversed again;
 * the remote leader named by its rank there).  A to E run on halves, parity
 * and reversed with MPI_COMM_WORLD as the peer; the other three get A, a
 * little point-to-point and one merge.
 *   A. Inquiry: MPI_Comm_test_inter (1; 0 on MPI_COMM_WORLD and the local
 *      communicator), MPI_Comm_size/rank (the local group's),
 *      MPI_Comm_remote_size, and MPI_Comm_group/MPI_Comm_remote_group, which
 *      translated to world ranks give the group lists in order.
 *   B. Point-to-point from every rank to every remote rank, with the
 *      source of a status the sender's rank in its own group: blocking
 *      MPI_Send and MPI_Ssend (in an order that cannot deadlock without
 *      buffering), MPI_Isend/MPI_Irecv and MPI_Waitall, MPI_Sendrecv,
 *      receives with MPI_ANY_SOURCE and MPI_ANY_TAG, MPI_Probe and
 *      MPI_Iprobe, MPI_PROC_NULL as destination and source, and the order of
 *      several messages between one pair (by source, and by MPI_ANY_SOURCE).
 *   C. MPI_Comm_dup: an intercommunicator with the same groups,
 *      MPI_CONGRUENT to the original (which is MPI_IDENT to itself and
 *      MPI_UNEQUAL to MPI_COMM_WORLD); a message on the duplicate does not
 *      match a receive on the original, with the same source and tag.
 *      Intercommunicators built separately (halves twice, reversed, parity,
 *      all alive at once) compare as their local and remote groups do:
 *      MPI_CONGRUENT, MPI_SIMILAR (same members, another order) or
 *      MPI_UNEQUAL; traffic with the same tags on two of them at once stays
 *      apart.
 *   D. MPI_Intercomm_merge: the group that passes high = 0 comes first, each
 *      group in its local order, whichever group that is (both assignments
 *      on halves and reversed, one on parity); the merged communicator is
 *      an intracommunicator whose MPI_Allreduce and MPI_Bcast work.  Where
 *      both groups pass the same high (on halves), the order is arbitrary:
 *      only the members are checked.
 *   E. A name (MPI_Comm_set_name/get_name), an attribute whose copy
 *      callback runs on MPI_Comm_dup and whose delete callback runs on
 *      MPI_Comm_free, MPI_TAG_UB; MPI_Comm_free sets the handle to
 *      MPI_COMM_NULL.
 */
#include "check.h"

#define MAXN 256

/* Two groups of world ranks, each in its local rank order. */
struct part {
    const char *name;
    int size[2];
    int world[2][MAXN]; /* world[g][i]: the world rank of rank i of group g */
    int leader[2];      /* the local leader of each group (a local rank) */
    int side;           /* this rank's group, or -1 where it takes no part */
    int lrank;          /* this rank's rank in it */
};

enum kind { HALVES, PARITY, REVERSED, PARTIAL };

static void make_part(struct part *p, enum kind kind)
{
    const int n = world_size(), me = world_rank();
    static const char *names[] = {"halves", "parity", "reversed", "partial"};
    memset(p, 0, sizeof *p);
    p->name = names[kind];
    p->side = -1;
    const int m = kind == PARTIAL ? n - 1 : n; /* the ranks taking part */
    for (int pass = 0; pass < m; ++pass) {
        /* Reversed lists each group from its highest world rank down. */
        const int w = kind == REVERSED ? m - 1 - pass : pass;
        const int g = kind == PARITY ? w % 2 : (w >= m / 2);
        if (w == me) {
            p->side = g;
            p->lrank = p->size[g];
        }
        p->world[g][p->size[g]++] = w;
    }
    for (int g = 0; g < 2; ++g)
        p->leader[g] = kind == REVERSED ? p->size[g] - 1 : 0;
}

/* The payload of message `k` from world rank `src` to world rank `dst`. */
static int payload(int src, int dst, int k)
{
    return src * 10000 + dst * 100 + k;
}

/* Builds the intercommunicator of `p` (MPI_COMM_NULL where this rank takes
 * no part).  The local communicator is split from the world and freed
 * again; `peer` is MPI_COMM_WORLD, or a communicator over the world whose
 * rank of world rank w is `peer_reversed ? n - 1 - w : w`. */
static MPI_Comm make_inter(const struct part *p, MPI_Comm peer, int peer_reversed, int tag)
{
    const int n = world_size();
    MPI_Comm local;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, p->side < 0 ? MPI_UNDEFINED : p->side, p->lrank,
                             &local));
    if (p->side < 0) {
        CHECK(local == MPI_COMM_NULL);
        return MPI_COMM_NULL;
    }
    int flag = -1, lr = -1;
    CHECK_MPI(MPI_Comm_test_inter(local, &flag));
    CHECK(flag == 0);
    CHECK_MPI(MPI_Comm_rank(local, &lr));
    CHECK(lr == p->lrank);
    const int other = 1 - p->side;
    const int rw = p->world[other][p->leader[other]];
    MPI_Comm inter = MPI_COMM_NULL;
    CHECK_MPI(MPI_Intercomm_create(local, p->leader[p->side], peer,
                                   peer_reversed ? n - 1 - rw : rw, tag, &inter));
    CHECK(inter != MPI_COMM_NULL);
    CHECK_MPI(MPI_Comm_free(&local));
    return inter;
}

/* The world ranks of the members of `g`, in its rank order. */
static void group_to_world(MPI_Group g, int *out, int size)
{
    MPI_Group wg;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int ranks[MAXN];
    for (int i = 0; i < size; ++i)
        ranks[i] = i;
    CHECK_MPI(MPI_Group_translate_ranks(g, size, ranks, wg, out));
    CHECK_MPI(MPI_Group_free(&wg));
}

/* A. */
static void check_shape(MPI_Comm inter, const struct part *p)
{
    const int me = p->side, other = 1 - p->side;
    int flag = -1, size = -1, rank = -1, rsize = -1;
    CHECK_MPI(MPI_Comm_test_inter(inter, &flag));
    CHECKF(flag == 1, "%s: MPI_Comm_test_inter gave %d", p->name, flag);
    CHECK_MPI(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0);
    CHECK_MPI(MPI_Comm_size(inter, &size));
    CHECK_MPI(MPI_Comm_rank(inter, &rank));
    CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
    CHECKF(size == p->size[me] && rank == p->lrank && rsize == p->size[other],
           "%s: size %d rank %d remote size %d, expected %d %d %d", p->name, size, rank, rsize,
           p->size[me], p->lrank, p->size[other]);

    MPI_Group lg, rg;
    int lsz = -1, rsz = -1, grank = -1, w[MAXN];
    CHECK_MPI(MPI_Comm_group(inter, &lg));
    CHECK_MPI(MPI_Comm_remote_group(inter, &rg));
    CHECK_MPI(MPI_Group_size(lg, &lsz));
    CHECK_MPI(MPI_Group_size(rg, &rsz));
    CHECK(lsz == p->size[me] && rsz == p->size[other]);
    CHECK_MPI(MPI_Group_rank(lg, &grank));
    CHECK(grank == p->lrank);
    CHECK_MPI(MPI_Group_rank(rg, &grank));
    CHECKF(grank == MPI_UNDEFINED, "%s: rank %d in the remote group", p->name, grank);
    group_to_world(lg, w, lsz);
    for (int i = 0; i < lsz; ++i)
        CHECKF(w[i] == p->world[me][i], "%s: local rank %d is world rank %d, expected %d",
               p->name, i, w[i], p->world[me][i]);
    group_to_world(rg, w, rsz);
    for (int i = 0; i < rsz; ++i)
        CHECKF(w[i] == p->world[other][i], "%s: remote rank %d is world rank %d, expected %d",
               p->name, i, w[i], p->world[other][i]);
    CHECK_MPI(MPI_Group_free(&lg));
    CHECK_MPI(MPI_Group_free(&rg));
}

static void check_msg(const struct part *p, int got, int src, int k, const MPI_Status *st,
                      int tag)
{
    const int sw = p->world[1 - p->side][src], me = world_rank();
    CHECKF(got == payload(sw, me, k), "%s: got %d from remote %d, expected %d", p->name, got,
           src, payload(sw, me, k));
    if (st != NULL) {
        int count = -1;
        CHECK_MPI(MPI_Get_count(st, MPI_INT, &count));
        CHECKF(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == 1,
               "%s: status source %d tag %d count %d, expected %d %d 1", p->name, st->MPI_SOURCE,
               st->MPI_TAG, count, src, tag);
    }
}

/* Blocking sends from every rank of group `from` to every rank of the other
 * group, remote ranks in increasing order, received in increasing order:
 * each send waits at most for receives that come before it in both orders,
 * so this completes even where every send waits for its receive. */
static void blocking_round(MPI_Comm inter, const struct part *p, int from, int ssend, int k)
{
    const int rsize = p->size[1 - p->side], me = world_rank();
    for (int j = 0; j < rsize; ++j) {
        if (p->side == from) {
            int v = payload(me, p->world[1 - p->side][j], k);
            if (ssend)
                CHECK_MPI(MPI_Ssend(&v, 1, MPI_INT, j, 1000 + j, inter));
            else
                CHECK_MPI(MPI_Send(&v, 1, MPI_INT, j, 1000 + j, inter));
        } else {
            int v = -1;
            MPI_Status st;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, j, 1000 + p->lrank, inter, &st));
            check_msg(p, v, j, k, &st, 1000 + p->lrank);
        }
    }
}

/* Group `from` sends one message to every remote rank; the other group
 * receives them all with MPI_ANY_SOURCE and MPI_ANY_TAG, then tells every
 * sender it is done.  A sender sends nothing more to that group before it
 * hears so, so nothing else can match the wildcard receives. */
static void wildcard_round(MPI_Comm inter, const struct part *p, int from)
{
    const int rsize = p->size[1 - p->side], me = world_rank();
    char token = 0;
    if (p->side == from) {
        int v[MAXN];
        MPI_Request r[MAXN];
        for (int j = 0; j < rsize; ++j) {
            v[j] = payload(me, p->world[1 - p->side][j], 5);
            CHECK_MPI(MPI_Isend(&v[j], 1, MPI_INT, j, 5000 + p->lrank, inter, &r[j]));
        }
        CHECK_MPI(MPI_Waitall(rsize, r, MPI_STATUSES_IGNORE));
        for (int j = 0; j < rsize; ++j)
            CHECK_MPI(MPI_Recv(&token, 1, MPI_CHAR, j, 5999, inter, MPI_STATUS_IGNORE));
    } else {
        int seen[MAXN] = {0};
        for (int i = 0; i < rsize; ++i) {
            int v = -1;
            MPI_Status st;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st));
            const int src = st.MPI_SOURCE;
            CHECKF(src >= 0 && src < rsize && !seen[src], "%s: wildcard receive from %d",
                   p->name, src);
            seen[src] = 1;
            check_msg(p, v, src, 5, &st, 5000 + src);
        }
        for (int j = 0; j < rsize; ++j)
            CHECK_MPI(MPI_Send(&token, 1, MPI_CHAR, j, 5999, inter));
    }
}

/* B. */
static void check_p2p(MPI_Comm inter, const struct part *p)
{
    const int rsize = p->size[1 - p->side], me = world_rank();
    const int *rw = p->world[1 - p->side];

    /* MPI_Send/MPI_Recv each way, then MPI_Ssend one way. */
    blocking_round(inter, p, 0, 0, 1);
    blocking_round(inter, p, 1, 0, 2);
    blocking_round(inter, p, 1, 1, 3);

    /* MPI_Isend/MPI_Irecv to and from everyone, one MPI_Waitall. */
    {
        int out[MAXN], in[MAXN];
        MPI_Request r[2 * MAXN];
        MPI_Status st[2 * MAXN];
        for (int i = 0; i < rsize; ++i) {
            in[i] = -1;
            CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, i, 3000 + i, inter, &r[i]));
        }
        for (int j = 0; j < rsize; ++j) {
            out[j] = payload(me, rw[j], 6);
            CHECK_MPI(MPI_Isend(&out[j], 1, MPI_INT, j, 3000 + p->lrank, inter, &r[rsize + j]));
        }
        CHECK_MPI(MPI_Waitall(2 * rsize, r, st));
        for (int i = 0; i < rsize; ++i)
            check_msg(p, in[i], i, 6, &st[i], 3000 + i);
    }

    /* MPI_Sendrecv with every remote rank in turn (acyclic, as above). */
    for (int j = 0; j < rsize; ++j) {
        int out = payload(me, rw[j], 7), in = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, j, 4000 + p->lrank, &in, 1, MPI_INT, j,
                               4000 + j, inter, &st));
        check_msg(p, in, j, 7, &st, 4000 + j);
    }

    /* Wildcards, each way. */
    wildcard_round(inter, p, 0);
    wildcard_round(inter, p, 1);

    /* MPI_Probe by source, MPI_Iprobe by MPI_ANY_SOURCE. */
    {
        int out[MAXN][MAXN + 1], second[MAXN];
        MPI_Request r[2 * MAXN];
        for (int j = 0; j < rsize; ++j) {
            /* To every remote rank: 1 + (own local rank) ints on tag 6000,
             * one int on tag 6001. */
            for (int k = 0; k <= p->lrank; ++k)
                out[j][k] = payload(me, rw[j], k);
            second[j] = payload(me, rw[j], 99);
            CHECK_MPI(MPI_Isend(out[j], p->lrank + 1, MPI_INT, j, 6000, inter, &r[2 * j]));
            CHECK_MPI(MPI_Isend(&second[j], 1, MPI_INT, j, 6001, inter, &r[2 * j + 1]));
        }
        for (int i = 0; i < rsize; ++i) {
            MPI_Status st;
            int count = -1, in[MAXN + 1];
            CHECK_MPI(MPI_Probe(i, 6000, inter, &st));
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
            CHECKF(st.MPI_SOURCE == i && st.MPI_TAG == 6000 && count == i + 1,
                   "%s: probe: source %d tag %d count %d, expected %d 6000 %d", p->name,
                   st.MPI_SOURCE, st.MPI_TAG, count, i, i + 1);
            CHECK_MPI(MPI_Recv(in, count, MPI_INT, i, 6000, inter, MPI_STATUS_IGNORE));
            for (int k = 0; k < count; ++k)
                check_msg(p, in[k], i, k, NULL, 6000);
        }
        int seen[MAXN] = {0};
        for (int i = 0; i < rsize; ++i) {
            MPI_Status st;
            int flag = 0, in = -1;
            while (!flag)
                CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 6001, inter, &flag, &st));
            const int src = st.MPI_SOURCE;
            CHECKF(src >= 0 && src < rsize && !seen[src] && st.MPI_TAG == 6001,
                   "%s: iprobe: source %d tag %d", p->name, src, st.MPI_TAG);
            seen[src] = 1;
            CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, src, 6001, inter, &st));
            check_msg(p, in, src, 99, &st, 6001);
        }
        CHECK_MPI(MPI_Waitall(2 * rsize, r, MPI_STATUSES_IGNORE));
    }

    /* MPI_PROC_NULL. */
    {
        int v = 42;
        MPI_Status st;
        CHECK_MPI(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, inter));
        CHECK_MPI(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, inter));
        status_poison(&st);
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, inter, &st));
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
        CHECKF(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 &&
                   v == 42,
               "%s: receive from MPI_PROC_NULL: source %d tag %d count %d value %d", p->name,
               st.MPI_SOURCE, st.MPI_TAG, count, v);
        MPI_Request r[2];
        CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, inter, &r[0]));
        CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, inter, &r[1]));
        CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        status_poison(&st);
        CHECK_MPI(MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, &v, 1, MPI_INT, MPI_PROC_NULL,
                               1, inter, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && v == 42);
    }

    /* Order: K messages to every remote rank on one tag, received by source;
     * K more on another tag, received by MPI_ANY_SOURCE (each source's in
     * order). */
    {
        enum { K = 4 };
        int out[2][MAXN][K];
        MPI_Request r[2 * MAXN * K];
        int nr = 0;
        for (int t = 0; t < 2; ++t)
            for (int j = 0; j < rsize; ++j)
                for (int k = 0; k < K; ++k) {
                    out[t][j][k] = payload(me, rw[j], 10 * t + k);
                    CHECK_MPI(MPI_Isend(&out[t][j][k], 1, MPI_INT, j, 7000 + t, inter, &r[nr++]));
                }
        for (int i = 0; i < rsize; ++i)
            for (int k = 0; k < K; ++k) {
                int in = -1;
                MPI_Status st;
                CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, i, 7000, inter, &st));
                check_msg(p, in, i, k, &st, 7000);
            }
        int next[MAXN] = {0};
        for (int m = 0; m < rsize * K; ++m) {
            int in = -1;
            MPI_Status st;
            CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 7001, inter, &st));
            const int src = st.MPI_SOURCE;
            CHECKF(src >= 0 && src < rsize && next[src] < K, "%s: source %d", p->name, src);
            check_msg(p, in, src, 10 + next[src]++, &st, 7001);
        }
        CHECK_MPI(MPI_Waitall(nr, r, MPI_STATUSES_IGNORE));
    }
}

/* MPI_Group_compare of two groups given as lists of world ranks. */
static int list_compare(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < na; ++i) {
        if (a[i] != b[i])
            same_order = 0;
        int found = 0;
        for (int j = 0; j < nb; ++j)
            found |= a[i] == b[j];
        if (!found)
            return MPI_UNEQUAL;
    }
    return same_order ? MPI_IDENT : MPI_SIMILAR;
}

/* MPI_Comm_compare of two distinct intercommunicators over the partitions
 * p and q (MPI-3.1 6.6.1): both local groups and both remote groups must
 * match for MPI_CONGRUENT or MPI_SIMILAR. */
static int expected_compare(const struct part *p, const struct part *q)
{
    const int l = list_compare(p->world[p->side], p->size[p->side], q->world[q->side],
                               q->size[q->side]);
    const int r = list_compare(p->world[1 - p->side], p->size[1 - p->side],
                               q->world[1 - q->side], q->size[1 - q->side]);
    if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
        return MPI_UNEQUAL;
    if (l == MPI_SIMILAR || r == MPI_SIMILAR)
        return MPI_SIMILAR;
    return MPI_CONGRUENT;
}

/* C. */
static void check_dup(MPI_Comm inter, const struct part *p)
{
    MPI_Comm d;
    CHECK_MPI(MPI_Comm_dup(inter, &d));
    check_shape(d, p);
    int cmp = -1;
    CHECK_MPI(MPI_Comm_compare(inter, d, &cmp));
    CHECKF(cmp == MPI_CONGRUENT, "%s: compare with the duplicate gave %d", p->name, cmp);
    CHECK_MPI(MPI_Comm_compare(inter, inter, &cmp));
    CHECKF(cmp == MPI_IDENT, "%s: compare with itself gave %d", p->name, cmp);
    CHECK_MPI(MPI_Comm_compare(inter, MPI_COMM_WORLD, &cmp));
    CHECKF(cmp == MPI_UNEQUAL, "%s: compare with the world gave %d", p->name, cmp);
    MPI_Group g1, g2;
    CHECK_MPI(MPI_Comm_remote_group(inter, &g1));
    CHECK_MPI(MPI_Comm_remote_group(d, &g2));
    CHECK_MPI(MPI_Group_compare(g1, g2, &cmp));
    CHECK(cmp == MPI_IDENT);
    CHECK_MPI(MPI_Group_free(&g1));
    CHECK_MPI(MPI_Group_free(&g2));

    /* The same source and tag on both; received on the duplicate first. */
    const int rsize = p->size[1 - p->side], me = world_rank();
    int out[2][MAXN];
    MPI_Request r[2 * MAXN];
    for (int j = 0; j < rsize; ++j) {
        out[0][j] = payload(me, p->world[1 - p->side][j], 20);
        out[1][j] = payload(me, p->world[1 - p->side][j], 21);
        CHECK_MPI(MPI_Isend(&out[0][j], 1, MPI_INT, j, 8, inter, &r[2 * j]));
        CHECK_MPI(MPI_Isend(&out[1][j], 1, MPI_INT, j, 8, d, &r[2 * j + 1]));
    }
    for (int i = 0; i < rsize; ++i) {
        int in = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, i, 8, d, &st));
        check_msg(p, in, i, 21, &st, 8);
        CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, i, 8, inter, &st));
        check_msg(p, in, i, 20, &st, 8);
    }
    CHECK_MPI(MPI_Waitall(2 * rsize, r, MPI_STATUSES_IGNORE));

    /* The duplicate carries traffic of its own. */
    blocking_round(d, p, 1, 0, 30);
    wildcard_round(d, p, 0);
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL);
}

/* D.  `high[g]` is what group g passes; `first` the group expected first,
 * or -1 where both pass the same. */
static void check_merge(MPI_Comm inter, const struct part *p, const int high[2])
{
    const int first = high[0] == high[1] ? -1 : (high[0] ? 1 : 0);
    const int total = p->size[0] + p->size[1];
    MPI_Comm m;
    CHECK_MPI(MPI_Intercomm_merge(inter, high[p->side], &m));
    int flag = -1, size = -1, rank = -1;
    CHECK_MPI(MPI_Comm_test_inter(m, &flag));
    CHECK(flag == 0);
    CHECK_MPI(MPI_Comm_size(m, &size));
    CHECK_MPI(MPI_Comm_rank(m, &rank));
    CHECKF(size == total, "%s: merged size %d, expected %d", p->name, size, total);

    int expect[2 * MAXN], got[2 * MAXN];
    if (first >= 0) {
        const int exp_rank = p->side == first ? p->lrank : p->size[first] + p->lrank;
        CHECKF(rank == exp_rank, "%s: merged rank %d, expected %d (high %d/%d)", p->name, rank,
               exp_rank, high[0], high[1]);
        for (int i = 0; i < p->size[first]; ++i)
            expect[i] = p->world[first][i];
        for (int i = 0; i < p->size[1 - first]; ++i)
            expect[p->size[first] + i] = p->world[1 - first][i];
    }
    MPI_Group g;
    CHECK_MPI(MPI_Comm_group(m, &g));
    group_to_world(g, got, total);
    CHECK_MPI(MPI_Group_free(&g));
    CHECKF(got[rank] == world_rank(), "%s: merged rank %d is world rank %d", p->name, rank,
           got[rank]);
    for (int i = 0; i < total; ++i) {
        if (first >= 0) {
            CHECKF(got[i] == expect[i], "%s: merged rank %d is world rank %d, expected %d",
                   p->name, i, got[i], expect[i]);
        } else {
            int member = 0;
            for (int g2 = 0; g2 < 2; ++g2)
                for (int j = 0; j < p->size[g2]; ++j)
                    member |= p->world[g2][j] == got[i];
            CHECKF(member, "%s: world rank %d in the merged group", p->name, got[i]);
            for (int j = 0; j < i; ++j)
                CHECK(got[j] != got[i]);
        }
    }

    /* Collectives on the merged communicator. */
    int w = world_rank(), sum = -1, expect_sum = 0;
    for (int i = 0; i < total; ++i)
        expect_sum += got[i];
    CHECK_MPI(MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECKF(sum == expect_sum, "%s: merged allreduce %d, expected %d", p->name, sum, expect_sum);
    const int root = total - 1;
    int b = rank == root ? w * 3 + 1 : -1;
    CHECK_MPI(MPI_Bcast(&b, 1, MPI_INT, root, m));
    CHECKF(b == got[root] * 3 + 1, "%s: merged bcast %d", p->name, b);
    CHECK_MPI(MPI_Comm_free(&m));
}

static int copies = 0, deletes = 0;

static int copy_plus(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    ++copies;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

/* E. */
static void check_attrs(MPI_Comm inter, const struct part *p)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Comm_set_name(inter, "an intercommunicator"));
    CHECK_MPI(MPI_Comm_get_name(inter, name, &len));
    CHECKF(strcmp(name, "an intercommunicator") == 0 && len == (int)strlen(name),
           "%s: name '%s' length %d", p->name, name, len);

    void *v = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(inter, MPI_TAG_UB, &v, &flag));
    CHECKF(flag && v != NULL && *(int *)v >= 32767, "%s: MPI_TAG_UB flag %d", p->name, flag);

    int key;
    CHECK_MPI(MPI_Comm_create_keyval(copy_plus, count_delete, &key, NULL));
    const intptr_t val = 7 + world_rank();
    CHECK_MPI(MPI_Comm_set_attr(inter, key, (void *)val));
    copies = deletes = 0;
    MPI_Comm d;
    CHECK_MPI(MPI_Comm_dup(inter, &d));
    CHECKF(copies == 1, "%s: the copy callback ran %d times", p->name, copies);
    CHECK_MPI(MPI_Comm_get_attr(d, key, &v, &flag));
    CHECKF(flag && (intptr_t)v == val + 1000, "%s: the duplicate's attribute: flag %d value %ld",
           p->name, flag, (long)(intptr_t)v);
    CHECK_MPI(MPI_Comm_get_attr(inter, key, &v, &flag));
    CHECK(flag && (intptr_t)v == val);
    CHECK_MPI(MPI_Comm_free(&d));
    CHECKF(deletes == 1, "%s: the delete callback ran %d times", p->name, deletes);
    CHECK_MPI(MPI_Comm_delete_attr(inter, key));
    CHECK(deletes == 2);
    CHECK_MPI(MPI_Comm_get_attr(inter, key, &v, &flag));
    CHECK(!flag);
    CHECK_MPI(MPI_Comm_set_attr(inter, key, (void *)val));
    CHECK_MPI(MPI_Comm_free_keyval(&key));
    /* The attribute left on `inter` is deleted when it is freed (counted by
     * the caller). */
}

/* Everything on the intercommunicator of `kind`; `full` = 0 leaves out
 * most of the point-to-point and the attributes (for the variants that
 * differ only in how the intercommunicator was built). */
static void check_all(enum kind kind, MPI_Comm peer, int peer_reversed, int tag, int full)
{
    struct part p;
    make_part(&p, kind);
    MPI_Comm inter = make_inter(&p, peer, peer_reversed, tag);
    if (inter == MPI_COMM_NULL)
        return;
    check_shape(inter, &p);
    const int low_first[2] = {0, 1}, high_first[2] = {1, 0}, same[2] = {1, 1};
    if (full) {
        check_p2p(inter, &p);
        check_dup(inter, &p);
        check_merge(inter, &p, high_first);
        if (kind != PARITY)
            check_merge(inter, &p, low_first);
        if (kind == HALVES)
            check_merge(inter, &p, same);
        check_attrs(inter, &p);
    } else {
        blocking_round(inter, &p, 0, 0, 50);
        wildcard_round(inter, &p, 1);
        check_merge(inter, &p, high_first);
    }
    deletes = 0;
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK(inter == MPI_COMM_NULL);
    CHECKF(deletes == full, "%s: freeing ran the delete callback %d times", p.name, deletes);
}

/* Several intercommunicators at once, compared with each other (C);
 * traffic on one does not reach another. */
static void check_compare(void)
{
    enum { NC = 4 };
    const enum kind kinds[NC] = {HALVES, REVERSED, PARITY, HALVES};
    struct part p[NC];
    MPI_Comm c[NC];
    for (int i = 0; i < NC; ++i) {
        make_part(&p[i], kinds[i]);
        c[i] = make_inter(&p[i], MPI_COMM_WORLD, 0, 11);
    }
    for (int i = 0; i < NC; ++i)
        for (int j = 0; j < NC; ++j) {
            int cmp = -1;
            CHECK_MPI(MPI_Comm_compare(c[i], c[j], &cmp));
            const int want = i == j ? MPI_IDENT : expected_compare(&p[i], &p[j]);
            CHECKF(cmp == want, "%s (%d) vs %s (%d): compare gave %d, expected %d", p[i].name,
                   i, p[j].name, j, cmp, want);
        }
    /* Interleaved traffic: the same tags on two of them at once. */
    blocking_round(c[3], &p[3], 0, 0, 40);
    blocking_round(c[0], &p[0], 1, 0, 41);
    wildcard_round(c[0], &p[0], 0);
    wildcard_round(c[2], &p[2], 1);
    for (int i = 0; i < NC; ++i)
        CHECK_MPI(MPI_Comm_free(&c[i]));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size(), rank = world_rank();
    CHECK(n <= MAXN);
    if (n < 2) {
        CHECK_MPI(MPI_Finalize());
        return 0;
    }

    check_all(HALVES, MPI_COMM_WORLD, 0, 0, 1);
    check_all(PARITY, MPI_COMM_WORLD, 0, 12345, 1);
    check_all(REVERSED, MPI_COMM_WORLD, 0, 7, 1);
    if (n >= 3)
        check_all(PARTIAL, MPI_COMM_WORLD, 0, 3, 0);

    /* Peer communicators other than the world. */
    MPI_Comm wdup, wrev;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &wdup));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - rank, &wrev));
    check_all(PARITY, wdup, 0, 0, 0);
    check_all(REVERSED, wrev, 1, 99, 0);
    CHECK_MPI(MPI_Comm_free(&wdup));
    CHECK_MPI(MPI_Comm_free(&wrev));

    check_compare();

    CHECK_MPI(MPI_Finalize());
    return 0;
}
