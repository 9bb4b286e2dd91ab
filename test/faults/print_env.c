/* print_env.c: every rank prints "rank R NAME=VALUE" (or "rank R NAME unset")
 * for each NAME on its command line.  With --child first, rank 0 then runs
 * the program again, without mpirun (a singleton), as `print_env NAME...`.
 *
 * usage: print_env [--child] NAME... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int child = argc > 1 && strcmp(argv[1], "--child") == 0;
    for (int i = 1 + child; i < argc; ++i) {
        const char *v = getenv(argv[i]);
        if (v != NULL) {
            printf("rank %d %s=%s\n", rank, argv[i], v);
        } else {
            printf("rank %d %s unset\n", rank, argv[i]);
        }
    }
    fflush(stdout);
    if (child && rank == 0) {
        char cmd[4096];
        int n = snprintf(cmd, sizeof cmd, "'%s'", argv[0]);
        for (int i = 2; i < argc && n > 0 && n < (int)sizeof cmd; ++i)
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", argv[i]);
        if (system(cmd) != 0) {
            fprintf(stderr, "print_env: %s failed\n", cmd);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return 0;
}
