// `reorder = true` in MPI_Cart_create and MPI_Graph_create: choose which
// process takes which grid point (graph node) so that neighbours share a
// core, a cache, a NUMA node or a package, from where the launcher placed
// each process (place::Place).
//
// The functions work on a span of Places, one per candidate process, so
// they can be tested on synthetic machines.  They return `members`:
// members[k] is the index (into `places`) of the process that gets grid
// point (graph node) k, a permutation of 0 .. places.size()-1.  Every member
// of the communicator computes the same answer from the same input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "place/place.hpp"
#include "topo/cart.hpp"
#include "topo/graph.hpp"

namespace shmpi::topo {

/// How far apart two places are: 0 on one core, 1 sharing an L3, 2 on one
/// NUMA node, 3 in one package, 4 otherwise or when unknown.
int distance(const place::Place& a, const place::Place& b);

/// The messages of one halo exchange over a mapping (every neighbour pair
/// of the neighbourhood collectives, in both directions, MPI_PROC_NULL left
/// out), counted by distance, and their total cost (the sum of distances).
struct Locality {
    std::int64_t messages = 0;
    std::int64_t at_distance[5] = {0, 0, 0, 0, 0};
    std::int64_t cost = 0;
};
Locality cart_locality(const CartShape& shape, std::span<const int> members,
                       std::span<const place::Place> places);
Locality graph_locality(const GraphShape& graph, std::span<const int> members,
                        std::span<const place::Place> places);

/// The identity, unless every place is known and a mapping with a lower
/// cost exists.  Cartesian grids: recursive bisection of the grid, matched
/// against the processes sorted by (package, NUMA node, L3, core, PU), so
/// that each object of the machine gets a compact block of the grid.
/// `places.size()` must equal shape.points().
std::vector<int> map_cart(const CartShape& shape, std::span<const place::Place> places);

/// The same for a graph: nodes in breadth-first (Cuthill-McKee) order are
/// matched against the sorted processes.  `places.size()` must equal
/// graph.nnodes().
std::vector<int> map_graph(const GraphShape& graph, std::span<const place::Place> places);

}  // namespace shmpi::topo
