/*
 * bcast.c: MPI_Bcast at every size of the test plan from every root, as
 * bytes and as ints, then at three sizes between them back to back, on
 * MPI_COMM_WORLD and MPI_COMM_SELF, with count 0.
 * Every receiver checks the root's pattern and that nothing past the
 * buffer was written.
 */
#include "coll_test.h"

/* Broadcasts `bytes` of root's pattern (seed `seed`) as bytes; every rank
 * checks the pattern and the guard after it. */
static void bcast_bytes(unsigned char *buf, size_t bytes, int root, uint64_t seed, int rank)
{
    if (rank == root)
        pattern_fill(buf, bytes, root, seed);
    else
        memset(buf, 0xee, bytes);
    guard_set(buf, bytes);
    CHECK_MPI(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD));
    CHECK_PATTERN(buf, bytes, root, seed);
    CHECK_GUARD(buf, bytes);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    unsigned char *buf = check_malloc(coll_max_bytes() + COLL_GUARD);

    FOR_EACH_SIZE(bytes) {
        FOR_EACH_ROOT(root, size, bytes) {
            const uint64_t seed = bytes * 31 + (uint64_t)root;
            bcast_bytes(buf, bytes, root, seed, rank);

            /* The same bytes as ints. */
            const size_t n = bytes / sizeof(int);
            int *ints = (int *)buf;
            for (size_t i = 0; i < n; ++i)
                ints[i] = rank == root ? coll_value(root, i, seed) : -1;
            guard_set(buf, n * sizeof(int));
            CHECK_MPI(MPI_Bcast(ints, (int)n, MPI_INT, root, MPI_COMM_WORLD));
            for (size_t i = 0; i < n; ++i)
                CHECKF(ints[i] == coll_value(root, i, seed), "int %zu of %zu from root %d is %d", i, n,
                       root, ints[i]);
            CHECK_GUARD(buf, n * sizeof(int));
        }
    }

    /* Sizes between the plan's, odd ones included, back to back: where the
     * message outgrows shmpi's collective cells but not its wide cells
     * (ranks outnumbering CPUs), its chunks take an eighth of the message,
     * and consecutive calls of different sizes reuse the same slots. */
    static const size_t between[] = {131073, 300000, 1048581};
    for (int rep = 0; rep < 3; ++rep) {
        for (size_t i = 0; i < sizeof between / sizeof between[0]; ++i) {
            const size_t bytes = between[i];
            if (bytes > coll_max_bytes())
                continue;
            const int root = (rep + (int)i) % 2 == 0 ? 0 : size - 1;
            bcast_bytes(buf, bytes, root, bytes * 7 + (uint64_t)rep, rank);
        }
    }

    /* MPI_COMM_SELF: the caller is the root; the buffer stays as it is. */
    pattern_fill(buf, 1024, rank, 5);
    CHECK_MPI(MPI_Bcast(buf, 1024, MPI_BYTE, 0, MPI_COMM_SELF));
    CHECK_PATTERN(buf, 1024, rank, 5);

    /* Count 0 with a NULL buffer is fine. */
    CHECK_MPI(MPI_Bcast(NULL, 0, MPI_INT, size - 1, MPI_COMM_WORLD));

    free(buf);
    MPI_Finalize();
    return 0;
}
