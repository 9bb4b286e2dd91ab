/*
 * self_sendrecv: the software cost of one small message, without the
 * hardware cost of moving it between CPUs.
 *
 * Rank 0 sends `--bytes` (default 8) to itself on MPI_COMM_SELF with
 * MPI_Isend, receives them with MPI_Recv and completes the send with
 * MPI_Wait, `--iters` times per repetition; it prints the median over
 * `--reps` repetitions of the time of one such exchange, and the best
 * repetition.  Everything the library does
 * for a message (argument checks, handle lookups, matching, the mailbox) is
 * in that time; the cache-line transfer a real message between two CPUs also
 * needs is not, which is what bench/pingpong measures.  Other ranks only
 * take part in MPI_Init and MPI_Finalize.
 *
 * Standard MPI only, so the same file builds with any MPI's mpicc.  The
 * send is nonblocking because a blocking MPI_Send to oneself may wait for
 * its receive (MPICH 4.0's does, and the standard allows it).
 */
#define _GNU_SOURCE 1 /* sched_getcpu, sched_getaffinity */

#include <mpi.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One message to ourselves: Isend, Recv, Wait. */
static void exchange(const unsigned char *out, unsigned char *in, int bytes) {
    MPI_Request req;
    MPI_Isend(out, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &req);
    MPI_Recv(in, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long iters = 200000;
    int reps = 7;
    int bytes = 8;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atol(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
            bytes = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--iters N] [--reps R] [--bytes B]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (iters < 1 || reps < 1 || bytes < 0 || bytes > 1024) {
        fprintf(stderr, "self_sendrecv: need --iters >= 1, --reps >= 1, 0 <= --bytes <= 1024\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status = 0;
    if (rank == 0) {
        unsigned char out[1024], in[1024];
        double *t = malloc(sizeof(double) * (size_t)reps);
        if (t == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
        for (long i = 0; i < iters / 10 + 1; ++i) { /* warm-up */
            exchange(out, in, bytes);
        }
        for (int r = 0; r < reps; ++r) {
            const double start = MPI_Wtime();
            for (long i = 0; i < iters; ++i) {
                out[0] = (unsigned char)i;
                exchange(out, in, bytes);
                if (bytes > 0 && in[0] != out[0]) status = 2;
            }
            t[r] = (MPI_Wtime() - start) / (double)iters * 1e9;
        }
        double best = t[0];
        for (int r = 1; r < reps; ++r) best = t[r] < best ? t[r] : best;
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        sched_getaffinity(0, sizeof allowed, &allowed);
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        printf("# library: %.*s\n", (int)strcspn(lib, "\n"), lib);
        printf("# rank 0: ran on CPU %d, %d CPUs allowed\n", sched_getcpu(), CPU_COUNT(&allowed));
        printf("# self_sendrecv: %d B to self on MPI_COMM_SELF, %ld exchanges x %d reps\n", bytes, iters, reps);
        printf("isend+recv+wait ns: median %.1f best %.1f%s\n", t[reps / 2], best,
               status != 0 ? "  (DATA CHECK FAILED)" : "");
        free(t);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
