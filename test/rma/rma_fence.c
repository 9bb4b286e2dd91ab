/*
 * Active-target RMA with MPI_Win_fence (MPI-3.1 11.5.1): in each epoch every
 * rank puts to its right neighbour, gets from its left neighbour and
 * accumulates (MPI_SUM) into rank 0's buffer; the results are checked after
 * the closing fence.  Several epochs with changing data, on a window of
 * MPI_Win_create (malloc'd memory) and on one of MPI_Win_allocate; the
 * asserts MPI_MODE_NOPRECEDE / MPI_MODE_NOSUCCEED; operations of count 0 and
 * to MPI_PROC_NULL (no-ops); derived datatypes on the origin
 * (MPI_Type_vector) and target (MPI_Type_indexed, MPI_Type_contiguous) sides,
 * checked element by element including the gaps they must not touch.
 */
#include "check.h"

/* The window's layout, in ints (disp_unit is sizeof(int)). */
enum {
    PUT_OFF = 0,   /* 4 ints written by the left neighbour's MPI_Put */
    GET_OFF = 4,   /* 4 ints the right neighbour reads with MPI_Get */
    ACC_OFF = 8,   /* 4 ints summed into on rank 0 */
    DTP_OFF = 12,  /* 16 ints: target of the derived-datatype put */
    DTA_OFF = 28,  /* 12 ints: target of the derived-datatype accumulate on rank 0 */
    DTG_OFF = 40,  /* 16 ints: source of the derived-datatype get */
    WIN_INTS = 56, /* 224 bytes: MPICH 4.0.2 (ch4:ucx) misplaces the windows of ranks
                      above 0 of an MPI_Win_allocate whose size is not a multiple of 16 */
    SENTINEL = -7777
};

static int value(int rank, int round, int i) { return rank * 10000 + round * 100 + i; }

/* Fills the window of `rank` for `round`; the regions written by others are
 * set to the sentinel. */
static void setup(int *buf, int rank, int round)
{
    for (int i = 0; i < WIN_INTS; ++i)
        buf[i] = SENTINEL;
    for (int i = 0; i < 4; ++i)
        buf[GET_OFF + i] = value(rank, round, i);
    for (int i = 0; i < 4; ++i)
        buf[ACC_OFF + i] = 0;
    for (int i = 0; i < 12; ++i)
        buf[DTA_OFF + i] = 0;
    for (int i = 0; i < 16; ++i)
        buf[DTG_OFF + i] = value(rank, round, 50 + i);
}

/* Plain put / get / accumulate, in `rounds` fence epochs. */
static void plain_rounds(MPI_Win win, int *buf, int first_round, int rounds, const char *what)
{
    const int rank = world_rank(), n = world_size();
    int next, prev;
    ring_neighbours(&next, &prev);
    for (int round = first_round; round < first_round + rounds; ++round) {
        setup(buf, rank, round);
        int src[4], got[4], acc[4];
        for (int i = 0; i < 4; ++i) {
            src[i] = value(rank, round, 20 + i);
            got[i] = SENTINEL;
            acc[i] = rank + 1 + round * i;
        }
        /* Odd rounds use the asserts, even ones plain fences. */
        const int odd = round % 2;
        CHECK_MPI(MPI_Win_fence(odd ? MPI_MODE_NOPRECEDE : 0, win));
        CHECK_MPI(MPI_Put(src, 4, MPI_INT, next, PUT_OFF, 4, MPI_INT, win));
        CHECK_MPI(MPI_Get(got, 4, MPI_INT, prev, GET_OFF, 4, MPI_INT, win));
        CHECK_MPI(MPI_Accumulate(acc, 4, MPI_INT, 0, ACC_OFF, 4, MPI_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Win_fence(odd ? MPI_MODE_NOSUCCEED : 0, win));

        for (int i = 0; i < 4; ++i) {
            CHECKF(buf[PUT_OFF + i] == value(prev, round, 20 + i),
                   "%s round %d: put element %d is %d, expected %d", what, round, i,
                   buf[PUT_OFF + i], value(prev, round, 20 + i));
            CHECKF(got[i] == value(prev, round, i),
                   "%s round %d: got element %d is %d, expected %d", what, round, i, got[i],
                   value(prev, round, i));
            /* the origin buffers are unchanged */
            CHECK(src[i] == value(rank, round, 20 + i));
            CHECK(buf[GET_OFF + i] == value(rank, round, i));
        }
        if (rank == 0) {
            for (int i = 0; i < 4; ++i) {
                int want = 0;
                for (int r = 0; r < n; ++r)
                    want += r + 1 + round * i;
                CHECKF(buf[ACC_OFF + i] == want, "%s round %d: sum element %d is %d, expected %d",
                       what, round, i, buf[ACC_OFF + i], want);
            }
        } else {
            for (int i = 0; i < 4; ++i)
                CHECK(buf[ACC_OFF + i] == 0);
        }
    }
}

/* Count-0 operations and operations on MPI_PROC_NULL change nothing, on
 * either side. */
static void noop_epoch(MPI_Win win, int *buf, const char *what)
{
    const int rank = world_rank();
    int next, prev;
    ring_neighbours(&next, &prev);
    setup(buf, rank, 77);
    int src[4] = {1, 2, 3, 4}, got[4] = {5, 6, 7, 8};
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_MPI(MPI_Put(src, 0, MPI_INT, next, PUT_OFF, 0, MPI_INT, win));
    CHECK_MPI(MPI_Get(got, 0, MPI_INT, prev, GET_OFF, 0, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(src, 0, MPI_INT, 0, ACC_OFF, 0, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Put(src, 4, MPI_INT, MPI_PROC_NULL, PUT_OFF, 4, MPI_INT, win));
    CHECK_MPI(MPI_Get(got, 4, MPI_INT, MPI_PROC_NULL, GET_OFF, 4, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(src, 4, MPI_INT, MPI_PROC_NULL, ACC_OFF, 4, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    int want[WIN_INTS];
    setup(want, rank, 77);
    for (int i = 0; i < WIN_INTS; ++i)
        CHECKF(buf[i] == want[i], "%s: no-op epoch changed window element %d to %d (was %d)", what,
               i, buf[i], want[i]);
    for (int i = 0; i < 4; ++i) {
        CHECK(src[i] == i + 1);
        CHECKF(got[i] == i + 5, "%s: get of count 0 / from MPI_PROC_NULL changed element %d to %d",
               what, i, got[i]);
    }
}

/* Derived datatypes: origin vector (3 blocks of 2, stride 4) of 12 ints;
 * target indexed {len 1 at 0, len 3 at 3, len 2 at 9}: 6 ints in 11. */
static void derived_epochs(MPI_Win win, int *buf, const char *what)
{
    const int rank = world_rank(), n = world_size();
    int next, prev;
    ring_neighbours(&next, &prev);
    MPI_Datatype vec, idx, contig6, vec_t;
    CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    int blens[3] = {1, 3, 2}, displs[3] = {0, 3, 9};
    CHECK_MPI(MPI_Type_indexed(3, blens, displs, MPI_INT, &idx));
    CHECK_MPI(MPI_Type_commit(&idx));
    CHECK_MPI(MPI_Type_contiguous(6, MPI_INT, &contig6));
    CHECK_MPI(MPI_Type_commit(&contig6));
    /* a vector of 4 blocks of 1, stride 3 (for the target side of the get) */
    CHECK_MPI(MPI_Type_vector(4, 1, 3, MPI_INT, &vec_t));
    CHECK_MPI(MPI_Type_commit(&vec_t));

    /* The elements of the vector origin, in order: 0,1, 4,5, 8,9. */
    const int vec_elems[6] = {0, 1, 4, 5, 8, 9};
    /* The elements of the indexed target, in order: 0, 3,4,5, 9,10. */
    const int idx_elems[6] = {0, 3, 4, 5, 9, 10};

    for (int round = 0; round < 3; ++round) {
        setup(buf, rank, 200 + round);
        int origin[12], acc_origin[12], got[8];
        for (int i = 0; i < 12; ++i) {
            origin[i] = value(rank, round, 60 + i);
            acc_origin[i] = (rank + 1) * (i + 1) + round;
        }
        for (int i = 0; i < 8; ++i)
            got[i] = SENTINEL;
        CHECK_MPI(MPI_Win_fence(0, win));
        /* vector -> indexed, at DTP_OFF + 2 of the right neighbour */
        CHECK_MPI(MPI_Put(origin, 1, vec, next, DTP_OFF + 2, 1, idx, win));
        /* vector -> contiguous, summed into rank 0 at DTA_OFF + 3 */
        CHECK_MPI(MPI_Accumulate(acc_origin, 1, vec, 0, DTA_OFF + 3, 1, contig6, MPI_SUM, win));
        /* strided target -> contiguous origin: elements 1, 4, 7, 10 of DTG */
        CHECK_MPI(MPI_Get(got + 2, 4, MPI_INT, prev, DTG_OFF + 1, 1, vec_t, win));
        CHECK_MPI(MPI_Win_fence(0, win));

        /* The put region: exactly the six indexed elements changed. */
        for (int i = 0; i < 16; ++i) {
            int want = SENTINEL;
            for (int k = 0; k < 6; ++k)
                if (i == 2 + idx_elems[k])
                    want = value(prev, round, 60 + vec_elems[k]);
            CHECKF(buf[DTP_OFF + i] == want,
                   "%s round %d: derived put, window element %d is %d, expected %d", what, round, i,
                   buf[DTP_OFF + i], want);
        }
        /* The accumulate region on rank 0: elements 3..8 summed, others 0. */
        for (int i = 0; i < 12; ++i) {
            int want = 0;
            if (rank == 0 && i >= 3 && i < 9)
                for (int r = 0; r < n; ++r)
                    want += (r + 1) * (vec_elems[i - 3] + 1) + round;
            CHECKF(buf[DTA_OFF + i] == want,
                   "%s round %d: derived accumulate, element %d is %d, expected %d", what, round, i,
                   buf[DTA_OFF + i], want);
        }
        /* The get: slots 2..5 filled, the rest untouched. */
        for (int i = 0; i < 8; ++i) {
            int want =
                (i >= 2 && i < 6) ? value(prev, 200 + round, 50 + 1 + 3 * (i - 2)) : SENTINEL;
            CHECKF(got[i] == want, "%s round %d: derived get, element %d is %d, expected %d", what,
                   round, i, got[i], want);
        }
        /* the remaining regions are untouched */
        for (int i = 0; i < 4; ++i)
            CHECK(buf[PUT_OFF + i] == SENTINEL);
    }
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Type_free(&idx));
    CHECK_MPI(MPI_Type_free(&contig6));
    CHECK_MPI(MPI_Type_free(&vec_t));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));

    /* MPI_Win_create on malloc'd memory */
    int *buf = check_malloc(WIN_INTS * sizeof(int));
    setup(buf, world_rank(), -1);
    MPI_Win win = MPI_WIN_NULL;
    CHECK_MPI(MPI_Win_create(buf, WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL);
    plain_rounds(win, buf, 0, 5, "Win_create");
    noop_epoch(win, buf, "Win_create");
    derived_epochs(win, buf, "Win_create");
    plain_rounds(win, buf, 10, 2, "Win_create (again)");
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    free(buf);

    /* MPI_Win_allocate */
    int *abuf = NULL;
    CHECK_MPI(MPI_Win_allocate(WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &abuf, &win));
    CHECK(abuf != NULL);
    plain_rounds(win, abuf, 20, 4, "Win_allocate");
    noop_epoch(win, abuf, "Win_allocate");
    derived_epochs(win, abuf, "Win_allocate");
    CHECK_MPI(MPI_Win_free(&win));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
