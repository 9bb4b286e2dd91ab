/*
 * p2p_streamed.c: large messages of non-contiguous datatypes, in every
 * pattern where the sender and the receiver do not simply meet.
 *
 * In shmpi a rendezvous message of a non-contiguous type is packed piece by
 * piece into the sender's stream buffer while the receiver unpacks the
 * pieces already there, with flow control in both directions.  The messages
 * here are larger than that buffer (3 MiB of data against 1 MiB; meson also
 * runs this program with SHMPI_STREAM_BYTES=4096, where every message wraps
 * hundreds of times), and the patterns are the ones where such a protocol
 * can lose bytes or hang:
 *
 *   1. vector -> the same vector, -> contiguous doubles, -> an indexed type
 *      with the same signature (matching is by signature, MPI-3.1 3.3);
 *   2. a receive shorter than the message: MPI_ERR_TRUNCATE, nothing
 *      written past the buffer, and the next message between the pair
 *      still arrives;
 *   3. a message that arrives before its receive is posted;
 *   4. two large sends in flight from one rank at once (Isend), received in
 *      the other order;
 *   5. both ranks of a pair sending to each other at the same time
 *      (Isend/Irecv/Waitall, and MPI_Sendrecv);
 *   6. every other rank sending to rank 0 at once, received with
 *      MPI_ANY_SOURCE through posted MPI_Irecv requests;
 *   7. MPI_Ssend, and an MPI_Isend whose request is freed at once.
 *
 * Standard MPI only; passes with MPICH too.
 */
#include "check.h"

#define BLOCK 32                    /* doubles per vector block (256 B) */
#define NBLOCKS (3 * 4096)          /* 3 MiB of data per message */
#define NDATA (BLOCK * NBLOCKS)     /* doubles of data per message */
#define EXTENT (2 * NDATA)          /* the vector's stride is two blocks */

static int rank, size;
static MPI_Datatype vec, idx;

/* The value of data element i of message `msg` from rank `from`: exact in a
 * double, different for every (from, msg, i). */
static double value(int from, int msg, long i)
{
    return (double)((long)from * 100000000L + (long)msg * 10000000L + i);
}

/* Fills the data elements of a vector-layout buffer; the gaps get -1. */
static void fill_vec(double *b, int from, int msg)
{
    for (long k = 0; k < EXTENT; ++k)
        b[k] = -1.0;
    for (long j = 0; j < NBLOCKS; ++j)
        for (long e = 0; e < BLOCK; ++e)
            b[j * 2 * BLOCK + e] = value(from, msg, j * BLOCK + e);
}

/* Checks a vector-layout buffer: data in the blocks, the gaps untouched
 * (`gap`), for the first `ndata` data elements; the rest still `rest`. */
static void check_vec(const double *b, int from, int msg, long ndata, double gap, double rest,
                      const char *what)
{
    for (long j = 0; j < NBLOCKS; ++j) {
        for (long e = 0; e < BLOCK; ++e) {
            const long i = j * BLOCK + e;
            const double want = i < ndata ? value(from, msg, i) : rest;
            CHECKF(b[j * 2 * BLOCK + e] == want, "%s: data element %ld is %.0f, want %.0f", what, i,
                  b[j * 2 * BLOCK + e], want);
            CHECKF(b[j * 2 * BLOCK + BLOCK + e] == gap, "%s: gap element after block %ld overwritten",
                  what, j);
        }
    }
}

static double *alloc_doubles(long n)
{
    double *p = malloc((size_t)n * sizeof(double));
    CHECKF(p != NULL, "out of memory");
    return p;
}

/* Sets every element of a vector-layout buffer to `v`. */
static void clear(double *b, double v)
{
    for (long k = 0; k < EXTENT; ++k)
        b[k] = v;
}

/* Receives message `msg` of rank `from` (tag `tag`, one `vec`) into a
 * cleared buffer and checks it. */
static void recv_and_check(double *rbuf, int from, int tag, int msg, const char *what)
{
    clear(rbuf, -2.0);
    MPI_Recv(rbuf, 1, vec, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_vec(rbuf, from, msg, NDATA, -2.0, 0.0, what);
}

/* 1. One message, three receive layouts. */
static void signatures(double *sbuf, double *rbuf)
{
    if (rank == 0) {
        for (int msg = 0; msg < 3; ++msg) {
            fill_vec(sbuf, 0, msg);
            MPI_Send(sbuf, 1, vec, 1, 10 + msg, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        MPI_Status st;
        int count = 0;
        clear(rbuf, -2.0);
        MPI_Recv(rbuf, 1, vec, 0, 10, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECKF(count == NDATA, "vector -> vector: count %d", count);
        check_vec(rbuf, 0, 0, NDATA, -2.0, 0.0, "vector -> vector");

        MPI_Recv(rbuf, NDATA, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, &st);
        for (long i = 0; i < NDATA; ++i)
            CHECKF(rbuf[i] == value(0, 1, i), "vector -> doubles: element %ld is %.0f", i, rbuf[i]);

        /* idx: the same blocks listed one by one, in reverse order. */
        clear(rbuf, -2.0);
        MPI_Recv(rbuf, 1, idx, 0, 12, MPI_COMM_WORLD, &st);
        for (long j = 0; j < NBLOCKS; ++j) {
            const long at = (NBLOCKS - 1 - j) * 2 * BLOCK;  /* block j of the stream */
            for (long e = 0; e < BLOCK; ++e)
                CHECKF(rbuf[at + e] == value(0, 2, j * BLOCK + e), "vector -> indexed: block %ld element %ld",
                      j, e);
        }
    }
}

/* 2. A receive that holds half of the message. */
static void truncation(double *sbuf, double *rbuf)
{
    if (rank == 0) {
        fill_vec(sbuf, 0, 3);
        MPI_Send(sbuf, 1, vec, 1, 20, MPI_COMM_WORLD);
        fill_vec(sbuf, 0, 4);
        MPI_Send(sbuf, 1, vec, 1, 21, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Status st;
        const long half = NDATA / 2 + 7;
        for (long k = 0; k < NDATA; ++k)
            rbuf[k] = -3.0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        const int rc = MPI_Recv(rbuf, (int)half, MPI_DOUBLE, 0, 20, MPI_COMM_WORLD, &st);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        CHECKF(cls == MPI_ERR_TRUNCATE, "a receive of %ld doubles for %d: error class %d", half, NDATA, cls);
        /* What lands in the buffer is undefined after a truncation (MPICH
         * leaves it alone); nothing may land past it. */
        for (long i = half; i < NDATA; ++i)
            CHECKF(rbuf[i] == -3.0, "truncated receive wrote element %ld past the buffer", i);
        /* The pair goes on: the next message arrives whole. */
        recv_and_check(rbuf, 0, 21, 4, "after truncation");
    }
}

/* 3. The large message is sent before the receive is posted: rank 1 takes
 * a small message with a later tag first. */
static void unexpected(double *sbuf, double *rbuf)
{
    if (rank == 0) {
        MPI_Request req;
        int go = 1;
        fill_vec(sbuf, 0, 5);
        MPI_Isend(sbuf, 1, vec, 1, 30, MPI_COMM_WORLD, &req);
        MPI_Send(&go, 1, MPI_INT, 1, 31, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        int go = 0;
        MPI_Recv(&go, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECKF(go == 1, "go message");
        recv_and_check(rbuf, 0, 30, 5, "unexpected message");
    }
}

/* 4. Two large sends from rank 0 in flight at once, received in reverse. */
static void two_in_flight(double *sbuf, double *rbuf)
{
    if (rank == 0) {
        double *s2 = alloc_doubles(EXTENT);
        MPI_Request reqs[2];
        fill_vec(sbuf, 0, 6);
        fill_vec(s2, 0, 7);
        MPI_Isend(sbuf, 1, vec, 1, 40, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(s2, 1, vec, 1, 41, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        free(s2);
    } else if (rank == 1) {
        double *r2 = alloc_doubles(EXTENT);
        MPI_Request reqs[2];
        for (long k = 0; k < EXTENT; ++k)
            rbuf[k] = r2[k] = -2.0;
        MPI_Irecv(r2, 1, vec, 0, 41, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(rbuf, 1, vec, 0, 40, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        check_vec(rbuf, 0, 6, NDATA, -2.0, 0.0, "first of two in flight");
        check_vec(r2, 0, 7, NDATA, -2.0, 0.0, "second of two in flight");
        free(r2);
    }
}

/* 5. Both ranks of each pair (0,1), (2,3), ... send at the same time. */
static void exchange(double *sbuf, double *rbuf)
{
    const int peer = rank ^ 1;
    if (peer >= size)
        return;
    MPI_Request reqs[2];
    fill_vec(sbuf, rank, 8);
    clear(rbuf, -2.0);
    MPI_Irecv(rbuf, 1, vec, peer, 50, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(sbuf, 1, vec, peer, 50, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    check_vec(rbuf, peer, 8, NDATA, -2.0, 0.0, "Isend/Irecv exchange");

    fill_vec(sbuf, rank, 9);
    clear(rbuf, -2.0);
    MPI_Sendrecv(sbuf, 1, vec, peer, 51, rbuf, 1, vec, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_vec(rbuf, peer, 9, NDATA, -2.0, 0.0, "Sendrecv exchange");
}

/* 6. Everyone sends to rank 0 at once; rank 0 receives from any source. */
static void fan_in(double *sbuf, double *rbuf)
{
    if (size < 3)
        return;
    if (rank != 0) {
        fill_vec(sbuf, rank, 1);
        MPI_Send(sbuf, 1, vec, 0, 60, MPI_COMM_WORLD);
        return;
    }
    const int n = size - 1;
    double **bufs = malloc((size_t)n * sizeof *bufs);
    MPI_Request *reqs = malloc((size_t)n * sizeof *reqs);
    MPI_Status *sts = malloc((size_t)n * sizeof *sts);
    int *seen = calloc((size_t)size, sizeof *seen);
    CHECKF(bufs != NULL && reqs != NULL && sts != NULL && seen != NULL, "out of memory");
    bufs[0] = rbuf;
    for (int i = 1; i < n; ++i)
        bufs[i] = alloc_doubles(EXTENT);
    for (int i = 0; i < n; ++i) {
        for (long k = 0; k < EXTENT; ++k)
            bufs[i][k] = -2.0;
        MPI_Irecv(bufs[i], 1, vec, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Waitall(n, reqs, sts);
    for (int i = 0; i < n; ++i) {
        const int from = sts[i].MPI_SOURCE;
        CHECKF(from >= 1 && from < size && !seen[from], "fan-in: source %d", from);
        seen[from] = 1;
        check_vec(bufs[i], from, 1, NDATA, -2.0, 0.0, "fan-in");
    }
    for (int i = 1; i < n; ++i)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(sts);
    free(seen);
}

/* 7. MPI_Ssend, and a freed MPI_Isend request. */
static void ssend_and_free(double *sbuf, double *rbuf)
{
    if (rank == 0) {
        fill_vec(sbuf, 0, 2);
        MPI_Ssend(sbuf, 1, vec, 1, 70, MPI_COMM_WORLD);
        double *s2 = alloc_doubles(EXTENT);
        MPI_Request req;
        int ack = 0;
        fill_vec(s2, 0, 3);
        MPI_Isend(s2, 1, vec, 1, 71, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        CHECKF(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
        /* The buffer may be reused once the receiver says it has the data. */
        MPI_Recv(&ack, 1, MPI_INT, 1, 72, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECKF(ack == 1, "ack");
        free(s2);
    } else if (rank == 1) {
        int ack = 1;
        recv_and_check(rbuf, 0, 70, 2, "Ssend");
        recv_and_check(rbuf, 0, 71, 3, "freed Isend");
        MPI_Send(&ack, 1, MPI_INT, 0, 72, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Type_vector(NBLOCKS, BLOCK, 2 * BLOCK, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int *lens = malloc(NBLOCKS * sizeof(int));
    int *displs = malloc(NBLOCKS * sizeof(int));
    CHECKF(lens != NULL && displs != NULL, "out of memory");
    for (int j = 0; j < NBLOCKS; ++j) {
        lens[j] = BLOCK;
        displs[j] = (NBLOCKS - 1 - j) * 2 * BLOCK;
    }
    MPI_Type_indexed(NBLOCKS, lens, displs, MPI_DOUBLE, &idx);
    MPI_Type_commit(&idx);
    free(lens);
    free(displs);

    double *sbuf = alloc_doubles(EXTENT);
    double *rbuf = alloc_doubles(EXTENT);
    if (size >= 2) {
        signatures(sbuf, rbuf);
        truncation(sbuf, rbuf);
        unexpected(sbuf, rbuf);
        two_in_flight(sbuf, rbuf);
        ssend_and_free(sbuf, rbuf);
    }
    exchange(sbuf, rbuf);
    fan_in(sbuf, rbuf);

    free(sbuf);
    free(rbuf);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Finalize();
    return 0;
}
