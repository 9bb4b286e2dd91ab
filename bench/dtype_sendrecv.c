/*
 * dtype_sendrecv: derived-datatype messages between ranks 0 and 1, the same
 * type on both sides, for the layouts of bench/dtype_pack.cpp:
 *
 *   contig       MPI_BYTE, the baseline
 *   vector/B     MPI_Type_vector of blocks of B bytes (doubles), stride 2B,
 *                B = 8 B .. 4 KiB
 *   indexed      64 blocks of 32..224 bytes at irregular offsets (7,984
 *                bytes of data an element; at least one element, so more
 *                than --bytes when that is smaller)
 *   indexed/one  the same blocks over the whole message as one element
 *                (every piece of a pipelined message is then part of an
 *                element)
 *   struct       { int; double; char[3]; float }, 19 of its 24 bytes data
 *
 * Standard MPI API only: bench/dtype_compare.sh builds this file with
 * shmpi's, MPICH's and Open MPI's mpicc and puts the numbers side by side.
 *
 * For each layout (about --bytes bytes of data per message):
 *   1. Check: rank 0 sends, rank 1 receives and echoes, rank 0 compares
 *      every data byte (untimed).
 *   2. Warm-up round trips, then --reps repetitions of round trips; each
 *      repetition gives a one-way time (elapsed / 2 / round trips).  The
 *      median is reported, with the bandwidth of the data bytes it implies.
 * Every round trip uses the next of 4 buffers on each side, and rank 0 stamps
 * the iteration into its buffer first, so no message finds its data in cache
 * from the last (STYLE.md practice 15).  Each rank pins itself to one CPU
 * (rank r to the r-th CPU it may run on) and the header says where.
 *
 * --layouts vector/2048,indexed runs only the layouts named.
 *
 * Output: '#' header lines, then "layout bytes usec GB/s" rows.
 */
#define _GNU_SOURCE 1

#include <mpi.h>

#include "pin.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NBUF = 4, TAG = 11 };

struct S {
    int a;
    double b;
    char c[3];
    float d;
};

static void die(const char *what)
{
    fprintf(stderr, "dtype_sendrecv: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One layout: `count` elements of `type`, whose memory spans `span` bytes
 * from the buffer start (lb 0). */
/* --iters: round trips per repetition; 0 = about 50 ms worth. */
static int fixed_iters = 0;
/* --layouts: a comma-separated list of the layouts to run; NULL = all. */
static const char *only = NULL;
static int ran = 0; /* layouts run */

static int wanted(const char *name)
{
    if (only == NULL)
        return 1;
    const size_t n = strlen(name);
    for (const char *p = only; *p != '\0';) {
        const char *comma = strchr(p, ',');
        const size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (comma != NULL);
    }
    return 0;
}

static void bench(const char *name, MPI_Datatype type, int count, long span, int reps, int rank)
{
    if (!wanted(name))
        return;
    ++ran;
    int size = 0;
    MPI_Type_size(type, &size);
    const long bytes = (long)size * count;
    unsigned char *buf[NBUF];
    for (int i = 0; i < NBUF; ++i) {
        buf[i] = (unsigned char *)malloc((size_t)span);
        if (buf[i] == NULL)
            die("out of memory");
        for (long k = 0; k < span; ++k)
            buf[i][k] = (unsigned char)(k * 7 + i + rank);
    }

    /* 1. Check the data once.  Bytes outside the map are not compared. */
    unsigned char *packed_sent = (unsigned char *)malloc((size_t)bytes + 1);
    unsigned char *packed_back = (unsigned char *)malloc((size_t)bytes + 1);
    int pos = 0;
    if (rank == 0) {
        MPI_Pack(buf[0], count, type, packed_sent, (int)bytes + 1, &pos, MPI_COMM_WORLD);
        MPI_Send(buf[0], count, type, 1, TAG, MPI_COMM_WORLD);
        memset(buf[1], 0, (size_t)span);
        MPI_Recv(buf[1], count, type, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pos = 0;
        MPI_Pack(buf[1], count, type, packed_back, (int)bytes + 1, &pos, MPI_COMM_WORLD);
        if (memcmp(packed_sent, packed_back, (size_t)bytes) != 0)
            die("the echo differs from what was sent");
    } else if (rank == 1) {
        MPI_Recv(buf[0], count, type, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf[0], count, type, 0, TAG, MPI_COMM_WORLD);
    }
    free(packed_sent);
    free(packed_back);

    /* 2. Time round trips: enough per repetition for about 50 ms, or
     *    --iters of them. */
    int iters = fixed_iters > 0 ? fixed_iters : (int)(200000000L / (bytes + 100000));
    if (iters < 4)
        iters = 4;
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; ++r) { /* r == -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) {
            unsigned char *b = buf[i % NBUF];
            if (rank == 0) {
                b[0] = (unsigned char)i;
                MPI_Send(b, count, type, 1, TAG, MPI_COMM_WORLD);
                MPI_Recv(b, count, type, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(b, count, type, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, count, type, 0, TAG, MPI_COMM_WORLD);
            }
        }
        if (r >= 0)
            t[r] = (MPI_Wtime() - t0) / (2.0 * iters);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    const double med = t[reps / 2];
    if (rank == 0)
        printf("%-12s %10ld %10.2f %8.3f\n", name, bytes, med * 1e6, bytes / med / 1e9);
    fflush(stdout);
    free(t);
    for (int i = 0; i < NBUF; ++i)
        free(buf[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long target = 1 << 20;
    int reps = 7;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            target = atol(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            fixed_iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--layouts") == 0 && i + 1 < argc)
            only = argv[++i];
    }
    if (nranks < 2 || target < 4096 || reps < 1 || fixed_iters < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 dtype_sendrecv [--bytes N >= 4096] [--reps R] [--iters I]\n"
                            "                      [--layouts NAME,NAME,...]\n");
        MPI_Finalize();
        return 1;
    }

    const int cpu = bench_pin(rank);
    int cpus[2] = {cpu, -1};
    if (rank == 1)
        MPI_Send(&cpu, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Recv(&cpus[1], 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char lib[MPI_MAX_LIBRARY_VERSION_STRING], host[256] = "?";
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl != NULL)
            *nl = '\0';
        gethostname(host, sizeof host);
        printf("# library: %s\n", lib);
        printf("# host: %s, %ld CPUs online; rank 0 on CPU %d, rank 1 on CPU %d\n", host,
               sysconf(_SC_NPROCESSORS_ONLN), cpus[0], cpus[1]);
        printf("# %ld data bytes per message, median of %d repetitions\n", target, reps);
        printf("%-12s %10s %10s %8s\n", "layout", "bytes", "usec", "GB/s");
    }

    bench("contig", MPI_BYTE, (int)target, target, reps, rank);

    for (int block = 8; block <= 4096; block *= 2) {
        MPI_Datatype v;
        const int n = (int)(target / block);
        MPI_Type_vector(n, block / 8, 2 * block / 8, MPI_DOUBLE, &v);
        MPI_Type_commit(&v);
        char name[32];
        snprintf(name, sizeof name, "vector/%d", block);
        bench(name, v, 1, 2L * block * n, reps, rank);
        MPI_Type_free(&v);
    }

    int len[64], disp[64], at = 0;
    for (int i = 0; i < 64; ++i) {
        len[i] = 8 + (i * 37) % 49;
        disp[i] = at;
        at += len[i] + (i * 11) % 16;
    }
    MPI_Datatype ix;
    MPI_Type_indexed(64, len, disp, MPI_INT, &ix);
    MPI_Type_commit(&ix);
    int ixsize = 0;
    MPI_Aint lb, ext;
    MPI_Type_size(ix, &ixsize);
    MPI_Type_get_extent(ix, &lb, &ext);
    /* At least one element: with --bytes below one element's data, zero
     * elements gave a row of 0 bytes, and dtype_compare.sh a division by
     * zero. */
    const int nix = target >= ixsize ? (int)(target / ixsize) : 1;
    bench("indexed", ix, nix, (long)ext * nix, reps, rank);
    MPI_Type_free(&ix);

    const int nblocks = 64 * nix;
    int *len1 = malloc(sizeof(int) * (size_t)nblocks), *disp1 = malloc(sizeof(int) * (size_t)nblocks);
    if (len1 == NULL || disp1 == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < nblocks; ++i) {
        len1[i] = len[i % 64];
        disp1[i] = (int)(i / 64 * (ext / (MPI_Aint)sizeof(int))) + disp[i % 64];
    }
    MPI_Datatype ix1;
    MPI_Type_indexed(nblocks, len1, disp1, MPI_INT, &ix1);
    MPI_Type_commit(&ix1);
    bench("indexed/one", ix1, 1, (long)ext * nix, reps, rank);
    MPI_Type_free(&ix1);
    free(len1);
    free(disp1);

    int bl[4] = {1, 1, 3, 1};
    MPI_Aint d[4] = {offsetof(struct S, a), offsetof(struct S, b), offsetof(struct S, c), offsetof(struct S, d)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_FLOAT}, st;
    MPI_Type_create_struct(4, bl, d, ty, &st);
    MPI_Type_commit(&st);
    const int nst = (int)(target / 19);
    bench("struct", st, nst, (long)sizeof(struct S) * nst, reps, rank);
    MPI_Type_free(&st);

    if (ran == 0 && rank == 0)
        fprintf(stderr, "dtype_sendrecv: --layouts %s names no layout (contig, vector/8 .. vector/4096, indexed, "
                        "indexed/one, struct)\n", only);
    MPI_Finalize();
    return ran > 0 ? 0 : 1;
}
