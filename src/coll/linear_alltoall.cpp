// Linear all-to-all: every rank sends every other rank its block directly.
#include <memory>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "errors.hpp"

namespace shmpi::coll {

void alltoallv_linear(const Team& team, const void* send, Blocks send_blocks, void* recv,
                      Blocks recv_blocks) {
    using namespace linear;
    const int me = team.rank;
    const auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    Exchange ex(team, kTagAlltoall);
    for (int k = 1; k < team.size; ++k) {
        const int from = (me - k + team.size) % team.size;
        ex.recv(from, out + recv_blocks.offsets[from], recv_blocks.bytes[from]);
    }
    for (int k = 1; k < team.size; ++k) {
        const int to = (me + k) % team.size;
        ex.send(to, in + send_blocks.offsets[to], send_blocks.bytes[to]);
    }
    const std::unique_ptr<MpiError> own = linear::copy_own(in + send_blocks.offsets[me], send_blocks.bytes[me],
                                                   out + recv_blocks.offsets[me], recv_blocks.bytes[me], me);
    ex.wait();
    if (own) throw *own;
}

void alltoall_linear(const Team& team, const void* send, std::int64_t block, void* recv) {
    const linear::Uniform u(team.size, block);
    alltoallv_linear(team, send, u.blocks(), recv, u.blocks());
}

}  // namespace shmpi::coll
