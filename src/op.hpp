// Reduction operations: the predefined MPI_Op handles and those MPI_Op_create
// makes, and their binding to a datatype as the coll::Reduction that the
// collective algorithms run on dense bytes.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "coll/coll.hpp"
#include "dtype/datatype.hpp"
#include "dtype/reduce_kernels.hpp"
#include "handle_storage.hpp"

namespace shmpi::op {

/// One operation.  Predefined ones live in a static table indexed by their
/// handle value; user ones are heap objects whose address is the handle.
struct Op : HandleStorage {
    static constexpr std::uint32_t kMagic = 0x4f505552;  // "OPUR"

    std::uint32_t magic = kMagic;  ///< tells a live Op from garbage
    bool predefined = false;
    /// MPI_REPLACE and MPI_NO_OP: valid handles, but only for one-sided
    /// accumulates, never in a collective.
    bool one_sided_only = false;
    dtype::OpKind kind = dtype::OpKind::Max;  ///< predefined operations only
    MPI_User_function* fn = nullptr;          ///< user operations only
    bool commutative = true;
    const char* name = "user operation";
};

/// The operation behind `handle`.  Throws MPI_ERR_OP naming `fn` for
/// MPI_OP_NULL, a freed operation or anything else that is not an MPI_Op.
const Op& op_of(MPI_Op handle, const char* fn);

/// MPI_Op_create: a new user operation; its handle is its address.
MPI_Op create(MPI_User_function* user_fn, bool commutative);

/// MPI_Op_free: frees a user operation.  Throws MPI_ERR_OP naming `fn` when
/// `handle` is predefined or not an operation.
void destroy(MPI_Op handle, const char* fn);

/// An operation applied to `count` elements of one datatype, as the
/// collective algorithms run it: `reduction()` works on dense elements of
/// `reduction().elem_bytes` bytes, `dense_count()` of them.
///
/// A predefined operation works on the basic type the datatype is made of
/// (a derived type built from one basic type counts as that many basic
/// elements); MPI_Op_create's functions get whole elements of the datatype,
/// laid out as the datatype describes, and the handle the caller passed.
/// Not copyable: `reduction().state` points into it.
class Binding {
public:
    /// Throws MPI_ERR_OP, naming `fn`, the operation and the datatype, when
    /// MPI does not define the predefined operation on the datatype.
    Binding(const Op& op, MPI_Datatype handle, const dtype::Datatype& type, std::int64_t count,
            const char* fn);
    Binding(const Binding&) = delete;
    Binding& operator=(const Binding&) = delete;

    const coll::Reduction& reduction() const { return red_; }
    std::int64_t dense_count() const { return dense_count_; }
    /// dense_count() elements of `factor()` per datatype element: counts
    /// of the datatype times factor() are dense counts.
    std::int64_t factor() const { return factor_; }

    /// What a user operation's combine needs.
    struct User {
        MPI_User_function* fn = nullptr;
        MPI_Datatype handle = MPI_DATATYPE_NULL;
        const dtype::Datatype* type = nullptr;
    };

private:
    User user_;
    coll::Reduction red_;
    std::int64_t dense_count_ = 0;
    std::int64_t factor_ = 1;
};

/// Applies a bound operation to typed buffers: inout = in op inout, for
/// MPI_Reduce_local.  Packs and unpacks only when the datatype is not
/// contiguous.
void reduce_local(const Binding& b, const void* in, void* inout, std::int64_t count,
                  const dtype::Datatype& type);

}  // namespace shmpi::op
