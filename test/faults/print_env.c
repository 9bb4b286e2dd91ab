/* print_env.c: every rank prints "rank R NAME=VALUE" (or "rank R NAME unset")
 * for each NAME on its command line.
 *
 * usage: print_env NAME... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; ++i) {
        const char *v = getenv(argv[i]);
        if (v != NULL) {
            printf("rank %d %s=%s\n", rank, argv[i], v);
        } else {
            printf("rank %d %s unset\n", rank, argv[i]);
        }
    }
    MPI_Finalize();
    return 0;
}
