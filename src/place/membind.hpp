// Memory placement: each rank's receiving side of the segment on its NUMA
// node.
//
// What a rank reads most sits on its own node: the rings it receives from
// (ring (s, d) is read by d), its collective member flags and its collective
// cells.  mpirun binds those pages with hwloc_set_area_membind before the
// first fork, while it is the only process that maps the segment: pages not
// yet touched are allocated on the node when first touched (by anyone), and
// the few pages mpirun touched already (the collective members it
// initialised) are migrated.  The policy belongs to the shared memory
// object, so it holds in every process that maps the segment.
//
// Only whole pages are bound: a page that holds parts of two ranks' rings is
// left to the kernel's default (first touch); a page of collective members
// (several members share one) goes to its first member's node.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "place/place.hpp"
#include "place/topology.hpp"
#include "shm/segment.hpp"

namespace shmpi::place {

/// What bind_memory() did.
struct MembindResult {
    std::size_t bytes = 0;  ///< bytes bound to some rank's node
    std::string problem;    ///< empty, or why some binding failed (one sentence)
};

/// Binds each rank's rings, collective member and cells in `segment` to the
/// NUMA node `places[r].numa` of `topology`.  Ranks whose node is unknown
/// are skipped.  Does nothing (and returns 0 bytes) unless the topology is
/// this machine's; with `only_if_numa` (what mpirun passes) also when the
/// machine has a single NUMA node.  Never throws: a refusal is reported in
/// `problem` and the job runs with the kernel's default placement.
MembindResult bind_memory(const Topology& topology, shm::Segment& segment,
                          const std::vector<Place>& places, bool only_if_numa = true);

/// The OS index of the NUMA node holding the page at `addr` (touch it
/// first), or -1 when hwloc cannot tell.  For tests and shmpi-topo.
int node_of_page(const Topology& topology, const void* addr);

}  // namespace shmpi::place
