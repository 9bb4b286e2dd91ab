// C boundary: virtual topologies (Cartesian grids, graphs, distributed
// graphs) and the neighbourhood collectives.
//
// Each function checks its arguments, translates handles and calls one
// function of src/topo/.  Wrong topology (or none) is MPI_ERR_TOPOLOGY;
// the messages name the function, the argument and the bad value.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api_common.hpp"
#include "api_requests.hpp"
#include "api_info.hpp"
#include "coll/nonblocking.hpp"
#include "topo/create.hpp"
#include "topo/dims_create.hpp"
#include "topo/neighbor.hpp"
#include "topo/topology.hpp"

using namespace shmpi;
using namespace shmpi::api;
using topo::Topology;
namespace nbc = shmpi::coll::nbc;

namespace {

const char* kind_name(Topology::Kind k) {
    switch (k) {
    case Topology::Kind::Cart: return "a Cartesian";
    case Topology::Kind::Graph: return "a graph";
    case Topology::Kind::DistGraph: return "a distributed graph";
    }
    return "an unknown";
}

/// The topology of `c`, which must be of kind `want`.
const Topology& topo_of(const Communicator& c, Topology::Kind want, const char* fn) {
    const auto& t = c.topology();
    if (!t || t->kind() != want) {
        throw MpiError(MPI_ERR_TOPOLOGY,
                       fmt::format("{}: communicator {} has {} topology, not {} one", fn,
                                   c.name().empty() ? "(unnamed)" : c.name(),
                                   t ? kind_name(t->kind()) : "no", kind_name(want)));
    }
    return *t;
}

/// The topology of `c`, of any kind (neighbourhood collectives).
const Topology& any_topo_of(const Communicator& c, const char* fn) {
    const auto& t = c.topology();
    if (!t) {
        throw MpiError(MPI_ERR_TOPOLOGY,
                       fmt::format("{}: communicator {} has no topology (make one with MPI_Cart_create, "
                                   "MPI_Graph_create or MPI_Dist_graph_create)",
                                   fn, c.name().empty() ? "(unnamed)" : c.name()));
    }
    return *t;
}

void check_rank(const Communicator& c, int rank, const char* arg, const char* fn) {
    if (rank < 0 || rank >= c.size()) {
        throw MpiError(MPI_ERR_RANK,
                       fmt::format("{}: {} is {}, not a rank of the communicator (size {})", fn, arg, rank, c.size()));
    }
}

void check_max(int max, const char* arg, const char* fn) {
    if (max < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is {} (must be 0 or more)", fn, arg, max));
}

/// Hands a new communicator to the user (MPI_COMM_NULL for nullptr).
MPI_Comm handle_of(std::unique_ptr<Communicator> c) {
    return c ? reinterpret_cast<MPI_Comm>(c.release()) : MPI_COMM_NULL;
}

void check_count_arg(int count, const char* arg, const char* fn) {
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: {} is {} (negative)", fn, arg, count));
}

void check_not_in_place(const void* buf, const char* arg, const char* fn) {
    if (buf == MPI_IN_PLACE) {
        throw MpiError(MPI_ERR_BUFFER, fmt::format("{}: {} is MPI_IN_PLACE, which the neighbourhood collectives "
                                                   "do not allow",
                                                   fn, arg));
    }
}

/// One int per neighbour (counts or displacements); NULL is fine for none.
void check_array(const int* a, std::size_t n, const char* arg, const char* fn) {
    if (n > 0 && a == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, arg));
}

void check_counts(const int* counts, std::size_t n, const char* arg, const char* fn) {
    check_array(counts, n, arg, fn);
    for (std::size_t i = 0; i < n; ++i) {
        if (counts[i] < 0) {
            throw MpiError(MPI_ERR_COUNT, fmt::format("{}: {}[{}] is {} (negative)", fn, arg, i, counts[i]));
        }
    }
}

const std::byte* at(const void* buf, std::int64_t offset) { return static_cast<const std::byte*>(buf) + offset; }

/// The weights argument of the distributed-graph constructors: null when
/// unweighted; MPI_WEIGHTS_EMPTY is fine only for no edges.
const int* weights_arg(const int* w, int n, const char* arg, const char* fn) {
    if (w == MPI_UNWEIGHTED) return nullptr;
    if (w == MPI_WEIGHTS_EMPTY) {
        if (n > 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is MPI_WEIGHTS_EMPTY but there are {} edges", fn, arg, n));
        }
        return nullptr;
    }
    if (n > 0 && w == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, arg));
    for (int i = 0; i < n; ++i) {
        if (w[i] < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {}[{}] is {} (negative)", fn, arg, i, w[i]));
    }
    return w;
}

// ------------------------------------------------ neighbourhood collectives
// The blocking form and the nonblocking one (MPI_Ineighbor_*) make the same
// checks; exchange() runs the exchange now or starts it.

/// `n` blocks of `count` elements of `t` each, one after the other from `buf`.
std::vector<topo::Block> strided_blocks(const void* buf, std::size_t n, int count, const dtype::Datatype& t) {
    std::vector<topo::Block> b;
    for (std::size_t i = 0; i < n; ++i)
        b.push_back({at(buf, static_cast<std::int64_t>(i) * count * t.extent), count, &t});
    return b;
}

/// `n` blocks of `t`: the i-th has counts[i] elements, displs[i] extents
/// from `buf`.
std::vector<topo::Block> placed_blocks(const void* buf, std::size_t n, const int counts[], const int displs[],
                                       const dtype::Datatype& t) {
    std::vector<topo::Block> b;
    for (std::size_t i = 0; i < n; ++i)
        b.push_back({at(buf, static_cast<std::int64_t>(displs[i]) * t.extent), counts[i], &t});
    return b;
}

/// The last step of every neighbourhood collective: send[i] to the i-th
/// destination, recv[i] from the i-th source, now or as a started schedule.
void exchange(Form form, MPI_Comm comm, Communicator& c, const topo::Neighborhood& nb,
              const std::vector<topo::Block>& send, const std::vector<topo::Block>& recv, const char* fn) {
    finish(
        form, comm, fn, [&] { topo::neighbor_exchange(c, nb, send, recv, fn); },
        [&] { return nbc::neighbor_exchange(c, nb, send, recv); });
}

int neighbor_allgather_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::Neighborhood nb = any_topo_of(c, fn).neighborhood(c.rank());
        check_not_in_place(sendbuf, "sendbuf", fn);
        check_count_arg(sendcount, "sendcount", fn);
        check_count_arg(recvcount, "recvcount", fn);
        const dtype::Datatype& st = type_arg(sendtype, "sendtype", fn);
        const dtype::Datatype& rt = type_arg(recvtype, "recvtype", fn);
        const std::vector<topo::Block> send(nb.destinations.size(), topo::Block{sendbuf, sendcount, &st});
        const std::vector<topo::Block> recv = strided_blocks(recvbuf, nb.sources.size(), recvcount, rt);
        exchange(form, comm, c, nb, send, recv, fn);
    });
}

int neighbor_allgatherv_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::Neighborhood nb = any_topo_of(c, fn).neighborhood(c.rank());
        check_not_in_place(sendbuf, "sendbuf", fn);
        check_count_arg(sendcount, "sendcount", fn);
        check_counts(recvcounts, nb.sources.size(), "recvcounts", fn);
        check_array(displs, nb.sources.size(), "displs", fn);
        const dtype::Datatype& st = type_arg(sendtype, "sendtype", fn);
        const dtype::Datatype& rt = type_arg(recvtype, "recvtype", fn);
        const std::vector<topo::Block> send(nb.destinations.size(), topo::Block{sendbuf, sendcount, &st});
        const std::vector<topo::Block> recv =
            placed_blocks(recvbuf, nb.sources.size(), recvcounts, displs, rt);
        exchange(form, comm, c, nb, send, recv, fn);
    });
}

int neighbor_alltoall_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::Neighborhood nb = any_topo_of(c, fn).neighborhood(c.rank());
        check_not_in_place(sendbuf, "sendbuf", fn);
        check_count_arg(sendcount, "sendcount", fn);
        check_count_arg(recvcount, "recvcount", fn);
        const dtype::Datatype& st = type_arg(sendtype, "sendtype", fn);
        const dtype::Datatype& rt = type_arg(recvtype, "recvtype", fn);
        const std::vector<topo::Block> send = strided_blocks(sendbuf, nb.destinations.size(), sendcount, st);
        const std::vector<topo::Block> recv = strided_blocks(recvbuf, nb.sources.size(), recvcount, rt);
        exchange(form, comm, c, nb, send, recv, fn);
    });
}

int neighbor_alltoallv_call(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::Neighborhood nb = any_topo_of(c, fn).neighborhood(c.rank());
        check_not_in_place(sendbuf, "sendbuf", fn);
        check_counts(sendcounts, nb.destinations.size(), "sendcounts", fn);
        check_array(sdispls, nb.destinations.size(), "sdispls", fn);
        check_counts(recvcounts, nb.sources.size(), "recvcounts", fn);
        check_array(rdispls, nb.sources.size(), "rdispls", fn);
        const dtype::Datatype& st = type_arg(sendtype, "sendtype", fn);
        const dtype::Datatype& rt = type_arg(recvtype, "recvtype", fn);
        const std::vector<topo::Block> send =
            placed_blocks(sendbuf, nb.destinations.size(), sendcounts, sdispls, st);
        const std::vector<topo::Block> recv =
            placed_blocks(recvbuf, nb.sources.size(), recvcounts, rdispls, rt);
        exchange(form, comm, c, nb, send, recv, fn);
    });
}

int neighbor_alltoallw_call(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::Neighborhood nb = any_topo_of(c, fn).neighborhood(c.rank());
        check_not_in_place(sendbuf, "sendbuf", fn);
        const std::size_t no = nb.destinations.size();
        const std::size_t ni = nb.sources.size();
        check_counts(sendcounts, no, "sendcounts", fn);
        check_counts(recvcounts, ni, "recvcounts", fn);
        if (no > 0) {
            need(sdispls, "sdispls", fn);
            need(sendtypes, "sendtypes", fn);
        }
        if (ni > 0) {
            need(rdispls, "rdispls", fn);
            need(recvtypes, "recvtypes", fn);
        }
        std::vector<topo::Block> send;
        for (std::size_t i = 0; i < no; ++i) {
            send.push_back({at(sendbuf, sdispls[i]), sendcounts[i],
                            &block_type_arg(sendtypes[i], sendcounts[i], "sendtypes", fn)});
        }
        std::vector<topo::Block> recv;
        for (std::size_t i = 0; i < ni; ++i) {
            recv.push_back({at(recvbuf, rdispls[i]), recvcounts[i],
                            &block_type_arg(recvtypes[i], recvcounts[i], "recvtypes", fn)});
        }
        exchange(form, comm, c, nb, send, recv, fn);
    });
}

}  // namespace

extern "C" {

// ------------------------------------------------------------ Cartesian

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    const char* fn = "MPI_Dims_create";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (ndims < 0) throw MpiError(MPI_ERR_DIMS, fmt::format("{}: ndims is {} (must be 0 or more)", fn, ndims));
        if (ndims > 0) need(dims, "dims", fn);
        topo::dims_create(nnodes, std::span<int>(dims, static_cast<std::size_t>(ndims)), fn);
    });
}
SHMPI_WEAK_ALIAS(Dims_create);

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm* comm_cart) {
    const char* fn = "MPI_Cart_create";
    return guard(comm_old, fn, [&] {
        Communicator& c = intracomm_of(comm_old, fn);
        need_new(comm_cart, MPI_COMM_NULL, "comm_cart", fn);
        const topo::CartShape shape = topo::check_cart(ndims, dims, periods, c.size(), fn);
        *comm_cart = handle_of(topo::cart_create(c, shape, reorder != 0));
    });
}
SHMPI_WEAK_ALIAS(Cart_create);

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
    const char* fn = "MPI_Cart_map";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        need(newrank, "newrank", fn);
        const topo::CartShape shape = topo::check_cart(ndims, dims, periods, c.size(), fn);
        *newrank = topo::new_rank(c, topo::cart_members(c, shape, true));
    });
}
SHMPI_WEAK_ALIAS(Cart_map);

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
    const char* fn = "MPI_Cartdim_get";
    return guard(comm, fn, [&] {
        const Topology& t = topo_of(comm_of(comm, fn), Topology::Kind::Cart, fn);
        need(ndims, "ndims", fn);
        *ndims = t.cart().ndims();
    });
}
SHMPI_WEAK_ALIAS(Cartdim_get);

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    const char* fn = "MPI_Cart_get";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        const topo::CartShape& s = topo_of(c, Topology::Kind::Cart, fn).cart();
        check_max(maxdims, "maxdims", fn);
        const int n = std::min(maxdims, s.ndims());
        if (n > 0) {
            need(dims, "dims", fn);
            need(periods, "periods", fn);
            need(coords, "coords", fn);
        }
        const std::vector<int> mine = topo::coords_of(s, c.rank());
        for (int i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            dims[i] = s.dims[k];
            periods[i] = s.periods[k] ? 1 : 0;
            coords[i] = mine[k];
        }
    });
}
SHMPI_WEAK_ALIAS(Cart_get);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
    const char* fn = "MPI_Cart_rank";
    return guard(comm, fn, [&] {
        const topo::CartShape& s = topo_of(comm_of(comm, fn), Topology::Kind::Cart, fn).cart();
        need(rank, "rank", fn);
        if (s.ndims() > 0) need(coords, "coords", fn);
        *rank = topo::rank_of(s, std::span<const int>(coords, s.dims.size()), fn);
    });
}
SHMPI_WEAK_ALIAS(Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    const char* fn = "MPI_Cart_coords";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        const topo::CartShape& s = topo_of(c, Topology::Kind::Cart, fn).cart();
        check_rank(c, rank, "rank", fn);
        check_max(maxdims, "maxdims", fn);
        if (maxdims < s.ndims()) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: maxdims is {}, less than the {} dimensions of the grid", fn,
                                                    maxdims, s.ndims()));
        }
        if (s.ndims() > 0) need(coords, "coords", fn);
        topo::coords_of(s, rank, std::span<int>(coords, s.dims.size()));
    });
}
SHMPI_WEAK_ALIAS(Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
    const char* fn = "MPI_Cart_shift";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        const topo::CartShape& s = topo_of(c, Topology::Kind::Cart, fn).cart();
        if (s.ndims() == 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: direction is {}, but the grid has no dimensions "
                                                    "(ndims 0): there is nothing to shift along",
                                                    fn, direction));
        }
        if (direction < 0 || direction >= s.ndims()) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: direction is {}, not a dimension of the grid (0..{})", fn,
                                                    direction, s.ndims() - 1));
        }
        need(rank_source, "rank_source", fn);
        need(rank_dest, "rank_dest", fn);
        const topo::Shift sh = topo::shift(s, c.rank(), direction, disp);
        *rank_source = sh.source;
        *rank_dest = sh.dest;
    });
}
SHMPI_WEAK_ALIAS(Cart_shift);

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
    const char* fn = "MPI_Cart_sub";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const topo::CartShape& s = topo_of(c, Topology::Kind::Cart, fn).cart();
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        if (s.ndims() > 0) need(remain_dims, "remain_dims", fn);
        std::vector<bool> remain(s.dims.size());
        for (std::size_t i = 0; i < remain.size(); ++i) remain[i] = remain_dims[i] != 0;
        *newcomm = handle_of(topo::cart_sub(c, remain));
    });
}
SHMPI_WEAK_ALIAS(Cart_sub);

// ---------------------------------------------------------------- graphs

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm* comm_graph) {
    const char* fn = "MPI_Graph_create";
    return guard(comm_old, fn, [&] {
        Communicator& c = intracomm_of(comm_old, fn);
        need_new(comm_graph, MPI_COMM_NULL, "comm_graph", fn);
        const topo::GraphShape g = topo::check_graph(nnodes, index, edges, c.size(), fn);
        *comm_graph = handle_of(topo::graph_create(c, g, reorder != 0));
    });
}
SHMPI_WEAK_ALIAS(Graph_create);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
    const char* fn = "MPI_Graph_map";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        need(newrank, "newrank", fn);
        const topo::GraphShape g = topo::check_graph(nnodes, index, edges, c.size(), fn);
        *newrank = topo::new_rank(c, topo::graph_members(c, g, true));
    });
}
SHMPI_WEAK_ALIAS(Graph_map);

int PMPI_Topo_test(MPI_Comm comm, int* status) {
    const char* fn = "MPI_Topo_test";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        need(status, "status", fn);
        *status = c.topology() ? c.topology()->mpi_kind() : MPI_UNDEFINED;
    });
}
SHMPI_WEAK_ALIAS(Topo_test);

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
    const char* fn = "MPI_Graphdims_get";
    return guard(comm, fn, [&] {
        const topo::GraphShape& g = topo_of(comm_of(comm, fn), Topology::Kind::Graph, fn).graph();
        need(nnodes, "nnodes", fn);
        need(nedges, "nedges", fn);
        *nnodes = g.nnodes();
        *nedges = static_cast<int>(g.edges.size());
    });
}
SHMPI_WEAK_ALIAS(Graphdims_get);

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
    const char* fn = "MPI_Graph_get";
    return guard(comm, fn, [&] {
        const topo::GraphShape& g = topo_of(comm_of(comm, fn), Topology::Kind::Graph, fn).graph();
        check_max(maxindex, "maxindex", fn);
        check_max(maxedges, "maxedges", fn);
        const int ni = std::min(maxindex, g.nnodes());
        const int ne = std::min(maxedges, static_cast<int>(g.edges.size()));
        if (ni > 0) need(index, "index", fn);
        if (ne > 0) need(edges, "edges", fn);
        std::copy_n(g.index.begin(), ni, index);
        std::copy_n(g.edges.begin(), ne, edges);
    });
}
SHMPI_WEAK_ALIAS(Graph_get);

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
    const char* fn = "MPI_Graph_neighbors_count";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        const topo::GraphShape& g = topo_of(c, Topology::Kind::Graph, fn).graph();
        check_rank(c, rank, "rank", fn);
        need(nneighbors, "nneighbors", fn);
        *nneighbors = static_cast<int>(g.neighbors(rank).size());
    });
}
SHMPI_WEAK_ALIAS(Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    const char* fn = "MPI_Graph_neighbors";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        const topo::GraphShape& g = topo_of(c, Topology::Kind::Graph, fn).graph();
        check_rank(c, rank, "rank", fn);
        check_max(maxneighbors, "maxneighbors", fn);
        const auto nb = g.neighbors(rank);
        const auto n = std::min(static_cast<std::size_t>(maxneighbors), nb.size());
        if (n > 0) need(neighbors, "neighbors", fn);
        std::copy_n(nb.begin(), n, neighbors);
    });
}
SHMPI_WEAK_ALIAS(Graph_neighbors);

// ---------------------------------------------------- distributed graphs

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int *sourceweights,
                                    int outdegree, const int destinations[], const int *destweights, MPI_Info info,
                                    int reorder, MPI_Comm* comm_dist_graph) {
    const char* fn = "MPI_Dist_graph_create_adjacent";
    (void)reorder;  // the ranks keep their order
    return guard(comm_old, fn, [&] {
        Communicator& c = intracomm_of(comm_old, fn);
        check_info_arg(info, fn);  // checked; no hints are used
        need_new(comm_dist_graph, MPI_COMM_NULL, "comm_dist_graph", fn);
        if (indegree < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: indegree is {} (negative)", fn, indegree));
        if (outdegree < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: outdegree is {} (negative)", fn, outdegree));
        check_array(sources, static_cast<std::size_t>(indegree), "sources", fn);
        check_array(destinations, static_cast<std::size_t>(outdegree), "destinations", fn);
        topo::DistAdjacency a;
        a.sources.assign(sources, sources + indegree);
        a.destinations.assign(destinations, destinations + outdegree);
        topo::check_ranks(a.sources, c.size(), "sources", fn);
        topo::check_ranks(a.destinations, c.size(), "destinations", fn);
        a.weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
        const int* sw = weights_arg(sourceweights, indegree, "sourceweights", fn);
        const int* dw = weights_arg(destweights, outdegree, "destweights", fn);
        if (a.weighted) {
            if (indegree > 0) a.source_weights.assign(sw, sw + indegree);
            if (outdegree > 0) a.dest_weights.assign(dw, dw + outdegree);
        }
        *comm_dist_graph = handle_of(topo::dist_graph_adjacent(c, std::move(a)));
    });
}
SHMPI_WEAK_ALIAS(Dist_graph_create_adjacent);

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int *weights, MPI_Info info, int reorder,
                           MPI_Comm* comm_dist_graph) {
    const char* fn = "MPI_Dist_graph_create";
    (void)reorder;  // the ranks keep their order
    return guard(comm_old, fn, [&] {
        Communicator& c = intracomm_of(comm_old, fn);
        check_info_arg(info, fn);  // checked; no hints are used
        need_new(comm_dist_graph, MPI_COMM_NULL, "comm_dist_graph", fn);
        if (n < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: n is {} (negative)", fn, n));
        check_array(sources, static_cast<std::size_t>(n), "sources", fn);
        check_array(degrees, static_cast<std::size_t>(n), "degrees", fn);
        topo::check_ranks(std::span<const int>(sources, static_cast<std::size_t>(n)), c.size(), "sources", fn);
        int nedges = 0;
        for (int i = 0; i < n; ++i) {
            if (degrees[i] < 0) {
                throw MpiError(MPI_ERR_ARG, fmt::format("{}: degrees[{}] is {} (negative)", fn, i, degrees[i]));
            }
            nedges += degrees[i];
        }
        check_array(destinations, static_cast<std::size_t>(nedges), "destinations", fn);
        topo::check_ranks(std::span<const int>(destinations, static_cast<std::size_t>(nedges)), c.size(),
                          "destinations", fn);
        const bool weighted = weights != MPI_UNWEIGHTED;
        const int* w = weights_arg(weights, nedges, "weights", fn);
        std::vector<topo::Edge> edges;
        edges.reserve(static_cast<std::size_t>(nedges));
        int e = 0;
        for (int i = 0; i < n; ++i) {
            for (int k = 0; k < degrees[i]; ++k, ++e) edges.push_back({sources[i], destinations[e], w ? w[e] : 1});
        }
        *comm_dist_graph = handle_of(topo::dist_graph(c, edges, weighted));
    });
}
SHMPI_WEAK_ALIAS(Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
    const char* fn = "MPI_Dist_graph_neighbors_count";
    return guard(comm, fn, [&] {
        const topo::DistAdjacency& a = topo_of(comm_of(comm, fn), Topology::Kind::DistGraph, fn).dist_graph();
        need(indegree, "indegree", fn);
        need(outdegree, "outdegree", fn);
        need(weighted, "weighted", fn);
        *indegree = static_cast<int>(a.sources.size());
        *outdegree = static_cast<int>(a.destinations.size());
        *weighted = a.weighted ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Dist_graph_neighbors_count);

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int *sourceweights, int maxoutdegree,
                              int destinations[], int *destweights) {
    const char* fn = "MPI_Dist_graph_neighbors";
    return guard(comm, fn, [&] {
        const topo::DistAdjacency& a = topo_of(comm_of(comm, fn), Topology::Kind::DistGraph, fn).dist_graph();
        check_max(maxindegree, "maxindegree", fn);
        check_max(maxoutdegree, "maxoutdegree", fn);
        const auto ni = std::min(static_cast<std::size_t>(maxindegree), a.sources.size());
        const auto no = std::min(static_cast<std::size_t>(maxoutdegree), a.destinations.size());
        if (ni > 0) need(sources, "sources", fn);
        if (no > 0) need(destinations, "destinations", fn);
        std::copy_n(a.sources.begin(), ni, sources);
        std::copy_n(a.destinations.begin(), no, destinations);
        if (a.weighted) {
            if (ni > 0 && sourceweights != MPI_UNWEIGHTED && sourceweights != nullptr) {
                std::copy_n(a.source_weights.begin(), ni, sourceweights);
            }
            if (no > 0 && destweights != MPI_UNWEIGHTED && destweights != nullptr) {
                std::copy_n(a.dest_weights.begin(), no, destweights);
            }
        }
    });
}
SHMPI_WEAK_ALIAS(Dist_graph_neighbors);

// ------------------------------------------------ neighbourhood collectives

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return neighbor_allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   kBlocking, "MPI_Neighbor_allgather");
}
SHMPI_WEAK_ALIAS(Neighbor_allgather);

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return neighbor_allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                   Form{true, request}, "MPI_Ineighbor_allgather");
}
SHMPI_WEAK_ALIAS(Ineighbor_allgather);

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
    return neighbor_allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                    kBlocking, "MPI_Neighbor_allgatherv");
}
SHMPI_WEAK_ALIAS(Neighbor_allgatherv);

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
    return neighbor_allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                    Form{true, request}, "MPI_Ineighbor_allgatherv");
}
SHMPI_WEAK_ALIAS(Ineighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return neighbor_alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kBlocking,
                                  "MPI_Neighbor_alltoall");
}
SHMPI_WEAK_ALIAS(Neighbor_alltoall);

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return neighbor_alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                  Form{true, request}, "MPI_Ineighbor_alltoall");
}
SHMPI_WEAK_ALIAS(Ineighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
    return neighbor_alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm, kBlocking, "MPI_Neighbor_alltoallv");
}
SHMPI_WEAK_ALIAS(Neighbor_alltoallv);

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
    return neighbor_alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm, Form{true, request}, "MPI_Ineighbor_alltoallv");
}
SHMPI_WEAK_ALIAS(Ineighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return neighbor_alltoallw_call(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                   recvtypes, comm, kBlocking, "MPI_Neighbor_alltoallw");
}
SHMPI_WEAK_ALIAS(Neighbor_alltoallw);

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request* request) {
    return neighbor_alltoallw_call(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                   recvtypes, comm, Form{true, request}, "MPI_Ineighbor_alltoallw");
}
SHMPI_WEAK_ALIAS(Ineighbor_alltoallw);

}  // extern "C"
