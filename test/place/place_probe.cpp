// A rank that reports where mpirun put it, for run_place.py.  Not an MPI
// program: it attaches to the job's segment itself (as MPI_Init would) and
// never calls MPI, which mpirun allows (a rank that exits 0 before MPI_Init).
//
//   place_probe place    prints "rank R: <its Place> | cpus <its affinity>"
//   place_probe memory   touches the pages of its receive rings and
//                        collective cells and checks that they sit on its
//                        NUMA node; prints "rank R: N pages on node X"
//   place_probe numa     (outside mpirun) prints this machine's NUMA nodes
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

#include "place/membind.hpp"
#include "place/place.hpp"
#include "place/policy.hpp"
#include "place/topology.hpp"
#include "shm/segment.hpp"

namespace {

using namespace shmpi;

std::string affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    return place::format_list(cpus);
}

int check_memory(const shm::Segment& seg, std::uint32_t rank) {
    const place::Topology topo = place::Topology::this_machine();
    const place::Place me = place::read_places(&seg)[rank];
    if (me.numa < 0) {
        fmt::print("rank {}: no NUMA node in my place\n", rank);
        return 1;
    }
    hwloc_obj_t node = hwloc_get_obj_by_type(topo.handle(), HWLOC_OBJ_NUMANODE, static_cast<unsigned>(me.numa));
    const shm::SegmentHeader& h = seg.header();
    auto* base = reinterpret_cast<std::byte*>(&seg.header());
    const std::uintptr_t page = 4096;
    int pages = 0, wrong = 0;
    auto touch = [&](std::byte* begin, std::size_t bytes) {
        const auto b = reinterpret_cast<std::uintptr_t>(begin);
        for (std::uintptr_t p = (b + page - 1) / page * page; p + page <= b + bytes; p += page) {
            // Read-modify-write of a zero byte: the ring stays empty.
            auto* q = reinterpret_cast<volatile unsigned char*>(p + page - 1);
            *q = *q;
            const int at = place::node_of_page(topo, reinterpret_cast<void*>(p));
            ++pages;
            if (at != static_cast<int>(node->os_index)) ++wrong;
        }
    };
    for (std::uint32_t s = 0; s < h.nranks; ++s) {
        if (s != rank) touch(base + h.rings_offset + (std::size_t{s} * h.nranks + rank) * h.ring_stride, h.ring_stride);
    }
    const std::size_t world_cells = std::size_t{h.coll_cell_bytes} + h.wide_cell_bytes;
    touch(base + h.coll_cells_offset + std::size_t{rank} * world_cells, world_cells);
    fmt::print("rank {}: {} pages on node {}, {} elsewhere\n", rank, pages - wrong, node->os_index, wrong);
    return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "place";
    if (mode == "numa") {
        const place::Topology topo = place::Topology::this_machine();
        fmt::print("{}\n", topo.handle() == nullptr
                               ? 1
                               : hwloc_get_nbobjs_by_type(topo.handle(), HWLOC_OBJ_NUMANODE));
        return 0;
    }
    const char* fd = std::getenv(shm::kEnvFd);
    const char* size = std::getenv(shm::kEnvSize);
    const char* rank_text = std::getenv(shm::kEnvRank);
    std::optional<shm::Segment> seg;
    std::uint32_t rank = 0;
    if (fd != nullptr && size != nullptr && rank_text != nullptr) {
        seg.emplace(shm::Segment::attach(std::atoi(fd), static_cast<std::uint32_t>(std::atoi(size))));
        rank = static_cast<std::uint32_t>(std::atoi(rank_text));
    }
    if (mode == "memory") {
        if (!seg) return 77;
        return check_memory(*seg, rank);
    }
    const std::vector<place::Place> places = place::read_places(seg ? &*seg : nullptr);
    fmt::print("rank {}: {} | cpus {}\n", rank, place::describe(places[rank]), affinity());
    return 0;
}
