// The CPUs this process may run on, for the microbenchmarks that pin their
// threads (micro_ring.cpp, micro_flags.cpp).
#pragma once

#include <sched.h>

#include <vector>

namespace shmpi::bench {

/// The CPUs this process may run on, in order (empty if they cannot be read).
inline std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    return cpus;
}

}  // namespace shmpi::bench
