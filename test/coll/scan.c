/*
 * scan.c: MPI_Scan and MPI_Exscan at every size of the test plan, out of
 * place and with MPI_IN_PLACE, on MPI_COMM_WORLD and MPI_COMM_SELF, with
 * count 0: ints with MPI_SUM and MPI_MAX, checked against prefixes computed
 * by hand.  Exscan's result on rank 0 is undefined and is not checked.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    int *send = check_malloc(max);
    int *recv = check_malloc(max + COLL_GUARD);

    FOR_EACH_SIZE(bytes) {
        const size_t n = bytes / sizeof(int);
        for (int exclusive = 0; exclusive <= 1; ++exclusive) {
            for (int in_place = 0; in_place <= 1; ++in_place) {
                for (int use_max = 0; use_max <= 1; ++use_max) {
                    const uint64_t seed = bytes * 29 + (uint64_t)(4 * exclusive + 2 * in_place + use_max);
                    for (size_t i = 0; i < n; ++i) {
                        send[i] = coll_value(rank, i, seed);
                        recv[i] = in_place ? send[i] : -7;
                    }
                    guard_set(recv, n * sizeof(int));
                    const void *sb = in_place ? MPI_IN_PLACE : send;
                    const MPI_Op op = use_max ? MPI_MAX : MPI_SUM;
                    if (exclusive)
                        CHECK_MPI(MPI_Exscan(sb, recv, (int)n, MPI_INT, op, MPI_COMM_WORLD));
                    else
                        CHECK_MPI(MPI_Scan(sb, recv, (int)n, MPI_INT, op, MPI_COMM_WORLD));
                    const int last = exclusive ? rank - 1 : rank;
                    if (last >= 0) {
                        for (size_t i = 0; i < n; ++i) {
                            int64_t want = use_max ? INT32_MIN : 0;
                            for (int r = 0; r <= last; ++r) {
                                const int v = coll_value(r, i, seed);
                                if (use_max)
                                    want = v > want ? v : want;
                                else
                                    want += v;
                            }
                            CHECKF(recv[i] == want,
                                   "%s %s element %zu of %zu is %d, expected %lld (in place %d)",
                                   exclusive ? "exscan" : "scan", use_max ? "max" : "sum", i, n, recv[i],
                                   (long long)want, in_place);
                        }
                    }
                    CHECK_GUARD(recv, n * sizeof(int));
                }
            }
        }
    }

    /* The last rank's scan is the whole sum. */
    int one = rank + 1, upto = 0;
    CHECK_MPI(MPI_Scan(&one, &upto, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(upto == (rank + 1) * (rank + 2) / 2);
    if (rank == size - 1)
        CHECK(upto == size * (size + 1) / 2);

    for (int i = 0; i < 10; ++i)
        send[i] = i + rank;
    CHECK_MPI(MPI_Scan(send, recv, 10, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(memcmp(send, recv, 10 * sizeof(int)) == 0);
    CHECK_MPI(MPI_Exscan(send, recv, 10, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK_MPI(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
