#include "coll/select.hpp"

#include <unistd.h>  // environ

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "coll/shm_team.hpp"
#include "errors.hpp"

namespace shmpi::coll {
namespace {

/// One algorithm of a collective: its name in SHMPI_COLL_*, and a function
/// that runs it, or returns false (having touched nothing) when it cannot
/// take the call.  Row 0 of every table is the linear reference, which
/// takes every call.
template <class Fn>
struct Algorithm {
    const char* name;
    Fn run;
};

// ---------------------------------------------------------------- tables
//
// Add a shared-memory algorithm as a row, and teach the choose_* function of
// its collective (below) when to take it.

using BarrierFn = bool (*)(const Team&);
using BcastFn = bool (*)(const Team&, void*, std::int64_t, int, Landing*, Source*);
using ReduceFn = bool (*)(const Team&, const void*, void*, std::int64_t, const Reduction&, int);
using AllreduceFn = bool (*)(const Team&, const void*, void*, std::int64_t, const Reduction&);
using GatherFn = bool (*)(const Team&, const void*, std::int64_t, void*, int, Landing*);
using GathervFn = bool (*)(const Team&, const void*, std::int64_t, void*, Blocks, int);
using ScatterFn = bool (*)(const Team&, const void*, void*, std::int64_t, int, Landing*, Source*);
using ScattervFn = bool (*)(const Team&, const void*, Blocks, void*, std::int64_t, int);
using AllgatherFn = bool (*)(const Team&, const void*, std::int64_t, void*, Landing*, Source*);
using AllgathervFn = bool (*)(const Team&, const void*, std::int64_t, void*, Blocks);
using AlltoallFn = bool (*)(const Team&, std::int64_t, PeerBlocks, PeerBlocks);
using AlltoallvFn = bool (*)(const Team&, PeerBlocks, PeerBlocks);
using ReduceScatterFn = bool (*)(const Team&, const void*, void*, const std::int64_t*, const Reduction&);
using ReduceScatterBlockFn = bool (*)(const Team&, const void*, void*, std::int64_t, const Reduction&);
using ScanFn = bool (*)(const Team&, const void*, void*, std::int64_t, const Reduction&);

/// A linear function (void, takes every call) as an algorithm row:
/// always<f> runs f and returns true.
template <auto F>
struct Always;
template <class... A, void (*F)(A...)>
struct Always<F> {
    static bool run(A... args) {
        F(args...);
        return true;
    }
};
template <auto F>
constexpr auto always = &Always<F>::run;

/// The same for a linear function that fills only dense buffers: the
/// Landing (coll.hpp) of the last argument is left unfilled, so the caller
/// unpacks the dense buffer.
template <auto F>
struct Dense;
template <class... A, void (*F)(A...)>
struct Dense<F> {
    static bool run(A... args, Landing* /*land*/) {
        F(args...);
        return true;
    }
};
template <auto F>
constexpr auto dense = &Dense<F>::run;

/// The linear Bcast, Allgather and Scatter: a typed send buffer (Source)
/// packed first.
bool bcast_dense(const Team& team, void* buf, std::int64_t bytes, int root, Landing*, Source* src) {
    if (src != nullptr) src->dense();
    bcast_linear(team, buf, bytes, root);
    return true;
}
bool allgather_dense(const Team& team, const void* send, std::int64_t block, void* recv, Landing*,
                     Source* mine) {
    if (mine != nullptr) mine->dense();
    allgather_linear(team, send, block, recv);
    return true;
}
bool scatter_dense(const Team& team, const void* send, void* recv, std::int64_t block, int root, Landing*,
                   Source* src) {
    if (src != nullptr) src->dense();
    scatter_linear(team, send, recv, block, root);
    return true;
}

constexpr Algorithm<BarrierFn> kBarrier[] = {
    {"linear", always<barrier_linear>},
    {"shm", barrier_shm},
};
constexpr Algorithm<BcastFn> kBcast[] = {
    {"linear", bcast_dense},
    {"shm", bcast_shm},
    {"tree", bcast_shm_tree},
    {"direct", bcast_shm_direct},
};
constexpr Algorithm<ReduceFn> kReduce[] = {
    {"linear", always<reduce_linear>},
    {"shm", reduce_shm},
    {"tree", reduce_shm_tree},
    {"rsag", reduce_shm_rsag},
    {"push", reduce_shm_push},
};
constexpr Algorithm<AllreduceFn> kAllreduce[] = {
    {"linear", always<allreduce_linear>}, {"shm", allreduce_shm},       {"tree", allreduce_shm_tree},
    {"rsag", allreduce_shm_rsag},         {"push", allreduce_shm_push},
};
constexpr Algorithm<GatherFn> kGather[] = {
    {"linear", dense<gather_linear>},
    {"shm", gather_shm},
};
constexpr Algorithm<GathervFn> kGatherv[] = {
    {"linear", always<gatherv_linear>},
    {"shm", gatherv_shm},
};
constexpr Algorithm<ScatterFn> kScatter[] = {
    {"linear", scatter_dense},
    {"shm", scatter_shm},
};
constexpr Algorithm<ScattervFn> kScatterv[] = {
    {"linear", always<scatterv_linear>},
    {"shm", scatterv_shm},
};
constexpr Algorithm<AllgatherFn> kAllgather[] = {
    {"linear", allgather_dense},
    {"shm", allgather_shm},
};
constexpr Algorithm<AllgathervFn> kAllgatherv[] = {
    {"linear", always<allgatherv_linear>},
    {"shm", allgatherv_shm},
};
/// MPI_Alltoall (every block the same size), then MPI_Alltoallv and
/// MPI_Alltoallw; typed blocks.
bool alltoall_typed_linear(const Team& team, std::int64_t /*block*/, PeerBlocks send, PeerBlocks recv) {
    alltoallw_linear(team, send, recv);
    return true;
}
constexpr Algorithm<AlltoallFn> kAlltoall[] = {
    {"linear", alltoall_typed_linear},
    {"shm", alltoall_shm},
    {"direct", alltoall_direct},
};
constexpr Algorithm<AlltoallvFn> kAlltoallv[] = {
    {"linear", always<alltoallw_linear>},
    {"shm", alltoallv_shm},
};
constexpr Algorithm<ReduceScatterFn> kReduceScatter[] = {
    {"linear", always<reduce_scatter_linear>},
    {"shm", reduce_scatter_shm},
    {"rsag", reduce_scatter_shm_rsag},
};
constexpr Algorithm<ReduceScatterBlockFn> kReduceScatterBlock[] = {
    {"linear", always<reduce_scatter_block_linear>},
    {"shm", reduce_scatter_block_shm},
    {"rsag", reduce_scatter_block_shm_rsag},
};
constexpr Algorithm<ScanFn> kScan[] = {
    {"linear", always<scan_linear>},
    {"shm", scan_shm},
    {"chain", scan_chain},
};
constexpr Algorithm<ScanFn> kExscan[] = {
    {"linear", always<exscan_linear>},
    {"shm", exscan_shm},
    {"chain", exscan_chain},
};

template <class Fn, std::size_t N>
std::vector<const char*> names_of(const Algorithm<Fn> (&table)[N]) {
    std::vector<const char*> v;
    for (const auto& a : table) v.push_back(a.name);
    return v;
}

/// The algorithm names of collective `k`, in table order.
std::vector<const char*> names(Kind k) {
    switch (k) {
        case Kind::Barrier: return names_of(kBarrier);
        case Kind::Bcast: return names_of(kBcast);
        case Kind::Reduce: return names_of(kReduce);
        case Kind::Allreduce: return names_of(kAllreduce);
        case Kind::Gather: return names_of(kGather);
        case Kind::Gatherv: return names_of(kGatherv);
        case Kind::Scatter: return names_of(kScatter);
        case Kind::Scatterv: return names_of(kScatterv);
        case Kind::Allgather: return names_of(kAllgather);
        case Kind::Allgatherv: return names_of(kAllgatherv);
        case Kind::Alltoall:
            return names_of(kAlltoall);
        case Kind::Alltoallv:
            return names_of(kAlltoallv);
        case Kind::ReduceScatter: return names_of(kReduceScatter);
        case Kind::ReduceScatterBlock: return names_of(kReduceScatterBlock);
        case Kind::Scan: return names_of(kScan);
        case Kind::Exscan: return names_of(kExscan);
    }
    return {};
}

int index_of(Kind k, const std::string& name) {
    const std::vector<const char*> v = names(k);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (name == v[i]) return static_cast<int>(i);
    }
    return -1;
}

std::string upper(const char* s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

// ------------------------------------------------------- automatic choice
//
// Each returns an index into its table; docs/COLLECTIVES.md keeps the table.
// A team with shared-memory state takes the "shm" row (row 1), which picks
// its variant by size itself (select_shm.cpp: the flag tree below
// SHMPI_COLL_SHM_DIRECT / SHMPI_COLL_SHM_RSAG bytes, single copy or
// reduce-scatter + allgather from there); the collectives without a
// shared-memory algorithm run linear.

int choose_shm(const Team& team) { return team.shm != nullptr ? 1 : 0; }

/// Alltoall: `shm` while a member's n blocks fit its cells, then `direct`
/// for blocks above ShmTuning::alltoall_direct(), else `linear`.  Every
/// member sees the same team and block size.
int choose_alltoall(const Team& team, std::int64_t block) {
    if (team.shm == nullptr) return 0;
    if (alltoall_fits_cells(*team.shm, block)) return 1;
    return block > team.shm->tuning().alltoall_direct(team.shm->size()) ? 2 : 0;
}

/// Scan and Exscan in shared memory (prefix_shm.cpp) gather every member's
/// contribution everywhere: taken automatically while that is at most this
/// many bytes, and only where members do not outnumber CPUs.  They gain at
/// 2 ranks (0.156 against 0.177 us at 8 B); with more members than CPUs one
/// run had them at 7.5 against 2.6 us (4 ranks on 2 CPUs) and the next ones
/// even within the noise (3.9-5.8 us both), so there they stay linear: the
/// allgather makes every member wait for every other, where the linear
/// scan lets rank r wait only for the ranks below it.
constexpr std::int64_t kComposeMax = 64 * 1024;
int choose_prefix(const Team& team, std::int64_t moved_bytes) {
    return team.shm != nullptr && !team.shm->crowded() && moved_bytes <= kComposeMax ? 1 : 0;
}

/// Scan and Exscan run down the chain in shared memory (scan_chain_shm.cpp)
/// with up to 3 members and, with more, from 512 bytes a rank per member;
/// below that, as composed (choose_prefix()) or linear.  On the 2-CPU
/// development VM (docs/BENCHMARKS.md, session 49), chain over what ran
/// before, two rounds: 0.49-0.83 at 2 and 3 ranks from 64 B; 4 ranks
/// 1.0-1.3 at 64 B-1 KiB, 0.40-1.1 from 2 KiB; 8 ranks 1.1-1.7 up to 1 KiB,
/// 0.55-1.1 from 4 KiB; 16 ranks 1.2-1.9 up to 2 KiB, 0.28-0.59 from 8 KiB.
/// With more ranks than CPUs, a message that fits a release line goes down
/// the chain too (inline, a line a call; session 52, 8 B and 64 B, chain
/// against linear, Open MPI in brackets, us): a loop of calls at 4 ranks
/// 0.19-0.28 against 0.92-1.10 (0.18-0.38), 8 ranks 0.32-0.38 against
/// 3.6-6.3 (0.49-1.06), 16 ranks 0.68-0.98 against 21-36 (1.09-2.17);
/// after a barrier each, 4 ranks 0.76-0.83 against 1.57-1.69, 8 ranks
/// 5.8-7.9 against 5.4-10.6, 16 ranks 36-54 against 24-30 (60-70).
constexpr std::int64_t kScanChainPerMember = 512;
int choose_scan(const Team& team, std::int64_t bytes) {
    if (team.size <= 3 || bytes >= kScanChainPerMember * team.size) return 2;
    if (team.shm != nullptr && team.shm->crowded() && bytes <= static_cast<std::int64_t>(shm::kCollInline)) {
        return 2;
    }
    return choose_prefix(team, bytes * team.size);
}

// ---------------------------------------------------------------- running

/// Says once per collective that a forced algorithm declined a call.
void say_declined(Kind k, const char* name, const Team& team) {
    static std::array<bool, kKinds> said{};
    bool& s = said[static_cast<std::size_t>(k)];
    if (s) return;
    s = true;
    const std::uint32_t world = team.world != nullptr ? (*team.world)[static_cast<std::size_t>(team.rank)] : 0;
    std::fprintf(stderr,
                 "shmpi: rank %u: SHMPI_COLL_%s=%s cannot take this call (team of %d ranks); "
                 "using the linear algorithm\n",
                 world, upper(kind_name(k)).c_str(), name, team.size);
    std::fflush(stderr);
}

/// Runs the forced or automatically chosen algorithm of `k`, and the linear
/// one when it declines.
///
/// What the members of a call must agree on besides the collective: with
/// it, the call's signature (ShmTeam::CallSignature).
struct Agreed {
    int root;            ///< -1 if none
    std::int64_t bytes;  ///< what every member must agree on, 0 if nothing
    std::int64_t unit = 0;  ///< a reduction's element bytes
};

/// `sig` and `k` make the call's signature: on a team with shared-memory
/// state every member publishes it first, whatever algorithm then runs, so
/// that a member left waiting by a peer that made another call ends the job
/// with an error instead of hanging (ShmTeam::check_calls).
template <class Fn, std::size_t N, class... Args>
void run(const Selection& s, Kind k, const Algorithm<Fn> (&table)[N], int automatic, const Team& team,
         const Agreed& sig, const Args&... args) {
    if (team.shm != nullptr) {
        team.shm->note_call({static_cast<int>(k), sig.root, sig.bytes, sig.unit});
        // The team's first call probes single copies (one collective step):
        // here every member makes it at the same call, whatever algorithm
        // then runs; the "shm" rows (select_shm.cpp) rely on it.
        team.shm->single_copy();
    }
    // One member has nobody to talk to: the linear algorithms make that a
    // local copy, and nothing else needs trying (or reporting).
    const int forced = team.size > 1 ? s.forced(k) : 0;
    const int i = forced >= 0 ? forced : automatic;
    if (i > 0 && i < static_cast<int>(N)) {
        // Row 1 (a team in shared memory, chosen automatically) by a
        // constant index: the compiler calls it directly, and may inline it,
        // where the looked-up pointer cost a small call an indirect call and
        // a frame of its own.
        if (i == 1 ? table[1].run(team, args...) : table[i].run(team, args...)) return;
        if (forced >= 0) say_declined(k, table[i].name, team);
    }
    table[0].run(team, args...);
}

/// run() for a reduction of elements of `red`.  With a user operation
/// (whose function sees whole elements of each caller's datatype), members
/// whose elements differ in size cut the data at different places: where
/// that made nobody wait, the result holds misaligned folds, so the member
/// compares the signatures of the members it heard from before it returns.
template <class Fn, std::size_t N, class... Args>
void run_reduction(const Selection& s, Kind k, const Algorithm<Fn> (&table)[N], int automatic, const Team& team,
                   int root, std::int64_t count, const Reduction& red, const Args&... args) {
    run(s, k, table, automatic, team, Agreed{root, count * red.elem_bytes, red.elem_bytes}, args...);
    if (red.user && team.shm != nullptr) team.shm->check_call();
}

}  // namespace

const char* kind_name(Kind k) {
    static constexpr const char* kNames[kKinds] = {
        "barrier",   "bcast",      "reduce",   "allreduce",      "gather",
        "gatherv",   "scatter",    "scatterv", "allgather",      "allgatherv",
        "alltoall",  "alltoallv",  "reduce_scatter", "reduce_scatter_block", "scan",
        "exscan",
    };
    return kNames[static_cast<int>(k)];
}

Selection::Selection() { forced_.fill(-1); }

namespace {

/// The SHMPI_COLL_* variables other than SHMPI_COLL_<COLLECTIVE>: the
/// segment's (shm/segment.cpp) and the shared-memory algorithms' tunables
/// (coll/shm_team.cpp).
constexpr const char* kCollTunables[] = {
    "SHMPI_COLL_REGIONS",           "SHMPI_COLL_CELL_BYTES",     "SHMPI_COLL_SHM_FLAT",     "SHMPI_COLL_SHM_BAND",
    "SHMPI_COLL_SHM_PIPELINE_BAND", "SHMPI_COLL_SHM_DIRECT",     "SHMPI_COLL_SHM_RSAG",     "SHMPI_COLL_SHM_STREAM",
    "SHMPI_COLL_SHM_SPREAD",        "SHMPI_COLL_SHM_MEMBARRIER", "SHMPI_COLL_SHM_ALLTOALL", "SHMPI_COLL_WIDE_BYTES",
};

/// Notes each SHMPI_COLL_* variable of the environment that no part of
/// shmpi reads.
void note_unknown_settings() {
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view entry(*e);
        if (!entry.starts_with("SHMPI_COLL_")) continue;
        const std::string_view name = entry.substr(0, entry.find('='));
        bool known =
            std::find(std::begin(kCollTunables), std::end(kCollTunables), name) != std::end(kCollTunables);
        for (int k = 0; k < kKinds && !known; ++k) {
            known = name == "SHMPI_COLL_" + upper(kind_name(static_cast<Kind>(k)));
        }
        if (!known) {
            std::fprintf(stderr,
                         "shmpi: note: %.*s is not a setting of shmpi's collectives, and has no effect "
                         "(docs/COLLECTIVES.md lists SHMPI_COLL_<COLLECTIVE>, README.md the others)\n",
                         static_cast<int>(name.size()), name.data());
        }
    }
}

}  // namespace

Selection Selection::from_environment(bool report) {
    if (report) note_unknown_settings();
    Selection s;
    // 1. SHMPI_COLL: every collective that knows the name.
    const char* all = std::getenv("SHMPI_COLL");
    if (all != nullptr && *all != '\0' && std::strcmp(all, "auto") != 0) {
        bool known = false;
        std::vector<std::string> every;
        for (int k = 0; k < kKinds; ++k) {
            const int i = index_of(static_cast<Kind>(k), all);
            if (i >= 0) {
                s.forced_[static_cast<std::size_t>(k)] = i;
                known = true;
            }
            for (const char* n : names(static_cast<Kind>(k))) {
                if (std::find(every.begin(), every.end(), n) == every.end()) every.emplace_back(n);
            }
        }
        if (!known) {
            throw MpiError(MPI_ERR_ARG, fmt::format("MPI_Init: SHMPI_COLL={} names no collective algorithm "
                                                    "(known: auto, {})",
                                                    all, fmt::join(every, ", ")));
        }
    }
    // 2. SHMPI_COLL_<COLLECTIVE>: one collective.
    for (int k = 0; k < kKinds; ++k) {
        const Kind kind = static_cast<Kind>(k);
        const std::string var = "SHMPI_COLL_" + upper(kind_name(kind));
        const char* v = std::getenv(var.c_str());
        if (v == nullptr || *v == '\0') continue;
        if (std::strcmp(v, "auto") == 0) {
            s.forced_[static_cast<std::size_t>(k)] = -1;
            continue;
        }
        const int i = index_of(kind, v);
        if (i < 0) {
            std::string fn = kind_name(kind);
            fn[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(fn[0])));
            throw MpiError(MPI_ERR_ARG, fmt::format("MPI_Init: {}={} is not an algorithm of MPI_{} (known: "
                                                    "auto, {})",
                                                    var, v, fn, fmt::join(names(kind), ", ")));
        }
        s.forced_[static_cast<std::size_t>(k)] = i;
    }
    return s;
}

void barrier(const Selection& s, const Team& team) {
    run(s, Kind::Barrier, kBarrier, choose_shm(team), team, {-1, 0});
}

void bcast(const Selection& s, const Team& team, void* buf, std::int64_t bytes, int root, Landing* land,
           Source* src) {
    run(s, Kind::Bcast, kBcast, choose_shm(team), team, {root, bytes}, buf, bytes, root, land, src);
}

void reduce(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
            const Reduction& red, int root) {
    run_reduction(s, Kind::Reduce, kReduce, choose_shm(team), team, root, count, red, send, recv, count, red,
                  root);
}

void allreduce(const Selection& s, const Team& team, const void* send, void* recv,
               std::int64_t count, const Reduction& red) {
    run_reduction(s, Kind::Allreduce, kAllreduce, choose_shm(team), team, -1, count, red, send, recv, count, red);
}

void gather(const Selection& s, const Team& team, const void* send, std::int64_t block, void* recv, int root,
            Landing* land) {
    run(s, Kind::Gather, kGather, choose_shm(team), team, {root, block}, send, block, recv, root, land);
}

void gatherv(const Selection& s, const Team& team, const void* send, std::int64_t send_bytes,
             void* recv, Blocks blocks, int root) {
    run(s, Kind::Gatherv, kGatherv, choose_shm(team), team, {root, 0}, send, send_bytes, recv, blocks, root);
}

void scatter(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t block, int root,
             Landing* land, Source* src) {
    run(s, Kind::Scatter, kScatter, choose_shm(team), team, {root, block}, send, recv, block, root, land, src);
}

void scatterv(const Selection& s, const Team& team, const void* send, Blocks blocks, void* recv,
              std::int64_t recv_bytes, int root) {
    run(s, Kind::Scatterv, kScatterv, choose_shm(team), team, {root, 0}, send, blocks, recv, recv_bytes,
        root);
}

void allgather(const Selection& s, const Team& team, const void* send, std::int64_t block, void* recv,
               Landing* land, Source* mine) {
    run(s, Kind::Allgather, kAllgather, choose_shm(team), team, {-1, block}, send, block, recv, land, mine);
}

void allgatherv(const Selection& s, const Team& team, const void* send, std::int64_t send_bytes,
                void* recv, Blocks blocks) {
    run(s, Kind::Allgatherv, kAllgatherv, choose_shm(team), team, {-1, 0}, send, send_bytes, recv, blocks);
}

void alltoall(const Selection& s, const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv) {
    run(s, Kind::Alltoall, kAlltoall, choose_alltoall(team, block), team, {-1, block}, block, send, recv);
}

void alltoallv(const Selection& s, const Team& team, PeerBlocks send, PeerBlocks recv) {
    run(s, Kind::Alltoallv, kAlltoallv, choose_shm(team), team, {-1, 0}, send, recv);
}

void reduce_scatter(const Selection& s, const Team& team, const void* send, void* recv,
                    const std::int64_t* counts, const Reduction& red) {
    std::int64_t total = 0;
    for (int r = 0; r < team.size; ++r) total += counts[r];
    run_reduction(s, Kind::ReduceScatter, kReduceScatter, choose_shm(team), team, -1, total, red, send, recv,
                  counts, red);
}

void reduce_scatter_block(const Selection& s, const Team& team, const void* send, void* recv,
                          std::int64_t count, const Reduction& red) {
    run_reduction(s, Kind::ReduceScatterBlock, kReduceScatterBlock, choose_shm(team), team, -1, count, red, send,
                  recv, count, red);
}

void scan(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
          const Reduction& red) {
    run_reduction(s, Kind::Scan, kScan, choose_scan(team, count * red.elem_bytes), team, -1, count, red, send,
                  recv, count, red);
}

void exscan(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
            const Reduction& red) {
    run_reduction(s, Kind::Exscan, kExscan, choose_scan(team, count * red.elem_bytes), team, -1, count, red,
                  send, recv, count, red);
}

}  // namespace shmpi::coll
