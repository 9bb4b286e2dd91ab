// Tree shapes of the shared-memory collectives, derived from the canonical
// bracketing of coll.hpp.
//
// The canonical bisection splits the member range [0, n) at canonical_mid()
// again and again down to single members.  A *band tree* cuts that binary
// tree into bands of `band` levels: every range that starts a band (depth a
// multiple of `band`), and every single member, is a node of the band tree,
// owned by the range's first member `lo`.  The owner of a node computes the
// node's value (for a reduction: the canonical fold of the range) from
//   - its own contribution and its own nested nodes (ranges that also start
//     at `lo`: the owner descends its left spine itself), and
//   - the values of the nodes just below the band, published by their owners.
// Those owners are the member's children; the member whose band contains a
// node is that node's owner's parent.  So:
//   * every subtree is a range of consecutive members (consecutive ranks
//     share caches and NUMA nodes under compact placement);
//   * band = 1 is the binary canonical tree (member lo's children are the
//     `mid`s of its left spine, deepest first); a band at least as deep as
//     the tree gives the flat tree (member 0 reads everyone);
//   * the program() of member 0 evaluated with each child's program in place
//     of the child is exactly the canonical fold of [0, n), which is what
//     makes tree reductions bitwise equal to the linear reference.
// Broadcasts and barriers use the same shapes over positions relative to the
// root (shm_team.hpp maps positions to members).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shmpi::coll::tree {

/// A band deep enough for any team: the flat tree.
inline constexpr int kFlat = 1 << 20;

/// One instruction of a fold program, evaluated on a stack of values.
struct Op {
    enum Kind : std::uint8_t {
        Self,     ///< push this member's own contribution
        Child,    ///< push the value published by member `member`
        Combine,  ///< pop right, pop left, push left op right (left = lower ranks)
    };
    Kind kind;
    int member;  ///< for Child; -1 otherwise
};

/// The band tree over members 0 .. n-1, for every member at once.
class BandTree {
public:
    /// `n` >= 1 members, `band` >= 1 canonical levels per tree level (kFlat
    /// for the flat tree).
    BandTree(int n, int band);

    int size() const { return n_; }
    int band() const { return band_; }
    /// The member whose node contains member i's top node; -1 for member 0.
    int parent(int i) const { return parent_[static_cast<std::size_t>(i)]; }
    /// Member i's children in the order its program reads them (for band 1:
    /// smallest subtree first).
    std::span<const int> children(int i) const;
    /// Member i's top node: the range [lo, hi) whose value it publishes.
    int range_hi(int i) const { return hi_[static_cast<std::size_t>(i)]; }
    /// How member i computes its top node's value (postfix).
    std::span<const Op> program(int i) const;
    /// Levels of the band tree (1 for a single member, 2 for the flat tree).
    int height() const { return height_; }

private:
    void build(int me);
    void emit(int me, int lo, int hi, int depth, std::vector<Op>& out);

    int n_;
    int band_;
    int height_ = 1;
    std::vector<int> parent_;
    std::vector<int> hi_;
    std::vector<std::size_t> child_begin_;  ///< children of i: child_list_[begin[i], begin[i+1])
    std::vector<int> child_list_;
    std::vector<std::size_t> prog_begin_;
    std::vector<Op> prog_list_;
};

/// The canonical fold of the n contributions as one program, with this
/// member's own contribution at `me` (Self) and every other one a Child:
/// what a member evaluates when it reads everyone's contribution itself.
std::vector<Op> flat_program(int n, int me);

/// The canonical bracketing of [lo, hi) as text ("((0 1) 2)"), for tests.
std::string canonical_text(int lo, int hi);

}  // namespace shmpi::coll::tree
