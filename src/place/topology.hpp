// The topology placement works on: this machine, or the one SHMPI_TOPOLOGY
// describes (an hwloc synthetic description or an hwloc XML file).
//
// hwloc is asked once, at load; what placement needs is copied into a plain
// table of PUs (one row per PU with the indexes of its core, L3 cache, NUMA
// node and package), which the map, the report and the tests use without
// calling hwloc again.  Only memory binding needs the hwloc handle itself.
#pragma once

#include <hwloc.h>

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "place/policy.hpp"

namespace shmpi::place {

/// A placement request that cannot be met, or a topology that cannot be
/// loaded.  The message names the option or variable, the value, and what
/// would work, without a program's prefix: the tool that catches it adds
/// its own ("shmpi: mpirun: ", "shmpi-topo: ").
class PlaceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Name of the variable that replaces this machine's topology.
inline constexpr const char* kEnvTopology = "SHMPI_TOPOLOGY";

/// The most PUs a synthetic topology may describe: far above the machines
/// shmpi runs on, while hwloc takes about a minute to build 8192.
inline constexpr unsigned long long kMaxSyntheticPus = 4096;

/// The PUs an hwloc synthetic description holds: the product of its levels'
/// arities ("pack:2 core:4 pu:2": 16), counted up to kMaxSyntheticPus + 1
/// at most; attributes and memory levels ("numa:2(memory=1GB)", "[numa]")
/// count only by their arity.  0 when it names no arity at all.
unsigned long long synthetic_pus(std::string_view spec);

/// One PU and the objects that hold it.  `os` is the PU's OS index; the
/// others are hwloc logical indexes, -1 when the topology has no such level
/// above the PU (a synthetic description without cores, say).
struct Pu {
    int os = -1;
    int core = -1;
    int l3 = -1;
    int numa = -1;
    int package = -1;
    bool operator==(const Pu&) const = default;
};

/// The field of `pu` that `level` names.
inline int level_of(const Pu& pu, Level level) {
    switch (level) {
        case Level::kCore: return pu.core;
        case Level::kL3: return pu.l3;
        case Level::kNuma: return pu.numa;
        case Level::kPackage: return pu.package;
    }
    return -1;
}

/// A loaded hwloc topology and its PU table.  Move-only; destroys the hwloc
/// topology on destruction.
class Topology {
public:
    /// SHMPI_TOPOLOGY when it is set and not empty, else this machine.
    static Topology from_environment();
    /// `spec` is an XML file when it names an existing file, contains a '/'
    /// or ends in ".xml"; otherwise an hwloc synthetic description such as
    /// "pack:2 numa:2 l3:2 core:4 pu:1".  `what` names the source in error
    /// messages ("SHMPI_TOPOLOGY", "--topology").
    static Topology from_spec(std::string_view spec, std::string_view what);
    /// This machine, limited to the PUs this process may run on (its CPU
    /// affinity, as taskset or a cgroup left it).  If hwloc cannot read the
    /// machine, the CPUs of that affinity, each a core of its own, with no
    /// other level (and no hwloc handle: handle() is null).
    static Topology this_machine();

    Topology(Topology&& other) noexcept;
    Topology& operator=(Topology&& other) noexcept;
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;
    ~Topology();

    /// Every usable PU, in hwloc's logical order (cores of one L3 together,
    /// L3s of one NUMA node together, and so on).
    const std::vector<Pu>& pus() const { return pus_; }
    /// The levels over pus()[i] that it has (package, NUMA node, L3 cache),
    /// outermost first, as hwloc nests them: {kPackage, kNuma, kL3} on most
    /// machines, {kPackage, kL3, kNuma} where one L3 holds several NUMA
    /// nodes (sub-NUMA clustering), {kNuma, kPackage} where one NUMA node
    /// holds several packages.  A NUMA node sits inside the object hwloc
    /// attaches it to (its PUs are that object's).  Empty without hwloc, or
    /// for an `i` out of range.
    const std::vector<Level>& nesting(std::size_t i) const;
    /// True when the PUs are this machine's, so ranks can really be bound
    /// and memory placed; false for synthetic descriptions and XML files.
    bool is_this_system() const { return this_system_; }
    /// "this machine", "synthetic topology 'pack:2 core:2'", "XML file 'a.xml'",
    /// "XML file 'a.xml' from HWLOC_XMLFILE": a name without parentheses, as
    /// the reports follow it with the summary in parentheses.
    const std::string& source() const { return source_; }
    /// "2 packages, 4 NUMA nodes, 8 L3 caches, 32 cores, 32 PUs".
    std::string summary() const;
    /// Distinct objects of `level` among the usable PUs (0 when the level is
    /// absent).  For kNuma, the first node over each PU (Pu::numa).
    int count(Level level) const;
    /// The NUMA nodes over the PUs of node `numa` (a Pu::numa: the first
    /// node over them), `numa` first.  More than one where the same cores
    /// have memory of two kinds (DDR and HBM, or CXL memory, each a NUMA
    /// node in hwloc): ranks are mapped by the first, and mpirun binds their
    /// memory there (membind.hpp).  Just {numa} for a node it does not know.
    std::vector<int> numa_nodes(int numa) const;
    /// Every NUMA node over a usable PU.
    int numa_count() const;
    /// The hwloc handle, for memory binding; null for the fallback of
    /// this_machine().
    hwloc_topology_t handle() const { return topo_; }

private:
    Topology() = default;
    void load_table(bool restrict_to_affinity);
    /// nesting() of `pu`, whose row is `row`.
    std::vector<Level> nesting_of(hwloc_obj_t pu, const Pu& row) const;

    hwloc_topology_t topo_ = nullptr;
    std::vector<Pu> pus_;
    std::vector<std::vector<Level>> nesting_;  ///< parallel to pus_ (nesting())
    /// Pu::numa -> every NUMA node over its PUs, itself first (numa_nodes()).
    std::map<int, std::vector<int>> numa_nodes_;
    bool this_system_ = false;
    std::string source_;
};

}  // namespace shmpi::place
