// The topology math on its own: Dims_create, grid numbering, shifts,
// Cart_sub, graphs, and the reorder mapping on synthetic machines.
#include <gtest/gtest.h>

#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "errors.hpp"
#include "topo/cart.hpp"
#include "topo/dims_create.hpp"
#include "topo/graph.hpp"
#include "topo/reorder.hpp"
#include "topo/topology.hpp"

using namespace shmpi;
using namespace shmpi::topo;

namespace {

std::vector<int> dims_of(int nnodes, std::vector<int> dims) {
    dims_create(nnodes, dims, "test");
    return dims;
}

int error_class(auto&& f) {
    try {
        f();
    } catch (const MpiError& e) {
        return e.error_class();
    }
    return MPI_SUCCESS;
}

CartShape shape(std::vector<int> dims, std::vector<bool> periods) { return CartShape{std::move(dims), std::move(periods)}; }

}  // namespace

// ---- Dims_create ----

TEST(DimsCreate, SeedExample61) {
    EXPECT_EQ(dims_of(6, {0, 0}), (std::vector<int>{3, 2}));
    EXPECT_EQ(dims_of(7, {0, 0}), (std::vector<int>{7, 1}));
    EXPECT_EQ(dims_of(6, {0, 3, 0}), (std::vector<int>{2, 3, 1}));
    EXPECT_EQ(error_class([] { dims_of(7, {0, 3, 0}); }), MPI_ERR_DIMS);
}

TEST(DimsCreate, Balanced) {
    EXPECT_EQ(dims_of(16, {0, 0, 0}), (std::vector<int>{4, 2, 2}));
    EXPECT_EQ(dims_of(24, {0, 0, 0}), (std::vector<int>{4, 3, 2}));
    EXPECT_EQ(dims_of(12, {0, 0}), (std::vector<int>{4, 3}));
    EXPECT_EQ(dims_of(64, {0, 0, 0}), (std::vector<int>{4, 4, 4}));
    EXPECT_EQ(dims_of(1, {0, 0}), (std::vector<int>{1, 1}));
    EXPECT_EQ(dims_of(8, {0, 2, 0}), (std::vector<int>{2, 2, 2}));
    EXPECT_EQ(dims_of(6, {2, 3}), (std::vector<int>{2, 3}));
    EXPECT_EQ(dims_of(1, {}), (std::vector<int>{}));
    EXPECT_EQ(error_class([] { dims_of(5, {}); }), MPI_ERR_DIMS) << "no dimensions hold 1 process";
}

TEST(DimsCreate, Errors) {
    EXPECT_EQ(error_class([] { dims_of(6, {0, -1}); }), MPI_ERR_DIMS);
    EXPECT_EQ(error_class([] { dims_of(6, {2, 2}); }), MPI_ERR_DIMS);
    EXPECT_EQ(error_class([] { dims_of(6, {4, 0}); }), MPI_ERR_DIMS);
    EXPECT_EQ(error_class([] { dims_of(0, {0}); }), MPI_ERR_ARG);
}

TEST(DimsCreate, RandomProductsAndOrder) {
    std::mt19937 rng(5);
    for (int iter = 0; iter < 2000; ++iter) {
        const int n = 1 + static_cast<int>(rng() % 5000);
        const int nd = 1 + static_cast<int>(rng() % 5);
        const std::vector<int> d = dims_of(n, std::vector<int>(static_cast<std::size_t>(nd), 0));
        EXPECT_EQ(std::accumulate(d.begin(), d.end(), 1, std::multiplies<>()), n);
        EXPECT_TRUE(std::is_sorted(d.rbegin(), d.rend())) << "n " << n;
        // No other factorisation is more balanced (checked exhaustively for
        // two dimensions).
        if (nd == 2) {
            for (int a = 1; a <= n; ++a) {
                if (n % a == 0 && a >= n / a) {
                    EXPECT_LE(d[0] - d[1], a - n / a);
                }
            }
        }
    }
}

TEST(DimsCreate, LargePrimeAndPowers) {
    EXPECT_EQ(dims_of(2147483647, {0, 0}), (std::vector<int>{2147483647, 1}));
    EXPECT_EQ(dims_of(1 << 20, std::vector<int>(20, 0))[0], 2);
    EXPECT_EQ(dims_of(1 << 30, {0, 0, 0}), (std::vector<int>{1024, 1024, 1024}));
}

// ---- grids ----

TEST(Cart, RoundTripRandomShapes) {
    std::mt19937 rng(11);
    for (int iter = 0; iter < 300; ++iter) {
        const int nd = static_cast<int>(rng() % 5);
        CartShape s;
        for (int i = 0; i < nd; ++i) {
            s.dims.push_back(1 + static_cast<int>(rng() % 5));
            s.periods.push_back(rng() % 2 == 0);
        }
        for (int r = 0; r < s.points(); ++r) {
            const std::vector<int> c = coords_of(s, r);
            for (int i = 0; i < nd; ++i) {
                ASSERT_GE(c[static_cast<std::size_t>(i)], 0);
                ASSERT_LT(c[static_cast<std::size_t>(i)], s.dims[static_cast<std::size_t>(i)]);
            }
            ASSERT_EQ(rank_of(s, c, "test"), r);
        }
    }
}

TEST(Cart, RowMajorAsTheSeedSays) {
    const CartShape s = shape({2, 2}, {false, false});
    EXPECT_EQ(coords_of(s, 1), (std::vector<int>{0, 1}));
    EXPECT_EQ(coords_of(s, 2), (std::vector<int>{1, 0}));
}

TEST(Cart, PeriodicWrapAndNonPeriodicError) {
    const CartShape s = shape({3, 4}, {true, false});
    EXPECT_EQ(rank_of(s, std::vector<int>{-1, 2}, "t"), 2 * 4 + 2);
    EXPECT_EQ(rank_of(s, std::vector<int>{7, 0}, "t"), 1 * 4);
    EXPECT_EQ(error_class([&] { rank_of(s, std::vector<int>{0, 4}, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(error_class([&] { rank_of(s, std::vector<int>{0, -1}, "t"); }), MPI_ERR_ARG);
}

TEST(Cart, Shift) {
    const CartShape s = shape({3, 4}, {true, false});
    // Rank 5 is (1, 1).
    Shift sh = shift(s, 5, 0, 1);
    EXPECT_EQ(sh.source, 1);
    EXPECT_EQ(sh.dest, 9);
    sh = shift(s, 5, 0, 2);
    EXPECT_EQ(sh.source, 9);  // (1-2) mod 3 = 2
    EXPECT_EQ(sh.dest, 1);
    sh = shift(s, 5, 1, 2);
    EXPECT_EQ(sh.source, MPI_PROC_NULL);
    EXPECT_EQ(sh.dest, 7);
    sh = shift(s, 5, 1, -1);
    EXPECT_EQ(sh.source, 6);
    EXPECT_EQ(sh.dest, 4);
    sh = shift(s, 5, 1, 0);
    EXPECT_EQ(sh.source, 5);
    EXPECT_EQ(sh.dest, 5);
    sh = shift(s, 5, 0, INT32_MIN);
    EXPECT_NE(sh.source, MPI_PROC_NULL);
}

TEST(Cart, NeighborOrder) {
    const CartShape s = shape({2, 3}, {false, true});
    // Rank 0 is (0, 0): down dim 0 nothing, up dim 0 is (1,0)=3; dim 1 wraps.
    EXPECT_EQ(cart_neighbors(s, 0), (std::vector<int>{MPI_PROC_NULL, 3, 2, 1}));
}

TEST(Cart, SubEveryMask) {
    const CartShape s = shape({2, 3, 4}, {true, false, true});
    for (int mask = 0; mask < 8; ++mask) {
        const std::vector<bool> remain{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
        std::set<int> colors;
        std::vector<std::set<int>> keys_by_color(24);
        for (int r = 0; r < 24; ++r) {
            const SubGrid g = sub_grid(s, r, remain);
            ASSERT_GE(g.color, 0);
            ASSERT_LT(g.color, 24);
            colors.insert(g.color);
            ASSERT_TRUE(keys_by_color[static_cast<std::size_t>(g.color)].insert(g.key).second);
            ASSERT_EQ(g.key, rank_of(g.shape, [&] {
                          std::vector<int> c;
                          const std::vector<int> full = coords_of(s, r);
                          for (std::size_t i = 0; i < 3; ++i) {
                              if (remain[i]) c.push_back(full[i]);
                          }
                          return c;
                      }(), "t"));
        }
        std::int64_t sub_points = 1;
        for (std::size_t i = 0; i < 3; ++i) {
            if (remain[i]) sub_points *= s.dims[i];
        }
        EXPECT_EQ(static_cast<std::int64_t>(colors.size()) * sub_points, 24) << "mask " << mask;
    }
    // Example 6.4: (true, false, true) gives 3 grids of 2x4.
    const SubGrid g = sub_grid(s, 0, {true, false, true});
    EXPECT_EQ(g.shape.dims, (std::vector<int>{2, 4}));
    EXPECT_EQ(g.shape.periods, (std::vector<bool>{true, true}));
}

TEST(Cart, CheckErrors) {
    const int dims[] = {2, -1};
    const int bigdims[] = {3, 3};
    const int periods[] = {0, 0};
    EXPECT_EQ(error_class([&] { check_cart(-1, dims, periods, 4, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(error_class([&] { check_cart(2, dims, periods, 4, "t"); }), MPI_ERR_DIMS);
    EXPECT_EQ(error_class([&] { check_cart(2, bigdims, periods, 8, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(check_cart(2, bigdims, periods, 9, "t").points(), 9);
    EXPECT_EQ(check_cart(0, nullptr, nullptr, 3, "t").points(), 1);
    try {
        check_cart(2, bigdims, periods, 8, "MPI_Cart_create");
    } catch (const MpiError& e) {
        EXPECT_NE(std::string(e.what()).find("MPI_Cart_create"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("3x3"), std::string::npos);
    }
}

// ---- graphs ----

TEST(Graph, ShuffleExchange) {
    // Example 6.2 with n = 3: exchange, shuffle, unshuffle.
    std::vector<int> index, edges;
    for (int a = 0; a < 8; ++a) {
        edges.push_back(a ^ 1);
        edges.push_back(((a << 1) | (a >> 2)) & 7);
        edges.push_back(((a >> 1) | ((a & 1) << 2)) & 7);
        index.push_back(static_cast<int>(edges.size()));
    }
    const GraphShape g = check_graph(8, index.data(), edges.data(), 8, "t");
    const auto nb1 = g.neighbors(1);
    EXPECT_EQ(std::vector<int>(nb1.begin(), nb1.end()), (std::vector<int>{0, 2, 4}));
    const auto nb6 = g.neighbors(6);
    EXPECT_EQ(std::vector<int>(nb6.begin(), nb6.end()), (std::vector<int>{7, 5, 3}));
    const Topology t(g);
    EXPECT_EQ(t.neighborhood(3).sources, (std::vector<int>{2, 6, 5}));
    EXPECT_FALSE(t.neighborhood(3).directional);
}

TEST(Graph, CheckErrors) {
    const int index[] = {1, 2};
    const int bad_edges[] = {1, 2};
    const int bad_index[] = {2, 1};
    const int edges[] = {1, 0};
    EXPECT_EQ(error_class([&] { check_graph(-1, index, edges, 4, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(error_class([&] { check_graph(2, index, bad_edges, 4, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(error_class([&] { check_graph(2, bad_index, edges, 4, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(error_class([&] { check_graph(5, index, edges, 4, "t"); }), MPI_ERR_ARG);
    EXPECT_EQ(check_graph(0, nullptr, nullptr, 4, "t").nnodes(), 0);
}

TEST(DistGraph, AdjacencyOfEdges) {
    const std::vector<Edge> edges{{0, 1, 5}, {2, 1, 6}, {1, 0, 7}, {1, 1, 8}};
    const DistAdjacency a = adjacency_of(edges, 1, true);
    EXPECT_EQ(a.sources, (std::vector<int>{0, 2, 1}));
    EXPECT_EQ(a.source_weights, (std::vector<int>{5, 6, 8}));
    EXPECT_EQ(a.destinations, (std::vector<int>{0, 1}));
    EXPECT_EQ(a.dest_weights, (std::vector<int>{7, 8}));
    EXPECT_EQ(error_class([] { check_ranks(std::vector<int>{0, 4}, 4, "sources", "t"); }), MPI_ERR_RANK);
}

// ---- reorder ----

namespace {

/// A machine of `packages` x `numa` x `l3` x `cores` cores, one PU each;
/// the launcher placed rank r on PU pu_of[r].
std::vector<place::Place> machine(int packages, int numa, int l3, int cores, const std::vector<int>& pu_of) {
    std::vector<place::Place> p;
    for (const int pu : pu_of) {
        place::Place x;
        x.pu = pu;
        x.core = pu;
        x.l3 = pu / cores;
        x.numa = pu / (cores * l3);
        x.package = pu / (cores * l3 * numa);
        EXPECT_LT(x.package, packages);
        p.push_back(x);
    }
    return p;
}

bool is_permutation_of_n(const std::vector<int>& m) {
    std::vector<int> s = m;
    std::sort(s.begin(), s.end());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != static_cast<int>(i)) return false;
    }
    return true;
}

}  // namespace

TEST(Reorder, UnknownPlacesGiveIdentity) {
    const CartShape s = shape({4, 4}, {true, true});
    std::vector<place::Place> p(16);
    const std::vector<int> m = map_cart(s, p);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(m[static_cast<std::size_t>(i)], i);
}

TEST(Reorder, AlreadyGoodPlacementStays) {
    // 4 NUMA nodes of 4 cores, ranks bound in order: a 16x1 ring is
    // already as local as it gets.
    std::vector<int> pu(16);
    std::iota(pu.begin(), pu.end(), 0);
    const auto p = machine(1, 4, 1, 4, pu);
    const CartShape s = shape({16}, {false});
    const std::vector<int> m = map_cart(s, p);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(m[static_cast<std::size_t>(i)], i);
}

TEST(Reorder, RoundRobinPlacementGetsCompactBlocks) {
    // 4 NUMA nodes x 4 cores; the rank at (i, j) of a 4x4 periodic grid in
    // rank order runs on NUMA node (i + j) % 4, so every neighbour is on
    // another node.  Reordered, each node holds a compact block.
    std::vector<int> pu(16);
    for (int r = 0; r < 16; ++r) pu[static_cast<std::size_t>(r)] = ((r / 4 + r % 4) % 4) * 4 + r / 4;
    const auto p = machine(1, 4, 1, 4, pu);
    const CartShape s = shape({4, 4}, {true, true});
    std::vector<int> id(16);
    std::iota(id.begin(), id.end(), 0);
    const std::vector<int> m = map_cart(s, p);
    ASSERT_TRUE(is_permutation_of_n(m));
    const Locality before = cart_locality(s, id, p);
    const Locality after = cart_locality(s, m, p);
    EXPECT_EQ(before.messages, 64);
    EXPECT_EQ(after.messages, 64);
    EXPECT_EQ(before.at_distance[0] + before.at_distance[1], 0);
    EXPECT_LT(after.cost, before.cost);
    // The best a node of 4 can do on a 4x4 torus (a 2x2 block, or a whole
    // row or column, which wraps): 2 of each rank's 4 neighbours at home.
    EXPECT_EQ(after.at_distance[1] + after.at_distance[0], 32);
}

TEST(Reorder, SpreadOverPairsOfCores) {
    // 8 NUMA nodes of 2 cores, ranks dealt round-robin over the nodes (rank
    // r on node r % 8, as mpirun --map-by numa:spread places them): in rank
    // order no neighbour of a 4x4 torus shares a node; reordered, each node
    // holds two neighbours (16 of the 64 messages stay on a node).
    std::vector<int> pu(16);
    for (int r = 0; r < 16; ++r) pu[static_cast<std::size_t>(r)] = (r % 8) * 2 + r / 8;
    const auto p = machine(1, 8, 1, 2, pu);
    const CartShape s = shape({4, 4}, {true, true});
    std::vector<int> id(16);
    std::iota(id.begin(), id.end(), 0);
    const Locality before = cart_locality(s, id, p);
    const Locality after = cart_locality(s, map_cart(s, p), p);
    EXPECT_EQ(before.at_distance[0] + before.at_distance[1], 0);
    EXPECT_EQ(after.at_distance[0] + after.at_distance[1], 16);
}

TEST(Reorder, RandomPlacementsNeverWorse) {
    std::mt19937 rng(3);
    for (int iter = 0; iter < 200; ++iter) {
        std::vector<int> dims(1 + rng() % 3, 0);
        const int n = 2 + static_cast<int>(rng() % 40);
        dims_create(n, dims, "t");
        CartShape s;
        s.dims = dims;
        for (std::size_t i = 0; i < dims.size(); ++i) s.periods.push_back(rng() % 2 == 0);
        std::vector<int> pu(static_cast<std::size_t>(n));
        std::iota(pu.begin(), pu.end(), 0);
        std::shuffle(pu.begin(), pu.end(), rng);
        const auto p = machine(4, 2, 2, 3, pu);
        const std::vector<int> m = map_cart(s, p);
        ASSERT_TRUE(is_permutation_of_n(m));
        std::vector<int> id(static_cast<std::size_t>(n));
        std::iota(id.begin(), id.end(), 0);
        EXPECT_LE(cart_locality(s, m, p).cost, cart_locality(s, id, p).cost);
    }
}

TEST(Reorder, GraphRingOnShuffledPlaces) {
    // A ring of 12 processes placed at random over 3 NUMA nodes of 4 cores.
    std::vector<int> index, edges;
    for (int k = 0; k < 12; ++k) {
        edges.push_back((k + 11) % 12);
        edges.push_back((k + 1) % 12);
        index.push_back(static_cast<int>(edges.size()));
    }
    const GraphShape g = check_graph(12, index.data(), edges.data(), 12, "t");
    std::vector<int> pu(12);
    std::iota(pu.begin(), pu.end(), 0);
    std::shuffle(pu.begin(), pu.end(), std::mt19937(9));
    const auto p = machine(1, 3, 1, 4, pu);
    const std::vector<int> m = map_graph(g, p);
    ASSERT_TRUE(is_permutation_of_n(m));
    std::vector<int> id(12);
    std::iota(id.begin(), id.end(), 0);
    const Locality after = graph_locality(g, m, p);
    EXPECT_LT(after.cost, graph_locality(g, id, p).cost);
    // A ring over 3 nodes needs at least 3 crossings, each in both directions.
    EXPECT_LE(after.at_distance[2] + after.at_distance[3] + after.at_distance[4], 6 * 2);
}
