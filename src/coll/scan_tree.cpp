// Scan and Exscan by a prefix tree of point-to-point messages, with the
// linear algorithm's bits (coll.hpp, linear.hpp) and fewer messages and
// folds.
//
// The canonical fold of x_0 .. x_r splits at m = canonical_mid(0, r + 1) =
// (r + 2) / 2 into fold(0, m), which is rank m - 1's scan result S_{m-1},
// and fold(m, r + 1), the contributions of ranks m .. r.  So rank r >= 1
// receives rank m - 1's result and the contributions of ranks m .. r - 1,
// folds those and its own canonically (fold_slots) and combines the two;
// S_0 = x_0.  Each rank takes the contributions of about half the ranks
// below it, where the linear algorithm takes all of them: 8 ranks, 16
// messages and 16 folds against 28 and 28; 16 ranks, 64 against 120.  Rank
// q's contribution goes to the ranks q + 1 .. 2q - 1 (those that split at
// or below q), its result to ranks 2q and 2q + 1 (those that split right
// after it); a result waits for the results of ranks about half as high,
// log2(n) of them in a row.
//
// An Exscan gives rank r >= 1 the scan result S_{r-1}: every rank but the
// last computes its scan result as above and also sends it to the next
// rank (one message when that rank splits right after it: ranks 1 and 2).
// The next rank waits for it only after it has sent its own result on, so
// the results do not wait for each other down the whole row.
//
// Steps, so that no rank waits for another that waits for it: first every
// rank posts all its receives (the contributions first, then the result it
// splits on, then an Exscan's result: a rank sends them in that order),
// sends its contribution, and waits for the contributions and the result
// it splits on (they come from lower ranks; its sends go to higher ranks
// that have posted their receives and wait for them); then it folds and
// sends its result on; then it waits for an Exscan's result.  A size
// mismatch is reported after the last step, so that no rank is left
// waiting for a result.
#include <cstring>
#include <memory>
#include <vector>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/scratch.hpp"

namespace shmpi::coll {
namespace {

/// Where rank t >= 1 splits: it takes rank split(t) - 1's scan result and
/// the contributions of ranks split(t) .. t.
int split(int t) { return canonical_mid(0, t + 1); }

void prefix_tree(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red,
                 bool inclusive) {
    const std::int64_t bytes = count * red.elem_bytes;
    const int n = team.size;
    const int r = team.rank;
    // Whether rank t computes its scan result: every rank in a Scan, every
    // rank but the last in an Exscan (the next rank takes it).
    auto computes = [&](int t) { return inclusive || t + 1 < n; };
    const bool result = computes(r);
    const int m = r >= 1 ? split(r) : 0;
    const bool splits = result && r >= 1;
    // An Exscan's result, if it is not the result we split on.
    const bool shifted = !inclusive && r >= 1 && !(splits && m - 1 == r - 1);
    // The ranks that take our result, each once.
    std::vector<int> takers;
    if (result) {
        if (!inclusive && r + 1 < n) takers.push_back(r + 1);
        for (int t = 2 * r; t <= 2 * r + 1 && t < n; ++t) {
            if (t > r && split(t) - 1 == r && computes(t) && (takers.empty() || takers.back() != t)) {
                takers.push_back(t);
            }
        }
    }

    // Slots: the contributions of ranks m .. r, the result we split on, an
    // Exscan's result.
    const int leaves = result ? r + 1 - m : 0;
    const Scratch scratch((leaves + 2) * bytes);
    std::byte* const slots = scratch.get();
    auto leaf = [&](int q) { return slots + (q - m) * bytes; };
    std::byte* const split_on = slots + leaves * bytes;
    std::byte* const exclusive = slots + (leaves + 1) * bytes;

    // 1.
    std::unique_ptr<MpiError> failed;
    auto keep = [&](const MpiError& e) {
        if (!failed) failed = std::make_unique<MpiError>(e);
    };
    linear::Exchange last(team, linear::kTagScan);
    {
        linear::Exchange ex(team, linear::kTagScan);
        if (splits) {
            for (int q = m; q < r; ++q) ex.recv(q, leaf(q), bytes);
            ex.recv(m - 1, split_on, bytes);
        }
        if (shifted) last.recv(r - 1, exclusive, bytes);
        for (int t = r + 1; t < n && split(t) <= r; ++t) {
            if (computes(t)) ex.send(t, send, bytes);
        }
        if (splits && bytes > 0) std::memcpy(leaf(r), send, static_cast<std::size_t>(bytes));
        try {
            ex.wait();
        } catch (const MpiError& e) {
            keep(e);
        }
    }

    // 2.
    // (Rank 0's result is its contribution, sent from where it is.)
    const void* mine = splits ? leaf(r) : send;
    if (splits && bytes > 0) {
        const int k = fold_slots(slots, bytes, 0, leaves, count, red);
        std::byte* folded = slots + k * bytes;
        red.combine(split_on, folded, count, red.state);
        mine = folded;
    }
    {
        linear::Exchange ex(team, linear::kTagScan);
        for (const int t : takers) ex.send(t, mine, bytes);
        ex.wait();
    }

    // 3.
    try {
        last.wait();
    } catch (const MpiError& e) {
        keep(e);
    }
    if (failed) throw *failed;
    if (bytes == 0) return;
    if (inclusive) {
        if (recv != mine) std::memcpy(recv, mine, static_cast<std::size_t>(bytes));
    } else if (r >= 1) {
        std::memcpy(recv, shifted ? exclusive : split_on, static_cast<std::size_t>(bytes));
    }
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
