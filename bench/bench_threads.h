/*
 * bench_threads.h: one timed repetition of the threaded MPI benchmark
 * programs (thread_pingpong.c, msgrate.c).  Plain C with POSIX threads; the
 * programs build with any MPI's mpicc, and this header with them.  Include
 * it after <mpi.h>.
 */
#ifndef SHMPI_BENCH_THREADS_H
#define SHMPI_BENCH_THREADS_H

#include <pthread.h>

enum { BENCH_MAX_THREADS = 64 };

/* Each thread waits here before it starts its clock. */
static pthread_barrier_t bench_start_line;

static inline void bench_wait_start(void) { pthread_barrier_wait(&bench_start_line); }

/* Runs fn((void *)t) for t = 0..n-1 on ranks 0 and 1, thread 0 being the
 * caller, all starting together: an MPI_Barrier of MPI_COMM_WORLD (ranks 2
 * and up take part in it only), then bench_wait_start() in each thread.
 * Returns the largest of elapsed[0..n-1], which each fn fills with its own
 * time; 0 on ranks 2 and up. */
static inline double bench_run_threads(int rank, int n, void *(*fn)(void *), const double *elapsed)
{
    if (rank > 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        return 0;
    }
    pthread_t th[BENCH_MAX_THREADS];
    pthread_barrier_init(&bench_start_line, NULL, (unsigned)n);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long t = 1; t < n; ++t) pthread_create(&th[t], NULL, fn, (void *)t);
    fn((void *)0);
    for (int t = 1; t < n; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bench_start_line);
    double slowest = 0;
    for (int t = 0; t < n; ++t) {
        if (elapsed[t] > slowest) slowest = elapsed[t];
    }
    return slowest;
}

#endif
