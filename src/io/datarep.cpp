// Data representations: see datarep.hpp.
#include "io/datarep.hpp"

#include <fmt/format.h>

#include <climits>
#include <memory>
#include <vector>

#include "dtype/walk.hpp"
#include "errors.hpp"

namespace shmpi::io {

namespace {

/// Every representation there is: the predefined ones first, then those
/// registered, in order.  Never shrinks, and never destroyed (files refer
/// to their representation until the process ends).
std::vector<std::unique_ptr<Datarep>>& table() {
    static auto* all = new std::vector<std::unique_ptr<Datarep>>();
    return *all;
}

}  // namespace

const Datarep* Datarep::find(const std::string& name) {
    if (table().empty()) {
        table().emplace_back(new Datarep("native", Kind::Native));
        table().emplace_back(new Datarep("internal", Kind::Native));
        table().emplace_back(new Datarep("external32", Kind::External32));
    }
    for (const auto& d : table()) {
        if (d->name_ == name) return d.get();
    }
    return nullptr;
}

const Datarep& Datarep::native_rep() { return *find("native"); }

void Datarep::add(const std::string& name, MPI_Datarep_conversion_function* read_fn,
                  MPI_Datarep_conversion_function* write_fn, MPI_Datarep_extent_function* extent_fn,
                  void* extra_state, const char* fn) {
    if (find(name) != nullptr) {
        fail(MPI_ERR_DUP_DATAREP, "{}: datarep \"{}\" is already defined{}", fn, name,
             name == "native" || name == "internal" || name == "external32" ? " (by the MPI standard)"
                                                                           : " (by an earlier MPI_Register_datarep)");
    }
    std::unique_ptr<Datarep> d(new Datarep(name, Kind::User));
    d->read_fn_ = read_fn;
    d->write_fn_ = write_fn;
    d->extent_fn_ = extent_fn;
    d->extra_ = extra_state;
    table().push_back(std::move(d));
}

std::int64_t Datarep::file_size(const dtype::Datatype& t, const char* fn) const {
    const dtype::Datatype& b = dtype::basic_of(t);
    if (b.kind != dtype::Kind::Builtin) {
        // A pair type (MPI_DOUBLE_INT, ...): the sum of its two values.
        auto size_of = [&](const dtype::Datatype& v) { return file_size(v, fn); };
        return dtype::sum_basic(b, size_of);
    }
    switch (kind_) {
    case Kind::Native:
        return b.size;
    case Kind::External32:
        return dtype::external32_value_size(b);
    case Kind::User:
        break;
    }
    const auto known = sizes_.find(&b);
    if (known != sizes_.end()) return known->second;
    MPI_Aint extent = 0;
    const int rc = extent_fn_(b.self, &extent, extra_);
    if (rc != MPI_SUCCESS) {
        fail(MPI_ERR_CONVERSION, "{}: the extent function of datarep \"{}\" returned error {} for {}", fn, name_, rc,
             b.name);
    }
    if (extent <= 0) {
        fail(MPI_ERR_CONVERSION, "{}: the extent function of datarep \"{}\" gave {} an extent of {} bytes; it must "
             "be positive", fn, name_, b.name, static_cast<std::int64_t>(extent));
    }
    sizes_.emplace(&b, static_cast<std::int64_t>(extent));
    return extent;
}

dtype::Ref Datarep::layout(const dtype::Datatype& t, const char* fn) const {
    if (native()) return dtype::Ref(&t);
    return dtype::rebuild(t, [&](const dtype::Datatype& p) {
        const std::int64_t n = file_size(p, fn);
        dtype::Ref& run = runs_[n];
        if (!run) {
            if (n > INT_MAX) fail(MPI_ERR_CONVERSION, "{}: {} takes {} bytes in datarep \"{}\"", fn, p.name, n, name_);
            run = dtype::adopt_internal(dtype::make_contiguous(static_cast<int>(n), dtype::byte_type(), fn));
        }
        return run;
    }, fn);
}

std::int64_t Datarep::file_bytes(const dtype::Datatype& type, std::int64_t count, const char* fn) const {
    auto size_of = [&](const dtype::Datatype& b) { return file_size(b, fn); };
    const std::int64_t each = native() ? type.size : dtype::sum_basic(type, size_of);
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(count, each, &bytes)) {
        fail(MPI_ERR_COUNT, "{}: {} elements of {} take {} bytes each in datarep \"{}\": the total overflows a byte "
             "count", fn, count, type.name, each, name_);
    }
    return bytes;
}

void Datarep::same_sizes(const dtype::Datatype& type, const char* fn) const {
    auto check = [&](const dtype::Datatype& b) {
        const std::int64_t n = file_size(b, fn);
        if (n != b.size) {
            fail(MPI_ERR_CONVERSION, "{}: datarep \"{}\" has no conversion function (MPI_CONVERSION_FN_NULL), so "
                 "values move as they are in memory, but its extent function gives {} {} bytes in the file, not {}",
                 fn, name_, b.name, n, b.size);
        }
        return n;
    };
    dtype::sum_basic(type, check);
}

void Datarep::convert(MPI_Datarep_conversion_function* conv, const char* which, const dtype::Datatype& type,
                      void* buf, std::int64_t values, std::byte* file, const char* fn) const {
    auto call = [&](std::int64_t position, std::int64_t n, std::byte* at) {
        const int rc = conv(buf, type.self, static_cast<int>(n), at, position, extra_);
        if (rc != MPI_SUCCESS) {
            fail(MPI_ERR_CONVERSION, "{}: the {} conversion function of datarep \"{}\" returned error {} (converting "
                 "{} values of {} from value {} on)", fn, which, name_, rc, n, type.name, position);
        }
    };
    if (values <= INT_MAX) {
        if (values > 0) call(0, values, file);
        return;
    }
    // More values than one call may take: walk them to find where each
    // call's share of the file stream starts.
    std::int64_t done = 0, first = 0, bytes = 0, chunk_at = 0;
    auto step = [&](const dtype::Datatype& b, std::byte*) {
        if (done - first == INT_MAX) {
            call(first, done - first, file + chunk_at);
            first = done;
            chunk_at = bytes;
        }
        bytes += file_size(b, fn);
        return ++done < values;
    };
    auto* base = static_cast<std::byte*>(buf);
    for (std::int64_t i = 0; done < values && dtype::walk(type, base + i * type.extent, step); ++i) {
    }
    call(first, done - first, file + chunk_at);
}

void Datarep::to_file(const dtype::Datatype& type, const void* buf, std::int64_t count, std::byte* out,
                      const char* fn) const {
    switch (kind_) {
    case Kind::Native:
        dtype::pack(type, buf, count, out);
        return;
    case Kind::External32:
        dtype::pack_external32(type, buf, count, out, fn);
        return;
    case Kind::User:
        break;
    }
    if (write_fn_ == nullptr) {
        same_sizes(type, fn);
        dtype::pack(type, buf, count, out);
        return;
    }
    convert(write_fn_, "write", type, const_cast<void*>(buf), count * type.elements, out, fn);
}

std::int64_t Datarep::values_within(const dtype::Datatype& type, void* buf, std::int64_t bytes, const char* fn) const {
    const std::int64_t each = file_bytes(type, 1, fn);
    if (each <= 0) return 0;
    std::int64_t rest = bytes % each;
    std::int64_t values = bytes / each * type.elements;
    if (rest == 0) return values;
    // The element the bytes end in: its values that fit whole.
    auto fits = [&](const dtype::Datatype& b, std::byte*) {
        const std::int64_t n = file_size(b, fn);
        if (n > rest) return false;
        rest -= n;
        ++values;
        return true;
    };
    dtype::walk(type, static_cast<std::byte*>(buf), fits);  // (the addresses are not used)
    return values;
}

std::int64_t Datarep::from_file(const dtype::Datatype& type, void* buf, const std::byte* in, std::int64_t bytes,
                                const char* fn) const {
    if (native()) {
        dtype::unpack(type, in, bytes, buf);
        return bytes;
    }
    const std::int64_t values = values_within(type, buf, bytes, fn);
    if (kind_ == Kind::External32) {
        dtype::unpack_external32_values(type, in, buf, values, fn);
    } else if (read_fn_ == nullptr) {
        same_sizes(type, fn);
        dtype::unpack(type, in, dtype::bytes_of_elements(type, values), buf);
    } else {
        convert(read_fn_, "read", type, buf, values, const_cast<std::byte*>(in), fn);
    }
    return dtype::bytes_of_elements(type, values);
}

}  // namespace shmpi::io
