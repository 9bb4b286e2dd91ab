// The rank-to-PU map: which PUs each rank is bound to, for a policy and a
// rank count, computed on a table of PUs (topology.hpp) without hwloc.
//
// The steps:
//   1. Usable PUs: the topology's, or only those of --cpu-list (each listed
//      CPU must be one of the topology's).
//   2. Slots: one per core (PUs of a core together; a PU without a core is a
//      core of its own), or one per PU for --bind-to hwthread.
//   3. Order the slots by --map-by: compact keeps hwloc's logical order, so
//      consecutive ranks fill one object of the level before the next;
//      spread deals the slots round-robin over the level's objects (the
//      first slot of each object, then the second of each, ...).  Where
//      only some PUs have the level, a core without it counts as an object
//      of its own (as in step 5), with a note; where none has it, spread is
//      compact, with a note.
//   4. Rank r takes slot r mod slots.  More ranks than slots is
//      oversubscription: with --bind-to core or hwthread it is an error
//      unless --oversubscribe allows it (ranks then share slots); with the
//      default (auto) the job stays unbound; wider bindings allow it.
//   5. Bind each rank to its slot widened to the --bind-to level: the slot's
//      PU (hwthread), core, or every usable PU of its L3 cache, NUMA node or
//      package.  A level the topology lacks widens to every usable PU, with a
//      note.  An unbound rank may run on every usable PU.
//   6. A rank's Place holds the objects common to all of its PUs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "place/place.hpp"
#include "place/policy.hpp"
#include "place/topology.hpp"

namespace shmpi::place {

/// What the user asked for.
struct MapRequest {
    std::uint32_t nranks = 1;
    MapBy map_by;
    Bind bind = Bind::kAuto;
    std::vector<int> cpu_list;   ///< OS indexes, sorted; empty: every PU of the topology
    bool oversubscribe = false;  ///< --oversubscribe: ranks may share cores when bound to them
};

/// Where one rank goes.
struct RankPlacement {
    std::vector<int> cpus;  ///< OS indexes it is bound to, sorted; empty when unbound
    std::vector<Pu> pus;    ///< the rows of those PUs; empty when unbound (see RankMap::usable)
    Place place;            ///< what every PU it may run on shares (step 6)
};

/// The whole map.
struct RankMap {
    std::vector<RankPlacement> ranks;  ///< indexed by rank
    std::vector<Pu> usable;            ///< every usable PU (step 1): where unbound ranks may run
    Bind bind = Bind::kAuto;           ///< the binding applied: kAuto resolved to kCore or kNone
    std::size_t slots = 0;             ///< cores (PUs for hwthread) the ranks were dealt over
    bool oversubscribed = false;       ///< more ranks than slots
    std::vector<std::string> notes;    ///< fallbacks taken, one sentence each

    bool bound() const { return bind != Bind::kNone; }
    std::vector<Place> places() const;
};

/// Computes the map of `request` on `pus` (Topology::pus()).  Throws
/// PlaceError naming the option and value for a request that cannot be met:
/// a --cpu-list CPU that is not usable, or more ranks than cores (PUs) with
/// --bind-to core (hwthread) and no --oversubscribe.
RankMap compute_map(std::span<const Pu> pus, const MapRequest& request);

/// The Place shared by every PU of `pus` (step 6).
Place common_place(std::span<const Pu> pus);

}  // namespace shmpi::place
