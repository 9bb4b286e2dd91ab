#include "place/report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <string>
#include <utility>
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

/// "package 1", "L3 2", "NUMA node 0", "NUMA nodes 0+1": a heading of
/// the tree.
std::string object_name(Level level, int index, const Topology& topology) {
    switch (level) {
        case Level::kPackage: return fmt::format("package {}", index);
        case Level::kL3: return fmt::format("L3 {}", index);
        case Level::kNuma: {
            const std::vector<int> nodes = topology.numa_nodes(index);
            return fmt::format("NUMA node{} {}", nodes.size() > 1 ? "s" : "", plus_list(nodes));
        }
        case Level::kCore: return fmt::format("core {}", index);
    }
    return "?";
}

/// Where a rank bound to more than one core is bound, for the tree: the
/// object of the --bind-to level when the rank may run on all of its PUs
/// ("NUMA node 1"), else its cores ("cores 0-3": the topology lacks the
/// level, or --cpu-list leaves part of the object).
std::string bound_object(const RankPlacement& rp, Bind bind, const Topology& topology) {
    Level level = Level::kCore;
    switch (bind) {
        case Bind::kL3: level = Level::kL3; break;
        case Bind::kNuma: level = Level::kNuma; break;
        case Bind::kPackage: level = Level::kPackage; break;
        default: break;
    }
    const int obj = level == Level::kCore ? -1 : level_of(rp.pus.front(), level);
    if (obj >= 0) {
        std::size_t whole = 0;  // PUs of the object
        for (const Pu& p : topology.pus()) whole += level_of(p, level) == obj ? 1 : 0;
        const bool all =
            std::all_of(rp.pus.begin(), rp.pus.end(), [&](const Pu& p) { return level_of(p, level) == obj; });
        if (all && whole == rp.pus.size()) return object_name(level, obj, topology);
    }
    const std::string cores = objects(rp.pus, &Pu::core, "core", "cores");
    return cores.empty() ? objects(rp.pus, &Pu::os, "PU", "PUs") : cores;
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
    // 1. Rows: cores (PUs without a core) in hwloc's logical order, which is
    //    depth-first, so the objects over them come in the tree's order.
    struct Row {
        std::vector<std::pair<Level, int>> over;  // the objects over it, outermost first
        int core = -1;
        std::vector<int> pus;
        std::set<std::uint32_t> own;                          // ranks bound to it (or a PU of it)
        std::map<std::string, std::set<std::uint32_t>> wide;  // ranks bound to more, by where
    };
    std::vector<Row> rows;
    std::map<int, std::size_t> row_of_core, row_of_pu;  // core, PU -> index in rows
    const std::vector<Pu>& pus = topology.pus();
    for (std::size_t i = 0; i < pus.size(); ++i) {
        const Pu& p = pus[i];
        const auto known = p.core >= 0 ? row_of_core.find(p.core) : row_of_core.end();
        std::size_t r = known != row_of_core.end() ? known->second : rows.size();
        if (r == rows.size()) {
            Row row;
            row.core = p.core;
            for (const Level l : topology.nesting(i)) row.over.emplace_back(l, level_of(p, l));
            rows.push_back(std::move(row));
            if (p.core >= 0) row_of_core[p.core] = r;
        }
        rows[r].pus.push_back(p.os);
        row_of_pu[p.os] = r;
    }
    for (Row& r : rows) std::sort(r.pus.begin(), r.pus.end());
    // 2. Each bound rank on every core it may run on.
    const bool ranks = map != nullptr && map->bound();
    if (ranks) {
        for (std::uint32_t r = 0; r < map->ranks.size(); ++r) {
            const RankPlacement& rp = map->ranks[r];
            std::set<std::size_t> on;
            for (const Pu& p : rp.pus) {
                const auto it = row_of_pu.find(p.os);
                if (it != row_of_pu.end()) on.insert(it->second);
            }
            if (on.size() == 1) {
                rows[*on.begin()].own.insert(r);
                continue;
            }
            const std::string where = bound_object(rp, map->bind, topology);
            for (const std::size_t row : on) rows[row].wide[where].insert(r);
        }
    }
    // 3. Each row under the objects the previous row is not in.
    auto rank_list = [](const std::set<std::uint32_t>& rs) {
        std::string out = rs.size() == 1 ? "rank" : "ranks";
        for (const std::uint32_t r : rs) out += fmt::format(" {}", r);
        return out;
    };
    std::string out;
    const std::vector<std::pair<Level, int>>* previous = nullptr;
    for (const Row& row : rows) {
        std::size_t same = 0;
        while (previous != nullptr && same < row.over.size() && same < previous->size() &&
               row.over[same] == (*previous)[same]) {
            ++same;
        }
        for (std::size_t k = same; k < row.over.size(); ++k) {
            out += fmt::format("{:{}}{}\n", "", 2 * k, object_name(row.over[k].first, row.over[k].second, topology));
        }
        previous = &row.over;
        std::string line = row.core >= 0 ? fmt::format("core {} (PU{} {})", row.core, row.pus.size() == 1 ? "" : "s",
                                                       format_list(row.pus))
                                         : fmt::format("PU {}", row.pus.front());
        if (ranks) {
            std::string who = row.own.empty() ? "" : rank_list(row.own);
            for (const auto& [where, rs] : row.wide) {
                who += fmt::format("{}{} (bound to {})", who.empty() ? "" : "; ", rank_list(rs), where);
            }
            line += ": " + (who.empty() ? std::string("-") : who);
        }
        out += fmt::format("{:{}}{}\n", "", 2 * row.over.size(), line);
    }
    return out;
}

}  // namespace shmpi::place
