#include "line_relay.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace shmpi::launcher {

void OutputSink::write_all(std::string_view data) {
    while (!data.empty() && !broken_) {
        const ssize_t n = ::write(fd_, data.data(), data.size());
        if (n >= 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
        } else if (errno == EAGAIN) {
            pollfd p{fd_, POLLOUT, 0};
            ::poll(&p, 1, -1);
        } else if (errno != EINTR) {
            broken_ = true;  // EPIPE (SIGPIPE is ignored in mpirun), EIO, ENOSPC...
        }
    }
}

void LineRelay::feed(std::string_view bytes) {
    const std::size_t last_nl = bytes.rfind('\n');
    if (last_nl == std::string_view::npos) {
        pending_.append(bytes);
        if (pending_.size() >= kMaxLine) finish();
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
        out_.clear();
        out_.reserve(complete.size() + pending_.size() + 16 * prefix_.size());
        std::size_t start = 0;
        bool first = true;
        while (start < complete.size()) {
            const std::size_t nl = complete.find('\n', start);
            out_ += prefix_;
            if (first) out_ += pending_;
            first = false;
            out_.append(complete.substr(start, nl + 1 - start));
            start = nl + 1;
        }
        sink_->write_all(out_);
    }
    pending_.assign(bytes.substr(last_nl + 1));
    if (pending_.size() >= kMaxLine) finish();
}

void LineRelay::finish() {
    if (pending_.empty()) return;
    out_.clear();
    out_ += prefix_;
    out_ += pending_;
    out_ += '\n';
    pending_.clear();
    sink_->write_all(out_);
}

}  // namespace shmpi::launcher
