#include "coll/tree_shm.hpp"

#include <algorithm>
#include <cassert>

#include "coll/coll.hpp"

namespace shmpi::coll::tree {

BandTree::BandTree(int n, int band) : n_(n), band_(band) {
    assert(n >= 1 && band >= 1 && "a band tree needs members and a band of at least one level");
    const auto un = static_cast<std::size_t>(n);
    parent_.assign(un, -1);
    hi_.assign(un, n);
    child_begin_.reserve(un + 1);
    prog_begin_.reserve(un + 1);
    for (int me = 0; me < n; ++me) build(me);
    child_begin_.push_back(child_list_.size());
    prog_begin_.push_back(prog_list_.size());
    // Parents have lower indices (a node's owner is its first member), so
    // one pass in index order finds every member's level.
    std::vector<int> level(un, 1);
    for (int me = 1; me < n; ++me) {
        level[static_cast<std::size_t>(me)] = level[static_cast<std::size_t>(parent_[static_cast<std::size_t>(me)])] + 1;
        height_ = std::max(height_, level[static_cast<std::size_t>(me)]);
    }
}

void BandTree::build(int me) {
    // 1. Descend from [0, n) towards `me` to its top node: the first range
    //    that starts at `me` and either starts a band or is a single member.
    //    The last band start passed on the way belongs to the parent.
    int lo = 0;
    int hi = n_;
    int depth = 0;
    int parent = -1;
    for (;;) {
        const bool band_start = depth % band_ == 0;
        if (lo == me && (band_start || hi - lo == 1)) break;
        if (band_start) parent = lo;
        const int mid = canonical_mid(lo, hi);
        if (me < mid) {
            hi = mid;
        } else {
            lo = mid;
        }
        ++depth;
    }
    parent_[static_cast<std::size_t>(me)] = parent;
    hi_[static_cast<std::size_t>(me)] = hi;

    // 2. The program for that node; its Child entries are the children.
    prog_begin_.push_back(prog_list_.size());
    child_begin_.push_back(child_list_.size());
    const std::size_t first = prog_list_.size();
    emit(me, me, hi, depth, prog_list_);
    for (std::size_t i = first; i < prog_list_.size(); ++i) {
        if (prog_list_[i].kind == Op::Child) child_list_.push_back(prog_list_[i].member);
    }
}

void BandTree::emit(int me, int lo, int hi, int depth, std::vector<Op>& out) {
    if (hi - lo == 1) {
        out.push_back(lo == me ? Op{Op::Self, -1} : Op{Op::Child, lo});
        return;
    }
    if (lo != me && depth % band_ == 0) {
        out.push_back(Op{Op::Child, lo});  // a node below our band: its owner's value
        return;
    }
    const int mid = canonical_mid(lo, hi);
    emit(me, lo, mid, depth + 1, out);
    emit(me, mid, hi, depth + 1, out);
    out.push_back(Op{Op::Combine, -1});
}

std::span<const int> BandTree::children(int i) const {
    const auto u = static_cast<std::size_t>(i);
    return {child_list_.data() + child_begin_[u], child_begin_[u + 1] - child_begin_[u]};
}

std::span<const Op> BandTree::program(int i) const {
    const auto u = static_cast<std::size_t>(i);
    return {prog_list_.data() + prog_begin_[u], prog_begin_[u + 1] - prog_begin_[u]};
}

namespace {

void emit_flat(int me, int lo, int hi, std::vector<Op>& out) {
    if (hi - lo == 1) {
        out.push_back(lo == me ? Op{Op::Self, -1} : Op{Op::Child, lo});
        return;
    }
    const int mid = canonical_mid(lo, hi);
    emit_flat(me, lo, mid, out);
    emit_flat(me, mid, hi, out);
    out.push_back(Op{Op::Combine, -1});
}

}  // namespace

std::vector<Op> flat_program(int n, int me) {
    std::vector<Op> out;
    out.reserve(static_cast<std::size_t>(2 * n));
    emit_flat(me, 0, n, out);
    return out;
}

std::string canonical_text(int lo, int hi) {
    if (hi - lo == 1) return std::to_string(lo);
    const int mid = canonical_mid(lo, hi);
    // Appended piece by piece: GCC 12 takes `"(" + a + " " + b + ")"` for a
    // copy of more than PTRDIFF_MAX bytes (-Wstringop-overflow, a false alarm).
    std::string text = "(";
    text += canonical_text(lo, mid);
    text += ' ';
    text += canonical_text(mid, hi);
    text += ')';
    return text;
}

}  // namespace shmpi::coll::tree
