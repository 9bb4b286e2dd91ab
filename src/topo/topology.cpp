#include "topo/topology.hpp"

#include <mpi.h>

namespace shmpi::topo {

int Topology::mpi_kind() const {
    switch (kind_) {
    case Kind::Cart: return MPI_CART;
    case Kind::Graph: return MPI_GRAPH;
    case Kind::DistGraph: return MPI_DIST_GRAPH;
    }
    return MPI_UNDEFINED;
}

Neighborhood Topology::neighborhood(int rank) const {
    Neighborhood n;
    switch (kind_) {
    case Kind::Cart:
        n.sources = cart_neighbors(cart_, rank);
        n.destinations = n.sources;
        n.directional = true;
        break;
    case Kind::Graph: {
        const auto nb = graph_.neighbors(rank);
        n.sources.assign(nb.begin(), nb.end());
        n.destinations = n.sources;
        break;
    }
    case Kind::DistGraph:
        n.sources = dist_.sources;
        n.destinations = dist_.destinations;
        break;
    }
    return n;
}

}  // namespace shmpi::topo
