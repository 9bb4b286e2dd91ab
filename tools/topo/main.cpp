// shmpi-topo: design a placement experiment before running it.
//
// Prints, for this machine or any topology described by SHMPI_TOPOLOGY or
// --topology (an hwloc synthetic description or an XML file):
//   1. the topology: packages, NUMA nodes, L3 caches and cores, nested as
//      hwloc nests them, with the ranks that may run on each core under the
//      chosen policy;
//   2. the rank map, exactly as `mpirun --report-bindings` prints it for
//      the same options (src/place/report.hpp);
//   3. the shared-memory collectives' tree for a communicator size
//      (src/coll/tree_shm.hpp), each member with its place, and how many
//      tree edges cross a NUMA node or a package.  By default over members
//      sorted by place, as MPI_COMM_WORLD's broadcast and barrier trees are
//      built; --tree-order rank shows the rank-order tree that reductions
//      use (their bracketing follows ranks).
//
//   shmpi-topo --topology "pack:2 numa:2 l3:2 core:4 pu:1" -n 32 --map-by numa
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

#include "coll/shm_team.hpp"
#include "coll/tree_shm.hpp"
#include "place/map.hpp"
#include "place/report.hpp"
#include "place/topology.hpp"
#include "shm/segment.hpp"

namespace {

using namespace shmpi;

/// "[core 3, NUMA node 0, package 0]" for a member that is a mapped rank.
std::string where(const std::vector<place::Place>& places, int member) {
    if (member >= static_cast<int>(places.size())) return "";
    const place::Place& p = places[static_cast<std::size_t>(member)];
    return p.unknown() ? "" : " [" + place::describe(p) + "]";
}

/// Which levels an edge between two members crosses: [0] package, [1]
/// NUMA node, [2] L3 cache, each only where both places know it.  Each is
/// judged on its own: an L3 may hold several NUMA nodes, and a machine
/// may have one NUMA node for several packages.
std::array<bool, 3> crossings(const std::vector<place::Place>& places, int a, int b) {
    const auto n = static_cast<int>(places.size());
    if (a >= n || b >= n) return {false, false, false};
    const place::Place& x = places[static_cast<std::size_t>(a)];
    const place::Place& y = places[static_cast<std::size_t>(b)];
    const auto differ = [](int u, int v) { return u >= 0 && v >= 0 && u != v; };
    return {differ(x.package, y.package), differ(x.numa, y.numa), differ(x.l3, y.l3)};
}

/// Counts of edges: [0] crossing packages, [1] crossing NUMA nodes, [2]
/// crossing L3 caches, [3] with both ends placed.  Tree positions are
/// printed as the members `order` puts there.
void print_subtree(const coll::tree::BandTree& t, const std::vector<int>& order,
                   const std::vector<place::Place>& places, int pos, int depth, int counts[4]) {
    static constexpr const char* kNames[3] = {"package", "NUMA node", "L3"};
    const int m = order[static_cast<std::size_t>(pos)];
    for (int cpos : t.children(pos)) {
        const int c = order[static_cast<std::size_t>(cpos)];
        const std::array<bool, 3> cross = crossings(places, m, c);
        if (c < static_cast<int>(places.size()) && m < static_cast<int>(places.size())) ++counts[3];
        // The line names the widest level crossed; the counts take each.
        const char* widest = nullptr;
        for (std::size_t k = 0; k < cross.size(); ++k) {
            if (!cross[k]) continue;
            ++counts[k];
            if (widest == nullptr) widest = kNames[k];
        }
        fmt::print("{:{}}+- {}{}{}\n", "", 2 * depth, c, where(places, c),
                   widest == nullptr ? "" : std::string("  <- crosses ") + widest);
        print_subtree(t, order, places, cpos, depth + 1, counts);
    }
}

/// The tree over `members` positions; with `locality`, position i holds
/// member place::locality_order(places)[i], else member i.
void print_tree(int members, int band, const std::vector<place::Place>& places, bool locality) {
    const coll::tree::BandTree t(members, band);
    std::vector<int> order(static_cast<std::size_t>(members));
    for (int i = 0; i < members; ++i) order[static_cast<std::size_t>(i)] = i;
    if (locality && static_cast<int>(places.size()) == members) order = place::locality_order(places);
    fmt::print("Collective tree for {} members (band {}, {} levels; members {}):\n", members,
               band == coll::tree::kFlat ? std::string("flat") : std::to_string(band), t.height(),
               locality && static_cast<int>(places.size()) == members
                   ? "in locality order (place::locality_order)"
                   : "in rank order, root 0");
    fmt::print("{}{}\n", order[0], where(places, order[0]));
    int counts[4] = {0, 0, 0, 0};
    print_subtree(t, order, places, 0, 0, counts);
    if (!places.empty()) {
        const std::string of = counts[3] == members - 1
                                   ? fmt::format("{} edges", counts[3])
                                   : fmt::format("{} of {} edges join mapped ranks", counts[3], members - 1);
        fmt::print("{}: {} cross packages, {} cross NUMA nodes, {} cross L3 caches\n", of,
                   counts[0], counts[1], counts[2]);
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"shmpi-topo: the topology, the rank map for a policy, and the collective tree"};
    std::string topology_spec, bind, map_by = "core", cpu_list;
    std::uint32_t nranks = 0;
    int tree_members = 0, band = 0;
    bool oversubscribe = false;
    std::string tree_order = "locality";
    app.add_option("--topology", topology_spec,
                   "hwloc synthetic description or XML file (default: SHMPI_TOPOLOGY, else this "
                   "machine)")
        ->type_name("SPEC");
    CLI::Option* np = app.add_option("-n,--np", nranks, "Ranks to map (default: print the topology only)")
                          ->type_name("N")
                          ->check(CLI::Range(1u, 1u << 20));
    // The placement options shape the rank map, which only -n asks for:
    // given alone they are a mistake, not something to ignore.
    app.add_option("--map-by", map_by, "As mpirun: core, l3cache, numa or package, with :compact or :spread")
        ->type_name("LEVEL[:MODE]")
        ->needs(np);
    CLI::Option* bind_opt = app.add_option("--bind-to", bind, "As mpirun: none, hwthread, core, l3cache, numa, package")
                                ->type_name("WHAT")
                                ->needs(np);
    CLI::Option* cpu_opt = app.add_option("--cpu-list", cpu_list, "As mpirun: use only these CPUs (0,2,4-7)")
                               ->type_name("LIST")
                               ->needs(np);
    app.add_flag("--oversubscribe", oversubscribe, "As mpirun")->needs(np);
    app.add_option("--tree", tree_members,
                   "Print the collective tree for this many members (default: -n)")
        ->type_name("N")
        ->check(CLI::Range(1, 1 << 16));
    app.add_option("--band", band,
                   "Canonical levels per tree level (default: as the collectives choose for "
                   "small payloads)")
        ->type_name("B")
        ->check(CLI::Range(1, 1 << 20));
    CLI::Option* order_opt = app.add_option("--tree-order", tree_order,
                   "locality (default): members sorted by place (package, NUMA node, L3, core), "
                   "as the broadcast and barrier trees are built (needs -n equal to the tree size); "
                   "rank: tree positions are ranks, as in the reductions")
        ->type_name("rank|locality")
        ->check(CLI::IsMember({"rank", "locality"}));
    app.footer("Examples:\n"
               "  shmpi-topo\n"
               "  shmpi-topo --topology \"pack:2 numa:2 l3:2 core:4 pu:1\" -n 32 --map-by numa\n"
               "See docs/PLACEMENT.md.");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every mistake exits 2, as mpirun's.
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (order_opt->count() > 0 && tree_order == "locality" && tree_members > 0 &&
        tree_members != static_cast<int>(nranks)) {
        // Without a rank map of the tree's size there are no places to sort
        // by: asked for, that is a mistake, not a reason for rank order.
        fmt::print(stderr, "shmpi-topo: --tree-order locality needs -n equal to the tree size (-n {}, --tree {})\n",
                   nranks, tree_members);
        return 2;
    }

    try {
        // The settings as the library reads them (a bad value throws its
        // message), before anything is printed.
        const coll::ShmTuning tuning = coll::tuning_from_environment();
        const place::Topology topo = topology_spec.empty()
                                         ? place::Topology::from_environment()
                                         : place::Topology::from_spec(topology_spec, "--topology");
        place::MapRequest req;
        req.nranks = nranks;
        req.oversubscribe = oversubscribe;
        // Given or not, not by a value: mpirun has no word for its default.
        if (bind_opt->count() > 0) {
            const auto b = place::parse_bind(bind);
            if (!b) {
                fmt::print(stderr, "shmpi-topo: --bind-to '{}': expected {}\n", bind, place::kBindWords);
                return 2;
            }
            req.bind = *b;
        }
        const auto m = place::parse_map_by(map_by);
        if (!m) {
            fmt::print(stderr, "shmpi-topo: --map-by '{}': expected {}\n", map_by, place::kMapWords);
            return 2;
        }
        req.map_by = *m;
        if (cpu_opt->count() > 0) {
            std::string why;
            const auto c = place::parse_cpu_list(cpu_list, &why);
            if (!c) {
                fmt::print(stderr, "shmpi-topo: --cpu-list '{}': {}\n", cpu_list, why);
                return 2;
            }
            req.cpu_list = *c;
        }

        // 1. and 2.
        std::optional<place::RankMap> map;
        if (nranks > 0) map = place::compute_map(topo.pus(), req);
        fmt::print("Topology: {} ({})\n", topo.source(), topo.summary());
        fmt::print("{}", place::format_layout(topo, map ? &*map : nullptr));
        std::vector<place::Place> places;
        if (map) {
            fmt::print("\nRank map (as mpirun --report-bindings prints it):\n{}",
                       place::format_report(topo, req, *map));
            places = map->places();
        }
        // 3.
        if (tree_members == 0) tree_members = static_cast<int>(nranks);
        if (tree_members > 0) {
            fmt::print("\n");
            print_tree(tree_members, band > 0 ? band : coll::small_band(tree_members, tuning), places,
                       tree_order == "locality");
        }
    } catch (const place::PlaceError& e) {
        fmt::print(stderr, "shmpi-topo: {}\n", e.what());
        return 2;
    } catch (const shm::SegmentError& e) {
        fmt::print(stderr, "shmpi-topo: the collectives' settings are wrong; MPI_Init would say:\n{}\n",
                   e.what());
        return 2;
    }
    return 0;
}
