/*
 * err_root_refused.c: rooted collectives whose root refuses its own
 * arguments (MPI_ERRORS_RETURN) while the other ranks' arguments are
 * correct, so that they enter the call and wait for a root that never
 * comes.  MPI makes the program erroneous; shmpi must not hang, and must
 * say what happened.  Each case runs on a duplicate of MPI_COMM_WORLD (the
 * duplicate is not used again):
 *   - the root's call fails with the class of its bad argument, then the
 *     root calls MPI_Allreduce on the same communicator;
 *   - every other rank's call returns success (it had nothing to wait for)
 *     or MPI_ERR_OTHER with a message that names the root's other call:
 *     never MPI_ERR_INTERN, which a rank reading a root that is one call
 *     ahead used to get;
 *   - the root's MPI_Allreduce returns success or MPI_ERR_OTHER.
 * The ranks then send their verdicts to rank 0 over MPI_COMM_WORLD, which
 * the broken duplicate does not touch.  With one rank the root only checks
 * its class.  shmpi only: MPICH leaves the other ranks waiting.  It runs
 * under every forced algorithm too: the linear ones compare the call
 * signatures in their point-to-point waits.
 */
#include "coll_test.h"

enum { CASES = 4 };

static const char *case_name(int c)
{
    static const char *names[CASES] = {"MPI_Scatterv", "MPI_Gatherv", "MPI_Scatter", "MPI_Gather"};
    return names[c];
}

/* Case c on comm with root `root`: the root passes a bad argument. */
static int bad_call(int c, int rank, int size, int root, MPI_Comm comm, int *expected)
{
    int buf[64] = {0}, counts[64], displs[64];
    const int is_root = rank == root;
    for (int i = 0; i < size; ++i) counts[i] = is_root && c == 1 ? -1 : 1, displs[i] = i;
    MPI_Datatype bad = MPI_DATATYPE_NULL;
    switch (c) {
    case 0:
        *expected = MPI_ERR_TYPE;
        return MPI_Scatterv(buf, counts, displs, is_root ? bad : MPI_INT, buf + 32, 1, MPI_INT, root, comm);
    case 1:
        *expected = MPI_ERR_COUNT;
        return MPI_Gatherv(buf, 1, MPI_INT, buf + 32, counts, displs, MPI_INT, root, comm);
    case 2:
        *expected = MPI_ERR_COUNT;
        return MPI_Scatter(buf, is_root ? -1 : 1, MPI_INT, buf + 32, 1, MPI_INT, root, comm);
    default:
        *expected = MPI_ERR_TYPE;
        return MPI_Gather(buf, 1, MPI_INT, buf + 32, 1, is_root ? bad : MPI_INT, root, comm);
    }
}

/* 0 when `rc` is success or `allowed`, else 1 (and says why). */
static int judge(int rank, const char *call, int rc, int allowed, const char *must_say)
{
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = check_error_class(rc);
    MPI_Error_string(rc, msg, &len);
    if (cls == allowed && (must_say == NULL || strstr(msg, must_say) != NULL)) return 0;
    fprintf(stderr, "rank %d: %s: class %d (expected %d%s%s): %s\n", rank, call, cls, allowed,
            must_say ? ", saying " : "", must_say ? must_say : "", msg);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    int bad = 0;
    for (int c = 0; c < CASES; ++c) {
        const int root = (c + size - 1) % size;
        MPI_Comm comm;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        errors_return(comm);
        int expected = 0;
        const int rc = bad_call(c, rank, size, root, comm, &expected);
        if (rank == root) {
            /* The root's own error is always reported. */
            if (rc == MPI_SUCCESS) {
                fprintf(stderr, "rank %d: %s took the root's bad argument\n", rank, case_name(c));
                ++bad;
            } else {
                bad += judge(rank, case_name(c), rc, expected, NULL);
            }
            int x = 1;
            bad += judge(rank, "MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, comm),
                         MPI_ERR_OTHER, "another collective call");
        } else {
            bad += judge(rank, case_name(c), rc, MPI_ERR_OTHER, "MPI_Allreduce");
        }
        /* comm stays as it is: its ranks disagree on its calls. */
    }
    if (rank == 0) {
        for (int r = 1; r < size; ++r) {
            int theirs = 0;
            CHECK_MPI(MPI_Recv(&theirs, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            bad += theirs;
        }
        printf("%s: %d problems over %d ranks\n", bad == 0 ? "ok" : "FAILED", bad, size);
    } else {
        CHECK_MPI(MPI_Send(&bad, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    MPI_Finalize();
    return rank == 0 && bad != 0 ? 1 : 0;
}
