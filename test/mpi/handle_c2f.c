/*
 * handle_c2f: MPI_*_c2f and MPI_*_f2c (MPI-3.1 17.2.4) give back the same
 * handle, for predefined handles and for objects the program made, and
 * distinct objects get distinct Fortran numbers.  The handles that come
 * back work: a communicator and an operation converted there and back
 * carry an Allreduce, a datatype and a request a receive.  A status
 * converted there and back keeps its fields and count, a window and a
 * file converted there and back carry a put and a write, and
 * MPI_Comm_get_parent says no process has a parent.
 */
#include "check.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();

    /* Predefined handles. */
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL);
    CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) != MPI_Comm_c2f(MPI_COMM_SELF));
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
    CHECK(MPI_Type_c2f(MPI_INT) != MPI_Type_c2f(MPI_DOUBLE));
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM);
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY);
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL);
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN);
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL);
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);

    /* Objects the program made. */
    MPI_Comm dup1, dup2;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup1));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
    MPI_Fint f1 = MPI_Comm_c2f(dup1);
    MPI_Fint f2 = MPI_Comm_c2f(dup2);
    CHECK(f1 != f2);
    CHECK(MPI_Comm_c2f(dup1) == f1); /* the same number every time */
    CHECK(f1 != MPI_Comm_c2f(MPI_COMM_WORLD));
    MPI_Comm back = MPI_Comm_f2c(f1);
    CHECK(back == dup1);
    CHECK(MPI_Comm_f2c(f2) == dup2);

    MPI_Datatype pair;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &pair));
    CHECK_MPI(MPI_Type_commit(&pair));
    MPI_Datatype pair_back = MPI_Type_f2c(MPI_Type_c2f(pair));
    CHECK(pair_back == pair);
    MPI_Op op;
    CHECK_MPI(MPI_Op_create(check_sum_ints, 1, &op));
    MPI_Op op_back = MPI_Op_f2c(MPI_Op_c2f(op));
    CHECK(op_back == op);
    MPI_Group group;
    CHECK_MPI(MPI_Comm_group(dup1, &group));
    CHECK(MPI_Group_f2c(MPI_Group_c2f(group)) == group);
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info);

    /* The converted handles work. */
    int in[2] = {rank, 1};
    int out[2] = {-1, -1};
    CHECK_MPI(MPI_Allreduce(in, out, 2, MPI_INT, op_back, back));
    CHECKF(out[0] == size * (size - 1) / 2 && out[1] == size,
           "Allreduce through converted handles gave %d %d", out[0], out[1]);

    MPI_Request req;
    int v[2] = {0, 0}, w[2] = {42, 43};
    CHECK_MPI(MPI_Irecv(v, 1, pair_back, 0, 3, MPI_COMM_SELF, &req));
    MPI_Request req_back = MPI_Request_f2c(MPI_Request_c2f(req));
    CHECK(req_back == req);
    CHECK_MPI(MPI_Send(w, 2, MPI_INT, 0, 3, MPI_COMM_SELF));
    CHECK_MPI(MPI_Wait(&req_back, MPI_STATUS_IGNORE));
    CHECKF(v[0] == 42 && v[1] == 43, "a receive of the converted pair type got %d %d", v[0], v[1]);

    /* A status there and back (MPI_Status_c2f/_f2c, 17.2.5): the public
     * fields sit at MPI_F_SOURCE, _TAG and _ERROR, and the count survives. */
    {
        double d[5] = {1, 2, 3, 4, 5}, e[5];
        MPI_Status st;
        CHECK_MPI(MPI_Sendrecv(d, 3, MPI_DOUBLE, 0, 77, e, 5, MPI_DOUBLE, 0, 77, MPI_COMM_SELF, &st));
        MPI_Fint f[MPI_F_STATUS_SIZE];
        CHECK_MPI(MPI_Status_c2f(&st, f));
        CHECKF(f[MPI_F_SOURCE] == 0 && f[MPI_F_TAG] == 77, "Fortran status: source %d tag %d",
               (int)f[MPI_F_SOURCE], (int)f[MPI_F_TAG]);
        MPI_Status st2;
        CHECK_MPI(MPI_Status_f2c(f, &st2));
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st2, MPI_DOUBLE, &count));
        CHECKF(st2.MPI_SOURCE == 0 && st2.MPI_TAG == 77 && count == 3,
               "status back from Fortran: source %d tag %d count %d", st2.MPI_SOURCE, st2.MPI_TAG, count);
    }

    /* A window there and back: a put through it reaches the next rank. */
    {
        /* (4 ints: MPICH 4.0.2 misplaces the windows of ranks above 0 of
         * an MPI_Win_allocate whose size is not a multiple of 16 bytes, see
         * test/rma/rma_lock.c) */
        int *slot = NULL;
        MPI_Win win, win2;
        CHECK_MPI(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win));
        CHECK_MPI(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win2));
        const MPI_Fint fw = MPI_Win_c2f(win);
        CHECK(fw != MPI_Win_c2f(win2) && fw != MPI_Win_c2f(MPI_WIN_NULL));
        MPI_Win win_back = MPI_Win_f2c(fw);
        CHECK(win_back == win);
        CHECK_MPI(MPI_Win_free(&win2));
        int got = -1, *mine = NULL, flag = 0;
        CHECK_MPI(MPI_Win_get_attr(win_back, MPI_WIN_BASE, &mine, &flag));
        CHECK(flag);
        CHECK_MPI(MPI_Win_fence(0, win_back));
        const int put = 1000 + rank;
        CHECK_MPI(MPI_Put(&put, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win_back));
        CHECK_MPI(MPI_Win_fence(0, win_back));
        got = *mine;
        CHECKF(got == 1000 + (rank + size - 1) % size, "a put through a converted window left %d", got);
        CHECK_MPI(MPI_Win_free(&win_back));
    }

    /* A file there and back: a write through it reads back through the
     * original handle. */
    {
        char path[64];
        snprintf(path, sizeof path, "handle_c2f.%d.tmp", rank);
        MPI_File fh;
        CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
        const MPI_Fint ff = MPI_File_c2f(fh);
        CHECK(ff != MPI_File_c2f(MPI_FILE_NULL));
        MPI_File fh_back = MPI_File_f2c(ff);
        CHECK(fh_back == fh);
        const int wrote = 7000 + rank;
        int read = -1;
        CHECK_MPI(MPI_File_write_at(fh_back, 0, &wrote, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_File_read_at(fh, 0, &read, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECKF(read == wrote, "a write through a converted file handle read back as %d", read);
        CHECK_MPI(MPI_File_close(&fh_back));
    }

    /* No process here was started by MPI_Comm_spawn. */
    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);

    CHECK_MPI(MPI_Info_free(&info));
    CHECK_MPI(MPI_Group_free(&group));
    CHECK_MPI(MPI_Op_free(&op));
    CHECK_MPI(MPI_Type_free(&pair));
    CHECK_MPI(MPI_Comm_free(&dup2));
    CHECK_MPI(MPI_Comm_free(&dup1));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
