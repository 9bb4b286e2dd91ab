/*
 * halo: a 2-D periodic halo exchange, with and without reorder.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's.
 *
 * What it does:
 *   1. MPI_Dims_create picks a 2-D grid for the job; MPI_Cart_create makes it
 *      periodic, once with reorder = false and once with reorder = true
 *      (--reorder 0, 1 or both).
 *   2. Each rank owns an n x n tile of doubles with a one-cell ghost frame.
 *      One iteration = one Jacobi sweep over the tile (so the data changes
 *      between iterations, as in a real code) + one halo exchange: the four
 *      edges go to the four neighbours (rows contiguous, columns as an
 *      MPI_Type_vector), with MPI_Irecv/MPI_Isend/MPI_Waitall (--mode p2p),
 *      the same completed by polling MPI_Testall, as a program that would
 *      compute meanwhile does (--mode test), or one MPI_Neighbor_alltoallw
 *      (--mode neighbor); a comma list picks several, default all three.
 *      With more ranks than CPUs, test is the mode that shows whether the
 *      library lets a polling rank give its CPU to the rank it waits for.
 *   3. The first exchange of each run is checked against what the neighbours
 *      own (untimed); then `--warmup` iterations, then `--iters` timed ones.
 *   4. World rank 0 reports, per run: the mean exchange time per iteration
 *      (the slowest rank's), the fastest rank's, and the sweep time.
 *
 * Output: a commented header (MPI library, grid, every rank's CPU from
 * sched_getcpu and its allowed CPUs, and with reorder which world rank took
 * each grid point), then a table, or with --csv the same header and CSV.
 * Place the ranks (mpirun --bind-to, --map-by) to see what reorder does:
 * with ranks dealt round-robin over NUMA nodes (shmpi: --map-by numa:spread)
 * rank order puts every neighbour on another node, and reorder gathers
 * neighbours on one.  --nodes spread:N (or compact:N) tells the program the
 * same layout (world rank r on node r % N), and the table then counts the
 * halo messages that stay on a node (on_node; -1 without --nodes): on a
 * synthetic topology (shmpi: SHMPI_TOPOLOGY), where nothing is bound and the
 * times mean nothing, that count is the effect to look at, e.g.
 *   SHMPI_TOPOLOGY='numa:8 core:2 pu:1' mpirun -n 16 --map-by numa:spread \
 *       ./halo --nodes spread:8
 * Exit status 0, 1 for a usage error, 2 when a check of the data failed.
 */
#define _GNU_SOURCE 1 /* sched_getaffinity, sched_getcpu */

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sched.h>
#endif

#include "word_list.h"

enum { PLACE_LEN = 128 };

struct options {
    int n;        /* tile side */
    int iters;    /* timed iterations */
    int warmup;   /* untimed iterations */
    int reorder;  /* 0, 1, or 2 = both */
    int modes;    /* bit m set: run mode m (0 = p2p, 1 = neighbor, 2 = test) */
    int csv;
    int nodes;    /* --nodes: the node model's node count; 0 = none */
    int spread;   /* --nodes spread:N (rank r on node r % N) or compact:N */
};

static void usage(FILE *to)
{
    fprintf(to, "usage: halo [--n SIDE] [--iters N] [--warmup N] [--reorder 0|1|both] "
                    "[--mode p2p,test,neighbor|both|all] [--nodes spread:N|compact:N] [--csv]\n");
}

/* "p2p,test", "both" (p2p and neighbor, as before test existed), "all":
 * the bits of the modes named; -1 for a word that names none. */
static int parse_modes(const char *v)
{
    static const char *const names[] = {"p2p", "neighbor", "test"};
    if (strcmp(v, "both") == 0)
        return 3;
    if (strcmp(v, "all") == 0)
        return 7;
    return bench_word_bits(v, names, 3);
}

static int parse(int argc, char **argv, struct options *o)
{
    o->n = 128;
    o->iters = 200;
    o->warmup = 20;
    o->reorder = 2;
    o->modes = 7;
    o->csv = 0;
    o->nodes = 0;
    o->spread = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            return 1;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = 1;
        } else if (v == NULL) {
            return -1;
        } else if (strcmp(a, "--n") == 0) {
            o->n = atoi(v), ++i;
        } else if (strcmp(a, "--iters") == 0) {
            o->iters = atoi(v), ++i;
        } else if (strcmp(a, "--warmup") == 0) {
            o->warmup = atoi(v), ++i;
        } else if (strcmp(a, "--reorder") == 0) {
            o->reorder = strcmp(v, "both") == 0 ? 2 : atoi(v), ++i;
        } else if (strcmp(a, "--nodes") == 0) {
            if (strncmp(v, "spread:", 7) == 0)
                o->spread = 1, o->nodes = atoi(v + 7);
            else if (strncmp(v, "compact:", 8) == 0)
                o->spread = 0, o->nodes = atoi(v + 8);
            else
                return -1;
            if (o->nodes < 1)
                return -1;
            ++i;
        } else if (strcmp(a, "--mode") == 0) {
            o->modes = parse_modes(v);
            ++i;
        } else {
            return -1;
        }
    }
    if (o->n < 1 || o->iters < 1 || o->warmup < 0 || o->reorder < 0 || o->reorder > 2 || o->modes <= 0)
        return -1;
    return 0;
}

/* "cpu 3, allowed 0-7" (Linux) or "unknown". */
static void describe_place(char *out, size_t len)
{
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    int first = -1, last = -1, n = 0;
    char allowed[96] = "";
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (!CPU_ISSET(c, &set))
                continue;
            if (first < 0)
                first = c;
            last = c;
            ++n;
        }
        if (n == last - first + 1)
            snprintf(allowed, sizeof allowed, "%d-%d", first, last);
        else
            snprintf(allowed, sizeof allowed, "%d cpus from %d to %d", n, first, last);
    }
    snprintf(out, len, "cpu %d, allowed %s", sched_getcpu(), allowed);
#else
    snprintf(out, len, "unknown");
#endif
}

/* A tile with a ghost frame: (n+2) x (n+2), row-major. */
#define AT(u, n, i, j) ((u)[(size_t)(i) * (size_t)((n) + 2) + (size_t)(j)])

struct grid {
    MPI_Comm comm;
    int rank, size;
    int dims[2], coords[2];
    int nb[4]; /* Cart_shift order: down 0, up 0, down 1, up 1 */
};

struct exchange {
    MPI_Datatype row, col;
    /* Neighbor_alltoallw description, in the neighbour order of nb[]. */
    int counts[4];
    MPI_Aint sdispls[4], rdispls[4];
    MPI_Datatype types[4];
};

static void setup_exchange(struct exchange *x, int n)
{
    MPI_Type_contiguous(n, MPI_DOUBLE, &x->row);
    MPI_Type_vector(n, 1, n + 2, MPI_DOUBLE, &x->col);
    MPI_Type_commit(&x->row);
    MPI_Type_commit(&x->col);
    const MPI_Aint d = (MPI_Aint)sizeof(double), w = n + 2;
    /* Dimension 0 moves rows: send my first/last interior row, receive into
     * the ghost rows; dimension 1 moves columns likewise. */
    x->types[0] = x->types[1] = x->row;
    x->types[2] = x->types[3] = x->col;
    x->sdispls[0] = (1 * w + 1) * d;       /* first row, to the neighbour above in dim 0 (down) */
    x->sdispls[1] = ((MPI_Aint)n * w + 1) * d; /* last row, to the neighbour below (up) */
    x->sdispls[2] = (1 * w + 1) * d;       /* first column */
    x->sdispls[3] = (1 * w + n) * d;       /* last column */
    x->rdispls[0] = (0 * w + 1) * d;       /* ghost row 0 <- from down */
    x->rdispls[1] = ((MPI_Aint)(n + 1) * w + 1) * d;
    x->rdispls[2] = (1 * w + 0) * d;
    x->rdispls[3] = (1 * w + n + 1) * d;
    for (int k = 0; k < 4; ++k)
        x->counts[k] = 1;
}

/* Posts the four receives and the four sends of one exchange. */
static void post_exchange(const struct grid *g, const struct exchange *x, double *u, MPI_Request req[8])
{
    for (int k = 0; k < 4; ++k)
        MPI_Irecv((char *)u + x->rdispls[k], 1, x->types[k], g->nb[k], k ^ 1, g->comm, &req[k]);
    for (int k = 0; k < 4; ++k)
        MPI_Isend((char *)u + x->sdispls[k], 1, x->types[k], g->nb[k], k, g->comm, &req[4 + k]);
}

static void exchange_p2p(const struct grid *g, const struct exchange *x, double *u)
{
    MPI_Request req[8];
    post_exchange(g, x, u, req);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}

static void exchange_test(const struct grid *g, const struct exchange *x, double *u)
{
    MPI_Request req[8];
    post_exchange(g, x, u, req);
    int done = 0;
    while (!done)
        MPI_Testall(8, req, &done, MPI_STATUSES_IGNORE);
}

static void exchange_neighbor(const struct grid *g, const struct exchange *x, double *u)
{
    MPI_Neighbor_alltoallw(u, x->counts, x->sdispls, x->types, u, x->counts, x->rdispls, x->types, g->comm);
}

/* One Jacobi sweep of the interior (new values in v), then swap. */
static void sweep(int n, double **u, double **v)
{
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j)
            AT(*v, n, i, j) = 0.25 * (AT(*u, n, i - 1, j) + AT(*u, n, i + 1, j) + AT(*u, n, i, j - 1) +
                                      AT(*u, n, i, j + 1));
    double *t = *u;
    *u = *v;
    *v = t;
}

/* Interior cell (i, j) of grid rank r before any sweep. */
static double initial(int r, int i, int j) { return r * 1.0e6 + i * 1.0e3 + j; }

/* After one exchange of the initial tiles, each ghost cell holds the
 * neighbour's edge. */
static int check_ghosts(const struct grid *g, int n, const double *u)
{
    int bad = 0;
    for (int t = 1; t <= n; ++t) {
        bad += AT(u, n, 0, t) != initial(g->nb[0], n, t);
        bad += AT(u, n, n + 1, t) != initial(g->nb[1], 1, t);
        bad += AT(u, n, t, 0) != initial(g->nb[2], t, n);
        bad += AT(u, n, t, n + 1) != initial(g->nb[3], t, 1);
    }
    return bad;
}

struct result {
    double exch_max, exch_min, sweep_max;
    int bad;
};

static struct result run(const struct grid *g, const struct options *o, int mode)
{
    const int n = o->n;
    const size_t cells = (size_t)(n + 2) * (size_t)(n + 2);
    double *u = calloc(cells, sizeof(double));
    double *v = calloc(cells, sizeof(double));
    if (u == NULL || v == NULL) {
        fprintf(stderr, "halo: out of memory for a tile of %d\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    struct exchange x;
    setup_exchange(&x, n);
    void (*exchange)(const struct grid *, const struct exchange *, double *) =
        mode == 0 ? exchange_p2p : mode == 1 ? exchange_neighbor : exchange_test;

    /* 3. Check one exchange of known data. */
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= n; ++j)
            AT(u, n, i, j) = initial(g->rank, i, j);
    exchange(g, &x, u);
    struct result r = {0, 0, 0, 0};
    int bad = check_ghosts(g, n, u);
    MPI_Allreduce(&bad, &r.bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    for (int it = 0; it < o->warmup; ++it) {
        sweep(n, &u, &v);
        exchange(g, &x, u);
    }
    MPI_Barrier(g->comm);
    double t_exch = 0, t_sweep = 0;
    for (int it = 0; it < o->iters; ++it) {
        const double t0 = MPI_Wtime();
        sweep(n, &u, &v);
        const double t1 = MPI_Wtime();
        exchange(g, &x, u);
        const double t2 = MPI_Wtime();
        t_sweep += t1 - t0;
        t_exch += t2 - t1;
    }
    t_exch /= o->iters;
    t_sweep /= o->iters;
    MPI_Reduce(&t_exch, &r.exch_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_exch, &r.exch_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_sweep, &r.sweep_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Type_free(&x.row);
    MPI_Type_free(&x.col);
    free(u);
    free(v);
    return r;
}

/* The node of world rank r under --nodes: dealt round-robin over the nodes
 * (spread) or in consecutive runs (compact). */
static int node_of(const struct options *o, int r, int wsize)
{
    if (o->spread)
        return r % o->nodes;
    const int per = (wsize + o->nodes - 1) / o->nodes;
    return r / per;
}

/* How many of the 4 * size halo messages stay on a node under --nodes. */
static int messages_on_node(const struct grid *g, const struct options *o)
{
    int wrank = 0, wsize = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int *world = malloc((size_t)g->size * sizeof(int));
    MPI_Allgather(&wrank, 1, MPI_INT, world, 1, MPI_INT, g->comm);
    int mine = 0, total = 0;
    for (int k = 0; k < 4; ++k)
        mine += node_of(o, world[g->nb[k]], wsize) == node_of(o, wrank, wsize);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, g->comm);
    free(world);
    return total;
}

/* World rank 0 prints which world rank took each grid point, and where it
 * runs. */
static void print_placement(const struct grid *g, int reorder, const char *prefix)
{
    struct {
        int grid_rank;
        char place[PLACE_LEN];
    } mine, *all = NULL;
    int wrank = 0, wsize = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mine.grid_rank = g->rank;
    describe_place(mine.place, sizeof mine.place);
    if (wrank == 0)
        all = malloc((size_t)wsize * sizeof mine);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("%s reorder=%d: grid point (row, col) <- world rank: where it runs\n", prefix, reorder);
        for (int k = 0; k < g->size; ++k)
            for (int w = 0; w < wsize; ++w)
                if (all[w].grid_rank == k)
                    printf("%s   (%d, %d) <- %d: %s\n", prefix, k / g->dims[1], k % g->dims[1], w, all[w].place);
    }
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank = 0, wsize = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    struct options o;
    const int parsed = parse(argc, argv, &o);
    if (parsed != 0) {
        /* --help: the usage on stdout, status 0; a bad option: on stderr, 1. */
        if (wrank == 0)
            usage(parsed > 0 ? stdout : stderr);
        MPI_Finalize();
        return parsed > 0 ? 0 : 1;
    }
    const char *prefix = "#";
    if (wrank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl != NULL)
            *nl = '\0';
        printf("%s halo: 2-D periodic halo exchange, %d ranks, tile %dx%d doubles, %d iterations (%d warm-up)\n",
               prefix, wsize, o.n, o.n, o.iters, o.warmup);
        printf("%s MPI: %s\n", prefix, lib);
    }

    int status = 0;
    struct row {
        int mode, reorder, dims[2], size, on_node;
        struct result r;
    } rows[6];
    int nrows = 0;
    for (int reorder = 0; reorder <= 1; ++reorder) {
        if (o.reorder != 2 && o.reorder != reorder)
            continue;
        struct grid g;
        g.dims[0] = g.dims[1] = 0;
        const int periods[2] = {1, 1};
        MPI_Dims_create(wsize, 2, g.dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, periods, reorder, &g.comm);
        MPI_Comm_rank(g.comm, &g.rank);
        MPI_Comm_size(g.comm, &g.size);
        MPI_Cart_coords(g.comm, g.rank, 2, g.coords);
        MPI_Cart_shift(g.comm, 0, 1, &g.nb[0], &g.nb[1]);
        MPI_Cart_shift(g.comm, 1, 1, &g.nb[2], &g.nb[3]);
        print_placement(&g, reorder, prefix);
        const int on_node = o.nodes > 0 ? messages_on_node(&g, &o) : -1;
        for (int mode = 0; mode <= 2; ++mode) {
            if ((o.modes & (1 << mode)) == 0)
                continue;
            const struct result r = run(&g, &o, mode);
            if (r.bad != 0)
                status = 2;
            rows[nrows++] = (struct row){mode, reorder, {g.dims[0], g.dims[1]}, g.size, on_node, r};
        }
        MPI_Comm_free(&g.comm);
    }
    /* The table (the results were reduced to world rank 0). */
    if (wrank == 0) {
        if (o.nodes > 0)
            printf("%s node model: world rank r on node %s (%d nodes); on_node = halo messages that stay on a "
                   "node, of %d\n",
                   prefix, o.spread ? "r % N" : "r / ceil(ranks / N)", o.nodes, 4 * wsize);
        if (o.csv)
            printf("mode,reorder,rows,cols,ranks,tile,exchange_us,fastest_us,sweep_us,on_node,check\n");
        else
            printf("%-9s %-8s %-7s %14s %14s %12s %8s %s\n", "mode", "reorder", "grid", "exchange_us", "fastest_us",
                   "sweep_us", "on_node", "check");
    }
    for (int k = 0; k < nrows; ++k) {
        struct result r = rows[k].r;
        const char *m = rows[k].mode == 0 ? "p2p" : rows[k].mode == 1 ? "neighbor" : "test";
        if (wrank == 0) {
            if (o.csv)
                printf("%s,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%d,%s\n", m, rows[k].reorder, rows[k].dims[0],
                       rows[k].dims[1], rows[k].size, o.n, r.exch_max * 1e6, r.exch_min * 1e6, r.sweep_max * 1e6,
                       rows[k].on_node, r.bad ? "FAILED" : "ok");
            else
                printf("%-9s %-8d %3dx%-3d %14.3f %14.3f %12.3f %8d %s\n", m, rows[k].reorder, rows[k].dims[0],
                       rows[k].dims[1], r.exch_max * 1e6, r.exch_min * 1e6, r.sweep_max * 1e6, rows[k].on_node,
                       r.bad ? "FAILED (ghost cells wrong)" : "ok");
        }
    }
    MPI_Finalize();
    return status;
}
