/*
 * barrier.c: nobody leaves MPI_Barrier before everybody has entered it.
 * Each rank in turn arrives late (it sleeps 20 ms first) and notes when it
 * entered; everyone notes when they left; rank 0 collects the times with
 * point-to-point messages and checks that every exit follows the late
 * entry.  (MPI_Wtime on one machine is one clock.)  Then many barriers in a
 * row, on MPI_COMM_WORLD and MPI_COMM_SELF.
 */
#define _POSIX_C_SOURCE 199309L /* nanosleep */

#include "coll_test.h"

#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();

    for (int late = 0; late < size; ++late) {
        double entered = 0;
        if (rank == late) {
            sleep_ms(20);
            entered = MPI_Wtime();
        }
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        const double left = MPI_Wtime();
        /* Rank 0 gathers (entered of the late rank, left of everyone). */
        if (rank == 0) {
            double late_entry = entered;
            if (late != 0)
                CHECK_MPI(MPI_Recv(&late_entry, 1, MPI_DOUBLE, late, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECKF(left >= late_entry, "rank 0 left at %.6f before rank %d entered at %.6f", left, late,
                   late_entry);
            for (int r = 1; r < size; ++r) {
                double t = 0;
                CHECK_MPI(MPI_Recv(&t, 1, MPI_DOUBLE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECKF(t >= late_entry, "rank %d left at %.6f before rank %d entered at %.6f", r, t, late,
                       late_entry);
            }
        } else {
            if (rank == late)
                CHECK_MPI(MPI_Send(&entered, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Send(&left, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD));
        }
    }

    for (int i = 0; i < 300; ++i) {
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_MPI(MPI_Barrier(MPI_COMM_SELF));
    }
    MPI_Finalize();
    return 0;
}
