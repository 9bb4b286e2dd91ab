/* appnum.c: one program of an MPMD job (mpirun -n 1 appnum 0 : -n 2 appnum 1).
 * Checks that MPI_APPNUM is EXPECTED and the world has SIZE ranks, then
 * prints "app RANK APPNUM MAXPROCS", MAXPROCS being MPI_INFO_ENV's
 * "maxprocs" (-1 when it has none).  Exits 1 on a mismatch.
 *
 * usage: appnum EXPECTED SIZE.  Standard MPI only: builds with any MPI's
 * mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: appnum EXPECTED SIZE\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0, flag = 0;
    int *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    const int got = flag ? *appnum : -1;
    int bad = got != atoi(argv[1]) || size != atoi(argv[2]);
    if (bad)
        fprintf(stderr, "appnum: rank %d: MPI_APPNUM %d (flag %d), size %d; expected %s and %s\n", rank,
                got, flag, size, argv[1], argv[2]);
    char maxprocs[MPI_MAX_INFO_VAL + 1] = "-1";
    int has = 0;
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, maxprocs, &has);
    printf("app %d %d %s\n", rank, got, has ? maxprocs : "-1");
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
