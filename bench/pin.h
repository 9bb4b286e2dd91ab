/*
 * pin.h: pins an MPI benchmark rank to one CPU, for the programs in bench/
 * that every MPI's mpicc builds (standard C and Linux only).
 */
#ifndef SHMPI_BENCH_PIN_H
#define SHMPI_BENCH_PIN_H

#ifdef __linux__
#include <sched.h>
#endif

/* Pins the calling process to the (rank mod n)-th of the n CPUs it may run
 * on; returns that CPU, or -1 where pinning is not available. */
static int bench_pin(int rank)
{
#ifdef __linux__
    cpu_set_t set, one;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    int seen = 0, n = CPU_COUNT(&set);
    if (n == 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set))
            continue;
        if (seen++ == rank % n) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            return sched_setaffinity(0, sizeof one, &one) == 0 ? c : -1;
        }
    }
#endif
    (void)rank;
    return -1;
}

#endif
