/*
 * dtype_coll: MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgather and
 * MPI_Alltoall of derived datatypes, the same strided type on every rank and
 * on both sides:
 *
 *   vector/B   MPI_Type_vector of blocks of B bytes (doubles), stride 2B,
 *              --bytes of data per rank (resized to an extent of 2 * bytes,
 *              so the blocks of the ranks sit side by side in a gather's
 *              receive buffer and a scatter's send buffer; an all-to-all
 *              sends one such element to every rank)
 *
 * Standard MPI API only: bench/dtype_compare.sh --program dtype_coll builds
 * this file with shmpi's, MPICH's and Open MPI's mpicc and puts the numbers
 * side by side.
 *
 * For each collective and block size:
 *   1. Check (untimed): the root's data arrive where the type map says, on
 *      every rank that receives.
 *   2. Warm-up calls, then --reps repetitions of --iters calls.  Each call
 *      is timed alone between a barrier and its return on each rank; a
 *      repetition's time is the largest per-rank sum over its calls, divided
 *      by --iters (the call's latency as the slowest rank sees it).  The
 *      median repetition is reported, with the data bytes per rank per
 *      second it implies.
 * Before every call the ranks that send stamp the call's number into their
 * data, and the calls alternate between two sets of buffers, so no call
 * finds the data it moves in cache from the call before (STYLE.md practice
 * 15).  Each rank pins itself to one CPU (rank r to the r-th CPU it may run
 * on, modulo their number) and the header says where.
 *
 * Output: '#' header lines, then "layout bytes usec GB/s" rows, the layout
 * named collective/vector/B.
 */
#define _GNU_SOURCE 1

#include <mpi.h>

#include "pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NBUF = 2 };

static void die(const char *what)
{
    fprintf(stderr, "dtype_coll: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

enum op { BCAST, GATHER, SCATTER, ALLGATHER, ALLTOALL };
static const char *const op_names[] = {"bcast", "gather", "scatter", "allgather", "alltoall"};

/* One benchmark case: the buffers and the type. */
struct bench {
    enum op op;
    long doubles;  /* data doubles per rank */
    int block;     /* doubles per block */
    int rank, size, root;
    MPI_Datatype type;
    double *one[NBUF]; /* a rank's own typed buffer: 2 * doubles */
    double *all[NBUF]; /* the root's buffer of every rank's: size * 2 * doubles */
    double *out[NBUF]; /* what an all-to-all receives: size * 2 * doubles */
};

/* Index of data double i in a typed buffer. */
static long at(const struct bench *b, long i) { return (i / b->block) * 2 * b->block + i % b->block; }

/* The sending side's data for call `call`: rank r's double i. */
static double value(long call, int r, long i) { return (double)(call * 7919 + r * 104729 + i); }

/* Stamps call `call` into the buffers the sending ranks send from. */
static void stamp(struct bench *b, long call)
{
    const int k = (int)(call % NBUF);
    if (b->op == BCAST) {
        if (b->rank == b->root)
            for (long i = 0; i < b->doubles; ++i) b->one[k][at(b, i)] = value(call, b->root, i);
    } else if (b->op == GATHER || b->op == ALLGATHER) {
        for (long i = 0; i < b->doubles; ++i) b->one[k][at(b, i)] = value(call, b->rank, i);
    } else if (b->op == ALLTOALL) {
        /* The block for rank d carries "rank" rank * size + d. */
        for (int d = 0; d < b->size; ++d)
            for (long i = 0; i < b->doubles; ++i)
                b->all[k][2 * b->doubles * d + at(b, i)] = value(call, b->rank * b->size + d, i);
    } else if (b->rank == b->root) {
        for (int r = 0; r < b->size; ++r)
            for (long i = 0; i < b->doubles; ++i)
                b->all[k][2 * b->doubles * r + at(b, i)] = value(call, r, i);
    }
}

static void call(struct bench *b, long n)
{
    const int k = (int)(n % NBUF);
    int err = MPI_SUCCESS;
    if (b->op == BCAST) err = MPI_Bcast(b->one[k], 1, b->type, b->root, MPI_COMM_WORLD);
    if (b->op == GATHER) err = MPI_Gather(b->one[k], 1, b->type, b->all[k], 1, b->type, b->root, MPI_COMM_WORLD);
    if (b->op == SCATTER) err = MPI_Scatter(b->all[k], 1, b->type, b->one[k], 1, b->type, b->root, MPI_COMM_WORLD);
    if (b->op == ALLGATHER) err = MPI_Allgather(b->one[k], 1, b->type, b->all[k], 1, b->type, MPI_COMM_WORLD);
    if (b->op == ALLTOALL) err = MPI_Alltoall(b->all[k], 1, b->type, b->out[k], 1, b->type, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS) die("a collective failed");
}

/* Untimed check of one call: every data double where it belongs. */
static void check(struct bench *b, long n)
{
    for (long i = 0; i < b->doubles * 2 * NBUF; ++i) {
        b->one[i / (b->doubles * 2)][i % (b->doubles * 2)] = -1.0;
    }
    if (b->rank == b->root || b->op == ALLGATHER) {
        for (int k = 0; k < NBUF; ++k)
            for (long i = 0; i < b->doubles * 2 * b->size; ++i) b->all[k][i] = -1.0;
    }
    for (int k = 0; k < NBUF; ++k)
        for (long i = 0; i < b->doubles * 2 * b->size; ++i) b->out[k][i] = -1.0;
    stamp(b, n);
    call(b, n);
    const int k = (int)(n % NBUF);
    if ((b->op == GATHER && b->rank == b->root) || b->op == ALLGATHER) {
        for (int r = 0; r < b->size; ++r)
            for (long i = 0; i < b->doubles; ++i)
                if (b->all[k][2 * b->doubles * r + at(b, i)] != value(n, r, i))
                    die("gather: a double is not where the type map says");
    } else if ((b->op == BCAST || b->op == SCATTER) && b->rank != b->root) {
        const int from = b->op == BCAST ? b->root : b->rank;
        for (long i = 0; i < b->doubles; ++i)
            if (b->one[k][at(b, i)] != value(n, from, i))
                die("bcast/scatter: a double is not where the type map says");
    } else if (b->op == ALLTOALL) {
        for (int r = 0; r < b->size; ++r)
            for (long i = 0; i < b->doubles; ++i)
                if (b->out[k][2 * b->doubles * r + at(b, i)] != value(n, r * b->size + b->rank, i))
                    die("alltoall: a double is not where the type map says");
        /* The gaps of the receive buffer stay untouched. */
        for (long i = 0; i < 2 * b->doubles * b->size; ++i)
            if ((i / b->block) % 2 == 1 && b->out[k][i] != -1.0)
                die("alltoall: a gap of the receive buffer was written");
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long bytes = 1 << 20;
    int reps = 5, iters = 20;
    char blocks_arg[256] = "64,1024";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--bytes") == 0) bytes = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--blocks") == 0) snprintf(blocks_arg, sizeof blocks_arg, "%s", argv[i + 1]);
        else die("usage: dtype_coll [--bytes N] [--reps R] [--iters I] [--blocks B,B,...]");
    }
    if (bytes < 8 || reps < 1 || iters < 1) die("--bytes, --reps and --iters must be positive");
    struct bench b;
    memset(&b, 0, sizeof b);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    const int cpu = bench_pin(b.rank);
    int cpus[1024];
    MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (b.rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl) *nl = '\0';
        printf("# %s\n# %d ranks on CPUs", version, b.size);
        for (int r = 0; r < b.size && r < 1024; ++r) printf(" %d", cpus[r]);
        printf("; %ld bytes per rank, median of %d repetitions of %d calls\n", bytes, reps, iters);
        printf("layout bytes usec GB/s\n");
    }
    b.doubles = bytes / 8;
    for (int k = 0; k < NBUF; ++k) {
        b.one[k] = calloc((size_t)b.doubles * 2, sizeof(double));
        b.all[k] = calloc((size_t)b.doubles * 2 * (size_t)b.size, sizeof(double));
        b.out[k] = calloc((size_t)b.doubles * 2 * (size_t)b.size, sizeof(double));
        if (!b.one[k] || !b.all[k] || !b.out[k]) die("out of memory");
    }
    double *times = calloc((size_t)reps, sizeof(double));
    long n = 0; /* calls so far: the stamp of the next */
    for (char *save = NULL, *tok = strtok_r(blocks_arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const int block_bytes = atoi(tok);
        if (block_bytes < 8 || block_bytes % 8 || bytes % block_bytes) die("a block must be a multiple of 8 bytes dividing --bytes");
        b.block = block_bytes / 8;
        MPI_Datatype vec;
        MPI_Type_vector((int)(b.doubles / b.block), b.block, 2 * b.block, MPI_DOUBLE, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * bytes), &b.type);
        MPI_Type_commit(&b.type);
        MPI_Type_free(&vec);
        for (int o = BCAST; o <= ALLTOALL; ++o) {
            b.op = (enum op)o;
            b.root = 0;
            check(&b, n++);
            for (int w = 0; w < 3; ++w, ++n) {
                stamp(&b, n);
                call(&b, n);
            }
            for (int r = 0; r < reps; ++r) {
                double sum = 0.0;
                for (int i = 0; i < iters; ++i, ++n) {
                    stamp(&b, n);
                    MPI_Barrier(MPI_COMM_WORLD);
                    const double t0 = MPI_Wtime();
                    call(&b, n);
                    sum += MPI_Wtime() - t0;
                }
                MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                times[r] = sum / iters;
            }
            qsort(times, (size_t)reps, sizeof(double), cmp_double);
            const double t = times[reps / 2];
            if (b.rank == 0) printf("%s/vector/%d %ld %.2f %.2f\n", op_names[o], block_bytes, bytes, t * 1e6, bytes / t / 1e9);
        }
        MPI_Type_free(&b.type);
    }
    free(times);
    for (int k = 0; k < NBUF; ++k) {
        free(b.one[k]);
        free(b.all[k]);
        free(b.out[k]);
    }
    MPI_Finalize();
    return 0;
}
