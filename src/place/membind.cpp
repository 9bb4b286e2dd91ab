#include "place/membind.hpp"
#include "arith.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace shmpi::place {
namespace {

/// The whole pages inside [begin, end).
struct Pages {
    std::byte* begin;
    std::size_t bytes;
};

Pages inner_pages(std::byte* begin, std::byte* end, std::size_t page) {
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    const auto e = reinterpret_cast<std::uintptr_t>(end);
    const std::uintptr_t pb = round_up(b, page);
    const std::uintptr_t pe = e / page * page;
    if (pe <= pb) return {nullptr, 0};
    return {reinterpret_cast<std::byte*>(pb), pe - pb};
}

}  // namespace

MembindResult bind_memory(const Topology& topology, shm::Segment& segment,
                          const std::vector<Place>& places, bool only_if_numa) {
    MembindResult result;
    hwloc_topology_t topo = topology.handle();
    if (!topology.is_this_system() || topo == nullptr) return result;
    const int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (nnodes < 1 || (only_if_numa && nnodes < 2)) return result;

    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const shm::SegmentHeader& h = segment.header();
    auto* base = reinterpret_cast<std::byte*>(&segment.header());
    const std::uint32_t n = h.nranks;

    auto bind = [&](std::byte* begin, std::byte* end, int numa, bool migrate) {
        const Pages p = inner_pages(begin, end, page);
        if (p.bytes == 0) return;
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(numa));
        if (node == nullptr) return;
        int flags = HWLOC_MEMBIND_BYNODESET | (migrate ? HWLOC_MEMBIND_MIGRATE : 0);
        if (hwloc_set_area_membind(topo, p.begin, p.bytes, node->nodeset, HWLOC_MEMBIND_BIND,
                                   flags) != 0) {
            if (result.problem.empty()) {
                result.problem = fmt::format(
                    "cannot bind {} bytes of the segment to NUMA node {} (hwloc_set_area_membind: "
                    "{}); ranks' memory stays where the kernel puts it",
                    p.bytes, numa, std::strerror(errno));
            }
            return;
        }
        result.bytes += p.bytes;
    };

    for (std::uint32_t d = 0; d < n && d < places.size(); ++d) {
        const int numa = places[d].numa;
        if (numa < 0) continue;
        // The rings rank d reads: (s, d) for every s.
        for (std::uint32_t s = 0; s < n; ++s) {
            if (s == d) continue;
            std::byte* ring = base + h.rings_offset + (std::size_t{s} * n + d) * h.ring_stride;
            bind(ring, ring + h.ring_stride, numa, true);
        }
        // Its collective cells (and wide cells): one page-aligned block per
        // member.
        const shm::CollRegion world = segment.world_coll_region();
        bind(world.cells_of(d), world.cells_of(d) + world.stride(), numa, true);
        // Its cells in every pool region: member d of a pool region is rank d
        // of the communicator holding it, which for the usual duplicates of
        // MPI_COMM_WORLD is world rank d.
        for (std::uint32_t k = 0; k < segment.pool_regions(); ++k) {
            const shm::CollRegion pool = segment.pool_region(k);
            bind(pool.cells_of(d), pool.cells_of(d) + pool.stride(), numa, true);
        }
        // Its stream buffer (written by rank d, read by its receivers).
        if (h.stream_bytes > 0) {
            std::byte* stream = base + h.stream_offset + std::size_t{d} * h.stream_bytes;
            bind(stream, stream + h.stream_bytes, numa, true);
        }
    }
    // Collective members: each page goes to the node of the member that
    // starts in it first (mpirun wrote them already, hence the migration).
    const std::size_t member = sizeof(shm::CollMember);
    std::byte* members = base + h.coll_offset;
    for (std::size_t off = 0; off < n * member; off += page) {
        const std::size_t first = ceil_div(off, member);
        if (first >= n || first >= places.size() || places[first].numa < 0) continue;
        bind(members + off, members + off + page, places[first].numa, true);
    }
    return result;
}

int node_of_page(const Topology& topology, const void* addr) {
    if (topology.handle() == nullptr) return -1;
    hwloc_nodeset_t set = hwloc_bitmap_alloc();
    int node = -1;
    if (hwloc_get_area_memlocation(topology.handle(), addr, 1, set, HWLOC_MEMBIND_BYNODESET) == 0) {
        node = hwloc_bitmap_first(set);
    }
    hwloc_bitmap_free(set);
    return node;
}

}  // namespace shmpi::place
