// The placement in words: mpirun --report-bindings and shmpi-topo.
//
// The report is one header line, then one line per rank, each starting with
// "shmpi: ":
//
//   shmpi: 3 ranks on this machine (1 package, 1 NUMA node, 1 L3 cache, 2 cores, 2 PUs): map-by core:compact, bind-to core
//   shmpi: rank 0 bound to core 0 (PU 0), L3 0, NUMA node 0, package 0
//   shmpi: rank 1 bound to cores 4-7 (PUs 4-7), L3 1, NUMA node 0, package 0
//   shmpi: rank 2 not bound: cores 0-1 (PUs 0-1), L3 0, NUMA node 0, package 0
//
// Cores, L3 caches, NUMA nodes and packages are hwloc logical indexes; PUs
// are OS indexes (what taskset and sched_getcpu use).  On a topology that is
// not this machine's (SHMPI_TOPOLOGY) nothing is really bound: the header
// says so and the rank lines say "mapped to" instead of "bound to".  When
// the binding is the default, the header says "(default)", or "(default:
// more ranks than cores)" for an oversubscribed job left unbound.  A level
// the topology lacks is left out.  Notes (fallbacks) follow the header as
// "shmpi: note: ..." lines.
#pragma once

#include <cstdint>
#include <string>

#include "place/map.hpp"
#include "place/topology.hpp"

namespace shmpi::place {

/// The report described above, every line ending in '\n'.
std::string format_report(const Topology& topology, const MapRequest& request, const RankMap& map);

/// One rank's line without the "shmpi: " prefix and newline, e.g.
/// "rank 0 bound to core 0 (PU 0), L3 0, NUMA node 0, package 0", from the
/// PUs in `placement.pus` (for an unbound rank: pass every usable PU).
/// With `topology`, a NUMA node that shares its PUs with others (memory of
/// another kind, Topology::numa_nodes()) shows them too: "NUMA nodes 0+1".
std::string format_rank(std::uint32_t rank, const RankPlacement& placement, bool bound, bool this_system,
                        const Topology* topology = nullptr);
/// format_rank()'s line after "rank N ", e.g. "bound to core 0 (PU 0), ...".
std::string format_where(const RankPlacement& placement, bool bound, bool this_system,
                         const Topology* topology = nullptr);

/// The topology as an indented tree of packages, NUMA nodes and L3 caches,
/// nested as hwloc nests them (Topology::nesting()), one line per core with
/// its PUs and, when `map` is given and binds, the ranks that may run there
/// (or "-").  A rank bound to more than one core shows on each of them, with
/// where it is bound:
///
///   package 0                              package 0
///     NUMA node 0                              NUMA node 0
///       L3 0                                     L3 0
///         core 0 (PU 0): ranks 0 4                 core 0 (PU 0): ranks 0 4 (bound to L3 0)
///         core 1 (PU 1): -                         core 1 (PU 1): ranks 0 4 (bound to L3 0)
///   (--bind-to core --oversubscribe)         (--bind-to l3cache)
///
/// ("NUMA nodes 0+1" where nodes of two kinds of memory share the PUs; a
/// level the topology lacks has no line.)
std::string format_layout(const Topology& topology, const RankMap* map);

}  // namespace shmpi::place
