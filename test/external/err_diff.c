/*
 * err_diff.c: bad arguments to every kind of MPI call, answered by an error
 * class, for scripts/external-checks.sh's `diff` check.  The same source is
 * built with shmpi's, MPICH's and Open MPI's mpicc and run at the same rank
 * count; diff_compare.py reads the outputs.
 *
 *   mpirun -n N err_diff ROUNDS PREFIX [START]
 *
 * MPI_ERRORS_RETURN is set on MPI_COMM_WORLD, and so on the duplicate of it
 * each case runs on, and on MPI_COMM_SELF, and on each case's window (a
 * file's default is MPI_ERRORS_RETURN already); MPI_T_init_thread is
 * called once, for the tool-interface cases, whose calls return their
 * error class.  Each case of the table below
 * makes one call with one bad argument (a few make a correct call, to check
 * that it is not refused).  Each rank adds to
 * PREFIX.RANK, for each case from START on, a line "== I" and a line
 * "NAME CLASS", where CLASS is "ok" or the name of MPI_Error_class's answer
 * (the constants differ between implementations).  Every rank makes the
 * same calls, so a collective call that one implementation does not refuse
 * still completes.  ROUNDS beyond the table are ignored.  A case that hangs
 * ends the program after 20 seconds (SIGALRM), which the runner takes for a
 * crash.
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "diff_common.h"

static FILE *out;
static int me, np;
static int ibuf[256], jbuf[256];
static double dbuf[64];
static MPI_Datatype vec;         /* committed: 2 blocks of 1 int, stride 2 */
static MPI_Datatype uncommitted; /* the same, not committed */
static MPI_Datatype pair;        /* committed struct {int; double} */
static MPI_Comm cart;            /* 1-D, np ranks, not periodic */
static MPI_Group world_group;
/* The cases' communicator: a new duplicate of MPI_COMM_WORLD for each case,
 * so that a collective call some ranks refused leaves no later case behind
 * (their calls no longer match on it). */
static MPI_Comm world;

/* ---- the cases: each returns the code of its one call ------------------ */

#define CASE(name) static int name(void)

/* Communicators */
CASE(comm_size_null) { int n; return MPI_Comm_size(MPI_COMM_NULL, &n); }
CASE(comm_rank_null) { int n; return MPI_Comm_rank(MPI_COMM_NULL, &n); }
CASE(comm_dup_null) { MPI_Comm c; return MPI_Comm_dup(MPI_COMM_NULL, &c); }
CASE(comm_free_null) { MPI_Comm c = MPI_COMM_NULL; return MPI_Comm_free(&c); }
CASE(comm_compare_null) { int r; return MPI_Comm_compare(world, MPI_COMM_NULL, &r); }
CASE(comm_group_null) { MPI_Group g; return MPI_Comm_group(MPI_COMM_NULL, &g); }
CASE(comm_test_inter_null) { int f; return MPI_Comm_test_inter(MPI_COMM_NULL, &f); }
CASE(comm_remote_size_intra)
{
    /* Erroneous (comm must be an inter-communicator); where it is accepted,
     * the size is part of the answer. */
    int n = -1, rc = MPI_Comm_remote_size(world, &n);
    if (rc == MPI_SUCCESS) fprintf(out, "  size %d\n", n);
    return rc;
}
CASE(comm_remote_group_intra) { MPI_Group g; return MPI_Comm_remote_group(world, &g); }
CASE(comm_split_color_neg)
{
    MPI_Comm c;
    int rc = MPI_Comm_split(world, -2, 0, &c);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    return rc;
}
CASE(comm_split_type_bad)
{
    MPI_Comm c;
    int rc = MPI_Comm_split_type(world, 12345, 0, MPI_INFO_NULL, &c);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    return rc;
}
CASE(comm_create_group_null) { MPI_Comm c; return MPI_Comm_create(world, MPI_GROUP_NULL, &c); }
CASE(comm_set_name_null) { return MPI_Comm_set_name(MPI_COMM_NULL, "x"); }
CASE(comm_get_name_null)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    return MPI_Comm_get_name(MPI_COMM_NULL, name, &len);
}
CASE(intercomm_merge_intra) { MPI_Comm c; return MPI_Intercomm_merge(world, 0, &c); }
CASE(intercomm_create_leader_out)
{
    MPI_Comm c;
    return MPI_Intercomm_create(MPI_COMM_SELF, np + 3, world, 0, 7, &c);
}
CASE(comm_idup_null)
{
    MPI_Comm c;
    MPI_Request r;
    return MPI_Comm_idup(MPI_COMM_NULL, &c, &r);
}
CASE(comm_call_errhandler_null) { return MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER); }

/* Point-to-point */
CASE(send_comm_null) { return MPI_Send(ibuf, 1, MPI_INT, 0, 0, MPI_COMM_NULL); }
CASE(send_count_neg) { return MPI_Send(ibuf, -1, MPI_INT, me, 0, world); }
CASE(send_type_null) { return MPI_Send(ibuf, 1, MPI_DATATYPE_NULL, me, 0, world); }
CASE(send_type_uncommitted) { return MPI_Send(ibuf, 1, uncommitted, me, 0, world); }
CASE(send_dest_size) { return MPI_Send(ibuf, 1, MPI_INT, np, 0, world); }
CASE(send_dest_neg) { return MPI_Send(ibuf, 1, MPI_INT, -5, 0, world); }
CASE(send_dest_any_source) { return MPI_Send(ibuf, 1, MPI_INT, MPI_ANY_SOURCE, 0, world); }
CASE(send_tag_neg) { return MPI_Send(ibuf, 1, MPI_INT, me, -3, world); }
CASE(send_tag_any) { return MPI_Send(ibuf, 1, MPI_INT, me, MPI_ANY_TAG, world); }
CASE(send_buf_null) { return MPI_Send(NULL, 1, MPI_INT, me, 0, world); }
CASE(send_proc_null_ok) { return MPI_Send(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, world); }
CASE(ssend_dest_size) { return MPI_Ssend(ibuf, 1, MPI_INT, np, 0, world); }
CASE(rsend_tag_neg) { return MPI_Rsend(ibuf, 1, MPI_INT, me, -1, world); }
CASE(bsend_no_buffer) { return MPI_Bsend(ibuf, 1, MPI_INT, me, 0, world); }
CASE(recv_count_neg) { return MPI_Recv(ibuf, -1, MPI_INT, me, 0, world, MPI_STATUS_IGNORE); }
CASE(recv_type_null) { return MPI_Recv(ibuf, 1, MPI_DATATYPE_NULL, me, 0, world, MPI_STATUS_IGNORE); }
CASE(recv_source_size) { return MPI_Recv(ibuf, 1, MPI_INT, np, 0, world, MPI_STATUS_IGNORE); }
CASE(recv_tag_neg) { return MPI_Recv(ibuf, 1, MPI_INT, me, -5, world, MPI_STATUS_IGNORE); }
CASE(recv_proc_null_ok) { return MPI_Recv(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, world, MPI_STATUS_IGNORE); }
CASE(isend_count_neg)
{
    MPI_Request r;
    return MPI_Isend(ibuf, -1, MPI_INT, me, 0, world, &r);
}
CASE(irecv_source_neg)
{
    MPI_Request r;
    return MPI_Irecv(ibuf, 1, MPI_INT, -7, 0, world, &r);
}
CASE(sendrecv_recvcount_neg)
{
    return MPI_Sendrecv(ibuf, 1, MPI_INT, me, 0, jbuf, -1, MPI_INT, me, 0, world, MPI_STATUS_IGNORE);
}
CASE(sendrecv_replace_count_neg)
{
    return MPI_Sendrecv_replace(ibuf, -1, MPI_INT, me, 0, me, 0, world, MPI_STATUS_IGNORE);
}
CASE(probe_source_size) { return MPI_Probe(np, 0, world, MPI_STATUS_IGNORE); }
CASE(iprobe_tag_neg)
{
    int f;
    return MPI_Iprobe(me, -2, world, &f, MPI_STATUS_IGNORE);
}
CASE(improbe_comm_null)
{
    int f;
    MPI_Message m;
    return MPI_Improbe(0, 0, MPI_COMM_NULL, &f, &m, MPI_STATUS_IGNORE);
}
CASE(mrecv_no_proc_ok)
{
    MPI_Message m = MPI_MESSAGE_NO_PROC;
    return MPI_Mrecv(ibuf, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
}
CASE(send_init_count_neg)
{
    MPI_Request r;
    return MPI_Send_init(ibuf, -1, MPI_INT, me, 0, world, &r);
}
CASE(recv_init_tag_neg)
{
    MPI_Request r;
    return MPI_Recv_init(ibuf, 1, MPI_INT, me, -4, world, &r);
}
CASE(waitall_count_neg)
{
    MPI_Request r[1] = {MPI_REQUEST_NULL};
    MPI_Status st[1];
    return MPI_Waitall(-1, r, st);
}
CASE(testany_count_neg)
{
    MPI_Request r[1] = {MPI_REQUEST_NULL};
    int i, f;
    return MPI_Testany(-1, r, &i, &f, MPI_STATUS_IGNORE);
}
CASE(wait_request_null_ok)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}
CASE(start_request_null)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Start(&r);
}
CASE(request_free_null)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Request_free(&r);
}
CASE(cancel_request_null)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return MPI_Cancel(&r);
}
CASE(request_get_status_null_ok)
{
    int f;
    return MPI_Request_get_status(MPI_REQUEST_NULL, &f, MPI_STATUS_IGNORE);
}
CASE(grequest_complete_null) { return MPI_Grequest_complete(MPI_REQUEST_NULL); }
CASE(buffer_attach_size_neg) { return MPI_Buffer_attach(ibuf, -1); }
CASE(buffer_attach_twice)
{
    static char b1[4096], b2[4096];
    int rc = MPI_Buffer_attach(b1, sizeof b1);
    if (rc != MPI_SUCCESS) return 0x7fff; /* not what is tested: printed apart */
    rc = MPI_Buffer_attach(b2, sizeof b2);
    void *p;
    int n;
    MPI_Buffer_detach(&p, &n);
    if (rc == MPI_SUCCESS) MPI_Buffer_detach(&p, &n);
    return rc;
}
CASE(get_count_type_null)
{
    MPI_Status st;
    MPI_Recv(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, world, &st);
    int n;
    return MPI_Get_count(&st, MPI_DATATYPE_NULL, &n);
}
CASE(status_set_elements_type_null)
{
    MPI_Status st;
    return MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1);
}
/* Messages to self that do not fit the receive. */
CASE(sendrecv_truncate)
{
    return MPI_Sendrecv(ibuf, 4, MPI_INT, me, 1, jbuf, 2, MPI_INT, me, 1, world, MPI_STATUS_IGNORE);
}
CASE(recv_truncate)
{
    MPI_Request r;
    MPI_Isend(ibuf, 4, MPI_INT, me, 2, world, &r);
    int rc = MPI_Recv(jbuf, 3, MPI_INT, me, 2, world, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc;
}
CASE(wait_truncate)
{
    MPI_Request r;
    MPI_Irecv(jbuf, 1, MPI_INT, me, 3, world, &r);
    MPI_Send(ibuf, 2, MPI_INT, me, 3, world);
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}
CASE(waitall_truncate)
{
    MPI_Request r[2];
    MPI_Status st[2];
    MPI_Irecv(jbuf, 1, MPI_INT, me, 4, world, &r[0]);
    MPI_Irecv(jbuf + 8, 1, MPI_INT, me, 5, world, &r[1]);
    MPI_Send(ibuf, 2, MPI_INT, me, 4, world);
    MPI_Send(ibuf, 1, MPI_INT, me, 5, world);
    int rc = MPI_Waitall(2, r, st);
    if (rc == MPI_ERR_IN_STATUS) {
        /* The statuses must say which failed: print both classes. */
        fprintf(out, "  status %s", error_class_name(st[0].MPI_ERROR));
        fprintf(out, " %s\n", error_class_name(st[1].MPI_ERROR));
    }
    return rc;
}
CASE(mrecv_truncate)
{
    MPI_Request r;
    MPI_Message m;
    MPI_Isend(ibuf, 3, MPI_INT, me, 6, world, &r);
    MPI_Mprobe(me, 6, world, &m, MPI_STATUS_IGNORE);
    int rc = MPI_Mrecv(jbuf, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc;
}
CASE(recv_signature_mismatch_ok)
{
    /* A vector of 2 ints received as 2 ints: the signatures match. */
    MPI_Request r;
    MPI_Isend(ibuf, 1, vec, me, 7, world, &r);
    int rc = MPI_Recv(jbuf, 2, MPI_INT, me, 7, world, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc;
}

/* Collectives */
CASE(barrier_comm_null) { return MPI_Barrier(MPI_COMM_NULL); }
CASE(bcast_comm_null) { return MPI_Bcast(ibuf, 1, MPI_INT, 0, MPI_COMM_NULL); }
CASE(bcast_root_size) { return MPI_Bcast(ibuf, 1, MPI_INT, np, world); }
CASE(bcast_root_neg) { return MPI_Bcast(ibuf, 1, MPI_INT, -1, world); }
CASE(bcast_root_proc_null) { return MPI_Bcast(ibuf, 1, MPI_INT, MPI_PROC_NULL, world); }
CASE(bcast_count_neg) { return MPI_Bcast(ibuf, -1, MPI_INT, 0, world); }
CASE(bcast_type_null) { return MPI_Bcast(ibuf, 1, MPI_DATATYPE_NULL, 0, world); }
CASE(bcast_type_uncommitted) { return MPI_Bcast(ibuf, 1, uncommitted, 0, world); }
CASE(bcast_buf_null) { return MPI_Bcast(NULL, 1, MPI_INT, 0, world); }
CASE(reduce_op_null) { return MPI_Reduce(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL, 0, world); }
CASE(reduce_maxloc_int) { return MPI_Reduce(ibuf, jbuf, 1, MPI_INT, MPI_MAXLOC, 0, world); }
CASE(reduce_sum_byte) { return MPI_Reduce(ibuf, jbuf, 1, MPI_BYTE, MPI_SUM, 0, world); }
CASE(reduce_band_float) { return MPI_Reduce(dbuf, dbuf + 8, 1, MPI_FLOAT, MPI_BAND, 0, world); }
CASE(reduce_land_double) { return MPI_Reduce(dbuf, dbuf + 8, 1, MPI_DOUBLE, MPI_LAND, 0, world); }
CASE(reduce_sum_pair_type) { return MPI_Reduce(ibuf, jbuf, 1, pair, MPI_SUM, 0, world); }
CASE(reduce_sum_vector_ok) { return MPI_Reduce(ibuf, jbuf, 1, vec, MPI_SUM, 0, world); }
CASE(reduce_sum_2int) { return MPI_Reduce(ibuf, jbuf, 1, MPI_2INT, MPI_SUM, 0, world); }
CASE(reduce_root_size) { return MPI_Reduce(ibuf, jbuf, 1, MPI_INT, MPI_SUM, np, world); }
CASE(reduce_count_neg) { return MPI_Reduce(ibuf, jbuf, -2, MPI_INT, MPI_SUM, 0, world); }
CASE(allreduce_aliased) { return MPI_Allreduce(ibuf, ibuf, 1, MPI_INT, MPI_SUM, world); }
CASE(allreduce_op_null) { return MPI_Allreduce(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL, world); }
CASE(allreduce_minloc_2int_ok) { return MPI_Allreduce(ibuf, jbuf, 1, MPI_2INT, MPI_MINLOC, world); }
CASE(gather_root_neg) { return MPI_Gather(ibuf, 1, MPI_INT, jbuf, 1, MPI_INT, -1, world); }
CASE(gather_sendcount_neg) { return MPI_Gather(ibuf, -1, MPI_INT, jbuf, 1, MPI_INT, 0, world); }
CASE(gatherv_recvcount_neg)
{
    int counts[64], displs[64];
    for (int i = 0; i < np; i++) counts[i] = -1, displs[i] = i;
    return MPI_Gatherv(ibuf, 0, MPI_INT, jbuf, counts, displs, MPI_INT, 0, world);
}
CASE(scatter_root_size) { return MPI_Scatter(ibuf, 1, MPI_INT, jbuf, 1, MPI_INT, np, world); }
CASE(scatterv_type_null)
{
    int counts[64], displs[64];
    for (int i = 0; i < np; i++) counts[i] = 1, displs[i] = i;
    return MPI_Scatterv(ibuf, counts, displs, MPI_DATATYPE_NULL, jbuf, 1, MPI_INT, 0, world);
}
CASE(allgather_type_null) { return MPI_Allgather(ibuf, 1, MPI_DATATYPE_NULL, jbuf, 1, MPI_INT, world); }
CASE(alltoall_count_neg) { return MPI_Alltoall(ibuf, -1, MPI_INT, jbuf, -1, MPI_INT, world); }
CASE(alltoallv_count_neg)
{
    int counts[64], displs[64];
    for (int i = 0; i < np; i++) counts[i] = -1, displs[i] = i;
    return MPI_Alltoallv(ibuf, counts, displs, MPI_INT, jbuf, counts, displs, MPI_INT, world);
}
CASE(reduce_scatter_count_neg)
{
    int counts[64];
    for (int i = 0; i < np; i++) counts[i] = -1;
    return MPI_Reduce_scatter(ibuf, jbuf, counts, MPI_INT, MPI_SUM, world);
}
CASE(reduce_scatter_block_op_null)
{
    return MPI_Reduce_scatter_block(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL, world);
}
CASE(scan_op_null) { return MPI_Scan(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL, world); }
CASE(exscan_maxloc_float) { return MPI_Exscan(dbuf, dbuf + 8, 1, MPI_FLOAT, MPI_MAXLOC, world); }
CASE(reduce_local_op_null) { return MPI_Reduce_local(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL); }
CASE(reduce_local_count_neg) { return MPI_Reduce_local(ibuf, jbuf, -1, MPI_INT, MPI_SUM); }
CASE(reduce_local_bor_double) { return MPI_Reduce_local(dbuf, dbuf + 8, 1, MPI_DOUBLE, MPI_BOR); }
CASE(ibcast_root_size)
{
    MPI_Request r;
    return MPI_Ibcast(ibuf, 1, MPI_INT, np, world, &r);
}
CASE(iallreduce_op_null)
{
    MPI_Request r;
    return MPI_Iallreduce(ibuf, jbuf, 1, MPI_INT, MPI_OP_NULL, world, &r);
}
CASE(ibarrier_comm_null)
{
    MPI_Request r;
    return MPI_Ibarrier(MPI_COMM_NULL, &r);
}

/* Operations */
CASE(op_free_predefined)
{
    MPI_Op op = MPI_SUM;
    return MPI_Op_free(&op);
}
CASE(op_free_null)
{
    MPI_Op op = MPI_OP_NULL;
    return MPI_Op_free(&op);
}
CASE(op_commutative_null)
{
    int c;
    return MPI_Op_commutative(MPI_OP_NULL, &c);
}

/* Datatypes */
CASE(type_contiguous_count_neg)
{
    MPI_Datatype t;
    return MPI_Type_contiguous(-1, MPI_INT, &t);
}
CASE(type_contiguous_oldtype_null)
{
    MPI_Datatype t;
    return MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t);
}
CASE(type_vector_count_neg)
{
    MPI_Datatype t;
    return MPI_Type_vector(-1, 1, 1, MPI_INT, &t);
}
CASE(type_vector_blocklen_neg)
{
    MPI_Datatype t;
    return MPI_Type_vector(1, -1, 1, MPI_INT, &t);
}
CASE(type_create_hvector_count_neg)
{
    MPI_Datatype t;
    return MPI_Type_create_hvector(-3, 1, 8, MPI_INT, &t);
}
CASE(type_indexed_blocklen_neg)
{
    MPI_Datatype t;
    int bl[2] = {1, -1}, d[2] = {0, 4};
    return MPI_Type_indexed(2, bl, d, MPI_INT, &t);
}
CASE(type_indexed_count_neg)
{
    MPI_Datatype t;
    int bl[1] = {1}, d[1] = {0};
    return MPI_Type_indexed(-1, bl, d, MPI_INT, &t);
}
CASE(type_create_indexed_block_blocklen_neg)
{
    MPI_Datatype t;
    int d[2] = {0, 4};
    return MPI_Type_create_indexed_block(2, -1, d, MPI_INT, &t);
}
CASE(type_create_hindexed_block_count_neg)
{
    MPI_Datatype t;
    MPI_Aint d[1] = {0};
    return MPI_Type_create_hindexed_block(-1, 1, d, MPI_INT, &t);
}
CASE(type_create_struct_count_neg)
{
    MPI_Datatype t, ty[1] = {MPI_INT};
    int bl[1] = {1};
    MPI_Aint d[1] = {0};
    return MPI_Type_create_struct(-1, bl, d, ty, &t);
}
CASE(type_create_struct_type_null)
{
    MPI_Datatype t, ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    return MPI_Type_create_struct(2, bl, d, ty, &t);
}
CASE(type_create_struct_blocklen_neg)
{
    MPI_Datatype t, ty[2] = {MPI_INT, MPI_INT};
    int bl[2] = {1, -2};
    MPI_Aint d[2] = {0, 8};
    return MPI_Type_create_struct(2, bl, d, ty, &t);
}
CASE(type_create_hvector_extent_overflow)
{
    MPI_Datatype t;
    return MPI_Type_create_hvector(1 << 30, 1, (MPI_Aint)1 << 40, MPI_INT, &t);
}
CASE(type_size_too_large)
{
    /* 2^33 bytes: Type_size answers MPI_UNDEFINED (MPI-3.1 4.1.5). */
    MPI_Datatype a, b;
    MPI_Type_contiguous(1 << 16, MPI_INT, &a);
    MPI_Type_contiguous(1 << 15, a, &b);
    int sz = 0, rc = MPI_Type_size(b, &sz);
    if (rc == MPI_SUCCESS) fprintf(out, "  size %s\n", sz == MPI_UNDEFINED ? "undef" : "a number");
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    return rc;
}
CASE(type_create_resized_null)
{
    MPI_Datatype t;
    return MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &t);
}
CASE(type_dup_null)
{
    MPI_Datatype t;
    return MPI_Type_dup(MPI_DATATYPE_NULL, &t);
}
CASE(type_commit_null)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    return MPI_Type_commit(&t);
}
CASE(type_free_predefined)
{
    MPI_Datatype t = MPI_INT;
    return MPI_Type_free(&t);
}
CASE(type_free_null)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    return MPI_Type_free(&t);
}
CASE(type_size_null)
{
    int s;
    return MPI_Type_size(MPI_DATATYPE_NULL, &s);
}
CASE(type_get_extent_null)
{
    MPI_Aint lb, ext;
    return MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &ext);
}
CASE(type_get_envelope_null)
{
    int a, b, c, d;
    return MPI_Type_get_envelope(MPI_DATATYPE_NULL, &a, &b, &c, &d);
}
CASE(type_get_contents_named)
{
    int i[4];
    MPI_Aint a[4];
    MPI_Datatype t[4];
    return MPI_Type_get_contents(MPI_INT, 4, 4, 4, i, a, t);
}
CASE(type_get_contents_short_arrays)
{
    int i[4];
    MPI_Aint a[4];
    MPI_Datatype t[4];
    return MPI_Type_get_contents(vec, 0, 0, 0, i, a, t);
}
CASE(type_create_subarray_size_zero)
{
    MPI_Datatype t;
    int sizes[2] = {0, 4}, sub[2] = {0, 2}, starts[2] = {0, 0};
    return MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
}
CASE(type_create_subarray_start_out)
{
    MPI_Datatype t;
    int sizes[2] = {4, 4}, sub[2] = {2, 2}, starts[2] = {3, 0};
    return MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
}
CASE(type_create_subarray_order_bad)
{
    MPI_Datatype t;
    int sizes[2] = {4, 4}, sub[2] = {2, 2}, starts[2] = {0, 0};
    return MPI_Type_create_subarray(2, sizes, sub, starts, 12345, MPI_INT, &t);
}
CASE(type_create_subarray_ndims_zero)
{
    MPI_Datatype t;
    int sizes[1] = {4}, sub[1] = {2}, starts[1] = {0};
    return MPI_Type_create_subarray(0, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
}
CASE(type_create_darray_rank_out)
{
    MPI_Datatype t;
    int g[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    return MPI_Type_create_darray(2, 5, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
}
CASE(type_create_darray_grid_mismatch)
{
    MPI_Datatype t;
    int g[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {3};
    return MPI_Type_create_darray(2, 0, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
}
CASE(type_match_size_class_bad)
{
    MPI_Datatype t;
    return MPI_Type_match_size(12345, 4, &t);
}
CASE(type_match_size_size_bad)
{
    MPI_Datatype t;
    return MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t);
}
CASE(type_set_name_null) { return MPI_Type_set_name(MPI_DATATYPE_NULL, "x"); }
CASE(pack_outsize_small)
{
    char b[4];
    int pos = 0;
    return MPI_Pack(ibuf, 2, MPI_INT, b, sizeof b, &pos, world);
}
CASE(pack_count_neg)
{
    char b[64];
    int pos = 0;
    return MPI_Pack(ibuf, -1, MPI_INT, b, sizeof b, &pos, world);
}
CASE(pack_type_uncommitted)
{
    char b[64];
    int pos = 0;
    return MPI_Pack(ibuf, 1, uncommitted, b, sizeof b, &pos, world);
}
CASE(pack_comm_null)
{
    char b[64];
    int pos = 0;
    return MPI_Pack(ibuf, 1, MPI_INT, b, sizeof b, &pos, MPI_COMM_NULL);
}
CASE(unpack_insize_small)
{
    char b[64] = {0};
    int pos = 0;
    return MPI_Unpack(b, 4, &pos, jbuf, 2, MPI_INT, world);
}
CASE(pack_size_type_null)
{
    int s;
    return MPI_Pack_size(1, MPI_DATATYPE_NULL, world, &s);
}
CASE(pack_size_count_neg)
{
    int s;
    return MPI_Pack_size(-1, MPI_INT, world, &s);
}
CASE(pack_external_size_bad_datarep)
{
    MPI_Aint s;
    return MPI_Pack_external_size("no-such-rep", 1, MPI_INT, &s);
}
CASE(get_elements_type_null)
{
    MPI_Status st;
    MPI_Recv(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, world, &st);
    int n;
    return MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n);
}

/* Groups */
CASE(group_incl_rank_size)
{
    MPI_Group g;
    int r[1] = {np};
    return MPI_Group_incl(world_group, 1, r, &g);
}
CASE(group_incl_repeated)
{
    MPI_Group g;
    int r[2] = {0, 0};
    return MPI_Group_incl(world_group, 2, r, &g);
}
CASE(group_incl_n_neg)
{
    MPI_Group g;
    int r[1] = {0};
    return MPI_Group_incl(world_group, -1, r, &g);
}
CASE(group_incl_n_above_size)
{
    MPI_Group g;
    int r[65];
    for (int i = 0; i <= np; i++) r[i] = i % np;
    return MPI_Group_incl(world_group, np + 1, r, &g);
}
CASE(group_excl_rank_neg)
{
    MPI_Group g;
    int r[1] = {-1};
    return MPI_Group_excl(world_group, 1, r, &g);
}
CASE(group_range_incl_stride_zero)
{
    MPI_Group g;
    int range[1][3] = {{0, 0, 0}};
    return MPI_Group_range_incl(world_group, 1, range, &g);
}
CASE(group_range_incl_last_out)
{
    MPI_Group g;
    int range[1][3] = {{0, np, 1}};
    return MPI_Group_range_incl(world_group, 1, range, &g);
}
CASE(group_range_excl_wrong_direction)
{
    MPI_Group g;
    int range[1][3] = {{np - 1, 0, 1}};
    return MPI_Group_range_excl(world_group, 1, range, &g);
}
CASE(group_translate_ranks_out)
{
    int in[1] = {np}, o[1];
    return MPI_Group_translate_ranks(world_group, 1, in, world_group, o);
}
CASE(group_size_null)
{
    int n;
    return MPI_Group_size(MPI_GROUP_NULL, &n);
}
CASE(group_rank_null)
{
    int n;
    return MPI_Group_rank(MPI_GROUP_NULL, &n);
}
CASE(group_free_null)
{
    MPI_Group g = MPI_GROUP_NULL;
    return MPI_Group_free(&g);
}
CASE(group_union_null)
{
    MPI_Group g;
    return MPI_Group_union(world_group, MPI_GROUP_NULL, &g);
}
CASE(group_compare_null)
{
    int r;
    return MPI_Group_compare(MPI_GROUP_NULL, world_group, &r);
}

/* Virtual topologies */
CASE(cart_create_too_big)
{
    MPI_Comm c;
    int dims[1] = {np + 1}, per[1] = {0};
    return MPI_Cart_create(world, 1, dims, per, 0, &c);
}
CASE(cart_create_ndims_neg)
{
    MPI_Comm c;
    int dims[1] = {np}, per[1] = {0};
    return MPI_Cart_create(world, -1, dims, per, 0, &c);
}
CASE(cart_create_dim_neg)
{
    MPI_Comm c;
    int dims[2] = {-1, np}, per[2] = {0, 0};
    return MPI_Cart_create(world, 2, dims, per, 0, &c);
}
CASE(cart_create_comm_null)
{
    MPI_Comm c;
    int dims[1] = {1}, per[1] = {0};
    return MPI_Cart_create(MPI_COMM_NULL, 1, dims, per, 0, &c);
}
CASE(cart_coords_not_cart)
{
    int co[2];
    return MPI_Cart_coords(world, 0, 1, co);
}
CASE(cart_coords_rank_size)
{
    int co[2];
    return MPI_Cart_coords(cart, np, 1, co);
}
CASE(cart_rank_coords_out)
{
    int co[1] = {np}, r;
    return MPI_Cart_rank(cart, co, &r);
}
CASE(cart_rank_coords_neg)
{
    int co[1] = {-1}, r;
    return MPI_Cart_rank(cart, co, &r);
}
CASE(cart_shift_not_cart)
{
    int s, d;
    return MPI_Cart_shift(world, 0, 1, &s, &d);
}
CASE(cart_shift_direction_out)
{
    int s, d;
    return MPI_Cart_shift(cart, 1, 1, &s, &d);
}
CASE(cart_shift_direction_neg)
{
    int s, d;
    return MPI_Cart_shift(cart, -1, 1, &s, &d);
}
CASE(cart_sub_not_cart)
{
    MPI_Comm c;
    int rem[1] = {1};
    return MPI_Cart_sub(world, rem, &c);
}
CASE(cartdim_get_not_cart)
{
    int n;
    return MPI_Cartdim_get(world, &n);
}
CASE(cart_get_not_cart)
{
    int dims[1], per[1], co[1];
    return MPI_Cart_get(world, 1, dims, per, co);
}
CASE(cart_map_too_big)
{
    int dims[1] = {np + 1}, per[1] = {0}, r;
    return MPI_Cart_map(world, 1, dims, per, &r);
}
CASE(dims_create_indivisible)
{
    int dims[2] = {np + 1, 0};
    return MPI_Dims_create(np, 2, dims);
}
CASE(dims_create_ndims_neg)
{
    int dims[1] = {0};
    return MPI_Dims_create(np, -1, dims);
}
CASE(dims_create_dim_neg)
{
    int dims[2] = {-1, 0};
    return MPI_Dims_create(np, 2, dims);
}
CASE(dims_create_nnodes_neg)
{
    int dims[2] = {0, 0};
    return MPI_Dims_create(-4, 2, dims);
}
CASE(graph_create_edge_out)
{
    MPI_Comm c;
    int index[1] = {1}, edges[1] = {np + 4};
    return MPI_Graph_create(world, 1, index, edges, 0, &c);
}
CASE(graph_create_nnodes_too_big)
{
    MPI_Comm c;
    int index[65], edges[1] = {0};
    for (int i = 0; i <= np; i++) index[i] = 0;
    return MPI_Graph_create(world, np + 1, index, edges, 0, &c);
}
CASE(graph_create_index_neg)
{
    MPI_Comm c;
    int index[1] = {-1}, edges[1] = {0};
    return MPI_Graph_create(world, 1, index, edges, 0, &c);
}
CASE(graph_map_too_big)
{
    int index[65], edges[1] = {0}, r;
    for (int i = 0; i <= np; i++) index[i] = 0;
    return MPI_Graph_map(world, np + 1, index, edges, &r);
}
CASE(cart_create_ndims_zero_ok)
{
    MPI_Comm c;
    int rc = MPI_Cart_create(world, 0, NULL, NULL, 0, &c);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    return rc;
}
CASE(dims_create_ndims_zero_ok) { return MPI_Dims_create(1, 0, NULL); }
CASE(graph_create_nnodes_neg)
{
    MPI_Comm c;
    int index[1] = {0}, edges[1] = {0};
    return MPI_Graph_create(world, -1, index, edges, 0, &c);
}
CASE(graph_neighbors_count_not_graph)
{
    int n;
    return MPI_Graph_neighbors_count(world, 0, &n);
}
CASE(graphdims_get_not_graph)
{
    int a, b;
    return MPI_Graphdims_get(world, &a, &b);
}
CASE(graph_neighbors_cart)
{
    int n[4];
    return MPI_Graph_neighbors(cart, 0, 4, n);
}
CASE(dist_graph_adjacent_degree_neg)
{
    MPI_Comm c;
    int s[1] = {0}, d[1] = {0};
    return MPI_Dist_graph_create_adjacent(world, -1, s, MPI_UNWEIGHTED, 1, d, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &c);
}
CASE(dist_graph_adjacent_source_out)
{
    MPI_Comm c;
    int s[1] = {np + 2}, d[1] = {me};
    return MPI_Dist_graph_create_adjacent(world, 1, s, MPI_UNWEIGHTED, 1, d, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &c);
}
CASE(dist_graph_create_n_neg)
{
    MPI_Comm c;
    int s[1] = {0}, deg[1] = {0}, d[1] = {0};
    return MPI_Dist_graph_create(world, -1, s, deg, d, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
}
CASE(dist_graph_neighbors_count_not_dist)
{
    int a, b, w;
    return MPI_Dist_graph_neighbors_count(world, &a, &b, &w);
}
CASE(topo_test_comm_null)
{
    int t;
    return MPI_Topo_test(MPI_COMM_NULL, &t);
}
CASE(neighbor_allgather_no_topology)
{
    return MPI_Neighbor_allgather(ibuf, 1, MPI_INT, jbuf, 1, MPI_INT, world);
}

/* Neighborhood collectives on the 1-D grid `cart` */
CASE(neighbor_alltoall_count_neg) { return MPI_Neighbor_alltoall(ibuf, -1, MPI_INT, jbuf, 1, MPI_INT, cart); }
CASE(neighbor_alltoall_type_null)
{
    return MPI_Neighbor_alltoall(ibuf, 1, MPI_DATATYPE_NULL, jbuf, 1, MPI_INT, cart);
}
CASE(neighbor_allgatherv_recvcount_neg)
{
    int counts[2] = {-1, -1}, displs[2] = {0, 4};
    return MPI_Neighbor_allgatherv(ibuf, 1, MPI_INT, jbuf, counts, displs, MPI_INT, cart);
}
CASE(neighbor_alltoallw_type_null)
{
    int counts[2] = {1, 1};
    MPI_Aint displs[2] = {0, 16};
    MPI_Datatype types[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    return MPI_Neighbor_alltoallw(ibuf, counts, displs, types, jbuf, counts, displs, types, cart);
}
CASE(ineighbor_alltoall_no_topology)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Ineighbor_alltoall(ibuf, 1, MPI_INT, jbuf, 1, MPI_INT, world, &r);
    if (rc == MPI_SUCCESS) MPI_Wait(&r, MPI_STATUS_IGNORE);
    return rc;
}

/* One-sided communication: a window of 16 ints on the case's
 * communicator, its error handler MPI_ERRORS_RETURN (a window's default is
 * MPI_ERRORS_ARE_FATAL) */
static MPI_Win case_win(void)
{
    MPI_Win w;
    if (MPI_Win_create(jbuf, 16 * sizeof(int), sizeof(int), MPI_INFO_NULL, world, &w) != MPI_SUCCESS)
        return MPI_WIN_NULL;
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    return w;
}
/* A user-defined operation (MPI_Accumulate takes predefined ones only) */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}
#define WIN_CASE(name, body)                                                                                          \
    CASE(name)                                                                                                        \
    {                                                                                                                 \
        MPI_Win win = case_win();                                                                                     \
        if (win == MPI_WIN_NULL) return 0x7fff;                                                                       \
        int rc;                                                                                                       \
        body;                                                                                                         \
        MPI_Win_free(&win);                                                                                           \
        return rc;                                                                                                    \
    }
CASE(win_free_null)
{
    MPI_Win w = MPI_WIN_NULL;
    return MPI_Win_free(&w);
}
CASE(win_create_size_neg)
{
    MPI_Win w;
    int rc = MPI_Win_create(jbuf, -4, sizeof(int), MPI_INFO_NULL, world, &w);
    if (rc == MPI_SUCCESS) MPI_Win_free(&w);
    return rc;
}
CASE(win_create_disp_unit_zero)
{
    MPI_Win w;
    int rc = MPI_Win_create(jbuf, 16 * sizeof(int), 0, MPI_INFO_NULL, world, &w);
    if (rc == MPI_SUCCESS) MPI_Win_free(&w);
    return rc;
}
CASE(put_win_null) { return MPI_Put(ibuf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL); }
WIN_CASE(put_no_epoch, rc = MPI_Put(ibuf, 1, MPI_INT, 0, 0, 1, MPI_INT, win))
WIN_CASE(put_target_rank_size, MPI_Win_fence(0, win); rc = MPI_Put(ibuf, 1, MPI_INT, np, 0, 1, MPI_INT, win);
         MPI_Win_fence(0, win))
WIN_CASE(put_count_neg, MPI_Win_fence(0, win); rc = MPI_Put(ibuf, -1, MPI_INT, 0, 0, 1, MPI_INT, win);
         MPI_Win_fence(0, win))
WIN_CASE(get_type_null, MPI_Win_fence(0, win); rc = MPI_Get(ibuf, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win);
         MPI_Win_fence(0, win))
WIN_CASE(accumulate_user_op, MPI_Op op; MPI_Op_create(user_sum, 1, &op); MPI_Win_fence(0, win);
         rc = MPI_Accumulate(ibuf, 1, MPI_INT, 0, 0, 1, MPI_INT, op, win); MPI_Win_fence(0, win); MPI_Op_free(&op))
WIN_CASE(win_lock_type_bad, rc = MPI_Win_lock(12345, 0, 0, win); if (rc == MPI_SUCCESS) MPI_Win_unlock(0, win))
WIN_CASE(win_lock_rank_size, rc = MPI_Win_lock(MPI_LOCK_SHARED, np, 0, win);
         if (rc == MPI_SUCCESS) MPI_Win_unlock(np, win))
WIN_CASE(win_unlock_not_locked, rc = MPI_Win_unlock(0, win))
WIN_CASE(win_complete_no_start, rc = MPI_Win_complete(win))
WIN_CASE(win_flush_no_epoch, rc = MPI_Win_flush(0, win))
WIN_CASE(win_set_name_null, rc = MPI_Win_set_name(win, NULL))
WIN_CASE(win_get_attr_keyval_invalid, int f; void *v; rc = MPI_Win_get_attr(win, MPI_KEYVAL_INVALID, &v, &f))

/* Parallel I/O (a file's default error handler is MPI_ERRORS_RETURN) */
static const char *case_path = "err_diff.case.tmp";
CASE(file_open_amode_rdonly_wronly)
{
    MPI_File f;
    int rc = MPI_File_open(world, case_path, MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS) MPI_File_close(&f);
    return rc;
}
CASE(file_open_amode_rdonly_create)
{
    MPI_File f;
    int rc = MPI_File_open(world, case_path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS) MPI_File_close(&f);
    return rc;
}
CASE(file_open_missing)
{
    MPI_File f;
    int rc = MPI_File_open(world, "err_diff.no.such.file", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS) MPI_File_close(&f);
    return rc;
}
CASE(file_open_excl_exists)
{
    MPI_File f;
    if (MPI_File_open(world, case_path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &f) != MPI_SUCCESS)
        return 0x7fff;
    MPI_File_close(&f);
    int rc = MPI_File_open(world, case_path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS) MPI_File_close(&f);
    MPI_Barrier(world);
    if (me == 0) MPI_File_delete(case_path, MPI_INFO_NULL);
    return rc;
}
CASE(file_close_null)
{
    MPI_File f = MPI_FILE_NULL;
    return MPI_File_close(&f);
}
/* The cases below on a file of the case's communicator, deleted on close. */
#define FILE_CASE(name, amode, body)                                                                                  \
    CASE(name)                                                                                                        \
    {                                                                                                                 \
        MPI_File fh;                                                                                                  \
        if (MPI_File_open(world, case_path, (amode) | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,   \
                          &fh) != MPI_SUCCESS)                                                                        \
            return 0x7fff;                                                                                            \
        int rc;                                                                                                       \
        body;                                                                                                         \
        MPI_File_close(&fh);                                                                                          \
        return rc;                                                                                                    \
    }
FILE_CASE(file_read_count_neg, MPI_MODE_RDWR, rc = MPI_File_read_at(fh, 0, ibuf, -1, MPI_INT, MPI_STATUS_IGNORE))
FILE_CASE(file_write_type_null, MPI_MODE_RDWR,
          rc = MPI_File_write_at(fh, 0, ibuf, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE))
FILE_CASE(file_read_wronly, MPI_MODE_WRONLY, rc = MPI_File_read_at(fh, 0, ibuf, 1, MPI_INT, MPI_STATUS_IGNORE))
FILE_CASE(file_write_at_offset_neg, MPI_MODE_RDWR,
          rc = MPI_File_write_at(fh, -4, ibuf, 1, MPI_INT, MPI_STATUS_IGNORE))
FILE_CASE(file_seek_whence_bad, MPI_MODE_RDWR, rc = MPI_File_seek(fh, 0, 12345))
FILE_CASE(file_seek_before_start, MPI_MODE_RDWR, rc = MPI_File_seek(fh, -4, MPI_SEEK_SET))
FILE_CASE(file_set_view_etype_null, MPI_MODE_RDWR,
          rc = MPI_File_set_view(fh, 0, MPI_DATATYPE_NULL, MPI_INT, "native", MPI_INFO_NULL))
FILE_CASE(file_set_view_datarep_bad, MPI_MODE_RDWR,
          rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-representation", MPI_INFO_NULL))
FILE_CASE(file_set_view_disp_neg, MPI_MODE_RDWR,
          rc = MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL))
FILE_CASE(file_set_size_neg, MPI_MODE_RDWR, rc = MPI_File_set_size(fh, -1))
FILE_CASE(file_seek_sequential, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, rc = MPI_File_seek(fh, 0, MPI_SEEK_SET))

/* The tool information interface (MPI_T_init_thread in main): its
 * functions return their error classes, no handler runs */
CASE(t_cvar_get_info_index_neg)
{
    char name[16];
    int len = sizeof name;
    return MPI_T_cvar_get_info(-1, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
CASE(t_pvar_get_info_index_out)
{
    int n = 0;
    MPI_T_pvar_get_num(&n);
    char name[16];
    int len = sizeof name;
    return MPI_T_pvar_get_info(n, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
CASE(t_category_get_info_index_out)
{
    int n = 0;
    MPI_T_category_get_num(&n);
    return MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
CASE(t_cvar_get_index_bogus)
{
    int i;
    return MPI_T_cvar_get_index("err_diff: no such variable", &i);
}
CASE(t_pvar_session_free_null)
{
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    return MPI_T_pvar_session_free(&s);
}
CASE(t_cvar_handle_free_null)
{
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    return MPI_T_cvar_handle_free(&h);
}
CASE(t_pvar_handle_alloc_index_out)
{
    int n = 0, count;
    MPI_T_pvar_get_num(&n);
    MPI_T_pvar_session s;
    if (MPI_T_pvar_session_create(&s) != MPI_SUCCESS) return 0x7fff;
    MPI_T_pvar_handle h;
    int rc = MPI_T_pvar_handle_alloc(s, n, NULL, &h, &count);
    MPI_T_pvar_session_free(&s);
    return rc;
}

/* Info, attributes, error handlers, the rest */
CASE(info_get_key_too_long)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char key[MPI_MAX_INFO_KEY + 8], v[16];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = 0;
    int f, rc = MPI_Info_get(info, key, sizeof v - 1, v, &f);
    MPI_Info_free(&info);
    return rc;
}
CASE(info_set_value_too_long)
{
    MPI_Info info;
    MPI_Info_create(&info);
    static char v[MPI_MAX_INFO_VAL + 8];
    memset(v, 'v', sizeof v - 1);
    v[sizeof v - 1] = 0;
    int rc = MPI_Info_set(info, "key", v);
    MPI_Info_free(&info);
    return rc;
}
CASE(info_set_key_empty)
{
    MPI_Info info;
    MPI_Info_create(&info);
    int rc = MPI_Info_set(info, "", "v");
    MPI_Info_free(&info);
    return rc;
}
CASE(info_delete_missing)
{
    MPI_Info info;
    MPI_Info_create(&info);
    int rc = MPI_Info_delete(info, "absent");
    MPI_Info_free(&info);
    return rc;
}
CASE(info_get_nthkey_out)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "a", "1");
    char key[MPI_MAX_INFO_KEY + 1];
    int rc = MPI_Info_get_nthkey(info, 1, key);
    MPI_Info_free(&info);
    return rc;
}
CASE(info_free_null)
{
    MPI_Info info = MPI_INFO_NULL;
    return MPI_Info_free(&info);
}
CASE(info_get_missing_ok)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char v[16];
    int f = 0, rc = MPI_Info_get(info, "absent", sizeof v - 1, v, &f);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) fprintf(out, "  flag %d\n", f != 0);
    return rc;
}
CASE(comm_get_attr_keyval_invalid)
{
    int f;
    void *v;
    return MPI_Comm_get_attr(world, MPI_KEYVAL_INVALID, &v, &f);
}
CASE(comm_set_attr_predefined)
{
    static int x = 5;
    return MPI_Comm_set_attr(world, MPI_TAG_UB, &x);
}
CASE(comm_delete_attr_predefined) { return MPI_Comm_delete_attr(world, MPI_TAG_UB); }
CASE(comm_free_keyval_predefined)
{
    int k = MPI_TAG_UB;
    return MPI_Comm_free_keyval(&k);
}
CASE(comm_free_keyval_invalid)
{
    int k = MPI_KEYVAL_INVALID;
    return MPI_Comm_free_keyval(&k);
}
CASE(type_get_attr_comm_keyval)
{
    int k, f, rc;
    void *v;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
    rc = MPI_Type_get_attr(MPI_INT, k, &v, &f);
    MPI_Comm_free_keyval(&k);
    return rc;
}
CASE(comm_set_errhandler_null) { return MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRHANDLER_NULL); }
CASE(errhandler_free_null)
{
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    return MPI_Errhandler_free(&e);
}
CASE(error_class_code_bad)
{
    int c;
    return MPI_Error_class(123456, &c);
}
CASE(error_string_code_bad)
{
    char s[MPI_MAX_ERROR_STRING];
    int n;
    return MPI_Error_string(123456, s, &n);
}
CASE(add_error_code_class_bad)
{
    int c;
    return MPI_Add_error_code(123456, &c);
}
CASE(add_error_string_predefined) { return MPI_Add_error_string(MPI_ERR_TYPE, "mine"); }
CASE(alloc_mem_size_neg)
{
    void *p;
    return MPI_Alloc_mem(-1, MPI_INFO_NULL, &p);
}

#undef CASE

static const struct {
    const char *name;
    int (*fn)(void);
} cases[] = {
#define C(name) {#name, name}
    C(comm_size_null), C(comm_rank_null), C(comm_dup_null), C(comm_free_null), C(comm_compare_null),
    C(comm_group_null), C(comm_test_inter_null), C(comm_remote_size_intra), C(comm_remote_group_intra),
    C(comm_split_color_neg), C(comm_split_type_bad), C(comm_create_group_null), C(comm_set_name_null),
    C(comm_get_name_null), C(intercomm_merge_intra), C(intercomm_create_leader_out), C(comm_idup_null),
    C(comm_call_errhandler_null),
    C(send_comm_null), C(send_count_neg), C(send_type_null), C(send_type_uncommitted), C(send_dest_size),
    C(send_dest_neg), C(send_dest_any_source), C(send_tag_neg), C(send_tag_any), C(send_buf_null),
    C(send_proc_null_ok), C(ssend_dest_size), C(rsend_tag_neg), C(bsend_no_buffer), C(recv_count_neg),
    C(recv_type_null), C(recv_source_size), C(recv_tag_neg), C(recv_proc_null_ok), C(isend_count_neg),
    C(irecv_source_neg), C(sendrecv_recvcount_neg), C(sendrecv_replace_count_neg), C(probe_source_size),
    C(iprobe_tag_neg), C(improbe_comm_null), C(mrecv_no_proc_ok), C(send_init_count_neg),
    C(recv_init_tag_neg), C(waitall_count_neg), C(testany_count_neg), C(wait_request_null_ok),
    C(start_request_null), C(request_free_null), C(cancel_request_null), C(request_get_status_null_ok),
    C(grequest_complete_null), C(buffer_attach_size_neg), C(buffer_attach_twice), C(get_count_type_null),
    C(status_set_elements_type_null), C(sendrecv_truncate), C(recv_truncate), C(wait_truncate),
    C(waitall_truncate), C(mrecv_truncate), C(recv_signature_mismatch_ok),
    C(barrier_comm_null), C(bcast_comm_null), C(bcast_root_size), C(bcast_root_neg), C(bcast_root_proc_null),
    C(bcast_count_neg), C(bcast_type_null), C(bcast_type_uncommitted), C(bcast_buf_null), C(reduce_op_null),
    C(reduce_maxloc_int), C(reduce_sum_byte), C(reduce_band_float), C(reduce_land_double),
    C(reduce_sum_pair_type), C(reduce_sum_vector_ok), C(reduce_sum_2int), C(reduce_root_size),
    C(reduce_count_neg), C(allreduce_aliased), C(allreduce_op_null),
    C(allreduce_minloc_2int_ok), C(gather_root_neg), C(gather_sendcount_neg), C(gatherv_recvcount_neg),
    C(scatter_root_size), C(scatterv_type_null), C(allgather_type_null), C(alltoall_count_neg),
    C(alltoallv_count_neg), C(reduce_scatter_count_neg), C(reduce_scatter_block_op_null), C(scan_op_null),
    C(exscan_maxloc_float), C(reduce_local_op_null), C(reduce_local_count_neg), C(reduce_local_bor_double),
    C(ibcast_root_size), C(iallreduce_op_null), C(ibarrier_comm_null),
    C(op_free_predefined), C(op_free_null), C(op_commutative_null),
    C(type_contiguous_count_neg), C(type_contiguous_oldtype_null), C(type_vector_count_neg),
    C(type_vector_blocklen_neg), C(type_create_hvector_count_neg), C(type_indexed_blocklen_neg),
    C(type_indexed_count_neg), C(type_create_indexed_block_blocklen_neg),
    C(type_create_hindexed_block_count_neg), C(type_create_struct_count_neg),
    C(type_create_struct_type_null), C(type_create_struct_blocklen_neg), C(type_create_hvector_extent_overflow), C(type_size_too_large), C(type_create_resized_null),
    C(type_dup_null), C(type_commit_null), C(type_free_predefined), C(type_free_null), C(type_size_null),
    C(type_get_extent_null), C(type_get_envelope_null), C(type_get_contents_named),
    C(type_get_contents_short_arrays), C(type_create_subarray_size_zero), C(type_create_subarray_start_out),
    C(type_create_subarray_order_bad), C(type_create_subarray_ndims_zero), C(type_create_darray_rank_out),
    C(type_create_darray_grid_mismatch), C(type_match_size_class_bad), C(type_match_size_size_bad),
    C(type_set_name_null), C(pack_outsize_small), C(pack_count_neg), C(pack_type_uncommitted),
    C(pack_comm_null), C(unpack_insize_small), C(pack_size_type_null), C(pack_size_count_neg),
    C(pack_external_size_bad_datarep), C(get_elements_type_null),
    C(group_incl_rank_size), C(group_incl_repeated), C(group_incl_n_neg), C(group_incl_n_above_size),
    C(group_excl_rank_neg), C(group_range_incl_stride_zero), C(group_range_incl_last_out),
    C(group_range_excl_wrong_direction), C(group_translate_ranks_out), C(group_size_null),
    C(group_rank_null), C(group_free_null), C(group_union_null), C(group_compare_null),
    C(cart_create_too_big), C(cart_create_ndims_neg), C(cart_create_dim_neg), C(cart_create_comm_null),
    C(cart_coords_not_cart), C(cart_coords_rank_size), C(cart_rank_coords_out), C(cart_rank_coords_neg),
    C(cart_shift_not_cart), C(cart_shift_direction_out), C(cart_shift_direction_neg), C(cart_sub_not_cart),
    C(cartdim_get_not_cart), C(cart_get_not_cart), C(cart_map_too_big), C(dims_create_indivisible),
    C(dims_create_ndims_neg), C(dims_create_dim_neg), C(dims_create_nnodes_neg), C(graph_create_edge_out),
    C(graph_create_nnodes_too_big), C(graph_create_index_neg), C(graph_map_too_big),
    C(cart_create_ndims_zero_ok), C(dims_create_ndims_zero_ok), C(graph_create_nnodes_neg), C(graph_neighbors_count_not_graph),
    C(graphdims_get_not_graph), C(graph_neighbors_cart), C(dist_graph_adjacent_degree_neg),
    C(dist_graph_adjacent_source_out), C(dist_graph_create_n_neg), C(dist_graph_neighbors_count_not_dist),
    C(topo_test_comm_null), C(neighbor_allgather_no_topology),
    C(info_get_key_too_long), C(info_set_value_too_long), C(info_set_key_empty), C(info_delete_missing),
    C(info_get_nthkey_out), C(info_free_null), C(info_get_missing_ok), C(comm_get_attr_keyval_invalid),
    C(comm_set_attr_predefined), C(comm_delete_attr_predefined), C(comm_free_keyval_predefined),
    C(comm_free_keyval_invalid), C(type_get_attr_comm_keyval), C(comm_set_errhandler_null),
    C(errhandler_free_null), C(error_class_code_bad), C(error_string_code_bad), C(add_error_code_class_bad),
    C(add_error_string_predefined), C(alloc_mem_size_neg),
    C(neighbor_alltoall_count_neg), C(neighbor_alltoall_type_null), C(neighbor_allgatherv_recvcount_neg),
    C(neighbor_alltoallw_type_null), C(ineighbor_alltoall_no_topology),
    C(win_free_null), C(win_create_size_neg), C(win_create_disp_unit_zero), C(put_win_null), C(put_no_epoch),
    C(put_target_rank_size), C(put_count_neg), C(get_type_null), C(accumulate_user_op), C(win_lock_type_bad),
    C(win_lock_rank_size), C(win_unlock_not_locked), C(win_complete_no_start), C(win_flush_no_epoch),
    C(win_set_name_null), C(win_get_attr_keyval_invalid),
    C(file_open_amode_rdonly_wronly), C(file_open_amode_rdonly_create), C(file_open_missing),
    C(file_open_excl_exists), C(file_close_null), C(file_read_count_neg), C(file_write_type_null),
    C(file_read_wronly), C(file_write_at_offset_neg), C(file_seek_whence_bad), C(file_seek_before_start),
    C(file_set_view_etype_null), C(file_set_view_datarep_bad), C(file_set_view_disp_neg), C(file_set_size_neg),
    C(file_seek_sequential),
    C(t_cvar_get_info_index_neg), C(t_pvar_get_info_index_out), C(t_category_get_info_index_out),
    C(t_cvar_get_index_bogus), C(t_pvar_session_free_null), C(t_cvar_handle_free_null),
    C(t_pvar_handle_alloc_index_out),
#undef C
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROUNDS PREFIX [START]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int rounds = atoi(argv[1]), start = argc > 3 ? atoi(argv[3]) : 0;
    if (rounds > ncases) rounds = ncases;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    out = open_rank_file(argv[2], me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 256; i++) ibuf[i] = i, jbuf[i] = -i;
    for (int i = 0; i < 64; i++) dbuf[i] = i;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, d, ty, &pair);
    MPI_Type_commit(&pair);
    int dims[1] = {np}, per[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    for (int i = start; i < rounds; i++) {
        fprintf(out, "== %d\n", i);
        MPI_Comm_dup(MPI_COMM_WORLD, &world);
        alarm(20);
        int rc = cases[i].fn();
        alarm(0);
        fprintf(out, "%s %s\n", cases[i].name, rc == 0x7fff ? "(setup failed)" : error_class_name(rc));
        /* A rank whose collective call refused its arguments may have
         * left the others waiting in theirs: one more call on the case's
         * communicator lets an MPI that compares calls (shmpi) end those
         * with an error.  Then the next case starts together. */
        MPI_Barrier(world);
        MPI_Comm_free(&world);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fclose(out);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
