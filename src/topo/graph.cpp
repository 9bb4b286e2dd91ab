#include "topo/graph.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include "errors.hpp"

namespace shmpi::topo {

std::span<const int> GraphShape::neighbors(int node) const {
    const auto n = static_cast<std::size_t>(node);
    const auto begin = static_cast<std::size_t>(node == 0 ? 0 : index[n - 1]);
    const auto end = static_cast<std::size_t>(index[n]);
    return std::span<const int>(edges).subspan(begin, end - begin);
}

// A bad graph is MPI_ERR_ARG, the class MPICH gives every case of it and
// Open MPI the ones it checks (MPI-3.1 names none).
GraphShape check_graph(int nnodes, const int* index, const int* edges, int group_size, const char* fn) {
    if (nnodes < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: nnodes is {} (must be 0 or more)", fn, nnodes));
    if (nnodes > group_size) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: the graph has {} nodes, more than the {} processes of the communicator", fn,
                                   nnodes, group_size));
    }
    GraphShape g;
    if (nnodes == 0) return g;
    if (index == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: index is NULL", fn));
    if (index[0] < 0) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: index[0] is {}, a negative degree for node 0 "
                                                "(index holds running totals of the degrees)",
                                                fn, index[0]));
    }
    int prev = 0;
    for (int i = 0; i < nnodes; ++i) {
        if (index[i] < prev) {
            throw MpiError(MPI_ERR_ARG,
                           fmt::format("{}: index[{}] is {}, less than {} before it (index holds running totals of "
                                       "the degrees)",
                                       fn, i, index[i], prev));
        }
        prev = index[i];
        g.index.push_back(index[i]);
    }
    const int nedges = prev;
    if (nedges > 0 && edges == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: edges is NULL", fn));
    for (int e = 0; e < nedges; ++e) {
        if (edges[e] < 0 || edges[e] >= nnodes) {
            throw MpiError(MPI_ERR_ARG,
                           fmt::format("{}: edges[{}] is {}, not a node of the graph (nodes 0..{})", fn, e, edges[e],
                                       nnodes - 1));
        }
        g.edges.push_back(edges[e]);
    }
    return g;
}

void check_ranks(std::span<const int> ranks, int group_size, const char* arg, const char* fn) {
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i] < 0 || ranks[i] >= group_size) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: {}[{}] is {}, not a rank of the communicator (size {})", fn,
                                                     arg, i, ranks[i], group_size));
        }
    }
}

DistAdjacency adjacency_of(std::span<const Edge> edges, int me, bool weighted) {
    DistAdjacency a;
    a.weighted = weighted;
    for (const Edge& e : edges) {
        if (e.dest == me) {
            a.sources.push_back(e.source);
            if (weighted) a.source_weights.push_back(e.weight);
        }
        if (e.source == me) {
            a.destinations.push_back(e.dest);
            if (weighted) a.dest_weights.push_back(e.weight);
        }
    }
    return a;
}

}  // namespace shmpi::topo
