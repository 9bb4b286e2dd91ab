// C boundary: datatype queries.
#include <fmt/format.h>

#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace {

/// Like type_of(), but also accepts uncommitted types and the bound markers:
/// queries are allowed on them.
const dtype::Datatype& any_type(MPI_Datatype handle, const char* fn) {
    const dtype::Datatype* t = handle == MPI_DATATYPE_NULL ? nullptr : dtype::lookup(handle);
    if (t == nullptr) {
        throw MpiError(MPI_ERR_TYPE, fmt::format("{}: invalid datatype {:#x}", fn,
                                                 reinterpret_cast<std::uintptr_t>(handle)));
    }
    return *t;
}

}  // namespace

extern "C" {

int PMPI_Type_size_x(MPI_Datatype type, MPI_Count* size) {
    const char* fn = "MPI_Type_size_x";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        if (size == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Type_size: size is NULL");
        *size = t.size;
    });
}
#pragma weak MPI_Type_size_x = PMPI_Type_size_x

int PMPI_Type_size(MPI_Datatype type, int* size) {
    MPI_Count n = 0;
    const int rc = PMPI_Type_size_x(type, &n);
    if (rc == MPI_SUCCESS && size != nullptr) *size = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return rc;
}
#pragma weak MPI_Type_size = PMPI_Type_size

int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint* lb, MPI_Aint* extent) {
    const char* fn = "MPI_Type_get_extent";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = any_type(type, fn);
        if (lb == nullptr || extent == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Type_get_extent: lb or extent is NULL");
        *lb = t.lb;
        *extent = t.extent;
    });
}
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent

}  // extern "C"
