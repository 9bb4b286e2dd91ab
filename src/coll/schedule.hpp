// A nonblocking collective as one member runs it: a list of rounds, each
// some local work (copies, packs, combines) followed by sends and receives.
// A round starts when every message of the round before it is complete, so
// a member forwards or combines only what it has.  The engine advances the
// schedule from progress() (p2p::Task), that is from every wait and test of
// any MPI call, and never blocks on it.
//
// Messages travel on the communicator's nbc_context() with the call's tag
// (plus a sub-tag where one call sends a peer two kinds of message), so they
// meet no point-to-point message, no blocking collective's and no other
// nonblocking collective's.  Within one call, two messages between a pair
// with the same tag match in the order they were started: the members'
// schedules are built to start them in the same order on both sides.
//
// A receive must get exactly the bytes it expects (collectives require
// equal type signatures on both sides): a longer message is MPI_ERR_TRUNCATE
// (the engine keeps what fits), a shorter one MPI_ERR_COUNT.  The schedule
// still runs to its end, so no member waits for messages that never come;
// the first error is what the request reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dtype/datatype.hpp"
#include "p2p.hpp"

namespace shmpi::coll {

class Schedule final : public p2p::Task {
public:
    /// A schedule of the member `rank` of a team whose world ranks are
    /// `world`, on `context` with tag `tag`.
    Schedule(p2p::Engine& engine, std::uint32_t context, std::int32_t tag, int rank,
             std::vector<std::uint32_t> world);

    // ---- Building, before start() ----

    /// Ends the current round: what is added next waits for its messages.
    void next_round();
    /// Runs `work` at the start of the current round, before its messages
    /// are started (in the order added).
    void local(std::function<void()> work);
    /// `count` elements of `type` to or from team member `peer` (never this
    /// member), with the call's tag plus `sub` (0 to 63).
    void send(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type, int sub = 0);
    void recv(int peer, void* buf, std::int64_t count, const dtype::Datatype& type, int sub = 0);
    /// Dense bytes (MPI_BYTE).
    void send_bytes(int peer, const void* buf, std::int64_t bytes, int sub = 0);
    void recv_bytes(int peer, void* buf, std::int64_t bytes, int sub = 0);

    /// An intercommunicator's schedule: the team above is the local group
    /// (on its own context), and the remote group, whose world ranks are
    /// `world`, is reached on `context` with the same tag.  This member is
    /// rank() to both: a message carries its sender's rank in the sender's
    /// own group.
    void set_remote(std::uint32_t context, std::vector<std::uint32_t> world);
    /// send() and recv() with rank `peer` of the remote group.
    void send_remote(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type, int sub = 0);
    void recv_remote(int peer, void* buf, std::int64_t count, const dtype::Datatype& type, int sub = 0);
    void send_remote_bytes(int peer, const void* buf, std::int64_t bytes, int sub = 0);
    void recv_remote_bytes(int peer, void* buf, std::int64_t bytes, int sub = 0);
    int remote_size() const { return static_cast<int>(remote_world_.size()); }
    /// Memory that lives as long as the schedule (never null, even for 0).
    std::byte* scratch(std::int64_t bytes);
    /// Keeps `t` alive as long as the schedule (the user may free it).
    void hold(const dtype::Datatype& t);
    /// Keeps any object alive as long as the schedule (an operation's
    /// binding, a copy of the user's count arrays).
    void keep(std::shared_ptr<const void> object) { kept_.push_back(std::move(object)); }

    /// Records an error for the request to report (the first one counts);
    /// the schedule runs on.
    void report(int error_class, std::string text);

    int rank() const { return rank_; }
    int size() const { return static_cast<int>(world_.size()); }

    /// Hands the schedule to the engine, which starts its first round now.
    /// Returns it: the request the user waits on.
    p2p::Task* start();

    bool advance() override;

private:
    enum class Kind : std::uint8_t { Local, Send, Recv };
    struct Step {
        Kind kind = Kind::Local;
        int peer = 0;
        int sub = 0;
        bool remote = false;  ///< to or from the remote group (set_remote())
        void* buf = nullptr;
        std::int64_t count = 0;
        const dtype::Datatype* type = nullptr;
        std::function<void()> work;  ///< Local only
    };
    struct Posted {
        p2p::Request* req = nullptr;
        const Step* step = nullptr;
    };

    void begin_round();
    /// Checks a finished receive and records its error, if any.
    void check(const Posted& p);

    p2p::Engine& engine_;
    std::uint32_t context_;
    std::int32_t tag_;
    int rank_;
    std::vector<std::uint32_t> world_;
    std::uint32_t remote_context_ = 0;
    std::vector<std::uint32_t> remote_world_;
    std::vector<std::vector<Step>> rounds_{1};
    std::size_t round_ = 0;       ///< the round running now
    bool round_begun_ = false;    ///< its local work ran and its messages are started
    std::vector<Posted> posted_;  ///< the messages of the round running now
    std::vector<std::unique_ptr<std::byte[]>> scratch_;
    std::vector<dtype::Ref> types_;
    std::vector<std::shared_ptr<const void>> kept_;
};

}  // namespace shmpi::coll
