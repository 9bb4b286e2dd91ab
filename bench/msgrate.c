/*
 * msgrate: how many small messages a second rank 0 streams to rank 1, with
 * one thread or several per rank (MPI_THREAD_MULTIPLE).
 *
 * Written against the standard MPI API only, so that the same file builds
 * with shmpi's mpicc, Open MPI's and MPICH's.
 *
 * The pattern of MPICH's threads/perf/mt_pt2pt_msgrate: thread t of rank 0
 * sends `--messages` messages of `--bytes` bytes to thread t of rank 1 on a
 * communicator of its own (an MPI_Comm_dup of MPI_COMM_WORLD), in windows
 * of `--window` MPI_Isend calls and one MPI_Waitall; rank 1 posts windows
 * of MPI_Irecv the same way.  Nothing holds the sender back but the MPI
 * library, so a sender that runs ahead fills the receiver's queue of
 * unexpected messages.  One message from rank 1 ends each thread's stream.
 * Each repetition starts all threads together (MPI_Barrier, then a barrier
 * of the threads); rank 0 prints the messages of all threads over the time
 * of the slowest one, in millions a second, then the median and the
 * maximum over `--reps`.  Every message carries its index, and rank 1
 * checks each one.
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

enum { MAX_REPS = 100, MAX_WINDOW = 1024, MAX_BYTES = 1 << 20 };

static int rank, nthreads = 1, messages = 64000, window = 64, bytes = 8, reps = 5;
static MPI_Comm comms[BENCH_MAX_THREADS];
static double elapsed[BENCH_MAX_THREADS];
static int failed;

/* Message i of a stream carries i in its first bytes (as many as fit). */
static void stamp(unsigned char *buf, int i)
{
    const size_t n = (size_t)bytes < sizeof i ? (size_t)bytes : sizeof i;
    memcpy(buf, &i, n);
}

static int stamped(const unsigned char *buf, int i)
{
    unsigned char want[sizeof i];
    const size_t n = (size_t)bytes < sizeof i ? (size_t)bytes : sizeof i;
    memcpy(want, &i, sizeof i);
    return memcmp(buf, want, n) == 0;
}

static void *stream(void *arg)
{
    const int t = (int)(long)arg;
    MPI_Comm comm = comms[t];
    unsigned char *bufs = malloc((size_t)window * (size_t)bytes + 1);
    MPI_Request req[MAX_WINDOW];
    int end = 0;
    bench_wait_start();
    const double t0 = MPI_Wtime();
    for (int first = 0; first < messages; first += window) {
        const int n = messages - first < window ? messages - first : window;
        for (int k = 0; k < n; ++k) {
            unsigned char *buf = bufs + (size_t)k * (size_t)bytes;
            if (rank == 0) {
                stamp(buf, first + k);
                MPI_Isend(buf, bytes, MPI_BYTE, 1, 0, comm, &req[k]);
            } else {
                MPI_Irecv(buf, bytes, MPI_BYTE, 0, 0, comm, &req[k]);
            }
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        if (rank == 1) {
            for (int k = 0; k < n; ++k) {
                if (!stamped(bufs + (size_t)k * (size_t)bytes, first + k)) failed = 1;
            }
        }
    }
    if (rank == 0) {
        MPI_Recv(&end, 1, MPI_INT, 1, 1, comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Send(&end, 1, MPI_INT, 0, 1, comm);
    }
    elapsed[t] = MPI_Wtime() - t0;
    free(bufs);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(const char *prog)
{
    if (rank == 0) {
        fprintf(stderr,
                "usage: %s [--threads N (1)] [--messages N (64000)] [--window N (64)] [--bytes N (8)] "
                "[--reps R (5)]\n",
                prog);
    }
    MPI_Finalize();
    return 1;
}

int main(int argc, char **argv)
{
    int provided = -1, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) return usage(argv[0]);
        if (strcmp(argv[i], "--threads") == 0) {
            nthreads = atoi(v);
        } else if (strcmp(argv[i], "--messages") == 0) {
            messages = atoi(v);
        } else if (strcmp(argv[i], "--window") == 0) {
            window = atoi(v);
        } else if (strcmp(argv[i], "--bytes") == 0) {
            bytes = atoi(v);
        } else if (strcmp(argv[i], "--reps") == 0) {
            reps = atoi(v);
        } else {
            return usage(argv[0]);
        }
        ++i;
    }
    const int need = nthreads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    if (provided < need || size < 2 || nthreads < 1 || nthreads > BENCH_MAX_THREADS || messages < 1 || window < 1 ||
        window > MAX_WINDOW || bytes < 0 || bytes > MAX_BYTES || reps < 1 || reps > MAX_REPS) {
        if (rank == 0) {
            fprintf(stderr,
                    "msgrate: needs MPI_THREAD_MULTIPLE for 2 threads or more (got %d), 2 ranks or more (got %d), "
                    "1..%d threads, 1..%d messages a window, 0..%d bytes, 1..%d reps\n",
                    provided, size, BENCH_MAX_THREADS, MAX_WINDOW, MAX_BYTES, MAX_REPS);
        }
        MPI_Finalize();
        return 1;
    }
    for (int t = 0; t < nthreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        printf("# MPI library: %.*s\n", (int)strcspn(version, "\n"), version);
        printf("# ranks: %d (ranks 2 and up idle), threads per rank: %d, messages per thread: %d of %d B, "
               "window %d\n",
               size, nthreads, messages, bytes, window);
        printf("%6s %16s\n", "rep", "Mmsg/s");
    }
    double rate[MAX_REPS];
    for (int r = 0; r < reps; ++r) {
        const double slowest = bench_run_threads(rank, nthreads, stream, elapsed);
        rate[r] = slowest > 0 ? (double)messages * nthreads / slowest / 1e6 : 0;
        if (rank == 0) printf("%6d %16.3f\n", r, rate[r]);
    }
    if (rank == 0) {
        qsort(rate, (size_t)reps, sizeof rate[0], by_value);
        printf("# median %.3f, max %.3f million messages a second\n", rate[reps / 2], rate[reps - 1]);
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && rank == 0) fprintf(stderr, "msgrate: a message arrived with the wrong index\n");
    for (int t = 0; t < nthreads; ++t) MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return any ? 2 : 0;
}
