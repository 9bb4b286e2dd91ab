/* hello.c: the smallest C MPI program, compiled by the wrappers' test. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = -1;
    int size = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from C, rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
