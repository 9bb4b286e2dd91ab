/*
 * p2p_self_backlog: a rank posts many receives from itself, then starts as
 * many sends to itself, more bytes than one ring between two ranks holds,
 * and waits for all of them with MPI_Waitall: the wait itself must carry
 * the backlog through, with every rank doing the same at once (more ranks
 * than CPUs, so the waits sleep).  Rounds of 100 messages of 30000 bytes
 * (each several cells, under the eager limit), 200 of 4000, and 60 of a
 * vector type (packed straight into the cells); every received byte is
 * checked against the sender's pattern, and each status names the rank
 * itself and the message's tag.
 *
 *   mpirun -n N p2p_self_backlog [ROUNDS]      (default 1 round)
 */
#include "check.h"

/* `n` messages of `count` elements of `type` (extent `ext` bytes) to
 * ourselves, received into posted receives of the same shape. */
static void backlog(int me, int n, int count, MPI_Datatype type, MPI_Aint ext, int round)
{
    const size_t bytes = (size_t)count * (size_t)ext;
    unsigned char *out = check_malloc(bytes * (size_t)n), *in = check_malloc(bytes * (size_t)n);
    MPI_Request *reqs = check_malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    MPI_Status *st = check_malloc(sizeof(MPI_Status) * 2 * (size_t)n);
    pattern_fill(out, bytes * (size_t)n, me, (uint64_t)round);
    memset(in, 0, bytes * (size_t)n);
    /* Five times over, back to back: the ranks wait at the same time. */
    for (int rep = 0; rep < 5; ++rep) {
        for (int i = 0; i < n; ++i)
            CHECK_MPI(MPI_Irecv(in + (size_t)i * bytes, count, type, me, i, MPI_COMM_WORLD, &reqs[n + i]));
        for (int i = 0; i < n; ++i)
            CHECK_MPI(MPI_Isend(out + (size_t)i * bytes, count, type, me, i, MPI_COMM_WORLD, &reqs[i]));
        CHECK_MPI(MPI_Waitall(2 * n, reqs, st));
    }
    for (int i = 0; i < n; ++i) {
        CHECKF(st[n + i].MPI_SOURCE == me && st[n + i].MPI_TAG == i, "round %d: receive %d has source %d, tag %d",
               round, i, st[n + i].MPI_SOURCE, st[n + i].MPI_TAG);
        int got = -1;
        CHECK_MPI(MPI_Get_count(&st[n + i], type, &got));
        CHECKF(got == count, "round %d: receive %d got %d elements, want %d", round, i, got, count);
    }
    /* A vector leaves gaps: compare the bytes it carries only, by packing
     * both sides. */
    int packed = 0;
    CHECK_MPI(MPI_Pack_size(count * n, type, MPI_COMM_WORLD, &packed));
    unsigned char *po = check_malloc((size_t)packed), *pi = check_malloc((size_t)packed);
    int po_len = 0, pi_len = 0;
    CHECK_MPI(MPI_Pack(out, count * n, type, po, packed, &po_len, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(in, count * n, type, pi, packed, &pi_len, MPI_COMM_WORLD));
    CHECKF(po_len == pi_len && memcmp(po, pi, (size_t)po_len) == 0, "round %d: received bytes differ from the sent",
           round);
    free(po);
    free(pi);
    free(out);
    free(in);
    free(reqs);
    free(st);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(400, 3, 5, MPI_INT, &vec)); /* 4800 bytes of data in 8000 */
    CHECK_MPI(MPI_Type_commit(&vec));
    MPI_Aint lb, vext;
    CHECK_MPI(MPI_Type_get_extent(vec, &lb, &vext));
    const int rounds = argc > 1 ? atoi(argv[1]) : 1;
    for (int round = 0; round < rounds; ++round) {
        backlog(me, 100, 30000, MPI_BYTE, 1, round);
        backlog(me, 200, 4000, MPI_BYTE, 1, round);
        backlog(me, 60, 1, vec, vext, round);
    }
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
