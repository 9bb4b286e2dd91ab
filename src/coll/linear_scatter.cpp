// Linear scatter: the root sends every rank its block.
#include <memory>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "errors.hpp"

namespace shmpi::coll {

void scatterv_linear(const Team& team, const void* send, Blocks blocks, void* recv,
                     std::int64_t recv_bytes, int root) {
    using namespace linear;
    if (team.rank != root) {
        linear::recv(team, kTagScatter, root, recv, recv_bytes);
        return;
    }
    const auto* in = static_cast<const std::byte*>(send);
    Exchange ex(team, kTagScatter);
    for (int k = 1; k < team.size; ++k) {
        const int r = (root + k) % team.size;
        ex.send(r, in + blocks.offsets[r], blocks.bytes[r]);
    }
    std::unique_ptr<MpiError> own;
    if (recv != nullptr) own = linear::copy_own(in + blocks.offsets[root], blocks.bytes[root], recv, recv_bytes, root);
    ex.wait();
    if (own) throw *own;
}

void scatter_linear(const Team& team, const void* send, void* recv, std::int64_t block, int root) {
    const linear::Uniform u(team.size, block);
    scatterv_linear(team, send, u.blocks(), recv, block, root);
}

}  // namespace shmpi::coll
