// Scan and Exscan by a prefix tree of point-to-point messages, with the
// linear algorithm's bits (coll.hpp, linear.hpp) and fewer messages and
// folds.
//
// The canonical fold of x_0 .. x_{t-1} splits at m = canonical_mid(0, t)
// into fold(0, m), which is rank m - 1's scan result S_{m-1}, and
// fold(m, t), the contributions of ranks m .. t - 1.  So rank r's scan
// result S_r (t = r + 1) is rank (r + 2) / 2 - 1's result combined with a
// canonical fold (fold_slots) of the contributions of ranks (r + 2) / 2 ..
// r, and an Exscan's E_r (t = r, r >= 2) rank (r + 1) / 2 - 1's result
// with a fold of ranks (r + 1) / 2 .. r - 1; S_0 = x_0 and E_1 = x_0.  Each
// rank takes the contributions of about half the ranks below it, where the
// linear algorithm takes all of them: a Scan of 8 ranks sends 16 messages
// and folds 16 times against 28 and 28; of 16 ranks, 64 against 120.  A
// result waits for the results of ranks about half as high, log2(n) of
// them in a row.  In an Exscan a rank computes its scan result only when
// a higher rank splits right after it (takers()), and its E from its own
// copy of the contributions.
//
// Two steps, so that no rank waits for another that waits for it: first
// every rank posts all its receives, sends its contribution, and waits for
// all of them (what it receives comes from lower ranks, its sends go to
// higher ranks that have posted their receives and wait for them); then it
// folds and sends its scan result.  A rank that gets both a contribution
// and a result from the same rank posts the contribution's receive first,
// as the sender sends them.  A size mismatch in the first step is reported
// after the second, so that no rank is left waiting for a result.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/scratch.hpp"

namespace shmpi::coll {
namespace {

/// A fold a rank computes: rank `from`'s scan result (-1: none) combined
/// with the canonical fold of the contributions of ranks [lo, hi).
struct Target {
    int from = -1;
    int lo = 0;
    int hi = 0;
};

/// Rank t's scan result, and (t >= 1) its Exscan result.
Target scan_target(int t) {
    if (t == 0) return {-1, 0, 1};
    const int m = canonical_mid(0, t + 1);
    return {m - 1, m, t + 1};
}
Target exscan_target(int t) {
    if (t == 1) return {-1, 0, 1};
    const int m = canonical_mid(0, t);
    return {m - 1, m, t};
}

/// Who needs whose scan result, for one call's rank count and kind.
class Plan {
public:
    Plan(int n, bool inclusive) : n_(n), inclusive_(inclusive), needs_(static_cast<std::size_t>(n), -1) {}

    /// Whether rank t computes its scan result: always in a Scan; in an
    /// Exscan when some rank takes it.
    bool needs_result(int t) {
        std::int8_t& known = needs_[static_cast<std::size_t>(t)];
        if (known < 0) known = inclusive_ || !takers(t).empty() ? 1 : 0;
        return known == 1;
    }
    /// The ranks that take rank r's scan result, in increasing order: those
    /// whose own targets start from it (they are 2r, 2r + 1 or 2r + 2).
    std::vector<int> takers(int r) {
        std::vector<int> out;
        for (int t = 2 * r; t <= 2 * r + 2 && t < n_; ++t) {
            if (t <= r) continue;
            const bool for_scan = scan_target(t).from == r && needs_result(t);
            const bool for_exscan = !inclusive_ && exscan_target(t).from == r;
            if (for_scan || for_exscan) out.push_back(t);
        }
        return out;
    }
    /// Whether rank t >= 1 takes rank q's contribution (q < t).
    bool takes_contribution(int t, int q) const {
        return q >= (inclusive_ ? scan_target(t) : exscan_target(t)).lo;
    }

private:
    int n_;
    bool inclusive_;
    std::vector<std::int8_t> needs_;
};

void prefix_tree(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red,
                 bool inclusive) {
    const std::int64_t bytes = count * red.elem_bytes;
    const int n = team.size;
    const int r = team.rank;
    Plan plan(n, inclusive);
    const bool result = plan.needs_result(r);
    const Target mine = scan_target(r);
    const bool exclusive_out = !inclusive && r >= 1;
    const Target out = exclusive_out ? exscan_target(r) : mine;
    // (An Exscan target starts at or below the scan target's contributions.)
    const int lo = out.lo;

    // Slots: the contributions of ranks lo .. r, then the results of the
    // ranks our targets start from (one, or two different ones).
    const int leaves = r + 1 - lo;
    std::vector<int> froms;
    if (result && mine.from >= 0) froms.push_back(mine.from);
    if (exclusive_out && out.from >= 0 && std::find(froms.begin(), froms.end(), out.from) == froms.end()) {
        froms.push_back(out.from);
    }
    const Scratch scratch((leaves + static_cast<std::int64_t>(froms.size())) * bytes);
    std::byte* const slots = scratch.get();
    auto leaf = [&](int q) { return slots + (q - lo) * bytes; };
    auto from_slot = [&](int q) {
        const auto at = std::find(froms.begin(), froms.end(), q) - froms.begin();
        return slots + (leaves + at) * bytes;
    };

    // 1.
    std::unique_ptr<MpiError> failed;
    {
        linear::Exchange ex(team, linear::kTagScan);
        for (int q = lo; q < r; ++q) ex.recv(q, leaf(q), bytes);
        for (const int q : froms) ex.recv(q, from_slot(q), bytes);
        for (int t = r + 1; t < n && plan.takes_contribution(t, r); ++t) ex.send(t, send, bytes);
        if (result && bytes > 0) std::memcpy(leaf(r), send, static_cast<std::size_t>(bytes));
        try {
            ex.wait();
        } catch (const MpiError& e) {
            failed = std::make_unique<MpiError>(e);
        }
    }

    // Folds `t`'s contributions in place (their slots are overwritten) and
    // combines the result it starts from in; returns where the fold lies.
    auto fold = [&](const Target& t) {
        const int k = fold_slots(slots, bytes, t.lo - lo, t.hi - lo, count, red);
        std::byte* at = slots + k * bytes;
        if (t.from >= 0) red.combine(from_slot(t.from), at, count, red.state);
        return at;
    };
    // An Exscan's own result first, from a copy of the contributions when
    // our scan result folds them too.
    if (exclusive_out && bytes > 0) {
        if (out.hi - out.lo == 1 && out.from < 0) {
            std::memcpy(recv, leaf(out.lo), static_cast<std::size_t>(bytes));
        } else if (!result) {
            std::memcpy(recv, fold(out), static_cast<std::size_t>(bytes));
        } else {
            const int copies = out.hi - out.lo;
            const Scratch work(copies * bytes);
            std::memcpy(work.get(), leaf(out.lo), static_cast<std::size_t>(copies * bytes));
            const int k = fold_slots(work.get(), bytes, 0, copies, count, red);
            std::byte* at = work.get() + k * bytes;
            if (out.from >= 0) red.combine(from_slot(out.from), at, count, red.state);
            std::memcpy(recv, at, static_cast<std::size_t>(bytes));
        }
    }
    std::byte* scan_result = leaf(r);
    if (result && bytes > 0 && r >= 1) scan_result = fold(mine);

    // 2.
    {
        linear::Exchange ex(team, linear::kTagScan);
        if (result) {
            for (const int t : plan.takers(r)) ex.send(t, scan_result, bytes);
        }
        ex.wait();
    }
    if (failed) throw *failed;
    if (inclusive && bytes > 0) std::memcpy(recv, scan_result, static_cast<std::size_t>(bytes));
}

}  // namespace

bool scan_tree(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    prefix_tree(team, send, recv, count, red, true);
    return true;
}

bool exscan_tree(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    prefix_tree(team, send, recv, count, red, false);
    return true;
}

}  // namespace shmpi::coll
