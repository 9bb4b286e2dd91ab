#include "topo/create.hpp"

#include <mpi.h>

#include <cstdint>
#include <numeric>

#include "api_common.hpp"
#include "coll/linear.hpp"
#include "comm_create.hpp"
#include "runtime.hpp"
#include "topo/reorder.hpp"
#include "topo/topology.hpp"

namespace shmpi::topo {

std::vector<place::Place> places_of(const Communicator& c) {
    const std::vector<place::Place> world = place::read_places(api::runtime().transport().segment());
    std::vector<place::Place> mine(static_cast<std::size_t>(c.size()));
    for (int r = 0; r < c.size(); ++r) {
        const std::uint32_t w = c.world_rank(r);
        if (w < world.size()) mine[static_cast<std::size_t>(r)] = world[w];
    }
    return mine;
}

namespace {

/// Places of the first n ranks of `parent`.
std::vector<place::Place> first_places(const Communicator& parent, std::size_t n) {
    std::vector<place::Place> p = places_of(parent);
    p.resize(n);
    return p;
}

}  // namespace

std::vector<int> cart_members(const Communicator& parent, const CartShape& shape, bool reorder) {
    const auto n = static_cast<std::size_t>(shape.points());
    if (!reorder) {
        std::vector<int> id(n);
        std::iota(id.begin(), id.end(), 0);
        return id;
    }
    return map_cart(shape, first_places(parent, n));
}

std::vector<int> graph_members(const Communicator& parent, const GraphShape& graph, bool reorder) {
    const auto n = static_cast<std::size_t>(graph.nnodes());
    if (!reorder) {
        std::vector<int> id(n);
        std::iota(id.begin(), id.end(), 0);
        return id;
    }
    return map_graph(graph, first_places(parent, n));
}

int new_rank(const Communicator& parent, std::span<const int> members) {
    for (std::size_t k = 0; k < members.size(); ++k) {
        if (members[k] == parent.rank()) return static_cast<int>(k);
    }
    return MPI_UNDEFINED;
}

std::unique_ptr<Communicator> cart_create(Communicator& parent, const CartShape& shape, bool reorder) {
    const std::vector<int> members = cart_members(parent, shape, reorder);
    std::unique_ptr<Communicator> c = create_from_members(parent, members);
    if (c) c->set_topology(std::make_shared<const Topology>(shape));
    return c;
}

std::unique_ptr<Communicator> graph_create(Communicator& parent, const GraphShape& graph, bool reorder) {
    const std::vector<int> members = graph_members(parent, graph, reorder);
    std::unique_ptr<Communicator> c = create_from_members(parent, members);
    if (c) c->set_topology(std::make_shared<const Topology>(graph));
    return c;
}

std::unique_ptr<Communicator> cart_sub(Communicator& cart, const std::vector<bool>& remain) {
    const SubGrid g = sub_grid(cart.topology()->cart(), cart.rank(), remain);
    std::unique_ptr<Communicator> c = split(cart, g.color, g.key);
    if (c) c->set_topology(std::make_shared<const Topology>(g.shape));
    return c;
}

std::unique_ptr<Communicator> dist_graph_adjacent(Communicator& parent, DistAdjacency adjacency) {
    std::vector<int> all(static_cast<std::size_t>(parent.size()));
    std::iota(all.begin(), all.end(), 0);
    std::unique_ptr<Communicator> c = create_from_members(parent, all);
    c->set_topology(std::make_shared<const Topology>(std::move(adjacency)));
    return c;
}

std::unique_ptr<Communicator> dist_graph(Communicator& parent, std::span<const Edge> edges, bool weighted) {
    // 1. Every edge goes to both of its ends (once when they are the same
    //    process): count, then exchange the counts.
    const auto n = static_cast<std::size_t>(parent.size());
    std::vector<std::vector<Edge>> out(n);
    for (const Edge& e : edges) {
        out[static_cast<std::size_t>(e.source)].push_back(e);
        if (e.dest != e.source) out[static_cast<std::size_t>(e.dest)].push_back(e);
    }
    std::vector<std::int64_t> send_bytes(n), recv_bytes(n), send_off(n), recv_off(n);
    std::vector<Edge> send_buf;
    for (std::size_t r = 0; r < n; ++r) {
        send_off[r] = static_cast<std::int64_t>(send_buf.size() * sizeof(Edge));
        send_bytes[r] = static_cast<std::int64_t>(out[r].size() * sizeof(Edge));
        send_buf.insert(send_buf.end(), out[r].begin(), out[r].end());
    }
    coll::alltoall_linear(parent.team(), send_bytes.data(), sizeof(std::int64_t), recv_bytes.data());
    // 2. Exchange the edges; they arrive grouped by the rank that named them.
    std::int64_t total = 0;
    for (std::size_t r = 0; r < n; ++r) {
        recv_off[r] = total;
        total += recv_bytes[r];
    }
    std::vector<Edge> mine(static_cast<std::size_t>(total) / sizeof(Edge));
    Edge none{};  // a valid address for an empty side
    coll::alltoallv_linear(parent.team(), send_buf.empty() ? &none : send_buf.data(),
                           coll::Blocks{send_bytes.data(), send_off.data()}, mine.empty() ? &none : mine.data(),
                           coll::Blocks{recv_bytes.data(), recv_off.data()});
    // 3. Same as the adjacent form from here.
    return dist_graph_adjacent(parent, adjacency_of(mine, parent.rank(), weighted));
}

}  // namespace shmpi::topo
