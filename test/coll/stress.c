/*
 * stress.c: 100,000 collectives back to back, mixing the kind of
 * collective, the root, the size (0 to 4 KiB, now and then 64 KiB) and the
 * communicator (MPI_COMM_WORLD, MPI_COMM_SELF, a duplicate of the world and
 * halves of it made by MPI_Comm_split), with every result
 * checked.  Every rank draws the same sequence from the same generator, so
 * the calls match; a mismatch in the library shows as a wrong result, a
 * hang as the test's timeout.  COLL_STRESS_ITERATIONS overrides the count.
 * (Other MPIs run 1,000: their busy-polling ranks are slow when they
 * outnumber the cores.)
 */
#include "coll_test.h"

#if defined(SHMPI)
enum { DEFAULT_ITERATIONS = 100000 };
#else
enum { DEFAULT_ITERATIONS = 1000 };
#endif

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint32_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER, K_ALLGATHER, K_ALLTOALL,
       K_SCAN, K_RSB, NKINDS };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int wrank = world_rank();
    const int wsize = world_size();
    long iterations = DEFAULT_ITERATIONS;
    const char *env = getenv("COLL_STRESS_ITERATIONS");
    if (env != NULL && *env != '\0')
        iterations = strtol(env, NULL, 10);

    const size_t max_ints = 65536 / sizeof(int);
    int *a = check_malloc(sizeof(int) * max_ints * (size_t)wsize);
    int *b = check_malloc(sizeof(int) * max_ints * (size_t)wsize);
    MPI_Comm dup, half;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half));
    const double start = MPI_Wtime();
    long count_by_kind[NKINDS] = {0};

    for (long it = 0; it < iterations; ++it) {
        /* The communicator: MPI_COMM_WORLD, MPI_COMM_SELF, a duplicate of
         * the world, or this rank's half of it (even or odd world ranks:
         * the two halves run the same calls at the same time, apart). */
        const uint32_t pick = next() % 10;
        const MPI_Comm comm = pick < 5 ? MPI_COMM_WORLD : pick < 7 ? MPI_COMM_SELF : pick < 9 ? dup : half;
        int rank = 0, size = 1;
        CHECK_MPI(MPI_Comm_rank(comm, &rank));
        CHECK_MPI(MPI_Comm_size(comm, &size));
        const int kind = (int)(next() % NKINDS);
        const int root = (int)(next() % (uint32_t)size);
        size_t n = next() % 1025; /* ints: up to 4 KiB */
        if (next() % 64 == 0)
            n = max_ints;
        if (kind == K_ALLGATHER || kind == K_ALLTOALL || kind == K_GATHER || kind == K_SCATTER)
            n = n / (size_t)size;
        const int seed = (int)(it & 0xffff);
        ++count_by_kind[kind];

        switch (kind) {
        case K_BARRIER:
            CHECK_MPI(MPI_Barrier(comm));
            break;
        case K_BCAST:
            for (size_t i = 0; i < n; ++i)
                a[i] = rank == root ? seed + (int)i : -1;
            CHECK_MPI(MPI_Bcast(a, (int)n, MPI_INT, root, comm));
            for (size_t i = 0; i < n; ++i)
                CHECKF(a[i] == seed + (int)i, "iteration %ld: bcast element %zu", it, i);
            break;
        case K_REDUCE:
        case K_ALLREDUCE:
            for (size_t i = 0; i < n; ++i) {
                a[i] = rank + (int)i + seed;
                b[i] = -1;
            }
            if (kind == K_REDUCE)
                CHECK_MPI(MPI_Reduce(a, b, (int)n, MPI_INT, MPI_SUM, root, comm));
            else
                CHECK_MPI(MPI_Allreduce(a, b, (int)n, MPI_INT, MPI_SUM, comm));
            if (kind == K_ALLREDUCE || rank == root)
                for (size_t i = 0; i < n; ++i)
                    CHECKF(b[i] == size * ((int)i + seed) + size * (size - 1) / 2,
                           "iteration %ld: %s element %zu", it, kind == K_REDUCE ? "reduce" : "allreduce", i);
            break;
        case K_GATHER:
            for (size_t i = 0; i < n; ++i)
                a[i] = rank * 100000 + (int)i + seed;
            CHECK_MPI(MPI_Gather(a, (int)n, MPI_INT, b, (int)n, MPI_INT, root, comm));
            if (rank == root)
                for (int r = 0; r < size; ++r)
                    for (size_t i = 0; i < n; ++i)
                        CHECKF(b[(size_t)r * n + i] == r * 100000 + (int)i + seed, "iteration %ld: gather", it);
            break;
        case K_SCATTER:
            if (rank == root)
                for (int r = 0; r < size; ++r)
                    for (size_t i = 0; i < n; ++i)
                        a[(size_t)r * n + i] = r * 100000 + (int)i + seed;
            CHECK_MPI(MPI_Scatter(a, (int)n, MPI_INT, b, (int)n, MPI_INT, root, comm));
            for (size_t i = 0; i < n; ++i)
                CHECKF(b[i] == rank * 100000 + (int)i + seed, "iteration %ld: scatter", it);
            break;
        case K_ALLGATHER:
            for (size_t i = 0; i < n; ++i)
                a[i] = rank * 100000 + (int)i + seed;
            CHECK_MPI(MPI_Allgather(a, (int)n, MPI_INT, b, (int)n, MPI_INT, comm));
            for (int r = 0; r < size; ++r)
                for (size_t i = 0; i < n; ++i)
                    CHECKF(b[(size_t)r * n + i] == r * 100000 + (int)i + seed, "iteration %ld: allgather", it);
            break;
        case K_ALLTOALL:
            for (int r = 0; r < size; ++r)
                for (size_t i = 0; i < n; ++i)
                    a[(size_t)r * n + i] = rank * 1000 + r * 10 + (int)(i % 10) + seed;
            CHECK_MPI(MPI_Alltoall(a, (int)n, MPI_INT, b, (int)n, MPI_INT, comm));
            for (int r = 0; r < size; ++r)
                for (size_t i = 0; i < n; ++i)
                    CHECKF(b[(size_t)r * n + i] == r * 1000 + rank * 10 + (int)(i % 10) + seed,
                           "iteration %ld: alltoall", it);
            break;
        case K_SCAN:
            for (size_t i = 0; i < n; ++i)
                a[i] = rank + 1 + (int)i;
            CHECK_MPI(MPI_Scan(a, b, (int)n, MPI_INT, MPI_SUM, comm));
            for (size_t i = 0; i < n; ++i)
                CHECKF(b[i] == (rank + 1) * (rank + 2) / 2 + (rank + 1) * (int)i, "iteration %ld: scan", it);
            break;
        default: { /* Reduce_scatter_block */
            const size_t each = n / (size_t)size;
            for (size_t i = 0; i < each * (size_t)size; ++i)
                a[i] = (int)i + rank;
            CHECK_MPI(MPI_Reduce_scatter_block(a, b, (int)each, MPI_INT, MPI_SUM, comm));
            for (size_t i = 0; i < each; ++i)
                CHECKF(b[i] == size * ((int)((size_t)rank * each + i)) + size * (size - 1) / 2,
                       "iteration %ld: reduce_scatter_block", it);
            break;
        }
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) {
        printf("%ld collectives on %d ranks in %.2f s (", iterations, wsize, MPI_Wtime() - start);
        for (int k = 0; k < NKINDS; ++k)
            printf("%s%ld", k ? " " : "", count_by_kind[k]);
        printf(" by kind)\n");
    }
    CHECK_MPI(MPI_Comm_free(&half));
    CHECK_MPI(MPI_Comm_free(&dup));
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
