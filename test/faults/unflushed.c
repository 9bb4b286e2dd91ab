/* unflushed.c: every rank prints two complete lines without fflush, then
 * the job ends early in a chosen way; the lines must not be lost.
 *
 * usage: unflushed HOW
 *   exit      rank 0 calls exit(2) without MPI_Finalize; the others wait in
 *             MPI_Recv for rank 0
 *   segv      rank 0 raises SIGSEGV; the others sleep outside MPI
 *   abort     rank 0 calls MPI_Abort(MPI_COMM_WORLD, 4); the others sleep
 *             outside MPI
 *   deadlock  every rank receives from the next one; nobody sends
 *   sleep     every rank sleeps outside MPI (for --timeout)
 *
 * Each rank prints "line R a" and "line R b", then all meet in a barrier, so
 * every line is printed before the job ends.  Standard MPI only: builds
 * with any MPI's mpicc. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_s(int s)
{
    struct timespec ts = {s, 0};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank = -1;
    int size = 0;
    int value = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: unflushed exit|segv|abort|deadlock|sleep\n");
        return 2;
    }
    const char *how = argv[1];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("line %d a\n", rank);
    printf("line %d b\n", rank);
    MPI_Barrier(MPI_COMM_WORLD);

    if (strcmp(how, "deadlock") == 0) {
        MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(how, "sleep") == 0) {
        sleep_s(30);
    } else if (rank != 0) {
        if (strcmp(how, "exit") == 0) {
            MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            sleep_s(30);
        }
    } else if (strcmp(how, "exit") == 0) {
        exit(2);
    } else if (strcmp(how, "segv") == 0) {
        raise(SIGSEGV);
    } else if (strcmp(how, "abort") == 0) {
        MPI_Abort(MPI_COMM_WORLD, 4);
    } else {
        fprintf(stderr, "unflushed: unknown HOW '%s'\n", how);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("rank %d: the job went on, which it must not\n", rank);
    MPI_Finalize();
    return 3;
}
