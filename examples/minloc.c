/*
 * minloc.c: the global minimum of numbers spread over all ranks, with the
 * rank and the index where it lives (example 4.19 of the MPI standard's
 * MINLOC section).
 *
 * Every rank holds a non-empty array of floats.  It finds its local minimum
 * and the minimum's index, encodes the index as myrank*LEN + index, and
 * MPI_Reduce with MPI_MINLOC on MPI_FLOAT_INT pairs gives the root the
 * global minimum and its encoded position.  On equal values MPI_MINLOC keeps
 * the smaller index, so the root gets the first minimum in (rank, index)
 * order.  The values repeat (multiples of 0.5 up to 50; only ranks 2, 5, 8,
 * ... have the smallest, 0.5), so the minimum occurs several times and the
 * tie rule matters.
 *
 * Every rank can recompute every other rank's numbers, so the root checks
 * the answer against a plain search through all of them.
 *
 * Plain MPI: builds unchanged with shmpi, MPICH or Open MPI.
 *   mpicc -o minloc minloc.c && mpirun -n 4 ./minloc
 */
#include <mpi.h>
#include <stdio.h>

#define LEN 1000

/* The numbers of `rank`: how many, and each one. */
static int local_count(int rank) { return LEN - (17 * rank) % LEN; }

static float value(int rank, int i)
{
    unsigned x = (unsigned)rank * 2654435761u ^ (unsigned)i * 40503u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (float)(x % 100u) * 0.5f + (rank % 3 == 2 ? 0.5f : 1.0f);
}

int main(int argc, char **argv)
{
    float val[LEN]; /* local array of values */
    int count;      /* local number of values */
    int myrank, size, minrank, minindex, i;
    const int root = 0;
    float minval;
    struct {
        float value;
        int index;
    } in, out;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &myrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    count = local_count(myrank);
    for (i = 0; i < count; i++)
        val[i] = value(myrank, i);

    /* local minloc */
    in.value = val[0];
    in.index = 0;
    for (i = 1; i < count; i++)
        if (in.value > val[i]) {
            in.value = val[i];
            in.index = i;
        }

    /* global minloc */
    in.index = myrank * LEN + in.index;
    MPI_Reduce(&in, &out, 1, MPI_FLOAT_INT, MPI_MINLOC, root, MPI_COMM_WORLD);

    int status = 0;
    if (myrank == root) {
        minval = out.value;
        minrank = out.index / LEN;
        minindex = out.index % LEN;

        /* The first minimum in (rank, index) order, found the slow way. */
        float want_val = value(0, 0);
        int want_rank = 0, want_index = 0, copies = 0;
        for (int r = 0; r < size; r++)
            for (i = 0; i < local_count(r); i++)
                if (value(r, i) < want_val) {
                    want_val = value(r, i);
                    want_rank = r;
                    want_index = i;
                }
        for (int r = 0; r < size; r++)
            for (i = 0; i < local_count(r); i++)
                copies += value(r, i) == want_val;

        const int ok = minval == want_val && minrank == want_rank && minindex == want_index;
        printf("%d ranks: global minimum %.1f at rank %d, index %d (it occurs %d times; the first "
               "one wins): %s\n",
               size, minval, minrank, minindex, copies, ok ? "ok" : "WRONG");
        if (!ok)
            printf("expected %.1f at rank %d, index %d\n", want_val, want_rank, want_index);
        status = ok ? 0 : 1;
    }
    MPI_Finalize();
    return status;
}
