/*
 * allreduce.c: MPI_Allreduce at every size of the test plan, out of place
 * and with MPI_IN_PLACE, on MPI_COMM_WORLD and MPI_COMM_SELF, with count 0:
 * ints with MPI_SUM and doubles holding integers with MPI_MAX (both exact in
 * any order), one unsigned char with MPI_BOR.  Every rank checks against
 * results computed by hand.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    int *send = check_malloc(max + COLL_GUARD);
    int *recv = check_malloc(max + COLL_GUARD);

    /* The expected results, computed once a size for both calls: every
     * rank adds up every rank's values, n times size of them, so the
     * in-place call reuses the reference with every value shifted by one
     * more (a shift by s adds size * s to a sum and s to a maximum). */
    int *want_sum = check_malloc(max);
    double *want_max = check_malloc(max);

    FOR_EACH_SIZE(bytes) {
        const uint64_t seed = bytes * 5;
        const size_t n = bytes / sizeof(int);
        const size_t nd = bytes / sizeof(double);
        for (size_t i = 0; i < n; ++i) {
            int64_t want = 0;
            for (int r = 0; r < size; ++r)
                want += coll_value(r, i, seed);
            want_sum[i] = (int)want;
        }
        for (size_t i = 0; i < nd; ++i) {
            double want = -1e300;
            for (int r = 0; r < size; ++r)
                if (coll_value(r, i, seed + 1) > want)
                    want = coll_value(r, i, seed + 1);
            want_max[i] = want;
        }
        for (int in_place = 0; in_place <= 1; ++in_place) {
            if (bytes == 1) {
                unsigned char mine = (unsigned char)(1u << (rank % 8)), out = 0;
                void *sb = &mine;
                if (in_place) {
                    out = mine;
                    sb = MPI_IN_PLACE;
                }
                CHECK_MPI(MPI_Allreduce(sb, &out, 1, MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD));
                unsigned char want = 0;
                for (int r = 0; r < size; ++r)
                    want |= (unsigned char)(1u << (r % 8));
                CHECKF(out == want, "bor is 0x%02x, expected 0x%02x", out, want);
                continue;
            }
            const int shift = 1 + in_place;
            /* ints, MPI_SUM */
            for (size_t i = 0; i < n; ++i) {
                send[i] = coll_value(rank, i, seed) + shift;
                recv[i] = in_place ? send[i] : -7;
            }
            guard_set(recv, n * sizeof(int));
            CHECK_MPI(MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)n, MPI_INT, MPI_SUM,
                                    MPI_COMM_WORLD));
            for (size_t i = 0; i < n; ++i) {
                const int64_t want = want_sum[i] + (int64_t)size * shift;
                CHECKF(recv[i] == want, "element %zu of %zu is %d, expected %lld (in place %d)", i, n,
                       recv[i], (long long)want, in_place);
            }
            CHECK_GUARD(recv, n * sizeof(int));

            /* doubles, MPI_MAX */
            double *ds = (double *)send, *dr = (double *)recv;
            for (size_t i = 0; i < nd; ++i) {
                ds[i] = coll_value(rank, i, seed + 1) + shift;
                dr[i] = in_place ? ds[i] : -1e300;
            }
            guard_set(dr, nd * sizeof(double));
            CHECK_MPI(MPI_Allreduce(in_place ? MPI_IN_PLACE : ds, dr, (int)nd, MPI_DOUBLE, MPI_MAX,
                                    MPI_COMM_WORLD));
            for (size_t i = 0; i < nd; ++i)
                CHECKF(dr[i] == want_max[i] + shift, "double %zu of %zu is %g, expected %g", i, nd, dr[i],
                       want_max[i] + shift);
            CHECK_GUARD(dr, nd * sizeof(double));
        }
    }
    free(want_sum);
    free(want_max);

    for (int i = 0; i < 100; ++i)
        send[i] = coll_value(rank, (size_t)i, 42);
    CHECK_MPI(MPI_Allreduce(send, recv, 100, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(memcmp(send, recv, 100 * sizeof(int)) == 0);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, recv, 100, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(memcmp(send, recv, 100 * sizeof(int)) == 0);
    CHECK_MPI(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
