// The words of a placement request: --bind-to, --map-by, --cpu-list.
//
// Header-only, so that mpirun's argument parser (tools/launcher/
// launcher_args.*) can name the policies without linking hwloc.  The
// meaning of each policy is in map.hpp.
#pragma once

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shmpi::place {

/// What one rank is bound to (--bind-to).  kAuto binds to a core when the
/// ranks fit the cores and leaves an oversubscribed job unbound.
enum class Bind { kAuto, kNone, kHwthread, kCore, kL3, kNuma, kPackage };

/// The level that --map-by distributes ranks over.
enum class Level { kCore, kL3, kNuma, kPackage };

/// --map-by LEVEL[:compact|:spread].  Compact fills one object of the level
/// (its cores in order) before the next, so consecutive ranks share it;
/// spread deals ranks round-robin over the objects, so consecutive ranks sit
/// on different ones (Open MPI's `--map-by numa`).
struct MapBy {
    Level level = Level::kCore;
    bool spread = false;
    bool operator==(const MapBy&) const = default;
};

inline constexpr const char* kBindWords = "none, hwthread, core, l3cache, numa or package";
inline constexpr const char* kMapWords =
    "core, l3cache, numa or package, optionally followed by :compact or :spread";

/// The Bind that `word` names, or nothing.  "auto" is not a word users type.
/// "socket", Open MPI's and MPICH's word, is package.
inline std::optional<Bind> parse_bind(std::string_view word) {
    if (word == "none") return Bind::kNone;
    if (word == "hwthread") return Bind::kHwthread;
    if (word == "core") return Bind::kCore;
    if (word == "l3cache") return Bind::kL3;
    if (word == "numa") return Bind::kNuma;
    if (word == "package" || word == "socket") return Bind::kPackage;
    return std::nullopt;
}

inline std::string_view bind_name(Bind b) {
    switch (b) {
        case Bind::kAuto: return "auto";
        case Bind::kNone: return "none";
        case Bind::kHwthread: return "hwthread";
        case Bind::kCore: return "core";
        case Bind::kL3: return "l3cache";
        case Bind::kNuma: return "numa";
        case Bind::kPackage: return "package";
    }
    return "?";
}

inline std::string_view level_name(Level l) {
    switch (l) {
        case Level::kCore: return "core";
        case Level::kL3: return "l3cache";
        case Level::kNuma: return "numa";
        case Level::kPackage: return "package";
    }
    return "?";
}

/// Parses LEVEL[:compact|:spread] ("socket" is package, as for
/// parse_bind()).  Without a modifier, core is compact and the other levels
/// spread (as Open MPI's --map-by numa does).
inline std::optional<MapBy> parse_map_by(std::string_view text) {
    const std::size_t colon = text.find(':');
    const std::string_view word = text.substr(0, colon);
    MapBy m;
    if (word == "core") {
        m.level = Level::kCore;
    } else if (word == "l3cache") {
        m.level = Level::kL3;
    } else if (word == "numa") {
        m.level = Level::kNuma;
    } else if (word == "package" || word == "socket") {
        m.level = Level::kPackage;
    } else {
        return std::nullopt;
    }
    m.spread = m.level != Level::kCore;
    if (colon != std::string_view::npos) {
        const std::string_view mod = text.substr(colon + 1);
        if (mod == "compact") {
            m.spread = false;
        } else if (mod == "spread") {
            m.spread = true;
        } else {
            return std::nullopt;
        }
    }
    return m;
}

/// "numa:spread", "core:compact".
inline std::string map_by_name(const MapBy& m) {
    return std::string(level_name(m.level)) + (m.spread ? ":spread" : ":compact");
}

/// The most CPUs one --cpu-list may name: far beyond any machine's, and a
/// bound on what a list such as "0-2000000000" would allocate.
inline constexpr long long kMaxCpuListCpus = 65536;

/// Parses a CPU list such as "0,2,4-7" (OS indexes) into a sorted list
/// without duplicates.  Nothing if the text is empty, malformed, names a
/// number beyond int, or names more than kMaxCpuListCpus CPUs (each range
/// counted whole); `problem`, when given, then says why, in words that
/// follow "--cpu-list 'TEXT': " ("the value is empty", "70001 CPUs, but a
/// CPU list may name at most 65536").
inline std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string* problem = nullptr) {
    auto fail = [&](std::string why) -> std::optional<std::vector<int>> {
        if (problem != nullptr) *problem = std::move(why);
        return std::nullopt;
    };
    if (text.empty()) return fail("the value is empty");
    const std::string malformed = "expected CPU numbers and ranges such as 0,2,4-7";
    // 1. The ranges, each checked; a number too large for int is named.
    std::vector<std::pair<int, int>> ranges;
    std::string too_large;
    auto number = [&](std::string_view s) -> std::optional<int> {
        int v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range && p == s.data() + s.size() && too_large.empty()) {
            too_large = std::string(s);
        }
        if (ec != std::errc{} || p != s.data() + s.size() || v < 0) return std::nullopt;
        return v;
    };
    long long count = 0;
    while (true) {
        const std::size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        const std::size_t dash = item.find('-');
        const auto lo = number(item.substr(0, dash));
        const auto hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
        if (!too_large.empty()) return fail(too_large + " is too large for a CPU number");
        if (!lo || !hi || *hi < *lo) return fail(malformed);
        ranges.emplace_back(*lo, *hi);
        count += static_cast<long long>(*hi) - *lo + 1;
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
        if (text.empty()) return fail(malformed);  // trailing comma
    }
    // 2. Only then the CPUs, so that a huge range allocates nothing.
    if (count > kMaxCpuListCpus) {
        return fail(std::to_string(count) + " CPUs, but a CPU list may name at most " +
                    std::to_string(kMaxCpuListCpus));
    }
    std::vector<int> cpus;
    cpus.reserve(static_cast<std::size_t>(count));
    for (const auto& [lo, hi] : ranges) {
        for (int c = lo;; ++c) {
            cpus.push_back(c);
            if (c == hi) break;  // not c <= hi: hi may be INT_MAX
        }
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

/// "0-3,8,10-11": the inverse of parse_cpu_list for a sorted list.
inline std::string format_list(const std::vector<int>& sorted) {
    std::string out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(sorted[i]);
        if (j > i) out += '-' + std::to_string(sorted[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace shmpi::place
