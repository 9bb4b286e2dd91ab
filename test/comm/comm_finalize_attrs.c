/*
 * MPI_Finalize deletes the attributes of MPI_COMM_SELF first (MPI-3.1
 * 8.7.1), with MPI still usable inside the delete callback: libraries hook
 * their clean-up there.
 */
#include "check.h"

static int ran;

static int on_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)keyval, (void)value, (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    CHECKF(!finalized, "the delete callback ran after MPI_Finalize");
    CHECK(comm == MPI_COMM_SELF);
    int size = 0;
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ++ran;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int key;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &key, NULL));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
    CHECK_MPI(MPI_Finalize());
    if (ran != 1) {
        fprintf(stderr, "comm_finalize_attrs: the delete callback ran %d times, expected 1\n", ran);
        return 1;
    }
    return 0;
}
