// Evaluating a fold program (tree_shm.hpp) on one chunk of data.
//
// The program is postfix: leaves push a contribution (this member's own, or
// a value another member published), Combine pops right and left and pushes
// `left op right` with Reduction::combine(in = left, inout = right), the
// same operand roles as the linear reference, so the bits agree.
//
// combine() writes into its right operand, so a right operand that lives in
// read-only memory (a peer's cells, the user's send buffer) is first copied
// into a writable buffer: the destination when this is the last Combine,
// otherwise a scratch buffer.  A leaf may also fill the buffer it is offered
// (a single-copy read from a peer's memory), which then needs no copy.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "arith.hpp"
#include "coll/coll.hpp"
#include "coll/linear.hpp"
#include "coll/tree_shm.hpp"

namespace shmpi::coll::fold {

/// Chunk-sized scratch buffers, reused from call to call.  Not shared.
class Scratch {
public:
    /// Every buffer handed out from now on holds at least `bytes`.  Call only
    /// while no buffer is out.
    void resize(std::size_t bytes) {
        assert(out_ == 0 && "resize the scratch pool only between evaluations");
        if (bytes <= bytes_) return;
        free_.clear();
        all_.clear();
        bytes_ = round_up(bytes, 4096);
    }
    std::byte* get() {
        ++out_;
        if (!free_.empty()) {
            std::byte* p = free_.back();
            free_.pop_back();
            return p;
        }
        void* p = std::aligned_alloc(4096, bytes_ == 0 ? 4096 : bytes_);
        if (p == nullptr) throw std::bad_alloc();
        all_.emplace_back(static_cast<std::byte*>(p));
        return all_.back().get();
    }
    void put(std::byte* p) {
        --out_;
        free_.push_back(p);
    }

private:
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    std::vector<std::unique_ptr<std::byte, Free>> all_;
    std::vector<std::byte*> free_;
    std::size_t bytes_ = 0;
    int out_ = 0;
};

/// Evaluates `program` on `count` elements and leaves the result at `dest`.
/// `leaf(op, spare)` returns where leaf `op` (Self or Child) lies: either
/// `spare`, which it filled (and which is then writable), or memory that is
/// only read.  `dest` may be where the Self leaf lies (in place); it must not
/// partly overlap any leaf.
template <class Leaf>
void evaluate(std::span<const tree::Op> program, Leaf&& leaf, std::byte* dest, std::int64_t count,
              const Reduction& red, Scratch& scratch) {
    struct Value {
        const std::byte* p;
        std::byte* own;  ///< writable buffer holding p (scratch or dest), else null
    };
    const auto bytes = static_cast<std::size_t>(count * red.elem_bytes);
    Value stack[64];
    int sp = 0;
    auto release = [&](const Value& v) {
        if (v.own != nullptr && v.own != dest) scratch.put(v.own);
    };
    const std::size_t n = program.size();
    for (std::size_t i = 0; i < n; ++i) {
        const tree::Op& op = program[i];
        if (op.kind != tree::Op::Combine) {
            // The right operand of the last Combine may be read straight into
            // dest, unless dest still holds a value we need.
            bool to_dest = i + 2 == n && program[i + 1].kind == tree::Op::Combine;
            for (int k = 0; to_dest && k < sp; ++k) to_dest = stack[k].p != dest;
            std::byte* spare = to_dest ? dest : scratch.get();
            const std::byte* p = leaf(op, spare);
            if (p == spare) {
                stack[sp++] = Value{p, spare};
            } else {
                if (spare != dest) scratch.put(spare);
                stack[sp++] = Value{p, nullptr};
            }
            assert(sp < 64 && "fold programs are at most 2 log2(n) + 2 deep");
            continue;
        }
        const Value right = stack[--sp];
        const Value left = stack[--sp];
        std::byte* w = right.own;
        if (w == nullptr) {
            w = (i + 1 == n && left.p != dest) ? dest : scratch.get();
            if (w != right.p) std::memcpy(w, right.p, bytes);
        }
        red.combine(left.p, w, count, red.state);
        release(left);
        stack[sp++] = Value{w, w};
    }
    assert(sp == 1 && "a fold program leaves exactly one value");
    if (stack[0].p != dest) std::memcpy(dest, stack[0].p, bytes);
    release(stack[0]);
}

/// Teams up to this size fold small inline contributions on the stack.
inline constexpr int kInlineFoldMax = 16;

/// The canonical fold of `n` (at most kInlineFoldMax) contributions of
/// `count` elements and at most 64 bytes, contribution m at `at(m)`, left at
/// `dest`: copied side by side on the stack and folded there with
/// fold_slots(), the linear reference's own fold, so no scratch buffer is
/// touched.  For the small flat reductions, where every nanosecond shows.
/// A pair folds in `dest` itself: the canonical fold of two is the one
/// combine of contribution 0 into contribution 1 (fold_slots()'s base
/// case), so `dest` takes a copy of contribution 1 (none when it holds
/// it) and contribution 0 is combined into it: one copy instead of three.
/// Not when `dest` holds contribution 0 (rank 0's MPI_IN_PLACE): the copy
/// would overwrite it.
template <class At>
void fold_inline(int n, At&& at, std::byte* dest, std::int64_t count, const Reduction& red) {
    constexpr std::int64_t kStride = 64;
    alignas(64) std::byte slots[kInlineFoldMax * kStride];
    const auto bytes = static_cast<std::size_t>(count * red.elem_bytes);
    assert(n <= kInlineFoldMax && bytes <= kStride && "fold_inline takes small teams and small data");
    if (n == 2) {
        const std::byte* first = at(0);
        const std::byte* second = at(1);
        if (first != dest) {
            if (second != dest) copy_small(dest, second, bytes);
            red.combine(first, dest, count, red.state);
            return;
        }
    }
    for (int m = 0; m < n; ++m) copy_small(slots + m * kStride, at(m), bytes);
    const int k = fold_slots(slots, kStride, 0, n, count, red);
    copy_small(dest, slots + k * kStride, bytes);
}

}  // namespace shmpi::coll::fold
