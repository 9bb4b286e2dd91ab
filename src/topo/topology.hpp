// The virtual topology attached to a communicator (Communicator::topology()):
// a Cartesian grid, an MPI-1 graph, or this process's part of an MPI-3
// distributed graph.  Immutable once made, and shared by the communicators
// MPI_Comm_dup makes from the one it was attached to.
#pragma once

#include <vector>

#include "topo/cart.hpp"
#include "topo/graph.hpp"

namespace shmpi::topo {

/// Who a rank exchanges data with in a neighbourhood collective, in the
/// order of the send and receive buffers.  MPI_PROC_NULL entries (off the
/// edge of a non-periodic grid) keep their place in the buffers but move no
/// data.
struct Neighborhood {
    std::vector<int> sources;       ///< block i of the receive buffer comes from sources[i]
    std::vector<int> destinations;  ///< block i of the send buffer goes to destinations[i]
    /// Cartesian: block 2d of a rank's send buffer (sent one step down
    /// dimension d) arrives in block 2d+1 of the receiver's buffer, and the
    /// other way round, even when both neighbours are one process (a
    /// periodic dimension of size 1 or 2).  Messages carry their direction
    /// in the tag for that.  Graphs: messages between a pair match in order.
    bool directional = false;
};

class Topology {
public:
    enum class Kind { Cart, Graph, DistGraph };

    explicit Topology(CartShape cart) : kind_(Kind::Cart), cart_(std::move(cart)) {}
    explicit Topology(GraphShape graph) : kind_(Kind::Graph), graph_(std::move(graph)) {}
    explicit Topology(DistAdjacency adjacency) : kind_(Kind::DistGraph), dist_(std::move(adjacency)) {}

    Kind kind() const { return kind_; }
    /// MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH, as MPI_Topo_test reports it.
    int mpi_kind() const;

    /// The grid; only for Kind::Cart.
    const CartShape& cart() const { return cart_; }
    /// The graph; only for Kind::Graph.
    const GraphShape& graph() const { return graph_; }
    /// This process's edges; only for Kind::DistGraph.
    const DistAdjacency& dist_graph() const { return dist_; }

    /// The neighbourhood of `rank` (for a distributed graph: of this process,
    /// whatever `rank` is).
    Neighborhood neighborhood(int rank) const;

private:
    Kind kind_;
    CartShape cart_;
    GraphShape graph_;
    DistAdjacency dist_;
};

}  // namespace shmpi::topo
