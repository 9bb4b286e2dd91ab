// Tests for the shared-memory collectives' machinery and algorithms, run in
// forked processes attached to a real segment the way mpirun's ranks are:
//   * monotonic flags compare rollover-safely;
//   * a flag store wakes a waiter asleep on its doorbell (the Dekker
//     protocol with `sleeping`), so no wait depends on the futex timeout;
//   * claim() keeps a writer from overwriting data before its reader has
//     finished with it, over many back-to-back steps;
//   * every algorithm, called directly (no point-to-point engine), gives
//     the expected bytes, and every reduction gives bitwise the canonical
//     fold of coll.hpp (sums of doubles whose order matters) in rank order
//     (products of 2x2 matrices, which do not commute).
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../attach_rank.hpp"
#include "../keep_freed_buffers.hpp"
#include "../sanitizers.hpp"
#include "coll/coll.hpp"
#include "coll/linear.hpp"
#include "coll/select.hpp"
#include "coll/shm_team.hpp"
#include "errors.hpp"
#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace {

namespace coll = shmpi::coll;
namespace shm = shmpi::shm;
using coll::ShmTeam;

// Every case allocates its buffers afresh, up to megabytes in each rank.
[[maybe_unused]] const bool kKeepFreedBuffers = shmpi_test::keep_freed_buffers();

/// What a forked rank sees.
struct Rank {
    int rank;
    int size;
    shm::Transport& transport;
    ShmTeam& team;
    coll::Team view;
};

/// Fails a rank: prints where and why, then leaves with status 1.
#define RANK_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "rank check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                         \
            std::fprintf(stderr, "\n");                                                \
            std::fflush(stderr);                                                       \
            _exit(1);                                                                  \
        }                                                                              \
    } while (0)

/// Runs body(Rank&) in `n` forked processes attached to a new segment, like
/// mpirun's ranks; true when all of them returned.  Skips the test when
/// this machine has no usable /dev/shm.
/// With `first_call`, the team's calls start there, and the region's flags
/// are filled as a region left by an earlier team would be.
template <class Body, class Setup = void (*)()>
void run_ranks(int n, Body body, int timeout_s = 120, Setup setup = [] {},
               std::uint64_t first_call = 0) {
    std::optional<shm::Segment> seg;
    try {
        seg.emplace(shm::Segment::create(shm::Geometry::for_ranks(static_cast<std::uint32_t>(n)), getpid()));
    } catch (const shm::SegmentError& e) {
        GTEST_SKIP() << "no usable shared memory: " << e.what();
    }
    seg->unlink();
    if (first_call != 0) {
        const std::uint64_t before = ((first_call + 1) << ShmTeam::kStepBits) - 1;
        const shm::CollRegion region = seg->world_coll_region();
        for (std::uint32_t m = 0; m < region.count; ++m) {
            for (shm::CollLine& l : region.members[m].lines) l.release.store(before);
            region.members[m].gather.store(before);
        }
    }
    std::fflush(nullptr);
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0) << "fork";
        if (pid == 0) {
            setup();
            auto transport = shmpi_test::attach_rank(*seg, r, n);
            std::vector<std::uint32_t> world(static_cast<std::size_t>(n));
            std::iota(world.begin(), world.end(), 0u);
            ShmTeam team(*transport, nullptr, transport->segment()->world_coll_region(), r, world);
            if (first_call != 0) team.start_calls_at(first_call);
            coll::Team view;
            view.rank = r;
            view.size = n;
            view.world = &world;
            view.shm = &team;
            Rank me{r, n, *transport, team, view};
            body(me);
            std::fflush(nullptr);
            _exit(0);
        }
        pids.push_back(pid);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    std::vector<int> status(pids.size(), -1);
    std::size_t left = pids.size();
    while (left > 0 && std::chrono::steady_clock::now() < deadline) {
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (status[i] != -1) continue;
            int st = 0;
            if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                status[i] = st;
                --left;
                // A rank that failed leaves the others waiting for it:
                // end them now rather than at the deadline.
                if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                    for (std::size_t j = 0; j < pids.size(); ++j) {
                        if (status[j] == -1) kill(pids[j], SIGKILL);
                    }
                }
            }
        }
        if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (std::size_t i = 0; i < pids.size(); ++i) {
        if (status[i] == -1) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], nullptr, 0);
            ADD_FAILURE() << "rank " << i << " of " << n << " hung";
        } else {
            EXPECT_TRUE(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0)
                << "rank " << i << " of " << n << " failed (status " << status[i] << ")";
        }
    }
}

// ---------------------------------------------------------------- flags

TEST(Flags, ReachedIsRolloverSafe) {
    EXPECT_TRUE(coll::reached(5, 5));
    EXPECT_TRUE(coll::reached(6, 5));
    EXPECT_FALSE(coll::reached(4, 5));
    EXPECT_FALSE(coll::reached(0, std::uint64_t{1} << ShmTeam::kStepBits)) << "a zero flag has reached no step";
    const std::uint64_t near_wrap = ~std::uint64_t{0} - 3;
    EXPECT_TRUE(coll::reached(near_wrap + 10, near_wrap)) << "past the wrap still counts as later";
    EXPECT_FALSE(coll::reached(near_wrap, near_wrap + 10));
}

TEST(Flags, ReleaseWakesAWaiterAsleepOnItsDoorbell) {
    run_ranks(2, [](Rank& me) {
        const std::uint64_t s = me.team.begin_call();
        if (me.rank == 1) {
            me.team.wait_release(0, s);
            RANK_CHECK(me.team.line(0, s).bytes == 1234, "bytes %llu", (unsigned long long)me.team.line(0, s).bytes);
            return;
        }
        // Wait until rank 1 sleeps on its doorbell (after its spin and
        // yield phases), then publish and ring.
        shm::RankSlot& peer = me.transport.segment()->slot(1);
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (peer.sleeping.load(std::memory_order_relaxed) == 0) {
            RANK_CHECK(std::chrono::steady_clock::now() < give_up, "rank 1 never went to sleep");
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        const std::uint32_t bell = peer.doorbell.load(std::memory_order_relaxed);
        me.team.claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::member(1));
        me.team.my_line(s).bytes = 1234;
        me.team.release(s);
        me.team.notify(1);
        RANK_CHECK(peer.doorbell.load(std::memory_order_relaxed) != bell,
                   "notify() did not ring a sleeping waiter's doorbell");
    });
}

TEST(Flags, ClaimKeepsDataUntilTheReaderIsDone) {
    run_ranks(2, [](Rank& me) {
        for (std::uint64_t round = 1; round <= 3000; ++round) {
            const std::uint64_t s = me.team.begin_call();
            if (me.rank == 0) {
                me.team.claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::member(1));
                std::memcpy(me.team.my_line(s).data, &round, sizeof round);
                me.team.release(s);
                me.team.notify(1);
            } else {
                me.team.wait_release(0, s);
                std::uint64_t a = 0;
                std::uint64_t b = 0;
                std::memcpy(&a, me.team.line(0, s).data, sizeof a);
                if (round % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
                std::memcpy(&b, me.team.line(0, s).data, sizeof b);
                RANK_CHECK(a == round && b == round, "round %llu read %llu then %llu",
                           (unsigned long long)round, (unsigned long long)a, (unsigned long long)b);
                me.team.gather(s);
                me.team.notify(0);
            }
        }
    });
}

// ------------------------------------------------------------ algorithms

/// Contribution of `rank` at index i in round `round`: doubles of wildly
/// different magnitudes and signs, so that the order of the sum shows in
/// the bits.
double value(int rank, std::int64_t i, int round) {
    std::uint64_t h = (static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ull) ^
                      (static_cast<std::uint64_t>(i) * 0xbf58476d1ce4e5b9ull) ^
                      (static_cast<std::uint64_t>(round) * 0x94d049bb133111ebull);
    h ^= h >> 31;
    h *= 0xd6e8feb86659fd07ull;
    h ^= h >> 29;
    const double mant = 1.0 + static_cast<double>(h & 0xfffff) / 1048576.0;
    const int exp = static_cast<int>((h >> 20) % 61) - 30;
    return ((h >> 40) & 1 ? -1.0 : 1.0) * std::ldexp(mant, exp);
}

void add_doubles(const void* in, void* inout, std::int64_t count, const void*) {
    const auto* a = static_cast<const double*>(in);
    auto* b = static_cast<double*>(inout);
    for (std::int64_t i = 0; i < count; ++i) b[i] = a[i] + b[i];
}

/// 2x2 matrices of integers mod 2^64: associative, not commutative.
struct Mat {
    std::uint64_t a, b, c, d;
};
void mul_mats(const void* in, void* inout, std::int64_t count, const void*) {
    const auto* l = static_cast<const Mat*>(in);
    auto* r = static_cast<Mat*>(inout);
    for (std::int64_t i = 0; i < count; ++i) {
        const Mat x = l[i];
        const Mat y = r[i];
        r[i] = Mat{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                   x.c * y.b + x.d * y.d};
    }
}
Mat mat(int rank, std::int64_t i) {
    const auto r = static_cast<std::uint64_t>(rank + 2);
    const auto k = static_cast<std::uint64_t>(i + 1);
    return Mat{r, k, r * k + 1, 3};
}

/// The canonical fold of the n contributions at index i (coll.hpp).
double canonical_sum(int lo, int hi, std::int64_t i, int round) {
    if (hi - lo == 1) return value(lo, i, round);
    const int mid = coll::canonical_mid(lo, hi);
    return canonical_sum(lo, mid, i, round) + canonical_sum(mid, hi, i, round);
}

using ReduceFn = bool (*)(const coll::Team&, const void*, void*, std::int64_t, const coll::Reduction&, int);
using AllreduceFn = bool (*)(const coll::Team&, const void*, void*, std::int64_t, const coll::Reduction&);

void check_reductions(Rank& me, int round) {
    const coll::Reduction sum{add_doubles, nullptr, true, sizeof(double)};
    const coll::Reduction prod{mul_mats, nullptr, false, sizeof(Mat)};
    const ReduceFn reduces[] = {coll::reduce_shm_tree, coll::reduce_shm_rsag, coll::reduce_shm,
                                coll::reduce_shm_push};
    const AllreduceFn allreduces[] = {coll::allreduce_shm_tree, coll::allreduce_shm_rsag,
                                      coll::allreduce_shm, coll::allreduce_shm_push};
    // Tiny (inline), one chunk, several chunks, several windows.
    for (const std::int64_t count : {1, 8, 9, 3000, 9000, 70000}) {
        std::vector<double> send(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) send[static_cast<std::size_t>(i)] = value(me.rank, i, round);
        std::vector<double> expect(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
            expect[static_cast<std::size_t>(i)] = canonical_sum(0, me.size, i, round);
        }
        for (int f = 0; f < 4; ++f) {
            if ((f == 1 || f == 3) && !me.team.single_copy()) continue;  // they need single copies
            const int root = (round + f) % me.size;
            std::vector<double> recv(static_cast<std::size_t>(count), -1.0);
            RANK_CHECK(reduces[f](me.view, send.data(), recv.data(), count, sum, root), "reduce %d declined", f);
            if (me.rank == root) {
                RANK_CHECK(std::memcmp(recv.data(), expect.data(), recv.size() * sizeof(double)) == 0,
                           "reduce %d count %lld root %d: not the canonical bits", f, (long long)count, root);
            }
            if (f == 3) {  // push: allreduce, in place at the root, another root
                std::vector<double> all(static_cast<std::size_t>(count), -1.0);
                RANK_CHECK(coll::allreduce_shm_push(me.view, send.data(), all.data(), count, sum), "declined");
                RANK_CHECK(std::memcmp(all.data(), expect.data(), all.size() * sizeof(double)) == 0,
                           "push allreduce count %lld: not the canonical bits", (long long)count);
                std::vector<double> both = send;
                RANK_CHECK(coll::allreduce_shm_push(me.view, both.data(), both.data(), count, sum), "declined");
                RANK_CHECK(std::memcmp(both.data(), expect.data(), both.size() * sizeof(double)) == 0,
                           "in-place push allreduce count %lld: not the canonical bits", (long long)count);
                std::vector<double> inplace = send;
                double* buf = me.rank == root ? inplace.data() : nullptr;
                RANK_CHECK(coll::reduce_shm_push(me.view, me.rank == root ? buf : send.data(), buf, count,
                                                 sum, root),
                           "declined");
                if (me.rank == root) {
                    RANK_CHECK(std::memcmp(inplace.data(), expect.data(), inplace.size() * sizeof(double)) == 0,
                               "in-place push reduce count %lld root %d", (long long)count, root);
                }
                const int other = (root + 1) % me.size;
                RANK_CHECK(coll::reduce_shm_push(me.view, send.data(), recv.data(), count, sum, other), "declined");
                if (me.rank == other) {
                    RANK_CHECK(std::memcmp(recv.data(), expect.data(), recv.size() * sizeof(double)) == 0,
                               "push reduce count %lld root %d", (long long)count, other);
                }
                continue;
            }
            std::vector<double> all(static_cast<std::size_t>(count), -1.0);
            RANK_CHECK(allreduces[f](me.view, send.data(), all.data(), count, sum), "allreduce %d declined", f);
            RANK_CHECK(std::memcmp(all.data(), expect.data(), all.size() * sizeof(double)) == 0,
                       "allreduce %d count %lld: not the canonical bits", f, (long long)count);
            // In place.
            std::vector<double> inplace = send;
            RANK_CHECK(allreduces[f](me.view, inplace.data(), inplace.data(), count, sum), "declined");
            RANK_CHECK(std::memcmp(inplace.data(), expect.data(), inplace.size() * sizeof(double)) == 0,
                       "in-place allreduce %d count %lld: not the canonical bits", f, (long long)count);
            if (me.rank == root) {
                inplace = send;
                RANK_CHECK(reduces[f](me.view, inplace.data(), inplace.data(), count, sum, root), "declined");
                RANK_CHECK(std::memcmp(inplace.data(), expect.data(), inplace.size() * sizeof(double)) == 0,
                           "in-place reduce %d count %lld: not the canonical bits", f, (long long)count);
            } else {
                RANK_CHECK(reduces[f](me.view, send.data(), nullptr, count, sum, root), "declined");
            }
        }
    }
    // Rank order with a non-commutative operation.
    for (const std::int64_t count : {1, 2, 700, 5000}) {
        std::vector<Mat> send(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) send[static_cast<std::size_t>(i)] = mat(me.rank, i);
        std::vector<Mat> expect(static_cast<std::size_t>(count));
        for (std::int64_t i = 0; i < count; ++i) {
            Mat acc = mat(0, i);
            for (int r = 1; r < me.size; ++r) {
                Mat x = mat(r, i);
                mul_mats(&acc, &x, 1, nullptr);
                acc = x;
            }
            expect[static_cast<std::size_t>(i)] = acc;
        }
        for (int f = 0; f < 4; ++f) {
            if ((f == 1 || f == 3) && !me.team.single_copy()) continue;
            std::vector<Mat> all(static_cast<std::size_t>(count));
            RANK_CHECK(allreduces[f](me.view, send.data(), all.data(), count, prod), "declined");
            RANK_CHECK(std::memcmp(all.data(), expect.data(), all.size() * sizeof(Mat)) == 0,
                       "allreduce %d of matrices, count %lld: wrong order", f, (long long)count);
        }
    }
}

std::uint8_t byte_of(int rank, std::int64_t i, int round) {
    return static_cast<std::uint8_t>(rank * 31 + i * 7 + round * 13 + (i >> 8));
}

void check_moves(Rank& me, int round) {
    const int n = me.size;
    if (!me.team.single_copy()) return;  // the large cases copy straight out of buffers
    for (const std::int64_t bytes : {0, 1, 8, 64, 65, 1000, 16384, 16385, 70000, 300000}) {
        const int root = (round + static_cast<int>(bytes)) % n;
        // Broadcast, each variant.
        using BcastFn = bool (*)(const coll::Team&, void*, std::int64_t, int, coll::Landing*, coll::Source*);
        for (const BcastFn f : {BcastFn{coll::bcast_shm_tree}, BcastFn{coll::bcast_shm_direct},
                                BcastFn{coll::bcast_shm}}) {
            std::vector<std::uint8_t> buf(static_cast<std::size_t>(bytes));
            for (std::int64_t i = 0; i < bytes; ++i) {
                buf[static_cast<std::size_t>(i)] = me.rank == root ? byte_of(root, i, round) : 0;
            }
            RANK_CHECK(f(me.view, buf.data(), bytes, root, nullptr, nullptr), "bcast declined");
            for (std::int64_t i = 0; i < bytes; ++i) {
                RANK_CHECK(buf[static_cast<std::size_t>(i)] == byte_of(root, i, round),
                           "bcast of %lld bytes from %d: byte %lld", (long long)bytes, root, (long long)i);
            }
        }
        // Gather, scatter, allgather.
        std::vector<std::uint8_t> mine(static_cast<std::size_t>(bytes));
        for (std::int64_t i = 0; i < bytes; ++i) mine[static_cast<std::size_t>(i)] = byte_of(me.rank, i, round);
        std::vector<std::uint8_t> all(static_cast<std::size_t>(bytes * n) + 1, 0xee);
        RANK_CHECK(coll::gather_shm(me.view, mine.data(), bytes, all.data(), root), "gather declined");
        if (me.rank == root) {
            for (int r = 0; r < n; ++r) {
                for (std::int64_t i = 0; i < bytes; ++i) {
                    RANK_CHECK(all[static_cast<std::size_t>(r * bytes + i)] == byte_of(r, i, round),
                               "gather %lld bytes: rank %d byte %lld", (long long)bytes, r, (long long)i);
                }
            }
        }
        std::vector<std::uint8_t> everyone(static_cast<std::size_t>(bytes * n) + 1, 0xee);
        RANK_CHECK(coll::allgather_shm(me.view, mine.data(), bytes, everyone.data()), "allgather declined");
        for (int r = 0; r < n; ++r) {
            for (std::int64_t i = 0; i < bytes; ++i) {
                RANK_CHECK(everyone[static_cast<std::size_t>(r * bytes + i)] == byte_of(r, i, round),
                           "allgather %lld bytes: rank %d byte %lld", (long long)bytes, r, (long long)i);
            }
        }
        std::vector<std::uint8_t> part(static_cast<std::size_t>(bytes) + 1, 0xee);
        RANK_CHECK(coll::scatter_shm(me.view, everyone.data(), part.data(), bytes, root), "scatter declined");
        for (std::int64_t i = 0; i < bytes; ++i) {
            RANK_CHECK(part[static_cast<std::size_t>(i)] == byte_of(me.rank, i, round),
                       "scatter %lld bytes: byte %lld", (long long)bytes, (long long)i);
        }
        // The v forms with uneven blocks (rank r sends bytes + r).
        std::vector<std::int64_t> sizes(static_cast<std::size_t>(n));
        std::vector<std::int64_t> offsets(static_cast<std::size_t>(n));
        std::int64_t total = 0;
        for (int r = 0; r < n; ++r) {
            sizes[static_cast<std::size_t>(r)] = bytes + r;
            offsets[static_cast<std::size_t>(r)] = total;
            total += bytes + r + 3;  // gaps between blocks stay untouched
        }
        std::vector<std::uint8_t> own(static_cast<std::size_t>(bytes + me.rank));
        for (std::size_t i = 0; i < own.size(); ++i) own[i] = byte_of(me.rank, static_cast<std::int64_t>(i), round);
        std::vector<std::uint8_t> v(static_cast<std::size_t>(total), 0xee);
        const coll::Blocks blocks{sizes.data(), offsets.data()};
        RANK_CHECK(coll::allgatherv_shm(me.view, own.data(), bytes + me.rank, v.data(), blocks), "declined");
        for (int r = 0; r < n; ++r) {
            for (std::int64_t i = 0; i < bytes + r; ++i) {
                RANK_CHECK(v[static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)] + i)] == byte_of(r, i, round),
                           "allgatherv: rank %d byte %lld", r, (long long)i);
            }
        }
        std::vector<std::uint8_t> g(static_cast<std::size_t>(total), 0xee);
        RANK_CHECK(coll::gatherv_shm(me.view, own.data(), bytes + me.rank, g.data(), blocks, root), "declined");
        if (me.rank == root) RANK_CHECK(g == v, "gatherv differs from allgatherv");
        std::vector<std::uint8_t> back(static_cast<std::size_t>(bytes + me.rank) + 1, 0xee);
        RANK_CHECK(coll::scatterv_shm(me.view, v.data(), blocks, back.data(), bytes + me.rank, root), "declined");
        RANK_CHECK(std::equal(own.begin(), own.end(), back.begin()), "scatterv");
        RANK_CHECK(coll::barrier_shm(me.view), "barrier declined");
    }
}

/// A typed receive buffer as the algorithms see it (coll::Landing): dense
/// byte i lives in runs of `run` bytes, 2 * run apart, as in a vector
/// datatype; the gaps keep 0xee.  `run` is a power of two, so that finding
/// a byte takes shifts, not divisions (the checks find every byte of every
/// case this way: with divisions they were a third of this test's time).
struct Strided {
    std::int64_t size;
    std::int64_t run;
    int run_shift;  ///< log2(run)
    std::vector<std::uint8_t> mem;
    coll::Landing land{};
    Strided(std::int64_t bytes, std::int64_t run_bytes)
        : size(bytes), run(run_bytes), run_shift(std::countr_zero(static_cast<std::uint64_t>(run_bytes))),
          mem(static_cast<std::size_t>(2 * bytes + 2 * run_bytes), 0xee) {
        EXPECT_TRUE(std::has_single_bit(static_cast<std::uint64_t>(run_bytes))) << "run " << run_bytes;
        land.store = &store;
        land.state = this;
    }
    Strided(const Strided&) = delete;
    /// The same buffer as a typed send buffer (coll::Source) whose dense
    /// form is `dense`, filled only when the algorithm asks.
    coll::Source source(std::uint8_t* dense) {
        dense_ = dense;
        return coll::Source{&pack_part, &pack, this};
    }
    std::uint8_t& at(std::int64_t i) {
        return mem[static_cast<std::size_t>(((i >> run_shift) << (run_shift + 1)) + (i & (run - 1)))];
    }
    /// Every byte of every gap (the odd runs of mem) is still 0xee.
    bool gaps_intact() const {
        const auto end = static_cast<std::int64_t>(mem.size());
        for (std::int64_t gap = run; gap < end; gap += 2 * run) {
            const auto first = mem.begin() + gap;
            if (!std::all_of(first, first + std::min(run, end - gap), [](std::uint8_t b) { return b == 0xee; }))
                return false;
        }
        return true;
    }
    static void pack_part(const void* state, std::int64_t off, void* to, std::int64_t len) {
        auto* self = const_cast<Strided*>(static_cast<const Strided*>(state));
        RANK_CHECK(off >= 0 && off + len <= self->size, "packs bytes %lld + %lld of %lld", (long long)off,
                   (long long)len, (long long)self->size);
        self->runs(off, len, [&](std::uint8_t* at, std::int64_t k, std::int64_t n) {
            std::memcpy(static_cast<std::uint8_t*>(to) + k, at, static_cast<std::size_t>(n));
        });
    }
    /// Calls f(place, k, n) for each run of bytes [off + k, off + k + n)
    /// of [off, off + len), `place` being where the run lives.
    template <class F>
    void runs(std::int64_t off, std::int64_t len, F&& f) {
        for (std::int64_t k = 0; k < len;) {
            const std::int64_t n = std::min(len - k, run - (off + k) % run);
            f(&at(off + k), k, n);
            k += n;
        }
    }
    static void pack(const void* state) {
        auto* self = const_cast<Strided*>(static_cast<const Strided*>(state));
        pack_part(state, 0, self->dense_, self->size);
    }
    std::uint8_t* dense_ = nullptr;
    static void store(const void* state, std::int64_t off, const void* from, std::int64_t len) {
        auto* self = const_cast<Strided*>(static_cast<const Strided*>(state));
        self->runs(off, len, [&](std::uint8_t* at, std::int64_t k, std::int64_t n) {
            std::memcpy(at, static_cast<const std::uint8_t*>(from) + k, static_cast<std::size_t>(n));
        });
    }
};

/// Broadcast, gather, allgather and scatter into typed buffers (Landing),
/// and from typed ones (Source): the bytes land where the landing says, the
/// gaps stay, and an algorithm that says it filled the landing did fill all
/// of it.  Where it does not, the dense buffer has the bytes instead.
void check_landings(Rank& me, int round) {
    const int n = me.size;
    if (!me.team.single_copy()) return;
    for (const std::int64_t bytes : {1, 64, 65, 1000, 16385, 40000, 100000, 300000}) {
        for (const std::int64_t run : {16, 1024}) {
            const int root = (round + static_cast<int>(bytes / 7)) % n;
            // Broadcast: the dense buffers start zeroed; the root's typed
            // buffer is a Source, packed only if the algorithm asks.
            using BcastFn =
                bool (*)(const coll::Team&, void*, std::int64_t, int, coll::Landing*, coll::Source*);
            for (const BcastFn f :
                 {BcastFn{coll::bcast_shm_tree}, BcastFn{coll::bcast_shm_direct}, BcastFn{coll::bcast_shm}}) {
                std::vector<std::uint8_t> dense(static_cast<std::size_t>(bytes), 0);
                Strided typed(bytes, run);
                coll::Source from = typed.source(dense.data());
                if (me.rank == root) {
                    for (std::int64_t i = 0; i < bytes; ++i) typed.at(i) = byte_of(root, i, round);
                }
                RANK_CHECK(f(me.view, dense.data(), bytes, root, me.rank == root ? nullptr : &typed.land,
                             me.rank == root ? &from : nullptr),
                           "bcast declined");
                if (me.rank == root) continue;
                for (std::int64_t i = 0; i < bytes; ++i) {
                    const std::uint8_t got =
                        typed.land.filled ? typed.at(i) : dense[static_cast<std::size_t>(i)];
                    RANK_CHECK(got == byte_of(root, i, round),
                               "bcast landing of %lld bytes (runs %lld): byte %lld", (long long)bytes,
                               (long long)run, (long long)i);
                }
                RANK_CHECK(typed.gaps_intact(), "bcast landing: a gap was written");
            }
            // Gather into the root's landing.
            std::vector<std::uint8_t> mine(static_cast<std::size_t>(bytes));
            for (std::int64_t i = 0; i < bytes; ++i)
                mine[static_cast<std::size_t>(i)] = byte_of(me.rank, i, round);
            std::vector<std::uint8_t> all(static_cast<std::size_t>(bytes * n), 0);
            // (Only the root has a landing: the others' is empty.)
            Strided gathered(me.rank == root ? bytes * n : 0, run);
            RANK_CHECK(coll::gather_shm(me.view, mine.data(), bytes, all.data(), root,
                                        me.rank == root ? &gathered.land : nullptr),
                       "gather declined");
            if (me.rank == root) {
                for (int r = 0; r < n; ++r) {
                    for (std::int64_t i = 0; i < bytes; ++i) {
                        const std::int64_t k = r * bytes + i;
                        const std::uint8_t got =
                            gathered.land.filled ? gathered.at(k) : all[static_cast<std::size_t>(k)];
                        RANK_CHECK(got == byte_of(r, i, round),
                                   "gather landing %lld bytes (runs %lld): rank %d byte %lld",
                                   (long long)bytes, (long long)run, r, (long long)i);
                    }
                }
                RANK_CHECK(gathered.gaps_intact(), "gather landing: a gap was written");
            }
            // Allgather into every member's landing, then in place (our own
            // block already in the dense buffer); then from typed own blocks
            // (Source, the dense own block left zeroed): every member's or
            // every other member's (the rest send dense blocks), into
            // landings on every member or every other one, so members that
            // stream and members that do not meet.
            struct AllgatherCase {
                const char* what;
                bool in_place, typed_send, typed_recv;
                bool sources;  ///< a case with Sources (the same on every member)
            };
            const bool odd = me.rank % 2 == 1;
            for (const AllgatherCase a :
                 {AllgatherCase{"landing", false, false, true, false},
                  AllgatherCase{"landing in place", true, false, true, false},
                  AllgatherCase{"from sources", false, true, true, true},
                  AllgatherCase{"from some sources", false, odd, true, true},
                  AllgatherCase{"from some sources to some landings", false, odd, !odd, true}}) {
                // (A block inline, in the cells, and copied or streamed past
                // the reuse of its slots (100000 bytes) cover every path;
                // fewer sizes keep the sanitizer runs short.)
                if (bytes > 100000 || (a.sources && bytes != 64 && bytes != 40000 && bytes != 100000))
                    continue;
                std::vector<std::uint8_t> every(static_cast<std::size_t>(bytes * n), 0);
                if (a.in_place) std::copy(mine.begin(), mine.end(), every.begin() + me.rank * bytes);
                Strided typed_mine(bytes, run);
                for (std::int64_t i = 0; i < bytes; ++i) typed_mine.at(i) = byte_of(me.rank, i, round);
                coll::Source from = typed_mine.source(every.data() + me.rank * bytes);
                Strided gathered_all(bytes * n, run);
                RANK_CHECK(
                    coll::allgather_shm(me.view, a.in_place || a.typed_send ? nullptr : mine.data(), bytes,
                                        every.data(), a.typed_recv ? &gathered_all.land : nullptr,
                                        a.typed_send ? &from : nullptr),
                    "allgather declined");
                for (int r = 0; r < n; ++r) {
                    for (std::int64_t i = 0; i < bytes; ++i) {
                        const std::int64_t k = r * bytes + i;
                        const std::uint8_t got = gathered_all.land.filled
                                                     ? gathered_all.at(k)
                                                     : every[static_cast<std::size_t>(k)];
                        RANK_CHECK(got == byte_of(r, i, round),
                                   "allgather %s, %lld bytes (runs %lld): rank %d byte %lld", a.what,
                                   (long long)bytes, (long long)run, r, (long long)i);
                    }
                }
                RANK_CHECK(gathered_all.gaps_intact(), "allgather %s: a gap was written", a.what);
            }
            // Scatter into each member's landing (the root's own block too).
            // (The blocks matter at the root only: the members check their
            // parts against byte_of.)
            std::vector<std::uint8_t> blocks(static_cast<std::size_t>(bytes * n));
            for (int r = 0; me.rank == root && r < n; ++r) {
                for (std::int64_t i = 0; i < bytes; ++i)
                    blocks[static_cast<std::size_t>(r * bytes + i)] = byte_of(r, i, round + 1);
            }
            std::vector<std::uint8_t> part(static_cast<std::size_t>(bytes), 0);
            Strided got_part(bytes, run);
            RANK_CHECK(coll::scatter_shm(me.view, blocks.data(), part.data(), bytes, root, &got_part.land),
                       "scatter declined");
            // A member's block: in its landing if filled, else in `dense`.
            auto check_part = [&](Strided& typed, const std::vector<std::uint8_t>& dense, const char* what) {
                for (std::int64_t i = 0; i < bytes; ++i) {
                    const std::uint8_t got =
                        typed.land.filled ? typed.at(i) : dense[static_cast<std::size_t>(i)];
                    RANK_CHECK(got == byte_of(me.rank, i, round + 1), "%s, %lld bytes (runs %lld): byte %lld",
                               what, (long long)bytes, (long long)run, (long long)i);
                }
                RANK_CHECK(typed.gaps_intact(), "%s: a gap was written", what);
            };
            check_part(got_part, part, "scatter landing");
            // Again from a typed root buffer (Source), the root's own block
            // left in place (recv null): its dense buffer starts zeroed.
            std::vector<std::uint8_t> zeroed(static_cast<std::size_t>(bytes * n), 0);
            Strided typed_blocks(me.rank == root ? bytes * n : 0, run);
            coll::Source from = typed_blocks.source(zeroed.data());
            if (me.rank == root) {
                for (std::int64_t i = 0; i < bytes * n; ++i)
                    typed_blocks.at(i) = blocks[static_cast<std::size_t>(i)];
            }
            std::vector<std::uint8_t> part2(static_cast<std::size_t>(bytes), 0);
            Strided got_part2(bytes, run);
            RANK_CHECK(coll::scatter_shm(me.view, zeroed.data(), me.rank == root ? nullptr : part2.data(),
                                         bytes, root, me.rank == root ? nullptr : &got_part2.land,
                                         me.rank == root ? &from : nullptr),
                       "scatter declined");
            if (me.rank == root) continue;
            check_part(got_part2, part2, "scatter from a source");
        }
    }
}

/// A member whose gather block differs from the root's: larger than the
/// root's cells-sized block (a single copy the root lands through its
/// piece buffer), or either way around a block streamed
/// through the cells.  The root lands what both sizes cover, reports the
/// mismatch (MPI_ERR_TRUNCATE, MPI_ERR_COUNT), and nothing hangs or lands
/// beyond its buffer.
TEST(Algorithms, GatherLandingTakesABlockOfAnotherSize) {
    struct Case {
        std::int64_t want, sent;
    };
    for (const Case c : {Case{20000, 300000}, Case{100000, 300000}, Case{300000, 100000}}) {
        for (const std::int64_t run : {16, 1024}) {
            run_ranks(2, [run, c](Rank& me) {
                if (!me.team.single_copy()) return;
                const std::int64_t want = c.want;
                const std::int64_t sent = me.rank == 1 ? c.sent : want;
                std::vector<std::uint8_t> mine(static_cast<std::size_t>(sent));
                for (std::int64_t i = 0; i < sent; ++i)
                    mine[static_cast<std::size_t>(i)] = byte_of(me.rank, i, 5);
                std::vector<std::uint8_t> all(static_cast<std::size_t>(2 * want), 0);
                Strided gathered(2 * want, run);
                bool threw = false;
                try {
                    coll::gather_shm(me.view, mine.data(), sent, all.data(), 0,
                                     me.rank == 0 ? &gathered.land : nullptr);
                } catch (const shmpi::MpiError& e) {
                    threw = true;
                    const int expected = c.sent > c.want ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
                    RANK_CHECK(me.rank == 0 && e.error_class() == expected, "class %d on rank %d",
                               e.error_class(), me.rank);
                }
                if (me.rank != 0) return;
                RANK_CHECK(threw, "the root did not report the block of %lld bytes", (long long)c.sent);
                RANK_CHECK(gathered.land.filled, "the landing was not used");
                for (int r = 0; r < 2; ++r) {
                    const std::int64_t covered = r == 1 ? std::min(c.sent, want) : want;
                    for (std::int64_t i = 0; i < covered; ++i) {
                        RANK_CHECK(gathered.at(r * want + i) == byte_of(r, i, 5), "rank %d byte %lld", r,
                                   (long long)i);
                    }
                }
                RANK_CHECK(gathered.gaps_intact(), "a gap was written");
                for (std::size_t i = static_cast<std::size_t>(4 * want); i < gathered.mem.size(); ++i) {
                    RANK_CHECK(gathered.mem[i] == 0xee, "byte %zu past the landing was written", i);
                }
            });
        }
    }
}

/// Call signatures (note_call()): rank 1 gives a broadcast of another size
/// than rank 0's.  Rank 0 finds it in the call itself (check_call()), or
/// one call later (check_calls(), as wait() does before it sleeps): the
/// message, raised by the later call, then says the call that differed
/// came before it.
TEST(Signatures, AMismatchFoundLaterSaysItWasAnEarlierCall) {
    for (const bool later : {false, true}) {
        run_ranks(2, [later](Rank& me) {
            const int bcast = static_cast<int>(coll::Kind::Bcast);
            me.team.note_call({bcast, 0, me.rank == 0 ? 4 : 40});
            if (later) me.team.note_call({static_cast<int>(coll::Kind::Allreduce), -1, 8, 8});
            if (me.rank == 1) return;
            const std::string want = std::string(later ? "in an earlier collective call (1 before this one): " : "") +
                                     "rank 1 called MPI_Bcast with 40 bytes where rank 0 has 4: ";
            // Rank 1 publishes its signatures when it runs: look until then.
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            while (std::chrono::steady_clock::now() < deadline) {
                try {
                    if (later) {
                        me.team.check_calls();
                    } else {
                        me.team.check_call();
                    }
                } catch (const shmpi::MpiError& e) {
                    RANK_CHECK(e.error_class() == MPI_ERR_TRUNCATE, "class %d", e.error_class());
                    RANK_CHECK(std::string(e.what()).rfind(want, 0) == 0, "message \"%s\", expected it to start \"%s\"",
                               e.what(), want.c_str());
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            RANK_CHECK(false, "rank 1's broadcast of 40 bytes was never reported");
        });
    }
}

/// Team size, and the tree tuning the ranks get (SHMPI_COLL_SHM_FLAT,
/// SHMPI_COLL_SHM_BAND, SHMPI_COLL_SHM_PIPELINE_BAND; empty: default).
struct Shape {
    int ranks;
    const char* flat;
    const char* band;
    const char* stream = "";  ///< SHMPI_COLL_SHM_STREAM, where set
};

class Algorithms : public ::testing::TestWithParam<Shape> {};

TEST_P(Algorithms, GiveTheReferenceResults) {
    const Shape shape = GetParam();
    // Under TSan each rank here is a process of one thread, and TSan does not
    // see across processes: it has nothing to check.  The three smallest
    // teams still run there (the code paths build and run under it), once;
    // the other shapes took about 70 s of CI's TSan step.  ASan runs them all.
    if (shmpi_test::kThreadSanitizer && (shape.ranks > 3 || *shape.flat != '\0' || *shape.stream != '\0'))
        GTEST_SKIP() << "single-threaded ranks: nothing for TSan to check (ASan runs this shape)";
    // Two rounds: the second finds every line and cell as the first left
    // them.  One under a sanitizer (the second round's accesses are the
    // first's again; it was 28 s of CI's ASan step).
    constexpr int rounds = (shmpi_test::kThreadSanitizer || shmpi_test::kAddressSanitizer) ? 1 : 2;
    run_ranks(shape.ranks, [](Rank& me) {
        for (int round = 0; round < rounds; ++round) {
            check_reductions(me, round);
            check_moves(me, round);
            check_landings(me, round);
        }
    }, 300, [shape] {
        setenv("SHMPI_COLL_SHM_FLAT", shape.flat, 1);
        setenv("SHMPI_COLL_SHM_BAND", shape.band, 1);
        setenv("SHMPI_COLL_SHM_PIPELINE_BAND", shape.band, 1);
        if (*shape.stream != '\0') setenv("SHMPI_COLL_SHM_STREAM", shape.stream, 1);
    });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Algorithms,
                         ::testing::Values(Shape{1, "", ""}, Shape{2, "", ""}, Shape{3, "", ""},
                                           Shape{4, "", ""}, Shape{5, "", ""}, Shape{8, "", ""},
                                           // Band trees below the flat limit: what teams of
                                           // more than 16 ranks run.
                                           Shape{5, "1", "1"}, Shape{7, "2", "2"}, Shape{8, "1", "3"},
                                           // Typed data streamed through the cells
                                           // with more members than CPUs too (by
                                           // default only Gather does), and never.
                                           Shape{3, "", "", "1"}, Shape{5, "1", "1", "1"},
                                           Shape{4, "", "", "1"}, Shape{2, "", "", "0"}));

TEST(Algorithms, RunAcrossTheWrapOfTheStepCounter) {
    // Steps are call << 24: 2^40 calls wrap the 64-bit counter.
    const std::uint64_t first = (std::uint64_t{1} << 40) - 5;
    run_ranks(3, [](Rank& me) {
        for (int round = 0; round < 2; ++round) {
            RANK_CHECK(coll::barrier_shm(me.view), "declined");
            check_reductions(me, round);
            check_moves(me, round);
        }
    }, 300, [] {}, first);
}

/// Every algorithm alone, many calls back to back: each release line is
/// reused (every kCollLines calls) with no other collective in between, so
/// a reader that never announces it is done would hang its writer here.
void back_to_back(Rank& me) {
    const coll::Reduction sum{add_doubles, nullptr, true, sizeof(double)};
    const int calls = 3 * static_cast<int>(shm::kCollLines) + 1;
    for (const std::int64_t bytes : {8, 4096, 70000}) {
        std::vector<double> a(static_cast<std::size_t>(bytes / 8) + 1, 1.0);
        std::vector<double> b(a.size() * static_cast<std::size_t>(me.size) + 1, 0.0);
        const std::int64_t count = bytes / 8;
        for (int root : {0, me.size - 1}) {
            using BcastFn =
                bool (*)(const coll::Team&, void*, std::int64_t, int, coll::Landing*, coll::Source*);
            for (const BcastFn f : {BcastFn{coll::bcast_shm_tree}, BcastFn{coll::bcast_shm_direct}}) {
                for (int i = 0; i < calls; ++i)
                    RANK_CHECK(f(me.view, a.data(), bytes, root, nullptr, nullptr), "declined");
            }
            const ReduceFn reduces[] = {coll::reduce_shm_tree, coll::reduce_shm_rsag, coll::reduce_shm_push};
            for (const ReduceFn f : reduces) {
                for (int i = 0; i < calls; ++i) RANK_CHECK(f(me.view, a.data(), b.data(), count, sum, root), "declined");
            }
            for (int i = 0; i < calls; ++i) RANK_CHECK(coll::gather_shm(me.view, a.data(), bytes, b.data(), root), "declined");
            for (int i = 0; i < calls; ++i) RANK_CHECK(coll::scatter_shm(me.view, b.data(), a.data(), bytes / me.size, root), "declined");
        }
        const AllreduceFn allreduces[] = {coll::allreduce_shm_tree, coll::allreduce_shm_rsag,
                                          coll::allreduce_shm_push};
        for (const AllreduceFn f : allreduces) {
            for (int i = 0; i < calls; ++i) RANK_CHECK(f(me.view, a.data(), b.data(), count, sum), "declined");
        }
        for (int i = 0; i < calls; ++i) RANK_CHECK(coll::allgather_shm(me.view, a.data(), bytes, b.data()), "declined");
    }
    for (int i = 0; i < calls; ++i) RANK_CHECK(coll::barrier_shm(me.view), "declined");
}

TEST(Algorithms, EachAloneBackToBack) {
    for (const int n : {2, 3, 5}) {
        SCOPED_TRACE("ranks = " + std::to_string(n));
        run_ranks(n, back_to_back, 120);
    }
    // Band trees too.
    run_ranks(5, back_to_back, 120, [] {
        setenv("SHMPI_COLL_SHM_FLAT", "1", 1);
        setenv("SHMPI_COLL_SHM_BAND", "1", 1);
    });
}

/// With wide cells (SHMPI_COLL_WIDE_BYTES: mpirun gives MPI_COMM_WORLD's
/// region 1 MiB a rank when ranks outnumber CPUs), a gathered block too
/// large for the cells goes in its owner's wide cells whole: a Gather's
/// member returns before the root has even called (so it never waits for a
/// context switch there), one byte more than the wide cells stays in the
/// member's buffer, and back-to-back Gathers and Allgathers of every way
/// give the expected bytes.
TEST(Algorithms, GatheredBlocksTakeTheWideCells) {
    constexpr std::int64_t kWide = std::int64_t{1} << 20;
    const char* before = std::getenv("SHMPI_COLL_WIDE_BYTES");
    const std::string saved = before != nullptr ? before : "";
    setenv("SHMPI_COLL_WIDE_BYTES", std::to_string(kWide).c_str(), 1);
    int returned[2];
    ASSERT_EQ(pipe(returned), 0);
    run_ranks(3, [&](Rank& me) {
        const std::uint64_t cells = ShmTeam::kCellsCarrySlots * me.team.slot_bytes();
        using C = ShmTeam::Carry;
        RANK_CHECK(me.team.wide_carry(8) == C::Inline, "8 bytes");
        RANK_CHECK(me.team.wide_carry(cells) == C::Cells, "%llu bytes", (unsigned long long)cells);
        RANK_CHECK(me.team.wide_carry(cells + 1) == C::Wide, "%llu bytes", (unsigned long long)cells + 1);
        RANK_CHECK(me.team.wide_carry(kWide) == C::Wide, "1 MiB");
        RANK_CHECK(me.team.wide_carry(kWide + 1) == C::Direct, "1 MiB + 1");
        RANK_CHECK(me.team.carry_for(kWide) == C::Direct, "other algorithms keep their single copies");
        const bool single = me.team.single_copy();  // (collective: every rank, here)
        // The members return first, then the root gathers.
        std::vector<std::uint8_t> mine(static_cast<std::size_t>(kWide + 1));
        std::vector<std::uint8_t> all(static_cast<std::size_t>(3 * (kWide + 1) + 1));
        auto fill = [&](std::int64_t bytes, int round) {
            for (std::int64_t i = 0; i < bytes; ++i) mine[static_cast<std::size_t>(i)] = byte_of(me.rank, i, round);
            std::fill(all.begin(), all.end(), std::uint8_t{0xee});
        };
        auto check = [&](std::int64_t bytes, int round, const char* what) {
            for (int r = 0; r < 3; ++r) {
                for (std::int64_t i = 0; i < bytes; ++i) {
                    RANK_CHECK(all[static_cast<std::size_t>(r * bytes + i)] == byte_of(r, i, round),
                               "%s of %lld bytes: rank %d's byte %lld", what, (long long)bytes, r, (long long)i);
                }
            }
            RANK_CHECK(all[static_cast<std::size_t>(3 * bytes)] == 0xee, "%s of %lld bytes wrote past its blocks",
                       what, (long long)bytes);
        };
        fill(300000, 1);
        if (me.rank != 0) {
            RANK_CHECK(coll::gather_shm(me.view, mine.data(), 300000, all.data(), 0), "declined");
            const char done = 1;
            RANK_CHECK(write(returned[1], &done, 1) == 1, "pipe");
        } else {
            for (int k = 0; k < 2; ++k) {
                struct pollfd p {returned[0], POLLIN, 0};
                char done = 0;
                RANK_CHECK(poll(&p, 1, 20000) == 1 && read(returned[0], &done, 1) == 1,
                           "a member waited for the root to gather its 300000-byte block");
            }
            RANK_CHECK(coll::gather_shm(me.view, mine.data(), 300000, all.data(), 0), "declined");
            check(300000, 1, "Gather");
        }
        // Back to back: sizes across the ways, roots changing.
        int round = 2;
        for (int rep = 0; rep < 3; ++rep) {
            for (const std::int64_t bytes : {std::int64_t{65537}, std::int64_t{300000}, kWide, kWide + 1,
                                             std::int64_t{1000}}) {
                if (bytes > kWide && !single) continue;  // (the Direct way needs single copies)
                const int root = (rep + round) % 3;
                fill(bytes, round);
                RANK_CHECK(coll::gather_shm(me.view, mine.data(), bytes, all.data(), root), "declined");
                if (me.rank == root) check(bytes, round, "Gather");
                ++round;
                fill(bytes, round);
                RANK_CHECK(coll::allgather_shm(me.view, mine.data(), bytes, all.data()), "declined");
                check(bytes, round, "Allgather");
                ++round;
            }
        }
    });
    close(returned[0]);
    close(returned[1]);
    if (before != nullptr) {
        setenv("SHMPI_COLL_WIDE_BYTES", saved.c_str(), 1);
    } else {
        unsetenv("SHMPI_COLL_WIDE_BYTES");
    }
}

TEST(Algorithms, ManyBarriersAndTinyReductionsDoNotHang) {
    run_ranks(4, [](Rank& me) {
        const coll::Reduction sum{add_doubles, nullptr, true, sizeof(double)};
        for (int i = 0; i < 20000; ++i) {
            double x = me.rank + i;
            double y = 0;
            RANK_CHECK(coll::barrier_shm(me.view), "declined");
            RANK_CHECK(coll::allreduce_shm(me.view, &x, &y, 1, sum), "declined");
            RANK_CHECK(y == 4.0 * i + 6.0, "iteration %d: %g", i, y);
            RANK_CHECK(coll::reduce_shm(me.view, &x, &y, 1, sum, i % 4), "declined");
            RANK_CHECK(coll::bcast_shm(me.view, &y, sizeof y, i % 4), "declined");
            RANK_CHECK(y == 4.0 * i + 6.0, "iteration %d after bcast: %g", i, y);
        }
    });
}

}  // namespace
