// C boundary: datatypes.  Constructors, commit and free, queries, the
// envelope, addresses, MPI_Pack/MPI_Unpack, and the MPI-1 spellings that
// MPI-3.0 removed (MPI_Type_hvector, MPI_Type_hindexed, MPI_Type_struct,
// MPI_Type_extent, MPI_Type_lb, MPI_Type_ub, MPI_Address).
//
// Errors are reported through MPI_COMM_WORLD's handler (MPI-3.1 8.3: no
// communicator is involved), except MPI_Pack/MPI_Unpack, which name one.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

const dtype::Datatype& shmpi::api::any_type(MPI_Datatype handle, const char* fn, const char* arg) {
    if (handle == MPI_DATATYPE_NULL) {
        throw MpiError(MPI_ERR_TYPE, fmt::format("{}: {} is MPI_DATATYPE_NULL", fn, arg));
    }
    const dtype::Datatype* t = dtype::lookup(handle);
    if (t == nullptr) {
        const auto v = reinterpret_cast<std::uintptr_t>(handle);
        throw MpiError(MPI_ERR_TYPE, fmt::format("{}: {} {:#x} {}", fn, arg, v,
                                                 dtype::freed(handle) ? "has been freed (MPI_Type_free)"
                                                                      : "is not a datatype"));
    }
    return *t;
}

namespace {

/// Runs a constructor: checks `newtype`, stores the new handle in it, or
/// the null handle if `make` fails.  (Only then, not first as need_new()
/// would: `newtype` may point into the types[] that `make` reads, in a
/// struct constructor.)
template <class Make>
int construct(const char* fn, MPI_Datatype* newtype, Make&& make) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(newtype, "newtype", fn);
        try {
            *newtype = dtype::handle_of(*make());
        } catch (...) {
            *newtype = MPI_DATATYPE_NULL;
            throw;
        }
    });
}

/// The old types of a struct, translated; markers are allowed.
std::vector<const dtype::Datatype*> struct_types(int count, const MPI_Datatype types[], const char* fn) {
    std::vector<const dtype::Datatype*> out;
    if (count <= 0 || types == nullptr) return out;
    out.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const std::string arg = fmt::format("array_of_types[{}]", i);
        out.push_back(&any_type(types[i], fn, arg.c_str()));
    }
    return out;
}

int hvector(const char* fn, int count, int blocklen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* newtype) {
    return construct(fn, newtype, [&] { return dtype::make_hvector(count, blocklen, stride, any_type(old, fn, "oldtype"), fn); });
}

int hindexed(const char* fn, int count, const int blocklens[], const MPI_Aint displs[], MPI_Datatype old,
             MPI_Datatype* newtype) {
    return construct(fn, newtype, [&] {
        return dtype::make_hindexed(count, blocklens, displs, any_type(old, fn, "oldtype"), fn);
    });
}

int create_struct(const char* fn, int count, const int blocklens[], const MPI_Aint displs[],
                  const MPI_Datatype types[], MPI_Datatype* newtype) {
    return construct(fn, newtype, [&] {
        const std::vector<const dtype::Datatype*> ts = struct_types(count, types, fn);
        return dtype::make_struct(count, blocklens, displs, types == nullptr ? nullptr : ts.data(), fn);
    });
}

/// count * size in bytes, or MPI_ERR_COUNT naming `fn` when that overflows.
std::int64_t stream_bytes(int count, const dtype::Datatype& t, const char* fn) {
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::int64_t>(count), t.size, &bytes)) {
        throw MpiError(MPI_ERR_COUNT, fmt::format("{}: {} elements of {} (size {}) overflow a byte count", fn,
                                                  count, t.name, t.size));
    }
    return bytes;
}

/// Stores a 64-bit count into an int output, or MPI_UNDEFINED when it does
/// not fit (MPI-3.1 4.1.5).
int to_int_or_undefined(MPI_Count n) { return n > INT_MAX || n < INT_MIN ? MPI_UNDEFINED : static_cast<int>(n); }

/// MPI_Aint outputs of the MPI-1 queries: the value, which always fits.
template <class Query>
int aint_query(MPI_Datatype type, MPI_Aint* out, const char* fn, Query&& q) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(out, "the output argument", fn);
        *out = q(t);
    });
}

}  // namespace

extern "C" {

// ------------------------------------------------------------ constructors

int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_contiguous";
    return construct(fn, newtype, [&] { return dtype::make_contiguous(count, any_type(old, fn, "oldtype"), fn); });
}
SHMPI_WEAK_ALIAS(Type_contiguous);

int PMPI_Type_vector(int count, int blocklen, int stride, MPI_Datatype old, MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_vector";
    return construct(fn, newtype, [&] {
        return dtype::make_vector(count, blocklen, stride, any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_vector);

int PMPI_Type_create_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* newtype) {
    return hvector("MPI_Type_create_hvector", count, blocklen, stride, old, newtype);
}
SHMPI_WEAK_ALIAS(Type_create_hvector);

int PMPI_Type_hvector(int count, int blocklen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* newtype) {
    return hvector("MPI_Type_hvector", count, blocklen, stride, old, newtype);
}
SHMPI_WEAK_ALIAS(Type_hvector);

int PMPI_Type_indexed(int count, const int blocklens[], const int displs[], MPI_Datatype old,
                      MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_indexed";
    return construct(fn, newtype, [&] {
        return dtype::make_indexed(count, blocklens, displs, any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_indexed);

int PMPI_Type_create_hindexed(int count, const int blocklens[], const MPI_Aint displs[], MPI_Datatype old,
                              MPI_Datatype* newtype) {
    return hindexed("MPI_Type_create_hindexed", count, blocklens, displs, old, newtype);
}
SHMPI_WEAK_ALIAS(Type_create_hindexed);

int PMPI_Type_hindexed(int count, int blocklens[], MPI_Aint displs[], MPI_Datatype old,
                       MPI_Datatype* newtype) {
    return hindexed("MPI_Type_hindexed", count, blocklens, displs, old, newtype);
}
SHMPI_WEAK_ALIAS(Type_hindexed);

int PMPI_Type_create_indexed_block(int count, int blocklen, const int displs[], MPI_Datatype old,
                                   MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_create_indexed_block";
    return construct(fn, newtype, [&] {
        return dtype::make_indexed_block(count, blocklen, displs, any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_create_indexed_block);

int PMPI_Type_create_hindexed_block(int count, int blocklen, const MPI_Aint displs[], MPI_Datatype old,
                                    MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_create_hindexed_block";
    return construct(fn, newtype, [&] {
        return dtype::make_hindexed_block(count, blocklen, displs, any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_create_hindexed_block);

int PMPI_Type_create_struct(int count, const int blocklens[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype* newtype) {
    return create_struct("MPI_Type_create_struct", count, blocklens, displs, types, newtype);
}
SHMPI_WEAK_ALIAS(Type_create_struct);

int PMPI_Type_struct(int count, int blocklens[], MPI_Aint displs[], MPI_Datatype types[],
                     MPI_Datatype* newtype) {
    return create_struct("MPI_Type_struct", count, blocklens, displs, types, newtype);
}
SHMPI_WEAK_ALIAS(Type_struct);

int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_create_resized";
    return construct(fn, newtype, [&] { return dtype::make_resized(any_type(old, fn, "oldtype"), lb, extent, fn); });
}
SHMPI_WEAK_ALIAS(Type_create_resized);

int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_dup";
    return construct(fn, newtype, [&] { return dtype::make_dup(any_type(old, fn, "oldtype"), fn); });
}
SHMPI_WEAK_ALIAS(Type_dup);

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype old, MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_create_subarray";
    return construct(fn, newtype, [&] {
        return dtype::make_subarray(ndims, sizes, subsizes, starts, order, any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_create_subarray);

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                            const int dargs[], const int psizes[], int order, MPI_Datatype old,
                            MPI_Datatype* newtype) {
    const char* fn = "MPI_Type_create_darray";
    return construct(fn, newtype, [&] {
        return dtype::make_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order,
                                  any_type(old, fn, "oldtype"), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_create_darray);

// -------------------------------------------------------- commit and free

int PMPI_Type_commit(MPI_Datatype* type) {
    const char* fn = "MPI_Type_commit";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(type, "datatype", fn);
        dtype::commit(any_type(*type, fn));
    });
}
SHMPI_WEAK_ALIAS(Type_commit);

int PMPI_Type_free(MPI_Datatype* type) {
    const char* fn = "MPI_Type_free";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(type, "datatype", fn);
        dtype::free_handle(any_type(*type, fn), fn);
        *type = MPI_DATATYPE_NULL;
    });
}
SHMPI_WEAK_ALIAS(Type_free);

// ---------------------------------------------------------------- queries

int PMPI_Type_size_x(MPI_Datatype type, MPI_Count* size) {
    const char* fn = "MPI_Type_size_x";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(size, "size", fn);
        *size = t.size;
    });
}
SHMPI_WEAK_ALIAS(Type_size_x);

int PMPI_Type_size(MPI_Datatype type, int* size) {
    const char* fn = "MPI_Type_size";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(size, "size", fn);
        *size = to_int_or_undefined(t.size);
    });
}
SHMPI_WEAK_ALIAS(Type_size);

int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint* lb, MPI_Aint* extent) {
    const char* fn = "MPI_Type_get_extent";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(lb, "lb", fn);
        need(extent, "extent", fn);
        *lb = t.lb;
        *extent = t.extent;
    });
}
SHMPI_WEAK_ALIAS(Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count* lb, MPI_Count* extent) {
    const char* fn = "MPI_Type_get_extent_x";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(lb, "lb", fn);
        need(extent, "extent", fn);
        *lb = t.lb;
        *extent = t.extent;
    });
}
SHMPI_WEAK_ALIAS(Type_get_extent_x);

int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint* true_lb, MPI_Aint* true_extent) {
    const char* fn = "MPI_Type_get_true_extent";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(true_lb, "true_lb", fn);
        need(true_extent, "true_extent", fn);
        *true_lb = t.true_lb;
        *true_extent = t.true_extent;
    });
}
SHMPI_WEAK_ALIAS(Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count* true_lb, MPI_Count* true_extent) {
    const char* fn = "MPI_Type_get_true_extent_x";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(true_lb, "true_lb", fn);
        need(true_extent, "true_extent", fn);
        *true_lb = t.true_lb;
        *true_extent = t.true_extent;
    });
}
SHMPI_WEAK_ALIAS(Type_get_true_extent_x);

int PMPI_Type_extent(MPI_Datatype type, MPI_Aint* extent) {
    return aint_query(type, extent, "MPI_Type_extent", [](const dtype::Datatype& t) { return t.extent; });
}
SHMPI_WEAK_ALIAS(Type_extent);

int PMPI_Type_lb(MPI_Datatype type, MPI_Aint* displacement) {
    return aint_query(type, displacement, "MPI_Type_lb", [](const dtype::Datatype& t) { return t.lb; });
}
SHMPI_WEAK_ALIAS(Type_lb);

int PMPI_Type_ub(MPI_Datatype type, MPI_Aint* displacement) {
    return aint_query(type, displacement, "MPI_Type_ub", [](const dtype::Datatype& t) { return t.ub(); });
}
SHMPI_WEAK_ALIAS(Type_ub);

int PMPI_Type_set_name(MPI_Datatype type, const char* name) {
    const char* fn = "MPI_Type_set_name";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(name, "type_name", fn);
        dtype::set_name(t, std::string(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1)));
    });
}
SHMPI_WEAK_ALIAS(Type_set_name);

int PMPI_Type_get_name(MPI_Datatype type, char* name, int* resultlen) {
    const char* fn = "MPI_Type_get_name";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(name, "type_name", fn);
        need(resultlen, "resultlen", fn);
        const std::string_view given = dtype::user_name(t);
        const std::size_t n = std::min<std::size_t>(given.size(), MPI_MAX_OBJECT_NAME - 1);
        if (n > 0) std::memcpy(name, given.data(), n);  // (an empty view's data() may be null)
        name[n] = '\0';
        *resultlen = static_cast<int>(n);
    });
}
SHMPI_WEAK_ALIAS(Type_get_name);

// --------------------------------------------------------------- envelope

int PMPI_Type_get_envelope(MPI_Datatype type, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* combiner) {
    const char* fn = "MPI_Type_get_envelope";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        need(num_integers, "num_integers", fn);
        need(num_addresses, "num_addresses", fn);
        need(num_datatypes, "num_datatypes", fn);
        need(combiner, "combiner", fn);
        *num_integers = static_cast<int>(t.ints.size());
        *num_addresses = static_cast<int>(t.aints.size());
        *num_datatypes = static_cast<int>(t.types.size());
        *combiner = t.combiner;
    });
}
SHMPI_WEAK_ALIAS(Type_get_envelope);

int PMPI_Type_get_contents(MPI_Datatype type, int max_integers, int max_addresses, int max_datatypes,
                           int integers[], MPI_Aint addresses[], MPI_Datatype datatypes[]) {
    const char* fn = "MPI_Type_get_contents";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        if (t.combiner == MPI_COMBINER_NAMED) {
            throw MpiError(MPI_ERR_TYPE,
                           fmt::format("{}: {} is predefined (MPI_COMBINER_NAMED) and has no contents", fn, t.name));
        }
        const auto check = [&](int max, std::size_t n, const void* p, const char* arg) {
            if (max < 0 || static_cast<std::size_t>(max) < n) {
                throw MpiError(MPI_ERR_ARG, fmt::format("{}: max_{} is {} but the datatype has {} (see "
                                                        "MPI_Type_get_envelope)",
                                                        fn, arg, max, n));
            }
            if (n > 0 && p == nullptr) {
                throw MpiError(MPI_ERR_ARG, fmt::format("{}: array_of_{} is NULL", fn, arg));
            }
        };
        check(max_integers, t.ints.size(), integers, "integers");
        check(max_addresses, t.aints.size(), addresses, "addresses");
        check(max_datatypes, t.types.size(), datatypes, "datatypes");
        std::copy(t.ints.begin(), t.ints.end(), integers);
        std::copy(t.aints.begin(), t.aints.end(), addresses);
        for (std::size_t i = 0; i < t.types.size(); ++i) {
            // Derived types come back as handles the caller must free.
            dtype::add_handle(*t.type_refs[i]);
            datatypes[i] = t.types[i];
        }
    });
}
SHMPI_WEAK_ALIAS(Type_get_contents);

// -------------------------------------------------------------- addresses

int PMPI_Get_address(const void* location, MPI_Aint* address) {
    const char* fn = "MPI_Get_address";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(address, "address", fn);
        *address = reinterpret_cast<MPI_Aint>(location);
    });
}
SHMPI_WEAK_ALIAS(Get_address);

int PMPI_Address(void* location, MPI_Aint* address) {
    const char* fn = "MPI_Address";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(address, "address", fn);
        *address = reinterpret_cast<MPI_Aint>(location);
    });
}
SHMPI_WEAK_ALIAS(Address);

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(disp));
}
SHMPI_WEAK_ALIAS(Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) - static_cast<std::uintptr_t>(addr2));
}
SHMPI_WEAK_ALIAS(Aint_diff);

// ------------------------------------------------------------ pack/unpack

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
              MPI_Comm comm) {
    const char* fn = "MPI_Pack";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        check_count(incount, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(inbuf, incount, t, "inbuf", fn);
        need(position, "position", fn);
        if (outsize < 0 || *position < 0 || *position > outsize) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: position {} is not within outsize {}", fn, *position, outsize));
        }
        const std::int64_t bytes = stream_bytes(incount, t, fn);
        if (bytes > outsize - *position) {
            throw MpiError(MPI_ERR_TRUNCATE,
                           fmt::format("{}: {} elements of {} need {} bytes but only {} are left after position {}",
                                       fn, incount, t.name, bytes, outsize - *position, *position));
        }
        if (bytes > 0) need(outbuf, "outbuf", fn);
        dtype::pack(t, inbuf, incount, static_cast<std::byte*>(outbuf) + *position);
        *position += static_cast<int>(bytes);
    });
}
SHMPI_WEAK_ALIAS(Pack);

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
                MPI_Comm comm) {
    const char* fn = "MPI_Unpack";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        check_count(outcount, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(outbuf, outcount, t, "outbuf", fn);
        need(position, "position", fn);
        if (insize < 0 || *position < 0 || *position > insize) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: position {} is not within insize {}", fn, *position, insize));
        }
        const std::int64_t bytes = stream_bytes(outcount, t, fn);
        if (bytes > insize - *position) {
            throw MpiError(MPI_ERR_TRUNCATE,
                           fmt::format("{}: {} elements of {} need {} bytes but only {} are left after position {}",
                                       fn, outcount, t.name, bytes, insize - *position, *position));
        }
        if (bytes > 0) need(inbuf, "inbuf", fn);
        dtype::unpack(t, outbuf, outcount, 0, static_cast<const std::byte*>(inbuf) + *position, bytes);
        *position += static_cast<int>(bytes);
    });
}
SHMPI_WEAK_ALIAS(Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size) {
    const char* fn = "MPI_Pack_size";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        check_count(incount, fn);
        const dtype::Datatype& t = sized_type_of(type, fn);
        need(size, "size", fn);
        const std::int64_t bytes = stream_bytes(incount, t, fn);
        if (bytes > INT_MAX) {
            throw MpiError(MPI_ERR_VALUE_TOO_LARGE,
                           fmt::format("{}: {} elements of {} pack into {} bytes, more than an int holds", fn,
                                       incount, t.name, bytes));
        }
        *size = static_cast<int>(bytes);
    });
}
SHMPI_WEAK_ALIAS(Pack_size);

// ------------------------------------------------------- external32 packing

namespace {
void check_datarep(const char* datarep, const char* fn) {
    need(datarep, "datarep", fn);
    if (std::strcmp(datarep, "external32") != 0) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: datarep \"{}\" is not supported (only \"external32\")", fn, datarep));
    }
}
}  // namespace

int PMPI_Pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype type, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
    const char* fn = "MPI_Pack_external";
    return guard(MPI_COMM_WORLD, fn, [&] {
        check_datarep(datarep, fn);
        check_count(incount, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(inbuf, incount, t, "inbuf", fn);
        need(position, "position", fn);
        if (outsize < 0 || *position < 0 || *position > outsize) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: position {} is not within outsize {}", fn, *position, outsize));
        }
        const std::int64_t bytes = dtype::external32_size(t, incount, fn);
        if (bytes > outsize - *position) {
            throw MpiError(MPI_ERR_TRUNCATE,
                           fmt::format("{}: {} elements of {} need {} bytes in external32 but only {} are left after position {}",
                                       fn, incount, t.name, bytes, outsize - *position, *position));
        }
        if (bytes > 0) need(outbuf, "outbuf", fn);
        dtype::pack_external32(t, inbuf, incount, static_cast<std::byte*>(outbuf) + *position, fn);
        *position += bytes;
    });
}
SHMPI_WEAK_ALIAS(Pack_external);

int PMPI_Unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype type) {
    const char* fn = "MPI_Unpack_external";
    return guard(MPI_COMM_WORLD, fn, [&] {
        check_datarep(datarep, fn);
        check_count(outcount, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(outbuf, outcount, t, "outbuf", fn);
        need(position, "position", fn);
        if (insize < 0 || *position < 0 || *position > insize) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: position {} is not within insize {}", fn, *position, insize));
        }
        const std::int64_t bytes = dtype::external32_size(t, outcount, fn);
        if (bytes > insize - *position) {
            throw MpiError(MPI_ERR_TRUNCATE,
                           fmt::format("{}: {} elements of {} need {} bytes in external32 but only {} are left after position {}",
                                       fn, outcount, t.name, bytes, insize - *position, *position));
        }
        if (bytes > 0) need(inbuf, "inbuf", fn);
        dtype::unpack_external32(t, static_cast<const std::byte*>(inbuf) + *position, outbuf, outcount, fn);
        *position += bytes;
    });
}
SHMPI_WEAK_ALIAS(Unpack_external);

int PMPI_Pack_external_size(const char* datarep, int incount, MPI_Datatype type, MPI_Aint* size) {
    const char* fn = "MPI_Pack_external_size";
    return guard(MPI_COMM_WORLD, fn, [&] {
        check_datarep(datarep, fn);
        check_count(incount, fn);
        const dtype::Datatype& t = sized_type_of(type, fn);
        need(size, "size", fn);
        *size = dtype::external32_size(t, incount, fn);
    });
}
SHMPI_WEAK_ALIAS(Pack_external_size);

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* type) {
    const char* fn = "MPI_Type_match_size";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(type, "datatype", fn);
        MPI_Datatype found = MPI_DATATYPE_NULL;
        const char* cls = "";
        switch (typeclass) {
        case MPI_TYPECLASS_INTEGER:
            cls = "MPI_TYPECLASS_INTEGER";
            found = size == 1 ? MPI_INT8_T : size == 2 ? MPI_INT16_T : size == 4 ? MPI_INT32_T : size == 8 ? MPI_INT64_T : MPI_DATATYPE_NULL;
            break;
        case MPI_TYPECLASS_REAL:
            cls = "MPI_TYPECLASS_REAL";
            found = size == 4 ? MPI_FLOAT : size == 8 ? MPI_DOUBLE : size == static_cast<int>(sizeof(long double)) ? MPI_LONG_DOUBLE : MPI_DATATYPE_NULL;
            break;
        case MPI_TYPECLASS_COMPLEX:
            cls = "MPI_TYPECLASS_COMPLEX";
            found = size == 8 ? MPI_C_FLOAT_COMPLEX : size == 16 ? MPI_C_DOUBLE_COMPLEX
                  : size == static_cast<int>(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_DATATYPE_NULL;
            break;
        default:
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: typeclass {} is not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX", fn, typeclass));
        }
        if (found == MPI_DATATYPE_NULL) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: no predefined type of {} has size {}", fn, cls, size));
        }
        *type = found;
    });
}
SHMPI_WEAK_ALIAS(Type_match_size);

namespace {

int f90_call(int combiner, int p, int r, MPI_Datatype* newtype, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        need_new(newtype, MPI_DATATYPE_NULL, "newtype", fn);
        *newtype = dtype::f90_type(combiner, p, r, fn).self;
    });
}

}  // namespace

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
    return f90_call(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype, "MPI_Type_create_f90_integer");
}
SHMPI_WEAK_ALIAS(Type_create_f90_integer);

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
    return f90_call(MPI_COMBINER_F90_REAL, p, r, newtype, "MPI_Type_create_f90_real");
}
SHMPI_WEAK_ALIAS(Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
    return f90_call(MPI_COMBINER_F90_COMPLEX, p, r, newtype, "MPI_Type_create_f90_complex");
}
SHMPI_WEAK_ALIAS(Type_create_f90_complex);

}  // extern "C"
