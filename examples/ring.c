/*
 * ring.c: pass a token around a ring of ranks with MPI_Send and MPI_Recv.
 *
 * Rank 0 starts the token at 0 and sends it to rank 1; every other rank
 * receives it from its left neighbour, adds its own rank and sends it on to
 * its right neighbour; rank n-1 sends it back to rank 0.  The token then holds
 * 0 + 1 + ... + (n-1) = n(n-1)/2, which rank 0 prints and checks.
 *
 * Plain MPI: builds unchanged with shmpi, MPICH or Open MPI.
 *   mpicc -o ring ring.c && mpirun -n 4 ./ring
 */
#include <mpi.h>
#include <stdio.h>

enum { kTokenTag = 7 };

int main(int argc, char **argv)
{
    int rank, size;
    long token = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;

    /* One rank alone has nobody to pass to: the sum is 0. */
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, right, kTokenTag, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, left, kTokenTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, left, kTokenTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, right, kTokenTag, MPI_COMM_WORLD);
        }
    }

    int status = 0;
    if (rank == 0) {
        const long expected = (long)size * (size - 1) / 2;
        printf("ring of %d ranks: token %ld, expected %ld: %s\n", size, token, expected,
               token == expected ? "ok" : "WRONG");
        status = token == expected ? 0 : 1;
    }
    MPI_Finalize();
    return status;
}
