#include "place/map.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <utility>

namespace shmpi::place {
namespace {

/// A core (or a PU, for hwthread binding): the unit ranks are dealt over.
struct Slot {
    std::vector<Pu> pus;
};

/// Step 1.
std::vector<Pu> usable_pus(std::span<const Pu> pus, const std::vector<int>& cpu_list) {
    if (cpu_list.empty()) return {pus.begin(), pus.end()};
    std::vector<int> all;
    for (const Pu& p : pus) all.push_back(p.os);
    std::sort(all.begin(), all.end());
    std::vector<Pu> out;
    for (int c : cpu_list) {
        if (!std::binary_search(all.begin(), all.end(), c)) {
            throw PlaceError(fmt::format("--cpu-list '{}': CPU {} is not one of the PUs the job may use ({})",
                                         format_list(cpu_list), c, format_list(all)));
        }
    }
    for (const Pu& p : pus) {
        if (std::binary_search(cpu_list.begin(), cpu_list.end(), p.os)) out.push_back(p);
    }
    return out;
}

/// Step 2.  Slots keep the logical order of their first PU.
std::vector<Slot> make_slots(const std::vector<Pu>& pus, bool per_pu) {
    std::vector<Slot> slots;
    std::map<int, std::size_t> by_core;  // core -> index in slots
    for (const Pu& p : pus) {
        if (per_pu || p.core < 0) {
            slots.push_back(Slot{{p}});
            continue;
        }
        auto [it, fresh] = by_core.emplace(p.core, slots.size());
        if (fresh) slots.push_back(Slot{});
        slots[it->second].pus.push_back(p);
    }
    return slots;
}

/// Step 3.  Spread deals over the objects of the --map-by level, in order of
/// first appearance.  A slot whose PUs lack the level while others have it
/// (an XML topology whose second package has no L3) is an object of its own
/// core (its PU, without a core), as --bind-to binds a rank there to its core
/// (step 5); where no usable PU has the level (`level_somewhere` false) all
/// slots are one object, which is compact order.  Spread by core matters only
/// for slots of one PU (hwthread): the first PU of every core, then the
/// second of every core, ...
std::vector<std::size_t> order_slots(const std::vector<Slot>& slots, const MapBy& by, bool level_somewhere) {
    std::vector<std::size_t> order;
    if (!by.spread) {
        for (std::size_t i = 0; i < slots.size(); ++i) order.push_back(i);
        return order;
    }
    // Each object with its slots.  An object is {0, its index} for the
    // level's own, {1, core} or {2, PU} for a slot that lacks the level.
    std::map<std::pair<int, int>, std::size_t> index;  // object -> position in members
    std::vector<std::vector<std::size_t>> members;
    for (std::size_t i = 0; i < slots.size(); ++i) {
        const Pu& first = slots[i].pus.front();
        std::pair<int, int> obj{0, level_of(first, by.level)};
        if (obj.second < 0 && level_somewhere) {
            obj = first.core >= 0 ? std::pair{1, first.core} : std::pair{2, first.os};
        }
        const auto [it, fresh] = index.emplace(obj, members.size());
        if (fresh) members.emplace_back();
        members[it->second].push_back(i);
    }
    for (std::size_t round = 0; order.size() < slots.size(); ++round) {
        for (const auto& m : members) {
            if (round < m.size()) order.push_back(m[round]);
        }
    }
    return order;
}

/// "L3 cache", "NUMA node": one object of the level.
std::string_view level_noun(Level l) {
    switch (l) {
        case Level::kCore: return "core";
        case Level::kL3: return "L3 cache";
        case Level::kNuma: return "NUMA node";
        case Level::kPackage: return "package";
    }
    return "?";
}

std::string_view level_words(Level l) {
    switch (l) {
        case Level::kCore: return "cores";
        case Level::kL3: return "L3 caches";
        case Level::kNuma: return "NUMA nodes";
        case Level::kPackage: return "packages";
    }
    return "?";
}

}  // namespace

Place common_place(std::span<const Pu> pus) {
    if (pus.empty()) return Place{};
    auto common = [&](auto field) {
        const int v = field(pus.front());
        for (const Pu& p : pus) {
            if (field(p) != v) return -1;
        }
        return v;
    };
    Place pl;
    pl.pu = pus.size() == 1 ? pus.front().os : -1;
    pl.core = common([](const Pu& p) { return p.core; });
    pl.l3 = common([](const Pu& p) { return p.l3; });
    pl.numa = common([](const Pu& p) { return p.numa; });
    pl.package = common([](const Pu& p) { return p.package; });
    return pl;
}

std::vector<Place> RankMap::places() const {
    std::vector<Place> out;
    out.reserve(ranks.size());
    for (const RankPlacement& r : ranks) out.push_back(r.place);
    return out;
}

RankMap compute_map(std::span<const Pu> all_pus, const MapRequest& req) {
    RankMap map;
    // 1. and 2.
    const std::vector<Pu> pus = usable_pus(all_pus, req.cpu_list);
    if (pus.empty()) throw PlaceError("the topology has no PUs to run ranks on");
    const std::vector<Slot> slots = make_slots(pus, req.bind == Bind::kHwthread);
    map.slots = slots.size();
    map.oversubscribed = req.nranks > slots.size();

    // 4. (the checks) and the binding that applies.
    map.bind = req.bind;
    if (req.bind == Bind::kAuto) map.bind = map.oversubscribed ? Bind::kNone : Bind::kCore;
    if (map.oversubscribed && !req.oversubscribe &&
        (req.bind == Bind::kCore || req.bind == Bind::kHwthread)) {
        const bool pu = req.bind == Bind::kHwthread;
        throw PlaceError(fmt::format(
            "--bind-to {}: {} ranks but only {} {} ({}) to bind them to; add "
            "--oversubscribe to let ranks share {}, or use --bind-to none",
            bind_name(req.bind), req.nranks, slots.size(),
            pu ? (slots.size() == 1 ? "PU" : "PUs") : (slots.size() == 1 ? "core" : "cores"),
            [&] {
                std::vector<int> os;
                for (const Pu& p : pus) os.push_back(p.os);
                std::sort(os.begin(), os.end());
                return "PUs " + format_list(os);
            }(),
            pu ? "PUs" : "cores"));
    }
    bool map_level_somewhere = false;  // some usable PU has the --map-by level
    for (const Pu& p : pus) map_level_somewhere = map_level_somewhere || level_of(p, req.map_by.level) >= 0;
    if (req.map_by.level != Level::kCore && req.map_by.spread) {
        if (!map_level_somewhere) {
            map.notes.push_back(fmt::format(
                "--map-by {}: the topology has no {}; mapping by core instead",
                map_by_name(req.map_by), level_words(req.map_by.level)));
        } else {
            // Only some PUs lack the level: name them (step 3).
            std::set<int> cores, os;
            for (const Pu& p : pus) {
                if (level_of(p, req.map_by.level) >= 0) continue;
                if (p.core >= 0) cores.insert(p.core);
                os.insert(p.os);
            }
            if (!os.empty()) {
                const std::vector<int> c(cores.begin(), cores.end()), o(os.begin(), os.end());
                const bool by_core = !c.empty();
                const bool one = by_core ? c.size() == 1 : o.size() == 1;
                const std::string pu_words = fmt::format("PU{} {}", o.size() == 1 ? "" : "s", format_list(o));
                const std::string what =
                    by_core ? fmt::format("core{} {} ({})", one ? "" : "s", format_list(c), pu_words) : pu_words;
                const std::string_view noun = level_noun(req.map_by.level);
                map.notes.push_back(fmt::format(
                    "--map-by {}: {} {} no {}; {} counts as {} {} of its own", map_by_name(req.map_by), what,
                    one ? "has" : "have", one ? noun : level_words(req.map_by.level),
                    one ? "it" : (by_core ? "each of those cores" : "each of those PUs"),
                    req.map_by.level == Level::kL3 ? "an" : "a", noun));
            }
        }
    }

    // 3.
    const std::vector<std::size_t> order = order_slots(slots, req.map_by, map_level_somewhere);

    // 5. and 6.
    Level widen = Level::kCore;
    bool widen_to_level = false;
    switch (map.bind) {
        case Bind::kL3: widen = Level::kL3; widen_to_level = true; break;
        case Bind::kNuma: widen = Level::kNuma; widen_to_level = true; break;
        case Bind::kPackage: widen = Level::kPackage; widen_to_level = true; break;
        default: break;
    }
    bool level_somewhere = false;  // some usable PU has the level to widen to
    if (widen_to_level) {
        for (const Pu& p : pus) level_somewhere = level_somewhere || level_of(p, widen) >= 0;
        if (!level_somewhere) {
            map.notes.push_back(fmt::format(
                "--bind-to {}: the topology has no {}; binding each rank to every usable PU",
                bind_name(map.bind), level_words(widen)));
        }
    }
    map.ranks.resize(req.nranks);
    const Place anywhere = common_place(pus);
    std::vector<int> bare;  // ranks on PUs that lack the level where others have it
    for (std::uint32_t r = 0; r < req.nranks; ++r) {
        RankPlacement& rp = map.ranks[r];
        if (map.bind == Bind::kNone) {
            rp.place = anywhere;  // no copy of every PU per rank: jobs may be large
        } else {
            const Slot& slot = slots[order[r % order.size()]];
            const int obj = widen_to_level ? level_of(slot.pus.front(), widen) : -1;
            if (widen_to_level && (obj >= 0 || !level_somewhere)) {
                // Its object's PUs; where the topology has no such level
                // at all, every usable PU (-1 == -1), as noted above.
                for (const Pu& p : pus) {
                    if (level_of(p, widen) == obj) rp.pus.push_back(p);
                }
            } else {
                // Only some PUs lack the level, this slot's among them: the
                // rank keeps its core, not every PU that also lacks the
                // level, which may span packages.
                if (widen_to_level) bare.push_back(static_cast<int>(r));
                rp.pus = slot.pus;
            }
            for (const Pu& p : rp.pus) rp.cpus.push_back(p.os);
            std::sort(rp.cpus.begin(), rp.cpus.end());
            rp.place = common_place(rp.pus);
        }
    }
    if (!bare.empty()) {
        map.notes.push_back(fmt::format("--bind-to {}: the PUs of rank{} {} have no {}; bound to {} core{} instead",
                                        bind_name(map.bind), bare.size() == 1 ? "" : "s", format_list(bare),
                                        level_words(widen), bare.size() == 1 ? "its" : "their",
                                        bare.size() == 1 ? "" : "s"));
    }
    map.usable = pus;
    return map;
}

}  // namespace shmpi::place
