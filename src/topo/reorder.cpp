// The mappings behind `reorder = true`.
//
// Cartesian grids, by recursive bisection:
//   1. Sort the processes by where they run: (package, NUMA node, L3, core,
//      PU), so that the processes of any object of the machine form one run
//      of the sorted list.
//   2. Cut the grid (a box) in two along one dimension, and the sorted list
//      at the same count.  Among all cuts, prefer the one at the highest
//      boundary of the machine (the two processes on either side of the cut
//      in the sorted list are furthest apart), then the one that cuts the
//      fewest grid edges (a periodic dimension spanned entirely has its
//      wrap-around edges cut too), then the most even one.
//   3. Recurse into both halves until a box holds one grid point, which gets
//      the one process left.
//   4. Keep the result only if its halo exchange costs less than the
//      identity's (so reorder never makes a placement worse by this measure,
//      and keeps ranks where it cannot help).
// Graphs: nodes in Cuthill-McKee order (breadth first from a node of lowest
// degree, neighbours by increasing degree) take the sorted processes in
// order; then step 4.
#include "topo/reorder.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <queue>
#include <tuple>

namespace shmpi::topo {
namespace {

using place::Place;

bool all_known(std::span<const Place> places) {
    return std::none_of(places.begin(), places.end(), [](const Place& p) { return p.unknown(); });
}

/// Step 1: indexes into `places`, sorted by where they run.
std::vector<int> sorted_by_place(std::span<const Place> places) {
    std::vector<int> order(places.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int i) {
        const Place& p = places[static_cast<std::size_t>(i)];
        return std::make_tuple(p.package, p.numa, p.l3, p.core, p.pu, i);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    return order;
}

std::vector<int> identity(std::size_t n) {
    std::vector<int> v(n);
    std::iota(v.begin(), v.end(), 0);
    return v;
}

struct Bisection {
    const CartShape& shape;
    std::span<const Place> places;
    std::vector<int>& members;

    /// Steps 2 and 3 for the box [lo, hi) and the processes `procs`.
    void run(std::vector<int> lo, std::vector<int> hi, std::span<const int> procs) {
        const std::size_t nd = lo.size();
        std::int64_t volume = 1;
        for (std::size_t i = 0; i < nd; ++i) volume *= hi[i] - lo[i];
        if (volume == 1) {
            members[static_cast<std::size_t>(rank_of(shape, lo, "map_cart"))] = procs[0];
            return;
        }
        // 2. The best cut: highest boundary, fewest edges, most even.
        int best_dim = -1;
        int best_t = 0;
        std::int64_t best_n1 = 0;
        auto best_key = std::make_tuple(-1, INT64_MIN, INT64_MIN);
        for (std::size_t i = 0; i < nd; ++i) {
            const int ext = hi[i] - lo[i];
            if (ext < 2) continue;
            const std::int64_t slab = volume / ext;
            const bool wraps = shape.periods[i] && ext == shape.dims[i];
            const std::int64_t edges = slab * (wraps ? 2 : 1);
            for (int t = 1; t < ext; ++t) {
                const std::int64_t n1 = t * slab;
                const auto at = static_cast<std::size_t>(n1);
                const int boundary = distance(places[static_cast<std::size_t>(procs[at - 1])],
                                              places[static_cast<std::size_t>(procs[at])]);
                const auto key = std::make_tuple(boundary, -edges, -std::abs(2 * n1 - volume));
                if (key > best_key) {
                    best_key = key;
                    best_dim = static_cast<int>(i);
                    best_t = t;
                    best_n1 = n1;
                }
            }
        }
        // 3. Recurse.
        const auto d = static_cast<std::size_t>(best_dim);
        std::vector<int> mid_hi = hi;
        mid_hi[d] = lo[d] + best_t;
        std::vector<int> mid_lo = lo;
        mid_lo[d] = lo[d] + best_t;
        run(lo, mid_hi, procs.first(static_cast<std::size_t>(best_n1)));
        run(mid_lo, hi, procs.subspan(static_cast<std::size_t>(best_n1)));
    }
};

void count(Locality& l, const Place& a, const Place& b) {
    const int d = distance(a, b);
    ++l.messages;
    ++l.at_distance[d];
    l.cost += d;
}

}  // namespace

int distance(const Place& a, const Place& b) {
    if (a.core >= 0 && a.core == b.core) return 0;
    if (a.l3 >= 0 && a.l3 == b.l3) return 1;
    if (a.numa >= 0 && a.numa == b.numa) return 2;
    if (a.package >= 0 && a.package == b.package) return 3;
    return 4;
}

Locality cart_locality(const CartShape& shape, std::span<const int> members, std::span<const Place> places) {
    Locality l;
    for (int k = 0; k < static_cast<int>(members.size()); ++k) {
        for (const int j : cart_neighbors(shape, k)) {
            if (j == MPI_PROC_NULL) continue;
            count(l, places[static_cast<std::size_t>(members[static_cast<std::size_t>(k)])],
                  places[static_cast<std::size_t>(members[static_cast<std::size_t>(j)])]);
        }
    }
    return l;
}

Locality graph_locality(const GraphShape& graph, std::span<const int> members, std::span<const Place> places) {
    Locality l;
    for (int k = 0; k < graph.nnodes(); ++k) {
        for (const int j : graph.neighbors(k)) {
            count(l, places[static_cast<std::size_t>(members[static_cast<std::size_t>(k)])],
                  places[static_cast<std::size_t>(members[static_cast<std::size_t>(j)])]);
        }
    }
    return l;
}

std::vector<int> map_cart(const CartShape& shape, std::span<const Place> places) {
    std::vector<int> id = identity(places.size());
    if (places.size() < 2 || !all_known(places)) return id;
    // 1. Sort; 2, 3. bisect.
    const std::vector<int> procs = sorted_by_place(places);
    std::vector<int> members(places.size(), -1);
    Bisection b{shape, places, members};
    b.run(std::vector<int>(shape.dims.size(), 0), shape.dims, procs);
    // 4. Only if it helps.
    if (cart_locality(shape, members, places).cost < cart_locality(shape, id, places).cost) return members;
    return id;
}

std::vector<int> map_graph(const GraphShape& graph, std::span<const Place> places) {
    std::vector<int> id = identity(places.size());
    if (places.size() < 2 || !all_known(places)) return id;
    const auto n = static_cast<std::size_t>(graph.nnodes());
    // The graph made undirected, without self loops or repeated edges.
    std::vector<std::vector<int>> adj(n);
    for (int k = 0; k < graph.nnodes(); ++k) {
        for (const int j : graph.neighbors(k)) {
            if (j == k) continue;
            adj[static_cast<std::size_t>(k)].push_back(j);
            adj[static_cast<std::size_t>(j)].push_back(k);
        }
    }
    for (auto& a : adj) {
        std::sort(a.begin(), a.end());
        a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    auto degree = [&](int k) { return adj[static_cast<std::size_t>(k)].size(); };
    auto by_degree = [&](int a, int b) { return std::make_pair(degree(a), a) < std::make_pair(degree(b), b); };
    // Cuthill-McKee, one connected component after another.
    std::vector<int> nodes = identity(n);
    std::sort(nodes.begin(), nodes.end(), by_degree);
    std::vector<char> seen(n, 0);
    std::vector<int> order;
    order.reserve(n);
    for (const int start : nodes) {
        if (seen[static_cast<std::size_t>(start)]) continue;
        std::queue<int> q;
        q.push(start);
        seen[static_cast<std::size_t>(start)] = 1;
        while (!q.empty()) {
            const int k = q.front();
            q.pop();
            order.push_back(k);
            std::vector<int> next;
            for (const int j : adj[static_cast<std::size_t>(k)]) {
                if (!seen[static_cast<std::size_t>(j)]) {
                    seen[static_cast<std::size_t>(j)] = 1;
                    next.push_back(j);
                }
            }
            std::sort(next.begin(), next.end(), by_degree);
            for (const int j : next) q.push(j);
        }
    }
    const std::vector<int> procs = sorted_by_place(places);
    std::vector<int> members(n);
    for (std::size_t pos = 0; pos < n; ++pos) members[static_cast<std::size_t>(order[pos])] = procs[pos];
    if (graph_locality(graph, members, places).cost < graph_locality(graph, id, places).cost) return members;
    return id;
}

}  // namespace shmpi::topo
