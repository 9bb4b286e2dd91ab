/*
 * thread_common.h: what the MPI_THREAD_MULTIPLE test programs (thread_*.c)
 * share, beside check.h.
 */
#ifndef SHMPI_TEST_MPI_THREAD_COMMON_H
#define SHMPI_TEST_MPI_THREAD_COMMON_H

#include <pthread.h>
#include <time.h>

#include "check.h"

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE, which must be granted. */
static inline void init_thread_multiple(int *argc, char ***argv)
{
    int provided = -1;
    CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    CHECKF(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provides %d, not MPI_THREAD_MULTIPLE (%d)",
           provided, MPI_THREAD_MULTIPLE);
}

/* Sleeps `ms` milliseconds: a thread that must come late. */
static inline void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts n threads, thread t running fn((void *)t). */
static inline void start_threads(pthread_t *th, int n, void *(*fn)(void *))
{
    for (int t = 0; t < n; ++t)
        CHECK(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0);
}

/* Waits for the n threads of start_threads() to end. */
static inline void join_threads(const pthread_t *th, int n)
{
    for (int t = 0; t < n; ++t)
        CHECK(pthread_join(th[t], NULL) == 0);
}

#endif
