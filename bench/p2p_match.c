/*
 * p2p_match: the cost of matching when many receives or many messages
 * wait, from one source, with a different tag each.
 *
 * For each depth D (--depths, default 1,10,100,1000,10000,30000), rank 0
 * receives D messages of 8 bytes from rank 1 in two ways:
 *   posted      rank 0 posts D MPI_Irecv with tags 0 .. D-1, then tells
 *               rank 1, which sends tags D-1 .. 0: each message matches
 *               the last of the receives still posted.
 *   unexpected  rank 1 sends D messages (MPI_Isend) with tags 0 .. D-1,
 *               then tells rank 0, which receives tags D-1 .. 0 with
 *               MPI_Recv: each receive matches the last message waiting.
 * A queue searched in order costs time proportional to D per message.
 * Printed: the median over --reps repetitions of rank 0's time per message
 * (us), from the "go" to the last receive done (posted: the time to post
 * the receives is left out).  The "go" travels on a duplicate communicator.
 *
 * Standard MPI only, so the same file builds with any MPI's mpicc.  Other
 * ranks only take part in MPI_Init and MPI_Finalize.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what) {
    fprintf(stderr, "p2p_match: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One repetition at depth d; returns rank 0's seconds per message. */
static double once(int d, int posted, int rank, MPI_Comm side, double *val, MPI_Request *reqs) {
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (posted) {
            for (int k = 0; k < d; ++k) MPI_Irecv(&val[k], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, &reqs[k]);
            const double t0 = MPI_Wtime();
            MPI_Send(NULL, 0, MPI_BYTE, 1, 0, side);
            MPI_Waitall(d, reqs, MPI_STATUSES_IGNORE);
            t = MPI_Wtime() - t0;
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, side, MPI_STATUS_IGNORE);
            const double t0 = MPI_Wtime();
            for (int k = d - 1; k >= 0; --k) MPI_Recv(&val[k], 1, MPI_DOUBLE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t = MPI_Wtime() - t0;
        }
        for (int k = 0; k < d; ++k) {
            if (val[k] != (double)k) die("a message went to the wrong receive");
        }
    } else if (rank == 1) {
        for (int k = 0; k < d; ++k) val[k] = (double)k;
        if (posted) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, side, MPI_STATUS_IGNORE);
            for (int k = d - 1; k >= 0; --k) MPI_Isend(&val[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &reqs[k]);
        } else {
            for (int k = 0; k < d; ++k) MPI_Isend(&val[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &reqs[k]);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 0, side);
        }
        MPI_Waitall(d, reqs, MPI_STATUSES_IGNORE);
    }
    return t / d;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char depths_arg[256] = "1,10,100,1000,10000,30000";
    int reps = 5;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--depths") == 0 && i + 1 < argc) {
            snprintf(depths_arg, sizeof depths_arg, "%s", argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            if (rank == 0) fprintf(stderr, "usage: %s [--depths D1,D2,...] [--reps R]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (size < 2) die("needs at least 2 ranks");
    if (reps < 1) die("--reps must be at least 1");
    int *tag_ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    MPI_Comm side;
    MPI_Comm_dup(MPI_COMM_WORLD, &side);
    if (rank == 0) printf("# p2p_match: rank 0's time per message (us), median of %d repetitions\n", reps);
    if (rank == 0) printf("%8s %12s %12s\n", "depth", "posted", "unexpected");
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (t == NULL) die("out of memory");
    for (char *p = depths_arg; *p != '\0';) {
        const int d = atoi(p);
        if (d < 1 || (flag && d - 1 > *tag_ub)) die("each depth must be at least 1 and at most MPI_TAG_UB + 1");
        double *val = malloc(sizeof(double) * (size_t)d);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)d);
        if (val == NULL || reqs == NULL) die("out of memory");
        double med[2];
        for (int posted = 1; posted >= 0; --posted) {
            once(d, posted, rank, side, val, reqs); /* warm-up */
            for (int r = 0; r < reps; ++r) t[r] = once(d, posted, rank, side, val, reqs);
            qsort(t, (size_t)reps, sizeof *t, cmp_double);
            med[1 - posted] = t[reps / 2] * 1e6;
        }
        if (rank == 0) printf("%8d %12.3f %12.3f\n", d, med[0], med[1]);
        free(val);
        free(reqs);
        p = strchr(p, ',');
        if (p == NULL) break;
        ++p;
    }
    free(t);
    MPI_Comm_free(&side);
    MPI_Finalize();
    return 0;
}
