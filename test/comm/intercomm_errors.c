/*
 * Bad input on and around intercommunicators returns the right error class
 * under MPI_ERRORS_RETURN (set on MPI_COMM_WORLD, the local communicator
 * and the intercommunicator); with shmpi the message also names the
 * function.  Needs two nonempty groups, so with one rank it only
 * initialises and finalises.
 *
 * The groups: world ranks [0, n/3 + 1) and the rest, so at 5 ranks the
 * second group (3 ranks) is larger than its remote group (2): a rank valid
 * in the local group but not in the remote one must be refused.  Every case
 * is called alike by every rank, so a collective that fails fails
 * everywhere, and no rank waits for another that has given up.
 *   MPI_ERR_RANK  MPI_Send, MPI_Isend, MPI_Recv, MPI_Irecv with a rank equal
 *                 to the remote size, or -5; MPI_Intercomm_create with a
 *                 local leader equal to the local size, or -1 (on every rank
 *                 of both groups).
 *   MPI_ERR_ROOT  MPI_Bcast, MPI_Reduce, MPI_Gather, MPI_Ibcast with root
 *                 equal to the remote size; MPI_Bcast with a negative root
 *                 that is none of MPI_ROOT, MPI_PROC_NULL, MPI_ANY_SOURCE.
 *   MPI_ERR_COMM  MPI_Scan, MPI_Exscan, MPI_Iscan, MPI_Iexscan,
 *                 MPI_Cart_create, MPI_Graph_create and
 *                 MPI_Dist_graph_create_adjacent on an intercommunicator;
 *                 MPI_Intercomm_create with an intercommunicator or
 *                 MPI_COMM_NULL as the local communicator;
 *                 MPI_Intercomm_merge(MPI_COMM_NULL).
 * shmpi only (MPICH 4.0.2 does not check these):
 *   MPI_ERR_COMM  MPI_Intercomm_merge on an intracommunicator (MPICH fails
 *                 an internal assertion), MPI_Comm_remote_size and
 *                 MPI_Comm_remote_group on an intracommunicator (MPICH
 *                 returns MPI_SUCCESS).
 *   MPI_ERR_ROOT  MPI_Bcast with root MPI_ANY_SOURCE (MPICH hangs).
 * Afterwards the intercommunicator still works (MPI_Allreduce,
 * MPI_Intercomm_merge).
 */
#include "check.h"

/* The call must fail with class `cls` (with MPICH and shmpi; other MPIs
 * pick other classes at places, so there only the failure is checked); with
 * shmpi its message must name the function `fn`. */
#define EXPECT(call, cls, fn) expect_error((call), (cls), (fn), #call, __LINE__)

static void expect_error(int rc, int cls, const char *fn, const char *call, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
#if defined(SHMPI) || defined(MPICH)
    const int wrong = rc == MPI_SUCCESS || check_error_class(rc) != cls;
#else
    const int wrong = rc == MPI_SUCCESS;
#endif
    if (wrong) {
        fprintf(stderr, "line %d: rank %d: %s returned class %d (%s), expected class %d\n", line,
                world_rank(), call, rc == MPI_SUCCESS ? 0 : check_error_class(rc), msg, cls);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#ifdef SHMPI
    check_error_says(rc, cls, call, fn);
#else
    (void)fn;
#endif
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size(), rank = world_rank();
    if (n < 2) {
        CHECK_MPI(MPI_Finalize());
        return 0;
    }
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    const int split = n / 3 + 1;
    const int side = rank >= split;
    const int lsize = side ? n - split : split, rsize = n - lsize;
    const int remote_leader = side ? 0 : split;
    MPI_Comm local, inter, out;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &local));
    CHECK_MPI(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));

    /* MPI_Intercomm_create with a bad local leader, on every rank. */
    EXPECT(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, remote_leader, 5, &out),
           MPI_ERR_RANK, "MPI_Intercomm_create");
    EXPECT(MPI_Intercomm_create(local, -1, MPI_COMM_WORLD, remote_leader, 5, &out),
           MPI_ERR_RANK, "MPI_Intercomm_create");
    EXPECT(MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, remote_leader, 5, &out),
           MPI_ERR_COMM, "MPI_Intercomm_create");

    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 5, &inter));
    CHECK_MPI(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int rs = -1;
    CHECK_MPI(MPI_Comm_remote_size(inter, &rs));
    CHECK(rs == rsize);

    /* An intercommunicator is no local communicator. */
    EXPECT(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, remote_leader, 6, &out), MPI_ERR_COMM,
           "MPI_Intercomm_create");

    /* Ranks are ranks of the remote group. */
    int x = rank, y = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT(MPI_Send(&x, 1, MPI_INT, rsize, 0, inter), MPI_ERR_RANK, "MPI_Send");
    EXPECT(MPI_Send(&x, 1, MPI_INT, -5, 0, inter), MPI_ERR_RANK, "MPI_Send");
    EXPECT(MPI_Isend(&x, 1, MPI_INT, rsize, 0, inter, &req), MPI_ERR_RANK, "MPI_Isend");
    EXPECT(MPI_Recv(&y, 1, MPI_INT, rsize, 0, inter, MPI_STATUS_IGNORE), MPI_ERR_RANK,
           "MPI_Recv");
    EXPECT(MPI_Irecv(&y, 1, MPI_INT, rsize, 0, inter, &req), MPI_ERR_RANK, "MPI_Irecv");

    /* Roots: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group. */
    int neg = -1;
    while (neg == MPI_ROOT || neg == MPI_PROC_NULL || neg == MPI_ANY_SOURCE)
        --neg;
    int buf[4] = {0, 0, 0, 0};
    EXPECT(MPI_Bcast(buf, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT, "MPI_Bcast");
    EXPECT(MPI_Bcast(buf, 1, MPI_INT, neg, inter), MPI_ERR_ROOT, "MPI_Bcast");
#ifdef SHMPI
    /* MPICH 4.0.2 takes MPI_ANY_SOURCE for a root and hangs. */
    EXPECT(MPI_Bcast(buf, 1, MPI_INT, MPI_ANY_SOURCE, inter), MPI_ERR_ROOT, "MPI_Bcast");
#endif
    EXPECT(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, rsize, inter), MPI_ERR_ROOT, "MPI_Reduce");
    EXPECT(MPI_Gather(&x, 1, MPI_INT, buf, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT,
           "MPI_Gather");
    EXPECT(MPI_Ibcast(buf, 1, MPI_INT, rsize, inter, &req), MPI_ERR_ROOT, "MPI_Ibcast");

    /* Intracommunicator-only operations. */
    EXPECT(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Scan");
    EXPECT(MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Exscan");
    EXPECT(MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM, "MPI_Iscan");
    EXPECT(MPI_Iexscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM, "MPI_Iexscan");
    int dims[1] = {1}, periods[1] = {0}, index[1] = {0}, edges[1] = {0};
    EXPECT(MPI_Cart_create(inter, 1, dims, periods, 0, &out), MPI_ERR_COMM, "MPI_Cart_create");
    EXPECT(MPI_Graph_create(inter, 1, index, edges, 0, &out), MPI_ERR_COMM, "MPI_Graph_create");
    EXPECT(MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out),
           MPI_ERR_COMM, "MPI_Dist_graph_create_adjacent");

    /* Intercommunicator-only operations. */
    EXPECT(MPI_Intercomm_merge(MPI_COMM_NULL, 0, &out), MPI_ERR_COMM, "MPI_Intercomm_merge");
#ifdef SHMPI
    /* MPICH 4.0.2 fails an internal assertion on the first, and returns
     * MPI_SUCCESS for the other two. */
    EXPECT(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out), MPI_ERR_COMM, "MPI_Intercomm_merge");
    EXPECT(MPI_Comm_remote_size(MPI_COMM_WORLD, &y), MPI_ERR_COMM, "MPI_Comm_remote_size");
    MPI_Group g;
    EXPECT(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM, "MPI_Comm_remote_group");
    EXPECT(MPI_Comm_remote_size(local, &y), MPI_ERR_COMM, "MPI_Comm_remote_size");
#endif

    /* Still working: the sum of the remote group's world ranks; a merge. */
    int sum = -1, want = 0;
    for (int w = side ? 0 : split; w < (side ? split : n); ++w)
        want += w;
    CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECKF(sum == want, "allreduce after the errors: %d, expected %d", sum, want);
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(inter, side, &merged));
    int mr = -1;
    CHECK_MPI(MPI_Comm_rank(merged, &mr));
    CHECKF(mr == rank, "merged rank %d", mr);
    CHECK_MPI(MPI_Comm_free(&merged));
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&local));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
