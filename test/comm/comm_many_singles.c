/*
 * comm_many_singles: many live communicators of one member each.
 *
 * MPI_Comm_create over MPI_COMM_WORLD with the one-member group {i mod n},
 * NCOMM times, all kept: each rank is the member of every n-th one, gets
 * MPI_COMM_NULL for the others, and so holds contexts that interleave
 * with the other ranks'.  (shmpi's agreement on a new context used to
 * climb such interleaved ids one collective round at a time: 1,000 calls
 * at 4 ranks took 4.1 s in the release build, against 0.11 s now in the
 * debug build; NCOMM is 300 to keep the MPICH run short.)  Then
 * MPI_Comm_split into singletons, the same way.  Checks: every
 * communicator a rank gets has size 1 and rank 0, the groups it was made
 * from; a message sent on each to itself arrives on that one only (tags
 * and contents name the communicator); freeing them all leaves
 * MPI_COMM_WORLD working.
 */
#include "check.h"

enum { NCOMM = 300 };

static void check_isolated(MPI_Comm *mine, int count, const char *how)
{
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)count);
    int *got = malloc(sizeof(int) * (size_t)count);
    for (int k = 0; k < count; ++k) {
        int size = 0, rank = -1;
        CHECK_MPI(MPI_Comm_size(mine[k], &size));
        CHECK_MPI(MPI_Comm_rank(mine[k], &rank));
        CHECKF(size == 1 && rank == 0, "%s %d: size %d, rank %d", how, k, size, rank);
        got[k] = -1;
        CHECK_MPI(MPI_Irecv(&got[k], 1, MPI_INT, 0, MPI_ANY_TAG, mine[k], &r[k]));
    }
    for (int k = count; k-- > 0;) CHECK_MPI(MPI_Send(&k, 1, MPI_INT, 0, k % 7, mine[k]));
    for (int k = 0; k < count; ++k) {
        MPI_Status st;
        CHECK_MPI(MPI_Wait(&r[k], &st));
        CHECKF(got[k] == k && st.MPI_TAG == k % 7, "%s %d: got message %d with tag %d", how, k, got[k],
               st.MPI_TAG);
    }
    for (int k = 0; k < count; ++k) CHECK_MPI(MPI_Comm_free(&mine[k]));
    free(r);
    free(got);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = -1, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_Comm *mine = malloc(sizeof(MPI_Comm) * NCOMM);
    int count = 0;
    for (int i = 0; i < NCOMM; ++i) {
        const int member = i % size;
        MPI_Group one;
        MPI_Comm c = MPI_COMM_NULL;
        CHECK_MPI(MPI_Group_incl(world, 1, &member, &one));
        CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, one, &c));
        CHECK_MPI(MPI_Group_free(&one));
        CHECKF((c != MPI_COMM_NULL) == (member == rank), "MPI_Comm_create %d: member %d, and rank %d got %s", i,
               member, rank, c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL) mine[count++] = c;
    }
    check_isolated(mine, count, "MPI_Comm_create");
    count = 0;
    for (int i = 0; i < NCOMM; ++i) {
        const int member = i % size;
        MPI_Comm c = MPI_COMM_NULL;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == member ? 0 : MPI_UNDEFINED, 0, &c));
        CHECKF((c != MPI_COMM_NULL) == (member == rank), "MPI_Comm_split %d: member %d, and rank %d got %s", i,
               member, rank, c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL) mine[count++] = c;
    }
    check_isolated(mine, count, "MPI_Comm_split");
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size);
    CHECK_MPI(MPI_Group_free(&world));
    free(mine);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
