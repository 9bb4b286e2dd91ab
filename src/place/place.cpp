#include "place/place.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <tuple>

#include "shm/segment.hpp"

namespace shmpi::place {

std::vector<Place> read_places(const shm::Segment* segment) {
    if (segment == nullptr) return {Place{}};
    const std::uint32_t n = segment->nranks();
    std::vector<Place> places(n);
    for (std::uint32_t r = 0; r < n; ++r) {
        const shm::RankSlot& s = segment->slot(r);
        if (s.placed == 0) continue;
        places[r] = Place{s.place_pu, s.place_core, s.place_l3, s.place_numa, s.place_package};
    }
    return places;
}

void write_places(shm::Segment& segment, const std::vector<Place>& places) {
    assert(places.size() == segment.nranks() && "write_places needs one Place per rank");
    for (std::uint32_t r = 0; r < segment.nranks(); ++r) {
        shm::RankSlot& s = segment.slot(r);
        const Place& p = places[r];
        s.place_pu = p.pu;
        s.place_core = p.core;
        s.place_l3 = p.l3;
        s.place_numa = p.numa;
        s.place_package = p.package;
        s.placed = 1;
    }
}

std::vector<int> locality_order(const std::vector<Place>& places) {
    std::vector<int> order(places.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const Place& x = places[static_cast<std::size_t>(a)];
        const Place& y = places[static_cast<std::size_t>(b)];
        return std::tie(x.package, x.numa, x.l3, x.core, x.pu) <
               std::tie(y.package, y.numa, y.l3, y.core, y.pu);
    });
    return order;
}

std::string describe(const Place& p) {
    if (p.unknown()) return "unknown";
    std::string out;
    auto add = [&](const char* what, int v) {
        if (v < 0) return;
        if (!out.empty()) out += ", ";
        out += fmt::format("{} {}", what, v);
    };
    add("PU", p.pu);
    add("core", p.core);
    add("L3", p.l3);
    add("NUMA node", p.numa);
    add("package", p.package);
    return out;
}

}  // namespace shmpi::place
