#include "p2p.hpp"

#include <sys/uio.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <fmt/format.h>

#include "arith.hpp"
#include "errors.hpp"
#include "shm/demote.hpp"
#include "shm/settings.hpp"

namespace shmpi::p2p {
namespace {

bool fits(std::int32_t want_src, std::int32_t want_tag, std::uint32_t want_ctx, const Wire& w) {
    return w.context == want_ctx && (want_src == MPI_ANY_SOURCE || want_src == w.src) &&
           (want_tag == MPI_ANY_TAG || want_tag == w.tag);
}

[[noreturn]] void corrupt(std::uint32_t src_world, const std::string& what) {
    throw MpiError(MPI_ERR_INTERN,
                   fmt::format("corrupt cell from rank {}: {}", src_world, what));
}

/// The largest eager message any rank may send (SHMPI_EAGER_LIMIT's bound).
constexpr std::uint64_t kMaxEagerTotal = std::uint64_t{1} << 30;

std::uint64_t eager_limit_from_env(std::uint64_t fallback) {
    return static_cast<std::uint64_t>(
        shm::integer_setting("SHMPI_EAGER_LIMIT", 0, static_cast<long long>(kMaxEagerTotal))
            .value_or(static_cast<long long>(fallback)));
}

/// SHMPI_STAGED_PIECES: 0 or 1 fixes how non-contiguous stream pieces are
/// filled (PieceWays); unset, empty or "auto" leaves it to their timing.
std::optional<PieceWays::Way> staged_pieces_from_env() {
    const auto v = shm::choice_setting("SHMPI_STAGED_PIECES", {"0", "1", "auto"});
    if (!v || *v == "auto") return std::nullopt;
    return *v == "0" ? PieceWays::Way::Direct : PieceWays::Way::Staged;
}

}  // namespace

Engine::Engine(shm::Transport& t)
    : transport_(t),
      size_(t.size()),
      payload0_(t.cell_bytes() - kWireBytes),
      eager_limit_(eager_limit_from_env(default_eager_limit(t.size()))),
      outq_(t.size()),
      inbound_(t.size()),
      piece_ways_(staged_pieces_from_env()) {
    spare_requests_.reserve(kSpareRequests);  // drop() never allocates
    for (std::size_t i = shm::kSendClaims; i-- > 0;) free_claims_.push_back(static_cast<std::uint16_t>(i));
    if (const shm::Segment* seg = t.segment()) context_ids_.share(seg->header().shared_context_users);
}

Engine::~Engine() {
    unexpected_.clear_and_dispose([](Unexpected* u) { delete u; });
    posted_.clear();
    // Their memory came from HandleStorage (new Request), and goes back there.
    for (void* p : spare_requests_) Request::operator delete(p, sizeof(Request));
}

// ---------------------------------------------------------------- sending

void Engine::setup_send(Request* s, std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                        std::uint32_t dst_world, const void* buf, std::int64_t count,
                        const dtype::Datatype& type, Mode mode) {
    s->type = Request::Type::Send;
    s->dst_world = dst_world;
    s->bytes = static_cast<std::uint64_t>(count * type.size);
    // A non-contiguous eager message is packed straight into the cells.  A
    // rendezvous message is streamed when our stream buffer is free: packed
    // (or, contiguous, copied) into it piece by piece while the receiver
    // copies the pieces out, so both CPUs work at once.  Measured with
    // bench/pingpong and bench/dtype_sendrecv (docs/BENCHMARKS.md): 1 MiB
    // moves at 28 GB/s this way against 10 GB/s for one process_vm_readv.
    // Otherwise the receiver copies it straight out of our memory (a
    // non-contiguous one packed here first).
    //
    // An eager message longer than a cell goes through the stream buffer
    // too when it is free (a buffered stream): copied in whole before the
    // send call returns (the Rts goes out first, so the receiver may copy
    // the first pieces out while we copy the next in), and the send is
    // done once the Rts is in the ring, as an eager send is.  The buffer
    // stays ours until the receiver's Fin.  Synchronous sends keep the
    // cells, where the Ack tells when they matched.  Why: the ring's cells
    // come back to the same lines every 32 cells (132 KiB), lines the
    // receiver has just read and still caches, and each store to them
    // first takes the line back; the stream moves on through 1 MiB
    // (next_stream_start_).  Measured with bench/pingpong on the 2-CPU
    // VM (docs/BENCHMARKS.md, "Buffered streams"): 8 to 32 KiB messages
    // take 0.57-0.73x the time they took through the cells.
    const bool stream_free = out_stream_.req == nullptr && out_stream_.buffered == 0 &&
                             transport_.stream_capacity() > 0 && dst_world != transport_.rank();
    const bool buffered = stream_free && mode != Mode::Sync && s->bytes > payload0_ && s->bytes <= eager_limit_ &&
                          s->bytes <= transport_.stream_capacity();
    const bool pack_into_cells = !buffered && !type.contiguous && s->bytes <= eager_limit_;
    const bool streamed = s->bytes > eager_limit_ && stream_free;
    if (buffered) {
        // Packed (copied) into the stream buffer below, before we return.
    } else if (type.contiguous && !streamed) {
        s->data = static_cast<const std::byte*>(buf) + (count > 0 ? type.true_lb : 0);
    } else if (pack_into_cells || streamed) {
        s->type_hold = dtype::Ref(&type);
    } else {
        s->packed.reset(new std::byte[s->bytes]);
        dtype::pack(type, buf, count, s->packed.get());
        s->data = s->packed.get();
    }
    ++pending_sends_;

    Outgoing o{};
    o.wire.tag = tag;
    o.wire.context = context;
    o.wire.src = my_rank;
    o.wire.total = s->bytes;
    if (buffered) {
        o.wire.kind = Kind::Rts;
        o.wire.flags = kStreamed;
        o.wire.sender_token = next_token_++;  // names the stream, not a request: the send is done when copied
        o.done_when_copied = s;
        begin_stream(o.wire, s, type, buf, count);
    } else if (s->bytes <= eager_limit_) {
        o.data = s->data;
        if (pack_into_cells) {
            o.type = &type;
            o.buf = buf;
            o.count = count;
        }
        o.len = s->bytes;
        o.done_when_copied = s;
        if (mode == Mode::Sync) {
            o.wire.kind = Kind::EagerSync;
            o.wire.sender_token = new_token(s);  // done on Ack and when copied
            s->pending = 2;
            open_claim(s, o.wire);
        } else {
            o.wire.kind = Kind::Eager;
        }
    } else {
        o.wire.kind = Kind::Rts;
        o.wire.sender_token = new_token(s);  // done on Fin, or after Data
        o.wire.addr = reinterpret_cast<std::uint64_t>(s->data);
        open_claim(s, o.wire);
        if (streamed) {
            o.wire.flags = kStreamed;
            begin_stream(o.wire, s, type, buf, count);
        }
    }
    const std::uint64_t token = o.wire.sender_token;
    queue(dst_world, std::move(o));
    // Fill the stream buffer while the Rts travels.
    if (streamed) advance_out_stream();
    if (buffered) {
        // All of it, before we return (the buffer is free and holds it),
        // announcing each piece: the receiver may be unpacking the first
        // while we pack the next.  The Rts may already have completed `s`.
        advance_out_stream();
        out_stream_.req = nullptr;
        out_stream_.buffered = token;
        out_stream_.dst_world = dst_world;
    }
}

/// Starts our stream for send `s` of `count` elements of `type` at `buf`,
/// named by w.sender_token: picks where it starts in the stream buffer and
/// names that in the Rts `w`.
void Engine::begin_stream(Wire& w, Request* s, const dtype::Datatype& type, const void* buf, std::int64_t count) {
    const std::uint64_t cap = transport_.stream_capacity();
    const std::uint64_t start = next_stream_start_;
    next_stream_start_ = (start + round_up(s->bytes % cap, kStreamStartAlign)) % cap;
    w.addr = start;
    transport_.stream_begin(w.sender_token);
    out_stream_ = OutStream{s, &type, buf, count, 0, start};
}

PieceWays::Way PieceWays::next() {
    if (forced_) return *forced_;
    if (cost_[0] == 0) return Way::Direct;
    if (cost_[1] == 0) return Way::Staged;
    const Way best = cost_[1] < cost_[0] ? Way::Staged : Way::Direct;
    if (++pieces_ % kExplore != 0) return best;
    return best == Way::Staged ? Way::Direct : Way::Staged;
}

void PieceWays::took(Way way, std::uint64_t ticks, std::uint64_t bytes) {
    // Short pieces (the end of a message, the wrap of the buffer) carry
    // more fixed cost per byte than the others: not counted.
    if (bytes < 4096) return;
    std::uint64_t& cost = cost_[static_cast<int>(way)];
    std::uint64_t sample = std::max<std::uint64_t>(1, ticks / (bytes / 1024));
    if (cost == 0) {
        cost = sample;
        return;
    }
    // A piece during which this process was descheduled counts as no worse
    // than four times the average.
    sample = std::min(sample, 4 * cost);
    cost = (3 * cost + sample) / 4;
}

std::uint64_t PieceWays::now() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Packs `len` bytes of our streamed send, from byte out_stream_.packed, to
/// `dst` in the stream buffer: a contiguous type with one memcpy, any
/// other the way piece_ways_ picks.
void Engine::fill_piece(std::byte* dst, std::uint64_t len) {
    const OutStream& o = out_stream_;
    const auto from = static_cast<std::int64_t>(o.packed);
    const auto n = static_cast<std::int64_t>(len);
    if (o.type->contiguous) {
        dtype::pack(*o.type, o.buf, o.count, from, dst, n);
        return;
    }
    const PieceWays::Way way = piece_ways_.next();
    const bool staged = way == PieceWays::Way::Staged;
    if (staged && !piece_buf_) piece_buf_.reset(new std::byte[kStreamPiece]);
    const std::uint64_t t0 = PieceWays::now();
    std::byte* const to = staged ? piece_buf_.get() : dst;
    const dtype::Loads loads = o.req->bytes >= kLargeMessage ? dtype::Loads::kAhead : dtype::Loads::kPlain;
    dtype::pack(*o.type, o.buf, o.count, from, to, n, loads);
    if (staged) std::memcpy(dst, to, len);
    piece_ways_.took(way, PieceWays::now() - t0, len);
}

/// Packs the next pieces of our streamed send into the stream buffer, as
/// far as the room the receiver has handed back allows, announcing each
/// piece as soon as it is packed.  True if it packed anything.
bool Engine::advance_out_stream() {
    OutStream& o = out_stream_;
    Request* s = o.req;
    if (s == nullptr || o.packed == s->bytes) return false;
    const std::uint64_t taken = transport_.stream_taken();
    if (taken == shm::kStreamStop) {
        o.packed = s->bytes;  // a truncated receive wants no more; its Fin follows
        return true;
    }
    if (taken > o.packed) corrupt(s->dst_world, fmt::format("stream: {} bytes taken of {} packed", taken, o.packed));
    const std::uint64_t cap = transport_.stream_capacity();
    std::byte* const buf = transport_.my_stream();
    const std::uint64_t piece = s->bytes <= eager_limit_ ? kBufferedPiece : kStreamPiece;  // buffered or not
    bool did = false;
    while (o.packed < s->bytes) {
        const std::uint64_t off = (o.start + o.packed) % cap;
        const std::uint64_t len = std::min({piece, s->bytes - o.packed, cap - off});
        if (o.packed + len - taken > cap) break;  // the receiver has not read that room yet
        fill_piece(buf + off, len);
        o.packed += len;
        transport_.stream_advance(s->dst_world, o.packed);
        did = true;
    }
    return did;
}

Request* Engine::isend(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                       std::uint32_t dst_world, const void* buf, std::int64_t count,
                       const dtype::Datatype& type, Mode mode) {
    Request* s = new_request();
    // A standard send that fits one cell with nothing queued ahead of it is
    // in the ring before we return, so its request is born complete (the
    // path MPI_Send takes, without building an Outgoing).
    if (try_send_now(context, my_rank, tag, dst_world, buf, count, type, mode)) {
        s->done = true;  // nothing of it is read once it is done
        return s;
    }
    setup_send(s, context, my_rank, tag, dst_world, buf, count, type, mode);
    return s;
}

void Engine::send(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                  std::uint32_t dst_world, const void* buf, std::int64_t count,
                  const dtype::Datatype& type, Mode mode) {
    if (try_send_now(context, my_rank, tag, dst_world, buf, count, type, mode)) return;
    Request s;
    s.on_stack = true;
    setup_send(&s, context, my_rank, tag, dst_world, buf, count, type, mode);
    wait(s);
}

/// Fast path of MPI_Send and MPI_Isend: a standard-mode message of a
/// contiguous type that fits one cell, with nothing queued ahead of it, goes
/// straight into the ring with no request.  False when it does not apply
/// (the caller takes the general path).
bool Engine::try_send_now(std::uint32_t context, std::int32_t my_rank, std::int32_t tag,
                          std::uint32_t dst_world, const void* buf, std::int64_t count,
                          const dtype::Datatype& type, Mode mode) {
    if (mode != Mode::Standard || !type.contiguous) return false;
    const auto bytes = static_cast<std::uint64_t>(count * type.size);
    if (bytes > payload0_ || bytes > eager_limit_ || !outq_[dst_world].empty()) return false;
    std::byte* cell = transport_.try_claim(dst_world);
    if (cell == nullptr) return false;
    // The header goes straight into the cell, field by field: a Wire built
    // on the stack and copied would be read back in 16-byte pieces right
    // after its narrower stores, which stalls store forwarding (measured:
    // a third of this function's time).
    Wire* w = ::new (cell) Wire;
    w->kind = Kind::Eager;
    w->flags = 0;
    w->unused[0] = w->unused[1] = 0;
    w->frag = static_cast<std::uint32_t>(bytes);
    w->tag = tag;
    w->context = context;
    w->src = my_rank;
    w->claim = 0;
    w->total = bytes;
    w->sender_token = 0;
    w->receiver_token = 0;
    if (bytes > 0) std::memcpy(cell + kWireBytes, static_cast<const std::byte*>(buf) + type.true_lb, bytes);
    transport_.publish(dst_world);
    // The receiver's next miss on these lines is served by the shared L3
    // instead of a snoop into our core (shm/demote.hpp).  Measured with
    // bench/pingpong on the 2-CPU Intel VM: 64 B to 4 KiB messages took
    // 7-20% less time, 8 B as long.  Not for the cells of a longer message
    // (pump_one): 16-32 KiB ping-pongs took half as long again, the reader
    // already being at the earlier cells of the same message.
    shm::demote(cell - shm::kCellSeqBytes, shm::kCellSeqBytes + kWireBytes + bytes);
    return true;
}

/// Fast path of a blocking receive from a named source: when no receive is
/// posted and nothing waits in the unexpected queue, a one-cell eager
/// message at the head of the source's ring that fits the buffer is copied
/// straight out of the cell.  Returns 1 when done, 0 when the ring is empty
/// (try again), -1 when the general path must take over.
int Engine::try_recv_now(std::uint32_t context, std::int32_t src, std::uint32_t src_world,
                         std::int32_t tag, void* buf, std::uint64_t capacity, MPI_Status& status) {
    if (!posted_.empty() || !unexpected_.empty()) return -1;
    const std::byte* cell = transport_.peek(src_world);
    if (cell == nullptr) return 0;
    Wire w;
    std::memcpy(&w, cell, sizeof w);
    if (w.kind != Kind::Eager || w.context != context || w.src != src ||
        (tag != MPI_ANY_TAG && w.tag != tag) || w.frag != w.total || w.total > capacity || w.frag > payload0_ ||
        inbound_[src_world].remaining != 0) {
        return -1;
    }
    if (w.total > 0) std::memcpy(buf, cell + kWireBytes, w.total);
    transport_.release(src_world);
    transport_.after_release(src_world);
    status.MPI_SOURCE = w.src;
    status.MPI_TAG = w.tag;
    status.MPI_ERROR = MPI_SUCCESS;
    status.shmpi_cancelled = 0;
    set_status_bytes(status, w.total);
    return 1;
}

void Engine::queue(std::uint32_t dst, Outgoing&& o) {
    std::deque<Outgoing>& q = outq_[dst];
    if (q.empty()) {
        // Fast path: nothing ahead of it, so it may go into the ring now.
        if (pump_one(dst, o)) return;
        busy_dsts_.push_back(dst);
    }
    q.push_back(std::move(o));
}

void Engine::control(std::uint32_t dst, Kind kind, std::uint64_t sender_token,
                     std::uint64_t receiver_token) {
    Outgoing o{};
    o.wire.kind = kind;
    o.wire.sender_token = sender_token;
    o.wire.receiver_token = receiver_token;
    queue(dst, std::move(o));
}

/// Writes as many cells of `o` as the ring to `dst` takes.  True when all of
/// `o` is in the ring.
bool Engine::pump_one(std::uint32_t dst, Outgoing& o) {
    while (!o.started || o.sent < o.len) {
        std::byte* cell = transport_.try_claim(dst);
        if (cell == nullptr) return false;
        const std::uint64_t n = std::min(o.len - o.sent, payload0_);
        // Straight into the cell, as in try_send_now (no copy on the stack).
        Wire* w = ::new (cell) Wire{};
        if (!o.started || o.wire.kind == Kind::Data) {
            *w = o.wire;
        } else {
            w->kind = Kind::Cont;
        }
        w->frag = static_cast<std::uint32_t>(n);
        if (n > 0 && o.type != nullptr) {
            dtype::pack(*o.type, o.buf, o.count, static_cast<std::int64_t>(o.sent), cell + kWireBytes,
                        static_cast<std::int64_t>(n));
        } else if (n > 0) {
            std::memcpy(cell + kWireBytes, o.data + o.sent, n);
        }
        transport_.publish(dst);
        o.started = true;
        o.sent += n;
    }
    if (o.done_when_copied != nullptr) complete(o.done_when_copied);
    return true;
}

bool Engine::pump(std::uint32_t dst) {
    std::deque<Outgoing>& q = outq_[dst];
    bool moved = false;
    while (!q.empty()) {
        const std::uint64_t before = q.front().sent;
        const bool was_started = q.front().started;
        const bool all = pump_one(dst, q.front());
        moved = moved || all || q.front().sent != before || q.front().started != was_started;
        if (!all) break;
        q.pop_front();
    }
    return moved;
}

// -------------------------------------------------------------- receiving

void Engine::setup_recv(Request* r, std::uint32_t context, std::int32_t src, std::int32_t tag,
                        void* buf, std::int64_t count, const dtype::Datatype& type) {
    r->type = Request::Type::Recv;
    r->context = context;
    r->src = src;
    r->tag = tag;
    r->user_buf = buf;
    r->count = count;
    r->type_info = &type;
    r->capacity = static_cast<std::uint64_t>(count * type.size);
    r->type_hold = dtype::Ref(&type);  // type_info stays valid (a no-op for predefined types)
    if (type.contiguous) {
        r->landing = static_cast<std::byte*>(buf) + (count > 0 ? type.true_lb : 0);
    } else {
        r->landing = nullptr;  // unpacked piece by piece as bytes arrive
    }
}

Request* Engine::irecv(std::uint32_t context, std::int32_t src, std::int32_t tag, void* buf,
                       std::int64_t count, const dtype::Datatype& type) {
    Request* r = new_request();
    setup_recv(r, context, src, tag, buf, count, type);
    // No progress() here: a sender that runs ahead of windows of MPI_Irecv
    // would have each call drain its ring into the unexpected queue, which
    // then grew without bound (to 61,260 messages in MPICH's
    // mt_pt2pt_msgrate, with about a fifth of the time in malloc and page
    // faults).  Left in the ring, they hold the sender back once the ring
    // is full.  The blocking recv() below still drains first: there the
    // message's first cells are usually in, and taking them ahead of the
    // post measured faster for 16-32 KiB ping-pongs (docs/BENCHMARKS.md,
    // "Message rate").
    post(r);
    return r;
}

std::uint64_t Engine::recv(std::uint32_t context, std::int32_t src, std::int32_t tag, void* buf,
                           std::int64_t count, const dtype::Datatype& type, MPI_Status& status,
                           std::int64_t src_world) {
    if (src_world >= 0 && src != MPI_ANY_SOURCE && type.contiguous) {
        // Fast path: watch the source's ring ourselves (progress() drains the
        // others), so a message that arrives goes straight to the buffer.
        int got = 0;
        const auto from = static_cast<std::uint32_t>(src_world);
        const std::uint64_t capacity = static_cast<std::uint64_t>(count * type.size);
        auto* landing = static_cast<std::byte*>(buf) + (count > 0 ? type.true_lb : 0);
        transport_.wait([&] {
            got = try_recv_now(context, src, from, tag, landing, capacity, status);
            if (got != 0) return true;
            progress(from);
            got = try_recv_now(context, src, from, tag, landing, capacity, status);
            return got != 0;
        });
        if (got == 1) {
            const std::uint64_t bytes = status_bytes(status);
            check_elements(status, type, bytes, capacity);
            return bytes;
        }
    }
    Request r;
    r.on_stack = true;
    setup_recv(&r, context, src, tag, buf, count, type);
    progress();
    post(&r);
    wait(r);
    status = r.status;
    return r.incoming;
}

/// Matches `r` against the unexpected queue, or files it as posted.
void Engine::post(Request* r) {
    if (Unexpected* u = wanted_unexpected(r->context, r->src, r->tag)) {
        forget(u);
        take(r, u);
        return;
    }
    r->post_seq = ++post_seq_;
    posted_.push_back(*r);
    posted_index_.joined(posted_, r, [this](Request* p) {
        const MatchKey key{p->context, p->src, p->tag};
        posted_index_.file(p, 0, key);
        ++posted_shapes_[key.shape()];
    });
}

void Engine::unpost(Request* r) {
    posted_.erase(posted_.iterator_to(*r));
    if (posted_index_.on()) --posted_shapes_[MatchKey{r->context, r->src, r->tag}.shape()];
    posted_index_.left(posted_, r);
}

/// Receives the message `u` (already out of the unexpected queue) into `r`,
/// and deletes `u`.
void Engine::take(Request* r, Unexpected* u) {
    if (u->wire.kind == Kind::Rts) {
        start_pull(r, u->wire, u->src_world);
    } else {
        begin_match(r, u->wire, u->src_world);
        deliver(r, u->data.data(), u->arrived);
        const std::uint64_t remaining = u->wire.total - u->arrived;
        if (remaining > 0) {
            // The rest is still on its way: send it to the request.
            inbound_[u->src_world] = Inbound{r, nullptr, remaining};
        } else {
            finish_recv(r);
        }
    }
    delete u;
}

/// Records the match of `r` with the message `w` from `src_world`, and
/// answers a synchronous send.
void Engine::begin_match(Request* r, const Wire& w, std::uint32_t src_world) {
    r->src_world = src_world;
    r->incoming = w.total;
    r->status.MPI_SOURCE = w.src;
    r->status.MPI_TAG = w.tag;
    if (w.kind == Kind::EagerSync) control(src_world, Kind::Ack, w.sender_token, 0);
}

void Engine::start_pull(Request* r, const Wire& w, std::uint32_t src_world) {
    begin_match(r, w, src_world);
    const std::uint64_t n = std::min(w.total, r->capacity);
    if ((w.flags & kStreamed) != 0) {
        // The data comes through the sender's stream buffer, as the sender
        // packs it; progress() reads what is there (advance_in_stream).
        if (transport_.stream_capacity() == 0 || src_world == transport_.rank()) {
            corrupt(src_world, "streamed Rts in a job without stream buffers");
        }
        for (const InStream& in : in_streams_) {
            if (in.src_world == src_world) corrupt(src_world, "a second stream while one is open");
        }
        if (w.addr >= transport_.stream_capacity() || w.addr % kStreamStartAlign != 0) {
            corrupt(src_world, fmt::format("stream starting at offset {} of a {}-byte buffer", w.addr,
                                           transport_.stream_capacity()));
        }
        in_streams_.push_back(InStream{r, src_world, w.sender_token, w.total, n, 0, w.addr});
        advance_in_stream(in_streams_.size() - 1);
        return;
    }
    if (pull(r, src_world, w.addr, n)) {
        r->arrived = w.total;
        control(src_world, Kind::Fin, w.sender_token, 0);
        finish_recv(r);
    } else {
        // The kernel refused the direct copy: ask for the bytes in the ring.
        control(src_world, Kind::Cts, w.sender_token, new_token(r));
    }
}

/// Copies the first `n` bytes of the sender's dense buffer at `addr` into
/// the receive: straight into a contiguous buffer, else a piece at a time
/// through a buffer small enough to stay in cache, unpacked at once.  False
/// when the kernel refuses the direct copy (nothing is then counted as
/// arrived; the Data cells that follow start again from byte 0).
bool Engine::pull(Request* r, std::uint32_t src_world, std::uint64_t addr, std::uint64_t n) {
    if (r->landing != nullptr || n == 0) {
        return transport_.read_remote(src_world, reinterpret_cast<const void*>(addr), r->landing, n);
    }
    constexpr std::uint64_t kPiece = 128 * 1024;
    // Blocks of the receive type long enough that the kernel's per-piece
    // cost is small against their bytes are filled in place by one
    // vectored read per batch of pieces: one copy, no unpack.  Short blocks
    // (or a type whose blocks turn out short) go through a piece buffer.
    constexpr std::uint64_t kMinRun = 256;
    std::vector<dtype::Segment> segs;
    std::vector<struct iovec> iov;
    std::uint64_t done = 0;
    while (done < n) {
        segs.clear();
        const std::uint64_t want = std::min(n - done, 4 * kPiece);
        const auto covered = static_cast<std::uint64_t>(
            dtype::segments(*r->type_info, r->user_buf, r->count, static_cast<std::int64_t>(done),
                            static_cast<std::int64_t>(want), segs));
        if (covered == 0 || covered < kMinRun * segs.size()) break;
        iov.resize(segs.size());
        for (std::size_t i = 0; i < segs.size(); ++i) {
            iov[i] = {segs[i].address, static_cast<std::size_t>(segs[i].length)};
        }
        if (!transport_.read_remote_scatter(src_world, reinterpret_cast<const void*>(addr + done), iov.data(),
                                            iov.size())) {
            return false;
        }
        done += covered;
    }
    if (done == n) return true;
    std::unique_ptr<std::byte[]> piece(new std::byte[std::min(n - done, kPiece)]);
    while (done < n) {
        const std::uint64_t len = std::min(n - done, kPiece);
        if (!transport_.read_remote(src_world, reinterpret_cast<const void*>(addr + done), piece.get(), len)) {
            return false;
        }
        dtype::unpack(*r->type_info, r->user_buf, r->count, static_cast<std::int64_t>(done), piece.get(),
                      static_cast<std::int64_t>(len));
        done += len;
    }
    return true;
}

/// Reads what the sender of in_streams_[i] has packed since the last look
/// into the receive, handing the room back every few pieces so the sender
/// can go on packing while we unpack.  Once the receive has all it takes,
/// answers Fin (after telling a sender whose message was longer to stop)
/// and completes the receive, removing the entry.  True if it read anything.
bool Engine::advance_in_stream(std::size_t i) {
    InStream& in = in_streams_[i];
    const auto st = transport_.stream_state(in.src_world);
    if (st.token != in.sender_token) {
        corrupt(in.src_world, fmt::format("stream line names send {}, the Rts send {}", st.token, in.sender_token));
    }
    if (st.packed > in.total) corrupt(in.src_world, fmt::format("stream of {} bytes for a {}-byte message",
                                                                st.packed, in.total));
    const std::uint64_t avail = std::min(st.packed, in.wanted);
    const bool had = avail > in.read;
    Request* r = in.req;
    const std::uint64_t cap = transport_.stream_capacity();
    const std::byte* const buf = transport_.peer_stream(in.src_world);
    constexpr std::uint64_t kHandBack = 2 * kStreamPiece;
    while (in.read < avail) {
        const std::uint64_t off = (in.start + in.read) % cap;
        const std::uint64_t len = std::min({avail - in.read, cap - off, kHandBack});
        if (r->landing != nullptr) {
            std::memcpy(r->landing + in.read, buf + off, len);
        } else {
            dtype::unpack(*r->type_info, r->user_buf, r->count, static_cast<std::int64_t>(in.read), buf + off,
                          static_cast<std::int64_t>(len));
        }
        in.read += len;
        if (in.read < in.wanted) transport_.stream_take(in.src_world, in.read);
    }
    if (in.read < in.wanted) return had;
    // Everything the receive takes is here.  A truncated receive tells the
    // sender to stop packing; either way the sender may reuse its buffer
    // once it has our Fin.
    transport_.stream_take(in.src_world, in.wanted < in.total ? shm::kStreamStop : in.read);
    const InStream done = in;
    in_streams_[i] = in_streams_.back();
    in_streams_.pop_back();
    done.req->arrived = done.total;
    control(done.src_world, Kind::Fin, done.sender_token, 0);
    finish_recv(done.req);
    return true;
}

void Engine::deliver(Request* r, const std::byte* p, std::uint64_t n) {
    if (r->arrived < r->capacity) {
        const std::uint64_t take = std::min(n, r->capacity - r->arrived);
        if (take > 0 && r->landing != nullptr) {
            std::memcpy(r->landing + r->arrived, p, take);
        } else if (take > 0) {
            dtype::unpack(*r->type_info, r->user_buf, r->count, static_cast<std::int64_t>(r->arrived), p,
                          static_cast<std::int64_t>(take));
        }
    }
    r->arrived += n;
}

void Engine::check_elements(MPI_Status& status, const dtype::Datatype& type, std::uint64_t got,
                            std::uint64_t capacity) {
    // Whole elements of the type always end on a boundary, so only a partial
    // last one is looked at; a full buffer (the usual case) costs no division.
    if (got == capacity || type.size <= 1) return;
    if (status.MPI_ERROR == MPI_SUCCESS && got % static_cast<std::uint64_t>(type.size) != 0 &&
        dtype::elements_in(type, static_cast<std::int64_t>(got)) == MPI_UNDEFINED) {
        status.MPI_ERROR = MPI_ERR_TYPE;
    }
}

void Engine::finish_recv(Request* r) {
    const std::uint64_t got = std::min(r->incoming, r->capacity);
    set_status_bytes(r->status, got);
    r->status.MPI_ERROR = r->incoming > r->capacity ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    if (r->type_info != nullptr) check_elements(r->status, *r->type_info, got, r->capacity);
    complete(r);
}

void Engine::complete(Request* r) {
    if (--r->pending > 0) return;  // a synchronous eager send waits for both events
    if (r->type == Request::Type::Send) --pending_sends_;
    r->done = true;
    if (r->freed && !r->on_stack) drop(r);
}

void Engine::start(Task* t) {
    tasks_.push_back(t);
    if (!in_tasks_) advance_tasks();
}

bool Engine::advance_tasks() {
    in_tasks_ = true;
    bool did = false;
    for (std::size_t i = 0; i < tasks_.size();) {
        Task* t = tasks_[i];
        did = t->advance() || did;
        if (!t->done) {
            ++i;
            continue;
        }
        tasks_[i] = tasks_.back();
        tasks_.pop_back();
        if (t->freed) drop(t);
    }
    in_tasks_ = false;
    return did;
}

void Engine::release(Request* r) {
    if (r->done) {
        drop(r);
    } else {
        r->freed = true;
    }
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kReuseRequests = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kReuseRequests = false;
#else
constexpr bool kReuseRequests = true;
#endif
#else
constexpr bool kReuseRequests = true;
#endif

Request* Engine::new_request() {
    if (spare_requests_.empty()) return new Request;  // every member has an initializer
    void* p = spare_requests_.back();
    spare_requests_.pop_back();
    return ::new (p) Request;
}

void Engine::drop(Request* r) {
    if (r->type == Request::Type::Task) {
        delete static_cast<Task*>(r);
        return;
    }
    if (!kReuseRequests || spare_requests_.size() >= kSpareRequests) {
        delete r;
        return;
    }
    r->~Request();
    // As HandleStorage does: a stale handle reads kFreedMagic ("was freed").
    std::memset(static_cast<void*>(r), kFreedByte, Request::kPoisonBytes);
    spare_requests_.push_back(r);
}

std::uint64_t Engine::new_token(Request* r) {
    const std::uint64_t t = next_token_++;
    tokens_.emplace(t, r);
    r->token = t;
    return t;
}

Request* Engine::take_token(std::uint64_t token, const char* what, std::uint32_t src_world) {
    auto it = tokens_.find(token);
    if (it == tokens_.end()) corrupt(src_world, fmt::format("{} names unknown request {}", what, token));
    Request* r = it->second;
    // Fin, Ack and Cts answer a send of ours, and only its destination may
    // answer it.
    if (r->type != Request::Type::Send || r->dst_world != src_world) {
        corrupt(src_world, fmt::format("{} names request {}, which is not a send to that rank", what, token));
    }
    tokens_.erase(it);
    close_claim(r);  // the receiver matched it: the send can no longer be cancelled
    return r;
}

// --------------------------------------------------------------- progress

bool Engine::progress(std::uint32_t skip) {
    bool did = false;
    constexpr int kBatch = 64;
    for (std::uint32_t s = 0; s < size_; ++s) {
        if (s == skip || !transport_.may_hold(s)) continue;
        int n = 0;
        while (n < kBatch) {
            const std::byte* cell = transport_.peek(s);
            if (cell == nullptr) break;
            on_cell(s, cell);
            transport_.release(s);
            ++n;
        }
        if (n > 0) {
            did = true;
            transport_.after_release(s);
        }
    }
    for (std::size_t i = 0; i < busy_dsts_.size();) {
        const std::uint32_t d = busy_dsts_[i];
        did = pump(d) || did;
        if (outq_[d].empty()) {
            busy_dsts_[i] = busy_dsts_.back();
            busy_dsts_.pop_back();
        } else {
            ++i;
        }
    }
    if (out_stream_.req != nullptr) did = advance_out_stream() || did;
    // Backwards: an entry that completes is replaced by the last one.
    for (std::size_t i = in_streams_.size(); i-- > 0;) did = advance_in_stream(i) || did;
    if (!tasks_.empty() && !in_tasks_) did = advance_tasks() || did;
    return did;
}

void Engine::on_cell(std::uint32_t src_world, const std::byte* cell) {
    Wire w;
    std::memcpy(&w, cell, sizeof w);  // one read of shared memory, then checks
    if (w.frag > payload0_) corrupt(src_world, fmt::format("fragment of {} bytes", w.frag));
    const std::byte* payload = cell + kWireBytes;
    switch (w.kind) {
    case Kind::Eager:
    case Kind::EagerSync:
    case Kind::Rts:
        if (inbound_[src_world].remaining != 0) corrupt(src_world, "new message inside another");
        on_first(src_world, w, payload);
        break;
    case Kind::Cont: on_cont(src_world, w, payload); break;
    case Kind::Data: on_data(src_world, w, payload); break;
    case Kind::Fin:
    case Kind::Ack: on_token_done(src_world, w); break;
    case Kind::Cts: on_cts(src_world, w); break;
    default: corrupt(src_world, fmt::format("kind {}", static_cast<int>(w.kind)));
    }
}

Request* Engine::match_posted(const Wire& w) {
    Request* found = first_posted(w);
    if (found != nullptr) unpost(found);
    return found;
}

Request* Engine::first_posted(const Wire& w) {
    Request* found = nullptr;
    if (posted_index_.on()) {
        // The head of each fitting pattern's list is its earliest receive;
        // the earliest of those heads takes the message.
        const MatchKey env{w.context, w.src, w.tag};
        for (int shape = 0; shape < 4; ++shape) {
            if (posted_shapes_[shape] == 0) continue;
            Request* r = posted_index_.head(env.widened(shape));
            if (r != nullptr && (found == nullptr || r->post_seq < found->post_seq)) found = r;
        }
    } else {
        for (Request& r : posted_) {
            if (fits(r.src, r.tag, r.context, w)) {
                found = &r;
                break;
            }
        }
    }
    return found;
}

void Engine::on_first(std::uint32_t src_world, const Wire& w, const std::byte* payload) {
    if (w.kind != Kind::Rts && w.frag > w.total) corrupt(src_world, "fragment longer than message");
    // The sender's rank in its communicator becomes the receive's MPI_SOURCE:
    // no communicator is larger than the world.
    if (w.src < 0 || static_cast<std::uint32_t>(w.src) >= size_) {
        corrupt(src_world, fmt::format("source rank {} in a job of {} ranks", w.src, size_));
    }
    // An eager message is at most SHMPI_EAGER_LIMIT bytes; the bound keeps a
    // corrupted total from making us allocate without limit.
    if (w.kind != Kind::Rts && w.total > kMaxEagerTotal) {
        corrupt(src_world, fmt::format("eager message of {} bytes", w.total));
    }
    Request* r = first_posted(w);
    if (r != nullptr && !still_wanted(w, src_world)) {
        // Cancelled by its sender before we saw it: nothing takes it.  The
        // rest of a synchronous eager message's cells are read and dropped.
        if (w.kind != Kind::Rts && w.total > w.frag) inbound_[src_world] = Inbound{nullptr, nullptr, w.total - w.frag};
        return;
    }
    if (r != nullptr) unpost(r);
    if (w.kind == Kind::Rts) {
        if (r != nullptr) {
            start_pull(r, w, src_world);
        } else {
            unexpected(new Unexpected{{}, w, src_world, {}, 0, 0, {}});
        }
        return;
    }
    const std::uint64_t remaining = w.total - w.frag;
    if (r != nullptr) {
        begin_match(r, w, src_world);
        deliver(r, payload, w.frag);
        if (remaining > 0) {
            inbound_[src_world] = Inbound{r, nullptr, remaining};
        } else {
            finish_recv(r);
        }
        return;
    }
    auto* u = new Unexpected{{}, w, src_world, std::vector<std::byte>(w.total), w.frag, 0, {}};
    if (w.frag > 0) std::memcpy(u->data.data(), payload, w.frag);
    unexpected(u);
    if (remaining > 0) inbound_[src_world] = Inbound{nullptr, u, remaining};
}

void Engine::on_cont(std::uint32_t src_world, const Wire& w, const std::byte* payload) {
    Inbound& in = inbound_[src_world];
    if (in.remaining < w.frag || w.frag == 0) corrupt(src_world, "continuation without a message");
    if (in.req != nullptr) {
        deliver(in.req, payload, w.frag);
    } else if (in.ux != nullptr) {
        std::memcpy(in.ux->data.data() + in.ux->arrived, payload, w.frag);
        in.ux->arrived += w.frag;
    }  // else the message was cancelled: its bytes go nowhere
    in.remaining -= w.frag;
    if (in.remaining == 0) {
        if (in.req != nullptr) finish_recv(in.req);
        in = Inbound{};
    }
}

void Engine::on_data(std::uint32_t src_world, const Wire& w, const std::byte* payload) {
    auto it = tokens_.find(w.receiver_token);
    if (it == tokens_.end() || it->second->type != Request::Type::Recv || it->second->src_world != src_world) {
        corrupt(src_world, "data for an unknown receive");
    }
    Request* r = it->second;
    if (r->arrived + w.frag > r->incoming) corrupt(r->src_world, "more data than announced");
    deliver(r, payload, w.frag);
    if (r->arrived == r->incoming) {
        tokens_.erase(it);
        finish_recv(r);
    }
}

void Engine::on_token_done(std::uint32_t src_world, const Wire& w) {
    if (out_stream_.buffered != 0 && w.sender_token == out_stream_.buffered) {
        // The receiver is done with our buffered stream (its send completed
        // when its Rts went out).
        if (w.kind != Kind::Fin || src_world != out_stream_.dst_world) {
            corrupt(src_world, "a buffered stream answered by another rank, or by an Ack");
        }
        out_stream_ = OutStream{};
        return;
    }
    Request* s = take_token(w.sender_token, w.kind == Kind::Fin ? "Fin" : "Ack", src_world);
    if (s == out_stream_.req) {
        // The receiver is done with our stream buffer: free for the next send.
        if (w.kind != Kind::Fin) corrupt(src_world, "Ack for a streamed send");
        out_stream_ = OutStream{};
    }
    complete(s);
}

void Engine::on_cts(std::uint32_t src_world, const Wire& w) {
    Request* s = take_token(w.sender_token, "Cts", src_world);
    if (s == out_stream_.req) corrupt(src_world, "Cts for a streamed send");
    Outgoing o{};
    o.wire.kind = Kind::Data;
    o.wire.receiver_token = w.receiver_token;
    o.data = s->data;
    o.len = s->bytes;
    o.done_when_copied = s;
    queue(src_world, std::move(o));
}

// ---------------------------------------------------------------- probing

/// Whether a waiting message names a claim slot (a cancellable send).
static bool claimed(const Unexpected& u) { return u.wire.kind != Kind::Eager && u.wire.claim != 0; }

void Engine::unexpected(Unexpected* u) {
    // Before `u` joins: our caller goes on using it.
    if (claimed(*u) && claimed_unexpected_ + 1 >= claim_sweep_at_) drop_cancelled_unexpected();
    u->seq = ++unexpected_seq_;
    unexpected_.push_back(*u);
    unexpected_index_.joined(unexpected_, u, [this](Unexpected* v) {
        const MatchKey env{v->wire.context, v->wire.src, v->wire.tag};
        for (int shape = 0; shape < 4; ++shape) unexpected_index_.file(v, shape, env.widened(shape));
    });
    if (claimed(*u)) ++claimed_unexpected_;
}

void Engine::drop_cancelled_unexpected() {
    for (auto it = unexpected_.begin(); it != unexpected_.end();) {
        Unexpected& u = *it++;
        if (claimed(u) && !still_wanted(u.wire, u.src_world, false)) discard(&u);
    }
    claim_sweep_at_ = claim_sweep_bound();
}

void Engine::forget(Unexpected* u) {
    if (claimed(*u)) {
        --claimed_unexpected_;
        // The bound comes down with the queue.  Left where a burst of
        // sends still wanted had raised it, it would let cancelled ones
        // pile up to the burst's size again before the next look
        // (p2p_cancel_unmatched: 1,000 claimed messages received, then
        // 2,000 cancelled ones on a tag nobody receives grew the receiver
        // by 16 MB instead of 1).
        claim_sweep_at_ = std::min(claim_sweep_at_, claim_sweep_bound());
    }
    unexpected_.erase(unexpected_.iterator_to(*u));
    unexpected_index_.left(unexpected_, u);
}

Unexpected* Engine::first_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                     std::uint64_t* seen) {
    if (unexpected_index_.on()) {
        // The head of the pattern's own list is the first message that fits.
        if (seen != nullptr) *seen = unexpected_seq_;
        return unexpected_index_.head(MatchKey{context, src, tag});
    }
    auto it = unexpected_.begin();
    if (seen != nullptr) {
        // Back from the newest to the first one after *seen.
        it = unexpected_.end();
        while (it != unexpected_.begin() && std::prev(it)->seq > *seen) --it;
        *seen = unexpected_seq_;
    }
    for (; it != unexpected_.end(); ++it) {
        if (fits(src, tag, context, it->wire)) return &*it;
    }
    return nullptr;
}

namespace {

void put_probe_status(MPI_Status& status, const Unexpected& u) {
    status.MPI_SOURCE = u.wire.src;
    status.MPI_TAG = u.wire.tag;
    status.MPI_ERROR = MPI_SUCCESS;
    status.shmpi_cancelled = 0;
    set_status_bytes(status, u.wire.total);
}

}  // namespace

Unexpected* Engine::poll_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                    MPI_Status& status, bool take) {
    progress();
    Unexpected* u = wanted_unexpected(context, src, tag, nullptr, take);
    if (u != nullptr) put_probe_status(status, *u);
    return u;
}

Unexpected* Engine::wait_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag,
                                    MPI_Status& status, bool take) {
    // Each poll looks only at what arrived since the last (a rank waiting
    // in MPI_Probe while 200,000 other messages piled up took 4-20 s).
    std::uint64_t seen = 0;
    Unexpected* u = nullptr;
    wait_until([&] {
        if (u == nullptr) u = wanted_unexpected(context, src, tag, &seen, take);
        return u != nullptr;
    });
    put_probe_status(status, *u);
    return u;
}

bool Engine::iprobe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status) {
    return poll_unexpected(context, src, tag, status, false) != nullptr;
}

void Engine::probe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status) {
    wait_unexpected(context, src, tag, status, false);
}

// The matched probes take the message out, so that no receive but the
// matching one can have it.

Unexpected* Engine::improbe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status) {
    Unexpected* u = poll_unexpected(context, src, tag, status, true);
    if (u != nullptr) forget(u);
    return u;
}

Unexpected* Engine::mprobe(std::uint32_t context, std::int32_t src, std::int32_t tag, MPI_Status& status) {
    Unexpected* u = wait_unexpected(context, src, tag, status, true);
    forget(u);
    return u;
}

Request* Engine::imrecv(Unexpected* u, void* buf, std::int64_t count, const dtype::Datatype& type) {
    Request* r = new_request();
    setup_recv(r, u->wire.context, u->wire.src, u->wire.tag, buf, count, type);
    take(r, u);
    return r;
}

bool Engine::cancel(Request* r) {
    if (r->done) return false;
    if (r->type == Request::Type::Send) return cancel_send(r);
    if (r->type != Request::Type::Recv || !r->is_linked()) return false;
    // Still in the posted queue: no message has matched it, nobody else
    // refers to it.
    unpost(r);
    r->status.shmpi_cancelled = 1;
    r->status.MPI_ERROR = MPI_SUCCESS;
    set_status_bytes(r->status, 0);
    complete(r);
    return true;
}

// ------------------------------------------------------ cancelling sends
//
// MPI_Cancel of a send must leave a wait on it local (MPI-3.1 3.8.4): it
// returns whatever the receiver does.  A send none of whose cells is in a
// ring yet leaves its queue.  A standard eager send is complete once its
// cells are written, so it is never cancelled.  A synchronous eager send
// (waiting for its Ack) and a rendezvous send (waiting for Fin or Cts)
// name one of our claim slots in their first cell: MPI_Cancel and the
// receive that takes the message race for it with one compare-exchange
// each (shm::Transport::claim_cancel, claim_match).  If MPI_Cancel wins,
// the send is over at once, and the receiver, when it comes to the
// message, drops it; if the receiver wins, the send goes on as usual.  A
// matched probe (MPI_Mprobe) takes the message too (its MPI_Mrecv must get
// it); a plain probe only looks (claim_peek): the receive after it gets the
// probed message unless the send was cancelled first (MPI-3.1 3.8.1).
// With all kSendClaims slots in use, a send gets none and is not cancelled
// once its first cell is out; a blocking send never takes one.

void Engine::open_claim(Request* s, Wire& w) {
    // A blocking send has no request the program could cancel: no claim,
    // and so no compare-exchange for its receiver (a line of our slot that
    // it would have to fetch).
    if (s->on_stack || free_claims_.empty()) return;
    const std::uint16_t slot = free_claims_.back();
    free_claims_.pop_back();
    s->claim_slot = slot;
    transport_.claim_open(slot, w.sender_token);
    w.claim = static_cast<std::uint32_t>(slot) + 1;
}

void Engine::close_claim(Request* s) {
    if (s->claim_slot < 0) return;
    free_claims_.push_back(static_cast<std::uint16_t>(s->claim_slot));
    s->claim_slot = -1;
}

bool Engine::still_wanted(const Wire& w, std::uint32_t src_world, bool take) {
    if (w.kind == Kind::Eager || w.claim == 0) return true;
    if (w.claim > shm::kSendClaims) corrupt(src_world, fmt::format("claim slot {}", w.claim - 1));
    const std::uint32_t slot = w.claim - 1;
    switch (take ? transport_.claim_match(src_world, slot, w.sender_token)
                 : transport_.claim_peek(src_world, slot, w.sender_token)) {
    case shm::Transport::Claim::Pending:
    case shm::Transport::Claim::Matched: return true;
    case shm::Transport::Claim::Cancelled: return false;
    case shm::Transport::Claim::Later: return false;  // cancelled, and the slot reused since
    case shm::Transport::Claim::Stale: break;
    }
    corrupt(src_world, fmt::format("claim slot {} does not name send {}", w.claim - 1, w.sender_token));
}

void Engine::discard(Unexpected* u) {
    forget(u);
    Inbound& in = inbound_[u->src_world];
    if (in.ux == u) in.ux = nullptr;  // its remaining cells are dropped as they come
    delete u;
}

Unexpected* Engine::wanted_unexpected(std::uint32_t context, std::int32_t src, std::int32_t tag, std::uint64_t* seen,
                                      bool take) {
    const std::uint64_t from = seen != nullptr ? *seen : 0;
    for (;;) {
        if (seen != nullptr) *seen = from;  // look again at what came after the last look
        Unexpected* u = first_unexpected(context, src, tag, seen);
        if (u == nullptr || still_wanted(u->wire, u->src_world, take)) return u;
        discard(u);
    }
}

bool Engine::cancel_send(Request* s) {
    std::deque<Outgoing>& q = outq_[s->dst_world];
    // Its first cell (Eager, EagerSync, Rts), not the Data cells that
    // answer a Cts: by then a receive has matched it.
    const auto mine = [s](const Outgoing& o) {
        return o.wire.kind != Kind::Data &&
               (o.done_when_copied == s || (o.wire.kind == Kind::Rts && o.wire.sender_token == s->token));
    };
    const auto it = std::find_if(q.begin(), q.end(), mine);
    if (it != q.end()) {
        if (it->started) return false;  // part of it is out: it finishes
        if (out_stream_.buffered != 0 && it->wire.sender_token == out_stream_.buffered) {
            out_stream_ = OutStream{};  // nobody will read that buffered stream
        }
        q.erase(it);  // nothing of it is out
    } else if (s->claim_slot < 0 || !transport_.claim_cancel(static_cast<std::uint32_t>(s->claim_slot), s->token)) {
        return false;  // not cancellable, or a receive matched it first
    }
    if (s->token != 0) tokens_.erase(s->token);
    close_claim(s);
    if (s == out_stream_.req) out_stream_ = OutStream{};  // nobody reads that stream
    s->status.shmpi_cancelled = 1;
    s->status.MPI_ERROR = MPI_SUCCESS;
    s->pending = 1;
    complete(s);
    return true;
}

void Engine::wait(Request& r) {
    wait_until([&r] { return r.done; });
}

void Engine::flush() {
    wait_until([this] { return busy_dsts_.empty() && pending_sends_ == 0; });
}

}  // namespace shmpi::p2p
