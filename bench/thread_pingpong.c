/*
 * thread_pingpong: ping-pongs of several threads per rank at once, under
 * MPI_THREAD_MULTIPLE.
 *
 * Written against the standard MPI API only, so that the same file builds
 * with shmpi's mpicc, Open MPI's and MPICH's.
 *
 * Ranks 0 and 1 each run `--threads` threads (the first is the main one);
 * thread t of rank 0 and thread t of rank 1 ping-pong an int with MPI_Send
 * and MPI_Recv on tag t, all pairs at once.  Each repetition times `--iters` round trips per
 * thread, all threads starting together (MPI_Barrier, then a barrier of the
 * threads); rank 0 prints, per repetition, the half round trip of its
 * slowest thread, then the median and the minimum over `--reps`.  With
 * `--threads 1` it measures what the thread safety of MPI_THREAD_MULTIPLE
 * costs a single thread.  The value changes every trip and is checked.
 *
 * Exit status 0, 1 for a usage error or a refused thread level, 2 when a
 * check failed.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_threads.h"

enum { MAX_REPS = 100 };

static int rank, nthreads = 2, iters = 20000, reps = 5;
static double elapsed[BENCH_MAX_THREADS];
static int failed;

static void *pair(void *arg)
{
    const int t = (int)(long)arg;
    bench_wait_start();
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
        int x = i * BENCH_MAX_THREADS + t;
        if (rank == 0) {
            MPI_Send(&x, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
            MPI_Recv(&x, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (x != i * BENCH_MAX_THREADS + t + 1) failed = 1;
        } else {
            MPI_Recv(&x, 1, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            x += 1;
            MPI_Send(&x, 1, MPI_INT, 0, t, MPI_COMM_WORLD);
        }
    }
    elapsed[t] = MPI_Wtime() - t0;
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int provided = -1, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v != NULL && strcmp(argv[i], "--threads") == 0) {
            nthreads = atoi(v);
        } else if (v != NULL && strcmp(argv[i], "--iters") == 0) {
            iters = atoi(v);
        } else if (v != NULL && strcmp(argv[i], "--reps") == 0) {
            reps = atoi(v);
        } else {
            if (rank == 0) {
                fprintf(stderr, "usage: %s [--threads N (2)] [--iters N (20000)] [--reps R (5)]\n", argv[0]);
            }
            MPI_Finalize();
            return 1;
        }
        ++i;
    }
    if (provided != MPI_THREAD_MULTIPLE || size < 2 || nthreads < 1 || nthreads > BENCH_MAX_THREADS || iters < 1 ||
        reps < 1 || reps > MAX_REPS) {
        if (rank == 0) {
            fprintf(stderr, "thread_pingpong: needs MPI_THREAD_MULTIPLE (got %d), 2 ranks or more (got %d), "
                    "1..%d threads, 1..%d reps\n", provided, size, BENCH_MAX_THREADS, MAX_REPS);
        }
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        printf("# MPI library: %.*s\n", (int)strcspn(version, "\n"), version);
        printf("# ranks: %d (ranks 2 and up idle), threads per rank: %d, round trips per thread: %d\n", size,
               nthreads, iters);
        printf("%6s %22s\n", "rep", "slowest_half_rtt(us)");
    }
    double worst[MAX_REPS];
    for (int r = 0; r < reps; ++r) {
        worst[r] = bench_run_threads(rank, nthreads, pair, elapsed) / iters / 2 * 1e6;
        if (rank == 0) printf("%6d %22.3f\n", r, worst[r]);
    }
    if (rank == 0) {
        qsort(worst, (size_t)reps, sizeof worst[0], by_value);
        printf("# median %.3f us, min %.3f us\n", worst[reps / 2], worst[0]);
        if (failed) fprintf(stderr, "thread_pingpong: a value came back wrong\n");
    }
    MPI_Finalize();
    return failed ? 2 : 0;
}
