/*
 * seed_4_17.c: example 4.17 of the standard's MINLOC/MAXLOC section (seed
 * 000): each process has 30 doubles; for each of the 30 positions, find the
 * largest value and the rank that holds it, with MPI_Reduce, MPI_DOUBLE_INT
 * and MPI_MAXLOC.  Values repeat across ranks, so ties go to the smallest
 * rank.  Run with every rank as the root.
 */
#include "check.h"

static double ain_of(int rank, int i) { return (double)((rank * 7 + i * 3) % 5) + 0.5 * (i % 2); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int size;
    MPI_Comm_size(comm, &size);

    for (int root = 0; root < size; ++root) {
        /* ---- the example ---- */
        /* each process has an array of 30 doubles: ain[30] */
        double ain[30], aout[30];
        int ind[30];
        struct {
            double val;
            int rank;
        } in[30], out[30];
        int i, myrank;

        MPI_Comm_rank(MPI_COMM_WORLD, &myrank);
        for (i = 0; i < 30; ++i)
            ain[i] = ain_of(myrank, i);
        for (i = 0; i < 30; ++i) {
            in[i].val = ain[i];
            in[i].rank = myrank;
        }
        MPI_Reduce(in, out, 30, MPI_DOUBLE_INT, MPI_MAXLOC, root, comm);
        /* At this point, the answer resides on process root */
        if (myrank == root) {
            /* read ranks out */
            for (i = 0; i < 30; ++i) {
                aout[i] = out[i].val;
                ind[i] = out[i].rank;
            }
            /* ---- the check ---- */
            for (i = 0; i < 30; ++i) {
                double want = ain_of(0, i);
                int owner = 0;
                for (int r = 1; r < size; ++r)
                    if (ain_of(r, i) > want) {
                        want = ain_of(r, i);
                        owner = r;
                    }
                CHECKF(aout[i] == want && ind[i] == owner, "position %d: max %g on rank %d, expected %g on rank %d",
                       i, aout[i], ind[i], want, owner);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
