#include "errors.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <vector>

namespace shmpi {
namespace {

// Codes are class + kStride * slot, slot 1..kSlots; every code stays below
// MPI_ERR_LASTCODE as the MPI-5 ABI requires.  Each class has its own ring
// of slots, so a code keeps its message until kSlots - 2 more errors of
// its class have been made (slot kToolSlot is never used) (a different message each); after that its
// slot holds a later message of the same class.
constexpr int kStride = 64;
constexpr int kSlots = MPI_ERR_LASTCODE / kStride - 1;  // 254
static_assert(MPI_ERR_ERRHANDLER < kStride, "every error class must fit below the code stride");
// The tool interface's classes (MPI_T_ERR_*, 1001..1018 in the MPI-5 ABI)
// lie where slot 15 of classes 41..58 would: no code uses slot 15.
constexpr int kToolSlot = MPI_T_ERR_CANNOT_INIT / kStride;
static_assert(MPI_T_ERR_PVAR_NO_ATOMIC / kStride == kToolSlot, "the MPI_T classes share one slot");

bool tool_class(int code) { return code >= MPI_T_ERR_CANNOT_INIT && code <= MPI_T_ERR_PVAR_NO_ATOMIC; }

struct Remembered {
    std::mutex lock;  // MPI_THREAD_SERIALIZED still allows different threads
    /// messages[cls][slot]: grown as slots are first used.
    std::array<std::vector<std::string>, MPI_ERR_ERRHANDLER + 1> messages;
    /// The slot each class used last (0: none yet).
    std::array<int, MPI_ERR_ERRHANDLER + 1> last{};
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
    case MPI_ERR_ACCESS:
        return "MPI_ERR_ACCESS: permission denied";
    case MPI_ERR_AMODE:
        return "MPI_ERR_AMODE: invalid file access mode";
    case MPI_ERR_ASSERT:
        return "MPI_ERR_ASSERT: invalid assert argument";
    case MPI_ERR_BAD_FILE:
        return "MPI_ERR_BAD_FILE: invalid file name";
    case MPI_ERR_BASE:
        return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_CONVERSION:
        return "MPI_ERR_CONVERSION: error in a data conversion function";
    case MPI_ERR_DISP:
        return "MPI_ERR_DISP: invalid displacement argument";
    case MPI_ERR_DUP_DATAREP:
        return "MPI_ERR_DUP_DATAREP: data representation identifier already registered";
    case MPI_ERR_FILE_EXISTS:
        return "MPI_ERR_FILE_EXISTS: file exists";
    case MPI_ERR_FILE_IN_USE:
        return "MPI_ERR_FILE_IN_USE: file in use by some process";
    case MPI_ERR_FILE:
        return "MPI_ERR_FILE: invalid file handle";
    case MPI_ERR_INFO_KEY:
        return "MPI_ERR_INFO_KEY: invalid info key (empty or too long)";
    case MPI_ERR_INFO_NOKEY:
        return "MPI_ERR_INFO_NOKEY: info key not defined";
    case MPI_ERR_INFO_VALUE:
        return "MPI_ERR_INFO_VALUE: invalid info value (too long)";
    case MPI_ERR_INFO:
        return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_IO:
        return "MPI_ERR_IO: other I/O error";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid keyval";
    case MPI_ERR_LOCKTYPE:
        return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_NAME:
        return "MPI_ERR_NAME: service name not published";
    case MPI_ERR_NO_SPACE:
        return "MPI_ERR_NO_SPACE: not enough space";
    case MPI_ERR_NO_SUCH_FILE:
        return "MPI_ERR_NO_SUCH_FILE: file does not exist";
    case MPI_ERR_PORT:
        return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_QUOTA:
        return "MPI_ERR_QUOTA: quota exceeded";
    case MPI_ERR_READ_ONLY:
        return "MPI_ERR_READ_ONLY: read-only file or file system";
    case MPI_ERR_RMA_ATTACH:
        return "MPI_ERR_RMA_ATTACH: memory cannot be attached to the window";
    case MPI_ERR_RMA_CONFLICT:
        return "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window";
    case MPI_ERR_RMA_RANGE:
        return "MPI_ERR_RMA_RANGE: target memory not in the window";
    case MPI_ERR_RMA_SHARED:
        return "MPI_ERR_RMA_SHARED: memory cannot be shared";
    case MPI_ERR_RMA_SYNC:
        return "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls";
    case MPI_ERR_RMA_FLAVOR:
        return "MPI_ERR_RMA_FLAVOR: wrong window flavor for this call";
    case MPI_ERR_SERVICE:
        return "MPI_ERR_SERVICE: invalid service name";
    case MPI_ERR_SESSION:
        return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_SIZE:
        return "MPI_ERR_SIZE: invalid size argument";
    case MPI_ERR_SPAWN:
        return "MPI_ERR_SPAWN: error in spawning processes";
    case MPI_ERR_UNSUPPORTED_DATAREP:
        return "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation";
    case MPI_ERR_WIN:
        return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME: collective argument not identical on all processes";
    case MPI_ERR_PROC_ABORTED: return "MPI_ERR_PROC_ABORTED: operation failed because a peer process aborted";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation";
    case MPI_ERR_VALUE_TOO_LARGE: return "MPI_ERR_VALUE_TOO_LARGE: value too large to store";
    case MPI_ERR_ERRHANDLER: return "MPI_ERR_ERRHANDLER: invalid error handler";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized now";
    case MPI_T_ERR_NOT_ACCESSIBLE: return "MPI_T_ERR_NOT_ACCESSIBLE: not accessible now";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized";
    case MPI_T_ERR_NOT_SUPPORTED: return "MPI_T_ERR_NOT_SUPPORTED: not supported";
    case MPI_T_ERR_MEMORY: return "MPI_T_ERR_MEMORY: out of memory";
    case MPI_T_ERR_INVALID: return "MPI_T_ERR_INVALID: invalid use of the tool interface";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T_ERR_INVALID_INDEX: invalid variable or category index";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T_ERR_INVALID_ITEM: invalid enumeration item index";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T_ERR_INVALID_SESSION: invalid performance variable session";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T_ERR_INVALID_HANDLE: invalid tool interface handle";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T_ERR_INVALID_NAME: no variable or category has that name";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T_ERR_OUT_OF_HANDLES: no more handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T_ERR_CVAR_SET_NOT_NOW: the control variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T_ERR_CVAR_SET_NEVER: the control variable can never be set";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T_ERR_PVAR_NO_WRITE: the performance variable cannot be written";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T_ERR_PVAR_NO_STARTSTOP: the performance variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T_ERR_PVAR_NO_ATOMIC: the performance variable cannot be read and reset atomically";
    default:
        return nullptr;  // not a predefined class: error_class_of() refuses it first
    }
}

}  // namespace

int make_error_code(int error_class, const std::string& message) {
    if (error_class <= MPI_SUCCESS || error_class > MPI_ERR_ERRHANDLER) return error_class;
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    std::vector<std::string>& ring = r.messages[static_cast<std::size_t>(error_class)];
    int& last = r.last[static_cast<std::size_t>(error_class)];
    // The same error again (a call failing in a loop) keeps its code, so
    // that it does not push the other remembered messages out.
    if (last != 0 && ring[static_cast<std::size_t>(last)] == message) return error_class + kStride * last;
    last = last % kSlots + 1;
    if (last == kToolSlot) ++last;
    if (ring.size() <= static_cast<std::size_t>(last)) ring.resize(static_cast<std::size_t>(last) + 1);
    ring[static_cast<std::size_t>(last)] = message;
    return error_class + kStride * last;
}

int error_class_of(int code) {
    // MPI_ERR_LASTCODE is a valid code too (MPI-3.1 8.4), its own class.
    if (code == MPI_ERR_LASTCODE) return MPI_ERR_LASTCODE;
    if (tool_class(code)) return code;
    if (code > MPI_ERR_LASTCODE) {
        Remembered& r = remembered();
        std::lock_guard guard(r.lock);
        const Remembered::User* u = user_entry(r, code);
        return u != nullptr ? u->cls : -1;
    }
    if (code < 0) return -1;
    // A code below MPI_ERR_LASTCODE is a class, or a class and a slot that
    // make_error_code() gives out: never a slot past kSlots, and never one
    // for MPI_SUCCESS.  The slot is not checked against this process's
    // ring, because a code may come from another rank (sent in a message),
    // whose ring differs; error_text() then shows the class's description.
    const int cls = code % kStride;
    const int slot = code / kStride;
    if (cls > MPI_ERR_ERRHANDLER || slot > kSlots || slot == kToolSlot || (cls == MPI_SUCCESS && slot != 0)) return -1;
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
    const auto slot = static_cast<std::size_t>(code / kStride);
    if (slot == 0 || tool_class(code)) return generic;
    Remembered& r = remembered();
    std::lock_guard guard(r.lock);
    const std::vector<std::string>& ring = r.messages[static_cast<std::size_t>(cls)];
    return slot < ring.size() && !ring[slot].empty() ? ring[slot] : generic;
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
