/*
 * comm_diff.c: groups, communicators and virtual topologies built from
 * random arguments, described by what MPI says of them, for
 * scripts/external-checks.sh's `diff` check.  The same source is built with
 * shmpi's, MPICH's and Open MPI's mpicc and run at the same rank count;
 * diff_compare.py reads the outputs.
 *
 *   mpirun -n N comm_diff ROUNDS PREFIX [START]
 *
 * Each rank adds to PREFIX.RANK, for each round from START (default 0) on,
 * a line "== R", then what it got from
 *   MPI_Comm_split (a color, MPI_UNDEFINED among them, and a key of its
 *     own), MPI_Comm_compare and an Allreduce over the new communicator;
 *   MPI_Group_incl, _union, _intersection, _difference, _excl,
 *     _range_incl, _range_excl (ranges that may overlap: an error),
 *     _translate_ranks (MPI_PROC_NULL among the ranks), _compare;
 *     MPI_Comm_create;
 *   MPI_Dims_create (some dimensions given), MPI_Cart_create,
 *     _coords, _shift (displacements -2 to 2), _rank (coordinates out of
 *     range, periodic or not), _sub, MPI_Topo_test;
 *   MPI_Dist_graph_create_adjacent (one random edge set: every rank takes
 *     its own edges from it), MPI_Dist_graph_neighbors(_count);
 *   MPI_Graph_create (a symmetric graph, self-loops and repeated edges
 *     allowed), MPI_Graph_neighbors(_count);
 *   MPI_Neighbor_allgather of the ranks on both graphs;
 *   MPI_Intercomm_create between two random sides, MPI_Comm_test_inter,
 *     _remote_size, _remote_group, Bcast, Reduce and Gather with
 *     MPI_ROOT and MPI_PROC_NULL, Allreduce, Allgather, Alltoall, Barrier
 *     and Sendrecv between the ranks of the same number on both sides,
 *     MPI_Intercomm_merge.
 * Every rank draws the same arguments (the split's color and key aside),
 * so every call is correct unless it is meant to fail.  Ranks are printed
 * as numbers, MPI_PROC_NULL as "null" and MPI_UNDEFINED as "undef", since
 * the constants differ between implementations.
 */
#include <stdlib.h>

#include "diff_common.h"

enum { MAX = 64 };

static FILE *out;

static const char *rank_text(int r, char buf[16])
{
    if (r == MPI_PROC_NULL) return "null";
    if (r == MPI_UNDEFINED) return "undef";
    snprintf(buf, 16, "%d", r);
    return buf;
}
static void put_rank(int r)
{
    char b[16];
    fprintf(out, " %s", rank_text(r, b));
}

static const char *compare_name(int r)
{
    return r == MPI_IDENT ? "ident" : r == MPI_CONGRUENT ? "congruent" : r == MPI_SIMILAR ? "similar"
                                                                                         : r == MPI_UNEQUAL ? "unequal" : "?";
}

/* The world ranks of a group's members, in the group's order. */
static void put_members(MPI_Group g, MPI_Group world)
{
    int n, in[MAX], tr[MAX];
    MPI_Group_size(g, &n);
    for (int i = 0; i < n; i++) in[i] = i;
    MPI_Group_translate_ranks(g, n, in, world, tr);
    for (int i = 0; i < n; i++) put_rank(tr[i]);
}

static void split_round(int me)
{
    int color = rnd(4) == 0 ? MPI_UNDEFINED : (int)rnd(3), key = (int)rnd(5) - 2;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    if (c == MPI_COMM_NULL) {
        fprintf(out, "split color undef key %d: null\n", key);
        return;
    }
    int r, n, cmp, mine = me * 10, sum;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp);
    mine += r;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
    fprintf(out, "split color %d key %d: rank %d of %d, %s, sum %d\n", color, key, r, n, compare_name(cmp), sum);
    MPI_Comm_free(&c);
}

/* n distinct ranks below np, drawn at random */
static int draw_ranks(int np, int *r)
{
    const int n = (int)rnd((unsigned)np + 1);
    for (int i = 0; i < n; i++) {
        r[i] = (int)rnd((unsigned)np);
        for (int j = 0; j < i; j++)
            if (r[j] == r[i]) {
                i--;
                break;
            }
    }
    return n;
}

static void group_round(int np, MPI_Group world)
{
    int r1[MAX], r2[MAX];
    const int n1 = draw_ranks(np, r1), n2 = draw_ranks(np, r2);
    MPI_Group g[6];
    const char *name[6] = {"incl", "incl2", "union", "intersection", "difference", "excl"};
    MPI_Group_incl(world, n1, r1, &g[0]);
    MPI_Group_incl(world, n2, r2, &g[1]);
    MPI_Group_union(g[0], g[1], &g[2]);
    MPI_Group_intersection(g[0], g[1], &g[3]);
    MPI_Group_difference(g[0], g[1], &g[4]);
    MPI_Group_excl(world, n2, r2, &g[5]);
    for (int k = 0; k < 6; k++) {
        int n, r, c1, c2;
        MPI_Group_size(g[k], &n);
        MPI_Group_rank(g[k], &r);
        MPI_Group_compare(g[k], g[0], &c1);
        MPI_Group_compare(g[k], world, &c2);
        fprintf(out, "%s: size %d rank", name[k], n);
        put_rank(r);
        fprintf(out, ", %s %s, members", compare_name(c1), compare_name(c2));
        put_members(g[k], world);
        fprintf(out, "\n");
    }
    int usize, gsize;
    MPI_Group_size(g[2], &usize);
    MPI_Group_size(g[1], &gsize);
    if (usize > 0 && gsize > 0) {
        /* (Into an empty group, MPICH and Open MPI turn MPI_PROC_NULL into
         * MPI_UNDEFINED, where MPI-3.1 6.3.1 keeps it: not asked here.) */
        int in[3] = {0, MPI_PROC_NULL, usize - 1}, tr[3];
        MPI_Group_translate_ranks(g[2], 3, in, g[1], tr);
        fprintf(out, "translate:");
        for (int i = 0; i < 3; i++) put_rank(tr[i]);
        fprintf(out, "\n");
    }
    int ranges[3][3], nr = 1 + (int)rnd(3);
    for (int i = 0; i < nr; i++) {
        int a = (int)rnd((unsigned)np), b = (int)rnd((unsigned)np), stride = 1 + (int)rnd(3);
        ranges[i][0] = a;
        ranges[i][1] = b;
        ranges[i][2] = a > b ? -stride : stride;
    }
    for (int excl = 0; excl < 2; excl++) {
        MPI_Group gr;
        int rc = excl ? MPI_Group_range_excl(world, nr, ranges, &gr) : MPI_Group_range_incl(world, nr, ranges, &gr);
        fprintf(out, "range_%s: %s", excl ? "excl" : "incl", rc == MPI_SUCCESS ? "ok" : "error");
        if (rc == MPI_SUCCESS) {
            put_members(gr, world);
            MPI_Group_free(&gr);
        }
        fprintf(out, "\n");
    }
    MPI_Comm c;
    MPI_Comm_create(MPI_COMM_WORLD, g[0], &c);
    if (c == MPI_COMM_NULL)
        fprintf(out, "create: null\n");
    else {
        int r, n;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        fprintf(out, "create: rank %d of %d\n", r, n);
        MPI_Comm_free(&c);
    }
    for (int k = 0; k < 6; k++) MPI_Group_free(&g[k]);
}

static void cart_round(int np)
{
    int nd = 1 + (int)rnd(3), dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords_in[3] = {0, 0, 0}, remain[3] = {0, 0, 0};
    for (int i = 0; i < nd; i++) {
        periods[i] = (int)rnd(2);
        if (rnd(3) == 0) dims[i] = 1 + (int)rnd(2);
    }
    const int nodes = 1 + (int)rnd((unsigned)np);
    for (int i = 0; i < nd; i++) coords_in[i] = (int)rnd(13) - 6;
    for (int i = 0; i < nd; i++) remain[i] = (int)rnd(2);
    int rc = MPI_Dims_create(nodes, nd, dims);
    fprintf(out, "dims_create(%d, %d): %s,", nodes, nd, error_class_name(rc));
    for (int i = 0; i < nd; i++) fprintf(out, " %d", dims[i]);
    fprintf(out, "\n");
    if (rc != MPI_SUCCESS) return;
    MPI_Comm cart;
    rc = MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart);
    fprintf(out, "cart_create: %s%s\n", error_class_name(rc), rc == MPI_SUCCESS && cart == MPI_COMM_NULL ? ", null" : "");
    if (rc != MPI_SUCCESS || cart == MPI_COMM_NULL) return;
    int r, coords[3], status;
    MPI_Comm_rank(cart, &r);
    MPI_Cart_coords(cart, r, nd, coords);
    MPI_Topo_test(cart, &status);
    fprintf(out, "cart: rank %d, %s, coords", r, status == MPI_CART ? "cart" : "?");
    for (int i = 0; i < nd; i++) fprintf(out, " %d", coords[i]);
    fprintf(out, "\n");
    for (int d = 0; d < nd; d++)
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst;
            MPI_Cart_shift(cart, d, disp, &src, &dst);
            fprintf(out, "shift %d by %d:", d, disp);
            put_rank(src);
            put_rank(dst);
            fprintf(out, "\n");
        }
    int cr = -1;
    rc = MPI_Cart_rank(cart, coords_in, &cr);
    fprintf(out, "cart_rank(%d %d %d): %s", coords_in[0], coords_in[1], coords_in[2], rc == MPI_SUCCESS ? "ok" : "error");
    if (rc == MPI_SUCCESS) put_rank(cr);
    fprintf(out, "\n");
    int kept = 0;
    for (int i = 0; i < nd; i++) kept += remain[i];
    if (kept > 0) { /* none kept: MPICH and shmpi read MPI-3.1 7.5.7 apart (mpich-expected.txt, cartsuball) */
        MPI_Comm sub;
        MPI_Cart_sub(cart, remain, &sub);
        int sr, sn, sd;
        MPI_Comm_rank(sub, &sr);
        MPI_Comm_size(sub, &sn);
        MPI_Cartdim_get(sub, &sd);
        fprintf(out, "cart_sub: rank %d of %d, %d dimensions\n", sr, sn, sd);
        MPI_Comm_free(&sub);
    }
    MPI_Comm_free(&cart);
}

static void neighbor_ranks(MPI_Comm c, int me, int n)
{
    int got[MAX];
    for (int i = 0; i < MAX; i++) got[i] = -7;
    MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, c);
    fprintf(out, ", neighbor_allgather");
    for (int i = 0; i < n; i++) put_rank(got[i]);
}

static void graph_round(int me, int np)
{
    /* one directed edge set; each rank takes its in- and out-edges */
    int edges = (int)rnd(2u * (unsigned)np + 1), from[MAX], to[MAX], srcs[MAX], dsts[MAX], nin = 0, nout = 0;
    for (int i = 0; i < edges; i++) {
        from[i] = (int)rnd((unsigned)np);
        to[i] = (int)rnd((unsigned)np);
    }
    for (int i = 0; i < edges; i++) {
        if (to[i] == me) srcs[nin++] = from[i];
        if (from[i] == me) dsts[nout++] = to[i];
    }
    MPI_Comm dg;
    int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, srcs, MPI_UNWEIGHTED, nout, dsts, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &dg);
    fprintf(out, "dist_graph: %s", error_class_name(rc));
    if (rc == MPI_SUCCESS) {
        int i1, o1, weighted, s2[MAX], d2[MAX];
        MPI_Dist_graph_neighbors_count(dg, &i1, &o1, &weighted);
        MPI_Dist_graph_neighbors(dg, i1, s2, MPI_UNWEIGHTED, o1, d2, MPI_UNWEIGHTED);
        fprintf(out, ", in %d out %d weighted %d, sources", i1, o1, weighted);
        for (int i = 0; i < i1; i++) put_rank(s2[i]);
        fprintf(out, ", destinations");
        for (int i = 0; i < o1; i++) put_rank(d2[i]);
        neighbor_ranks(dg, me, i1);
        MPI_Comm_free(&dg);
    }
    fprintf(out, "\n");

    /* a symmetric graph (neighborhood collectives need one, MPI-3.1 7.6) */
    int adj[MAX][16], deg[MAX] = {0}, index[MAX], flat[MAX * 16], ne = 0, pairs = (int)rnd((unsigned)np + 2);
    for (int k = 0; k < pairs; k++) {
        int a = (int)rnd((unsigned)np), b = (int)rnd((unsigned)np);
        if (deg[a] < 14 && deg[b] < 14) {
            adj[a][deg[a]++] = b;
            adj[b][deg[b]++] = a; /* a self-loop appears twice */
        }
    }
    for (int i = 0; i < np; i++) {
        for (int k = 0; k < deg[i]; k++) flat[ne++] = adj[i][k];
        index[i] = ne;
    }
    MPI_Comm gc;
    rc = MPI_Graph_create(MPI_COMM_WORLD, np, index, flat, 0, &gc);
    fprintf(out, "graph: %s", error_class_name(rc));
    if (rc == MPI_SUCCESS && gc != MPI_COMM_NULL) {
        int n, nb[MAX];
        MPI_Graph_neighbors_count(gc, me, &n);
        MPI_Graph_neighbors(gc, me, MAX, nb);
        fprintf(out, ", %d neighbors", n);
        for (int i = 0; i < n; i++) put_rank(nb[i]);
        neighbor_ranks(gc, me, n);
        MPI_Comm_free(&gc);
    }
    fprintf(out, "\n");
}

/* Two sides drawn from MPI_COMM_WORLD (each rank's side and key alike on
 * every rank), an intercommunicator between them, and what its calls give:
 * sizes, the remote group, the collectives with MPI_ROOT and
 * MPI_PROC_NULL, a Sendrecv across, and MPI_Intercomm_merge. */
static void intercomm_round(int me, int np, MPI_Group world)
{
    if (np < 2) {
        fprintf(out, "intercomm: one rank\n");
        return;
    }
    int side[MAX], key[MAX], n[2] = {0, 0};
    for (int r = 0; r < np; r++) {
        side[r] = (int)rnd(2);
        key[r] = (int)rnd(3);
        n[side[r]]++;
    }
    if (n[0] == 0 || n[1] == 0) { /* both sides have a rank */
        const int r = (int)rnd((unsigned)np);
        n[side[r]]--;
        side[r] = 1 - side[r];
        n[side[r]]++;
    }
    /* each side's leader: its rank 0, the lowest key (then world rank) */
    int leader[2] = {-1, -1};
    for (int r = 0; r < np; r++) {
        const int l = leader[side[r]];
        if (l < 0 || key[r] < key[l]) leader[side[r]] = r;
    }
    const int tag = (int)rnd(100), root_side = (int)rnd(2), root = (int)rnd((unsigned)n[root_side]),
              high = (int)rnd(2);
    const int mine = side[me];
    MPI_Comm local, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, mine, key[me], &local);
    int rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader[1 - mine], tag, &inter);
    fprintf(out, "intercomm side %d leaders %d %d tag %d: %s", mine, leader[0], leader[1], tag, error_class_name(rc));
    if (rc != MPI_SUCCESS) {
        fprintf(out, "\n");
        MPI_Comm_free(&local);
        return;
    }
    int flag, size, rsize, rank;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &rank);
    fprintf(out, ", inter %d rank %d of %d, remote %d:", flag, rank, size, rsize);
    MPI_Group remote;
    MPI_Comm_remote_group(inter, &remote);
    put_members(remote, world);
    MPI_Group_free(&remote);
    fprintf(out, "\n");

    /* Bcast and Reduce from `root` of the root side, Gather to it */
    int v[3] = {-1, -1, -1}, red = -1, gath[MAX];
    const int in_root_side = mine == root_side, bcast_root = in_root_side ? (rank == root ? MPI_ROOT : MPI_PROC_NULL)
                                                                          : root;
    if (bcast_root == MPI_ROOT) v[0] = me, v[1] = tag, v[2] = rank;
    MPI_Bcast(v, 3, MPI_INT, bcast_root, inter);
    const int contribution = me * 7 + 1;
    MPI_Reduce(&contribution, &red, 1, MPI_INT, MPI_SUM, bcast_root, inter);
    for (int i = 0; i < MAX; i++) gath[i] = -1;
    MPI_Gather(&contribution, 1, MPI_INT, gath, 1, MPI_INT, bcast_root, inter);
    fprintf(out, "root %d of side %d: bcast %d %d %d reduce %d gather", root, root_side, v[0], v[1], v[2], red);
    for (int i = 0; i < (bcast_root == MPI_ROOT ? rsize : 0); i++) fprintf(out, " %d", gath[i]);
    fprintf(out, "\n");

    /* the all-to-all family: each side gets the other's */
    int sum = -1, all[MAX], to[MAX], from[MAX];
    MPI_Allreduce(&contribution, &sum, 1, MPI_INT, MPI_SUM, inter);
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, inter);
    for (int j = 0; j < rsize; j++) to[j] = me * 100 + j;
    MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, inter);
    fprintf(out, "allreduce %d allgather", sum);
    for (int j = 0; j < rsize; j++) fprintf(out, " %d", all[j]);
    fprintf(out, " alltoall");
    for (int j = 0; j < rsize; j++) fprintf(out, " %d", from[j]);
    MPI_Barrier(inter);

    /* across, with the remote rank of my rank where there is one */
    int got = -1, from_rank = -1;
    if (rank < rsize) {
        MPI_Status st;
        MPI_Sendrecv(&me, 1, MPI_INT, rank, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st);
        from_rank = st.MPI_SOURCE;
    }
    fprintf(out, " sendrecv %d from %d\n", got, from_rank);

    /* merged: the side with high = 1 after the other */
    rc = MPI_Intercomm_merge(inter, mine == high, &merged);
    int mrank = -1, msize = -1, msum = -1, weighted = (me + 1) * 1000;
    if (rc == MPI_SUCCESS) {
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        weighted += mrank;
        MPI_Allreduce(&weighted, &msum, 1, MPI_INT, MPI_SUM, merged);
        MPI_Comm_free(&merged);
    }
    fprintf(out, "merge high %d: %s rank %d of %d sum %d\n", mine == high, error_class_name(rc), mrank, msize, msum);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || np > MAX / 2) {
        if (me == 0) fprintf(stderr, "usage: mpirun -n N comm_diff ROUNDS PREFIX [START] (N up to %d)\n", MAX / 2);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    out = open_rank_file(argv[2], me);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int rounds = atoi(argv[1]);
    for (int round = argc > 3 ? atoi(argv[3]) : 0; round < rounds; round++) {
        fprintf(out, "== %d\n", round);
        /* the split's color and key are the rank's own */
        state = 12345 + (uint64_t)round * 7919 + 1000003ULL * (uint64_t)me;
        split_round(me);
        /* everything else is drawn alike on every rank */
        state = 999 + (uint64_t)round * 31;
        group_round(np, world);
        cart_round(np);
        graph_round(me, np);
        intercomm_round(me, np, world);
    }
    MPI_Group_free(&world);
    fclose(out);
    MPI_Finalize();
    return 0;
}
