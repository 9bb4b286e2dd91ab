// Linear gathers: the root receives every block (gather), or every rank
// receives every block from its owner (allgather).
#include <memory>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "errors.hpp"

namespace shmpi::coll {

void gatherv_linear(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                    Blocks blocks, int root) {
    using namespace linear;
    if (team.rank != root) {
        linear::send(team, kTagGather, root, send, send_bytes);
        return;
    }
    auto* out = static_cast<std::byte*>(recv);
    Exchange ex(team, kTagGather);
    for (int r = 0; r < team.size; ++r) {
        if (r != root) ex.recv(r, out + blocks.offsets[r], blocks.bytes[r]);
    }
    std::unique_ptr<MpiError> own;
    if (send != nullptr) own = linear::copy_own(send, send_bytes, out + blocks.offsets[root], blocks.bytes[root], root);
    ex.wait();
    if (own) throw *own;
}

void gather_linear(const Team& team, const void* send, std::int64_t block, void* recv, int root) {
    const linear::Uniform u(team.size, block);
    gatherv_linear(team, send, block, recv, u.blocks(), root);
}

void allgatherv_linear(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                       Blocks blocks) {
    using namespace linear;
    const int me = team.rank;
    auto* out = static_cast<std::byte*>(recv);
    std::unique_ptr<MpiError> own;
    if (send != nullptr) {
        own = linear::copy_own(send, send_bytes, out + blocks.offsets[me], blocks.bytes[me], me);
    } else {
        send = out + blocks.offsets[me];
        send_bytes = blocks.bytes[me];
    }
    Exchange ex(team, kTagAllgather);
    for (int k = 1; k < team.size; ++k) {
        const int from = (me - k + team.size) % team.size;
        ex.recv(from, out + blocks.offsets[from], blocks.bytes[from]);
    }
    for (int k = 1; k < team.size; ++k) ex.send((me + k) % team.size, send, send_bytes);
    ex.wait();
    if (own) throw *own;
}

void allgather_linear(const Team& team, const void* send, std::int64_t block, void* recv) {
    const linear::Uniform u(team.size, block);
    allgatherv_linear(team, send, block, recv, u.blocks());
}

}  // namespace shmpi::coll
