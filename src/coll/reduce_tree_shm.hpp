// The pipelined band-tree reduction shared by reduce_tree_shm.cpp and
// allreduce_tree_shm.cpp (internal to the shared-memory collectives).
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/shm_team.hpp"

namespace shmpi::coll::detail {

/// Who reads the canonical fold that member 0 computes, besides member 0.
enum class ResultReaders { None, Root, All };

/// One reduction of `count` elements of everyone's `send` over the band
/// tree with `band` levels per tree level, starting at the call's step `s`.
/// Member 0 ends with the canonical fold of coll.hpp and writes it to `top`
/// (if not null); with `who` = Root (member `root`) or All, it also
/// publishes the fold in its cells and those members copy it to `result`.
/// Returns false, having done its part, if a child's size disagreed (then
/// `bad_from` and `bad_bytes` name it).
bool tree_reduce(ShmTeam& shm, std::uint64_t s, const std::byte* send, std::int64_t count,
                 const Reduction& red, int band, std::byte* top, ResultReaders who, int root,
                 std::byte* result, int& bad_from, std::uint64_t& bad_bytes);

}  // namespace shmpi::coll::detail
