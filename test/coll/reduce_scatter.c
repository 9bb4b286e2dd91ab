/*
 * reduce_scatter.c: MPI_Reduce_scatter_block and MPI_Reduce_scatter at every
 * size of the test plan (the whole vector each rank contributes), out of
 * place and with MPI_IN_PLACE, on MPI_COMM_WORLD and MPI_COMM_SELF, with
 * count 0: ints with MPI_SUM, checked against sums computed by hand.
 * Reduce_scatter gives rank r a share that grows with r (rank 0's is empty).
 */
#include "coll_test.h"

static int64_t sum_at(int size, size_t i, uint64_t seed)
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
    int *send = check_malloc(max + (size_t)size * sizeof(int));
    int *recv = check_malloc(max + (size_t)size * sizeof(int) + COLL_GUARD);
    int *counts = check_malloc(sizeof(int) * (size_t)size);

    FOR_EACH_SIZE(bytes) {
        const size_t n = bytes / sizeof(int);
        for (int in_place = 0; in_place <= 1; ++in_place) {
            const uint64_t seed = bytes * 23 + (uint64_t)in_place;

            /* ---- block: n / size each (at least 1 when n > 0) ---- */
            size_t each = n / (size_t)size;
            if (n > 0 && each == 0)
                each = 1;
            const size_t total = each * (size_t)size;
            int *src = in_place ? recv : send;
            for (size_t i = 0; i < total; ++i)
                src[i] = coll_value(rank, i, seed);
            if (!in_place)
                for (size_t i = 0; i < each; ++i)
                    recv[i] = -7;
            guard_set(recv, (in_place ? total : each) * sizeof(int));
            CHECK_MPI(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, recv, (int)each, MPI_INT, MPI_SUM,
                                               MPI_COMM_WORLD));
            for (size_t i = 0; i < each; ++i) {
                const size_t g = (size_t)rank * each + i;
                CHECKF(recv[i] == sum_at(size, g, seed), "element %zu of %zu is %d, expected %lld", i, each,
                       recv[i], (long long)sum_at(size, g, seed));
            }
            CHECK_GUARD(recv, (in_place ? total : each) * sizeof(int));

            if (COLL_SKIP_MPICH_RS_IN_PLACE(in_place, bytes))
                continue;
            /* ---- v: rank r gets (r * n) / (size * (size - 1) / 2) or so:
             * shares proportional to r, the remainder to the last rank ---- */
            size_t assigned = 0;
            const size_t weight = (size_t)size * (size_t)(size - 1) / 2;
            for (int r = 0; r < size; ++r) {
                counts[r] = weight == 0 ? (int)n : (int)((size_t)r * n / weight);
                assigned += (size_t)counts[r];
            }
            counts[size - 1] += (int)(n - assigned);
            size_t first = 0;
            for (int r = 0; r < rank; ++r)
                first += (size_t)counts[r];
            for (size_t i = 0; i < n; ++i)
                src[i] = coll_value(rank, i, seed + 1);
            if (!in_place)
                for (int i = 0; i < counts[rank]; ++i)
                    recv[i] = -7;
            guard_set(recv, (in_place ? n : (size_t)counts[rank]) * sizeof(int));
            CHECK_MPI(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send, recv, counts, MPI_INT, MPI_SUM,
                                         MPI_COMM_WORLD));
            for (int i = 0; i < counts[rank]; ++i)
                CHECKF(recv[i] == sum_at(size, first + (size_t)i, seed + 1), "v: element %d of %d is %d", i,
                       counts[rank], recv[i]);
            CHECK_GUARD(recv, (in_place ? n : (size_t)counts[rank]) * sizeof(int));
        }
    }

    for (int i = 0; i < 10; ++i)
        send[i] = i * rank;
    int one = 10;
    CHECK_MPI(MPI_Reduce_scatter(send, recv, &one, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(memcmp(send, recv, 10 * sizeof(int)) == 0);
    CHECK_MPI(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    free(send);
    free(recv);
    free(counts);
    MPI_Finalize();
    return 0;
}
