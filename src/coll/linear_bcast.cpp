// Linear broadcast: the root sends its buffer to every other rank.
#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"

namespace shmpi::coll {

void bcast_linear(const Team& team, void* buf, std::int64_t bytes, int root) {
    using namespace linear;
    if (team.size == 1) return;
    if (team.rank != root) {
        recv(team, kTagBcast, root, buf, bytes);
        return;
    }
    Exchange ex(team, kTagBcast);
    for (int k = 1; k < team.size; ++k) ex.send((root + k) % team.size, buf, bytes);
    ex.wait();
}

}  // namespace shmpi::coll
