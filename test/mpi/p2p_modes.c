/*
 * p2p_modes: ready and buffered sends (MPI-3.1 3.4, 3.6).
 *
 * Ranks form a ring; each sends to the next and receives from the previous.
 *   1. MPI_Rsend and MPI_Irsend: the receive is posted first (the receiver
 *      says so with a message), then the ready send delivers the data.
 *   2. MPI_Bsend returns before any receive is posted: every rank buffers
 *      messages of 0 B, 1000 B, 1 MiB and a strided vector to its
 *      successor, and only then receives from its predecessor (with
 *      standard sends of that size this could deadlock; buffered sends
 *      cannot).  The receives see the data as it was when MPI_Bsend returned,
 *      though the sender overwrote its buffers at once.
 *   3. MPI_Ibsend completes without any receive.
 *   4. The buffer's space comes back: 40 rounds of three 64 KiB messages
 *      through a buffer that holds four (from MPI_Alloc_mem), each round
 *      received before the next.
 *   5. A message larger than the buffer fails with MPI_ERR_BUFFER (under
 *      MPI_ERRORS_RETURN) and leaves the buffer usable; MPI_Buffer_detach
 *      hands back the address and size given to MPI_Buffer_attach.
 */
#include "check.h"

enum { TAG_READY = 1, TAG_DATA = 2, TAG_B = 10, TAG_ROUND = 20, TAG_ACK = 21 };
enum { BIG = 1 << 20, MID = 1000, VEC_N = 100, ROUND_BYTES = 64 * 1024, ROUNDS = 40 };

static void ready_sends(int rank, int next, int prev)
{
    int got[2] = {-1, -1};
    MPI_Request r[2];
    CHECK_MPI(MPI_Irecv(&got[0], 1, MPI_INT, prev, TAG_DATA, MPI_COMM_WORLD, &r[0]));
    CHECK_MPI(MPI_Irecv(&got[1], 1, MPI_INT, prev, TAG_DATA + 1, MPI_COMM_WORLD, &r[1]));
    /* Tell the predecessor its ready sends now have their receives. */
    MPI_Request told;
    CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, prev, TAG_READY, MPI_COMM_WORLD, &told));
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, next, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&told, MPI_STATUS_IGNORE));
    int a = 1000 + rank;
    int b = 2000 + rank;
    MPI_Request s;
    CHECK_MPI(MPI_Rsend(&a, 1, MPI_INT, next, TAG_DATA, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Irsend(&b, 1, MPI_INT, next, TAG_DATA + 1, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECKF(got[0] == 1000 + prev && got[1] == 2000 + prev, "ready sends delivered %d and %d",
           got[0], got[1]);
}

static void buffered_sends(int rank, int next, int prev)
{
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(VEC_N, 1, 3, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int vec_bytes = 0;
    int big_bytes = 0;
    int mid_bytes = 0;
    CHECK_MPI(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &vec_bytes));
    CHECK_MPI(MPI_Pack_size(BIG, MPI_BYTE, MPI_COMM_WORLD, &big_bytes));
    CHECK_MPI(MPI_Pack_size(MID, MPI_BYTE, MPI_COMM_WORLD, &mid_bytes));
    /* The standard's sizing rule: each message's packed size plus
     * MPI_BSEND_OVERHEAD; the Ibsend of step 3 included. */
    int size = 0;
    CHECK_MPI(MPI_Pack_size(0, MPI_BYTE, MPI_COMM_WORLD, &size));
    size += big_bytes + mid_bytes + vec_bytes + (int)sizeof(int) + 5 * MPI_BSEND_OVERHEAD;
    char *pool = check_malloc((size_t)size);
    CHECK_MPI(MPI_Buffer_attach(pool, size));

    unsigned char *big = check_malloc(BIG);
    unsigned char *mid = check_malloc(MID);
    int strided[3 * VEC_N];
    pattern_fill(big, BIG, rank, 1);
    pattern_fill(mid, MID, rank, 2);
    for (int i = 0; i < 3 * VEC_N; ++i)
        strided[i] = rank * 100000 + i;
    CHECK_MPI(MPI_Bsend(NULL, 0, MPI_BYTE, next, TAG_B, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Bsend(mid, MID, MPI_BYTE, next, TAG_B + 1, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Bsend(big, BIG, MPI_BYTE, next, TAG_B + 2, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Bsend(strided, 1, vec, next, TAG_B + 3, MPI_COMM_WORLD));
    int lone = 777 + rank;
    MPI_Request ib;
    CHECK_MPI(MPI_Ibsend(&lone, 1, MPI_INT, next, TAG_B + 4, MPI_COMM_WORLD, &ib));
    CHECK_MPI(MPI_Wait(&ib, MPI_STATUS_IGNORE));
    CHECK(ib == MPI_REQUEST_NULL);
    /* The buffers are the caller's again: what was sent must not change. */
    memset(big, 0, BIG);
    memset(mid, 0, MID);
    memset(strided, 0, sizeof strided);
    lone = -1;

    MPI_Status st;
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, prev, TAG_B, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Recv(mid, MID, MPI_BYTE, prev, TAG_B + 1, MPI_COMM_WORLD, &st));
    CHECK_PATTERN(mid, MID, prev, 2);
    CHECK_MPI(MPI_Recv(big, BIG, MPI_BYTE, prev, TAG_B + 2, MPI_COMM_WORLD, &st));
    CHECK_PATTERN(big, BIG, prev, 1);
    int dense[VEC_N];
    CHECK_MPI(MPI_Recv(dense, VEC_N, MPI_INT, prev, TAG_B + 3, MPI_COMM_WORLD, &st));
    for (int i = 0; i < VEC_N; ++i)
        CHECKF(dense[i] == prev * 100000 + 3 * i, "vector element %d is %d", i, dense[i]);
    int got = -1;
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, prev, TAG_B + 4, MPI_COMM_WORLD, &st));
    CHECKF(got == 777 + prev, "Ibsend delivered %d", got);

    void *back = NULL;
    int back_size = -1;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == pool && back_size == size);
    CHECK_MPI(MPI_Type_free(&vec));
    free(pool);
    free(big);
    free(mid);
}

static void space_comes_back(int rank, int next, int prev)
{
    const int size = 4 * (ROUND_BYTES + MPI_BSEND_OVERHEAD);
    char *pool = NULL;
    CHECK_MPI(MPI_Alloc_mem(size, MPI_INFO_NULL, &pool));
    CHECK(pool != NULL);
    CHECK_MPI(MPI_Buffer_attach(pool, size));
    unsigned char *msg = check_malloc(ROUND_BYTES);
    for (int round = 0; round < ROUNDS; ++round) {
        for (int k = 0; k < 3; ++k) {
            pattern_fill(msg, ROUND_BYTES, rank, (uint64_t)(round * 3 + k));
            CHECK_MPI(MPI_Bsend(msg, ROUND_BYTES, MPI_BYTE, next, TAG_ROUND, MPI_COMM_WORLD));
        }
        for (int k = 0; k < 3; ++k) {
            CHECK_MPI(MPI_Recv(msg, ROUND_BYTES, MPI_BYTE, prev, TAG_ROUND, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            CHECK_PATTERN(msg, ROUND_BYTES, prev, (uint64_t)(round * 3 + k));
        }
        /* The successor has received this round's messages once it says so;
         * without the acknowledgement the next round might find the buffer
         * still full, which would be the program's error, not MPI's. */
        MPI_Request ack;
        CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, prev, TAG_ACK, MPI_COMM_WORLD, &ack));
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, next, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&ack, MPI_STATUS_IGNORE));
    }
    void *back = NULL;
    int back_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == pool && back_size == size);
    CHECK_MPI(MPI_Free_mem(pool));
    free(msg);
}

static void too_big(int next)
{
    MPI_Comm comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    const int size = 1000 + MPI_BSEND_OVERHEAD;
    char *pool = check_malloc((size_t)size);
    CHECK_MPI(MPI_Buffer_attach(pool, size));
    char *msg = check_malloc(4000);
    memset(msg, 1, 4000);
    int rc = MPI_Bsend(msg, 4000, MPI_BYTE, next, TAG_B, comm);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "Bsend larger than the buffer returned %d",
           rc);
    /* A message that fits still goes (to ourselves, so no peer is needed). */
    int self = 0;
    CHECK_MPI(MPI_Comm_rank(comm, &self));
    CHECK_MPI(MPI_Bsend(msg, 1000, MPI_BYTE, self, TAG_B + 1, comm));
    CHECK_MPI(MPI_Recv(msg, 1000, MPI_BYTE, self, TAG_B + 1, comm, MPI_STATUS_IGNORE));
    void *back = NULL;
    int back_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == pool && back_size == size);
    free(pool);
    free(msg);
    CHECK_MPI(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    int next = 0;
    int prev = 0;
    ring_neighbours(&next, &prev);
    ready_sends(rank, next, prev);
    buffered_sends(rank, next, prev);
    space_comes_back(rank, next, prev);
    too_big(next);
    MPI_Finalize();
    return 0;
}
