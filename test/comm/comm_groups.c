/*
 * Group arithmetic against hand-computed answers: size, rank, incl, excl,
 * range_incl, range_excl (negative strides), union, intersection,
 * difference, translate_ranks (MPI_PROC_NULL, non-members), compare, free,
 * and MPI_GROUP_EMPTY.  Groups are compared through the world ranks of their
 * members; at 8 ranks the set operations are also checked against literal
 * lists.
 */
#include "check.h"

static MPI_Group world_group;

/* The world ranks of g's members, in group order; returns the size. */
static int members(MPI_Group g, int *out)
{
    int n = -1;
    CHECK_MPI(MPI_Group_size(g, &n));
    for (int i = 0; i < n; ++i)
        CHECK_MPI(MPI_Group_translate_ranks(g, 1, &i, world_group, &out[i]));
    return n;
}

static void expect_members(MPI_Group g, int n, const int *want, const char *what)
{
    int got[64];
    int m = members(g, got);
    CHECKF(m == n, "%s: %d members, expected %d", what, m, n);
    for (int i = 0; i < n; ++i)
        CHECKF(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i, got[i], want[i]);
    int me = -2, mine = MPI_UNDEFINED;
    CHECK_MPI(MPI_Group_rank(g, &me));
    for (int i = 0; i < n; ++i)
        if (want[i] == world_rank())
            mine = i;
    CHECKF(me == mine, "%s: MPI_Group_rank gave %d, expected %d", what, me, mine);
}

static int contains(const int *a, int n, int x)
{
    for (int i = 0; i < n; ++i)
        if (a[i] == x)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size();
    CHECK(n <= 64);
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int all[64], want[64], ranks[64];
    for (int i = 0; i < n; ++i)
        all[i] = i;
    expect_members(world_group, n, all, "world group");

    /* incl: the last and the first rank */
    MPI_Group g1, g2, g3;
    ranks[0] = n - 1;
    ranks[1] = 0;
    if (n >= 2) {
        CHECK_MPI(MPI_Group_incl(world_group, 2, ranks, &g1));
        expect_members(g1, 2, ranks, "incl {n-1, 0}");
        CHECK_MPI(MPI_Group_free(&g1));
        CHECK(g1 == MPI_GROUP_NULL);
    }

    /* excl: rank 0 */
    int zero = 0;
    CHECK_MPI(MPI_Group_excl(world_group, 1, &zero, &g1));
    expect_members(g1, n - 1, all + 1, "excl {0}");
    CHECK_MPI(MPI_Group_free(&g1));

    /* range_incl: evens (0, n-1, 2), then every third downwards (n-1, 0, -3) */
    int evens[64], ne = 0;
    for (int i = 0; i < n; i += 2)
        evens[ne++] = i;
    int range[2][3] = {{0, n - 1, 2}, {0, 0, 1}};
    CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &g1));
    expect_members(g1, ne, evens, "range_incl (0, n-1, 2)");
    int nd = 0;
    for (int i = n - 1; i >= 0; i -= 3)
        want[nd++] = i;
    range[0][0] = n - 1;
    range[0][1] = 0;
    range[0][2] = -3;
    CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &g2));
    expect_members(g2, nd, want, "range_incl (n-1, 0, -3)");
    CHECK_MPI(MPI_Group_free(&g2));

    /* range_excl: the odds, leaving the evens */
    if (n >= 2) {
        range[0][0] = 1;
        range[0][1] = n - 1;
        range[0][2] = 2;
        CHECK_MPI(MPI_Group_range_excl(world_group, 1, range, &g2));
        expect_members(g2, ne, evens, "range_excl (1, n-1, 2)");
        int cmp = -1;
        CHECK_MPI(MPI_Group_compare(g1, g2, &cmp));
        CHECK(cmp == MPI_IDENT);
        CHECK_MPI(MPI_Group_free(&g2));
    }

    /* MPI-3.1 6.3.2: last need not be a rank, only the computed ranks:
     * (0, n, n - 1) is ranks 0 and n - 1 (MPICH 4.0 agrees). */
    if (n >= 3) {
        range[0][0] = 0;
        range[0][1] = n;
        range[0][2] = n - 1;
        int ends[2] = {0, n - 1};
        CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &g2));
        expect_members(g2, 2, ends, "range_incl (0, n, n-1)");
        CHECK_MPI(MPI_Group_free(&g2));
        CHECK_MPI(MPI_Group_range_excl(world_group, 1, range, &g2));
        expect_members(g2, n - 2, all + 1, "range_excl (0, n, n-1)");
        CHECK_MPI(MPI_Group_free(&g2));
    }
#ifdef SHMPI
    /* The same below rank 0, with a negative stride: (e, -1, -2) from the
     * highest even rank e is e, e - 2, ..., 0, and -1 is not computed
     * (MPICH 4.0 refuses it with MPI_ERR_ARG). */
    range[0][0] = (n - 1) & ~1;
    range[0][1] = -1;
    range[0][2] = -2;
    nd = 0;
    for (int i = (n - 1) & ~1; i >= 0; i -= 2)
        want[nd++] = i;
    CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &g2));
    expect_members(g2, nd, want, "range_incl (e, -1, -2)");
    CHECK_MPI(MPI_Group_free(&g2));
#endif

    /* B = the upper half, reversed */
    int upper[64], nu = 0;
    for (int i = n - 1; i >= n / 2; --i)
        upper[nu++] = i;
    CHECK_MPI(MPI_Group_incl(world_group, nu, upper, &g2));

    /* union: evens, then B's members not among them */
    int m = 0;
    for (int i = 0; i < ne; ++i)
        want[m++] = evens[i];
    for (int i = 0; i < nu; ++i)
        if (!contains(evens, ne, upper[i]))
            want[m++] = upper[i];
    CHECK_MPI(MPI_Group_union(g1, g2, &g3));
    expect_members(g3, m, want, "union(evens, upper reversed)");
    if (n == 8) {
        static const int lit[] = {0, 2, 4, 6, 7, 5};
        expect_members(g3, 6, lit, "union at 8 ranks");
    }
    CHECK_MPI(MPI_Group_free(&g3));

    /* intersection: evens order */
    m = 0;
    for (int i = 0; i < ne; ++i)
        if (contains(upper, nu, evens[i]))
            want[m++] = evens[i];
    CHECK_MPI(MPI_Group_intersection(g1, g2, &g3));
    expect_members(g3, m, want, "intersection(evens, upper reversed)");
    if (n == 8) {
        static const int lit[] = {4, 6};
        expect_members(g3, 2, lit, "intersection at 8 ranks");
    }
    CHECK_MPI(MPI_Group_free(&g3));
    /* ... and the other way round: B's order */
    m = 0;
    for (int i = 0; i < nu; ++i)
        if (contains(evens, ne, upper[i]))
            want[m++] = upper[i];
    CHECK_MPI(MPI_Group_intersection(g2, g1, &g3));
    expect_members(g3, m, want, "intersection(upper reversed, evens)");
    CHECK_MPI(MPI_Group_free(&g3));

    /* difference */
    m = 0;
    for (int i = 0; i < ne; ++i)
        if (!contains(upper, nu, evens[i]))
            want[m++] = evens[i];
    CHECK_MPI(MPI_Group_difference(g1, g2, &g3));
    expect_members(g3, m, want, "difference(evens, upper reversed)");
    if (n == 8) {
        static const int lit[] = {0, 2};
        expect_members(g3, 2, lit, "difference at 8 ranks");
    }
    CHECK_MPI(MPI_Group_free(&g3));
    m = 0;
    for (int i = 0; i < nu; ++i)
        if (!contains(evens, ne, upper[i]))
            want[m++] = upper[i];
    CHECK_MPI(MPI_Group_difference(g2, g1, &g3));
    expect_members(g3, m, want, "difference(upper reversed, evens)");
    if (n == 8) {
        static const int lit[] = {7, 5};
        expect_members(g3, 2, lit, "difference (other way) at 8 ranks");
    }
    CHECK_MPI(MPI_Group_free(&g3));

    /* translate_ranks from B to the evens: non-members are MPI_UNDEFINED,
     * MPI_PROC_NULL stays */
    {
        int in[65], out[65];
        for (int i = 0; i < nu; ++i)
            in[i] = i;
        in[nu] = MPI_PROC_NULL;
        CHECK_MPI(MPI_Group_translate_ranks(g2, nu + 1, in, g1, out));
        for (int i = 0; i < nu; ++i) {
            const int w = upper[i];
            const int expect = w % 2 == 0 ? w / 2 : MPI_UNDEFINED;
            CHECKF(out[i] == expect, "translate: B rank %d (world %d) -> %d, expected %d", i, w, out[i], expect);
        }
        CHECK(out[nu] == MPI_PROC_NULL);
    }

    /* compare */
    {
        int cmp = -1;
        CHECK_MPI(MPI_Group_compare(world_group, world_group, &cmp));
        CHECK(cmp == MPI_IDENT);
        for (int i = 0; i < n; ++i)
            ranks[i] = n - 1 - i;
        CHECK_MPI(MPI_Group_incl(world_group, n, ranks, &g3));
        CHECK_MPI(MPI_Group_compare(world_group, g3, &cmp));
        CHECKF(cmp == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(world, reversed) = %d", cmp);
        CHECK_MPI(MPI_Group_free(&g3));
        CHECK_MPI(MPI_Group_compare(world_group, g1, &cmp));
        CHECKF(cmp == (n == 1 ? MPI_IDENT : MPI_UNEQUAL), "compare(world, evens) = %d", cmp);
    }

    /* MPI_GROUP_EMPTY */
    {
        int sz = -1, rk = 0, cmp = -1;
        CHECK_MPI(MPI_Group_size(MPI_GROUP_EMPTY, &sz));
        CHECK(sz == 0);
        CHECK_MPI(MPI_Group_rank(MPI_GROUP_EMPTY, &rk));
        CHECK(rk == MPI_UNDEFINED);
        CHECK_MPI(MPI_Group_incl(world_group, 0, ranks, &g3));
        CHECK_MPI(MPI_Group_compare(g3, MPI_GROUP_EMPTY, &cmp));
        CHECK(cmp == MPI_IDENT);
        CHECK_MPI(MPI_Group_size(g3, &sz));
        CHECK(sz == 0);
        if (g3 != MPI_GROUP_EMPTY)
            CHECK_MPI(MPI_Group_free(&g3));
        CHECK_MPI(MPI_Group_difference(world_group, world_group, &g3));
        CHECK_MPI(MPI_Group_size(g3, &sz));
        CHECK(sz == 0);
        CHECK_MPI(MPI_Group_compare(g3, MPI_GROUP_EMPTY, &cmp));
        CHECK(cmp == MPI_IDENT);
        if (g3 != MPI_GROUP_EMPTY)
            CHECK_MPI(MPI_Group_free(&g3));
        CHECK_MPI(MPI_Group_union(MPI_GROUP_EMPTY, g1, &g3));
        CHECK_MPI(MPI_Group_compare(g3, g1, &cmp));
        CHECK(cmp == MPI_IDENT);
        CHECK_MPI(MPI_Group_free(&g3));
    }

    /* A group outlives its communicator. */
    {
        MPI_Comm dup;
        MPI_Group dg;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        CHECK_MPI(MPI_Comm_group(dup, &dg));
        CHECK_MPI(MPI_Comm_free(&dup));
        expect_members(dg, n, all, "group of a freed communicator");
        CHECK_MPI(MPI_Group_free(&dg));
    }

    CHECK_MPI(MPI_Group_free(&g1));
    CHECK_MPI(MPI_Group_free(&g2));
    CHECK_MPI(MPI_Group_free(&world_group));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
