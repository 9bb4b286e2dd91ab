/*
 * Communicator construction and queries: MPI_Comm_dup, MPI_Comm_split (key
 * order, ties, MPI_UNDEFINED), MPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
 * MPI_Comm_create (one group, and disjoint groups), MPI_Comm_compare,
 * MPI_Comm_group, MPI_Comm_test_inter, names, and MPI_Comm_free.
 */
#include "check.h"

static void check_members(MPI_Comm comm, int n, const int *world_of_rank)
{
    int size = -1;
    CHECK_MPI(MPI_Comm_size(comm, &size));
    CHECKF(size == n, "size %d, expected %d", size, n);
    MPI_Group g, wg;
    CHECK_MPI(MPI_Comm_group(comm, &g));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int r = 0; r < n; ++r) {
        int w = -1;
        CHECK_MPI(MPI_Group_translate_ranks(g, 1, &r, wg, &w));
        CHECKF(w == world_of_rank[r], "rank %d is world rank %d, expected %d", r, w, world_of_rank[r]);
    }
    int me = -1, gme = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &me));
    CHECK_MPI(MPI_Group_rank(g, &gme));
    CHECKF(me == gme, "MPI_Comm_rank %d but MPI_Group_rank %d", me, gme);
    CHECK(world_of_rank[me] == world_rank());
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_free(&wg));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    const int size = world_size();
    int *expect = check_malloc(sizeof(int) * (size_t)size);
    int cmp = -1;

    /* Names of the predefined communicators. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECKF(strcmp(name, "MPI_COMM_WORLD") == 0 && len == (int)strlen(name), "world is named '%s'", name);
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECKF(strcmp(name, "MPI_COMM_SELF") == 0, "self is named '%s'", name);

    /* 1. Dup: same members, congruent, its own name. */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int r = 0; r < size; ++r)
        expect[r] = r;
    check_members(dup, size, expect);
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    CHECKF(cmp == MPI_CONGRUENT, "compare(world, dup) = %d", cmp);
    CHECK_MPI(MPI_Comm_compare(dup, dup, &cmp));
    CHECK(cmp == MPI_IDENT);
    CHECK_MPI(MPI_Comm_set_name(dup, "my dup"));
    CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
    CHECKF(strcmp(name, "my dup") == 0 && len == 6, "name '%s' length %d", name, len);
    int inter = -1;
    CHECK_MPI(MPI_Comm_test_inter(dup, &inter));
    CHECK(inter == 0);

    /* 2. Split by parity, reversed by key: rank order is descending world rank. */
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(dup, rank % 2, size - rank, &half));
    {
        int n = 0;
        for (int w = size - 1; w >= 0; --w)
            if (w % 2 == rank % 2)
                expect[n++] = w;
        check_members(half, n, expect);
        CHECK_MPI(MPI_Comm_compare(half, MPI_COMM_WORLD, &cmp));
        CHECKF(cmp == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(half, world) = %d", cmp);
    }

    /* 3. Equal keys: ties go by rank in the parent; MPI_UNDEFINED gets MPI_COMM_NULL. */
    MPI_Comm some;
    const int color = rank % 3 == 2 ? MPI_UNDEFINED : rank % 3;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, 7, &some));
    if (color == MPI_UNDEFINED) {
        CHECK(some == MPI_COMM_NULL);
    } else {
        int n = 0;
        for (int w = 0; w < size; ++w)
            if (w % 3 == color)
                expect[n++] = w;
        check_members(some, n, expect);
        CHECK_MPI(MPI_Comm_free(&some));
        CHECK(some == MPI_COMM_NULL);
    }

    /* 4. A split of a split: the same key twice gives a permutation. */
    MPI_Comm quarter;
    CHECK_MPI(MPI_Comm_split(half, 0, 0, &quarter));
    CHECK_MPI(MPI_Comm_compare(half, quarter, &cmp));
    CHECKF(cmp == MPI_CONGRUENT, "compare(half, split(half)) = %d", cmp);
    CHECK_MPI(MPI_Comm_free(&quarter));
    CHECK_MPI(MPI_Comm_split(half, 0, rank, &quarter));
    CHECK_MPI(MPI_Comm_compare(half, quarter, &cmp));
    {
        int hsize = 0;
        CHECK_MPI(MPI_Comm_size(half, &hsize));
        CHECKF(cmp == (hsize == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare(half, resorted half) = %d", cmp);
    }
    CHECK_MPI(MPI_Comm_free(&quarter));

    /* 5. Split_type shared: every rank of one machine. */
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Comm_compare(node, MPI_COMM_WORLD, &cmp));
    CHECKF(cmp == MPI_CONGRUENT, "compare(split_type shared, world) = %d", cmp);
    CHECK_MPI(MPI_Comm_free(&node));
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL);

    /* 6. Comm_create from a group: the world ranks 0, 2, 4, ... in reverse. */
    MPI_Group wg, evens;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int nevens = 0;
    int *ranks = check_malloc(sizeof(int) * (size_t)size);
    for (int w = ((size - 1) / 2) * 2; w >= 0; w -= 2)
        ranks[nevens++] = w;
    CHECK_MPI(MPI_Group_incl(wg, nevens, ranks, &evens));
    MPI_Comm ecomm;
    CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &ecomm));
    if (rank % 2 == 0) {
        check_members(ecomm, nevens, ranks);
        MPI_Group eg;
        CHECK_MPI(MPI_Comm_group(ecomm, &eg));
        CHECK_MPI(MPI_Group_compare(eg, evens, &cmp));
        CHECK(cmp == MPI_IDENT);
        CHECK_MPI(MPI_Group_free(&eg));
        CHECK_MPI(MPI_Comm_free(&ecomm));
    } else {
        CHECK(ecomm == MPI_COMM_NULL);
    }
    CHECK_MPI(MPI_Group_free(&evens));

    /* 7. Comm_create on a derived communicator, with the empty group. */
    MPI_Comm none;
    CHECK_MPI(MPI_Comm_create(dup, MPI_GROUP_EMPTY, &none));
    CHECK(none == MPI_COMM_NULL);

    /* 8. Comm_create with the whole group of a split communicator. */
    MPI_Group hg;
    MPI_Comm half2;
    CHECK_MPI(MPI_Comm_group(half, &hg));
    CHECK_MPI(MPI_Comm_create(half, hg, &half2));
    CHECK_MPI(MPI_Comm_compare(half, half2, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_free(&half2));
    CHECK_MPI(MPI_Group_free(&hg));

    /* 9. Many dups and frees: contexts do not run out or collide. */
    for (int i = 0; i < 200; ++i) {
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &c));
        int x = rank, sum = -1;
        CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size * (size - 1) / 2);
        CHECK_MPI(MPI_Comm_free(&c));
    }

    /* 10. Dup of MPI_COMM_SELF. */
    MPI_Comm self2;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &self2));
    CHECK_MPI(MPI_Comm_compare(self2, MPI_COMM_SELF, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_free(&self2));

    CHECK_MPI(MPI_Group_free(&wg));
    CHECK_MPI(MPI_Comm_free(&half));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
    free(ranks);
    free(expect);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
