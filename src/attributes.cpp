// The per-process table of keyval ids (see attributes.hpp).
#include "attributes.hpp"

#include <map>

namespace shmpi::attr {
namespace {

/// User keyvals are numbered from here, clear of the predefined keys
/// (MPI_TAG_UB ...) and of MPI_KEYVAL_INVALID.
constexpr int kFirstKeyval = 1024;

struct Table {
    /// Every Keyval alive (some of them freed by the user).
    std::map<int, Keyval*> live;
    int next = kFirstKeyval;
};

Table& table() {
    // Never destroyed: keyvals may be looked up until the process ends.
    static Table* t = new Table();
    return *t;
}

void dispose(Keyval& k) {
    table().live.erase(k.id);
    delete &k;
}

}  // namespace

int create_keyval(Keyval k) {
    Table& t = table();
    if (t.next == INT32_MAX) throw MpiError(MPI_ERR_INTERN, "create_keyval: out of keyval ids");
    auto* owned = new Keyval(k);
    owned->id = t.next++;
    owned->refs = 1;
    owned->freed = false;
    owned->dispose = &dispose;
    t.live.emplace(owned->id, owned);
    return owned->id;
}

Keyval* find_keyval(int id) {
    auto& m = table().live;
    auto it = m.find(id);
    return it == m.end() ? nullptr : it->second;
}

void free_keyval(Keyval& k) {
    k.freed = true;
    release(k);
}

}  // namespace shmpi::attr
