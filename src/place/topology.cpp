#include "place/topology.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>

namespace shmpi::place {
namespace {

/// Owns an hwloc bitmap.
struct Bitmap {
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    Bitmap() = default;
    Bitmap(const Bitmap&) = delete;
    Bitmap& operator=(const Bitmap&) = delete;
    ~Bitmap() { hwloc_bitmap_free(b); }
};

/// hwloc's plugins that placement never needs.  hwloc_topology_init()
/// loads every plugin of its directory (Debian's libhwloc-plugins: gl,
/// opencl, pci, xml_libxml), and with them libxml2, ICU, OpenCL, X11 and
/// libpciaccess: 7-20 ms of every mpirun's start on the 2-CPU VM, for I/O
/// objects that hwloc 2 filters out by default anyway.  The libxml2 XML
/// reader stays where an XML file is read (hwloc's own reader takes what
/// lstopo writes, libxml2 any well-formed XML).
constexpr const char* kIoPlugins = "hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero";
constexpr const char* kXmlPlugin = "hwloc_xml_libxml";
constexpr const char* kBlacklistVar = "HWLOC_PLUGINS_BLACKLIST";

/// A fresh, not yet loaded hwloc topology (nullptr when hwloc fails, with
/// errno set), its plugins loaded without those placement does not need,
/// unless the user chose hwloc's plugins or components themselves.  The
/// variable is set only around hwloc_topology_init (which loads them), so
/// the ranks, which get mpirun's environment, never see it.  (mpirun and
/// shmpi-topo load their topology before they start any thread.)
hwloc_topology_t init_topology_lean(bool reads_xml) {
    bool lean = true;
    for (const char* var : {kBlacklistVar, "HWLOC_PLUGINS_PATH", "HWLOC_COMPONENTS"}) {
        const char* v = std::getenv(var);
        if (v != nullptr && *v != '\0') lean = false;
    }
    if (lean) {
        const std::string skip = reads_xml ? kIoPlugins : fmt::format("{},{}", kIoPlugins, kXmlPlugin);
        setenv(kBlacklistVar, skip.c_str(), 1);
    }
    hwloc_topology_t t = nullptr;
    const int rc = hwloc_topology_init(&t);
    const int saved = errno;
    if (lean) unsetenv(kBlacklistVar);
    errno = saved;
    return rc == 0 ? t : nullptr;
}

/// The same, for a topology read from a file or a description.
hwloc_topology_t init_topology(bool reads_xml) {
    hwloc_topology_t t = init_topology_lean(reads_xml);
    if (t == nullptr) {
        throw PlaceError(fmt::format("hwloc_topology_init failed: {}", std::strerror(errno)));
    }
    return t;
}

int logical_of(hwloc_obj_t obj) { return obj != nullptr ? static_cast<int>(obj->logical_index) : -1; }

bool looks_like_file(std::string_view spec) {
    struct stat st {};
    const std::string s(spec);
    return stat(s.c_str(), &st) == 0 || spec.find('/') != std::string_view::npos ||
           (spec.size() > 4 && spec.substr(spec.size() - 4) == ".xml");
}

/// What hwloc's default topology is when hwloc says it is not this
/// machine: the file or description of the one variable that chose it, else
/// the variables that are set.
std::string foreign_default_source() {
    auto value = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v != nullptr ? v : "");
    };
    const std::string xml = value("HWLOC_XMLFILE"), synthetic = value("HWLOC_SYNTHETIC");
    if (!xml.empty() && synthetic.empty()) return fmt::format("XML file '{}' from HWLOC_XMLFILE", xml);
    if (xml.empty() && !synthetic.empty()) {
        return fmt::format("synthetic topology '{}' from HWLOC_SYNTHETIC", synthetic);
    }
    std::vector<std::string> set;
    for (const char* name : {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT", "HWLOC_CPUID_PATH", "HWLOC_THISSYSTEM",
                             "HWLOC_COMPONENTS"}) {
        if (!value(name).empty()) set.emplace_back(name);
    }
    if (set.empty()) return "hwloc's default topology, which hwloc says is not this machine";
    std::string names;
    for (std::size_t i = 0; i < set.size(); ++i) {
        names += (i == 0 ? "" : i + 1 == set.size() ? " and " : ", ") + set[i];
    }
    return fmt::format("hwloc's default topology, which {} make{} another machine's", names,
                       set.size() == 1 ? "s" : "");
}

}  // namespace

unsigned long long synthetic_pus(std::string_view spec) {
    unsigned long long pus = 0;
    std::size_t at = 0;
    while (at < spec.size()) {
        const std::size_t end = std::min(spec.find_first_of(" \t\n", at), spec.size());
        const std::string_view word = spec.substr(at, end - at);
        at = end + 1;
        if (word.empty() || word.front() == '[') continue;  // a memory level: no arity
        const std::size_t colon = word.find(':');
        std::string_view digits = colon == std::string_view::npos ? word : word.substr(colon + 1);
        digits = digits.substr(0, digits.find_first_not_of("0123456789"));
        if (digits.empty()) continue;
        unsigned long long arity = 0;
        for (const char c : digits) arity = std::min(arity * 10 + static_cast<unsigned>(c - '0'), kMaxSyntheticPus + 1);
        pus = std::min((pus == 0 ? 1 : pus) * arity, kMaxSyntheticPus + 1);
    }
    return pus;
}

Topology Topology::from_environment() {
    const char* spec = std::getenv(kEnvTopology);
    if (spec == nullptr || *spec == '\0') return this_machine();
    return from_spec(spec, kEnvTopology);
}

Topology Topology::this_machine() {
    Topology t;
    const char* xml = std::getenv("HWLOC_XMLFILE");
    t.topo_ = init_topology_lean(xml != nullptr && *xml != '\0');
    if (t.topo_ == nullptr || hwloc_topology_load(t.topo_) != 0) {
        // Without hwloc's view, every CPU we may use is a core of its own:
        // binding to cores still works, wider levels fall back to all CPUs.
        if (t.topo_ != nullptr) hwloc_topology_destroy(t.topo_);
        t.topo_ = nullptr;
        t.this_system_ = true;
        t.source_ = "this machine, seen only through its CPU affinity as hwloc could not read it";
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            for (int c = 0; c < CPU_SETSIZE; ++c) {
                if (CPU_ISSET(c, &set)) t.pus_.push_back(Pu{c, static_cast<int>(t.pus_.size()), -1, -1, -1});
            }
        }
        if (t.pus_.empty()) t.pus_.push_back(Pu{0, 0, -1, -1, -1});
        t.nesting_.resize(t.pus_.size());
        return t;
    }
    t.this_system_ = hwloc_topology_is_thissystem(t.topo_) != 0;
    // hwloc's own variables (HWLOC_XMLFILE, HWLOC_SYNTHETIC, ...) can make
    // its default topology another machine's.
    t.source_ = t.this_system_ ? "this machine" : foreign_default_source();
    t.load_table(t.this_system_);
    return t;
}

Topology Topology::from_spec(std::string_view spec, std::string_view what) {
    Topology t;
    const std::string s(spec);
    const bool file = looks_like_file(spec);  // (a stat(): asked once)
    t.topo_ = init_topology(file);
    if (file) {
        struct stat st {};
        if (stat(s.c_str(), &st) != 0) {
            throw PlaceError(fmt::format("{}='{}': cannot read the XML file: {}", what, s, std::strerror(errno)));
        }
        if (hwloc_topology_set_xml(t.topo_, s.c_str()) != 0 || hwloc_topology_load(t.topo_) != 0) {
            throw PlaceError(
                fmt::format("{}='{}': not an hwloc XML topology (write one with lstopo FILE.xml)", what, s));
        }
        t.source_ = fmt::format("XML file '{}'", s);
    } else {
        // hwloc builds a large one slowly (a minute for 8192 PUs), before
        // mpirun's --timeout runs.
        if (synthetic_pus(spec) > kMaxSyntheticPus) {
            throw PlaceError(fmt::format("{}='{}': describes more than {} PUs, the most a synthetic topology may have",
                                         what, s, kMaxSyntheticPus));
        }
        if (hwloc_topology_set_synthetic(t.topo_, s.c_str()) != 0 ||
            hwloc_topology_load(t.topo_) != 0) {
            throw PlaceError(
                fmt::format("{}='{}': neither an XML file nor an hwloc synthetic description (such as "
                            "'pack:2 numa:2 l3:2 core:4 pu:1')",
                            what, s));
        }
        t.source_ = fmt::format("synthetic topology '{}'", s);
    }
    // An XML file written on this machine still describes it, but placement
    // treats every file as foreign: its PUs may not be ours to bind to.
    t.this_system_ = false;
    t.load_table(false);
    if (t.pus_.empty()) {
        throw PlaceError(fmt::format("{}='{}': the topology has no PUs", what, s));
    }
    return t;
}

void Topology::load_table(bool restrict_to_affinity) {
    // 1. The PUs we may use: all of them, or those of our CPU affinity.
    Bitmap allowed;
    hwloc_bitmap_copy(allowed.b, hwloc_topology_get_allowed_cpuset(topo_));
    if (restrict_to_affinity) {
        Bitmap mine;
        if (hwloc_get_cpubind(topo_, mine.b, HWLOC_CPUBIND_PROCESS) == 0 &&
            hwloc_bitmap_intersects(mine.b, allowed.b)) {
            hwloc_bitmap_and(allowed.b, allowed.b, mine.b);
        }
    }
    // 2. One row per PU with its containers.  NUMA nodes are memory children
    //    in hwloc 2, not ancestors, so they are found by cpuset.
    const int npu = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU);
    const int nnuma = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < npu; ++i) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
        if (!hwloc_bitmap_isset(allowed.b, pu->os_index)) continue;
        Pu row;
        row.os = static_cast<int>(pu->os_index);
        row.core = logical_of(hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu));
        row.l3 = logical_of(hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_L3CACHE, pu));
        row.package = logical_of(hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, pu));
        // Every node over the PU: the first is its place for mapping; the
        // others (memory of another kind under the same cores) are listed
        // with it (numa_nodes()).
        for (int n = 0; n < nnuma; ++n) {
            hwloc_obj_t node = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
            if (node->cpuset == nullptr || !hwloc_bitmap_isset(node->cpuset, pu->os_index)) continue;
            if (row.numa < 0) row.numa = n;
            std::vector<int>& all = numa_nodes_[row.numa];
            if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
        }
        pus_.push_back(row);
        nesting_.push_back(nesting_of(pu, row));
    }
}

std::vector<Level> Topology::nesting_of(hwloc_obj_t pu, const Pu& row) const {
    // The PU's NUMA node (row.numa) is a memory child of a normal object,
    // perhaps below memory-side caches: it sits inside that object.
    hwloc_obj_t numa_parent = nullptr;
    if (row.numa >= 0) {
        numa_parent = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(row.numa))->parent;
        while (numa_parent != nullptr && numa_parent->type == HWLOC_OBJ_MEMCACHE) numa_parent = numa_parent->parent;
    }
    std::vector<hwloc_obj_t> up;  // the PU's ancestors, innermost first
    for (hwloc_obj_t o = pu->parent; o != nullptr; o = o->parent) up.push_back(o);
    std::vector<Level> out;
    for (auto it = up.rbegin(); it != up.rend(); ++it) {
        if ((*it)->type == HWLOC_OBJ_PACKAGE && row.package >= 0) out.push_back(Level::kPackage);
        if ((*it)->type == HWLOC_OBJ_L3CACHE && row.l3 >= 0) out.push_back(Level::kL3);
        if (*it == numa_parent) out.push_back(Level::kNuma);
    }
    // A node attached to the PU itself: innermost.
    if (row.numa >= 0 && std::find(out.begin(), out.end(), Level::kNuma) == out.end()) out.push_back(Level::kNuma);
    return out;
}

const std::vector<Level>& Topology::nesting(std::size_t i) const {
    static const std::vector<Level> kNone;
    return i < nesting_.size() ? nesting_[i] : kNone;
}

Topology::Topology(Topology&& o) noexcept
    : topo_(std::exchange(o.topo_, nullptr)),
      pus_(std::move(o.pus_)),
      nesting_(std::move(o.nesting_)),
      numa_nodes_(std::move(o.numa_nodes_)),
      this_system_(o.this_system_),
      source_(std::move(o.source_)) {}

Topology& Topology::operator=(Topology&& o) noexcept {
    if (this != &o) {
        if (topo_ != nullptr) hwloc_topology_destroy(topo_);
        topo_ = std::exchange(o.topo_, nullptr);
        pus_ = std::move(o.pus_);
        nesting_ = std::move(o.nesting_);
        numa_nodes_ = std::move(o.numa_nodes_);
        this_system_ = o.this_system_;
        source_ = std::move(o.source_);
    }
    return *this;
}

Topology::~Topology() {
    if (topo_ != nullptr) hwloc_topology_destroy(topo_);
}

int Topology::count(Level level) const {
    std::set<int> seen;
    for (const Pu& p : pus_) {
        const int v = level_of(p, level);
        if (v >= 0) seen.insert(v);
    }
    return static_cast<int>(seen.size());
}

std::vector<int> Topology::numa_nodes(int numa) const {
    const auto it = numa_nodes_.find(numa);
    return it != numa_nodes_.end() ? it->second : std::vector<int>{numa};
}

int Topology::numa_count() const {
    std::set<int> all;
    for (const auto& [first, nodes] : numa_nodes_) all.insert(nodes.begin(), nodes.end());
    return static_cast<int>(all.size());
}

std::string Topology::summary() const {
    auto plural = [](int n, const char* one, const char* many) {
        return fmt::format("{} {}", n, n == 1 ? one : many);
    };
    std::string out;
    auto add = [&](int n, const char* one, const char* many) {
        if (n == 0) return;
        if (!out.empty()) out += ", ";
        out += plural(n, one, many);
    };
    add(count(Level::kPackage), "package", "packages");
    add(numa_count(), "NUMA node", "NUMA nodes");
    add(count(Level::kL3), "L3 cache", "L3 caches");
    add(count(Level::kCore), "core", "cores");
    add(static_cast<int>(pus_.size()), "PU", "PUs");
    return out;
}

}  // namespace shmpi::place
