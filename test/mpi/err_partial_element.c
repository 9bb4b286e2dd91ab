/*
 * err_partial_element: a message whose bytes end inside a basic element of
 * the receive type (3 MPI_CHARs into MPI_INTs) cannot come from a send whose
 * type signature matches; the receive reports MPI_ERR_TYPE under
 * MPI_ERRORS_RETURN, with a message that says so, on every receive path:
 *   - MPI_Recv from a named source (the contiguous fast path) and from
 *     MPI_ANY_SOURCE, MPI_Irecv + MPI_Wait, MPI_Mprobe + MPI_Mrecv,
 *     MPI_Sendrecv;
 *   - a 100001-byte message (past the eager limit) into MPI_INTs;
 *   - a struct {int; double} receive: 6 bytes fail, 4 bytes (the int
 *     alone, a partial struct ending on a basic element) pass with
 *     MPI_Get_elements 1 and MPI_Get_count MPI_UNDEFINED.
 * Each rank receives from its left neighbour; afterwards a matching exchange
 * still works.  shmpi only: MPICH 4.0.2 reports the two-rank case but
 * aborts on an assertion when a rank sends the bytes to itself.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int right, left;

static void expect_partial(int rc, const char *what)
{
    check_error_says(rc, MPI_ERR_TYPE, what, "end inside a basic element");
}

/* Sends `n` MPI_CHARs to the right, nonblocking; returns the request. */
static MPI_Request send_chars(const char *buf, int n, int tag)
{
    MPI_Request q;
    CHECK_MPI(MPI_Isend(buf, n, MPI_CHAR, right, tag, MPI_COMM_WORLD, &q));
    return q;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int me = world_rank();
    const int size = world_size();
    right = (me + 1) % size;
    left = (me + size - 1) % size;
    char three[3] = {1, 2, 3};
    int into[4];
    MPI_Status st;
    MPI_Request q;

    q = send_chars(three, 3, 1);
    expect_partial(MPI_Recv(into, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st), "MPI_Recv from left");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));

    q = send_chars(three, 3, 2);
    expect_partial(MPI_Recv(into, 4, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st),
                   "MPI_Recv from MPI_ANY_SOURCE");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));

    MPI_Request r;
    CHECK_MPI(MPI_Irecv(into, 4, MPI_INT, left, 3, MPI_COMM_WORLD, &r));
    q = send_chars(three, 3, 3);
    expect_partial(MPI_Wait(&r, &st), "MPI_Wait on MPI_Irecv");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));

    q = send_chars(three, 3, 4);
    MPI_Message msg;
    CHECK_MPI(MPI_Mprobe(left, 4, MPI_COMM_WORLD, &msg, &st));
    expect_partial(MPI_Mrecv(into, 4, MPI_INT, &msg, &st), "MPI_Mrecv");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));

    expect_partial(MPI_Sendrecv(three, 3, MPI_CHAR, right, 5, into, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &st),
                   "MPI_Sendrecv");

    /* Past the eager limit. */
    enum { kLarge = 100001 };
    char *large = (char *)malloc(kLarge);
    int *large_in = (int *)malloc((kLarge / 4 + 1) * sizeof(int));
    CHECK(large != NULL && large_in != NULL);
    memset(large, 7, kLarge);
    q = send_chars(large, kLarge, 6);
    expect_partial(MPI_Recv(large_in, kLarge / 4 + 1, MPI_INT, left, 6, MPI_COMM_WORLD, &st),
                   "MPI_Recv of 100001 bytes");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    free(large_in);
    free(large);

    /* A struct {int; double}: ending after the int is a boundary. */
    struct pair {
        int i;
        double d;
    } pairs[2];
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, pair_type;
    CHECK_MPI(MPI_Type_create_struct(2, lens, disps, types, &pair_type));
    CHECK_MPI(MPI_Type_commit(&pair_type));
    char six[6] = {0};
    q = send_chars(six, 6, 7);
    expect_partial(MPI_Recv(pairs, 2, pair_type, left, 7, MPI_COMM_WORLD, &st), "MPI_Recv of 6 bytes into pairs");
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int four = 0x01020304;
    CHECK_MPI(MPI_Isend(&four, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &q));
    CHECK_MPI(MPI_Recv(pairs, 2, pair_type, left, 8, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int n = -2;
    CHECK_MPI(MPI_Get_elements(&st, pair_type, &n));
    CHECKF(n == 1, "MPI_Get_elements of an int into pairs: %d", n);
    CHECK_MPI(MPI_Get_count(&st, pair_type, &n));
    CHECKF(n == MPI_UNDEFINED, "MPI_Get_count of an int into pairs: %d", n);
    CHECKF(pairs[0].i == 0x01020304, "the int received into a pair: %#x", pairs[0].i);
    CHECK_MPI(MPI_Type_free(&pair_type));

    /* A matching exchange still works. */
    int out[4] = {me, me + 1, me + 2, me + 3};
    CHECK_MPI(MPI_Sendrecv(out, 4, MPI_INT, right, 9, into, 4, MPI_INT, left, 9, MPI_COMM_WORLD, &st));
    CHECKF(into[0] == left && into[3] == left + 3, "after the errors, received %d..%d from %d", into[0], into[3],
           left);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
