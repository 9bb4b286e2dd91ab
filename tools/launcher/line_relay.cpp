#include "line_relay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace shmpi::launcher {

OutputSink::~OutputSink() {
    if (own_fd_ >= 0) ::close(own_fd_);
}

void OutputSink::classify() {
    struct stat st {};
    kind_ = Kind::Other;
    if (::fstat(fd_, &st) != 0) return;
    if (S_ISREG(st.st_mode)) {
        kind_ = Kind::File;
    } else if (S_ISFIFO(st.st_mode)) {
        // A new open file description of the same pipe, O_NONBLOCK for us
        // alone.  (Fails with ENXIO once the reader has gone: the plain
        // descriptor then reports EPIPE.)
        const std::string self = "/proc/self/fd/" + std::to_string(fd_);
        own_fd_ = ::open(self.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (own_fd_ >= 0) kind_ = Kind::NonBlocking;
    }
}

void OutputSink::write_all(std::string_view data) {
    if (kind_ == Kind::Unknown) classify();
    const int fd = kind_ == Kind::NonBlocking ? own_fd_ : fd_;
    std::vector<pollfd> fds;
    bool room = kind_ != Kind::Other;  // try the write first, poll on EAGAIN
    while (!data.empty() && !broken_ && !abandoned_) {
        if (!room) {
            fds.assign(1, pollfd{fd, POLLOUT, 0});
            for (const int w : wake_) fds.push_back(pollfd{w, POLLIN, 0});
            if (::poll(fds.data(), fds.size(), -1) < 0) continue;  // EINTR
            bool woken = false;
            for (std::size_t i = 1; i < fds.size(); ++i) woken = woken || fds[i].revents != 0;
            if (woken && serve_ && serve_()) {
                abandoned_ = true;
                return;
            }
            if (fds[0].revents == 0) continue;
            // POLLERR or POLLHUP too: the write below reports them.
        }
        const std::size_t len =
            kind_ == Kind::Other ? std::min<std::size_t>(data.size(), PIPE_BUF) : data.size();
        const ssize_t n = ::write(fd, data.data(), len);
        if (n >= 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
            room = kind_ != Kind::Other;
        } else if (errno == EAGAIN) {
            room = false;
        } else if (errno != EINTR) {
            broken_ = true;  // EPIPE (SIGPIPE is ignored in mpirun), EIO, ENOSPC...
            error_ = errno;
        }
    }
}

void LineRelay::feed(std::string_view bytes, Clock::time_point now) {
    const std::size_t last_nl = bytes.rfind('\n');
    if (last_nl == std::string_view::npos) {
        if (pending_.empty()) held_since_ = now;
        pending_.append(bytes);
        if (pending_.size() >= kMaxLine) flush_partial();
        return;
    }
    const std::string_view complete = bytes.substr(0, last_nl + 1);
    if (prefix_.empty()) {
        if (pending_.empty()) {
            sink_->write_all(complete);
        } else {
            pending_.append(complete);
            sink_->write_all(pending_);
        }
    } else {
        sink_->take(this);
        const bool continuing = sink_->is_open(this);  // a held part of this line is out
        out_.clear();
        out_.reserve(complete.size() + pending_.size() + 16 * prefix_.size());
        std::size_t start = 0;
        bool first = true;
        while (start < complete.size()) {
            const std::size_t nl = complete.find('\n', start);
            if (!first || !continuing) out_ += prefix_;
            if (first) out_ += pending_;
            first = false;
            out_.append(complete.substr(start, nl + 1 - start));
            start = nl + 1;
        }
        sink_->write_all(out_);
        sink_->close_line(this);
    }
    pending_.assign(bytes.substr(last_nl + 1));
    held_since_ = now;
    if (pending_.size() >= kMaxLine) flush_partial();
}

int LineRelay::due_in(Clock::time_point now) const {
    if (pending_.empty()) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(held_since_ + kHold - now);
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
}

void LineRelay::flush_partial() {
    if (pending_.empty()) return;
    if (prefix_.empty()) {
        sink_->write_all(pending_);
        pending_.clear();
        return;
    }
    sink_->take(this);
    if (sink_->is_open(this)) {  // the line's start, with the tag, is out already
        sink_->write_all(pending_);
    } else {
        out_.clear();
        out_ += prefix_;
        out_ += pending_;
        sink_->write_all(out_);
    }
    pending_.clear();
    sink_->leave_open(this);
}

void LineRelay::finish() {
    flush_partial();
    if (sink_->is_open(this)) {  // tagged only: untagged relays never leave a line open
        sink_->write_all("\n");
        sink_->close_line(this);
    }
}

}  // namespace shmpi::launcher
