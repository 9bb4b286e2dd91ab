// Data representations (MPI-3.1 13.5): how the values a view reads and
// writes are written in its file.
//   "native", "internal"  as in memory (the same here): the view's types
//                         are the file's layout and nothing is converted.
//   "external32"          big-endian with the standard's sizes, as
//                         MPI_Pack_external writes them (dtype/external.cpp).
//   registered names      MPI_Register_datarep's: the user's functions give
//                         each basic type's size in the file and convert.
// Outside "native", each basic value takes its file size, values follow
// one another with no padding, and a view's etype and filetype are laid out
// in the file by dtype::rebuild() with each predefined type replaced by a
// run of that many bytes (so displacements counted in old types scale, as
// 13.5 asks for portable types).  A data access converts its buffer to or
// from that dense stream of file bytes and moves the stream through the
// view (File::access in file.cpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "dtype/datatype.hpp"

namespace shmpi::io {

class Datarep {
public:
    /// The representation named `name`, or nullptr when there is none.
    static const Datarep* find(const std::string& name);
    /// "native".
    static const Datarep& native_rep();
    /// MPI_Register_datarep (arguments checked by the caller).  Throws
    /// MPI_ERR_DUP_DATAREP naming `fn` when `name` is taken.
    static void add(const std::string& name, MPI_Datarep_conversion_function* read_fn,
                    MPI_Datarep_conversion_function* write_fn, MPI_Datarep_extent_function* extent_fn,
                    void* extra_state, const char* fn);

    Datarep(const Datarep&) = delete;
    Datarep& operator=(const Datarep&) = delete;

    const std::string& name() const { return name_; }
    /// Values are in the file as in memory: the view's own types and no
    /// conversion.
    bool native() const { return kind_ == Kind::Native; }

    /// Bytes one value of the predefined type `t` (a basic, pair or
    /// Fortran kind type) takes in the file.  A user representation asks
    /// its extent function once per type; an error from it, or an extent
    /// that is not positive, is MPI_ERR_CONVERSION naming `fn`.
    std::int64_t file_size(const dtype::Datatype& t, const char* fn) const;
    /// How `t` lies in the file: `t` itself when native().
    dtype::Ref layout(const dtype::Datatype& t, const char* fn) const;
    /// File bytes of `count` elements of `type` (MPI_ERR_COUNT naming `fn`
    /// when that overflows).
    std::int64_t file_bytes(const dtype::Datatype& type, std::int64_t count, const char* fn) const;
    /// Writes the `count` elements of `type` at `buf` to `out` in the
    /// file's representation (file_bytes() bytes).  MPI_ERR_CONVERSION
    /// naming `fn` for a value the representation cannot hold, or an error
    /// of the user's conversion function.
    void to_file(const dtype::Datatype& type, const void* buf, std::int64_t count, std::byte* out,
                 const char* fn) const;
    /// Converts the whole values among the first `bytes` bytes at `in` (a
    /// prefix of the file stream of elements of `type`) into the elements
    /// at `buf`.  Returns the bytes of `type`'s memory stream they fill:
    /// what the access's status counts.
    std::int64_t from_file(const dtype::Datatype& type, void* buf, const std::byte* in, std::int64_t bytes,
                           const char* fn) const;

private:
    enum class Kind : std::uint8_t { Native, External32, User };
    Datarep(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {}

    /// Basic values of a stream of elements of `type` (at `buf`) whose file
    /// bytes lie whole within its first `bytes` bytes.
    std::int64_t values_within(const dtype::Datatype& type, void* buf, std::int64_t bytes, const char* fn) const;
    /// Calls the user's conversion function `conv` over `values` values of
    /// `type` at `buf` and the file stream at `file`, in calls of at most
    /// INT_MAX values (MPI-3.1 13.5.3: `position` counts the values done).
    void convert(MPI_Datarep_conversion_function* conv, const char* which, const dtype::Datatype& type, void* buf,
                 std::int64_t values, std::byte* file, const char* fn) const;
    /// A user representation with no conversion function for one direction
    /// moves values as they are in memory, which only works when each takes
    /// as many bytes in the file as in memory.
    void same_sizes(const dtype::Datatype& type, const char* fn) const;

    std::string name_;
    Kind kind_;
    MPI_Datarep_conversion_function* read_fn_ = nullptr;
    MPI_Datarep_conversion_function* write_fn_ = nullptr;
    MPI_Datarep_extent_function* extent_fn_ = nullptr;
    void* extra_ = nullptr;
    /// file_size()'s answers for basic types, asked once (User).  The C
    /// boundary is entered by one thread at a time (the program's order, or
    /// its lock under MPI_THREAD_MULTIPLE), which is also what guards these
    /// caches.
    mutable std::map<const dtype::Datatype*, std::int64_t> sizes_;
    /// Runs of n bytes: what a predefined type becomes in layout().
    mutable std::map<std::int64_t, dtype::Ref> runs_;
};

}  // namespace shmpi::io
