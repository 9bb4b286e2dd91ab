// Linear barrier: everyone reports to rank 0, then rank 0 releases everyone.
#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"

namespace shmpi::coll {

void barrier_linear(const Team& team) {
    using namespace linear;
    if (team.size == 1) return;
    if (team.rank != 0) {
        send(team, kTagBarrier, 0, nullptr, 0);
        recv(team, kTagBarrier, 0, nullptr, 0);
        return;
    }
    Exchange arrive(team, kTagBarrier);
    for (int r = 1; r < team.size; ++r) arrive.recv(r, nullptr, 0);
    arrive.wait();
    Exchange release(team, kTagBarrier);
    for (int r = 1; r < team.size; ++r) release.send(r, nullptr, 0);
    release.wait();
}

}  // namespace shmpi::coll
