/*
 * hello: the smallest MPI program, for measuring how long a launch takes
 * (mpirun, MPI_Init, MPI_Finalize, exit).  Standard MPI API only.
 */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
