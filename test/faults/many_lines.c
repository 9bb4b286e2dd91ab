/* many_lines.c: every rank writes NLINES lines at once, in write() calls whose
 * boundaries fall inside lines, so that mpirun has to put lines back
 * together.  Line i of rank R is
 *     "R i L <L characters>"
 * where L = (i * 7 + R * 13) % 300 and character k is 'a' + (i + k + R) % 26.
 * The last thing each rank writes is "R end" without a newline.
 *
 * usage: many_lines NLINES */
#define _POSIX_C_SOURCE 200809L  /* nanosleep, write */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(STDOUT_FILENO, p, n);
        if (w <= 0) exit(3);
        p += w;
        n -= (size_t)w;
    }
}

int main(int argc, char **argv)
{
    int rank = -1;
    if (argc != 2) {
        fprintf(stderr, "usage: many_lines NLINES\n");
        return 2;
    }
    const long nlines = atol(argv[1]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    static char buf[1 << 16];
    size_t used = 0;
    unsigned int seed = 12345u + (unsigned int)rank;
    for (long i = 0; i < nlines; ++i) {
        const int len = (int)((i * 7 + rank * 13) % 300);
        char line[400];
        int n = snprintf(line, sizeof line, "%d %ld %d ", rank, i, len);
        for (int k = 0; k < len; ++k) line[n++] = (char)('a' + (i + k + rank) % 26);
        line[n++] = '\n';
        memcpy(buf + used, line, (size_t)n);
        used += (size_t)n;
        /* Flush a pseudo-random prefix, cutting through a line. */
        seed = seed * 1103515245u + 12345u;
        if (used > 8192) {
            const size_t cut = used - (seed >> 16) % 200 - 1;
            write_all(buf, cut);
            memmove(buf, buf + cut, used - cut);
            used -= cut;
        }
    }
    write_all(buf, used);
    char last[32];
    const int n = snprintf(last, sizeof last, "%d end", rank);
    write_all(last, (size_t)n);
    MPI_Finalize();
    return 0;
}
