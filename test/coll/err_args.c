/*
 * err_args.c: bad arguments to the collectives give the error class the
 * standard names, under MPI_ERRORS_RETURN, and leave the library usable.
 * Every rank makes the same bad call, so no rank waits for another; checks
 * that only the root makes use MPI_COMM_SELF, where every rank is the root.
 * Under shmpi the messages also name the function and the bad value.
 *
 * The standard lets an implementation leave such errors undetected, and
 * MPICH's Debian build skips several checks (a negative count in
 * MPI_Allreduce crashes it), so the table marks this program shmpi_only.
 */
#include "coll_test.h"

#if defined(SHMPI)
static void check_message(int code, const char *a, const char *b)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(code, msg, &len));
    CHECKF(strstr(msg, a) != NULL && strstr(msg, b) != NULL, "message \"%s\" should name \"%s\" and \"%s\"", msg,
           a, b);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    int buf[64] = {0}, out[64 * 16] = {0};
    int counts[16], displs[16];
    for (int i = 0; i < 16; ++i) {
        counts[i] = 1;
        displs[i] = i;
    }
    errors_return(MPI_COMM_WORLD);
    errors_return(MPI_COMM_SELF);

    /* ---- roots ---- */
    CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, -7, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatter(buf, 1, MPI_INT, out, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gatherv(buf, 1, MPI_INT, out, counts, displs, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatterv(buf, counts, displs, MPI_INT, out, 1, MPI_INT, -2, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(buf, 1, MPI_INT, 1, MPI_COMM_SELF), MPI_ERR_ROOT);
#if defined(SHMPI)
    {
        const int rc = MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD);
        char want[32];
        snprintf(want, sizeof want, "root %d", size);
        check_message(rc, "MPI_Bcast", want);
    }
#endif

    /* ---- counts ---- */
    {
        /* count * size beyond 64 bits: a type of 2^62 bytes, 4 of them. */
        MPI_Datatype big1, big2;
        CHECK_MPI(MPI_Type_contiguous(1 << 30, MPI_INT, &big1));
        CHECK_MPI(MPI_Type_contiguous(1 << 30, big1, &big2));
        CHECK_MPI(MPI_Type_commit(&big2));
        CHECK_CLASS(MPI_Bcast(buf, 4, big2, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Send(buf, 4, big2, 0, 0, MPI_COMM_SELF), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Recv(buf, 5, big2, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        MPI_Type_free(&big2);
        MPI_Type_free(&big1);
    }
    CHECK_CLASS(MPI_Bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allreduce(buf, out, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgather(buf, -1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoall(buf, 1, MPI_INT, out, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scan(buf, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Reduce_scatter_block(buf, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    {
        int bad[1] = {-4}, zero[1] = {0};
        CHECK_CLASS(MPI_Gatherv(buf, 1, MPI_INT, out, bad, zero, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Scatterv(buf, bad, zero, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Reduce_scatter(buf, out, bad, MPI_INT, MPI_SUM, MPI_COMM_SELF), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Alltoallv(buf, bad, zero, MPI_INT, out, zero, zero, MPI_INT, MPI_COMM_SELF), MPI_ERR_COUNT);
    }

    /* ---- datatypes and operations ---- */
    CHECK_CLASS(MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Allreduce(buf, out, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Gather(buf, 1, MPI_DATATYPE_NULL, out, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(buf, out, 1, MPI_FLOAT, MPI_BXOR, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(buf, out, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);

    /* ---- buffers ---- */
    CHECK_CLASS(MPI_Bcast(NULL, 5, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* Exscan's recvbuf is not significant on rank 0, but rank 0 refuses
     * the same buffer like every other rank rather than going on alone. */
    CHECK_CLASS(MPI_Exscan(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    {
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_CLASS(MPI_Iexscan(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
        CHECK(req == MPI_REQUEST_NULL);
    }
    CHECK_CLASS(MPI_Reduce_local(out, out, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(NULL, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
#if defined(SHMPI)
    /* MPI_Reduce_local's input overlapping its output. */
    CHECK_CLASS(MPI_Reduce_local(out + 1, out, 3, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    check_message(MPI_Reduce_local(out + 1, out, 3, MPI_INT, MPI_SUM), "MPI_Reduce_local", "inoutbuf");
    /* MPI_IN_PLACE where the standard does not allow it. */
    CHECK_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_local(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    if (size > 1) {
        /* At a non-root, sendbuf MPI_IN_PLACE is an error (every rank but 0
         * fails; rank 0 is the root on MPI_COMM_SELF instead). */
        const int me = world_rank();
        if (me != 0)
            CHECK_CLASS(MPI_Reduce(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }
    {
        const int rc = MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check_message(rc, "MPI_Allreduce", "MPI_IN_PLACE");
    }
    /* Overlapping send and receive data: the usual slip is a sendbuf that
     * is this rank's own block of recvbuf, which MPI_IN_PLACE is for.
     * Every rank fails alike on MPI_COMM_WORLD; rooted calls run on
     * MPI_COMM_SELF, so no rank waits for a root that failed. */
    {
        enum { kSpan = 64 };
        int *span = (int *)calloc(kSpan + 4 * (size_t)size, sizeof(int));
        CHECK(span != NULL);
        const int me = world_rank();
        int *counts_w = (int *)malloc((size_t)size * sizeof(int));
        int *displs_w = (int *)malloc((size_t)size * sizeof(int));
        CHECK(counts_w != NULL && displs_w != NULL);
        for (int r = 0; r < size; ++r) {
            counts_w[r] = 2;
            displs_w[r] = 2 * r;
        }
        CHECK_CLASS(MPI_Allgather(&span[me], 1, MPI_INT, span, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Allgatherv(&span[2 * me], 2, MPI_INT, span, counts_w, displs_w, MPI_INT, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Alltoall(span + (size > 1), 1, MPI_INT, span, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Allreduce(span + 1, span, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scan(span, span + 3, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        check_message(MPI_Scan(span, span + 3, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan", "overlaps");
        {
            const int rc = MPI_Allgather(&span[me], 1, MPI_INT, span, 1, MPI_INT, MPI_COMM_WORLD);
            check_message(rc, "MPI_Allgather", "MPI_IN_PLACE");
        }
        int one_count[1] = {2}, at_two[1] = {2}, at_one[1] = {1};
        CHECK_CLASS(MPI_Gather(span + 1, 2, MPI_INT, span, 2, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Gatherv(span + 2, 2, MPI_INT, span, one_count, at_two, MPI_INT, 0, MPI_COMM_SELF),
                    MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scatter(span, 2, MPI_INT, span + 1, 2, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scatterv(span, one_count, at_one, MPI_INT, span + 2, 2, MPI_INT, 0, MPI_COMM_SELF),
                    MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Reduce(span, span + 2, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF), MPI_ERR_BUFFER);
        /* Not refused: data that only meets end to end, and data with gaps
         * that the other side fills (a vector of the odd ints gathered into
         * the even ones). */
        for (int i = 0; i < kSpan; ++i) span[i] = i;
        CHECK_MPI(MPI_Gather(span + 2, 2, MPI_INT, span, 2, MPI_INT, 0, MPI_COMM_SELF));
        CHECKF(span[0] == 2 && span[1] == 3, "an adjacent gather gave %d %d", span[0], span[1]);
        MPI_Datatype every_other;
        CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
        CHECK_MPI(MPI_Type_commit(&every_other));
        for (int i = 0; i < kSpan; ++i) span[i] = i;
        CHECK_MPI(MPI_Gather(span + 1, 1, every_other, span, 1, every_other, 0, MPI_COMM_SELF));
        CHECKF(span[0] == 1 && span[2] == 3 && span[4] == 5 && span[6] == 7 && span[1] == 1 && span[7] == 7,
               "an interleaved gather gave %d %d %d %d", span[0], span[2], span[4], span[6]);
        MPI_Type_free(&every_other);
        free(displs_w);
        free(counts_w);
        free(span);
    }
    /* NULL count and displacement arrays. */
    CHECK_CLASS(MPI_Gatherv(buf, 1, MPI_INT, out, NULL, displs, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Allgatherv(buf, 1, MPI_INT, out, counts, NULL, MPI_INT, MPI_COMM_SELF), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Op_create(NULL, 1, NULL), MPI_ERR_ARG);
#endif

    /* ---- communicators ---- */
    CHECK_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);

    /* The library still works. */
    errors_fatal(MPI_COMM_WORLD);
    errors_fatal(MPI_COMM_SELF);
    buf[0] = 1;
    CHECK_MPI(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out[0] == size);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
