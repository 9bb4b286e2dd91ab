/*
 * Dynamic windows (MPI-3.1 11.2.4): MPI_Win_create_dynamic, MPI_Win_attach
 * of malloc'd buffers, their addresses (MPI_Get_address) exchanged with
 * MPI_Allgather, then MPI_Put / MPI_Get / MPI_Accumulate at absolute
 * displacements (MPI_Aint_add; disp_unit 1) under MPI_Win_lock_all; two
 * regions attached at once; MPI_Win_detach of one while the other stays in
 * use; a fresh buffer attached after a detach; MPI_Win_free.
 */
#include "check.h"

enum { M = 32, MAX_RANKS = 64 };

static int value(int rank, int round, int i) { return 1000000 * round + 1000 * rank + i; }

/* The addresses of `p` on all ranks. */
static void all_addresses(void *p, MPI_Aint *out)
{
    MPI_Aint mine;
    CHECK_MPI(MPI_Get_address(p, &mine));
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, out, 1, MPI_AINT, MPI_COMM_WORLD));
}

/* One round on an attached buffer `buf` whose addresses are `addr`: put
 * the first half to the right neighbour, get the second half of the left
 * neighbour's, accumulate into rank 0's element M-1 (M/2 - 1 is never
 * touched remotely). */
static void round_on(MPI_Win win, int *buf, const MPI_Aint *addr, int round)
{
    const int rank = world_rank(), n = world_size();
    int next, prev;
    ring_neighbours(&next, &prev);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* local stores before the others access: synced and fenced by a barrier */
    for (int i = 0; i < M; ++i)
        buf[i] = (i >= M / 2 && i < M - 1) ? value(rank, round, i) : -1;
    buf[M - 1] = 0;
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    int src[M / 2 - 1], got[M / 2 - 1];
    for (int i = 0; i < M / 2 - 1; ++i) {
        src[i] = value(rank, round, 100 + i);
        got[i] = -7;
    }
    const int one = rank + 1;
    CHECK_MPI(MPI_Put(src, M / 2 - 1, MPI_INT, next, addr[next], M / 2 - 1, MPI_INT, win));
    CHECK_MPI(MPI_Get(got, M / 2 - 1, MPI_INT, prev,
                      MPI_Aint_add(addr[prev], (MPI_Aint)(M / 2 * sizeof(int))), M / 2 - 1,
                      MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0,
                             MPI_Aint_add(addr[0], (MPI_Aint)((M - 1) * sizeof(int))), 1, MPI_INT,
                             MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush_all(win));
    for (int i = 0; i < M / 2 - 1; ++i)
        CHECKF(got[i] == value(prev, round, M / 2 + i), "round %d: got[%d] = %d, expected %d",
               round, i, got[i], value(prev, round, M / 2 + i));

    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_sync(win));
    for (int i = 0; i < M / 2 - 1; ++i)
        CHECKF(buf[i] == value(prev, round, 100 + i), "round %d: element %d is %d, expected %d",
               round, i, buf[i], value(prev, round, 100 + i));
    CHECK(buf[M / 2 - 1] == -1);
    for (int i = M / 2; i < M - 1; ++i)
        CHECK(buf[i] == value(rank, round, i));
    const int sum = rank == 0 ? n * (n + 1) / 2 : 0;
    CHECKF(buf[M - 1] == sum, "round %d: the sum is %d, expected %d", round, buf[M - 1], sum);
    CHECK_MPI(MPI_Win_unlock_all(win));
    /* nobody accesses the buffer any more after this */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK(world_size() <= MAX_RANKS);
    MPI_Win win;
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* one buffer */
    int *a = check_malloc(M * sizeof(int));
    MPI_Aint addr_a[MAX_RANKS];
    CHECK_MPI(MPI_Win_attach(win, a, M * sizeof(int)));
    all_addresses(a, addr_a);
    round_on(win, a, addr_a, 0);
    round_on(win, a, addr_a, 1);

    /* a second buffer attached beside it; both in use */
    int *b = check_malloc(M * sizeof(int));
    MPI_Aint addr_b[MAX_RANKS];
    CHECK_MPI(MPI_Win_attach(win, b, M * sizeof(int)));
    all_addresses(b, addr_b);
    round_on(win, b, addr_b, 2);
    round_on(win, a, addr_a, 3);

    /* detach the first; the second still works */
    CHECK_MPI(MPI_Win_detach(win, a));
    round_on(win, b, addr_b, 4);
    free(a);

    /* a fresh buffer after the detach */
    int *c = check_malloc(2 * M * sizeof(int));
    MPI_Aint addr_c[MAX_RANKS];
    CHECK_MPI(MPI_Win_attach(win, c, 2 * M * sizeof(int)));
    all_addresses(c, addr_c);
    round_on(win, c, addr_c, 5);
    /* an interior address of an attached region is a valid target too */
    MPI_Aint addr_c2[MAX_RANKS];
    all_addresses(c + M, addr_c2);
    round_on(win, c + M, addr_c2, 6);
    round_on(win, b, addr_b, 7);

    CHECK_MPI(MPI_Win_detach(win, b));
    CHECK_MPI(MPI_Win_detach(win, c));
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    free(b);
    free(c);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
