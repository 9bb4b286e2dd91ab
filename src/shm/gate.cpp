// The lock of MPI_THREAD_MULTIPLE (gate.hpp).
#include "shm/gate.hpp"

#include "shm/futex.hpp"

namespace shmpi::shm {
namespace {

/// The lock itself.  A plain mutex: the depth below makes it recursive for
/// the calls a callback makes inside a call.
std::mutex lock;
/// How deeply this thread holds `lock` (0: not at all).  Read and written by
/// its own thread only.
thread_local int depth = 0;

}  // namespace

void Gate::Hold::enter() {
    held_ = true;
    if (depth++ == 0) lock.lock();
}

void Gate::Hold::leave() {
    if (--depth == 0) {
        wake_sleepers();
        lock.unlock();
    }
}

void Gate::Open::open() {
    if (depth == 0) return;  // not in a call (a wait outside the C boundary: tests)
    depth_ = depth;
    depth = 0;
    lock.unlock();
}

void Gate::Open::close() {
    lock.lock();
    depth = depth_;
}

void Gate::wake_sleepers() {
    if (sleepers_.load(std::memory_order_relaxed) == 0) return;
    std::atomic<std::uint32_t>* bell = doorbell_.load(std::memory_order_relaxed);
    if (bell != nullptr) ring_doorbell(*bell);  // wakes every sleeper: they share it
}

}  // namespace shmpi::shm
