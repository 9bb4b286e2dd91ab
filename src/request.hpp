// Nonblocking requests of the point-to-point engine.
//
// A Request is created by the engine, handed to the user as an MPI_Request
// (its address), and completed by the engine's progress.  The user completes
// it with a wait or test, or gives it up with MPI_Request_free; a freed
// request is deleted by the engine when it completes.  Its memory is never
// given back to the system (HandleStorage, or the engine's spares), so a
// stale handle reads a magic of kFreedMagic, or a live request once reused.
#pragma once

#include <mpi.h>

#include <boost/intrusive/list_hook.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dtype/datatype.hpp"
#include "handle_storage.hpp"
#include "match_index.hpp"

namespace shmpi::p2p {

struct Unexpected;

/// Hook for the engine's queue of posted receives: linking a request costs
/// no allocation (Boost.Intrusive).
using QueueHook = boost::intrusive::list_base_hook<>;

struct Request : QueueHook, HandleStorage {
    /// Persistent: a request of MPI_Send_init and friends, which the C
    /// boundary keeps (api_requests.hpp); the engine never sees one.
    /// Task: a Task below.
    enum class Type : std::uint8_t { Send, Recv, Persistent, Task };
    static constexpr std::uint32_t kMagic = 0x52455155;  // "REQU"
    /// A freed request has its first kPoisonBytes filled with kFreedByte,
    /// `magic` among them (it follows the two pointers of the hook).
    static constexpr std::size_t kPoisonBytes = 64;
    static void operator delete(void* p, std::size_t bytes) noexcept { keep_prefix(p, bytes, kPoisonBytes); }

    std::uint32_t magic = kMagic;
    Type type = Type::Send;
    bool done = false;
    /// Events still to come before it is done: 1, or 2 for a synchronous
    /// eager send (its Ack, and the last of its cells written).
    std::uint8_t pending = 1;
    /// MPI_Request_free was called: the engine deletes it on completion.
    bool freed = false;
    /// Blocking calls put their request on the stack: never delete those.
    bool on_stack = false;
    /// Status to report on completion (receives; sends report MPI_ERROR).
    MPI_Status status{};
    /// The communicator it belongs to, for its error handler; set by the C
    /// boundary and never used below it.
    MPI_Comm comm_handle = MPI_COMM_NULL;
    /// The C boundary counts this request among comm_handle's holds
    /// (api::hold_comm()).
    bool holds_comm = false;
    /// Key in the engine's token table while a peer may still refer to it.
    std::uint64_t token = 0;

    /// Keeps a derived datatype alive while the engine may still read its
    /// layout (a user may free the type while the request is pending).
    dtype::Ref type_hold;

    // ---- send side ----
    std::uint32_t dst_world = 0;  ///< destination, as a world rank
    const std::byte* data = nullptr;  ///< the dense bytes to send
    std::uint64_t bytes = 0;
    /// A packed copy of a non-contiguous send buffer, owned here.
    std::unique_ptr<std::byte[]> packed;
    /// The claim slot its EagerSync or Rts names (Wire::claim - 1) until the
    /// send is over, or -1 (p2p.cpp, "cancelling sends").
    std::int32_t claim_slot = -1;

    // ---- receive side ----
    std::uint32_t context = 0;
    std::int32_t src = 0;   ///< source (communicator rank) or MPI_ANY_SOURCE
    std::int32_t tag = 0;   ///< tag or MPI_ANY_TAG
    /// While posted: its place in posting order (Engine::post_seq_), and
    /// its place in the index of posted receives (match_index.hpp) while
    /// there is one.
    std::uint64_t post_seq = 0;
    MatchLink<Request> match_links[1];
    void* user_buf = nullptr;
    std::int64_t count = 0;
    const dtype::Datatype* type_info = nullptr;
    /// Where incoming bytes land for a contiguous type; nullptr for other
    /// types, whose bytes are unpacked into the user buffer as they come.
    std::byte* landing = nullptr;
    std::uint64_t capacity = 0;   ///< bytes the receive can hold
    std::uint64_t incoming = 0;   ///< bytes the matched message carries
    std::uint64_t arrived = 0;    ///< bytes of it seen so far
    std::uint32_t src_world = 0;  ///< sender's world rank, once matched
};

/// Work that the engine's progress() moves on besides single messages: a
/// nonblocking collective's schedule (coll/schedule.hpp), or a generalized
/// request waiting for MPI_Grequest_complete (api_requests.hpp).  It is a
/// Request, so that the user completes it with the same waits and tests;
/// the engine deletes it (through the virtual destructor) once it is done
/// and released.
class Task : public Request {
public:
    Task() { type = Type::Task; }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    virtual ~Task() = default;
    /// Moves the work on as far as it can without waiting, and sets `done`
    /// when it is finished.  Runs inside Engine::progress(): it may start
    /// sends and receives, never wait for one.  Must not throw.  True if
    /// it did anything.
    virtual bool advance() = 0;
    /// What went wrong, when status.MPI_ERROR is set (without the MPI
    /// function's name, which the C boundary adds).
    std::string error;
    /// The MPI function that started it ("MPI_Igather"), for messages.
    const char* origin = "a nonblocking collective";
};

/// The bytes a status reports (MPI_Get_count and MPI_Get_elements read
/// them; receives and MPI_Status_set_elements write them): a 64-bit count
/// kept in the two private halves shmpi_count_lo and shmpi_count_hi.
inline std::uint64_t status_bytes(const MPI_Status& s) {
    return static_cast<std::uint32_t>(s.shmpi_count_lo) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.shmpi_count_hi)) << 32);
}
inline void set_status_bytes(MPI_Status& s, std::uint64_t bytes) {
    s.shmpi_count_lo = static_cast<int>(bytes & 0xffffffffu);
    s.shmpi_count_hi = static_cast<int>(bytes >> 32);
}

}  // namespace shmpi::p2p
