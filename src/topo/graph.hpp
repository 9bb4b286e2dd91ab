// Graph topologies: the MPI-1 graph of MPI_Graph_create (every process
// knows the whole graph) and the MPI-3 distributed graph (every process
// knows its own incoming and outgoing edges).  Pure functions; the checks
// that name an MPI function throw MpiError.
#pragma once

#include <span>
#include <vector>

namespace shmpi::topo {

/// A graph as MPI_Graph_create takes it: node i's neighbours are
/// edges[index[i-1] .. index[i]) (from 0 for node 0).
struct GraphShape {
    std::vector<int> index;
    std::vector<int> edges;

    int nnodes() const { return static_cast<int>(index.size()); }
    /// Node `node`'s neighbours, in the order given.
    std::span<const int> neighbors(int node) const;
};

/// Checks the arguments of MPI_Graph_create / MPI_Graph_map and returns the
/// graph: MPI_ERR_ARG for nnodes < 0, NULL arrays, more nodes than
/// `group_size`, a decreasing index or an edge naming a node that does not
/// exist.
GraphShape check_graph(int nnodes, const int* index, const int* edges, int group_size, const char* fn);

/// One process's view of a distributed graph.  Weights are present
/// (same length as their lists) only when `weighted`.
struct DistAdjacency {
    std::vector<int> sources;
    std::vector<int> source_weights;
    std::vector<int> destinations;
    std::vector<int> dest_weights;
    bool weighted = false;
};

/// An edge of a distributed graph as MPI_Dist_graph_create spreads them.
struct Edge {
    int source;
    int dest;
    int weight;
};

/// Checks a list of `n` ranks (sources or destinations) of a group of
/// `group_size`: each must be a rank of the group (MPI_ERR_RANK otherwise,
/// naming `arg`); MPI_PROC_NULL is not allowed in a graph.
void check_ranks(std::span<const int> ranks, int group_size, const char* arg, const char* fn);

/// The adjacency of process `me` from every edge of the graph (in any
/// order): its sources and destinations appear in the order of `edges`.
DistAdjacency adjacency_of(std::span<const Edge> edges, int me, bool weighted);

}  // namespace shmpi::topo
