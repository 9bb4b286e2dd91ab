#include "errors.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <vector>

namespace shmpi {
namespace {

// Codes are class + kStride * slot, slot 1..kSlots; every code stays below
// MPI_ERR_LASTCODE as the MPI-5 ABI requires.
constexpr int kStride = 64;
constexpr int kSlots = MPI_ERR_LASTCODE / kStride - 1;  // 254
static_assert(MPI_ERR_ERRHANDLER < kStride, "every error class must fit below the code stride");

struct Remembered {
    std::mutex lock;  // MPI_THREAD_SERIALIZED still allows different threads
    std::array<std::string, kSlots + 1> messages;
    /// The class each slot's message was made for: a code whose slot now
    /// holds another class's message gets its class's description, not
    /// that message.
    std::array<int, kSlots + 1> classes{};
    int next = 0;
    /// Classes and codes the program added (MPI_Add_error_class/_code):
    /// value MPI_ERR_LASTCODE + 1 + i is users[i].
    struct User {
        int cls;           ///< its class (its own value for a class)
        std::string text;  ///< MPI_Add_error_string's; empty until then
    };
    std::vector<User> users;
};

/// Adds a class (`cls` < 0: the entry's own value) or a code of class
/// `cls`; returns its value.  Caller holds the lock.
int add_user(Remembered& r, int cls) {
    const int value = MPI_ERR_LASTCODE + 1 + static_cast<int>(r.users.size());
    r.users.push_back({cls < 0 ? value : cls, {}});
    return value;
}

/// The user entry behind `code`, or nullptr.  Caller holds the lock.
Remembered::User* user_entry(Remembered& r, int code) {
    if (code <= MPI_ERR_LASTCODE) return nullptr;
    const auto i = static_cast<std::size_t>(code - MPI_ERR_LASTCODE - 1);
    return i < r.users.size() ? &r.users[i] : nullptr;
}

Remembered& remembered() {
    static Remembered r;
    return r;
}

const char* class_text(int cls) {
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduce operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument of some other kind";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated on receive";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid keyval";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME: collective argument not identical on all processes";
    case MPI_ERR_PROC_ABORTED: return "MPI_ERR_PROC_ABORTED: operation failed because a peer process aborted";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation";
    case MPI_ERR_VALUE_TOO_LARGE: return "MPI_ERR_VALUE_TOO_LARGE: value too large to store";
    case MPI_ERR_ERRHANDLER: return "MPI_ERR_ERRHANDLER: invalid error handler";
    default: return nullptr;
    }
}

}  // namespace

int make_error_code(int error_class, const std::string& message) {
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    // The same error again (a call failing in a loop) keeps its code, so
    // that it does not push the other remembered messages out.
    if (r.next != 0 && r.classes[r.next] == error_class && r.messages[r.next] == message) {
        return error_class + kStride * r.next;
    }
    r.next = r.next % kSlots + 1;
    r.messages[r.next] = message;
    r.classes[r.next] = error_class;
    return error_class + kStride * r.next;
}

int error_class_of(int code) {
    // MPI_ERR_LASTCODE is a valid code too (MPI-3.1 8.4), its own class.
    if (code == MPI_ERR_LASTCODE) return MPI_ERR_LASTCODE;
    if (code > MPI_ERR_LASTCODE) {
        Remembered& r = remembered();
        std::lock_guard guard(r.lock);
        const Remembered::User* u = user_entry(r, code);
        return u != nullptr ? u->cls : -1;
    }
    if (code < 0) return -1;
    const int cls = code % kStride;
    if (cls > MPI_ERR_ERRHANDLER) return -1;
    return cls;
}

std::string error_text(int code) {
    const int cls = error_class_of(code);
    if (cls < 0) return {};
    if (code > MPI_ERR_LASTCODE) {
        Remembered& r = remembered();
        std::lock_guard guard(r.lock);
        return user_entry(r, code)->text;
    }
    if (cls == MPI_ERR_LASTCODE) return "MPI_ERR_LASTCODE: the last error code";
    const char* base = class_text(cls);
    std::string generic = base != nullptr ? base : "MPI error class " + std::to_string(cls);
    const int slot = code / kStride;
    if (slot == 0) return generic;
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    const std::string& m = r.messages[slot];
    return m.empty() || r.classes[slot] != cls ? generic : m;
}

int add_error_class() {
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    return add_user(r, -1);
}

int add_error_code(int error_class) {
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    const Remembered::User* u = user_entry(r, error_class);
    const bool predefined = error_class > MPI_SUCCESS && error_class <= MPI_ERR_ERRHANDLER;
    if (!predefined && (u == nullptr || u->cls != error_class)) return -1;
    return add_user(r, error_class);
}

bool set_error_string(int code, const std::string& text) {
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    Remembered::User* u = user_entry(r, code);
    if (u == nullptr) return false;
    u->text = text;
    return true;
}

int last_used_code() {
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    // MPI-3.1 8.5: the largest error class, added ones included.
    int last = MPI_ERR_LASTCODE;
    for (const Remembered::User& u : r.users) last = std::max(last, u.cls);
    return last;
}

}  // namespace shmpi
