// C boundary: communicator queries.
#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
    const char* fn = "MPI_Comm_rank";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (rank == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Comm_rank: rank is NULL");
        *rank = c.rank();
    });
}
#pragma weak MPI_Comm_rank = PMPI_Comm_rank

int PMPI_Comm_size(MPI_Comm comm, int* size) {
    const char* fn = "MPI_Comm_size";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (size == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Comm_size: size is NULL");
        *size = c.size();
    });
}
#pragma weak MPI_Comm_size = PMPI_Comm_size

}  // extern "C"
