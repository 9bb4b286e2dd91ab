// The point-to-point engine: matching, protocols and requests on top of the
// shared-memory transport.
//
// Protocols, chosen by the sender from the message size:
//   eager       (size <= eager limit): the bytes travel in the cells of the
//               ring, in one Eager cell and as many Cont cells as needed.  A
//               synchronous send uses EagerSync, which the receiver answers
//               with Ack when it matches the message.
//   streamed    (size > eager limit, our stream buffer free): the sender
//               posts Rts with kStreamed and copies (packs) the data piece
//               by piece into its stream buffer in the segment; the receiver
//               copies (unpacks) each piece out as soon as it is announced
//               and hands the room back.  Both sides advance in progress().
//               The receiver answers Fin once it has what it takes.
//   rendezvous  (size > eager limit, stream buffer taken): the sender posts
//               Rts with the address of its (packed) buffer.  When the
//               receiver matches it, it copies the data straight out of the
//               sender's memory (process_vm_readv: one copy) and answers
//               Fin.  If the kernel refuses, it answers Cts instead, and the
//               sender streams the bytes through the ring in Data cells.
// Every cell starts with a Wire header.  Cells from one sender arrive in
// order and the cells of one message are never interleaved with another's,
// so messages between a pair never overtake one another.
//
// Matching follows MPI: a receive takes the first message (in arrival order)
// whose context, source and tag fit; a message takes the first posted receive
// that fits.  Messages nobody asked for yet wait in the unexpected queue, in
// heap memory, with no limit but memory.  While a queue is long, an index by
// (context, source, tag) finds the match without walking it
// (match_index.hpp).
#pragma once

#include <boost/intrusive/list.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "context_ids.hpp"
#include "dtype/datatype.hpp"
#include "match_index.hpp"
#include "request.hpp"
#include "shm/transport.hpp"

namespace shmpi::p2p {

enum class Kind : std::uint8_t { Eager = 1, EagerSync, Cont, Rts, Cts, Data, Fin, Ack };

/// The header at the start of every cell.  Copied out of shared memory before
/// use; every field is checked before it steers anything.
struct Wire {
    Kind kind;
    std::uint8_t flags;              ///< kStreamed, or 0
    std::uint8_t unused[2];
    std::uint32_t frag;              ///< payload bytes in this cell
    std::int32_t tag;
    std::uint32_t context;
    std::int32_t src;                ///< sender's rank in the communicator
    /// EagerSync, Rts: 1 + the sender's claim slot (shm::RankSlot::send_claims)
    /// while MPI_Cancel may still cancel the send; 0 when it cannot.
    std::uint32_t claim;
    std::uint64_t total;             ///< bytes of the message (Eager*, Rts)
    std::uint64_t sender_token;      ///< names the send (EagerSync, Rts -> Ack, Fin, Cts)
    union {
        std::uint64_t receiver_token;  ///< names the receive (Cts, Data)
        /// Rts: the sender's buffer; streamed Rts (kStreamed): the offset in
        /// the sender's stream buffer of the message's first byte.
        std::uint64_t addr;
    };
};
/// Wire::flags of an Rts: the data comes through the sender's stream buffer
/// in the segment (Transport's streams), not from `addr`.
inline constexpr std::uint8_t kStreamed = 1;

/// The payload starts right after the header, so a message of up to 16
/// bytes travels in the cell's first 64-byte line together with its header.
inline constexpr std::size_t kWireBytes = 48;
static_assert(sizeof(Wire) == kWireBytes, "the wire header must fill exactly its reserved space in a cell");

enum class Mode { Standard, Sync };

/// A message that arrived before a receive asked for it.
struct Unexpected : QueueHook {
    Wire wire;                      ///< its first cell's header (Eager, EagerSync or Rts)
    std::uint32_t src_world;
    std::vector<std::byte> data;    ///< eager payload, `arrived` bytes filled so far
    std::uint64_t arrived = 0;
    /// Its place in arrival order (Engine::unexpected_seq_): the queue is
    /// in this order, so a waiting probe looks only at what came after its
    /// last look.
    std::uint64_t seq = 0;
    /// Its places in the index of waiting messages, one per shape of
    /// pattern (MatchKey::shape()), while there is an index.
    MatchLink<Unexpected> match_links[4];
};

/// The eager limit of a job of `ranks` ranks when SHMPI_EAGER_LIMIT does not
/// set one.  Up to 8 ranks a ring has 32 cells of 4 KiB, and a 32 KiB
/// message takes a quarter of it: 24-32 KiB ping-pongs took 15-23% less time
/// eager than through the rendezvous, derived-type ones 40-50% less
/// (docs/BENCHMARKS.md).  With 16 cells per ring, from 9 ranks, 32 KiB
/// messages were slower eager.
constexpr std::uint64_t default_eager_limit(std::uint64_t ranks) { return ranks <= 8 ? 32768 : 16384; }

/// Chooses, piece by piece, how a streamed send of a non-contiguous type
/// fills its stream buffer, by timing both ways on this process's sends:
///   Direct  pack straight into the stream buffer;
///   Staged  pack into a private piece buffer (in L1), then copy the piece
///           into the stream buffer with one memcpy.
/// The stream buffer's lines were last read by the receiver's CPU.  Stores
/// of a pack into them each wait for the line to come back, while a long
/// memcpy (rep movsb) claims whole lines without reading them.  On the
/// 2-CPU VM (bench/dtype_sendrecv, docs/BENCHMARKS.md), while a line took
/// 0.3 us to cross between the CPUs a 64 KiB message of 256 B to 4 KiB
/// blocks took 5-6 us staged against 13-15 direct, and 1 MiB 75-90 us
/// against 130-150; while a line took 0.07 us, 64 KiB took 2.3-2.8 us
/// staged against 2.9-3.8 direct, but 1 MiB 53-61 against 35-45.  Which
/// holds depends on where the two ranks run, so each process times the
/// pieces it packs (clamped against descheduling) and takes the cheaper
/// way, trying the other one piece in kExplore.  SHMPI_STAGED_PIECES=0 or
/// 1 fixes the way (Engine reads it in MPI_Init).
class PieceWays {
public:
    enum class Way : std::uint8_t { Direct = 0, Staged = 1 };
    /// Chooses by timing, or always `forced` when there is one.
    explicit PieceWays(std::optional<Way> forced = std::nullopt) : forced_(forced) {}
    /// The way to fill the next piece.
    Way next();
    /// Records that a piece of `bytes` bytes took `ticks` ticks `way`.
    void took(Way way, std::uint64_t ticks, std::uint64_t bytes);
    /// A tick counter for took(): the time-stamp counter where there is one.
    static std::uint64_t now();

private:
    static constexpr std::uint32_t kExplore = 64;
    std::optional<Way> forced_;
    /// Ticks per KiB of each way, a moving average; 0 while untried.
    std::uint64_t cost_[2] = {0, 0};
    std::uint32_t pieces_ = 0;
};

class Engine {
public:
    explicit Engine(shm::Transport& transport);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    shm::Transport& transport() { return transport_; }
    /// Receives posted and not matched yet, and messages here that no
    /// receive has matched yet (read by the tool interface's performance
    /// variables, api_mpit.cpp).  Messages still in the rings are not
    /// counted.
    std::size_t posted_receives() const { return posted_.size(); }
    std::size_t unexpected_messages() const { return unexpected_.size(); }
    /// The context ids this process's communicators hold (every
    /// Communicator holds its own from construction to deletion).
    ContextIds& context_ids() { return context_ids_; }

    /// Starts sending `count` elements of `type` at `buf` to world rank
    /// `dst_world`, as communicator rank `my_rank` on `context`.  Returns a new
    /// request (possibly already done) that the caller owns.
    Request* isend(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                   std::uint32_t dst_world, const void* buf, std::int64_t count,
                   const dtype::Datatype& type, Mode mode);
    /// The blocking form; returns when the buffer may be reused (and, for
    /// Mode::Sync, the receive has started).
    void send(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
              std::uint32_t dst_world, const void* buf, std::int64_t count,
              const dtype::Datatype& type, Mode mode);

    /// Posts a receive; `src` is a communicator rank or MPI_ANY_SOURCE, `tag`
    /// a tag or MPI_ANY_TAG.  Returns a new request the caller owns.
    Request* irecv(std::uint32_t context, std::int32_t src, std::int32_t tag, void* buf,
                   std::int64_t count, const dtype::Datatype& type);
    /// The blocking form; fills `status` (MPI_ERROR is MPI_ERR_TRUNCATE when the
    /// message did not fit).
    /// Returns the size in bytes of the message that matched.  `src_world`,
    /// the world rank of `src` when the caller knows it, enables the fast path.
    std::uint64_t recv(std::uint32_t context, std::int32_t src, std::int32_t tag, void* buf,
                       std::int64_t count, const dtype::Datatype& type, MPI_Status& status,
                       std::int64_t src_world = -1);

    /// True, with `status` filled, when a matching message has arrived.
    bool iprobe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status);
    void probe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status);
    /// Matched probes (MPI_Improbe, MPI_Mprobe): like iprobe()/probe(), but
    /// the message found leaves the queue, and only imrecv() can receive it.
    /// The caller owns the result until it hands it to imrecv().
    Unexpected* improbe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status);
    Unexpected* mprobe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status);
    /// Receives the message a matched probe took out; returns a new request
    /// the caller owns.
    Request* imrecv(Unexpected* message, void* buf, std::int64_t count, const dtype::Datatype& type);

    /// MPI_Cancel: a receive that no message has matched yet, and a send
    /// that no receive has matched yet (none of its cells written, or a
    /// synchronous or rendezvous send with a claim slot), complete at once
    /// as cancelled (true).  Anything else goes on and completes as usual
    /// (false), which MPI allows.
    bool cancel(Request* r);

    /// Blocks until `r` is done.
    void wait(Request& r);
    /// Blocks until `done()` holds, making progress meanwhile.
    template <class Done>
    void wait_until(Done&& done) {
        transport_.wait([&] {
            if (done()) return true;
            progress();
            return done();
        });
    }
    /// A test or a nonblocking probe found nothing (shm::Transport::missed).
    void missed() { transport_.missed(); }
    /// Drains incoming cells (except from world rank `skip`, whose ring a
    /// fast-path receive watches itself) and pushes queued outgoing ones.
    /// True if it did anything.
    bool progress(std::uint32_t skip = UINT32_MAX);

    /// Gives up the caller's ownership of `r`: deleted now if done, else when
    /// it completes.
    void release(Request* r);
    /// Takes `t` into progress(): from now on every progress() call (and so
    /// every wait of this engine, in any MPI call) advances it until it is
    /// done.  Advances it once at once.  The caller owns it as any request.
    void start(Task* t);
    /// A new request, in the memory of a deleted one when there is some:
    /// nonblocking calls allocate nothing in steady state.  Every request
    /// that reaches release() must come from here or from plain `new`.
    Request* new_request();

    /// Blocks until every queued outgoing cell is in a ring and every send
    /// (freed ones included) has completed.
    void flush();

    /// Messages up to this many bytes go eagerly (SHMPI_EAGER_LIMIT).
    std::uint64_t eager_limit() const { return eager_limit_; }

private:
    /// Appends `u` to the unexpected queue with the next seq.
    void unexpected(Unexpected* u);
    /// The first queued message that fits, or nullptr.  With `seen`, only
    /// messages whose seq is above *seen are looked at (the earlier ones did
    /// not fit at the caller's last look, and a message never starts to
    /// fit), and *seen becomes the last seq given.
    Unexpected* first_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                 std::uint64_t* seen = nullptr);
    /// Probing, once (poll: progress, then look; nullptr when nothing fits)
    /// or until a message fits (wait); `status` describes the message found.
    /// `take`: the probe takes the message (a matched probe), so that its
    /// sender can no longer cancel it; a plain probe leaves that open.
    Unexpected* poll_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                MPI_Status& status, bool take);
    Unexpected* wait_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                MPI_Status& status, bool take);

    struct Outgoing {
        Wire wire;
        const std::byte* data = nullptr;
        /// When set, the payload is packed from `count` elements of `type`
        /// at `buf` straight into the cells (and `data` is unused).  The
        /// request this belongs to holds a reference on the type.
        const dtype::Datatype* type = nullptr;
        const void* buf = nullptr;
        std::int64_t count = 0;
        std::uint64_t len = 0;
        std::uint64_t sent = 0;
        bool started = false;
        Request* done_when_copied = nullptr;
    };
    /// The message whose Cont cells are arriving from one sender.
    struct Inbound {
        Request* req = nullptr;
        Unexpected* ux = nullptr;
        std::uint64_t remaining = 0;
    };

    bool try_send_now(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                      std::uint32_t dst_world, const void* buf, std::int64_t count,
                      const dtype::Datatype& type, Mode mode);
    int try_recv_now(std::uint32_t context, std::int32_t src, std::uint32_t src_world,
                     std::int32_t tag, void* buf, std::uint64_t capacity, MPI_Status& status);
    void queue(std::uint32_t dst, Outgoing&& o);
    void control(std::uint32_t dst, Kind kind, std::uint64_t sender_token,
                 std::uint64_t receiver_token);
    bool pump(std::uint32_t dst);
    bool pump_one(std::uint32_t dst, Outgoing& o);

    void on_cell(std::uint32_t src_world, const std::byte* cell);
    void on_first(std::uint32_t src_world, const Wire& w, const std::byte* payload);
    void on_cont(std::uint32_t src_world, const Wire& w, const std::byte* payload);
    void on_data(std::uint32_t src_world, const Wire& w, const std::byte* payload);
    void on_token_done(std::uint32_t src_world, const Wire& w);
    void on_cts(std::uint32_t src_world, const Wire& w);

    Request* match_posted(const Wire& w);
    /// The earliest posted receive that fits `w`, left in the queue.
    Request* first_posted(const Wire& w);
    /// The first waiting message that fits, as first_unexpected(), leaving
    /// out (and deleting) cancelled ones; with `take`, as still_wanted().
    Unexpected* wanted_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                  std::uint64_t* seen = nullptr, bool take = true);
    /// Cancelling sends: a send whose EagerSync or Rts is out is cancelled
    /// only if no receive matched it first; the claim slot it names in our
    /// RankSlot decides (shm::RankSlot::send_claims).
    void open_claim(Request* s, Wire& w);
    void close_claim(Request* s);
    /// A receive or matched probe takes `w` from `src_world` (`take`), or a
    /// plain probe looks at it: false when its sender cancelled it (then
    /// nothing may take it), true when it is ours now (with `take`) or
    /// still to be had.
    bool still_wanted(const Wire& w, std::uint32_t src_world, bool take = true);
    /// Drops a waiting message whose send was cancelled.
    void discard(Unexpected* u);
    /// Waiting messages that name a claim slot (cancellable sends), and
    /// how many of them make unexpected() look for cancelled ones among
    /// all: a cancelled send whose tag no receive asks for again would
    /// otherwise stay queued, payload and all, for the rest of the job.
    /// The bound doubles past what stays, so each message is looked at a
    /// bounded number of times on average; it comes down to twice what is
    /// left (64 at least) as messages leave, so that a burst that has gone
    /// does not let cancelled messages pile up to its size again.
    std::size_t claimed_unexpected_ = 0;
    std::size_t claim_sweep_at_ = kFirstClaimSweep;
    static constexpr std::size_t kFirstClaimSweep = 64;
    /// The bound for what waits now: twice it, 64 at least.
    std::size_t claim_sweep_bound() const { return std::max(kFirstClaimSweep, 2 * (claimed_unexpected_ + 1)); }
    void drop_cancelled_unexpected();
    bool cancel_send(Request* s);
    std::vector<std::uint16_t> free_claims_;  ///< our unused claim slots
    void post(Request* r);
    void take(Request* r, Unexpected* u);
    void begin_match(Request* r, const Wire& w, std::uint32_t src_world);
    void start_pull(Request* r, const Wire& w, std::uint32_t src_world);
    static void deliver(Request* r, const std::byte* p, std::uint64_t n);
    bool pull(Request* r, std::uint32_t src_world, std::uint64_t addr, std::uint64_t n);
    void finish_recv(Request* r);
    /// MPI_ERR_TYPE in `status` (if it holds no error yet) when `got` bytes,
    /// received into a buffer of `capacity`, end inside a basic element of
    /// `type`: such bytes cannot come from a send whose type signature
    /// matches (MPI-3.1 3.3.1), and the last element is half written.
    static void check_elements(MPI_Status& status, const dtype::Datatype& type, std::uint64_t got,
                               std::uint64_t capacity);
    void complete(Request* r);
    std::uint64_t new_token(Request* r);
    Request* take_token(std::uint64_t token, const char* what, std::uint32_t src_world);
    void setup_recv(Request* r, std::uint32_t context, std::int32_t src, std::int32_t tag,
                    void* buf, std::int64_t count, const dtype::Datatype& type);
    void setup_send(Request* r, std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                    std::uint32_t dst_world, const void* buf, std::int64_t count,
                    const dtype::Datatype& type, Mode mode);
    bool advance_out_stream();
    void fill_piece(std::byte* dst, std::uint64_t len);
    bool advance_in_stream(std::size_t i);

    shm::Transport& transport_;
    ContextIds context_ids_;
    std::uint32_t size_;
    std::uint64_t payload0_;  ///< payload bytes per cell
    std::uint64_t eager_limit_;
    std::vector<std::deque<Outgoing>> outq_;    ///< per destination world rank
    std::vector<std::uint32_t> busy_dsts_;      ///< destinations with queued cells
    std::vector<Inbound> inbound_;              ///< per source world rank
    boost::intrusive::list<Request> posted_;    ///< not owned; in posting order
    boost::intrusive::list<Unexpected> unexpected_;  ///< owned: deleted when matched; in arrival order
    std::uint64_t unexpected_seq_ = 0;              ///< the last seq given (unexpected())
    std::uint64_t post_seq_ = 0;                    ///< the last Request::post_seq given (post())
    /// The indexes of the two queues (match_index.hpp), on while a queue
    /// is long.
    MatchIndex<Request, 1> posted_index_;
    MatchIndex<Unexpected, 4> unexpected_index_;
    /// Posted receives in the index, by the shape of their pattern: a
    /// message looks only at the shapes that have some.
    std::size_t posted_shapes_[4] = {};
    /// Takes `r` out of the posted receives, `u` out of the waiting
    /// messages (not deleted), with their indexes.
    void unpost(Request* r);
    void forget(Unexpected* u);
    std::unordered_map<std::uint64_t, Request*> tokens_;
    std::uint64_t next_token_ = 1;
    std::uint64_t pending_sends_ = 0;
    /// Memory of deleted requests, for new_request(), without the lock of
    /// HandleStorage: at most kSpareRequests of them (none in
    /// AddressSanitizer builds), the others go to HandleStorage.
    std::vector<void*> spare_requests_;
    static constexpr std::size_t kSpareRequests = 64;
    /// Ends `r`'s life; its memory goes to spare_requests_ or back to the heap.
    void drop(Request* r);

    /// Tasks not done yet, in no particular order.
    std::vector<Task*> tasks_;
    /// progress() is advancing tasks_ now: a task that sends or receives
    /// calls progress() again, which must not advance the tasks again.
    bool in_tasks_ = false;
    bool advance_tasks();

    /// Our streamed send: at most one at a time, since we have one stream
    /// buffer.  `req` holds a reference on `type`.
    struct OutStream {
        Request* req = nullptr;  ///< nullptr: no stream
        const dtype::Datatype* type = nullptr;
        const void* buf = nullptr;
        std::int64_t count = 0;
        std::uint64_t packed = 0;  ///< bytes packed into the buffer so far
        std::uint64_t start = 0;   ///< offset of byte 0 in our stream buffer
        /// A buffered stream (an eager send, done when its Rts went out;
        /// req is then nullptr): the token its Rts named, until the Fin of
        /// `dst_world` frees the buffer; 0 otherwise.
        std::uint64_t buffered = 0;
        std::uint32_t dst_world = 0;
    };
    OutStream out_stream_;
    void begin_stream(Wire& w, Request* s, const dtype::Datatype& type, const void* buf, std::int64_t count);
    /// Where our next stream starts in our stream buffer: just past the
    /// last one (rounded up to a page), so consecutive streams of less than
    /// the buffer write into lines the receivers have not read lately.
    /// Starting every stream at offset 0 made a 64 KiB stream write, again
    /// and again, the lines its receiver had just read, each store first
    /// taking the line back from the receiver's cache: 64 KiB one way took
    /// 8.3 us against 3.4 (docs/BENCHMARKS.md, "Streams that move on").
    std::uint64_t next_stream_start_ = 0;
    /// Streams we read: at most one per sender.
    struct InStream {
        Request* req = nullptr;
        std::uint32_t src_world = 0;
        std::uint64_t sender_token = 0;
        std::uint64_t total = 0;   ///< bytes of the message
        std::uint64_t wanted = 0;  ///< bytes the receive takes: min(total, capacity)
        std::uint64_t read = 0;    ///< bytes read out of the buffer so far
        std::uint64_t start = 0;   ///< offset of byte 0 in the sender's stream buffer
    };
    std::vector<InStream> in_streams_;
    /// Streams start on a page of the stream buffer.
    static constexpr std::uint64_t kStreamStartAlign = 4096;
    /// Bytes a streamed send packs between two announcements.
    static constexpr std::uint64_t kStreamPiece = 16 * 1024;
    /// The same for a buffered stream (an eager message): finer, so that
    /// the receiver's unpack of a slow type overlaps more of our pack
    /// (bench/dtype_sendrecv, struct layout: 16 KiB 3.8-3.9 us against
    /// 4.7 with 16 KiB pieces, 32 KiB 6.3-6.6 against 7.1-7.2; contiguous
    /// and vector layouts alike).
    static constexpr std::uint64_t kBufferedPiece = 8 * 1024;
    /// A streamed message of this many bytes or more is too large to stay
    /// in cache: the sender packs each piece prefetching ahead
    /// (dtype::Loads::kAhead), for blocks of the sizes where that pays
    /// (dtype/pack.cpp).
    static constexpr std::uint64_t kLargeMessage = std::uint64_t{4} << 20;
    /// Which way the pieces of non-contiguous streamed sends go in.
    PieceWays piece_ways_;
    /// Where a non-contiguous piece is packed before it is copied into the
    /// stream buffer (PieceWays::Way::Staged); allocated on first use.
    std::unique_ptr<std::byte[]> piece_buf_;
};

}  // namespace shmpi::p2p
