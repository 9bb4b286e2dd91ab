// The reduction kernels of the predefined operations: one tight loop per
// (operation, predefined type) pair the standard allows, over the dense
// (packed) form of the data.
//
// Every kernel computes inout[i] = in[i] op inout[i] for i < count, where
// `in` is the contribution of the lower ranks (coll::Reduction's contract).
// The loops are plain element-wise loops over typed arrays, so the compiler
// vectorises them without changing any element's arithmetic: the result of
// a kernel never depends on how it was vectorised or on how the caller split
// the array.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace shmpi::dtype {

/// The predefined reduction operations (MPI_REPLACE and MPI_NO_OP are for
/// one-sided accumulates only and have no kernel here).
enum class OpKind : std::uint8_t {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
    Maxloc,
    Minloc,
};
inline constexpr int kOpKinds = 12;

/// The kernel signature; identical to coll::Reduction::combine, so a kernel
/// is used there directly (`state` is unused).
using ReduceKernel = void (*)(const void* in, void* inout, std::int64_t count, const void* state);

/// The kernel of `op` on elements of the predefined type `basic`, or nullptr
/// when MPI does not define `op` on that type.  `count` then counts elements
/// of `basic` in dense form: for the pair types of MPI_MINLOC/MPI_MAXLOC, a
/// dense element is the value immediately followed by the index, with no
/// padding (what dtype::pack produces).
///
/// The type classes follow MPI-3.1 section 5.9.2: MAX/MIN on integers and
/// floating point; SUM/PROD also on complex; LAND/LOR/LXOR on integers and
/// logicals; BAND/BOR/BXOR on integers and MPI_BYTE; MAXLOC/MINLOC on the
/// pair types.  Like MPICH, MPI_CHAR counts as an integer (a signed char).
ReduceKernel reduce_kernel(OpKind op, MPI_Datatype basic);

/// "MPI_SUM", "MPI_MAXLOC", ...
const char* op_kind_name(OpKind op);

}  // namespace shmpi::dtype
