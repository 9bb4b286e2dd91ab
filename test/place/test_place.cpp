// Placement without launching anything: the words of a request, topologies
// from synthetic descriptions and XML files, the rank map for every policy,
// the report's exact text, places in rank slots, and memory binding.
#include <hwloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "place/map.hpp"
#include "place/membind.hpp"
#include "place/place.hpp"
#include "place/policy.hpp"
#include "place/report.hpp"
#include "place/topology.hpp"
#include "shm/segment.hpp"

namespace {

using namespace shmpi::place;

/// The machine of issue 6's write-up: 2 packages, 4 NUMA nodes, 8 L3
/// caches, 32 cores.
constexpr const char* kBig = "pack:2 numa:2 l3:2 core:4 pu:1";

Topology synthetic(const char* spec) { return Topology::from_spec(spec, "test"); }

RankMap map_of(const std::vector<Pu>& pus, std::uint32_t n, Bind bind, MapBy by = {},
               std::vector<int> cpu_list = {}, bool oversubscribe = false) {
    MapRequest req;
    req.nranks = n;
    req.bind = bind;
    req.map_by = by;
    req.cpu_list = std::move(cpu_list);
    req.oversubscribe = oversubscribe;
    return compute_map(pus, req);
}

RankMap map_of(const Topology& t, std::uint32_t n, Bind bind, MapBy by = {},
               std::vector<int> cpu_list = {}, bool oversubscribe = false) {
    return map_of(t.pus(), n, bind, by, std::move(cpu_list), oversubscribe);
}

std::vector<int> cores_of(const RankMap& m) {
    std::vector<int> v;
    for (const RankPlacement& r : m.ranks) v.push_back(r.place.core);
    return v;
}

// ---- the words of a request ----

TEST(Policy, BindWords) {
    EXPECT_EQ(parse_bind("none"), Bind::kNone);
    EXPECT_EQ(parse_bind("hwthread"), Bind::kHwthread);
    EXPECT_EQ(parse_bind("core"), Bind::kCore);
    EXPECT_EQ(parse_bind("l3cache"), Bind::kL3);
    EXPECT_EQ(parse_bind("numa"), Bind::kNuma);
    EXPECT_EQ(parse_bind("package"), Bind::kPackage);
    EXPECT_EQ(parse_bind("socket"), Bind::kPackage) << "Open MPI's and MPICH's word";
    EXPECT_FALSE(parse_bind("board"));
    EXPECT_FALSE(parse_bind("auto"));
    EXPECT_FALSE(parse_bind(""));
}

TEST(Policy, MapByWords) {
    EXPECT_EQ(parse_map_by("core"), (MapBy{Level::kCore, false}));
    EXPECT_EQ(parse_map_by("numa"), (MapBy{Level::kNuma, true}));
    EXPECT_EQ(parse_map_by("numa:compact"), (MapBy{Level::kNuma, false}));
    EXPECT_EQ(parse_map_by("l3cache:spread"), (MapBy{Level::kL3, true}));
    EXPECT_EQ(parse_map_by("package"), (MapBy{Level::kPackage, true}));
    EXPECT_FALSE(parse_map_by("numa:"));
    EXPECT_FALSE(parse_map_by("numa:wide"));
    EXPECT_EQ(parse_map_by("socket"), (MapBy{Level::kPackage, true}));
    EXPECT_EQ(parse_map_by("socket:compact"), (MapBy{Level::kPackage, false}));
    EXPECT_FALSE(parse_map_by("board"));
    EXPECT_EQ(map_by_name(MapBy{Level::kNuma, true}), "numa:spread");
}

TEST(Policy, CpuLists) {
    EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
    EXPECT_EQ(parse_cpu_list("3,1,2-4,1"), (std::vector<int>{1, 2, 3, 4}));
    for (const char* bad : {"", ",", "1,", "a", "1-", "-1", "3-1", "1.5", "1,,2"}) {
        EXPECT_FALSE(parse_cpu_list(bad)) << bad;
    }
    EXPECT_EQ(format_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(format_list({5}), "5");
}

TEST(Policy, CpuListProblemsNameTheValueAndTheLimit) {
    std::string why;
    EXPECT_FALSE(parse_cpu_list("0-70000", &why));
    EXPECT_EQ(why, "70001 CPUs, but a CPU list may name at most 65536");
    // The limit is on the whole list, not on each range.
    EXPECT_FALSE(parse_cpu_list("0-40000,50000-80000", &why));
    EXPECT_EQ(why, "70002 CPUs, but a CPU list may name at most 65536");
    EXPECT_EQ(parse_cpu_list("0-65535")->size(), 65536u);
    EXPECT_EQ(parse_cpu_list("1048577"), (std::vector<int>{1048577}));  // not ours, but a CPU number
    EXPECT_FALSE(parse_cpu_list("3,99999999999", &why));
    EXPECT_EQ(why, "99999999999 is too large for a CPU number");
    EXPECT_FALSE(parse_cpu_list("1-", &why));
    EXPECT_EQ(why, "expected CPU numbers and ranges such as 0,2,4-7");
    EXPECT_FALSE(parse_cpu_list("", &why));
    EXPECT_EQ(why, "the value is empty");
}

// ---- topologies ----

TEST(Topology, Synthetic) {
    const Topology t = synthetic(kBig);
    EXPECT_FALSE(t.is_this_system());
    EXPECT_EQ(t.summary(), "2 packages, 4 NUMA nodes, 8 L3 caches, 32 cores, 32 PUs");
    ASSERT_EQ(t.pus().size(), 32u);
    EXPECT_EQ(t.pus()[13], (Pu{13, 13, 3, 1, 0}));
    EXPECT_EQ(t.pus()[31], (Pu{31, 31, 7, 3, 1}));
    EXPECT_EQ(t.source(), "synthetic topology 'pack:2 numa:2 l3:2 core:4 pu:1'");
}

TEST(Topology, MissingLevels) {
    const Topology t = synthetic("core:3 pu:2");
    EXPECT_EQ(t.count(Level::kPackage), 0);
    EXPECT_EQ(t.count(Level::kL3), 0);
    EXPECT_EQ(t.count(Level::kCore), 3);
    EXPECT_EQ(t.pus()[3], (Pu{3, 1, -1, 0, -1}));
}

TEST(Topology, NumaNodesOverTheSamePus) {
    // Two kinds of memory per package (DDR and HBM, or CXL memory): two
    // NUMA nodes over the same cores.  The first is each PU's place.
    const Topology t = synthetic("pack:2 [numa] [numa] core:2 pu:1");
    EXPECT_EQ(t.summary(), "2 packages, 4 NUMA nodes, 4 cores, 4 PUs");
    EXPECT_EQ(t.count(Level::kNuma), 2);
    EXPECT_EQ(t.pus()[1], (Pu{1, 1, -1, 0, 0}));
    EXPECT_EQ(t.pus()[2], (Pu{2, 2, -1, 2, 1}));
    EXPECT_EQ(t.numa_nodes(0), (std::vector<int>{0, 1}));
    EXPECT_EQ(t.numa_nodes(2), (std::vector<int>{2, 3}));
    EXPECT_EQ(t.numa_nodes(7), (std::vector<int>{7}));  // not a node it knows
    // One node over each PU, as before.
    EXPECT_EQ(synthetic(kBig).numa_nodes(1), (std::vector<int>{1}));
    // --cpu-list leaves one package: its two nodes.
    MapRequest req;
    req.cpu_list = {2, 3};
    const RankMap m = compute_map(t.pus(), req);
    ASSERT_EQ(m.ranks.size(), 1u);
    EXPECT_EQ(format_rank(0, m.ranks[0], true, false, &t), "rank 0 mapped to core 2 (PU 2), NUMA nodes 2+3, package 1");
    EXPECT_EQ(format_rank(0, m.ranks[0], true, false), "rank 0 mapped to core 2 (PU 2), NUMA node 2, package 1");
    RankPlacement anywhere;
    anywhere.pus = t.pus();
    EXPECT_EQ(format_where(anywhere, false, false, &t),
              "not bound: cores 0-3 (PUs 0-3), NUMA nodes 0+1,2+3, packages 0-1");
    EXPECT_EQ(format_layout(t, nullptr),
              "package 0\n"
              "  NUMA nodes 0+1\n"
              "    core 0 (PU 0)\n"
              "    core 1 (PU 1)\n"
              "package 1\n"
              "  NUMA nodes 2+3\n"
              "    core 2 (PU 2)\n"
              "    core 3 (PU 3)\n");
}

TEST(Topology, BadDescriptionsNameTheVariableAndValue) {
    try {
        Topology::from_spec("pack:2 banana:3", "SHMPI_TOPOLOGY");
        FAIL() << "no error";
    } catch (const PlaceError& e) {
        EXPECT_NE(std::string(e.what()).find("SHMPI_TOPOLOGY='pack:2 banana:3'"), std::string::npos)
            << e.what();
    }
    try {
        Topology::from_spec("/nonexistent/topo.xml", "SHMPI_TOPOLOGY");
        FAIL() << "no error";
    } catch (const PlaceError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot read the XML file"), std::string::npos)
            << e.what();
    }
}

TEST(Topology, SyntheticPusAreTheProductOfTheArities) {
    EXPECT_EQ(synthetic_pus(kBig), 32u);
    EXPECT_EQ(synthetic_pus("pack:2  numa:2(memory=1GB) [numa] core:4 pu:2(indexes=0,1)"), 32u);
    EXPECT_EQ(synthetic_pus("2 3"), 6u);
    EXPECT_EQ(synthetic_pus("core:64 pu:64"), 4096u);
    EXPECT_EQ(synthetic_pus("core:10000 pu:10"), kMaxSyntheticPus + 1);
    EXPECT_EQ(synthetic_pus("core:99999999999999999999999 pu:1"), kMaxSyntheticPus + 1);
    EXPECT_EQ(synthetic_pus("banana"), 0u);
}

// A larger one is refused before hwloc spends minutes building it.
TEST(Topology, SyntheticTopologyTooLarge) {
    for (const char* spec : {"core:8192 pu:1", "core:10000 pu:10", "pack:2 core:2049 pu:1"}) {
        try {
            Topology::from_spec(spec, "SHMPI_TOPOLOGY");
            FAIL() << spec << ": no error";
        } catch (const PlaceError& e) {
            EXPECT_EQ(std::string(e.what()), std::string("SHMPI_TOPOLOGY='") + spec +
                                                 "': describes more than 4096 PUs, the most a synthetic "
                                                 "topology may have");
        }
    }
}

TEST(Topology, XmlFileGivesTheSameTable) {
    const Topology t = synthetic(kBig);
    std::string tmpl = (std::filesystem::temp_directory_path() / "shmpi-place-XXXXXX.xml").string();
    char* path = tmpl.data();
    const int fd = mkstemps(path, 4);
    ASSERT_GE(fd, 0);
    close(fd);
    ASSERT_EQ(hwloc_topology_export_xml(t.handle(), path, 0), 0);
    const Topology x = Topology::from_spec(path, "test");
    std::remove(path);
    EXPECT_EQ(x.pus(), t.pus());
    EXPECT_FALSE(x.is_this_system());
    EXPECT_EQ(x.source(), std::string("XML file '") + path + "'");
}

TEST(Topology, ThisMachine) {
    const Topology t = Topology::this_machine();
    EXPECT_TRUE(t.is_this_system());
    ASSERT_FALSE(t.pus().empty());
    // Every PU is one we may run on.
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    EXPECT_EQ(static_cast<int>(t.pus().size()), CPU_COUNT(&set));
    for (const Pu& p : t.pus()) EXPECT_TRUE(CPU_ISSET(p.os, &set)) << p.os;
}

/// In a fresh process (hwloc loads its plugins once a process): sets `var`
/// to `value` (unless `var` is null), loads this machine's topology, and
/// returns a bit mask: 1 when one of hwloc's I/O or libxml2 plugins is
/// mapped, 2 when HWLOC_PLUGINS_BLACKLIST is set afterwards, 4 when it is
/// set to anything but `value`; 64 when the child failed.
int plugins_after_loading(const char* var, const char* value) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (var != nullptr) setenv(var, value, 1);
        const Topology t = Topology::this_machine();
        int bits = 0;
        if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
            char line[4096];
            while (std::fgets(line, sizeof line, maps) != nullptr) {
                for (const char* plugin : {"hwloc_pci", "hwloc_opencl", "hwloc_gl", "hwloc_xml_libxml"}) {
                    if (std::strstr(line, plugin) != nullptr) bits |= 1;
                }
            }
            std::fclose(maps);
        }
        const char* after = std::getenv("HWLOC_PLUGINS_BLACKLIST");
        if (after != nullptr) bits |= 2;
        if (after != nullptr && (var == nullptr || std::strcmp(after, value) != 0)) bits |= 4;
        _exit(t.pus().empty() ? 64 : bits);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 64;
    return WEXITSTATUS(status);
}

// hwloc's plugins for I/O devices (and libxml2, when no XML file is read)
// stay unloaded: placement does not use them, and loading them (with
// OpenCL, X11, ICU...) cost every mpirun's start 7-20 ms.  The variable
// that keeps them out is gone again afterwards (the ranks get mpirun's
// environment), and one the user set is theirs.
TEST(Topology, ThisMachineLoadsNoIoPlugins) {
    EXPECT_EQ(plugins_after_loading(nullptr, nullptr), 0) << "1: a plugin was loaded; 2, 4: the variable leaked";
    // (Then hwloc loads the plugins the user did not name: bit 1 is theirs.)
    EXPECT_EQ(plugins_after_loading("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl") & 6, 2) << "the user's blacklist changed";
    // The check sees plugins where the machine has them (Debian's
    // libhwloc-plugins): with the user's own plugin path they load.
    const char* dir = "/usr/lib/x86_64-linux-gnu/hwloc";
    if (std::filesystem::exists(std::filesystem::path(dir) / "hwloc_pci.so")) {
        EXPECT_EQ(plugins_after_loading("HWLOC_PLUGINS_PATH", dir), 1) << "no plugin seen where one loads";
    }
}

// ---- the map ----

TEST(Map, CompactByCoreFillsInOrder) {
    const Topology t = synthetic(kBig);
    const RankMap m = map_of(t, 8, Bind::kCore);
    EXPECT_EQ(cores_of(m), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(m.ranks[5].cpus, (std::vector<int>{5}));
    EXPECT_EQ(m.ranks[5].place, (Place{5, 5, 1, 0, 0}));
    EXPECT_TRUE(m.notes.empty());
}

TEST(Map, SpreadDealsRoundRobin) {
    const Topology t = synthetic(kBig);
    EXPECT_EQ(cores_of(map_of(t, 8, Bind::kCore, {Level::kNuma, true})),
              (std::vector<int>{0, 8, 16, 24, 1, 9, 17, 25}));
    EXPECT_EQ(cores_of(map_of(t, 4, Bind::kCore, {Level::kPackage, true})),
              (std::vector<int>{0, 16, 1, 17}));
    EXPECT_EQ(cores_of(map_of(t, 9, Bind::kCore, {Level::kL3, true})),
              (std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28, 1}));
    // Compact at any level is the core order.
    EXPECT_EQ(cores_of(map_of(t, 6, Bind::kCore, {Level::kNuma, false})),
              (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Map, SpreadOverUnequalObjects) {
    // --cpu-list leaves NUMA node 0 with one core and node 1 with three.
    const Topology t = synthetic("numa:2 core:4 pu:1");
    EXPECT_EQ(cores_of(map_of(t, 4, Bind::kCore, {Level::kNuma, true}, {3, 4, 5, 6})),
              (std::vector<int>{3, 4, 5, 6}));
    EXPECT_EQ(cores_of(map_of(t, 4, Bind::kCore, {Level::kNuma, true}, {2, 3, 4, 5})),
              (std::vector<int>{2, 4, 3, 5}));
}

TEST(Map, WiderBindings) {
    const Topology t = synthetic(kBig);
    const RankMap l3 = map_of(t, 2, Bind::kL3, {Level::kNuma, true});
    EXPECT_EQ(l3.ranks[1].cpus, (std::vector<int>{8, 9, 10, 11}));
    EXPECT_EQ(l3.ranks[1].place, (Place{-1, -1, 2, 1, 0}));
    const RankMap numa = map_of(t, 3, Bind::kNuma, {Level::kNuma, true});
    EXPECT_EQ(numa.ranks[2].cpus.size(), 8u);
    EXPECT_EQ(numa.ranks[2].cpus.front(), 16);
    EXPECT_EQ(numa.ranks[2].place, (Place{-1, -1, -1, 2, 1}));
    const RankMap pkg = map_of(t, 2, Bind::kPackage);
    EXPECT_EQ(pkg.ranks[0].cpus.size(), 16u);  // compact: both on package 0
    EXPECT_EQ(pkg.ranks[1].place, (Place{-1, -1, -1, -1, 0}));
}

TEST(Map, HardwareThreads) {
    const Topology t = synthetic("pack:1 core:2 pu:2");
    const RankMap core = map_of(t, 2, Bind::kCore);
    EXPECT_EQ(core.ranks[1].cpus, (std::vector<int>{2, 3}));
    EXPECT_EQ(core.ranks[1].place, (Place{-1, 1, -1, 0, 0}));
    const RankMap hw = map_of(t, 4, Bind::kHwthread);
    EXPECT_EQ(hw.ranks[3].cpus, (std::vector<int>{3}));
    EXPECT_EQ(hw.ranks[3].place, (Place{3, 1, -1, 0, 0}));
    EXPECT_EQ(hw.ranks[1].cpus, (std::vector<int>{1}));  // compact: core 0's second PU
    // core:spread deals the PUs over the cores: each core's first, then
    // each core's second.
    const RankMap spread = map_of(t, 4, Bind::kHwthread, {Level::kCore, true});
    std::vector<int> order;
    for (const RankPlacement& r : spread.ranks) order.push_back(r.cpus.at(0));
    EXPECT_EQ(order, (std::vector<int>{0, 2, 1, 3}));
    // With a slot per core, core:spread is core:compact.
    EXPECT_EQ(map_of(t, 2, Bind::kCore, {Level::kCore, true}).ranks[1].cpus, (std::vector<int>{2, 3}));
    // Four ranks do not fit two cores: the default leaves them unbound.
    const RankMap dflt = map_of(t, 4, Bind::kAuto);
    EXPECT_EQ(dflt.bind, Bind::kNone);
    EXPECT_TRUE(dflt.ranks[0].cpus.empty());
}

TEST(Map, DefaultBindsToCoresWhenRanksFit) {
    const Topology t = synthetic(kBig);
    const RankMap fit = map_of(t, 32, Bind::kAuto);
    EXPECT_EQ(fit.bind, Bind::kCore);
    EXPECT_FALSE(fit.oversubscribed);
    EXPECT_EQ(fit.ranks[31].place.core, 31);
    const RankMap over = map_of(t, 33, Bind::kAuto);
    EXPECT_EQ(over.bind, Bind::kNone);
    EXPECT_TRUE(over.oversubscribed);
    // Unbound ranks share what every usable PU shares: here nothing.
    EXPECT_TRUE(over.ranks[0].place.unknown());
    // On one NUMA node they still share it.
    const RankMap one = map_of(synthetic("pack:1 core:2 pu:1"), 3, Bind::kAuto);
    EXPECT_EQ(one.ranks[2].place, (Place{-1, -1, -1, 0, 0}));
}

TEST(Map, ImpossibleRequestsAreErrors) {
    const Topology t = synthetic("pack:1 core:2 pu:2");
    try {
        map_of(t, 3, Bind::kCore);
        FAIL() << "no error";
    } catch (const PlaceError& e) {
        EXPECT_STREQ(e.what(),
                     "--bind-to core: 3 ranks but only 2 cores (PUs 0-3) to bind "
                     "them to; add --oversubscribe to let ranks share cores, or use --bind-to none");
    }
    EXPECT_THROW(map_of(t, 5, Bind::kHwthread), PlaceError);
    try {
        map_of(t, 1, Bind::kCore, {}, {1, 7});
        FAIL() << "no error";
    } catch (const PlaceError& e) {
        EXPECT_STREQ(e.what(), "--cpu-list '1,7': CPU 7 is not one of the PUs the job may use (0-3)");
    }
}

TEST(Map, OversubscribeWrapsAround) {
    const Topology t = synthetic("pack:1 core:2 pu:1");
    const RankMap m = map_of(t, 5, Bind::kCore, {}, {}, true);
    EXPECT_EQ(cores_of(m), (std::vector<int>{0, 1, 0, 1, 0}));
    EXPECT_TRUE(m.oversubscribed);
    // Wider bindings may hold more ranks than cores without asking.
    EXPECT_NO_THROW(map_of(t, 5, Bind::kNuma));
}

TEST(Map, CpuListRestrictsEverything) {
    const Topology t = synthetic(kBig);
    const RankMap m = map_of(t, 3, Bind::kNuma, {}, {8, 9, 10, 20});
    EXPECT_EQ(m.ranks[0].cpus, (std::vector<int>{8, 9, 10}));
    EXPECT_EQ(m.ranks[2].cpus, (std::vector<int>{8, 9, 10}));
    EXPECT_EQ(m.slots, 4u);
    const RankMap none = map_of(t, 2, Bind::kNone, {}, {8, 9});
    EXPECT_TRUE(none.ranks[1].cpus.empty());
    EXPECT_EQ(none.ranks[1].place, (Place{-1, -1, 2, 1, 0}));
}

TEST(Map, MissingLevelsFallBackWithANote) {
    const Topology t = synthetic("core:4 pu:1");
    const RankMap m = map_of(t, 2, Bind::kL3, {Level::kPackage, true});
    ASSERT_EQ(m.notes.size(), 2u);
    EXPECT_EQ(m.notes[0], "--map-by package:spread: the topology has no packages; mapping by core instead");
    EXPECT_EQ(m.notes[1], "--bind-to l3cache: the topology has no L3 caches; binding each rank to every usable PU");
    EXPECT_EQ(m.ranks[1].cpus, (std::vector<int>{0, 1, 2, 3}));
}

/// 3 packages of 2 cores; only package 0 has an L3 (an XML topology can
/// say that).
std::vector<Pu> one_l3_of_three() {
    return {Pu{0, 0, 0, 0, 0}, Pu{1, 1, 0, 0, 0}, Pu{2, 2, -1, 0, 1},
            Pu{3, 3, -1, 0, 1}, Pu{4, 4, -1, 0, 2}, Pu{5, 5, -1, 0, 2}};
}

TEST(Map, PusWithoutTheLevelKeepTheirCore) {
    // Before, the L3-less PUs counted as one L3 and ranks 1 and 2 were
    // bound across packages 1 and 2.
    const RankMap m = map_of(one_l3_of_three(), 3, Bind::kL3, {Level::kPackage, true});
    EXPECT_EQ(m.ranks[0].cpus, (std::vector<int>{0, 1})) << "its L3";
    EXPECT_EQ(m.ranks[1].cpus, (std::vector<int>{2})) << "its core";
    EXPECT_EQ(m.ranks[2].cpus, (std::vector<int>{4})) << "its core";
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_EQ(m.notes[0], "--bind-to l3cache: the PUs of ranks 1-2 have no L3 caches; bound to their cores instead");
}

TEST(Map, SpreadCountsACoreWithoutTheLevelAsItsOwnObject) {
    // Before, the four L3-less cores counted as one L3, so l3cache:spread
    // put rank 2 beside rank 0 in L3 0 while cores 3-5 were still empty.
    // Now each of them counts as an L3 of its own, as --bind-to l3cache
    // binds a rank there to its core.
    const std::vector<Pu> pus = one_l3_of_three();
    const RankMap m = map_of(pus, 6, Bind::kCore, {Level::kL3, true});
    EXPECT_EQ(cores_of(m), (std::vector<int>{0, 2, 3, 4, 5, 1}));
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_EQ(m.notes[0],
              "--map-by l3cache:spread: cores 2-5 (PUs 2-5) have no L3 caches; each of those cores counts "
              "as an L3 cache of its own");
    // Compact mapping does not look at the level: no note.
    EXPECT_TRUE(map_of(pus, 6, Bind::kCore, {Level::kL3, false}).notes.empty());
    // One slot per PU: the PUs of an L3-less core are one object.
    const std::vector<Pu> ht = {Pu{0, 0, 0, 0, 0},  Pu{1, 0, 0, 0, 0},  Pu{2, 1, -1, 0, 1},
                                Pu{3, 1, -1, 0, 1}, Pu{4, 2, -1, 0, 2}, Pu{5, 2, -1, 0, 2}};
    std::vector<int> order;
    for (const RankPlacement& r : map_of(ht, 6, Bind::kHwthread, {Level::kL3, true}).ranks) {
        order.push_back(r.cpus.at(0));
    }
    EXPECT_EQ(order, (std::vector<int>{0, 2, 4, 1, 3, 5}));
}

// ---- the report ----

TEST(Report, ExactText) {
    const Topology t = synthetic("pack:2 numa:1 l3:1 core:2 pu:2");
    MapRequest req;
    req.nranks = 3;
    req.bind = Bind::kCore;
    req.map_by = MapBy{Level::kPackage, true};
    const RankMap m = compute_map(t.pus(), req);
    EXPECT_EQ(format_report(t, req, m),
              "shmpi: 3 ranks on synthetic topology 'pack:2 numa:1 l3:1 core:2 pu:2' (2 packages, "
              "2 NUMA nodes, 2 L3 caches, 4 cores, 8 PUs): map-by package:spread, bind-to core "
              "(not bound: the topology is not this machine's)\n"
              "shmpi: rank 0 mapped to core 0 (PUs 0-1), L3 0, NUMA node 0, package 0\n"
              "shmpi: rank 1 mapped to core 2 (PUs 4-5), L3 1, NUMA node 1, package 1\n"
              "shmpi: rank 2 mapped to core 1 (PUs 2-3), L3 0, NUMA node 0, package 0\n");
    req.bind = Bind::kAuto;
    req.nranks = 5;
    const RankMap over = compute_map(t.pus(), req);
    const std::string r = format_report(t, req, over);
    EXPECT_NE(r.find("bind-to none (default: more ranks than cores)\n"), std::string::npos) << r;
    EXPECT_NE(r.find("shmpi: rank 4 not bound: cores 0-3 (PUs 0-7), L3s 0-1, NUMA nodes 0-1, "
                     "packages 0-1\n"),
              std::string::npos)
        << r;
}

TEST(Report, HeaderSaysWhatTheCpuListLeaves) {
    const Topology t = synthetic("pack:2 numa:1 l3:1 core:2 pu:2");
    MapRequest req;
    req.nranks = 2;
    req.cpu_list = {2, 3, 4};
    const RankMap m = compute_map(t.pus(), req);
    const std::string r = format_report(t, req, m);
    EXPECT_EQ(r.substr(0, r.find('\n')),
              "shmpi: 2 ranks on synthetic topology 'pack:2 numa:1 l3:1 core:2 pu:2' (2 packages, 2 NUMA "
              "nodes, 2 L3 caches, 4 cores, 8 PUs; --cpu-list leaves cores 1-2 (PUs 2-4)): map-by "
              "core:compact, bind-to core (default; not bound: the topology is not this machine's)")
        << r;
    // A list of every PU leaves all of them: nothing to add.
    req.cpu_list = {0, 1, 2, 3, 4, 5, 6, 7};
    const std::string all = format_report(t, req, compute_map(t.pus(), req));
    EXPECT_EQ(all.find("--cpu-list"), std::string::npos) << all;
}

TEST(Report, RankLineOnThisMachineSaysBound) {
    RankPlacement rp;
    rp.pus = {Pu{6, 3, 0, 1, 0}, Pu{7, 3, 0, 1, 0}};
    rp.cpus = {6, 7};
    EXPECT_EQ(format_rank(2, rp, true, true), "rank 2 bound to core 3 (PUs 6-7), L3 0, NUMA node 1, package 0");
    EXPECT_EQ(describe(Place{-1, 3, 0, 1, 0}), "core 3, L3 0, NUMA node 1, package 0");
    EXPECT_EQ(describe(Place{}), "unknown");
}

TEST(Report, LayoutShowsRanksOnCores) {
    const Topology t = synthetic("pack:1 numa:2 core:2 pu:1");
    const RankMap m = map_of(t, 3, Bind::kCore, {Level::kNuma, true});
    EXPECT_EQ(format_layout(t, &m),
              "package 0\n"
              "  NUMA node 0\n"
              "    core 0 (PU 0): rank 0\n"
              "    core 1 (PU 1): rank 2\n"
              "  NUMA node 1\n"
              "    core 2 (PU 2): rank 1\n"
              "    core 3 (PU 3): -\n");
}

TEST(Report, LayoutFollowsHwlocNesting) {
    // Sub-NUMA clustering: one L3 over two NUMA nodes (lstopo shows
    // Package > L3 > NUMA node).  Before, the tree put each node above
    // the L3 and showed L3 0 twice.
    EXPECT_EQ(format_layout(synthetic("pack:2 l3:1 numa:2 core:1 pu:1"), nullptr),
              "package 0\n"
              "  L3 0\n"
              "    NUMA node 0\n"
              "      core 0 (PU 0)\n"
              "    NUMA node 1\n"
              "      core 1 (PU 1)\n"
              "package 1\n"
              "  L3 1\n"
              "    NUMA node 2\n"
              "      core 2 (PU 2)\n"
              "    NUMA node 3\n"
              "      core 3 (PU 3)\n");
    // A NUMA node over two packages.  Before, each package showed its own
    // copy of the node.
    EXPECT_EQ(format_layout(synthetic("numa:2 pack:2 core:1 pu:1"), nullptr),
              "NUMA node 0\n"
              "  package 0\n"
              "    core 0 (PU 0)\n"
              "  package 1\n"
              "    core 1 (PU 1)\n"
              "NUMA node 1\n"
              "  package 2\n"
              "    core 2 (PU 2)\n"
              "  package 3\n"
              "    core 3 (PU 3)\n");
    // The common shape is unchanged: package > NUMA node > L3.
    EXPECT_EQ(format_layout(synthetic("pack:1 numa:1 l3:2 core:1 pu:1"), nullptr),
              "package 0\n"
              "  NUMA node 0\n"
              "    L3 0\n"
              "      core 0 (PU 0)\n"
              "    L3 1\n"
              "      core 1 (PU 1)\n");
}

TEST(Report, LayoutShowsRanksBoundWiderOnEachOfTheirCores) {
    // Before, every core read "-" although two ranks may run on each.
    const Topology t = synthetic("pack:2 numa:2 core:2 pu:1");
    const RankMap m = map_of(t, 8, Bind::kNuma, {Level::kNuma, true});
    EXPECT_EQ(format_layout(t, &m),
              "package 0\n"
              "  NUMA node 0\n"
              "    core 0 (PU 0): ranks 0 4 (bound to NUMA node 0)\n"
              "    core 1 (PU 1): ranks 0 4 (bound to NUMA node 0)\n"
              "  NUMA node 1\n"
              "    core 2 (PU 2): ranks 1 5 (bound to NUMA node 1)\n"
              "    core 3 (PU 3): ranks 1 5 (bound to NUMA node 1)\n"
              "package 1\n"
              "  NUMA node 2\n"
              "    core 4 (PU 4): ranks 2 6 (bound to NUMA node 2)\n"
              "    core 5 (PU 5): ranks 2 6 (bound to NUMA node 2)\n"
              "  NUMA node 3\n"
              "    core 6 (PU 6): ranks 3 7 (bound to NUMA node 3)\n"
              "    core 7 (PU 7): ranks 3 7 (bound to NUMA node 3)\n");
    // Only cores the binding leaves out read "-"; a level the topology
    // lacks binds to every usable PU.
    const Topology flat = synthetic("core:3 pu:1");
    const RankMap one = map_of(flat, 1, Bind::kPackage, {}, {0, 1});
    EXPECT_EQ(format_layout(flat, &one),
              "NUMA node 0\n"
              "  core 0 (PU 0): rank 0 (bound to cores 0-1)\n"
              "  core 1 (PU 1): rank 0 (bound to cores 0-1)\n"
              "  core 2 (PU 2): -\n");
    // Bound to one core, or one PU of it: as before.
    const Topology ht = synthetic("pack:1 core:2 pu:2");
    const RankMap hw = map_of(ht, 3, Bind::kHwthread);
    EXPECT_EQ(format_layout(ht, &hw),
              "package 0\n"
              "  NUMA node 0\n"
              "    core 0 (PUs 0-1): ranks 0 1\n"
              "    core 1 (PUs 2-3): rank 2\n");
}

// ---- places in the segment ----

TEST(Places, RoundTripThroughRankSlots) {
    shmpi::shm::Segment seg =
        shmpi::shm::Segment::create(shmpi::shm::Geometry::for_ranks(3), getpid());
    seg.unlink();
    // A segment nobody placed: every place unknown.
    for (const Place& p : read_places(&seg)) EXPECT_TRUE(p.unknown());
    const std::vector<Place> places{{0, 0, 0, 0, 0}, {-1, 5, 1, 0, 0}, {}};
    write_places(seg, places);
    EXPECT_EQ(read_places(&seg), places);
    EXPECT_EQ(read_places(nullptr), std::vector<Place>{Place{}});
}

TEST(Places, LocalityOrderGroupsSharedObjects) {
    // numa:spread on the big description: consecutive ranks on different
    // NUMA nodes; the locality order puts each node's ranks together.
    const Topology t = synthetic(kBig);
    const RankMap m = map_of(t, 8, Bind::kCore, {Level::kNuma, true});
    EXPECT_EQ(locality_order(m.places()), (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
    // Unknown places: the identity.
    EXPECT_EQ(locality_order(std::vector<Place>(4)), (std::vector<int>{0, 1, 2, 3}));
    // Equal places keep their order.
    const std::vector<Place> two{{-1, -1, -1, 1, 0}, {-1, -1, -1, 0, 0}, {-1, -1, -1, 1, 0}};
    EXPECT_EQ(locality_order(two), (std::vector<int>{1, 0, 2}));
}

// ---- memory ----

/// Binds every rank's memory to NUMA node `numa` of this machine, touches
/// rank `rank`'s rings and cells, and returns the OS indexes of the nodes
/// their pages landed on (-1 where hwloc cannot tell).
std::vector<int> placed_nodes(const Topology& t, std::uint32_t nranks, const std::vector<Place>& places,
                              std::uint32_t rank) {
    shmpi::shm::Segment seg =
        shmpi::shm::Segment::create(shmpi::shm::Geometry::for_ranks(nranks), getpid());
    seg.unlink();
    const MembindResult r = bind_memory(t, seg, places, false);
    EXPECT_EQ(r.problem, "");
    EXPECT_GT(r.bytes, 0u);
    const shmpi::shm::SegmentHeader& h = seg.header();
    auto* base = reinterpret_cast<std::byte*>(&seg.header());
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::vector<int> nodes;
    auto touch = [&](std::byte* begin, std::size_t bytes) {
        // Only pages wholly inside are bound.
        const auto b = reinterpret_cast<std::uintptr_t>(begin);
        for (std::uintptr_t p = (b + page - 1) / page * page; p + page <= b + bytes; p += page) {
            auto* q = reinterpret_cast<volatile std::byte*>(p);
            *q = std::byte{0};
            nodes.push_back(node_of_page(t, reinterpret_cast<void*>(p)));
        }
    };
    for (std::uint32_t s = 0; s < nranks; ++s) {
        if (s != rank) touch(base + h.rings_offset + (std::size_t{s} * nranks + rank) * h.ring_stride, h.ring_stride);
    }
    const std::size_t world_cells = std::size_t{h.coll_cell_bytes} + h.wide_cell_bytes;
    touch(base + h.coll_cells_offset + std::size_t{rank} * world_cells, world_cells);
    return nodes;
}

TEST(Memory, RankPagesLandOnItsNode) {
    const Topology t = Topology::this_machine();
    if (t.handle() == nullptr) GTEST_SKIP() << "hwloc cannot read this machine";
    hwloc_obj_t node0 = hwloc_get_obj_by_type(t.handle(), HWLOC_OBJ_NUMANODE, 0);
    ASSERT_NE(node0, nullptr);
    // Every rank on node 0 (the only node on many machines): exercises the
    // binding calls wherever the test runs.
    const std::vector<int> nodes = placed_nodes(t, 3, std::vector<Place>(3, Place{-1, -1, -1, 0, -1}), 1);
    ASSERT_FALSE(nodes.empty());
    if (nodes.front() < 0) GTEST_SKIP() << "hwloc cannot tell where pages are on this system";
    for (int n : nodes) EXPECT_EQ(n, static_cast<int>(node0->os_index));
}

TEST(Memory, RanksOnDifferentNodes) {
    const Topology t = Topology::this_machine();
    if (t.handle() == nullptr) GTEST_SKIP() << "hwloc cannot read this machine";
    const int nnodes = hwloc_get_nbobjs_by_type(t.handle(), HWLOC_OBJ_NUMANODE);
    if (nnodes < 2) GTEST_SKIP() << "this machine has one NUMA node";
    hwloc_obj_t last = hwloc_get_obj_by_type(t.handle(), HWLOC_OBJ_NUMANODE, static_cast<unsigned>(nnodes - 1));
    // Rank 1 on the last node, the others on node 0.
    const std::vector<Place> places{{-1, -1, -1, 0, -1}, {-1, -1, -1, nnodes - 1, -1}, {-1, -1, -1, 0, -1}};
    const std::vector<int> nodes = placed_nodes(t, 3, places, 1);
    ASSERT_FALSE(nodes.empty());
    if (nodes.front() < 0) GTEST_SKIP() << "hwloc cannot tell where pages are on this system";
    for (int n : nodes) EXPECT_EQ(n, static_cast<int>(last->os_index));
}

}  // namespace
