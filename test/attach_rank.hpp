// Attaching a forked test process to a segment as one of its ranks, the way
// mpirun's children do: the segment's descriptor, rank and size go into the
// environment that Transport::from_environment() reads.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace shmpi_test {

/// Makes `rank` of `size` in `seg` from this (forked) process.  The
/// descriptor is duplicated without close-on-exec, as mpirun passes it.
inline std::unique_ptr<shmpi::shm::Transport> attach_rank(const shmpi::shm::Segment& seg, int rank, int size) {
    const int fd = fcntl(seg.fd(), F_DUPFD, 0);
    setenv(shmpi::shm::kEnvFd, std::to_string(fd).c_str(), 1);
    setenv(shmpi::shm::kEnvRank, std::to_string(rank).c_str(), 1);
    setenv(shmpi::shm::kEnvSize, std::to_string(size).c_str(), 1);
    return shmpi::shm::Transport::from_environment();
}

}  // namespace shmpi_test
