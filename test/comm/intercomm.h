/*
 * intercomm.h: what the programs on collectives over intercommunicators
 * (intercomm_coll.c, blocking; intercomm_nbc.c, nonblocking) share.
 *
 *   struct ic   an intercommunicator and this rank's view of its two groups
 *               (lsize, rsize, rw), made by make_ic: "thirds" (group 0 =
 *               world ranks [0, n/3 + 1), group 1 the rest, both in world
 *               order) or "parity" (even and odd world ranks, each in
 *               descending world order).
 *   val         the value an element carries: it names its sender, so a
 *               misplaced block is caught; POISON fills what must stay
 *               untouched.
 *   concat      a non-commutative reduction (decimal concatenation) and what
 *               a reduction over a group gives, with it (concat_of) or with
 *               MPI_SUM (sum_of); contribution is what a rank reduces.
 *   ic_init, ic_finalize  the start and end of main: MPI_Init with the
 *               limits on the number of ranks, and concat.
 *   root_arg, is_root  the root argument of a rooted collective.
 *   want_blocks, want_blocksv  the expected contents of a buffer that
 *               receives one block from each remote rank.
 *   The counts and layouts the cases use: reverse_displs, vcount (Gatherv,
 *   Scatterv), agv_count (Allgatherv), a2av_count (Alltoallv, Alltoallw)
 *   and rs_counts (Reduce_scatter).
 *
 * Everything here uses the standard MPI-3.1 API only, like check.h, which
 * it includes.
 */
#ifndef SHMPI_TEST_COMM_INTERCOMM_H
#define SHMPI_TEST_COMM_INTERCOMM_H

#include "check.h"

#define MAXN 64
#define POISON (-999999)

/* ---- the intercommunicators ---- */

/* An intercommunicator and what this rank knows of its groups. */
struct ic {
    const char *name;
    MPI_Comm comm;
    int side, lrank, size[2];
    int world[2][MAXN]; /* world[g][i]: the world rank of rank i of group g */
};

static inline int lsize(const struct ic *c)
{
    return c->size[c->side];
}

static inline int rsize(const struct ic *c)
{
    return c->size[1 - c->side];
}

/* The world rank of remote rank j. */
static inline int rw(const struct ic *c, int j)
{
    return c->world[1 - c->side][j];
}

/* Makes the "parity" intercommunicator (parity != 0) or the "thirds" one;
 * `tag` is MPI_Intercomm_create's.  Collective over MPI_COMM_WORLD, which
 * needs at least 2 ranks. */
static inline void make_ic(struct ic *c, int parity, int tag)
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
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, c->world[1 - c->side][0], tag,
                                   &c->comm));
    CHECK_MPI(MPI_Comm_free(&local));
}

/* ---- values ---- */

/* A value that names its sender (world rank a), a second party or sequence
 * number b, and an element index i. */
static inline int val(int a, int b, int i)
{
    return a * 10000 + b * 100 + i + 1;
}

/* ---- a non-commutative operation ----
 *
 * Decimal concatenation of numbers whose digits are 1..9: associative, not
 * commutative, so a reduction over ranks 0, 1, 2 with digits 3, 5, 9 must
 * give 359, and any other order shows.  A concatenation of up to 18 digits
 * fits a long long: groups of up to 18 ranks.  ic_init creates `concat`
 * from concat_op and ic_finalize frees it. */
static inline long long digits_of(long long v)
{
    long long p = 1;
    while (p <= v)
        p *= 10;
    return p;
}

static inline void concat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    long long *a = (long long *)in, *b = (long long *)inout;
    for (int i = 0; i < *len; ++i)
        b[i] = a[i] * digits_of(b[i]) + b[i];
}

static MPI_Op concat;

/* MPI_Init, and the limits on the world's size: at most 24 ranks (groups of
 * up to 18, for concat), and two nonempty groups need 2.  Returns 0, after
 * MPI_Finalize, with fewer; else creates concat and returns 1, and the
 * program ends with ic_finalize. */
static inline int ic_init(int *argc, char ***argv)
{
    CHECK_MPI(MPI_Init(argc, argv));
    CHECKF(world_size() <= 24, "written for at most 24 ranks");
    if (world_size() < 2) {
        CHECK_MPI(MPI_Finalize());
        return 0;
    }
    CHECK_MPI(MPI_Op_create(concat_op, 0, &concat));
    return 1;
}

static inline void ic_finalize(void)
{
    CHECK_MPI(MPI_Op_free(&concat));
    CHECK_MPI(MPI_Finalize());
}

/* The digit world rank w contributes at element i. */
static inline long long digit(int w, int i)
{
    return (w + 3 * i) % 9 + 1;
}

/* The concatenation of the digits of group g at element i. */
static inline long long concat_of(const struct ic *c, int g, int i)
{
    long long acc = 0;
    for (int j = 0; j < c->size[g]; ++j)
        acc = acc * 10 + digit(c->world[g][j], i);
    return acc;
}

/* The sum of world rank w's contributions val(w, 0, i) over group g. */
static inline int sum_of(const struct ic *c, int g, int i)
{
    int acc = 0;
    for (int j = 0; j < c->size[g]; ++j)
        acc += val(c->world[g][j], 0, i);
    return acc;
}

/* The vector this rank contributes to a reduction, count elements: its
 * digits as long longs (ll, for concat), else its values val(me, 0, i) as
 * ints (for MPI_SUM).  The caller frees it. */
static inline void *contribution(int count, int ll)
{
    if (ll) {
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

/* ---- rooted collectives ----
 *
 * In the root's group the root passes MPI_ROOT and the others MPI_PROC_NULL;
 * the other group passes the root's rank in the root's group. */

/* The root argument of a rooted collective whose root is rank `root` of
 * group `rside`. */
static inline int root_arg(const struct ic *c, int rside, int root)
{
    if (c->side != rside)
        return root;
    return c->lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static inline int is_root(const struct ic *c, int rside, int root)
{
    return c->side == rside && c->lrank == root;
}

/* ---- what a receive buffer must hold ---- */

/* want[j * count + i] = val(rw(c, j), b, i) for i < count: a block of count
 * elements from each remote rank j, in remote rank order. */
static inline void want_blocks(const struct ic *c, int *want, int count, int b)
{
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < count; ++i)
            want[j * count + i] = val(rw(c, j), b, i);
}

/* want[displs[j] + i] = val(rw(c, j), b, i + off) for i < counts[j]: the
 * block from remote rank j at displs[j]. */
static inline void want_blocksv(const struct ic *c, int *want, const int *counts,
                                const int *displs, int b, int off)
{
    for (int j = 0; j < rsize(c); ++j)
        for (int i = 0; i < counts[j]; ++i)
            want[displs[j] + i] = val(rw(c, j), b, i + off);
}

/* ---- counts and layouts ---- */

/* Displacements for blocks of counts[0..m), laid out from the last block to
 * the first with a gap of one element before each; returns the extent. */
static inline int reverse_displs(const int *counts, int m, int *displs)
{
    int pos = 0;
    for (int j = m - 1; j >= 0; --j) {
        pos += 1;
        displs[j] = pos;
        pos += counts[j];
    }
    return pos + 1;
}

/* The count remote rank j sends in Gatherv/receives in Scatterv. */
static inline int vcount(int j, int seq)
{
    return (j + seq) % 3;
}

/* The count local rank r of group g sends in Allgatherv. */
static inline int agv_count(int g, int r, int seq)
{
    return (r + g + seq) % 3;
}

/* The count a rank with local rank a sends to remote rank b in Alltoallv
 * (Alltoallw: one more). */
static inline int a2av_count(int a, int b)
{
    return (a + 2 * b) % 3;
}

/* Reduce_scatter's recvcounts in this rank's group, one per local rank:
 * 0, 2, 4, ... with the rest of the total to the last rank (group 0) or the
 * same reversed (group 1).  The total, the count of the vectors, is the same
 * in both groups; returns it, and sets *first to where this rank's block
 * starts in the reduced vector. */
static inline int rs_counts(const struct ic *c, int *counts, int *first)
{
    const int big = c->size[0] > c->size[1] ? c->size[0] : c->size[1];
    const int total = (big - 1) * (big - 2) + 3; /* at least either group's 0 + 2 + 4 + ... */
    const int m = lsize(c);
    int sum = 0;
    for (int i = 0; i < m - 1; ++i) {
        counts[c->side == 0 ? i : m - 1 - i] = 2 * i;
        sum += 2 * i;
    }
    counts[c->side == 0 ? m - 1 : 0] = total - sum;
    *first = 0;
    for (int i = 0; i < c->lrank; ++i)
        *first += counts[i];
    return total;
}

#endif /* SHMPI_TEST_COMM_INTERCOMM_H */
