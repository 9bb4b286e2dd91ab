/* The program the discovery tests build through CMake's FindMPI, meson's
 * dependency('mpi') and pkg-config.  It must have been compiled against
 * shmpi's mpi.h (not another MPI's found first) and started by shmpi's
 * launcher with the rank count given as its argument. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHMPI
#error "mpi.h is not shmpi's: the build system found another MPI"
#endif

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    const int want = argc > 1 ? atoi(argv[1]) : size;
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (size != want || sum != size * (size - 1) / 2 || strstr(version, "shmpi") == NULL) {
        fprintf(stderr, "discovery hello: rank %d: size %d (want %d), sum %d, library '%s'\n",
                rank, size, want, sum, version);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) printf("discovery hello: %d ranks, %s\n", size, version);
    MPI_Finalize();
    return 0;
}
