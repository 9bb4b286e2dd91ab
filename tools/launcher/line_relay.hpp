// Passing ranks' output through mpirun, one whole line at a time.
//
// Every rank writes its stdout and stderr into pipes that only mpirun reads.
// mpirun is single-threaded and writes each batch of complete lines with one
// uninterrupted write_all(), so a line from one rank is never split by or
// mixed with another rank's output, however much the ranks print at once.
// Only a line that stays unfinished for LineRelay::kHold (a prompt that
// waits for input) is written in parts.
#pragma once

#include <chrono>
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
    /// Why it broke: EPIPE when the reader went away, else the write's
    /// error (ENOSPC, EIO, ...).
    int error() const { return error_; }

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

    /// Tagged output (--tag-output) keeps every tag at the start of a line.
    /// A relay that writes a held tail without its newline (after
    /// LineRelay::kHold) leaves the line open as its own; before anyone
    /// else writes, take() ends that line with a newline.  `writer` only
    /// identifies the caller (a relay, or this sink for mpirun's own
    /// messages); it is compared, never followed.
    void take(const void* writer) {
        if (open_line_ != nullptr && open_line_ != writer) {
            open_line_ = nullptr;
            write_all("\n");
        }
    }
    void leave_open(const void* writer) { open_line_ = writer; }
    void close_line(const void* writer) {
        if (open_line_ == writer) open_line_ = nullptr;
    }
    bool is_open(const void* writer) const { return open_line_ == writer; }
    /// One of mpirun's own messages, on a line of its own.
    void write_line(std::string_view text) {
        take(this);
        write_all(text);
    }

private:
    enum class Kind { Unknown, File, NonBlocking, Other };
    void classify();

    int fd_;
    Kind kind_ = Kind::Unknown;
    int own_fd_ = -1;  ///< the non-blocking reopened pipe, if any
    bool broken_ = false;
    int error_ = 0;
    bool abandoned_ = false;
    std::vector<int> wake_;
    std::function<bool()> serve_;
    const void* open_line_ = nullptr;  ///< whose tagged line is partly written
};

/// Cuts one rank's stream into lines and writes them to a sink, each with
/// `prefix` in front ("[R] " for --tag-output, or nothing).  The bytes go
/// out as the rank wrote them, nothing added or changed (binary output
/// too), except, when tagged, the prefixes and the newlines that keep each
/// prefix at the start of a line: one after a stream's unfinished last
/// line, and one after a held tail that was written on its own when
/// another rank's output or mpirun's message comes next.
class LineRelay {
public:
    using Clock = std::chrono::steady_clock;
    /// An unfinished line is held back in the hope of the rest for this
    /// long, then written as it is (a prompt, a progress dot): the rest
    /// continues it when it comes.  Another rank's line may come between:
    /// untagged, on the same line; tagged, the held part's line is ended
    /// first and the rest starts a line with its tag.
    static constexpr std::chrono::milliseconds kHold{200};
    /// An unfinished line that grows to this many bytes is written at once,
    /// so that one rank cannot make mpirun buffer without limit.
    static constexpr std::size_t kMaxLine = std::size_t{8} << 20;

    LineRelay(OutputSink& sink, std::string prefix) : sink_(&sink), prefix_(std::move(prefix)) {}

    /// Takes the next bytes of the stream and writes every line they
    /// complete; keeps the unfinished tail for later.  `now`: when they
    /// came (the hold of a new tail starts then).
    void feed(std::string_view bytes, Clock::time_point now = Clock::now());
    /// How long the held tail still has to wait by `now` (0: its kHold is
    /// over), or -1 if nothing is held: the longest poll() may sleep for
    /// this relay.
    int due_in(Clock::time_point now) const;
    /// Writes the held tail if its kHold is over by `now`.  The caller
    /// calls it only when the rank's pipe had nothing more to read, so
    /// that a tail whose rest already waits there (mpirun was busy
    /// elsewhere) is not split from it.
    void flush_if_due(Clock::time_point now) {
        if (due_in(now) == 0) flush_partial();
    }
    /// At the end of the stream: writes an unfinished last line, with the
    /// newline it lacks when lines are tagged, so that the next rank's tag
    /// starts a line.
    void finish();

private:
    /// Writes the held tail as it is; the next bytes continue its line.
    void flush_partial();

    OutputSink* sink_;
    std::string prefix_;
    std::string pending_;  ///< the current unfinished line, not written yet
    Clock::time_point held_since_{};  ///< when pending_ turned non-empty
    // Whether part of the current line is out (tagged) is the sink's
    // is_open(this): kept there, so another writer can end it.
    std::string out_;  ///< scratch for prefixed batches
};

}  // namespace shmpi::launcher
