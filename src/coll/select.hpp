// Algorithm selection: for each collective, the algorithms that implement it
// (the linear reference first, then the shared-memory ones), the automatic
// choice by message size and rank count, and the choice forced through the
// environment:
//
//   SHMPI_COLL=<name>              every collective that has an algorithm of
//                                  that name uses it (others choose as usual)
//   SHMPI_COLL_<COLLECTIVE>=<name> one collective (SHMPI_COLL_REDUCE=linear,
//                                  SHMPI_COLL_REDUCE_SCATTER_BLOCK=...);
//                                  overrides SHMPI_COLL
//
// `auto` restores the automatic choice.  docs/COLLECTIVES.md has the table.
// An algorithm that cannot take a call (a shared-memory algorithm on a team
// without shared-memory state, a non-commutative operation, ...) declines
// and the linear one runs; when that algorithm was forced, the rank says so
// once on stderr.
//
// The entry points below take dense bytes (see linear.hpp for the
// conventions); the communicator layer (collectives.cpp) packs datatypes.
#pragma once

#include <array>
#include <cstdint>

#include "coll/coll.hpp"
#include "coll/linear.hpp"

namespace shmpi::coll {

enum class Kind : int {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    ReduceScatter,
    ReduceScatterBlock,
    Scan,
    Exscan,
};
inline constexpr int kKinds = 16;

/// "reduce_scatter_block": the name in SHMPI_COLL_<NAME> (upper-cased there).
const char* kind_name(Kind k);

/// Which algorithm each collective runs.
class Selection {
public:
    /// Everything automatic.
    Selection();
    /// Reads SHMPI_COLL and SHMPI_COLL_<COLLECTIVE>.  Throws MpiError
    /// (MPI_ERR_ARG) naming MPI_Init, the variable, its value and the known
    /// algorithms when a value names no algorithm.  With `report`, notes on
    /// stderr every SHMPI_COLL_* variable that shmpi does not read (a typo
    /// such as SHMPI_COLL_ALLREDUSE would otherwise go unnoticed).
    static Selection from_environment(bool report = false);

    /// The algorithm forced for `k` (an index into its table, 0 = linear),
    /// or -1 when the choice is automatic.
    int forced(Kind k) const { return forced_[static_cast<std::size_t>(k)]; }

private:
    std::array<int, kKinds> forced_;
};

void barrier(const Selection& s, const Team& team);
/// `land`, where given, is the rank's typed receive buffer (coll.hpp); an
/// algorithm may fill it instead of the dense buffer, and says so in it.
/// `src`, where given, is the root's typed send buffer (coll.hpp): the
/// dense buffer is filled only if the algorithm asks for it.
void bcast(const Selection& s, const Team& team, void* buf, std::int64_t bytes, int root,
           Landing* land = nullptr, Source* src = nullptr);
void reduce(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
            const Reduction& red, int root);
void allreduce(const Selection& s, const Team& team, const void* send, void* recv,
               std::int64_t count, const Reduction& red);
void gather(const Selection& s, const Team& team, const void* send, std::int64_t block, void* recv, int root,
            Landing* land = nullptr);
void gatherv(const Selection& s, const Team& team, const void* send, std::int64_t send_bytes,
             void* recv, Blocks blocks, int root);
void scatter(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t block, int root,
             Landing* land = nullptr, Source* src = nullptr);
void scatterv(const Selection& s, const Team& team, const void* send, Blocks blocks, void* recv,
              std::int64_t recv_bytes, int root);
void allgather(const Selection& s, const Team& team, const void* send, std::int64_t block, void* recv,
               Landing* land = nullptr, Source* mine = nullptr);
void allgatherv(const Selection& s, const Team& team, const void* send, std::int64_t send_bytes,
                void* recv, Blocks blocks);
/// The all-to-alls take typed blocks (linear.hpp); `block` is the bytes
/// each rank expects from every rank (MPI_Alltoall's part of the call's
/// signature).
void alltoall(const Selection& s, const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv);
void alltoallv(const Selection& s, const Team& team, PeerBlocks send, PeerBlocks recv);
void reduce_scatter(const Selection& s, const Team& team, const void* send, void* recv,
                    const std::int64_t* counts, const Reduction& red);
void reduce_scatter_block(const Selection& s, const Team& team, const void* send, void* recv,
                          std::int64_t count, const Reduction& red);
void scan(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
          const Reduction& red);
void exscan(const Selection& s, const Team& team, const void* send, void* recv, std::int64_t count,
            const Reduction& red);

}  // namespace shmpi::coll
