/*
 * p2p_persistent: persistent requests (MPI-3.1 3.9).
 *
 * Ranks form a ring; each sends to the next and receives from the previous.
 *   1. One MPI_Send_init and one MPI_Recv_init, started 50 times with
 *      MPI_Startall and completed with MPI_Waitall: each start sends what
 *      the buffer holds at that moment (the sender changes it between
 *      rounds), of 8 B and of 1 MiB; the handles stay valid between rounds
 *      and MPI_Request_free ends them.
 *   2. The other modes: MPI_Ssend_init, MPI_Rsend_init (the receive is
 *      posted first) and MPI_Bsend_init (with an attached buffer), started
 *      and completed with MPI_Start and MPI_Wait, and MPI_Recv_init with
 *      MPI_ANY_SOURCE and MPI_ANY_TAG.
 *   3. An inactive persistent request completes at once with the empty
 *      status, keeps its handle, and counts as null for MPI_Waitany and
 *      MPI_Testall.
 *   4. A derived datatype freed after MPI_Send_init/MPI_Recv_init still
 *      describes the data at every start.
 */
#include "check.h"

enum { TAG_SMALL = 1, TAG_BIG = 2, TAG_SYNC_MODE = 3, TAG_READY = 4, TAG_READY_GO = 5,
       TAG_BUF = 6, TAG_ANY = 7, TAG_VEC = 8 };
enum { ROUNDS = 50, BIG = 1 << 20, VEC_N = 64 };

static void ring_rounds(int rank, int next, int prev)
{
    long small_out = 0;
    long small_in = -1;
    unsigned char *big_out = check_malloc(BIG);
    unsigned char *big_in = check_malloc(BIG);
    MPI_Request req[4];
    CHECK_MPI(MPI_Send_init(&small_out, 1, MPI_LONG, next, TAG_SMALL, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Recv_init(&small_in, 1, MPI_LONG, prev, TAG_SMALL, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Send_init(big_out, BIG, MPI_BYTE, next, TAG_BIG, MPI_COMM_WORLD, &req[2]));
    CHECK_MPI(MPI_Recv_init(big_in, BIG, MPI_BYTE, prev, TAG_BIG, MPI_COMM_WORLD, &req[3]));
    for (int round = 0; round < ROUNDS; ++round) {
        small_out = (long)rank * 1000 + round;
        if (round % 10 == 0)
            pattern_fill(big_out, BIG, rank, (uint64_t)round);
        CHECK_MPI(MPI_Startall(4, req));
        MPI_Status st[4];
        CHECK_MPI(MPI_Waitall(4, req, st));
        for (int i = 0; i < 4; ++i)
            CHECKF(req[i] != MPI_REQUEST_NULL, "round %d: persistent request %d became null", round, i);
        CHECKF(small_in == (long)prev * 1000 + round, "round %d: received %ld", round, small_in);
        CHECK(st[1].MPI_SOURCE == prev && st[1].MPI_TAG == TAG_SMALL);
        if (round % 10 == 0)
            CHECK_PATTERN(big_in, BIG, prev, (uint64_t)round);
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st[3], MPI_BYTE, &count));
        CHECK(count == BIG);
    }
    for (int i = 0; i < 4; ++i) {
        CHECK_MPI(MPI_Request_free(&req[i]));
        CHECK(req[i] == MPI_REQUEST_NULL);
    }
    free(big_out);
    free(big_in);
}

static void other_modes(int rank, int next, int prev)
{
    int out = 0;
    int in = -1;
    MPI_Request s;
    MPI_Request r;
    MPI_Status st;

    /* Synchronous. */
    CHECK_MPI(MPI_Ssend_init(&out, 1, MPI_INT, next, TAG_SYNC_MODE, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev, TAG_SYNC_MODE, MPI_COMM_WORLD, &r));
    for (int round = 0; round < 3; ++round) {
        out = 10 * rank + round;
        CHECK_MPI(MPI_Start(&r));
        CHECK_MPI(MPI_Start(&s));
        CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&r, &st));
        CHECKF(in == 10 * prev + round, "Ssend_init round %d delivered %d", round, in);
    }
    CHECK_MPI(MPI_Request_free(&s));
    CHECK_MPI(MPI_Request_free(&r));

    /* Ready: the receive is started, then the predecessor is told. */
    CHECK_MPI(MPI_Rsend_init(&out, 1, MPI_INT, next, TAG_READY, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev, TAG_READY, MPI_COMM_WORLD, &r));
    for (int round = 0; round < 3; ++round) {
        CHECK_MPI(MPI_Start(&r));
        MPI_Request go;
        CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, prev, TAG_READY_GO, MPI_COMM_WORLD, &go));
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, next, TAG_READY_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&go, MPI_STATUS_IGNORE));
        out = 20 * rank + round;
        CHECK_MPI(MPI_Start(&s));
        CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECKF(in == 20 * prev + round, "Rsend_init round %d delivered %d", round, in);
    }
    CHECK_MPI(MPI_Request_free(&s));
    CHECK_MPI(MPI_Request_free(&r));

    /* Buffered, received with wildcards. */
    const int pool_size = 3 * ((int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *pool = check_malloc((size_t)pool_size);
    CHECK_MPI(MPI_Buffer_attach(pool, pool_size));
    CHECK_MPI(MPI_Bsend_init(&out, 1, MPI_INT, next, TAG_BUF, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    for (int round = 0; round < 3; ++round) {
        out = 30 * rank + round;
        CHECK_MPI(MPI_Start(&s));
        out = -1; /* buffered: already copied */
        CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Start(&r));
        CHECK_MPI(MPI_Wait(&r, &st));
        CHECKF(in == 30 * prev + round && st.MPI_SOURCE == prev && st.MPI_TAG == TAG_BUF,
               "Bsend_init round %d delivered %d from %d tag %d", round, in, st.MPI_SOURCE,
               st.MPI_TAG);
    }
    CHECK_MPI(MPI_Request_free(&s));
    CHECK_MPI(MPI_Request_free(&r));
    void *back = NULL;
    int back_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    free(pool);
}

static void inactive_requests(int prev)
{
    int in = 0;
    MPI_Request r[2];
    CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev, TAG_SMALL, MPI_COMM_WORLD, &r[0]));
    r[1] = MPI_REQUEST_NULL;
    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Wait(&r[0], &st));
    CHECK(r[0] != MPI_REQUEST_NULL);
    CHECK_EMPTY_STATUS(st);
    int flag = 0;
    status_poison(&st);
    CHECK_MPI(MPI_Test(&r[0], &flag, &st));
    CHECK(flag && r[0] != MPI_REQUEST_NULL);
    CHECK_EMPTY_STATUS(st);
    int index = 0;
    CHECK_MPI(MPI_Waitany(2, r, &index, &st));
    CHECKF(index == MPI_UNDEFINED, "Waitany over inactive and null requests gave index %d", index);
    flag = 0;
    CHECK_MPI(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag);
    CHECK_MPI(MPI_Request_get_status(r[0], &flag, &st));
    CHECK(flag);
    CHECK_EMPTY_STATUS(st);
    CHECK_MPI(MPI_Request_free(&r[0]));
}

static void freed_type(int rank, int next, int prev)
{
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(VEC_N, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int out[2 * VEC_N];
    int in[2 * VEC_N];
    MPI_Request req[2];
    CHECK_MPI(MPI_Send_init(out, 1, vec, next, TAG_VEC, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Recv_init(in, 1, vec, prev, TAG_VEC, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Type_free(&vec));
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 2 * VEC_N; ++i) {
            out[i] = rank * 10000 + round * 1000 + i;
            in[i] = -1;
        }
        CHECK_MPI(MPI_Startall(2, req));
        CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2 * VEC_N; ++i) {
            const int want = i % 2 == 0 ? prev * 10000 + round * 1000 + i : -1;
            CHECKF(in[i] == want, "round %d: element %d is %d, expected %d", round, i, in[i], want);
        }
    }
    CHECK_MPI(MPI_Request_free(&req[0]));
    CHECK_MPI(MPI_Request_free(&req[1]));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    int next = 0;
    int prev = 0;
    ring_neighbours(&next, &prev);
    ring_rounds(rank, next, prev);
    other_modes(rank, next, prev);
    inactive_requests(prev);
    freed_type(rank, next, prev);
    MPI_Finalize();
    return 0;
}
