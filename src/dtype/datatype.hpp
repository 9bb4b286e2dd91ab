// Datatypes: the part the runtime needs now (predefined types, their sizes and
// extents).  The derived-type engine extends Datatype with a normalised type
// tree and pack/unpack; the fields cached here are the ones it will fill.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace shmpi::dtype {

struct Datatype {
    std::uint32_t magic = kMagic;  ///< tells a live Datatype from garbage
    std::int64_t size = 0;         ///< bytes of data in one element (no gaps)
    std::int64_t lb = 0;           ///< lower bound
    std::int64_t extent = 0;       ///< ub - lb
    std::int64_t true_lb = 0;
    std::int64_t true_extent = 0;
    /// One element is `size` bytes at offset lb, and consecutive elements
    /// follow one another with no gap: a count of them is one memcpy.
    bool contiguous = true;
    bool committed = true;
    bool predefined = true;
    /// The data blocks of one element of a non-contiguous predefined type
    /// (the pair types: value, then index after padding).  The derived-type
    /// engine replaces this with its normalised type tree.
    struct Block {
        std::int64_t offset = 0;
        std::int64_t length = 0;
    };
    Block blocks[2] = {};
    int nblocks = 1;
    /// For Get_elements: the size of the basic type every element is made of,
    /// or 0 when the type mixes basic types of different sizes.
    std::int64_t basic_size = 0;
    const char* name = "";

    static constexpr std::uint32_t kMagic = 0x44545950;  // "DTYP"
};

/// The predefined type behind `handle`, or nullptr if `handle` is not one
/// (MPI_DATATYPE_NULL included).
const Datatype* predefined(MPI_Datatype handle);

/// Copies `count` elements at `buf` into `out` as a dense byte stream of
/// count * size bytes.
void pack(const Datatype& type, const void* buf, std::int64_t count, std::byte* out);

/// Copies `bytes` bytes of a dense stream (a prefix of whole or partial
/// elements) from `in` into the elements at `buf`.
void unpack(const Datatype& type, const std::byte* in, std::int64_t bytes, void* buf);

/// The Datatype behind any handle, or nullptr when it is not a valid
/// datatype handle.
const Datatype* lookup(MPI_Datatype handle);

}  // namespace shmpi::dtype
