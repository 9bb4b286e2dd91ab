// The per-process table of keyval ids (see attributes.hpp).
#include "attributes.hpp"

#include <cstdint>
#include <map>

namespace shmpi::attr {
namespace {

/// User keyvals are numbered from here, clear of the predefined keys
/// (MPI_TAG_UB ...) and of MPI_KEYVAL_INVALID.
constexpr int kFirstKeyval = 1024;

struct Table {
    /// Every Keyval alive (some of them freed by the user).
    std::map<int, Keyval*> live;
    /// The next id to try.  Counting up, then from kFirstKeyval again past
    /// the ids still alive: a program that makes and frees keyvals in a
    /// loop never runs out (it did after 2^31 of them).
    int next = kFirstKeyval;
};

Table& table() {
    // Never destroyed: keyvals may be looked up until the process ends.
    static Table* t = new Table();
    return *t;
}

}  // namespace

int create_keyval(Keyval k) {
    Table& t = table();
    constexpr std::size_t kIds = static_cast<std::size_t>(INT32_MAX) - kFirstKeyval;
    if (t.live.size() >= kIds) throw MpiError(MPI_ERR_INTERN, "create_keyval: out of keyval ids (all alive)");
    int id = 0;
    do {
        if (t.next == INT32_MAX) t.next = kFirstKeyval;
        id = t.next++;
    } while (t.live.count(id) != 0);
    auto* owned = new Keyval(k);
    owned->id = id;
    owned->refs = 1;
    owned->freed = false;
    t.live.emplace(owned->id, owned);
    return owned->id;
}

void set_next_keyval_id(int id) { table().next = id; }

Keyval* find_keyval(int id) {
    auto& m = table().live;
    auto it = m.find(id);
    return it == m.end() ? nullptr : it->second;
}

void end_keyval(Keyval& k) {
    table().live.erase(k.id);
    delete &k;
}

void free_keyval(Keyval& k) {
    k.freed = true;
    release(k);
}

}  // namespace shmpi::attr

extern "C" {

// ---- the predefined callbacks (MPI-3.1 6.7.2, 6.7.4): callable by the
//      program as well as passed as callbacks.  The MPI-1 ones have the
//      types of the communicator ones. ----

int shmpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int shmpi_comm_dup_fn(MPI_Comm, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int shmpi_comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

int shmpi_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int shmpi_type_dup_fn(MPI_Datatype, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int shmpi_type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }

int shmpi_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int shmpi_win_dup_fn(MPI_Win, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int shmpi_win_null_delete_fn(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }

int shmpi_null_copy_fn(MPI_Comm comm, int keyval, void* extra_state, void* attribute_val_in,
                       void* attribute_val_out, int* flag) {
    return shmpi_comm_null_copy_fn(comm, keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}

int shmpi_dup_fn(MPI_Comm comm, int keyval, void* extra_state, void* attribute_val_in,
                 void* attribute_val_out, int* flag) {
    return shmpi_comm_dup_fn(comm, keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}

int shmpi_null_delete_fn(MPI_Comm comm, int keyval, void* attribute_val, void* extra_state) {
    return shmpi_comm_null_delete_fn(comm, keyval, attribute_val, extra_state);
}

}  // extern "C"
