#include "place/report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace shmpi::place {
namespace {

/// "core 3", "cores 0-3,8"; empty when no PU has the level.
std::string objects(const std::vector<Pu>& pus, int Pu::*field, const char* one, const char* many) {
    std::set<int> seen;
    for (const Pu& p : pus) {
        if (p.*field >= 0) seen.insert(p.*field);
    }
    if (seen.empty()) return {};
    const std::vector<int> v(seen.begin(), seen.end());
    return fmt::format("{} {}", v.size() == 1 ? one : many, format_list(v));
}

/// "0+1": NUMA nodes over the same PUs (Topology::numa_nodes()).
std::string plus_list(const std::vector<int>& nodes) {
    std::string out;
    for (const int n : nodes) {
        if (!out.empty()) out += '+';
        out += std::to_string(n);
    }
    return out;
}

/// objects() for NUMA nodes: "NUMA node 1", "NUMA nodes 0-1"; where other
/// nodes lie over the same PUs (memory of another kind), each with them:
/// "NUMA nodes 0+1", "NUMA nodes 0+1,2+3".
std::string numa_objects(const std::vector<Pu>& pus, const Topology* topology) {
    std::set<int> first;
    for (const Pu& p : pus) {
        if (p.numa >= 0) first.insert(p.numa);
    }
    if (topology == nullptr) return objects(pus, &Pu::numa, "NUMA node", "NUMA nodes");
    std::vector<std::vector<int>> groups;
    for (const int n : first) groups.push_back(topology->numa_nodes(n));
    if (std::all_of(groups.begin(), groups.end(), [](const auto& g) { return g.size() == 1; })) {
        return objects(pus, &Pu::numa, "NUMA node", "NUMA nodes");
    }
    std::string list;
    for (const std::vector<int>& g : groups) {
        if (!list.empty()) list += ',';
        list += plus_list(g);
    }
    return "NUMA nodes " + list;
}

}  // namespace

std::string format_rank(std::uint32_t rank, const RankPlacement& rp, bool bound, bool this_system,
                        const Topology* topology) {
    return fmt::format("rank {} {}", rank, format_where(rp, bound, this_system, topology));
}

std::string format_where(const RankPlacement& rp, bool bound, bool this_system, const Topology* topology) {
    std::string out;
    if (!bound) {
        out += "not bound: ";
    } else {
        out += this_system ? "bound to " : "mapped to ";
    }
    std::string cores = objects(rp.pus, &Pu::core, "core", "cores");
    const std::string pus = objects(rp.pus, &Pu::os, "PU", "PUs");
    out += cores.empty() ? pus : fmt::format("{} ({})", cores, pus);
    for (const std::string& s : {objects(rp.pus, &Pu::l3, "L3", "L3s"), numa_objects(rp.pus, topology),
                                 objects(rp.pus, &Pu::package, "package", "packages")}) {
        if (!s.empty()) out += ", " + s;
    }
    return out;
}

std::string format_report(const Topology& topology, const MapRequest& request, const RankMap& map) {
    // Why the binding is what it is, in parentheses after it.
    std::vector<std::string> why;
    if (request.bind == Bind::kAuto) {
        why.emplace_back(map.oversubscribed ? "default: more ranks than cores" : "default");
    }
    if (map.bound() && !topology.is_this_system()) {
        why.emplace_back("not bound: the topology is not this machine's");
    }
    std::string because;
    for (const std::string& w : why) because += (because.empty() ? " (" : "; ") + w;
    if (!because.empty()) because += ")";
    // The whole topology, then the part of it --cpu-list leaves.
    std::string summary = topology.summary();
    if (!request.cpu_list.empty() && map.usable.size() < topology.pus().size()) {
        const std::string cores = objects(map.usable, &Pu::core, "core", "cores");
        const std::string pus = objects(map.usable, &Pu::os, "PU", "PUs");
        summary +=
            fmt::format("; --cpu-list leaves {}", cores.empty() ? pus : fmt::format("{} ({})", cores, pus));
    }
    std::string out = fmt::format("shmpi: {} rank{} on {} ({}): map-by {}, bind-to {}{}\n", map.ranks.size(),
                                  map.ranks.size() == 1 ? "" : "s", topology.source(), summary,
                                  map_by_name(request.map_by), bind_name(map.bind), because);
    for (const std::string& n : map.notes) out += fmt::format("shmpi: note: {}\n", n);
    if (map.bound()) {
        for (std::uint32_t r = 0; r < map.ranks.size(); ++r) {
            out += "shmpi: " + format_rank(r, map.ranks[r], true, topology.is_this_system(), &topology) + "\n";
        }
        return out;
    }
    // Unbound ranks all show where any rank may run: described once (each
    // description walks every usable PU, and jobs may be large).
    RankPlacement anywhere;
    anywhere.pus = map.usable;
    const std::string where = format_where(anywhere, false, topology.is_this_system(), &topology);
    for (std::uint32_t r = 0; r < map.ranks.size(); ++r) out += fmt::format("shmpi: rank {} {}\n", r, where);
    return out;
}

std::string format_layout(const Topology& topology, const RankMap* map) {
    // Cores (or PUs without a core) in (package, NUMA, L3, core) order, with
    // their PUs and ranks.
    struct Row {
        int package, numa, l3, core;
        std::vector<int> pus;
        std::set<std::uint32_t> ranks;
    };
    std::vector<Row> rows;
    auto find_row = [&](const Pu& p) -> Row& {
        for (Row& r : rows) {
            if (p.core >= 0 ? r.core == p.core : (r.core < 0 && r.pus.front() == p.os)) return r;
        }
        rows.push_back(Row{p.package, p.numa, p.l3, p.core, {}, {}});
        return rows.back();
    };
    for (const Pu& p : topology.pus()) find_row(p).pus.push_back(p.os);
    for (Row& r : rows) std::sort(r.pus.begin(), r.pus.end());
    if (map != nullptr && map->bound()) {
        for (std::uint32_t r = 0; r < map->ranks.size(); ++r) {
            const RankPlacement& rp = map->ranks[r];
            // A rank shows on its core only when bound to one core (or PU).
            if (rp.place.core < 0 && rp.place.pu < 0) continue;
            for (Row& row : rows) {
                const bool hit = rp.place.core >= 0 ? row.core == rp.place.core
                                                    : std::find(row.pus.begin(), row.pus.end(),
                                                                rp.place.pu) != row.pus.end();
                if (hit) row.ranks.insert(r);
            }
        }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::tie(a.package, a.numa, a.l3) < std::tie(b.package, b.numa, b.l3);
    });
    std::string out;
    int package = -2, numa = -2, l3 = -2;
    for (const Row& row : rows) {
        int indent = 0;
        if (row.package >= 0) {
            if (row.package != package) out += fmt::format("package {}\n", row.package);
            indent += 2;
        }
        if (row.numa >= 0) {
            if (row.numa != numa || row.package != package) {
                const std::vector<int> nodes = topology.numa_nodes(row.numa);
                out += fmt::format("{:{}}NUMA node{} {}\n", "", indent, nodes.size() > 1 ? "s" : "", plus_list(nodes));
            }
            indent += 2;
        }
        if (row.l3 >= 0) {
            if (row.l3 != l3 || row.numa != numa || row.package != package) {
                out += fmt::format("{:{}}L3 {}\n", "", indent, row.l3);
            }
            indent += 2;
        }
        package = row.package;
        numa = row.numa;
        l3 = row.l3;
        std::string line = row.core >= 0 ? fmt::format("core {} (PU{} {})", row.core,
                                                       row.pus.size() == 1 ? "" : "s",
                                                       format_list(row.pus))
                                         : fmt::format("PU {}", row.pus.front());
        if (map != nullptr && map->bound()) {
            if (row.ranks.empty()) {
                line += ": -";
            } else {
                line += row.ranks.size() == 1 ? ": rank" : ": ranks";
                for (std::uint32_t r : row.ranks) line += fmt::format(" {}", r);
            }
        }
        out += fmt::format("{:{}}{}\n", "", indent, line);
    }
    return out;
}

}  // namespace shmpi::place
