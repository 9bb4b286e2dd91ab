/* exit_code.c: a correct MPI program whose rank RANK returns CODE from main
 * after MPI_Finalize; the other ranks return 0.
 *
 * usage: exit_code RANK CODE        (RANK -1: every rank returns 0) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank = -1;
    if (argc != 3) {
        fprintf(stderr, "usage: exit_code RANK CODE\n");
        return 2;
    }
    const int who = atoi(argv[1]);
    const int code = atoi(argv[2]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    return rank == who ? code : 0;
}
