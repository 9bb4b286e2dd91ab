/*
 * poll_ring: a ring exchange completed by waiting or by polling.
 *
 * Written against the standard MPI API only, so that the same file builds with
 * shmpi's mpicc, Open MPI's and MPICH's.
 *
 * Each step, every rank receives an int from its left neighbour and sends
 * one to its right (MPI_Irecv + MPI_Isend), then completes both:
 *   wait     MPI_Waitall
 *   testall  MPI_Testall in a loop, as a program that would compute
 *            meanwhile polls
 *   iprobe   MPI_Iprobe in a loop until the message is there, then the
 *            receive and MPI_Waitall
 *   nbc      as testall, then an MPI_Iallreduce of the step's value
 *            completed by MPI_Test in a loop
 *   busy     a rank with work of its own, as HPCC's RandomAccess: --work
 *            units of computation (64 steps of a random number generator,
 *            some tens of nanoseconds), with an MPI_Test of the receive
 *            after each unit until it completes; the send goes after
 *            the work, then MPI_Waitall
 * With more ranks than CPUs, the polling modes show whether a rank that
 * polls gives its CPU to the rank it waits for: one that keeps it holds
 * the ring up for a whole scheduler time slice per step.  busy shows the
 * other side: every rank has work, so a test that gives the CPU away
 * only adds task switches.
 *
 * Every step checks what arrived (the left neighbour's rank plus the step);
 * nbc also checks the sum, busy that every unit of work was done.  World
 * rank 0 prints, per mode, the mean time per step of the slowest rank and
 * the polls per step (calls to the polling function, averaged over ranks).
 *
 * The header names the MPI library and, for every rank, the CPU it ran on
 * (sched_getcpu, after the runs) and how many CPUs it may use.
 *
 * usage: poll_ring [--steps N] [--work UNITS] [--modes wait,testall,iprobe,nbc,busy]
 *                  [--csv]
 * Exit status 0, 1 for a usage error, 2 when a check failed.
 */
#define _GNU_SOURCE 1 /* sched_getcpu, sched_getaffinity */

#include <mpi.h>

#ifdef __linux__
#include <sched.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "word_list.h"

enum { MODES = 5 };
static const char *const mode_names[MODES] = {"wait", "testall", "iprobe", "nbc", "busy"};

/* One unit of busy's work: 64 steps of a 64-bit linear congruential
 * generator (Knuth's MMIX constants), each depending on the last. */
static unsigned long long work_unit(unsigned long long x)
{
    for (int i = 0; i < 64; ++i)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

struct result {
    double step_us; /* slowest rank's mean time per step */
    double polls;   /* polling calls per step, mean over ranks */
    int bad;        /* checks failed, summed over ranks */
};

static struct result run(int mode, int steps, int work)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    long polls = 0;
    int bad = 0;
    unsigned long long x = (unsigned long long)rank + 1, units = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int s = 0; s < steps; ++s) {
        int out = rank + s, in = -1, done = 0;
        MPI_Request req[2];
        if (mode == 2) {
            MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[1]);
            while (!done) {
                MPI_Iprobe(left, 0, MPI_COMM_WORLD, &done, MPI_STATUS_IGNORE);
                ++polls;
            }
            MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        } else if (mode == 4) {
            /* The send goes after the work, so most tests find nothing. */
            MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
            for (int u = 0; u < work; ++u) {
                x = work_unit(x);
                ++units;
                if (!done) {
                    MPI_Test(&req[0], &done, MPI_STATUS_IGNORE);
                    ++polls;
                }
            }
            MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        } else {
            MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &req[1]);
            if (mode == 0) {
                MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            } else {
                while (!done) {
                    MPI_Testall(2, req, &done, MPI_STATUSES_IGNORE);
                    ++polls;
                }
            }
        }
        bad += in != left + s;
        if (mode == 3) {
            /* sum over ranks of (rank + s) */
            const long long want = (long long)size * (size - 1) / 2 + (long long)size * s;
            long long mine = out, sum = -1;
            MPI_Request r;
            MPI_Iallreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
            done = 0;
            while (!done) {
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
                ++polls;
            }
            bad += sum != want;
        }
    }
    const double mean = (MPI_Wtime() - t0) / steps;
    /* x feeds the check, so the work cannot be left out. */
    if (mode == 4)
        bad += units != (unsigned long long)steps * (unsigned long long)work || x == 0;
    struct result res = {0, 0, 0};
    double p = (double)polls / steps, psum = 0;
    MPI_Reduce(&mean, &res.step_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&p, &psum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &res.bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    res.step_us *= 1e6;
    res.polls = psum / size;
    return res;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = 2000, work = 1000, modes = (1 << MODES) - 1, csv = 0, usage = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0)
            csv = 1;
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc)
            work = atoi(argv[++i]);
        else if (strcmp(argv[i], "--modes") == 0 && i + 1 < argc)
            modes = bench_word_bits(argv[++i], mode_names, MODES);
        else
            usage = 1;
    }
    if (usage || steps < 1 || work < 0 || modes <= 0) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: poll_ring [--steps N] [--work UNITS] [--modes wait,testall,iprobe,nbc,busy] [--csv]\n");
        MPI_Finalize();
        return 1;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    if (rank == 0) {
        printf("# poll_ring: %d ranks, %d steps, %d units of work in busy\n# MPI: %s\n", size, steps, work, lib);
        printf(csv ? "mode,ranks,step_us,polls_per_step,check\n" : "%-8s %6s %12s %15s %s\n", "mode", "ranks",
               "step_us", "polls_per_step", "check");
    }
    int status = 0;
    for (int m = 0; m < MODES; ++m) {
        if ((modes & (1 << m)) == 0)
            continue;
        const struct result r = run(m, steps, work);
        if (rank == 0) {
            if (r.bad != 0)
                status = 2;
            printf(csv ? "%s,%d,%.3f,%.1f,%s\n" : "%-8s %6d %12.3f %15.1f %s\n", mode_names[m], size, r.step_us,
                   r.polls, r.bad ? "FAILED" : "ok");
        }
    }
    /* Where each rank ran: its CPU now and the CPUs it may use. */
    int where[2] = {-1, 0};
#ifdef __linux__
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        where[1] = CPU_COUNT(&allowed);
    where[0] = sched_getcpu();
#endif
    int *all = rank == 0 ? malloc(sizeof(int) * 2 * (size_t)size) : NULL;
    MPI_Gather(where, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && all != NULL) {
        printf("# rank: cpu (CPUs allowed):");
        for (int r = 0; r < size; ++r)
            printf(" %d: %d (%d)", r, all[2 * r], all[2 * r + 1]);
        printf("\n");
        free(all);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
