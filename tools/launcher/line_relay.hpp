// Passing ranks' output through mpirun, one whole line at a time.
//
// Every rank writes its stdout and stderr into pipes that only mpirun reads.
// mpirun is single-threaded and writes each batch of complete lines with one
// uninterrupted write_all(), so a line from one rank is never split by or
// mixed with another rank's output, however much the ranks print at once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shmpi::launcher {

/// One of mpirun's own output streams, shared by the relays of every rank.
class OutputSink {
public:
    explicit OutputSink(int fd) : fd_(fd) {}
    ~OutputSink();
    OutputSink(const OutputSink&) = delete;
    OutputSink& operator=(const OutputSink&) = delete;

    /// Writes all of `data`, waiting in poll() for room, never blocked in
    /// write() itself: a pipe (mpirun | less) is reopened through
    /// /proc/self/fd as a non-blocking description of its own (mpirun does
    /// not own the flags of the one it inherited); another descriptor that
    /// can block gets at most PIPE_BUF bytes after each wait; a regular file
    /// is written straight.  Once the reader has gone (EPIPE or another
    /// write error) it discards everything and broken() turns true.
    void write_all(std::string_view data);
    bool broken() const { return broken_; }

    /// While write_all() waits for room it also watches `fds` (mpirun's
    /// signals and timers): when one turns readable it calls `serve`, which
    /// handles what came and returns true once the job is ending.  Then the
    /// sink stops waiting for a reader that does not read: this and all
    /// later output is discarded (abandoned()), so a stalled reader cannot
    /// keep mpirun from ending the job on --timeout or a signal.
    void watch(std::vector<int> fds, std::function<bool()> serve) {
        wake_ = std::move(fds);
        serve_ = std::move(serve);
    }
    bool abandoned() const { return abandoned_; }

private:
    enum class Kind { Unknown, File, NonBlocking, Other };
    void classify();

    int fd_;
    Kind kind_ = Kind::Unknown;
    int own_fd_ = -1;  ///< the non-blocking reopened pipe, if any
    bool broken_ = false;
    bool abandoned_ = false;
    std::vector<int> wake_;
    std::function<bool()> serve_;
};

/// Cuts one rank's stream into lines and writes them to a sink, each with
/// `prefix` in front ("[R] " for --tag-output, or nothing).
class LineRelay {
public:
    /// A line that grows past this many bytes without a newline is written
    /// out as a line of its own (with a newline added), so that one rank
    /// cannot make mpirun buffer without limit.  This is the only case in
    /// which a line is split.
    static constexpr std::size_t kMaxLine = std::size_t{8} << 20;

    LineRelay(OutputSink& sink, std::string prefix) : sink_(&sink), prefix_(std::move(prefix)) {}

    /// Takes the next bytes of the stream and writes every line they
    /// complete; keeps the unfinished tail for later.
    void feed(std::string_view bytes);
    /// At the end of the stream: writes an unfinished last line, adding the
    /// newline it lacks so the next rank's line does not continue it.
    void finish();

private:
    OutputSink* sink_;
    std::string prefix_;
    std::string pending_;  ///< the current unfinished line
    std::string out_;      ///< scratch for prefixed batches
};

}  // namespace shmpi::launcher
