/*
 * Shared-memory windows (MPI-3.1 11.2.3, 6.4.2): MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED, then MPI_Win_allocate_shared with a different size
 * and disp_unit on each rank, some of them 0 bytes.  MPI_Win_shared_query
 * gives every rank's segment (size, disp_unit, address); MPI_PROC_NULL
 * gives the segment of the lowest rank with a nonzero size (size 0 when
 * all are empty).  Without the info key alloc_shared_noncontig the
 * segments are contiguous: each begins where the previous nonempty one
 * ends.  Ranks store into and load from each other's segments directly,
 * ordered by MPI_Win_sync and MPI_Barrier inside an MPI_Win_lock_all epoch,
 * and also with MPI_Put / MPI_Get.  The same again with
 * alloc_shared_noncontig=true (no contiguity check then).
 */
#include "check.h"

enum { MAX_RANKS = 64 };

static MPI_Comm shm;
static int srank, ssize;

/* Sizes in bytes, always a multiple of the disp_unit. */
static MPI_Aint size_a(int r) { return (r == 0 || r % 3 == 2) ? 0 : 12 * (r + 1) + 4; }
static MPI_Aint size_b(int r) { return (r % 2 == 1) ? 0 : 8 * r + 20; }
static int unit_of(int r) { return (r % 2 == 1) ? 1 : (int)sizeof(int); }

static unsigned char cell(int owner, int writer, int round, MPI_Aint i)
{
    return (unsigned char)(owner * 31 + writer * 7 + round * 13 + i * 3 + 1);
}

static void run(MPI_Aint (*size_of)(int), int noncontig, const char *what)
{
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    unsigned char *mine = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate_shared(size_of(srank), unit_of(srank), info, shm, &mine, &win));
    if (info != MPI_INFO_NULL)
        CHECK_MPI(MPI_Info_free(&info));

    /* queries of every rank */
    unsigned char *seg[MAX_RANKS];
    int first_nonzero = -1;
    for (int r = 0; r < ssize; ++r) {
        MPI_Aint sz = -1;
        int du = -1;
        seg[r] = NULL;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &seg[r]));
        CHECKF(sz == size_of(r), "%s: rank %d's segment has size %ld, expected %ld", what, r,
               (long)sz, (long)size_of(r));
        CHECKF(du == unit_of(r), "%s: rank %d's disp_unit is %d, expected %d", what, r, du,
               unit_of(r));
        if (sz > 0) {
            CHECK(seg[r] != NULL);
            if (first_nonzero < 0)
                first_nonzero = r;
        }
    }
    if (size_of(srank) > 0)
        CHECKF(seg[srank] == mine, "%s: the query of the own rank gives another address", what);

    /* MPI_PROC_NULL: the lowest rank with a nonzero size */
    MPI_Aint sz = -1;
    int du = -1;
    unsigned char *p = NULL;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
    if (first_nonzero >= 0) {
        CHECKF(sz == size_of(first_nonzero) && du == unit_of(first_nonzero) &&
                   p == seg[first_nonzero],
               "%s: MPI_PROC_NULL query gave size %ld unit %d, expected rank %d's (%ld, %d)", what,
               (long)sz, du, first_nonzero, (long)size_of(first_nonzero), unit_of(first_nonzero));
    } else {
        CHECKF(sz == 0, "%s: MPI_PROC_NULL query of an all-empty window gave size %ld", what,
               (long)sz);
    }

    /* contiguity: each nonempty segment follows the previous nonempty one */
    if (!noncontig) {
        int prev = -1;
        for (int r = 0; r < ssize; ++r) {
            if (size_of(r) == 0)
                continue;
            if (prev >= 0)
                CHECKF(seg[r] == seg[prev] + size_of(prev),
                       "%s: rank %d's segment starts %ld bytes after rank %d's, expected %ld", what,
                       r, (long)(seg[r] - seg[prev]), prev, (long)size_of(prev));
            prev = r;
        }
    }

    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* round 0: each rank fills its own segment by stores; all check all */
    for (MPI_Aint i = 0; i < size_of(srank); ++i)
        mine[i] = cell(srank, srank, 0, i);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(shm));
    CHECK_MPI(MPI_Win_sync(win));
    for (int r = 0; r < ssize; ++r)
        for (MPI_Aint i = 0; i < size_of(r); ++i)
            CHECKF(seg[r][i] == cell(r, r, 0, i),
                   "%s: rank %d's byte %ld loaded as %d, expected %d", what, r, (long)i, seg[r][i],
                   cell(r, r, 0, i));
    CHECK_MPI(MPI_Barrier(shm));

    /* round 1: each rank stores into its right neighbour's segment */
    const int next = (srank + 1) % ssize, prev = (srank + ssize - 1) % ssize;
    for (MPI_Aint i = 0; i < size_of(next); ++i)
        seg[next][i] = cell(next, srank, 1, i);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(shm));
    CHECK_MPI(MPI_Win_sync(win));
    for (MPI_Aint i = 0; i < size_of(srank); ++i)
        CHECKF(mine[i] == cell(srank, prev, 1, i),
               "%s: own byte %ld is %d after the neighbour's stores, expected %d", what, (long)i,
               mine[i], cell(srank, prev, 1, i));
    CHECK_MPI(MPI_Barrier(shm));

    /* round 2: MPI_Put into the left neighbour's segment (in its
     * disp_unit), loads see it; MPI_Get of the right neighbour's */
    if (size_of(prev) > 0) {
        unsigned char src[MAX_RANKS * 16];
        for (MPI_Aint i = 0; i < size_of(prev); ++i)
            src[i] = cell(prev, srank, 2, i);
        /* the last half, at a displacement counted in the target's units */
        const MPI_Aint half = size_of(prev) / 2 / unit_of(prev) * unit_of(prev);
        CHECK_MPI(MPI_Put(src + half, (int)(size_of(prev) - half), MPI_BYTE, prev,
                          half / unit_of(prev), (int)(size_of(prev) - half), MPI_BYTE, win));
        CHECK_MPI(MPI_Put(src, (int)half, MPI_BYTE, prev, 0, (int)half, MPI_BYTE, win));
        CHECK_MPI(MPI_Win_flush(prev, win));
    }
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(shm));
    CHECK_MPI(MPI_Win_sync(win));
    for (MPI_Aint i = 0; i < size_of(srank); ++i)
        CHECKF(mine[i] == cell(srank, next, 2, i),
               "%s: own byte %ld is %d after the neighbour's MPI_Put, expected %d", what, (long)i,
               mine[i], cell(srank, next, 2, i));
    if (size_of(next) > 0) {
        unsigned char got[MAX_RANKS * 16];
        CHECK_MPI(
            MPI_Get(got, (int)size_of(next), MPI_BYTE, next, 0, (int)size_of(next), MPI_BYTE, win));
        CHECK_MPI(MPI_Win_flush(next, win));
        for (MPI_Aint i = 0; i < size_of(next); ++i)
            CHECKF(got[i] == cell(next, (next + 1) % ssize, 2, i),
                   "%s: MPI_Get of rank %d's byte %ld: %d", what, next, (long)i, got[i]);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(shm));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    CHECK(shm != MPI_COMM_NULL);
    CHECK_MPI(MPI_Comm_rank(shm, &srank));
    CHECK_MPI(MPI_Comm_size(shm, &ssize));
    CHECK(ssize >= 1 && ssize <= world_size() && ssize <= MAX_RANKS);
    /* key 0 keeps the order of MPI_COMM_WORLD */
    if (ssize == world_size())
        CHECK(srank == world_rank());

    run(size_a, 0, "contiguous, rank 0 empty");
    run(size_b, 0, "contiguous, rank 0 nonempty");
    run(size_a, 1, "noncontig, rank 0 empty");
    run(size_b, 1, "noncontig, rank 0 nonempty");

    CHECK_MPI(MPI_Comm_free(&shm));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
