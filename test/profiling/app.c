/* app.c: the profiled program for test/profiling.  Every rank makes exactly
 * kSends calls of MPI_Send of kInts ints and kReduces calls of MPI_Reduce,
 * and a few calls the profiler must not count (MPI_Sendrecv, MPI_Allreduce,
 * MPI_Bcast, MPI_Isend), checking every result, so the counts printed by
 * prof.c's MPI_Finalize are known: run-profiling.sh compares them. */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

enum { kSends = 10, kInts = 25, kReduces = 3 };

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* A ring of MPI_Send: even ranks send first, odd ranks receive first, so
     * blocking sends cannot deadlock whatever the MPI's eager limit. */
    int out[kInts], in[kInts];
    for (int i = 0; i < kSends; ++i) {
        for (int k = 0; k < kInts; ++k) out[k] = rank * 1000 + i * 10 + k;
        if (size == 1) {
            MPI_Request req;
            MPI_Irecv(in, kInts, MPI_INT, prev, i, MPI_COMM_WORLD, &req);
            MPI_Send(out, kInts, MPI_INT, next, i, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank % 2 == 0) {
            MPI_Send(out, kInts, MPI_INT, next, i, MPI_COMM_WORLD);
            MPI_Recv(in, kInts, MPI_INT, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, kInts, MPI_INT, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, kInts, MPI_INT, next, i, MPI_COMM_WORLD);
        }
        for (int k = 0; k < kInts; ++k) CHECK(in[k] == prev * 1000 + i * 10 + k);
    }

    for (int i = 0; i < kReduces; ++i) {
        int mine = rank + i, sum = -1;
        MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) CHECK(sum == size * (size - 1) / 2 + size * i);
    }

    /* Calls that are not MPI_Send or MPI_Reduce, even if an MPI builds them
     * from those internally: the profiler sees only the program's calls. */
    int x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, next, 99, &y, 1, MPI_INT, prev, 99, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(y == prev);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(y == size * (size - 1) / 2);
    MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Request req[2];
    MPI_Irecv(&y, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&x, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    CHECK(y == prev);

    MPI_Finalize();
    return 0;
}
