// C boundary: handle conversion between C and Fortran (MPI-3.1 17.2.4),
// MPI_Comm_c2f, MPI_Comm_f2c and the same for every other handle type.
//
// shmpi has no Fortran bindings, but C libraries that sit under Fortran
// code (and some that only store handles in integers) call these.  A
// predefined handle is a small integer already (the MPI-5 ABI values) and
// converts to itself.  A handle that is an address gets a number the first
// time it is converted: kFirstNumber plus its place in a table of that
// handle type, and keeps it.  MPI_*_f2c of a number that no handle got
// gives the type's null handle.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace {

/// The first number an address handle gets: above every predefined value.
constexpr MPI_Fint kFirstNumber = static_cast<MPI_Fint>(kPredefinedLimit);

template <class Handle>
class Numbers {
public:
    explicit Numbers(Handle null) : null_(null) {}

    MPI_Fint c2f(Handle h) {
        const auto v = reinterpret_cast<std::uintptr_t>(h);
        if (v < kPredefinedLimit) return static_cast<MPI_Fint>(v);
        std::lock_guard guard(lock_);  // MPI_THREAD_SERIALIZED: several threads, one at a time
        auto found = number_.find(h);
        if (found != number_.end()) return found->second;
        // Every number an MPI_Fint can hold is taken (2^31 - 4096 distinct
        // objects converted): the null handle's number, not an overflow.
        if (handles_.size() >= static_cast<std::size_t>(INT_MAX - kFirstNumber)) {
            return static_cast<MPI_Fint>(reinterpret_cast<std::uintptr_t>(null_));
        }
        const MPI_Fint f = kFirstNumber + static_cast<MPI_Fint>(handles_.size());
        handles_.push_back(h);
        number_.emplace(h, f);
        return f;
    }

    Handle f2c(MPI_Fint f) {
        if (f >= 0 && static_cast<std::uintptr_t>(f) < kPredefinedLimit) return reinterpret_cast<Handle>(static_cast<std::uintptr_t>(f));
        std::lock_guard guard(lock_);
        const auto i = static_cast<std::size_t>(f) - static_cast<std::size_t>(kFirstNumber);
        return f >= kFirstNumber && i < handles_.size() ? handles_[i] : null_;
    }

private:
    Handle null_;
    std::mutex lock_;
    std::vector<Handle> handles_;
    std::unordered_map<Handle, MPI_Fint> number_;
};

/// One table per handle type, never destroyed (conversions may come from
/// destructors of static objects).
template <class Handle>
Numbers<Handle>& numbers(Handle null) {
    static auto* n = new Numbers<Handle>(null);
    return *n;
}

}  // namespace

extern "C" {

#define SHMPI_HANDLE_CONVERSION(Name, Handle, Null)                                         \
    MPI_Fint PMPI_##Name##_c2f(Handle h) { return numbers<Handle>(Null).c2f(h); }          \
    Handle PMPI_##Name##_f2c(MPI_Fint f) { return numbers<Handle>(Null).f2c(f); }
// Each pair by hand: the weak aliases need literal names.
SHMPI_HANDLE_CONVERSION(Comm, MPI_Comm, MPI_COMM_NULL)
SHMPI_WEAK_ALIAS(Comm_c2f);
SHMPI_WEAK_ALIAS(Comm_f2c);
SHMPI_HANDLE_CONVERSION(Type, MPI_Datatype, MPI_DATATYPE_NULL)
SHMPI_WEAK_ALIAS(Type_c2f);
SHMPI_WEAK_ALIAS(Type_f2c);
SHMPI_HANDLE_CONVERSION(Group, MPI_Group, MPI_GROUP_NULL)
SHMPI_WEAK_ALIAS(Group_c2f);
SHMPI_WEAK_ALIAS(Group_f2c);
SHMPI_HANDLE_CONVERSION(Request, MPI_Request, MPI_REQUEST_NULL)
SHMPI_WEAK_ALIAS(Request_c2f);
SHMPI_WEAK_ALIAS(Request_f2c);
SHMPI_HANDLE_CONVERSION(Op, MPI_Op, MPI_OP_NULL)
SHMPI_WEAK_ALIAS(Op_c2f);
SHMPI_WEAK_ALIAS(Op_f2c);
SHMPI_HANDLE_CONVERSION(Info, MPI_Info, MPI_INFO_NULL)
SHMPI_WEAK_ALIAS(Info_c2f);
SHMPI_WEAK_ALIAS(Info_f2c);
SHMPI_HANDLE_CONVERSION(Errhandler, MPI_Errhandler, MPI_ERRHANDLER_NULL)
SHMPI_WEAK_ALIAS(Errhandler_c2f);
SHMPI_WEAK_ALIAS(Errhandler_f2c);
SHMPI_HANDLE_CONVERSION(Message, MPI_Message, MPI_MESSAGE_NULL)
SHMPI_WEAK_ALIAS(Message_c2f);
SHMPI_WEAK_ALIAS(Message_f2c);
SHMPI_HANDLE_CONVERSION(Win, MPI_Win, MPI_WIN_NULL)
SHMPI_WEAK_ALIAS(Win_c2f);
SHMPI_WEAK_ALIAS(Win_f2c);
SHMPI_HANDLE_CONVERSION(File, MPI_File, MPI_FILE_NULL)
SHMPI_WEAK_ALIAS(File_c2f);
SHMPI_WEAK_ALIAS(File_f2c);
#undef SHMPI_HANDLE_CONVERSION

// A Fortran status is the C one, integer for integer: MPI_Status is eight
// ints with the public fields first, in MPI_F_SOURCE/_TAG/_ERROR order.
static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint) &&
                  offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint) &&
                  offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint) &&
                  offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint),
              "MPI_Status_c2f copies the C status into MPI_F_STATUS_SIZE integers");

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
    const char* fn = "MPI_Status_c2f";
    return guard(MPI_COMM_WORLD, fn, [&] {
        // MPI-3.1 17.2.5: MPI_STATUS_IGNORE is not a status to convert.
        need(c_status, "c_status (MPI_STATUS_IGNORE?)", fn);
        need(f_status, "f_status", fn);
        std::memcpy(f_status, c_status, sizeof(MPI_Status));
    });
}
SHMPI_WEAK_ALIAS(Status_c2f);

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
    const char* fn = "MPI_Status_f2c";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(f_status, "f_status (MPI_F_STATUS_IGNORE?)", fn);
        need(c_status, "c_status", fn);
        std::memcpy(c_status, f_status, sizeof(MPI_Status));
    });
}
SHMPI_WEAK_ALIAS(Status_f2c);

}  // extern "C"
