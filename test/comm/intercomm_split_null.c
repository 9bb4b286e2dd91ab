/*
 * MPI_Comm_split 20,000 times over an intercommunicator, with colors that
 * often leave a process out: MPI_UNDEFINED, or a color that no process of
 * the other group passes.  Either way that process must get MPI_COMM_NULL
 * (MPI-3.1 6.4.2), and the others an intercommunicator of their color.
 *
 * The groups: even and odd world ranks, joined by MPI_Intercomm_create
 * over MPI_COMM_WORLD.  Split i gives world rank w the color
 * (7 i + 3 w) mod 4, 3 meaning MPI_UNDEFINED, and key w; every process
 * works out every other's color, so each one knows what it must get: its
 * local and remote sizes, its rank, and (every 1,000th split) the sum of
 * the remote members' world ranks, which an MPI_Allreduce on the new
 * intercommunicator returns.
 *
 * As in comm_split_null, splits must not slow down as they go: a process
 * that kept the context ids agreed on for the splits it got nothing from
 * would make every later agreement walk them.  The check fails when the
 * last 1,000 splits took over 10 times as long as the first 1,000 and over
 * 2 ms each.  Needs two groups, so with one rank it only initialises and
 * finalises.  (MPICH 4.0.2 passes too, but at 3 ranks on 2 CPUs its splits
 * take 10 ms each, 200 s in all: hence 'mpich_slow'.)
 */
#include "check.h"

enum { SPLITS = 20000, BATCH = 1000, UNDEFINED_COLOR = 3 };

static int color_of(int i, int w)
{
    return (7 * i + 3 * w) % 4;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int me = world_rank();
    const int n = world_size();
    if (n < 2) {
        CHECK_MPI(MPI_Finalize());
        return 0;
    }
    const int parity = me % 2;
    MPI_Comm local, inter;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, parity, me, &local));
    /* The other group's leader is its lowest world rank: 1 or 0. */
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - parity, 7, &inter));
    struct check_pace pace = check_pace_start(SPLITS, BATCH);
    for (int i = 0; i < SPLITS; ++i) {
        const int mine = color_of(i, me);
        int local_size = 0, remote_size = 0, rank = 0, remote_sum = 0;
        for (int w = 0; w < n; ++w) {
            if (color_of(i, w) != mine)
                continue;
            if (w % 2 == parity) {
                ++local_size;
                if (w < me)
                    ++rank;
            } else {
                ++remote_size;
                remote_sum += w;
            }
        }
        const int null_expected = mine == UNDEFINED_COLOR || remote_size == 0;
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_split(inter, mine == UNDEFINED_COLOR ? MPI_UNDEFINED : mine, me, &c));
        CHECKF((c == MPI_COMM_NULL) == null_expected, "split %d (color %d, %d of the other group) gave rank %d %s",
               i, mine, remote_size, me, c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL) {
            int is_inter = 0, got_size = 0, got_remote = 0, got_rank = -1;
            CHECK_MPI(MPI_Comm_test_inter(c, &is_inter));
            CHECK_MPI(MPI_Comm_size(c, &got_size));
            CHECK_MPI(MPI_Comm_remote_size(c, &got_remote));
            CHECK_MPI(MPI_Comm_rank(c, &got_rank));
            CHECKF(is_inter && got_size == local_size && got_remote == remote_size && got_rank == rank,
                   "split %d: inter %d, rank %d of %d with %d remote; expected rank %d of %d with %d remote", i,
                   is_inter, got_rank, got_size, got_remote, rank, local_size, remote_size);
            if (i % BATCH < 4) {
                int sum = -1;
                CHECK_MPI(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
                CHECKF(sum == remote_sum, "split %d: the remote world ranks sum to %d, expected %d", i, sum,
                       remote_sum);
            }
            CHECK_MPI(MPI_Comm_free(&c));
        }
        check_pace_step(&pace, i);
    }
    check_pace_end(&pace, 2e-3, "splits");
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&local));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
