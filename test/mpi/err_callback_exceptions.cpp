// err_callback_exceptions.cpp: C++ exceptions that leave the callbacks a
// program hands to MPI.  MPI does not define what happens then (MPICH 4.0.2
// ends the process in std::terminate); shmpi's answer, which README.md
// states, is checked here:
//   - from a reduction operation or an attribute copy or delete function,
//     any exception becomes an error of the MPI call that ran the callback,
//     MPI_ERR_INTERN, naming the call and, for a std::exception, its what();
//   - from an error handler, the exception passes through the MPI call to
//     the caller: the idiom that turns MPI errors into C++ exceptions.
// Afterwards the library still works: the operation, the communicator and
// a collective over every rank.  shmpi only (test/mpi/meson.build).
#include <mpi.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "check.h"

namespace {

/// Something thrown that is not a std::exception.
struct NotStd {
    int value;
};

enum class Throw { kNothing, kStd, kNotStd };
Throw op_throws = Throw::kNothing;

void sum_or_throw(void* in, void* inout, int* len, MPI_Datatype*) {
    if (op_throws == Throw::kStd) throw std::runtime_error("the operation gave up");
    if (op_throws == Throw::kNotStd) throw NotStd{7};
    for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}

Throw delete_throws = Throw::kNothing;

int delete_or_throw(MPI_Comm, int, void*, void*) {
    if (delete_throws == Throw::kStd) throw std::length_error("the delete function gave up");
    if (delete_throws == Throw::kNotStd) throw NotStd{8};
    return MPI_SUCCESS;
}

int copy_throws(MPI_Comm, int, void*, void*, void*, int*) { throw std::runtime_error("the copy function gave up"); }

void handler_throws(MPI_Comm*, int* code, ...) {
    throw std::runtime_error("MPI error class " + std::to_string(check_error_class(*code)));
}

}  // namespace

int main(int argc, char** argv) {
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int size = world_size();

    // 1. A reduction operation.
    MPI_Op op = MPI_OP_NULL;
    CHECK_MPI(MPI_Op_create(sum_or_throw, 1, &op));
    int in[2] = {1, 2};
    int inout[2] = {10, 20};
    op_throws = Throw::kStd;
    check_error_says(MPI_Reduce_local(in, inout, 2, MPI_INT, op), MPI_ERR_INTERN, "std from the operation",
                     "MPI_Reduce_local: the operation gave up");
    op_throws = Throw::kNotStd;
    int rc = MPI_SUCCESS;
    try {
        rc = MPI_Reduce_local(in, inout, 2, MPI_INT, op);
    } catch (const NotStd&) {
        CHECKF(false, "an exception that is not a std::exception passed through MPI_Reduce_local");
    }
    check_error_says(rc, MPI_ERR_INTERN, "non-std from the operation",
                     "MPI_Reduce_local: a callback threw an exception that is not a std::exception");
    op_throws = Throw::kNothing;
    CHECK_MPI(MPI_Reduce_local(in, inout, 2, MPI_INT, op));
    CHECKF(inout[0] == 11 && inout[1] == 22, "after the throws: %d %d", inout[0], inout[1]);

    // 2. Attribute callbacks.
    int key = MPI_KEYVAL_INVALID;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_or_throw, &key, nullptr));
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    static int value = 5;
    CHECK_MPI(MPI_Comm_set_attr(dup, key, &value));
    delete_throws = Throw::kStd;
    check_error_says(MPI_Comm_delete_attr(dup, key), MPI_ERR_INTERN, "std from the delete function",
                     "the delete function gave up");
    delete_throws = Throw::kNotStd;
    rc = MPI_SUCCESS;
    try {
        rc = MPI_Comm_delete_attr(dup, key);
    } catch (const NotStd&) {
        CHECKF(false, "an exception that is not a std::exception passed through MPI_Comm_delete_attr");
    }
    check_error_says(rc, MPI_ERR_INTERN, "non-std from the delete function",
                     "a callback threw an exception that is not a std::exception");
    delete_throws = Throw::kNothing;
    CHECK_MPI(MPI_Comm_delete_attr(dup, key));
    int* got = nullptr;
    int flag = 1;
    CHECK_MPI(MPI_Comm_get_attr(dup, key, &got, &flag));
    CHECKF(flag == 0, "the attribute is still there after its delete function returned");
    CHECK_MPI(MPI_Comm_free_keyval(&key));

    // Every rank's copy function throws: MPI_Comm_dup fails alike on each.
    int copy_key = MPI_KEYVAL_INVALID;
    CHECK_MPI(MPI_Comm_create_keyval(copy_throws, MPI_COMM_NULL_DELETE_FN, &copy_key, nullptr));
    CHECK_MPI(MPI_Comm_set_attr(dup, copy_key, &value));
    MPI_Comm dup2 = MPI_COMM_NULL;
    check_error_says(MPI_Comm_dup(dup, &dup2), MPI_ERR_INTERN, "std from the copy function",
                     "the copy function gave up");
    CHECK_MPI(MPI_Comm_delete_attr(dup, copy_key));
    CHECK_MPI(MPI_Comm_free_keyval(&copy_key));

    // 3. An error handler's exception reaches the caller.
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_create_errhandler(handler_throws, &eh));
    CHECK_MPI(MPI_Comm_set_errhandler(dup, eh));
    bool caught = false;
    try {
        int x = 0;
        MPI_Send(&x, -1, MPI_INT, 0, 0, dup);
    } catch (const std::runtime_error& e) {
        caught = true;
        const std::string want = "MPI error class " + std::to_string(MPI_ERR_COUNT);
        CHECKF(want == e.what(), "the handler's exception says \"%s\"", e.what());
    }
    CHECKF(caught, "the error handler's exception did not reach the caller");
    CHECK_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&eh));

    // 4. Everything still works, together.
    int mine[2] = {world_rank() + 1, 1};
    int total[2] = {0, 0};
    CHECK_MPI(MPI_Allreduce(mine, total, 2, MPI_INT, op, dup));
    CHECKF(total[0] == size * (size + 1) / 2 && total[1] == size, "Allreduce: %d %d", total[0], total[1]);
    CHECK_MPI(MPI_Op_free(&op));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
