/* deadlock.c: ranks that wait for one another for ever, and ranks that only
 * look stuck, for mpirun's deadlock check.
 *
 * usage: deadlock HOW
 *   recv      every rank receives from the next one; nobody sends
 *   finalize  rank 0 calls MPI_Finalize; the others receive from rank 0
 *   mixed     rank 0 enters MPI_Barrier on a duplicate of MPI_COMM_WORLD;
 *             the others receive from rank 0
 *   slow      not a deadlock: rank 0 works (outside MPI) for 1.5 s before
 *             it sends to each other rank, and again before a broadcast and
 *             a barrier on a duplicate communicator, while the others wait
 *             in MPI_Recv, MPI_Bcast and MPI_Barrier; then every rank checks
 *             what it got and prints "ok R"
 *   threads   not a deadlock: under MPI_THREAD_MULTIPLE, every rank waits in
 *             MPI_Recv for rank 0, whose second thread sleeps (outside MPI,
 *             using no CPU) for 1.5 s before it sends to every rank, rank 0
 *             included; every rank checks what it got and prints "ok R"
 *   stream    not a deadlock: every rank sends 32 MiB to the next and
 *             receives from the previous, 8 times; rank 0 also works for
 *             0.3 s before each round, so the others wait in the middle of
 *             a large exchange; the data is checked and every rank prints
 *             "ok R"
 *
 * Every rank prints "ready R" once MPI_Init has returned.  Standard MPI
 * only: builds with any MPI's mpicc. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Busy work, not a sleep: a rank that computes is awake. */
static void work_ms(long ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long sink = 0;
    do {
        for (int i = 0; i < 100000; ++i) sink += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L < ms);
    (void)sink;
}

static int fail(int rank, const char *what)
{
    printf("rank %d: %s\n", rank, what);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}

static int slow(int rank, int size)
{
    int value = -1;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0) {
        work_ms(1500);
        for (int r = 1; r < size; ++r) {
            value = 100 + r;
            MPI_Send(&value, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
        }
        work_ms(1500);
        value = 42;
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (value != 100 + rank) return fail(rank, "MPI_Recv got the wrong value");
    }
    MPI_Bcast(&value, 1, MPI_INT, 0, dup);
    if (value != 42) return fail(rank, "MPI_Bcast got the wrong value");
    if (rank == 0) work_ms(1500);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    return 0;
}

static void *late_sender(void *arg)
{
    const int size = *(const int *)arg;
    struct timespec nap = {1, 500000000L};
    nanosleep(&nap, NULL);
    for (int r = 0; r < size; ++r) {
        const int value = 200 + r;
        MPI_Send(&value, 1, MPI_INT, r, 8, MPI_COMM_WORLD);
    }
    return NULL;
}

static int threads(int rank, int size)
{
    int provided = -1;
    MPI_Query_thread(&provided);
    if (provided != MPI_THREAD_MULTIPLE) return fail(rank, "MPI_THREAD_MULTIPLE was not granted");
    pthread_t sender;
    if (rank == 0 && pthread_create(&sender, NULL, late_sender, &size) != 0) {
        return fail(rank, "pthread_create failed");
    }
    int value = -1;
    MPI_Recv(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (value != 200 + rank) return fail(rank, "MPI_Recv got the wrong value");
    if (rank == 0) pthread_join(sender, NULL);
    return 0;
}

static int stream(int rank, int size)
{
    const size_t n = (size_t)32 << 20;
    unsigned char *out = malloc(n);
    unsigned char *in = malloc(n);
    if (out == NULL || in == NULL) return fail(rank, "out of memory");
    const int next = (rank + 1) % size;
    const int prev = (rank + size - 1) % size;
    for (int round = 0; round < 8; ++round) {
        for (size_t i = 0; i < n; i += 4096) out[i] = (unsigned char)(rank * 31 + round + i / 4096);
        if (rank == 0) work_ms(300);
        MPI_Sendrecv(out, (int)n, MPI_BYTE, next, round, in, (int)n, MPI_BYTE, prev, round, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (size_t i = 0; i < n; i += 4096) {
            if (in[i] != (unsigned char)(prev * 31 + round + i / 4096)) return fail(rank, "wrong data");
        }
    }
    free(out);
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    int rank = -1;
    int size = 0;
    int value = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: deadlock recv|finalize|mixed|slow|threads|stream\n");
        return 2;
    }
    const char *how = argv[1];
    int provided = -1;
    MPI_Init_thread(&argc, &argv, strcmp(how, "threads") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("ready %d\n", rank);
    fflush(stdout);

    if (strcmp(how, "recv") == 0) {
        MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return fail(rank, "MPI_Recv returned, which it must not");
    }
    if (strcmp(how, "finalize") == 0) {
        if (rank == 0) {
            MPI_Finalize();
            printf("rank 0: MPI_Finalize returned, which it must not while others wait\n");
            return 3;
        }
        MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return fail(rank, "MPI_Recv returned, which it must not");
    }
    if (strcmp(how, "mixed") == 0) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        if (rank == 0) {
            MPI_Barrier(dup);
            return fail(rank, "MPI_Barrier returned, which it must not");
        }
        MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return fail(rank, "MPI_Recv returned, which it must not");
    }
    int rc;
    if (strcmp(how, "slow") == 0) {
        rc = slow(rank, size);
    } else if (strcmp(how, "threads") == 0) {
        rc = threads(rank, size);
    } else if (strcmp(how, "stream") == 0) {
        rc = stream(rank, size);
    } else {
        fprintf(stderr, "deadlock: unknown HOW '%s'\n", how);
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    if (rc == 0) printf("ok %d\n", rank);
    MPI_Finalize();
    return rc;
}
