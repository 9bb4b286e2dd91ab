/*
 * reduce.c: MPI_Reduce at every size of the test plan to every root, on
 * MPI_COMM_WORLD and MPI_COMM_SELF, out of place and with MPI_IN_PLACE at
 * the root, with count 0.  Sizes of 4 bytes and more reduce ints with
 * MPI_SUM (exact in any order); 1 byte reduces an unsigned char with
 * MPI_MAX (below 128: MPICH 4.0 compares unsigned types as signed,
 * pmodels/mpich#6083; ops.c covers the whole range).  The root checks against sums computed by hand; the other
 * ranks' receive buffers must stay untouched.
 */
#include "coll_test.h"

static int64_t expected_sum(int size, size_t i, uint64_t seed)
{
    int64_t s = 0;
    for (int r = 0; r < size; ++r)
        s += coll_value(r, i, seed);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    int *send = check_malloc(max + COLL_GUARD);
    int *recv = check_malloc(max + COLL_GUARD);

    FOR_EACH_SIZE(bytes) {
        const size_t n = bytes / sizeof(int);
        FOR_EACH_ROOT(root, size, bytes) {
            for (int in_place = 0; in_place <= 1; ++in_place) {
                if (COLL_SKIP_MPICH_6540(in_place, root, bytes))
                    continue;
                const uint64_t seed = bytes * 7 + (uint64_t)root * 3 + (uint64_t)in_place;
                if (bytes == 1) {
                    /* One byte: MPI_MAX on an unsigned char. */
                    unsigned char mine = (unsigned char)((37 * rank + (int)seed) % 128), out = 0xee;
                    unsigned char *sb = &mine;
                    if (in_place && rank == root) {
                        out = mine;
                        sb = MPI_IN_PLACE;
                    }
                    CHECK_MPI(MPI_Reduce(sb, &out, 1, MPI_UNSIGNED_CHAR, MPI_MAX, root, MPI_COMM_WORLD));
                    unsigned char want = 0;
                    for (int r = 0; r < size; ++r) {
                        unsigned char v = (unsigned char)((37 * r + (int)seed) % 128);
                        if (v > want)
                            want = v;
                    }
                    if (rank == root)
                        CHECKF(out == want, "max is %u, expected %u", out, want);
                    else
                        CHECKF(out == 0xee, "a non-root's recvbuf was written");
                    continue;
                }
                for (size_t i = 0; i < n; ++i) {
                    send[i] = coll_value(rank, i, seed);
                    recv[i] = -7;
                }
                guard_set(recv, n * sizeof(int));
                const void *sb = send;
                if (in_place && rank == root) {
                    memcpy(recv, send, n * sizeof(int));
                    sb = MPI_IN_PLACE;
                }
                CHECK_MPI(MPI_Reduce(sb, recv, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
                if (rank == root) {
                    for (size_t i = 0; i < n; ++i)
                        CHECKF(recv[i] == expected_sum(size, i, seed),
                               "element %zu of %zu at root %d is %d, expected %lld (in place %d)", i, n,
                               root, recv[i], (long long)expected_sum(size, i, seed), in_place);
                } else {
                    for (size_t i = 0; i < n; ++i)
                        CHECKF(recv[i] == -7, "a non-root's recvbuf was written");
                }
                CHECK_GUARD(recv, n * sizeof(int));
            }
        }
    }

    /* MPI_COMM_SELF: the result is the caller's own contribution. */
    for (int i = 0; i < 100; ++i)
        send[i] = coll_value(rank, (size_t)i, 99);
    CHECK_MPI(MPI_Reduce(send, recv, 100, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF));
    CHECK(memcmp(send, recv, 100 * sizeof(int)) == 0);

    /* Count 0. */
    CHECK_MPI(MPI_Reduce(NULL, NULL, 0, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));

    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
