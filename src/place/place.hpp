// Where each rank of the job runs, as the launcher placed it.
//
// mpirun computes the rank-to-PU map (src/place/map.hpp) on the topology it
// loaded (this machine, or SHMPI_TOPOLOGY), binds the ranks, and writes each
// rank's Place into its RankSlot before the first fork (shm/layout.hpp).
// Everything in libshmpi that wants to follow the placement (the collective
// trees, MPI_Cart_create's reorder) reads it back through read_places(): no
// hwloc in the library, and a synthetic SHMPI_TOPOLOGY is followed exactly
// like a real machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmpi::shm {
class Segment;
}

namespace shmpi::place {

/// Where one rank runs: the objects of the topology that hold every PU the
/// rank may run on.  A field is -1 when the rank's PUs span several objects
/// of that kind (e.g. `core` of a rank bound to a NUMA node), when the
/// topology has no such level, or when nothing is known (a rank that mpirun
/// did not place, a singleton).
///
/// `pu` is the PU's operating-system index (what sched_getcpu() returns on a
/// real machine); core, l3, numa and package are hwloc *logical* indexes,
/// numbered 0, 1, ... in topology order, so that two ranks share an object
/// exactly when their fields are equal and >= 0.
struct Place {
    int pu = -1;
    int core = -1;
    int l3 = -1;
    int numa = -1;
    int package = -1;

    /// True when nothing at all is known about this rank's place.
    bool unknown() const { return pu < 0 && core < 0 && l3 < 0 && numa < 0 && package < 0; }
    bool operator==(const Place&) const = default;
};

/// Every world rank's Place, indexed by world rank, as mpirun wrote them into
/// the segment's rank slots.  For `segment == nullptr` (a singleton, or a
/// 1-rank job without a segment) one unknown Place.  A slot the launcher did
/// not fill (a segment made by a test, or mpirun --bind-to none on a machine
/// whose levels all span the allowed PUs) yields an unknown Place.  Never
/// throws for a valid segment; reads only immutable fields, so it may be
/// called at any time after attaching.
std::vector<Place> read_places(const shm::Segment* segment);

/// Writes `places[r]` into rank slot r of `segment` (launcher side, before
/// the first fork; fork publishes the values to the ranks).  `places` must
/// have one entry per rank of the segment.
void write_places(shm::Segment& segment, const std::vector<Place>& places);

/// The members 0 .. n-1 of a group whose places are `places`, reordered so
/// that members sharing a package sit together, within it those sharing a
/// NUMA node, then an L3 cache, then a core: a stable sort by (package,
/// numa, l3, core, pu), so members with equal places keep their order and
/// unknown places (all -1) give the identity.  For trees and Cart reorder
/// that want neighbours close: position i of a tree built over this order
/// is member order[i].
std::vector<int> locality_order(const std::vector<Place>& places);

/// "PU 3, core 3, L3 0, NUMA node 0, package 0", leaving out unknown fields;
/// "unknown" when nothing is known.
std::string describe(const Place& place);

}  // namespace shmpi::place
