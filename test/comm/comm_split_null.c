/*
 * MPI_Comm_split 20,000 times over MPI_COMM_WORLD, every rank passing
 * MPI_UNDEFINED every other time: it must get MPI_COMM_NULL then, and a
 * working communicator of the other ranks otherwise.
 *
 * Splits must not slow down as they go.  A process that kept the context
 * ids of the splits it got nothing from (shmpi did, for a while: every
 * later agreement walked them all) took 20 times as long for its last
 * 1,000 splits as for its first 1,000, and MPICH's comm/ctxsplit (100,000
 * such splits) ran past its time limit.  The check fails when the last
 * 1,000 took over 10 times as long as the first 1,000 and over 1 ms each:
 * far from what a busy machine does to splits of microseconds.
 */
#include "check.h"

enum { SPLITS = 20000, BATCH = 1000 };

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int me = world_rank();
    const int n = world_size();
    struct check_pace pace = check_pace_start(SPLITS, BATCH);
    for (int i = 0; i < SPLITS; ++i) {
        const int undefined = (i + me) % 2 == 0;
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, undefined ? MPI_UNDEFINED : 1, n - me, &c));
        CHECKF((c == MPI_COMM_NULL) == undefined, "split %d gave rank %d %s", i, me,
               c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL) {
            if (i % 4000 < 2) {
                /* Its members are the ranks of my parity of i + rank, in
                 * reverse order of world rank (key n - rank). */
                int size = 0, rank = -1, sum = -1;
                CHECK_MPI(MPI_Comm_size(c, &size));
                CHECK_MPI(MPI_Comm_rank(c, &rank));
                int want_size = 0, want_rank = 0;
                for (int r = 0; r < n; ++r) {
                    if ((i + r) % 2 != 0) {
                        ++want_size;
                        if (r > me)
                            ++want_rank;
                    }
                }
                CHECKF(size == want_size && rank == want_rank, "split %d: rank %d of %d, expected %d of %d", i,
                       rank, size, want_rank, want_size);
                CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
                CHECKF(sum == size * (size - 1) / 2, "split %d: sum of ranks %d", i, sum);
            }
            CHECK_MPI(MPI_Comm_free(&c));
        }
        check_pace_step(&pace, i);
    }
    check_pace_end(&pace, 1e-3, "splits");
    CHECK_MPI(MPI_Finalize());
    return 0;
}
