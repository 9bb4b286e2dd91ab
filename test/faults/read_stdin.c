/* read_stdin.c: every rank reads its standard input to the end and prints
 * "rank R bytes N sum S" (S: the sum of the bytes, mod 2^32).  Under mpirun
 * rank 0 reads mpirun's input and the others read /dev/null. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = -1;
    unsigned char buf[4096];
    unsigned long bytes = 0;
    unsigned int sum = 0;
    size_t n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        for (size_t i = 0; i < n; ++i) sum += buf[i];
        bytes += n;
    }
    printf("rank %d bytes %lu sum %u\n", rank, bytes, sum);
    MPI_Finalize();
    return 0;
}
