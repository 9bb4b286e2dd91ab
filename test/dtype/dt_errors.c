/* Bad datatype input under MPI_ERRORS_RETURN: the error class each misuse
 * must produce (MPI_ERR_TYPE for MPI_DATATYPE_NULL, uncommitted types and
 * freeing predefined types, MPI_ERR_COUNT for negative counts, MPI_ERR_ARG
 * for negative block lengths), and that the job carries on afterwards.
 * MPI_Pack and MPI_Unpack of nothing with a NULL buffer work.
 * Under #ifdef SHMPI, what shmpi adds: extents overflowing MPI_Aint, freed
 * handles, markers as data types, MPI_Pack from MPI_BOTTOM with a type of
 * absolute addresses (MPICH 4.0.2 refuses it), a NULL or MPI_IN_PLACE
 * typed buffer of MPI_Pack, MPI_Unpack and their external32 forms
 * (MPI_ERR_BUFFER, not a crash; MPICH 4.0.2 says MPI_ERR_ARG, and
 * dereferences MPI_IN_PLACE), and messages that name the function, the
 * argument (a NULL array of MPI_Type_create_subarray or _darray too) and
 * the bad value. */
#include "../mpi/check.h"

#define EXPECT_CLASS(call, cls)                                                                   \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        CHECKF(rc_ != MPI_SUCCESS && check_error_class(rc_) == (cls), "%s returned class %d, expected %s", \
               #call, rc_ == MPI_SUCCESS ? 0 : check_error_class(rc_), #cls);                     \
    } while (0)

#ifdef SHMPI
/* The text of an error code contains `part`. */
static void expect_text(int code, const char *part)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(code, msg, &len));
    CHECKF(strstr(msg, part) != NULL, "error text \"%s\" lacks \"%s\"", msg, part);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int rank = world_rank();
    int buf[64] = {0};
    MPI_Datatype t, u;

    /* Communication with no datatype, or an uncommitted one. */
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &t));
    EXPECT_CLASS(MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Request r;
    EXPECT_CLASS(MPI_Irecv(buf, 1, t, rank, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    CHECK_MPI(MPI_Type_commit(&t));
    EXPECT_CLASS(MPI_Send(buf, -1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);

    /* Constructors. */
    EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &u), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Type_vector(-2, 1, 1, MPI_INT, &u), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &u), MPI_ERR_TYPE);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT_CLASS(MPI_Type_create_struct(2, bl, d, ty, &u), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_commit(&(MPI_Datatype){MPI_DATATYPE_NULL}), MPI_ERR_TYPE);

    /* Predefined types cannot be freed. */
    MPI_Datatype i = MPI_INT;
    EXPECT_CLASS(MPI_Type_free(&i), MPI_ERR_TYPE);
    CHECK(i == MPI_INT);

    /* A good exchange still works after all that. */
    int send[8] = {1, 2, 3, 4, 5, 6, 7, 8}, recv[8] = {0};
    CHECK_MPI(MPI_Sendrecv(send, 1, t, rank, 3, recv, 4, MPI_INT, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(recv[0] == 1 && recv[1] == 3 && recv[2] == 5 && recv[3] == 7, "strided ints %d %d %d %d", recv[0],
           recv[1], recv[2], recv[3]);

    /* Packing nothing from NULL, and unpacking nothing into it. */
    char packed[64] = {0};
    int at = 0;
    CHECK_MPI(MPI_Pack(NULL, 0, MPI_INT, packed, 64, &at, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(packed, 64, &at, NULL, 0, MPI_INT, MPI_COMM_WORLD));
    CHECKF(at == 0, "packing nothing moved the position to %d", at);

#ifdef SHMPI
    /* Packing from MPI_BOTTOM with absolute addresses (MPICH 4.0.2 refuses
     * it: "Null pointer in parameter inbuf"). */
    int a = 7;
    double b = 2.5;
    MPI_Aint abs_d[2];
    CHECK_MPI(MPI_Get_address(&a, &abs_d[0]));
    CHECK_MPI(MPI_Get_address(&b, &abs_d[1]));
    MPI_Datatype abs_ty[2] = {MPI_INT, MPI_DOUBLE}, abs;
    CHECK_MPI(MPI_Type_create_struct(2, bl, abs_d, abs_ty, &abs));
    CHECK_MPI(MPI_Type_commit(&abs));
    int back_at = 0, x = 0;
    double y = 0;
    CHECK_MPI(MPI_Pack(MPI_BOTTOM, 1, abs, packed, 64, &at, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(packed, at, &back_at, &x, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(packed, at, &back_at, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECKF(x == 7 && y == 2.5, "packed from MPI_BOTTOM: %d %g", x, y);
    CHECK_MPI(MPI_Type_free(&abs));

    int rc = MPI_Type_contiguous(-1, MPI_INT, &u);
    expect_text(rc, "MPI_Type_contiguous: count -1 is negative");
    rc = MPI_Type_vector(2, -1, 1, MPI_INT, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "negative blocklength: class %d", check_error_class(rc));
    expect_text(rc, "blocklength -1 is negative");
    rc = MPI_Type_create_hvector(3, 1, (MPI_Aint)1 << 62, MPI_DOUBLE, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "overflowing stride: class %d", check_error_class(rc));
    expect_text(rc, "overflows MPI_Aint");
    MPI_Aint far[2] = {0, (MPI_Aint)(((unsigned long)1 << 63) - 1)};
    rc = MPI_Type_create_hindexed(2, bl, far, MPI_DOUBLE, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "overflowing displacement: class %d", check_error_class(rc));
    /* A buffer of elements that reach past what MPI_Aint addresses: an
     * error, not a pack that runs off the address space. */
    MPI_Datatype far_apart;
    CHECK_MPI(MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)1 << 40, &far_apart));
    CHECK_MPI(MPI_Type_commit(&far_apart));
    rc = MPI_Isend(buf, 1 << 30, far_apart, rank, 0, MPI_COMM_WORLD, &r);
    CHECKF(check_error_class(rc) == MPI_ERR_COUNT, "Isend spanning 2^70 bytes: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Isend: buf holds 1073741824 elements");
    expect_text(rc, "span more memory than MPI_Aint can address");
    rc = MPI_Bcast(buf, 1 << 30, far_apart, 0, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_COUNT, "Bcast spanning 2^70 bytes: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Bcast: buffer holds 1073741824 elements");
    /* A contiguous type whose copies would span more than MPI_Aint: the
     * message names the count the caller passed. */
    rc = MPI_Type_contiguous(1 << 24, far_apart, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "contiguous spanning 2^64 bytes: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Type_contiguous: the span of a block of 16777216 elements");
    CHECK_MPI(MPI_Type_free(&far_apart));
    rc = MPI_Send(buf, 1, MPI_UB, rank, 0, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_TYPE, "MPI_UB as a data type: class %d", check_error_class(rc));
    rc = MPI_Send(buf, 1, t, rank, 0, MPI_COMM_NULL);
    CHECKF(check_error_class(rc) == MPI_ERR_COMM, "MPI_COMM_NULL: class %d", check_error_class(rc));
    rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD);
    expect_text(rc, "MPI_Send: datatype is MPI_DATATYPE_NULL");
    /* A stale copy of a freed handle. */
    MPI_Datatype stale = t;
    CHECK_MPI(MPI_Type_dup(t, &u)); /* keep the object alive: its handle is what is dead */
    MPI_Datatype keep = t;
    CHECK_MPI(MPI_Type_free(&keep));
    int sz = 0;
    rc = MPI_Type_size(stale, &sz);
    CHECKF(check_error_class(rc) == MPI_ERR_TYPE, "freed handle: class %d", check_error_class(rc));
    expect_text(rc, "has been freed");
    CHECK_MPI(MPI_Type_free(&u));
    /* Pack into a buffer that is too small. */
    char small[4];
    int pos = 0;
    rc = MPI_Pack(send, 2, MPI_INT, small, 4, &pos, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Pack overflow: class %d", check_error_class(rc));
    CHECKF(pos == 0, "a failed MPI_Pack moved the position to %d", pos);
    /* The typed buffer of MPI_Pack and MPI_Unpack: NULL with data, or
     * MPI_IN_PLACE, is MPI_ERR_BUFFER naming the argument. */
    MPI_Aint apos = 0;
    rc = MPI_Pack(NULL, 2, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Pack from NULL: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Pack: inbuf is NULL but holds 2 elements of MPI_INT");
    rc = MPI_Unpack(packed, 64, &pos, NULL, 2, MPI_INT, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Unpack into NULL: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Unpack: outbuf is NULL but holds 2 elements of MPI_INT");
    rc = MPI_Pack_external("external32", NULL, 2, MPI_INT, packed, 64, &apos);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Pack_external from NULL: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Pack_external: inbuf is NULL");
    rc = MPI_Unpack_external("external32", packed, 64, &apos, NULL, 2, MPI_INT);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Unpack_external into NULL: class %d",
           check_error_class(rc));
    expect_text(rc, "MPI_Unpack_external: outbuf is NULL");
    rc = MPI_Pack(MPI_IN_PLACE, 2, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Pack from MPI_IN_PLACE: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Pack: inbuf is MPI_IN_PLACE");
    rc = MPI_Unpack(packed, 64, &pos, MPI_IN_PLACE, 2, MPI_INT, MPI_COMM_WORLD);
    CHECKF(check_error_class(rc) == MPI_ERR_BUFFER, "MPI_Unpack into MPI_IN_PLACE: class %d",
           check_error_class(rc));
    expect_text(rc, "MPI_Unpack: outbuf is MPI_IN_PLACE");
    CHECKF(pos == 0 && apos == 0, "failed packs moved the positions to %d, %ld", pos, (long)apos);
    /* A NULL array of the array constructors is named. */
    int gsize = 4, subsize = 2, start = 0, distrib = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG,
        psize = 1;
    rc = MPI_Type_create_subarray(1, &gsize, &subsize, NULL, MPI_ORDER_C, MPI_INT, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "subarray with NULL starts: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Type_create_subarray: array_of_starts is NULL");
    rc = MPI_Type_create_subarray(1, &gsize, NULL, &start, MPI_ORDER_C, MPI_INT, &u);
    expect_text(rc, "MPI_Type_create_subarray: array_of_subsizes is NULL");
    rc = MPI_Type_create_darray(1, 0, 1, &gsize, &distrib, NULL, &psize, MPI_ORDER_C, MPI_INT, &u);
    CHECKF(check_error_class(rc) == MPI_ERR_ARG, "darray with NULL dargs: class %d", check_error_class(rc));
    expect_text(rc, "MPI_Type_create_darray: array_of_dargs is NULL");
    rc = MPI_Type_create_darray(1, 0, 1, &gsize, &distrib, &darg, NULL, MPI_ORDER_C, MPI_INT, &u);
    expect_text(rc, "MPI_Type_create_darray: array_of_psizes is NULL");
    rc = MPI_Type_create_darray(1, 0, 1, NULL, NULL, NULL, NULL, MPI_ORDER_C, MPI_INT, &u);
    expect_text(rc, "MPI_Type_create_darray: array_of_gsizes is NULL");
#else
    CHECK_MPI(MPI_Type_free(&t));
#endif
    MPI_Finalize();
    return 0;
}
