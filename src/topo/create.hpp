// Making communicators with a topology attached.  Each function is
// collective over its parent communicator (see comm_create.hpp) and returns
// the new communicator of the calling process, or nullptr where MPI returns
// MPI_COMM_NULL (processes beyond the grid or graph).  Arguments are checked
// by the caller (api_topo.cpp).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "communicator.hpp"
#include "place/place.hpp"
#include "topo/cart.hpp"
#include "topo/graph.hpp"

namespace shmpi::topo {

/// The Place of every rank of `c` (unknown ones in a singleton).
std::vector<place::Place> places_of(const Communicator& c);

/// Which rank of `parent` takes each grid point / graph node: the first
/// points() ranks of `parent` in order, or, with `reorder`, mapped onto the
/// machine by map_cart / map_graph (reorder.hpp).
std::vector<int> cart_members(const Communicator& parent, const CartShape& shape, bool reorder);
std::vector<int> graph_members(const Communicator& parent, const GraphShape& graph, bool reorder);

/// The rank the calling process gets in the new communicator, or
/// MPI_UNDEFINED: MPI_Cart_map and MPI_Graph_map (with reorder, so they
/// tell what MPI_Cart_create / MPI_Graph_create would do).
int new_rank(const Communicator& parent, std::span<const int> members);

std::unique_ptr<Communicator> cart_create(Communicator& parent, const CartShape& shape, bool reorder);
std::unique_ptr<Communicator> graph_create(Communicator& parent, const GraphShape& graph, bool reorder);

/// MPI_Cart_sub on a communicator with a Cartesian topology; `remain` has
/// one entry per dimension.
std::unique_ptr<Communicator> cart_sub(Communicator& cart, const std::vector<bool>& remain);

/// MPI_Dist_graph_create_adjacent: every process gives its own edges.  The
/// ranks keep their order (reorder is allowed to do nothing).
std::unique_ptr<Communicator> dist_graph_adjacent(Communicator& parent, DistAdjacency adjacency);

/// MPI_Dist_graph_create: every process gives any edges of the graph; each
/// process learns its own.  Its sources and destinations come in the order
/// of the rank that named the edge, then of that rank's list.
std::unique_ptr<Communicator> dist_graph(Communicator& parent, std::span<const Edge> edges, bool weighted);

}  // namespace shmpi::topo
