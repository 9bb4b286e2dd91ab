// What the constructor families share: checked arithmetic, the bounds of
// placed blocks, and the steps that finish a new type.  Internal to
// src/dtype/.
//
// A constructor follows these steps:
//   1. check its arguments (errors name the function, argument and value);
//   2. create() the new type and set its normalised layout, adding every
//      block it places (and every MPI_LB/MPI_UB marker) to a Bounds;
//   3. Bounds::store() the bounds, then finish() the sums and flags;
//   4. record the envelope (what the user called, for Type_get_contents).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dtype/datatype.hpp"

namespace shmpi::dtype::build {

/// Deeper nesting is refused: the pack engine recurses once per level.
inline constexpr int kMaxDepth = 1000;

/// Throws MPI_ERR_ARG: "`fn`: `what` overflows MPI_Aint".
[[noreturn]] void overflow(const char* fn, const std::string& what);

/// a * b and a + b, or overflow() naming `what` (e.g. "count * stride").
std::int64_t mul(std::int64_t a, std::int64_t b, const char* fn, const char* what);
std::int64_t add(std::int64_t a, std::int64_t b, const char* fn, const char* what);
std::int64_t sub(std::int64_t a, std::int64_t b, const char* fn, const char* what);

/// The bounds of the blocks a constructor places, by the rules at the top
/// of datatype.hpp.
class Bounds {
public:
    explicit Bounds(const char* fn) : fn_(fn) {}

    /// A block of `n` copies of `c` (copy k at d + k * extent(c)), placed at
    /// every displacement d from `dmin` to `dmax`: only the two extremes
    /// matter.  MPI_LB/MPI_UB place a marker; n == 0 places nothing.
    void add(const Datatype& c, std::int64_t n, std::int64_t dmin, std::int64_t dmax);

    /// Writes lb, extent, true bounds, sticky flags and align into `t`.
    /// With `pad`, an ub that no marker fixes is rounded up so that the
    /// extent is a multiple of the alignment (the epsilon of MPI-3.1 4.1.6).
    void store(Datatype& t, bool pad) const;

private:
    const char* fn_;
    bool any_ = false;  ///< a non-marker block was placed: lb_/ub_ are valid
    std::int64_t lb_ = 0, ub_ = 0;
    bool data_ = false;  ///< some block has data: tlb_/tub_ are valid
    std::int64_t tlb_ = 0, tub_ = 0;
    bool sticky_lb_ = false, sticky_ub_ = false;
    std::int64_t slb_ = 0, sub_ = 0;
    std::int64_t align_ = 1;
};

/// A new derived type, uncommitted, with one handle, labelled after the
/// constructor ("vector").  Owned by the caller until it is returned.
std::unique_ptr<Datatype> create(const char* what);

/// Turns the caller's ownership of a new type into a Ref (no extra count).
Ref adopt(std::unique_ptr<Datatype> t);

/// Step 3 after Bounds::store(): size, basic elements, basic type and depth
/// from the layout, then the layout flags (dense, contiguous, runs,
/// prefix).  Throws MPI_ERR_ARG naming `fn` when the size overflows or the
/// nesting is too deep.
void finish(Datatype& t, const char* fn);

/// The layout flags alone (dense, contiguous, runs, prefix), for types
/// whose sums are already set (the predefined pair types).
void set_flags(Datatype& t);

/// A new type with `old`'s layout (its map, bounds and flags; not its
/// envelope, committed state or attributes), labelled `what`: MPI_Type_dup
/// and the Fortran kind types.
std::unique_ptr<Datatype> same_layout(const Datatype& old, const char* what, const char* fn);

/// Step 4: the envelope.  Holds a reference on each derived type in `types`.
void set_envelope(Datatype& t, int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints,
                  const std::vector<const Datatype*>& types);

/// Checks that `old` can be the old type of a constructor other than
/// struct: not MPI_LB or MPI_UB.  Throws MPI_ERR_TYPE naming `fn`.
void check_old(const Datatype& old, const char* fn);
/// Throws MPI_ERR_COUNT when count < 0, naming `fn` and `arg`.
void check_count(std::int64_t count, const char* fn, const char* arg);
/// Throws MPI_ERR_ARG when a block length is negative.
void check_blocklen(std::int64_t n, const char* fn, const char* arg);
/// Throws MPI_ERR_ARG when `p` is NULL while count > 0.
void check_array(const void* p, int count, const char* fn, const char* arg);

// The layout setters of the constructor families, reused by one another
// (struct of one type -> blocks; subarray -> vectors; ...).  Each sets the
// kind and layout of `t` and adds the blocks it places to `b`.

/// `count` blocks of `blocklen` copies of `c`, block i at i * stride bytes.
void set_vector(Datatype& t, std::int64_t count, std::int64_t blocklen, std::int64_t stride,
                const Datatype& c, const char* fn, Bounds& b);
/// `c` with bounds [lb, lb + extent), as explicit markers.
void set_resized(Datatype& t, const Datatype& c, std::int64_t lb, std::int64_t extent, const char* fn);
/// Blocks of `blocklens[i]` copies of `c` at displs[i] bytes.
void set_blocks(Datatype& t, std::vector<std::int64_t> blocklens, std::vector<std::int64_t> displs,
                const Datatype& c, const char* fn, Bounds& b);

}  // namespace shmpi::dtype::build
