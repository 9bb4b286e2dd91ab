/*
 * err_null_outputs: a constructor that fails under MPI_ERRORS_RETURN leaves
 * the null handle in its output argument, not whatever the variable held,
 * so that a program which checks for MPI_COMM_NULL (or frees what it got)
 * after an error does not use a stale handle.  The standard leaves the
 * output of a failed call undefined (so shmpi only); MPICH does the same for
 * communicators (its test errors/topo/cartsmall).
 *
 * Each output starts as a live handle of its kind, the call fails with the
 * class it should, and the output must then be the null handle:
 *   MPI_Cart_create (grid larger than the communicator), MPI_Cart_sub (NULL
 *   remain_dims), MPI_Graph_create (an edge to a node that does not exist),
 *   MPI_Dist_graph_create_adjacent (a source rank out of range),
 *   MPI_Comm_split_type (an unknown split type), MPI_Group_incl (a rank
 *   out of range), MPI_Type_vector (negative count), MPI_Type_dup
 *   (MPI_DATATYPE_NULL), MPI_Info_dup (MPI_INFO_NULL).
 * Then outputs that alias the input still work: MPI_Comm_dup(c, &c),
 * MPI_Type_contiguous(2, t, &t) and a struct whose output is &types[1]
 * make new objects from the old ones.
 */
#include "check.h"

static void expect_class(int rc, int cls, const char *what)
{
    CHECKF(rc != MPI_SUCCESS, "%s succeeded", what);
    CHECKF(check_error_class(rc) == cls, "%s: error class %d, want %d", what,
           check_error_class(rc), cls);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int size = world_size();

    /* Communicators; the output starts as MPI_COMM_SELF. */
    MPI_Comm out = MPI_COMM_SELF;
    int dims[2] = {size, 2}, periods[2] = {0, 0};
    expect_class(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &out), MPI_ERR_ARG,
                 "MPI_Cart_create of a grid larger than the communicator");
    CHECK(out == MPI_COMM_NULL);

    MPI_Comm line;
    int n = size;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, periods, 0, &line));
    out = MPI_COMM_SELF;
    expect_class(MPI_Cart_sub(line, NULL, &out), MPI_ERR_ARG, "MPI_Cart_sub with NULL remain_dims");
    CHECK(out == MPI_COMM_NULL);
    CHECK_MPI(MPI_Comm_free(&line));

    int index[1] = {1}, edges[1] = {size};
    out = MPI_COMM_SELF;
    expect_class(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &out), MPI_ERR_ARG,
                 "MPI_Graph_create with an edge to a missing node");
    CHECK(out == MPI_COMM_NULL);

    int source = size, weight = 1;
    out = MPI_COMM_SELF;
    expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &source, &weight, 0, NULL, NULL,
                                                MPI_INFO_NULL, 0, &out),
                 MPI_ERR_RANK, "MPI_Dist_graph_create_adjacent with a source out of range");
    CHECK(out == MPI_COMM_NULL);

    out = MPI_COMM_SELF;
    expect_class(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &out), MPI_ERR_ARG,
                 "MPI_Comm_split_type with split type 12345");
    CHECK(out == MPI_COMM_NULL);

    /* A group; the output starts as MPI_Comm_group's group. */
    MPI_Group world_group, group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    group = world_group;
    int rank = size;
    expect_class(MPI_Group_incl(world_group, 1, &rank, &group), MPI_ERR_RANK,
                 "MPI_Group_incl of a rank out of range");
    CHECK(group == MPI_GROUP_NULL);
    CHECK_MPI(MPI_Group_free(&world_group));

    /* Datatypes; the output starts as MPI_INT. */
    MPI_Datatype type = MPI_INT;
    expect_class(MPI_Type_vector(-1, 1, 2, MPI_INT, &type), MPI_ERR_COUNT,
                 "MPI_Type_vector with count -1");
    CHECK(type == MPI_DATATYPE_NULL);
    type = MPI_INT;
    expect_class(MPI_Type_dup(MPI_DATATYPE_NULL, &type), MPI_ERR_TYPE, "MPI_Type_dup of MPI_DATATYPE_NULL");
    CHECK(type == MPI_DATATYPE_NULL);

    /* An info; the output starts as a live info. */
    MPI_Info info, live;
    CHECK_MPI(MPI_Info_create(&live));
    info = live;
    expect_class(MPI_Info_dup(MPI_INFO_NULL, &info), MPI_ERR_INFO, "MPI_Info_dup of MPI_INFO_NULL");
    CHECK(info == MPI_INFO_NULL);
    CHECK_MPI(MPI_Info_free(&live));

    /* Outputs that alias the input: the old object is the input. */
    MPI_Comm c, first;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    first = c;
    CHECK_MPI(MPI_Comm_dup(c, &c));
    CHECK(c != first && c != MPI_COMM_NULL);
    int cmp = MPI_UNEQUAL;
    CHECK_MPI(MPI_Comm_compare(first, c, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    CHECK_MPI(MPI_Comm_free(&first));
    CHECK_MPI(MPI_Comm_free(&c));

    MPI_Datatype t, pair;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    pair = t;
    CHECK_MPI(MPI_Type_contiguous(2, t, &t));
    int tsize = 0;
    CHECK_MPI(MPI_Type_size(t, &tsize));
    CHECK(tsize == 6 * (int)sizeof(int));
    CHECK_MPI(MPI_Type_free(&pair));
    CHECK_MPI(MPI_Type_free(&t));

    /* A struct whose output is one of its own types[]. */
    MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
    int blocklens[2] = {1, 2};
    MPI_Aint displs[2] = {0, 8};
    CHECK_MPI(MPI_Type_create_struct(2, blocklens, displs, types, &types[1]));
    CHECK_MPI(MPI_Type_size(types[1], &tsize));
    CHECK(tsize == 1 + 2 * (int)sizeof(double));
    CHECK_MPI(MPI_Type_free(&types[1]));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
