// Linear all-to-all: every rank sends every other rank its block directly.
#include <memory>
#include <vector>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::coll {

void alltoallw_linear(const Team& team, PeerBlocks send, PeerBlocks recv) {
    using namespace linear;
    const int me = team.rank;
    auto block = [](PeerBlocks side, int r) { return static_cast<std::byte*>(side.base) + side.displs[r]; };
    Exchange ex(team, kTagAlltoall);
    // Receives first, each from the rank that sends to us at the same step,
    // so that every send finds its receive posted early.
    for (int k = 1; k < team.size; ++k) {
        const int from = (me - k + team.size) % team.size;
        ex.recv(from, block(recv, from), recv.counts[from], *recv.types[from]);
    }
    for (int k = 1; k < team.size; ++k) {
        const int to = (me + k) % team.size;
        ex.send(to, block(send, to), send.counts[to], *send.types[to]);
    }
    std::unique_ptr<MpiError> own;
    if (send.types[me] != nullptr) {
        own = copy_own(block(send, me), send.counts[me], *send.types[me], block(recv, me), recv.counts[me],
                       *recv.types[me], me);
    }
    ex.wait();
    if (own) throw *own;
}

void alltoallv_linear(const Team& team, const void* send, Blocks send_blocks, void* recv,
                      Blocks recv_blocks) {
    const std::vector<const dtype::Datatype*> bytes(static_cast<std::size_t>(team.size), &dtype::byte_type());
    alltoallw_linear(
        team, PeerBlocks{const_cast<void*>(send), send_blocks.bytes, send_blocks.offsets, bytes.data()},
        PeerBlocks{recv, recv_blocks.bytes, recv_blocks.offsets, bytes.data()});
}

void alltoall_linear(const Team& team, const void* send, std::int64_t block, void* recv) {
    const linear::Uniform u(team.size, block);
    alltoallv_linear(team, send, u.blocks(), recv, u.blocks());
}

}  // namespace shmpi::coll
