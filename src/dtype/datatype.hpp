// Datatypes: predefined and derived, normalised at construction, with their
// size, bounds and contiguity cached, and the pack engine that turns
// `count` elements of a type into a dense byte stream and back.
//
// A type map is a list of (basic type, displacement) entries plus, for types
// made with MPI_LB/MPI_UB or MPI_Type_create_resized, explicit ("sticky")
// bound markers.  Bounds follow MPI-3.1 4.1.6 (and agree with Open MPI):
//   lb = the lowest lb marker, or else the lowest lb of the placed copies of
//        the old types (data or not);
//   ub = the highest ub marker, or else the highest ub of the placed copies,
//        rounded up (epsilon) so that ub - lb is a multiple of the largest
//        alignment of the basic types with data in the type;
//   true_lb/true_ub = the lowest and highest byte of data, markers ignored.
// Blocks of length 0 add nothing.  A constructor of derived types holds a
// reference on its old types, so a type freed by the user stays valid inside
// the types built on it (and in pending requests, which hold one too).
//
// Normalised forms (what the pack engine sees; the envelope keeps what the
// user called):
//   Vector    count blocks of `blocklen` copies of `child`, block b at
//             b * stride bytes.  contiguous, vector, hvector, and indexed
//             types whose blocks are evenly spaced and equal; count 1 is a
//             plain run of copies.
//   Blocks    count blocks, block b = blocklens[b] copies of `child` at
//             displs[b] bytes: indexed, hindexed, (h)indexed_block, structs
//             whose types are all the same.  Zero-length blocks are dropped
//             and adjacent blocks merged.
//   Struct    as Blocks, with a child per block (children[b]).
//   Resized   `child` with another lb and extent.
//   Builtin   a predefined basic type; Marker: MPI_LB/MPI_UB.
// The pair types (MPI_DOUBLE_INT, ...) are predefined Structs of two
// builtins laid out as the C struct { T value; int index; }.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attributes.hpp"
#include "handle_storage.hpp"

namespace shmpi::dtype {

struct Datatype;

/// One counted reference to a datatype; predefined types are never counted
/// (they live as long as the library).  Copying a Ref adds a reference,
/// destroying it drops one, and the last reference deletes the type.
class Ref {
public:
    Ref() = default;
    /// Adds a reference to `t` (nullptr: holds nothing).
    explicit Ref(const Datatype* t);
    Ref(const Ref& o) : Ref(o.t_) {}
    Ref(Ref&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
    Ref& operator=(Ref o) noexcept {
        std::swap(t_, o.t_);
        return *this;
    }
    ~Ref();

    const Datatype* get() const { return t_; }
    const Datatype& operator*() const { return *t_; }
    const Datatype* operator->() const { return t_; }
    explicit operator bool() const { return t_ != nullptr; }

private:
    const Datatype* t_ = nullptr;
};

enum class Kind : std::uint8_t { Builtin, Marker, Vector, Blocks, Struct, Resized };

struct Datatype : HandleStorage {
    static constexpr std::uint32_t kMagic = 0x44545950;  // "DTYP"

    Datatype() = default;
    Datatype(const Datatype&) = delete;
    Datatype& operator=(const Datatype&) = delete;
    ~Datatype();

    std::uint32_t magic = kMagic;  ///< tells a live Datatype from garbage

    // ---- cached properties, for every layer of the library ----
    std::int64_t size = 0;         ///< bytes of data in one element (no gaps)
    std::int64_t lb = 0;           ///< lower bound (see the top of this file)
    std::int64_t extent = 0;       ///< ub - lb; may be 0 or negative
    std::int64_t true_lb = 0;      ///< lowest byte of data
    std::int64_t true_extent = 0;  ///< true_ub - true_lb
    /// One element is `size` bytes at offset true_lb, packed in address
    /// order, and consecutive elements follow one another with no gap: a
    /// count of them is one memcpy.
    bool contiguous = true;
    bool committed = true;
    bool predefined = true;
    /// The one predefined type the type is built from (itself for predefined
    /// types, pair types included); nullptr when the type mixes basic types
    /// or has no data type at all (MPI_LB, MPI_UB, a struct of markers).
    const Datatype* basic = nullptr;
    const char* name = "";

    /// One element is a single run of `size` bytes at true_lb, in pack
    /// order (elements may have gaps between them: extent > size).
    bool dense = true;
    /// The bounds come from explicit markers (MPI_LB/MPI_UB, resized).
    bool sticky_lb = false;
    bool sticky_ub = false;
    /// The largest alignment of the basic types with data (1 when none).
    std::int64_t align = 1;
    /// Basic elements in one element (MPI_Get_elements); pair types count 2.
    std::int64_t elements = 0;
    /// Nesting depth: 0 for predefined types.
    int depth = 0;

    std::int64_t ub() const { return lb + extent; }
    std::int64_t true_ub() const { return true_lb + true_extent; }
    /// Whether `n` elements (n >= 0) lie within what MPI_Aint can address:
    /// the last one starts (n - 1) * extent bytes after the first and
    /// reaches true_extent past that.  (A buffer of INT_MAX elements of a
    /// type resized to a 2^40-byte extent does not; packing it would run
    /// off the address space.)
    bool span_fits(std::int64_t n) const {
        std::int64_t reach = 0;
        return n <= 1 || (!__builtin_mul_overflow(n - 1, extent, &reach) &&
                          !__builtin_add_overflow(reach, true_extent, &reach));
    }
    /// `n` elements form one run of n * size bytes at true_lb.
    bool is_run(std::int64_t n) const { return dense && (n == 1 || size == extent); }

    // ---- the normalised layout (see the top of this file) ----
    Kind kind = Kind::Builtin;
    std::int64_t count = 0;     ///< Vector, Blocks, Struct: number of blocks
    std::int64_t blocklen = 0;  ///< Vector: copies of the child per block
    std::int64_t stride = 0;    ///< Vector: bytes from one block to the next
    std::vector<std::int64_t> blocklens;  ///< Blocks, Struct
    std::vector<std::int64_t> displs;     ///< Blocks, Struct (bytes)
    /// Blocks, Struct: packed bytes before block b (count + 1 entries), to
    /// find where a byte offset falls.
    std::vector<std::int64_t> prefix;
    Ref child;                  ///< Vector, Blocks, Resized
    std::vector<Ref> children;  ///< Struct: one per block
    /// Blocks, Struct whose every block is one run of bytes: the runs of one
    /// element, in pack order, adjacent runs merged.  Empty otherwise.
    struct Run {
        std::int64_t offset;
        std::int64_t length;
    };
    std::vector<Run> runs;

    // ---- the envelope: how the user made it (MPI_Type_get_envelope) ----
    int combiner = 0;  ///< MPI_COMBINER_*; set to NAMED for predefined types
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<MPI_Datatype> types;
    std::vector<Ref> type_refs;  ///< keeps `types` alive

    // ---- lifetime ----
    /// References: user handles, types built on it, pending requests.
    /// Increments are relaxed (a reference is only made from another one);
    /// the decrement is acq_rel so that every use happens before the delete.
    mutable std::atomic<std::int64_t> refs{1};
    /// Handles the user holds: MPI_Type_free drops one, MPI_Type_get_contents
    /// hands out one more.  At 0 the handle is dead for the C boundary,
    /// though the object may live on inside other types or requests.
    /// Only the thread in the MPI library touches it (SERIALIZED at most):
    /// relaxed.
    mutable std::atomic<std::int64_t> handles{1};
    MPI_Datatype self = MPI_DATATYPE_NULL;  ///< the handle that names it
    std::string label;                      ///< storage behind `name`
    /// MPI_Type_set_name's name, once `named`.  MPI_Type_get_name gives it,
    /// else a predefined type's MPI name, else "" (MPI-3.1 6.8: `name` of a
    /// derived type is a label for messages).  Mutable: a predefined type
    /// may be renamed too.
    mutable std::string user_name;
    mutable bool named = false;

    // ---- attributes (MPI_Type_set_attr; attributes.hpp) ----
    /// Copied by make_dup (MPI_Type_dup runs the copy callbacks), deleted
    /// by free_handle when the user's last handle goes (delete callbacks).
    /// Predefined types carry attributes too, hence mutable.
    mutable attr::Store attributes;
};

// ---------------------------------------------------------------- handles

/// The predefined type behind `handle`, or nullptr if `handle` is not one
/// (MPI_DATATYPE_NULL included).
const Datatype* predefined(MPI_Datatype handle);

/// MPI_BYTE: the type of every dense (bytes-only) transfer.
const Datatype& byte_type();

/// The Datatype behind any handle, or nullptr when it is not a valid
/// datatype handle or the user has freed it (but see UserFnType).
const Datatype* lookup(MPI_Datatype handle);

/// While a user reduction function runs on this thread (op.cpp's
/// call_user()), the type whose handle it was given: lookup() accepts that
/// handle even when the user freed it after starting the operation.  The
/// operation completes normally then (MPI-3.1 4.1.9), and its function may
/// ask about the datatype it receives (an MPI_Iallreduce whose type was
/// freed before MPI_Wait once made the function's MPI_Type_get_extent fail).
/// Restores the previous one when it ends (a function may reduce, too).
class UserFnType {
public:
    explicit UserFnType(const Datatype* t) : saved_(current_) { current_ = t; }
    ~UserFnType() { current_ = saved_; }
    UserFnType(const UserFnType&) = delete;
    UserFnType& operator=(const UserFnType&) = delete;
    static const Datatype* current() { return current_; }

private:
    static thread_local const Datatype* current_;
    const Datatype* saved_;
};

/// True when `handle` names a type the user has freed (MPI_Type_free) that
/// still lives inside other types or pending requests: lookup() refuses it,
/// and this tells the error message why.
bool freed(MPI_Datatype handle);

/// The handle that names `t`.
inline MPI_Datatype handle_of(const Datatype& t) { return t.self; }

/// Reference counting (no-ops for predefined types); see Ref.
void retain(const Datatype* t);
void release(const Datatype* t);

/// MPI_Type_commit: marks `t` usable for communication.
void commit(const Datatype& t);
/// MPI_Type_free: drops the user's handle and its reference.  Throws
/// MPI_ERR_TYPE naming `fn` for predefined types.
void free_handle(const Datatype& t, const char* fn);
/// MPI_Type_get_contents hands out a handle to an old type: one more handle.
void add_handle(const Datatype& t);
/// MPI_Type_set_name (a derived type's messages use the name too).
void set_name(const Datatype& t, const std::string& name);
/// MPI_Type_get_name's answer (see Datatype::user_name).
std::string_view user_name(const Datatype& t);

// ------------------------------------------------------------ constructors
//
// Each returns a new uncommitted type holding one user handle, or throws
// MpiError naming `fn`, the argument and the bad value: MPI_ERR_COUNT for a
// negative count, MPI_ERR_ARG for negative block lengths, NULL arrays and
// sizes, bounds or displacements that overflow MPI_Aint, MPI_ERR_TYPE for an
// old type that cannot be used.  Arguments are those of the C binding.

Datatype* make_contiguous(int count, const Datatype& old, const char* fn);
Datatype* make_vector(int count, int blocklen, int stride, const Datatype& old, const char* fn);
/// MPI_Type_create_hvector and the MPI-1 MPI_Type_hvector (same combiner).
Datatype* make_hvector(int count, int blocklen, MPI_Aint stride, const Datatype& old,
                       const char* fn);
Datatype* make_indexed(int count, const int blocklens[], const int displs[], const Datatype& old,
                       const char* fn);
Datatype* make_hindexed(int count, const int blocklens[], const MPI_Aint displs[],
                        const Datatype& old, const char* fn);
Datatype* make_indexed_block(int count, int blocklen, const int displs[], const Datatype& old,
                             const char* fn);
Datatype* make_hindexed_block(int count, int blocklen, const MPI_Aint displs[],
                              const Datatype& old, const char* fn);
/// `types[i]` may be MPI_LB or MPI_UB markers (MPI-1).
Datatype* make_struct(int count, const int blocklens[], const MPI_Aint displs[],
                      const Datatype* const types[], const char* fn);
Datatype* make_resized(const Datatype& old, MPI_Aint lb, MPI_Aint extent, const char* fn);
Datatype* make_dup(const Datatype& old, const char* fn);
/// `order` is MPI_ORDER_C or MPI_ORDER_FORTRAN.
Datatype* make_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                        int order, const Datatype& old, const char* fn);
/// MPI_Type_create_f90_integer, _real and _complex (`combiner` names
/// which; `p` is ignored for integers): the one type for these arguments,
/// made at the first call and never freed (src/dtype/f90.cpp).  Throws
/// MPI_ERR_ARG naming `fn` when no kind has that precision and range.
const Datatype& f90_type(int combiner, int p, int r, const char* fn);
Datatype* make_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                      const int dargs[], const int psizes[], int order, const Datatype& old,
                      const char* fn);

// ------------------------------------------------------------------- packing
//
// The dense stream of `count` elements of `type` at `buf` is the data bytes
// of each element in type-map order, element after element: count * size
// bytes.  Element i lives at buf + i * extent; `buf` may be MPI_BOTTOM (null)
// with absolute displacements.

/// Copies `count` elements at `buf` into `out` (count * size bytes).
void pack(const Datatype& type, const void* buf, std::int64_t count, std::byte* out);

/// How a resumable pack reads.  kAhead: this call is one piece of a message
/// too large to stay in cache; vector loops of blocks of 1 KiB or more
/// prefetch the block a few KiB ahead, past the piece's end (pack.cpp
/// explains why).
enum class Loads { kPlain, kAhead };

/// Copies bytes [offset, offset + max_bytes) of the stream of `count`
/// elements at `buf` into `out`, stopping at the end of the stream.  Returns
/// the number of bytes written.  Any offset works, so a large message can be
/// packed piece by piece.
std::int64_t pack(const Datatype& type, const void* buf, std::int64_t count, std::int64_t offset, std::byte* out,
                  std::int64_t max_bytes, Loads loads = Loads::kPlain);

/// Copies `bytes` bytes of a dense stream (a prefix of whole or partial
/// elements) from `in` into the elements at `buf`.
void unpack(const Datatype& type, const std::byte* in, std::int64_t bytes, void* buf);

/// The inverse of the resumable pack: stores `bytes` bytes from `in` as
/// bytes [offset, offset + bytes) of the stream of `count` elements at
/// `buf`, stopping at the end of the stream.  Returns the bytes consumed.
std::int64_t unpack(const Datatype& type, void* buf, std::int64_t count, std::int64_t offset, const std::byte* in,
                    std::int64_t bytes);

/// Copies the `scount` elements of `st` at `sbuf` into the `rcount`
/// elements of `rt` at `rbuf`: min(scount * st.size, rcount * rt.size)
/// bytes of their streams, the buffers not overlapping.  One pass: straight
/// when either side is contiguous, else piece by piece through a buffer
/// small enough to stay in cache.
void copy(const Datatype& st, const void* sbuf, std::int64_t scount, const Datatype& rt, void* rbuf,
          std::int64_t rcount);

/// A run of memory: what a vectored system call (process_vm_readv) takes.
struct Segment {
    void* address;
    std::int64_t length;
};

/// The runs of memory that bytes [offset, offset + max_bytes) of the stream
/// of `count` elements at `buf` come from (or go to), in stream order,
/// appended to `out`; adjacent runs are merged.  Returns the stream bytes
/// they cover.  Moves nothing: it lets a transport scatter or gather with
/// one vectored copy instead of packing.
std::int64_t segments(const Datatype& type, const void* buf, std::int64_t count, std::int64_t offset,
                      std::int64_t max_bytes, std::vector<Segment>& out);

// ---------------------------------------------------------------- external32
//
// MPI_Pack_external's portable representation (external.cpp): big-endian,
// the standard's sizes (MPI_LONG 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE an
// IEEE binary128), no gaps.

/// Bytes `count` elements of `type` take in external32.
/// Throws MPI_ERR_COUNT naming `fn` when that overflows a byte count (an
/// element takes no more bytes in external32 than in memory, so only the
/// product can).
std::int64_t external32_size(const Datatype& type, std::int64_t count, const char* fn);
/// Writes `count` elements at `buf` to `out` in external32.  Throws
/// MPI_ERR_CONVERSION naming `fn` for a value the external size cannot hold.
void pack_external32(const Datatype& type, const void* buf, std::int64_t count, std::byte* out, const char* fn);
/// Reads `count` elements in external32 from `in` into `buf`.
void unpack_external32(const Datatype& type, const std::byte* in, void* buf, std::int64_t count, const char* fn);
/// Bytes one value of the basic type `basic` takes in external32.
std::int64_t external32_value_size(const Datatype& basic);
/// Reads the first `values` basic values of a stream of elements of `type`
/// in external32 from `in` into the elements at `buf` (the last element
/// may be left partly filled).
void unpack_external32_values(const Datatype& type, const std::byte* in, void* buf, std::int64_t values,
                              const char* fn);

// ---------------------------------------------------------------- rebuilding

/// `t` made again by the constructors its envelope names, with each
/// predefined data type in it replaced by `replace(that type)`; committed,
/// with no user handle.  Displacements counted in old types (contiguous,
/// vector, indexed, indexed_block, subarray, darray) scale with the new
/// old types; displacements and bounds in bytes (hvector, hindexed,
/// hindexed_block, struct, resized) stay as the user gave them.  This is
/// how a file data representation lays out a view's types (MPI-3.1 13.5:
/// "MPI will scale any displacements in the datatypes to match the file
/// data representation" for the portable ones).  MPI_LB and MPI_UB stay
/// themselves; a predefined `t` is replace(t).  Throws what the
/// constructors throw, naming `fn`.
Ref rebuild(const Datatype& t, const std::function<Ref(const Datatype&)>& replace, const char* fn);
/// Holds a type a constructor made for the library's own use: no user
/// handle, one reference (the returned one), committed.
Ref adopt_internal(Datatype* made);

// ----------------------------------------------------------------- counting

/// MPI_Get_count: whole elements of `type` in `bytes` bytes, or
/// MPI_UNDEFINED when `bytes` is not a whole number of them (0 for a type
/// of size 0).
std::int64_t count_in(const Datatype& type, std::int64_t bytes);

/// MPI_Get_elements: basic elements in `bytes` bytes of a stream of
/// `type`, or MPI_UNDEFINED when `bytes` ends inside a basic element.
std::int64_t elements_in(const Datatype& type, std::int64_t bytes);

/// MPI_Status_set_elements: the bytes of the first `elements` (>= 0) basic
/// elements of a stream of `type`, so that elements_in(type, bytes) gives
/// `elements` back and count_in(type, bytes) gives elements / type.elements
/// when that divides, else MPI_UNDEFINED.  `type` must hold basic elements
/// (type.elements > 0) unless `elements` is 0.  -1 when the bytes would
/// not fit in an std::int64_t.
std::int64_t bytes_of_elements(const Datatype& type, std::int64_t elements);

}  // namespace shmpi::dtype
