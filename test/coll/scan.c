/*
 * scan.c: MPI_Scan and MPI_Exscan at every size of the test plan, out of
 * place and with MPI_IN_PLACE, on MPI_COMM_WORLD and MPI_COMM_SELF, with
 * count 0: ints with MPI_SUM and MPI_MAX, checked against prefixes computed
 * by hand.  Exscan's result on rank 0 is undefined and is not checked.
 * Rank 0 may pass a NULL receive buffer to MPI_Exscan and MPI_Iexscan
 * (MPI-3.1 5.11.2: not significant there; shmpi only, MPICH 4.0.2 refuses
 * it with "Null buffer pointer").
 */
#include "coll_test.h"

/* What Scan and Exscan return to `rank` for n ints where rank r holds
 * coll_value(r, i, seed): the sums or maxima over ranks 0 to rank (incl)
 * and over ranks 0 to rank - 1 (excl; rank 0's is not used).  One pass
 * gives both: the reference costs n times rank values, so scan_cases
 * computes it once for its four calls. */
static void scan_reference(int *incl, int *excl, size_t n, int use_max, uint64_t seed, int rank)
{
    for (size_t i = 0; i < n; ++i) {
        int64_t want = use_max ? INT32_MIN : 0;
        for (int r = 0; r <= rank; ++r) {
            if (r == rank)
                excl[i] = (int)want;
            const int v = coll_value(r, i, seed);
            if (use_max)
                want = v > want ? v : want;
            else
                want += v;
        }
        incl[i] = (int)want;
    }
}

/* One Scan or Exscan of n ints on MPI_COMM_WORLD where rank r holds
 * coll_value(r, i, seed) + shift, checked element by element against
 * scan_reference's incl and excl for `seed` (a shift of the values by s
 * shifts a maximum by s and a sum over k ranks by k * s). */
static void scan_case(int *send, int *recv, size_t n, int exclusive, int in_place, int use_max, uint64_t seed,
                      int shift, const int *incl, const int *excl, int rank)
{
    for (size_t i = 0; i < n; ++i) {
        send[i] = coll_value(rank, i, seed) + shift;
        recv[i] = in_place ? send[i] : -7;
    }
    guard_set(recv, n * sizeof(int));
    const void *sb = in_place ? MPI_IN_PLACE : send;
    const MPI_Op op = use_max ? MPI_MAX : MPI_SUM;
    if (exclusive)
        CHECK_MPI(MPI_Exscan(sb, recv, (int)n, MPI_INT, op, MPI_COMM_WORLD));
    else
        CHECK_MPI(MPI_Scan(sb, recv, (int)n, MPI_INT, op, MPI_COMM_WORLD));
    const int ranks = exclusive ? rank : rank + 1; /* in the prefix */
    if (ranks > 0) {
        const int *base = exclusive ? excl : incl;
        const int64_t add = use_max ? shift : (int64_t)shift * ranks;
        for (size_t i = 0; i < n; ++i) {
            const int64_t want = base[i] + add;
            CHECKF(recv[i] == want, "%s %s element %zu of %zu is %d, expected %lld (in place %d)",
                   exclusive ? "exscan" : "scan", use_max ? "max" : "sum", i, n, recv[i], (long long)want,
                   in_place);
        }
    }
    CHECK_GUARD(recv, n * sizeof(int));
}

/* Scan and Exscan, out of place and in place, of n ints by `op` (MPI_MAX
 * when use_max, else MPI_SUM): one reference, and values shifted by 1 to 4
 * from call to call, so that no call can pass with the previous one's
 * result. */
static void scan_cases(int *send, int *recv, int *incl, int *excl, size_t n, int use_max, uint64_t seed, int rank)
{
    scan_reference(incl, excl, n, use_max, seed, rank);
    for (int exclusive = 0; exclusive <= 1; ++exclusive)
        for (int in_place = 0; in_place <= 1; ++in_place)
            scan_case(send, recv, n, exclusive, in_place, use_max, seed, 1 + 2 * exclusive + in_place, incl, excl,
                      rank);
}

#ifdef SHMPI
/* MPI_Exscan and MPI_Iexscan of n ints where rank 0 passes recvbuf NULL. */
static void exscan_null_on_rank0(int *send, int *recv, size_t n, uint64_t seed, int rank)
{
    for (size_t i = 0; i < n; ++i)
        send[i] = coll_value(rank, i, seed);
    for (int nonblocking = 0; nonblocking <= 1; ++nonblocking) {
        int *out = rank == 0 ? NULL : recv;
        if (nonblocking) {
            MPI_Request req;
            CHECK_MPI(MPI_Iexscan(send, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
            CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CHECK_MPI(MPI_Exscan(send, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        }
        for (size_t i = 0; rank > 0 && i < n; ++i) {
            int64_t want = 0;
            for (int r = 0; r < rank; ++r)
                want += coll_value(r, i, seed);
            CHECKF(recv[i] == (int)want, "%sexscan with NULL on rank 0: element %zu of %zu is %d, expected %lld",
                   nonblocking ? "i" : "", i, n, recv[i], (long long)want);
        }
    }
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    int *send = check_malloc(max);
    int *recv = check_malloc(max + COLL_GUARD);

    int *incl = check_malloc(max);
    int *excl = check_malloc(max);

    FOR_EACH_SIZE(bytes) {
        for (int use_max = 0; use_max <= 1; ++use_max)
            scan_cases(send, recv, incl, excl, bytes / sizeof(int), use_max, bytes * 29 + (uint64_t)use_max, rank);
    }

    /* Sizes between the plan's, back to back, scans and exscans in turn:
     * shmpi passes the prefixes down its chain of ranks in chunks, and these
     * end in a partial chunk (16388: one int past a slot of cells; 131076:
     * past the cells, into the wide cells where ranks outnumber CPUs;
     * 1048580: one int past them). */
    static const size_t between[] = {16388, 131076, 300000, 1048580};
    for (int rep = 0; rep < 2; ++rep) {
        for (size_t i = 0; i < sizeof between / sizeof between[0]; ++i) {
            const size_t bytes = between[i];
            if (bytes > coll_max_bytes())
                continue;
            const int k = rep * 4 + (int)i;
            const size_t n = bytes / sizeof(int);
            const uint64_t seed = bytes * 31 + (uint64_t)k;
            scan_reference(incl, excl, n, k % 4 == 3, seed, rank);
            scan_case(send, recv, n, k % 2, k % 3 == 1, k % 4 == 3, seed, 0, incl, excl, rank);
        }
    }

#ifdef SHMPI
    static const size_t null_counts[] = {1, 2, 4097, 32769};
    for (size_t i = 0; i < sizeof null_counts / sizeof null_counts[0]; ++i)
        if (null_counts[i] * sizeof(int) <= max)
            exscan_null_on_rank0(send, recv, null_counts[i], 977 + i, rank);
#endif

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
    free(incl);
    free(excl);
    MPI_Finalize();
    return 0;
}
