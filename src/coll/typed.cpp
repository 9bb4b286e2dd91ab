#include "coll/typed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "errors.hpp"

namespace shmpi::coll::typed {
namespace {

/// The address given for an empty dense buffer: algorithms move 0 bytes
/// to or from it, and the linear.hpp conventions keep null for in place.
std::byte g_empty[16];

/// Runs `body`; prefixes the messages of errors from below with the MPI
/// function's name.
template <class Body>
void named(const Call& c, Body&& body) {
    try {
        body();
    } catch (const MpiError& e) {
        throw MpiError(e.error_class(), fmt::format("{}: {}", c.fn, e.what()));
    }
}

/// A rank's own send and receive arguments disagree on the size of its
/// block (detected locally; thrown after the collective).
MpiError own_mismatch(int rank, std::int64_t send_bytes, std::int64_t recv_bytes) {
    return MpiError(send_bytes > recv_bytes ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                    fmt::format("rank {} sends {} bytes to itself but its receive arguments expect {} "
                                "(the datatype signatures differ)",
                                rank, send_bytes, recv_bytes));
}

/// `count` elements of `t` at `buf` as dense bytes to read: the buffer
/// itself when `t` is contiguous (unless `copy`), else a packed copy.
class DenseIn {
public:
    DenseIn(const void* buf, std::int64_t count, const dtype::Datatype& t, bool copy = false)
        : bytes_(count * t.size) {
        if (bytes_ <= 0) {
            p_ = g_empty;
        } else if (t.contiguous && !copy) {
            p_ = static_cast<const std::byte*>(buf) + t.true_lb;
        } else {
            copy_.reset(new std::byte[static_cast<std::size_t>(bytes_)]);
            dtype::pack(t, buf, count, copy_.get());
            p_ = copy_.get();
        }
    }
    const std::byte* data() const { return p_; }
    std::int64_t bytes() const { return bytes_; }

private:
    std::int64_t bytes_;
    const std::byte* p_ = nullptr;
    std::unique_ptr<std::byte[]> copy_;
};

/// `count` elements of `t` at `buf` as dense bytes to write: the buffer
/// itself when `t` is contiguous, else a staging buffer that finish()
/// unpacks.  `load` starts the staging buffer from the buffer's contents.
class DenseOut {
public:
    DenseOut(void* buf, std::int64_t count, const dtype::Datatype& t, bool load = false)
        : buf_(buf), type_(&t), bytes_(count * t.size) {
        if (bytes_ <= 0) {
            p_ = g_empty;
        } else if (t.contiguous) {
            p_ = static_cast<std::byte*>(buf) + t.true_lb;
        } else {
            stage_.reset(new std::byte[static_cast<std::size_t>(bytes_)]);
            p_ = stage_.get();
            if (load) dtype::pack(t, buf, count, p_);
        }
    }
    std::byte* data() const { return p_; }
    std::int64_t bytes() const { return bytes_; }
    /// The staging buffer <- the buffer's contents.
    void load() {
        if (stage_) dtype::pack(*type_, buf_, bytes_ / type_->size, stage_.get());
    }
    void finish() {
        if (stage_) dtype::unpack(*type_, stage_.get(), bytes_, buf_);
    }

private:
    void* buf_;
    const dtype::Datatype* type_;
    std::int64_t bytes_;
    std::byte* p_ = nullptr;
    std::unique_ptr<std::byte[]> stage_;
};

/// The per-rank blocks of a gather's, scatter's or allgather's buffer.
/// Block r is count elements of `t` at buf + r * count * extent (uniform),
/// or counts[r] elements at buf + displs[r] * extent (the v forms).  base()
/// and blocks() describe them as dense bytes: the user's buffer when `t` is
/// contiguous, else a staging buffer in rank order, which pack() fills from
/// the user's buffer and unpack_all() copies back.
class TypedBlocks {
public:
    TypedBlocks(void* buf, const dtype::Datatype& t, int n, std::int64_t count)
        : user_(static_cast<std::byte*>(buf)), type_(&t), n_(n), count_(count) {
        setup(n * count * t.size);
    }
    TypedBlocks(void* buf, const dtype::Datatype& t, int n, const int* counts, const int* displs)
        : user_(static_cast<std::byte*>(buf)), type_(&t), n_(n), counts_(counts), displs_(displs) {
        const auto nn = static_cast<std::size_t>(n);
        bytes_.resize(nn);
        offsets_.resize(nn);
        std::int64_t total = 0;
        for (std::size_t r = 0; r < nn; ++r) {
            bytes_[r] = counts[r] * t.size;
            total += bytes_[r];
        }
        setup(total);
        // Offsets from base(): into the staging buffer or the empty marker
        // in rank order, else into the user's buffer.
        const bool dense = staged() || base_ == g_empty;
        std::int64_t at = 0;
        for (std::size_t r = 0; r < nn; ++r) {
            offsets_[r] = dense ? at : displs[r] * t.extent;
            at += bytes_[r];
        }
    }

    std::byte* base() const { return base_; }
    bool staged() const { return stage_ != nullptr; }
    /// The dense table (v forms only).
    Blocks blocks() const { return Blocks{bytes_.data(), offsets_.data()}; }
    std::int64_t bytes(int r) const {
        return counts_ != nullptr ? bytes_[static_cast<std::size_t>(r)] : count_ * type_->size;
    }

    /// The user's block r (its first element).
    void* user_block(int r) const { return user_at(r); }
    /// Staging block r <- the user's block r.
    void pack(int r) {
        if (!staged()) return;
        dtype::pack(*type_, user_at(r), elems(r), stage_.get() + dense_at(r));
    }
    /// Every staging block <- the user's, but block `skip`.
    void pack_all(int skip = -1) {
        if (!staged()) return;
        if (counts_ == nullptr) {
            // Uniform blocks: the runs before and after `skip` in one pack each.
            const int cut = skip < 0 ? n_ : skip;
            dtype::pack(*type_, user_, cut * count_, stage_.get());
            if (skip >= 0 && skip + 1 < n_) {
                dtype::pack(*type_, user_at(skip + 1), (n_ - skip - 1) * count_,
                            stage_.get() + dense_at(skip + 1));
            }
            return;
        }
        for (int r = 0; r < n_; ++r) {
            if (r != skip) pack(r);
        }
    }
    /// The user's blocks <- the staging blocks, all but block `skip`.
    void unpack_all(int skip = -1) {
        if (!staged()) return;
        if (counts_ == nullptr && skip < 0) {
            dtype::unpack(*type_, stage_.get(), n_ * count_ * type_->size, user_);
            return;
        }
        for (int r = 0; r < n_; ++r) {
            if (r != skip) dtype::unpack(*type_, stage_.get() + dense_at(r), bytes(r), user_at(r));
        }
    }

private:
    void setup(std::int64_t total) {
        if (total <= 0) {
            base_ = g_empty;
        } else if (type_->contiguous) {
            base_ = user_ + type_->true_lb;
        } else {
            stage_.reset(new std::byte[static_cast<std::size_t>(total)]);
            base_ = stage_.get();
        }
    }
    std::int64_t elems(int r) const { return counts_ != nullptr ? counts_[r] : count_; }
    std::byte* user_at(int r) const {
        return user_ + (displs_ != nullptr ? displs_[r] : r * count_) * type_->extent;
    }
    std::int64_t dense_at(int r) const {
        return counts_ != nullptr ? offsets_[static_cast<std::size_t>(r)] : r * count_ * type_->size;
    }

    std::byte* user_;
    const dtype::Datatype* type_;
    int n_;
    std::int64_t count_ = 0;
    const int* counts_ = nullptr;
    const int* displs_ = nullptr;
    std::vector<std::int64_t> bytes_;
    std::vector<std::int64_t> offsets_;
    std::unique_ptr<std::byte[]> stage_;
    std::byte* base_ = nullptr;
};

const void* in_or_recv(const void* send, const void* recv) { return send == MPI_IN_PLACE ? recv : send; }

/// `count` elements of `t` at `buf` as the algorithms see a typed buffer
/// (coll.hpp): a Landing they fill by dense offset (an unpack), or a Source
/// they pack pieces of, asking for the whole staging buffer (`fill`) where
/// they need it.  Both are null for a contiguous type (the buffer is dense
/// already) or no data.
class TypedView {
public:
    TypedView(const void* buf, std::int64_t count, const dtype::Datatype& t, std::function<void()> fill = {})
        : buf_(buf), count_(count), type_(&t), fill_(std::move(fill)) {}
    TypedView(const TypedView&) = delete;
    TypedView& operator=(const TypedView&) = delete;

    /// The buffer as a receive buffer.
    Landing* landing() {
        land_ = Landing{&store, this};
        return dense() ? nullptr : &land_;
    }
    bool filled() const { return land_.filled; }
    /// The buffer as a send buffer; `fill` must have been given.
    Source* source() {
        src_ = Source{&pack_part, &pack, this};
        return dense() ? nullptr : &src_;
    }

private:
    bool dense() const { return type_->contiguous || count_ * type_->size <= 0; }
    static void store(const void* state, std::int64_t off, const void* from, std::int64_t len) {
        const auto* self = static_cast<const TypedView*>(state);
        // A Landing is made only of a receive buffer.
        dtype::unpack(*self->type_, const_cast<void*>(self->buf_), self->count_, off,
                      static_cast<const std::byte*>(from), len);
    }
    static void pack_part(const void* state, std::int64_t off, void* to, std::int64_t len) {
        const auto* self = static_cast<const TypedView*>(state);
        dtype::pack(*self->type_, self->buf_, self->count_, off, static_cast<std::byte*>(to), len);
    }
    static void pack(const void* state) { static_cast<const TypedView*>(state)->fill_(); }

    const void* buf_;
    std::int64_t count_;
    const dtype::Datatype* type_;
    std::function<void()> fill_;
    Landing land_{};
    Source src_{};
};

}  // namespace

void barrier(const Call& c) {
    named(c, [&] { coll::barrier(c.selection, c.comm.team()); });
}

void bcast(const Call& c, void* buf, std::int64_t count, const dtype::Datatype& type, int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.size == 1) return;  // the root has the data already
        DenseOut d(buf, count, type);
        if (type.contiguous) {
            // The buffer is the dense data, on every member: no TypedView and
            // its std::function to build (about 60 of the 630 instructions a
            // small Bcast's root ran went there).
            coll::bcast(c.selection, team, d.data(), d.bytes(), root, nullptr, nullptr);
            return;
        }
        const bool source = team.rank == root;
        if (source) {
            // Packed piece by piece where the algorithm sends it, or whole
            // into the staging buffer when it asks.
            TypedView src(buf, count, type, [&d] { d.load(); });
            Source* typed = src.source();
            if (typed == nullptr) d.load();
            coll::bcast(c.selection, team, d.data(), d.bytes(), root, nullptr, typed);
            return;
        }
        TypedView land(buf, count, type);
        coll::bcast(c.selection, team, d.data(), d.bytes(), root, land.landing());
        if (!land.filled()) d.finish();
    });
}

// ---------------------------------------------------------------- reductions

void reduce(const Call& c, const void* send, void* recv, std::int64_t count,
            const dtype::Datatype& type, const op::Binding& op, int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.rank != root) {
            const DenseIn in(send, count, type);
            coll::reduce(c.selection, team, in.data(), nullptr, op.dense_count(), op.reduction(), root);
            return;
        }
        const DenseIn in(in_or_recv(send, recv), count, type);
        DenseOut out(recv, count, type);
        coll::reduce(c.selection, team, in.data(), out.data(), op.dense_count(), op.reduction(), root);
        out.finish();
    });
}

void allreduce(const Call& c, const void* send, void* recv, std::int64_t count,
               const dtype::Datatype& type, const op::Binding& op) {
    named(c, [&] {
        const DenseIn in(in_or_recv(send, recv), count, type);
        DenseOut out(recv, count, type);
        coll::allreduce(c.selection, c.comm.team(), in.data(), out.data(), op.dense_count(), op.reduction());
        out.finish();
    });
}

void reduce_scatter(const Call& c, const void* send, void* recv, const int* counts,
                    const dtype::Datatype& type, const op::Binding& op) {
    named(c, [&] {
        const Team& team = c.comm.team();
        std::vector<std::int64_t> dense(static_cast<std::size_t>(team.size));
        std::int64_t total = 0;
        for (int r = 0; r < team.size; ++r) {
            dense[static_cast<std::size_t>(r)] = counts[r] * op.factor();
            total += counts[r];
        }
        const DenseIn in(in_or_recv(send, recv), total, type);
        DenseOut out(recv, counts[team.rank], type);
        coll::reduce_scatter(c.selection, team, in.data(), out.data(), dense.data(), op.reduction());
        out.finish();
    });
}

void reduce_scatter_block(const Call& c, const void* send, void* recv, std::int64_t count,
                          const dtype::Datatype& type, const op::Binding& op) {
    named(c, [&] {
        const Team& team = c.comm.team();
        const DenseIn in(in_or_recv(send, recv), team.size * count, type);
        DenseOut out(recv, count, type);
        coll::reduce_scatter_block(c.selection, team, in.data(), out.data(), count * op.factor(),
                                   op.reduction());
        out.finish();
    });
}

void scan(const Call& c, const void* send, void* recv, std::int64_t count,
          const dtype::Datatype& type, const op::Binding& op) {
    named(c, [&] {
        const DenseIn in(in_or_recv(send, recv), count, type);
        DenseOut out(recv, count, type);
        coll::scan(c.selection, c.comm.team(), in.data(), out.data(), op.dense_count(), op.reduction());
        out.finish();
    });
}

void exscan(const Call& c, const void* send, void* recv, std::int64_t count,
            const dtype::Datatype& type, const op::Binding& op) {
    named(c, [&] {
        const Team& team = c.comm.team();
        const DenseIn in(in_or_recv(send, recv), count, type);
        DenseOut out(recv, count, type);
        coll::exscan(c.selection, team, in.data(), out.data(), op.dense_count(), op.reduction());
        if (team.rank != 0) out.finish();  // rank 0's receive buffer stays as it was
    });
}

// ------------------------------------------------------------------ gathers

void gather(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
            void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.rank != root) {
            const DenseIn in(send, scount, *stype);
            coll::gather(c.selection, team, in.data(), in.bytes(), nullptr, root);
            return;
        }
        TypedBlocks out(recv, *rtype, team.size, rcount);
        const std::int64_t block = rcount * rtype->size;
        std::optional<DenseIn> in;
        const void* own = nullptr;  // null: in place
        if (send != MPI_IN_PLACE) {
            if (scount * stype->size == block && !(stype->contiguous && rtype->contiguous)) {
                // The root's own block, typed to typed in one pass (not
                // packed, copied into the staging buffer and unpacked); the
                // collective then takes it as in place.
                dtype::copy(*stype, send, scount, *rtype, out.user_block(root), rcount);
            } else {
                in.emplace(send, scount, *stype);
                if (in->bytes() == block) own = in->data();
            }
        }
        TypedView land(recv, team.size * rcount, *rtype);
        coll::gather(c.selection, team, own, block, out.base(), root, land.landing());
        if (!land.filled()) out.unpack_all(own == nullptr ? root : -1);
        if (in && own == nullptr) throw own_mismatch(root, in->bytes(), block);
    });
}

void gatherv(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
             void* recv, const int* rcounts, const int* displs, const dtype::Datatype* rtype,
             int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.rank != root) {
            const DenseIn in(send, scount, *stype);
            coll::gatherv(c.selection, team, in.data(), in.bytes(), nullptr, Blocks{}, root);
            return;
        }
        TypedBlocks out(recv, *rtype, team.size, rcounts, displs);
        std::optional<DenseIn> in;
        const void* own = nullptr;
        if (send != MPI_IN_PLACE) {
            in.emplace(send, scount, *stype);
            if (in->bytes() == out.bytes(root)) own = in->data();
        }
        coll::gatherv(c.selection, team, own, own != nullptr ? in->bytes() : out.bytes(root), out.base(),
                      out.blocks(), root);
        out.unpack_all(own == nullptr ? root : -1);
        if (in && own == nullptr) throw own_mismatch(root, in->bytes(), out.bytes(root));
    });
}

void allgather(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
               void* recv, std::int64_t rcount, const dtype::Datatype& rtype) {
    named(c, [&] {
        const Team& team = c.comm.team();
        const int me = team.rank;
        const std::int64_t block = rcount * rtype.size;
        if (block > 0 && rtype.contiguous &&
            (send == MPI_IN_PLACE || (stype->contiguous && scount * stype->size == block))) {
            // Dense on both sides: nothing to stage, land or stream (the
            // views below cost a measurable part of an 8-byte call).
            const void* own =
                send == MPI_IN_PLACE ? nullptr : static_cast<const std::byte*>(send) + stype->true_lb;
            coll::allgather(c.selection, team, own, block, static_cast<std::byte*>(recv) + rtype.true_lb,
                            nullptr, nullptr);
            return;
        }
        TypedBlocks out(recv, rtype, team.size, rcount);
        std::optional<DenseIn> in;
        const void* own = nullptr;
        std::byte* const own_at = out.base() + me * block;
        std::optional<TypedView> mine;
        Source* typed_mine = nullptr;
        if (send == MPI_IN_PLACE) {
            out.pack(me);
        } else if (scount * stype->size == block && (out.staged() || !stype->contiguous)) {
            // Our block goes to its place in the dense buffer, which the
            // collective takes as in place (not packed, copied there and
            // unpacked): packed piece by piece where the algorithm sends it
            // or whole when it asks; a contiguous one now.
            auto pack_mine = [&] { dtype::pack(*stype, send, scount, own_at); };
            mine.emplace(send, scount, *stype, pack_mine);
            typed_mine = mine->source();
            if (typed_mine == nullptr) pack_mine();
        } else {
            in.emplace(send, scount, *stype);
            if (in->bytes() == block) own = in->data();
        }
        TypedView land(recv, team.size * rcount, rtype);
        coll::allgather(c.selection, team, own, block, out.base(), land.landing(), typed_mine);
        const bool mismatch = in && own == nullptr;
        if (!land.filled()) out.unpack_all(mismatch ? me : -1);
        if (mismatch) throw own_mismatch(me, in->bytes(), block);
    });
}

void allgatherv(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                void* recv, const int* rcounts, const int* displs, const dtype::Datatype& rtype) {
    named(c, [&] {
        const Team& team = c.comm.team();
        const int me = team.rank;
        TypedBlocks out(recv, rtype, team.size, rcounts, displs);
        std::optional<DenseIn> in;
        const void* own = nullptr;
        if (send == MPI_IN_PLACE) {
            out.pack(me);
        } else {
            in.emplace(send, scount, *stype);
            if (in->bytes() == out.bytes(me)) own = in->data();
        }
        coll::allgatherv(c.selection, team, own, out.bytes(me), out.base(), out.blocks());
        const bool mismatch = in && own == nullptr;
        out.unpack_all(mismatch ? me : -1);
        if (mismatch) throw own_mismatch(me, in->bytes(), out.bytes(me));
    });
}

// ----------------------------------------------------------------- scatters

void scatter(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
             void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.rank != root) {
            DenseOut out(recv, rcount, *rtype);
            TypedView land(recv, rcount, *rtype);
            coll::scatter(c.selection, team, nullptr, out.data(), out.bytes(), root, land.landing());
            if (!land.filled()) out.finish();
            return;
        }
        TypedBlocks in(const_cast<void*>(send), *stype, team.size, scount);
        const std::int64_t block = scount * stype->size;
        std::optional<DenseOut> out;
        void* own = nullptr;  // null: in place
        bool copied = false;
        if (recv != MPI_IN_PLACE) {
            if (rcount * rtype->size == block && !(stype->contiguous && rtype->contiguous)) {
                // The root's own block, typed to typed in one pass (as in
                // gather()) once the others are on their way; the
                // collective takes it as in place.
                copied = true;
            } else {
                out.emplace(recv, rcount, *rtype);
                if (out->bytes() == block) own = out->data();
            }
        }
        // The blocks to send, packed where the algorithm sends them, or
        // into the staging buffer when it asks (all but our own block when
        // that is not the algorithm's to move).
        const int skip = copied || recv == MPI_IN_PLACE ? root : -1;
        TypedView src(send, team.size * scount, *stype, [&in, skip] { in.pack_all(skip); });
        coll::scatter(c.selection, team, in.base(), own, block, root, nullptr, src.source());
        if (copied) dtype::copy(*stype, in.user_block(root), scount, *rtype, recv, rcount);
        if (own != nullptr) out->finish();
        if (out && own == nullptr) throw own_mismatch(root, block, out->bytes());
    });
}

void scatterv(const Call& c, const void* send, const int* scounts, const int* displs,
              const dtype::Datatype* stype, void* recv, std::int64_t rcount,
              const dtype::Datatype* rtype, int root) {
    named(c, [&] {
        const Team& team = c.comm.team();
        if (team.rank != root) {
            DenseOut out(recv, rcount, *rtype);
            coll::scatterv(c.selection, team, nullptr, Blocks{}, out.data(), out.bytes(), root);
            out.finish();
            return;
        }
        TypedBlocks in(const_cast<void*>(send), *stype, team.size, scounts, displs);
        in.pack_all();
        std::optional<DenseOut> out;
        void* own = nullptr;
        if (recv != MPI_IN_PLACE) {
            out.emplace(recv, rcount, *rtype);
            if (out->bytes() == in.bytes(root)) own = out->data();
        }
        coll::scatterv(c.selection, team, in.base(), in.blocks(), own, in.bytes(root), root);
        if (own != nullptr) out->finish();
        if (out && own == nullptr) throw own_mismatch(root, in.bytes(root), out->bytes());
    });
}

// -------------------------------------------------------------- all-to-all
//
// Every block goes as one point-to-point message from the user's typed
// buffer to the user's typed buffer: the point-to-point engine packs and
// unpacks it piece by piece as it travels, so nothing is staged whole (the
// linear algorithms take typed blocks, linear.hpp).

namespace {

/// `n` values of T, inline up to 16 of them (a small all-to-all allocates
/// nothing), left uninitialised (zeroing them showed in an 8-byte
/// all-to-all's profile).
template <class T>
class Slots {
public:
    explicit Slots(int n) {
        if (n > kInline) heap_.reset(new T[static_cast<std::size_t>(n)]);
        p_ = heap_ ? heap_.get() : inline_;
    }
    Slots(const Slots&) = delete;
    Slots& operator=(const Slots&) = delete;
    T& operator[](int i) { return p_[i]; }
    const T& operator[](int i) const { return p_[i]; }
    const T* data() const { return p_; }

private:
    static constexpr int kInline = 16;
    T inline_[kInline];
    std::unique_ptr<T[]> heap_;
    T* p_;
};

/// One side of an all-to-all: block r is counts[r] elements of *types[r]
/// at byte displacement displs[r].  Holds the arrays coll::PeerBlocks
/// points into.
class Peers {
public:
    explicit Peers(int n) : n_(n), counts_(n), displs_(n), types_(n) {}
    void set(int r, std::int64_t count, std::int64_t displ, const dtype::Datatype* type) {
        counts_[r] = count;
        displs_[r] = displ;
        types_[r] = type;
    }
    PeerBlocks at(const void* base) const {
        return PeerBlocks{const_cast<void*>(base), counts_.data(), displs_.data(), types_.data()};
    }
    /// Makes `out` MPI_IN_PLACE's send side, this being the receive side at
    /// `base`: every block but rank `me`'s packed into `stage` before
    /// anything arrives; `me`'s own block stays where it is (no type).
    void pack_into(Peers& out, const void* base, int me, std::unique_ptr<std::byte[]>& stage) const {
        const dtype::Datatype& bytes = dtype::byte_type();
        std::int64_t total = 0;
        for (int r = 0; r < n_; ++r) total += r == me ? 0 : size_of(r);
        stage.reset(new std::byte[static_cast<std::size_t>(std::max<std::int64_t>(total, 1))]);
        std::int64_t at = 0;
        for (int r = 0; r < n_; ++r) {
            if (r == me) {
                out.set(r, 0, 0, nullptr);
                continue;
            }
            dtype::pack(*types_[r], static_cast<const std::byte*>(base) + displs_[r], counts_[r],
                        stage.get() + at);
            out.set(r, size_of(r), at, &bytes);
            at += size_of(r);
        }
    }

private:
    std::int64_t size_of(int r) const { return counts_[r] * types_[r]->size; }
    int n_;
    Slots<std::int64_t> counts_;
    Slots<std::int64_t> displs_;
    Slots<const dtype::Datatype*> types_;
};

/// Runs an all-to-all from `send` at `sbase` (null: MPI_IN_PLACE) into
/// `recv` at `rbase`.  `block` (MPI_Alltoall only, else -1): the bytes
/// every rank receives from each.
void exchange(const Call& c, const Peers* send, const void* sbase, const Peers& recv, void* rbase,
              std::int64_t block) {
    const Team& team = c.comm.team();
    std::unique_ptr<std::byte[]> stage;
    std::optional<Peers> copy;
    if (send == nullptr) {
        copy.emplace(team.size);
        recv.pack_into(*copy, rbase, team.rank, stage);
        send = &*copy;
        sbase = stage.get();
    }
    if (block >= 0) {
        coll::alltoall(c.selection, team, block, send->at(sbase), recv.at(rbase));
    } else {
        coll::alltoallv(c.selection, team, send->at(sbase), recv.at(rbase));
    }
}

}  // namespace

void alltoall(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
              void* recv, std::int64_t rcount, const dtype::Datatype& rtype) {
    named(c, [&] {
        const int n = c.comm.team().size;
        Peers out(n);
        for (int r = 0; r < n; ++r) out.set(r, rcount, r * rcount * rtype.extent, &rtype);
        std::optional<Peers> in;
        if (send != MPI_IN_PLACE) {
            in.emplace(n);
            for (int r = 0; r < n; ++r) in->set(r, scount, r * scount * stype->extent, stype);
        }
        exchange(c, in ? &*in : nullptr, send, out, recv, rcount * rtype.size);
    });
}

void alltoallv(const Call& c, const void* send, const int* scounts, const int* sdispls,
               const dtype::Datatype* stype, void* recv, const int* rcounts, const int* rdispls,
               const dtype::Datatype& rtype) {
    named(c, [&] {
        const int n = c.comm.team().size;
        Peers out(n);
        for (int r = 0; r < n; ++r) out.set(r, rcounts[r], rdispls[r] * rtype.extent, &rtype);
        std::optional<Peers> in;
        if (send != MPI_IN_PLACE) {
            in.emplace(n);
            for (int r = 0; r < n; ++r) in->set(r, scounts[r], sdispls[r] * stype->extent, stype);
        }
        exchange(c, in ? &*in : nullptr, send, out, recv, -1);
    });
}

void alltoallw(const Call& c, const void* send, const int* scounts, const int* sdispls,
               const dtype::Datatype* const* stypes, void* recv, const int* rcounts, const int* rdispls,
               const dtype::Datatype* const* rtypes) {
    named(c, [&] {
        // Displacements in bytes, a type per peer.
        const int n = c.comm.team().size;
        Peers out(n);
        for (int r = 0; r < n; ++r) out.set(r, rcounts[r], rdispls[r], rtypes[r]);
        std::optional<Peers> in;
        if (send != MPI_IN_PLACE) {
            in.emplace(n);
            for (int r = 0; r < n; ++r) in->set(r, scounts[r], sdispls[r], stypes[r]);
        }
        exchange(c, in ? &*in : nullptr, send, out, recv, -1);
    });
}

}  // namespace shmpi::coll::typed
