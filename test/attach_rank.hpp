// Test ranks in forked processes: attaching a process to a segment as one
// of its ranks, the way mpirun's children do (the segment's descriptor, rank
// and size go into the environment that Transport::from_environment()
// reads), and running a body in a child that reports back through a pipe.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
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

/// A child process started by spawn(), and the pipe it reports through.
struct Child {
    pid_t pid = -1;
    int out = -1;
};

/// Runs `body` in a forked child, which writes what `body` returns to its
/// pipe and exits 0; an exception out of `body` is written as
/// "other: <what>".  The parent goes on at once (collect() waits).
inline Child spawn(const std::function<std::string()>& body) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        std::string out;
        try {
            out = body();
        } catch (const std::exception& e) {
            out = std::string("other: ") + e.what();
        }
        const ssize_t ignored = write(pipefd[1], out.data(), out.size());
        (void)ignored;
        _exit(0);
    }
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return {};
    }
    return {pid, pipefd[0]};
}

/// What the child wrote, once it has exited; nullopt when it could not be
/// started or did not exit normally.
inline std::optional<std::string> collect(const Child& c) {
    if (c.pid < 0) return std::nullopt;
    std::string got;
    char buf[512];
    for (ssize_t n; (n = read(c.out, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    close(c.out);
    int status = 0;
    waitpid(c.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return got;
}

}  // namespace shmpi_test
