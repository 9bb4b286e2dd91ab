// Collective file accesses (MPI_File_read_at_all and the other _all calls):
// two-phase I/O when the members' views scatter small runs over the file.
//
// A view that interleaves ranks in small blocks (a vector, subarray or
// darray filetype) makes each member's access thousands of runs; written
// run by run, that is a system call per run, all on one file.  Two-phase
// I/O trades them for one all-to-all through shared memory: the range of
// the file the call touches is cut into one domain per member; each member
// sends every piece of its data to the member whose domain holds it (the
// file position and length of each piece, then the bytes), and each member
// writes its domain with one pwritev per stretch of adjacent pieces.
// Pieces of different members that meet become one stretch, so a fully
// interleaved region is one write.  Nothing between the pieces is written,
// so a write never reads back and never covers bytes it does not own.  A
// read goes the other way: the pieces' positions go to the domain owners,
// which read every stretch of nearby pieces at once and send the bytes
// back.  An access is taken in rounds of at most kChunk stream bytes per
// member (every member takes part in every round, with nothing if it has
// no more), so the buffers stay bounded however large the access.
//
// When it is used: any member's view has a filetype whose runs average
// less than kTwoPhaseRun bytes (with data to move), unless the file is in
// atomic mode (each access then holds its lock itself).  SHMPI_IO_COLL=
// independent or two_phase forces the choice, for tests and benchmarks.
#include <sys/uio.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "coll/linear.hpp"
#include "coll/select.hpp"
#include "errors.hpp"
#include "io/file.hpp"
#include "rma/window.hpp"
#include "runtime.hpp"

namespace shmpi::io {

namespace {

/// Runs shorter than this on average make a view worth two-phase I/O.
constexpr std::int64_t kTwoPhaseRun = 64 * 1024;
/// An access of fewer runs than this goes without two-phase I/O, unless
/// another member's asks for it.
constexpr std::int64_t kTwoPhaseRuns = 4;
/// Pieces of a read closer than this are read as one stretch.
constexpr std::int64_t kReadGap = 4096;
/// A stretch of written pieces averaging less than this is copied into one
/// buffer and written with one pwrite.
constexpr std::int64_t kGatherPiece = 4096;


/// Typed-block arguments of the all-to-alls, over bytes.
struct ByteBlocks {
    std::vector<std::int64_t> counts, displs;
    std::vector<const dtype::Datatype*> types;
    explicit ByteBlocks(int n)
        : counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n)),
          types(static_cast<std::size_t>(n), &dtype::byte_type()) {}
    /// Displacements from the counts; returns the total.
    std::int64_t pack_displs() {
        std::int64_t t = 0;
        for (std::size_t i = 0; i < counts.size(); ++i) {
            displs[i] = t;
            t += counts[i];
        }
        return t;
    }
    coll::PeerBlocks at(void* base) const { return coll::PeerBlocks{base, counts.data(), displs.data(), types.data()}; }
};

}  // namespace

int File::coll_mode_from_environment(const char* fn) {
    const char* v = std::getenv("SHMPI_IO_COLL");
    if (v == nullptr || *v == '\0' || std::string_view(v) == "auto") return kCollAuto;
    if (std::string_view(v) == "independent") return kCollIndependent;
    if (std::string_view(v) == "two_phase") return kCollTwoPhase;
    fail(MPI_ERR_OTHER, "{}: SHMPI_IO_COLL={} is none of auto, independent, two_phase", fn, v);
}

bool File::small_runs(const dtype::Datatype& filetype, std::int64_t runs_per_tile) {
    return !filetype.contiguous && filetype.size < kTwoPhaseRun * runs_per_tile;
}

std::int64_t File::access_all(bool write, std::int64_t offset, void* buf, std::int64_t count,
                              const dtype::Datatype& type, const char* fn) {
    // Every member's view has large runs (views_small_, agreed on in
    // MPI_File_set_view), or atomic mode (set collectively): each member
    // accesses its own runs, with no collective step.
    const bool may_two = coll_mode_ == kCollTwoPhase || (coll_mode_ == kCollAuto && views_small_);
    if (!may_two || atomic_) {
        no_split(fn);
        const std::int64_t bytes = access_bytes(write, offset, count, type, fn);
        return transfer(write, offset * etype_->size, buf, count, type, bytes, fn);
    }
    std::int64_t bytes = 0;
    int cls = 0;
    std::string text;
    try {
        no_split(fn);
        bytes = access_bytes(write, offset, count, type, fn);
    } catch (const MpiError& e) {
        cls = e.error_class();
        text = e.what();
    }
    // Worth it when the access spans several of the view's runs; for a
    // read, only when they lie too far apart for one read of their span
    // (transfer()'s data sieving: a single system call).
    const std::int64_t runs = filetype_->contiguous ? 1 : bytes * runs_per_tile_ / filetype_->size;
    const std::int64_t span = filetype_->contiguous ? bytes : bytes / filetype_->size * filetype_->extent;
    const bool sieves = !write && span <= kSieveRatio * bytes;
    const bool wants = coll_mode_ == kCollTwoPhase || (runs >= kTwoPhaseRuns && !sieves);
    // Every member's verdict, whether it wants two-phase I/O, and the rounds
    // of kChunk its access takes.
    bool two = false;
    std::int64_t rounds = 0;
    for (const Verdict& v : verdicts(rt_, comm(), cls, text, wants ? 1 : 0, (bytes + kChunk - 1) / kChunk, fn)) {
        two = two || v.value != 0;
        rounds = std::max(rounds, v.value2);
    }
    const std::int64_t start = offset * etype_->size;
    if (!two) return transfer(write, start, buf, count, type, bytes, fn);
    return two_phase(write, start, buf, count, type, bytes, rounds, fn);
}

std::int64_t File::two_phase(bool write, std::int64_t start, void* buf, std::int64_t count,
                             const dtype::Datatype& type, std::int64_t bytes, std::int64_t rounds, const char* fn) {
    const int n = size();
    const auto un = static_cast<std::size_t>(n);
    const coll::Selection& sel = rt_.coll_selection();
    const coll::Team& team = comm().team();
    const bool run = type.is_run(count);
    std::byte* mem = run ? static_cast<std::byte*>(buf) + type.true_lb : nullptr;
    // A read counts the stream bytes before the end of the file, up to the
    // first that is not (the file does not change during a correct call).
    const std::int64_t eof = write ? 0 : file_size(fn);
    std::int64_t valid = 0;
    bool ended = false;
    // The first error of this member's own reads and writes: it goes on
    // with the exchanges (the others wait in them), and reports at the end.
    struct Failure {
        int cls = 0;
        std::string text;
    } failed;

    // A piece of a member's access: a run of the file, cut at domain bounds.
    using Piece = TwoPhase::Piece;
    using Item = TwoPhase::Item;
    auto& mine = tp_.mine;
    auto& where = tp_.where;
    mine.resize(un);
    where.resize(un);
    auto& out = tp_.out;
    auto& in = tp_.in;
    auto& items = tp_.items;
    auto& pieces_out = tp_.pieces_out;
    auto& pieces_in = tp_.pieces_in;
    // Grows a buffer to `n` elements, never shrinks it (no zeroing of what
    // it holds already).
    auto grow = [](auto& v, std::int64_t n) {
        if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
    };
    std::int64_t done = 0;
    for (std::int64_t round = 0; round < rounds; ++round) {
        const std::int64_t len = std::min(kChunk, bytes - done);
        segs_.clear();
        if (len > 0) file_runs(start + done, len);

        // The range the round touches, and each member's domain of it.
        std::int64_t range[2] = {INT64_MAX, -1};
        for (const dtype::Segment& s : segs_) {
            const std::int64_t at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(s.address));
            range[0] = std::min(range[0], at);
            range[1] = std::max(range[1], at + s.length);
        }
        std::vector<std::int64_t> ranges(2 * un);
        coll::allgather(sel, team, range, sizeof range, ranges.data());
        std::int64_t lo = INT64_MAX, hi = -1;
        for (std::size_t r = 0; r < un; ++r) {
            lo = std::min(lo, ranges[2 * r]);
            hi = std::max(hi, ranges[2 * r + 1]);
        }
        if (hi <= lo) continue;  // nobody moves anything this round (the same on every member)
        const std::int64_t domain = (hi - lo + n - 1) / n;

        // This member's pieces, by the domain that holds them.
        for (std::size_t d = 0; d < un; ++d) {
            mine[d].clear();
            where[d].clear();
        }
        std::int64_t pos = 0;
        for (const dtype::Segment& s : segs_) {
            std::int64_t at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(s.address));
            std::int64_t left = s.length;
            while (left > 0) {
                const std::int64_t d = (at - lo) / domain;
                const std::int64_t k = std::min(left, lo + (d + 1) * domain - at);
                mine[static_cast<std::size_t>(d)].push_back(Piece{at, k});
                where[static_cast<std::size_t>(d)].push_back(pos);
                pos += k;
                at += k;
                left -= k;
            }
        }

        // How many pieces and bytes go to each member, and come from each.
        std::vector<std::int64_t> tell(2 * un), told(2 * un);
        for (std::size_t d = 0; d < un; ++d) {
            tell[2 * d] = static_cast<std::int64_t>(mine[d].size());
            std::int64_t b = 0;
            for (const Piece& p : mine[d]) b += p.len;
            tell[2 * d + 1] = b;
        }
        ByteBlocks tell_b(n), told_b(n);
        for (std::size_t d = 0; d < un; ++d) {
            tell_b.counts[d] = told_b.counts[d] = 2 * sizeof(std::int64_t);
        }
        tell_b.pack_displs();
        told_b.pack_displs();
        coll::alltoall(sel, team, 2 * sizeof(std::int64_t), tell_b.at(tell.data()), told_b.at(told.data()));

        // The pieces' places.
        ByteBlocks meta_out(n), meta_in(n);
        for (std::size_t d = 0; d < un; ++d) {
            meta_out.counts[d] = tell[2 * d] * static_cast<std::int64_t>(sizeof(Piece));
            meta_in.counts[d] = told[2 * d] * static_cast<std::int64_t>(sizeof(Piece));
        }
        const auto n_in = static_cast<std::size_t>(meta_in.pack_displs() / static_cast<std::int64_t>(sizeof(Piece)));
        grow(pieces_out, meta_out.pack_displs() / static_cast<std::int64_t>(sizeof(Piece)));
        grow(pieces_in, static_cast<std::int64_t>(n_in));
        {
            std::size_t k = 0;
            for (std::size_t d = 0; d < un; ++d) {
                std::copy(mine[d].begin(), mine[d].end(), pieces_out.begin() + static_cast<std::ptrdiff_t>(k));
                k += mine[d].size();
            }
        }
        coll::alltoallv(sel, team, meta_out.at(pieces_out.data()), meta_in.at(pieces_in.data()));

        // The bytes: with the pieces (a write), or back to their owners (a read).
        ByteBlocks data_mine(n), data_theirs(n);
        for (std::size_t d = 0; d < un; ++d) {
            data_mine.counts[d] = tell[2 * d + 1];
            data_theirs.counts[d] = told[2 * d + 1];
        }
        const std::int64_t mine_bytes = data_mine.pack_displs();
        const std::int64_t theirs_bytes = data_theirs.pack_displs();
        grow(out, write ? mine_bytes : theirs_bytes);
        grow(in, write ? theirs_bytes : mine_bytes);

        // Every piece this member's domain holds, in file order.
        items.clear();
        items.reserve(n_in);
        {
            std::size_t k = 0;
            for (std::size_t r = 0; r < un; ++r) {
                std::int64_t b = data_theirs.displs[r];
                for (std::int64_t i = 0; i < told[2 * r]; ++i, ++k) {
                    items.push_back(Item{pieces_in[k].at, pieces_in[k].len, b});
                    b += pieces_in[k].len;
                }
            }
        }
        // Each member's pieces come in file order already (a view's runs
        // never go back): merge the members' lists pairwise.
        {
            auto by_at = [](const Item& a, const Item& b) { return a.at < b.at; };
            std::vector<std::size_t> bounds{0};
            for (std::size_t r = 0; r < un; ++r) bounds.push_back(bounds.back() + static_cast<std::size_t>(told[2 * r]));
            for (std::size_t r = 0; r < un; ++r) {
                const auto b = items.begin() + static_cast<std::ptrdiff_t>(bounds[r]);
                const auto e = items.begin() + static_cast<std::ptrdiff_t>(bounds[r + 1]);
                if (!std::is_sorted(b, e, by_at)) std::stable_sort(b, e, by_at);
            }
            for (std::size_t width = 1; width < un; width *= 2) {
                for (std::size_t r = 0; r + width < un; r += 2 * width) {
                    const auto b = items.begin() + static_cast<std::ptrdiff_t>(bounds[r]);
                    const auto m = items.begin() + static_cast<std::ptrdiff_t>(bounds[r + width]);
                    const auto e = items.begin() + static_cast<std::ptrdiff_t>(bounds[std::min(un, r + 2 * width)]);
                    std::inplace_merge(b, m, e, by_at);
                }
            }
        }

        if (write) {
            // This slice of the stream, packed unless memory is one run.
            const std::byte* data = mem != nullptr ? mem + done : nullptr;
            if (data == nullptr && len > 0) {
                if (bounce_.size() < static_cast<std::size_t>(len)) bounce_.resize(static_cast<std::size_t>(len));
                dtype::pack(type, buf, count, done, bounce_.data(), len);
                data = bounce_.data();
            }
            std::size_t k = 0;
            for (std::size_t d = 0; d < un; ++d) {
                for (std::size_t i = 0; i < mine[d].size(); ++i) {
                    std::memcpy(out.data() + k, data + where[d][i], static_cast<std::size_t>(mine[d][i].len));
                    k += static_cast<std::size_t>(mine[d][i].len);
                }
            }
            coll::alltoallv(sel, team, data_mine.at(out.data()), data_theirs.at(in.data()));
            // One write per stretch of adjacent pieces: small pieces are
            // gathered into one buffer first (a pwritev of thousands of
            // 8-byte runs costs the kernel more than the copy), large ones
            // go as they are.
            std::size_t i = 0;
            while (i < items.size() && failed.cls == 0) try {
                const std::int64_t from = items[i].at;
                std::int64_t end = from;
                std::size_t j = i;
                while (j < items.size() && items[j].at == end) end += items[j++].len;
                if ((end - from) < kGatherPiece * static_cast<std::int64_t>(j - i)) {
                    if (sieve_.size() < static_cast<std::size_t>(end - from)) {
                        sieve_.resize(static_cast<std::size_t>(end - from));
                    }
                    for (std::size_t k = i; k < j; ++k) {
                        std::memcpy(sieve_.data() + (items[k].at - from), in.data() + items[k].byte,
                                    static_cast<std::size_t>(items[k].len));
                    }
                    detail::whole(fd_, true, sieve_.data(), end - from, from, fn);
                } else {
                    iov_.clear();
                    for (std::size_t k = i; k < j; ++k) {
                        iov_.push_back(iovec{in.data() + items[k].byte, static_cast<std::size_t>(items[k].len)});
                    }
                    detail::vectored(fd_, true, iov_, from, fn);
                }
                i = j;
            } catch (const MpiError& e) {
                failed = Failure{e.error_class(), e.what()};
            }
        } else {
            // Read each stretch of nearby pieces at once; bytes past the
            // end of the file read as zeros (they are not counted).
            std::size_t i = 0;
            while (i < items.size() && failed.cls == 0) try {
                const std::int64_t from = items[i].at;
                std::int64_t to = items[i].at + items[i].len;
                std::size_t j = i + 1;
                while (j < items.size() && items[j].at <= to + kReadGap) {
                    to = std::max(to, items[j].at + items[j].len);
                    ++j;
                }
                if (sieve_.size() < static_cast<std::size_t>(to - from)) sieve_.resize(static_cast<std::size_t>(to - from));
                const std::int64_t got = detail::whole(fd_, false, sieve_.data(), to - from, from, fn);
                std::memset(sieve_.data() + got, 0, static_cast<std::size_t>(to - from - got));
                for (; i < j; ++i) {
                    std::memcpy(out.data() + items[i].byte, sieve_.data() + (items[i].at - from),
                                static_cast<std::size_t>(items[i].len));
                }
            } catch (const MpiError& e) {
                failed = Failure{e.error_class(), e.what()};
            }
            coll::alltoallv(sel, team, data_theirs.at(out.data()), data_mine.at(in.data()));
            // Back into this slice of the stream, then into memory: only
            // what lies before the end of the file.
            if (len > 0) {
                if (bounce_.size() < static_cast<std::size_t>(len)) bounce_.resize(static_cast<std::size_t>(len));
                std::size_t k = 0;
                for (std::size_t d = 0; d < un; ++d) {
                    for (std::size_t p = 0; p < mine[d].size(); ++p) {
                        std::memcpy(bounce_.data() + where[d][p], in.data() + k, static_cast<std::size_t>(mine[d][p].len));
                        k += static_cast<std::size_t>(mine[d][p].len);
                    }
                }
                std::int64_t here = 0;
                for (const dtype::Segment& s : segs_) {
                    if (ended) break;
                    const std::int64_t at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(s.address));
                    const std::int64_t have = std::clamp<std::int64_t>(eof - at, 0, s.length);
                    here += have;
                    if (have < s.length) ended = true;
                }
                if (here > 0) {
                    if (mem != nullptr) {
                        std::memcpy(mem + done, bounce_.data(), static_cast<std::size_t>(here));
                    } else {
                        dtype::unpack(type, buf, count, done, bounce_.data(), here);
                    }
                }
                valid += here;
            }
        }
        done += len;
    }
    // Each member wrote or read pieces of the others' data: every member
    // learns whether all of that worked.  (For a write, this also makes the
    // data visible to the member's next access: MPI-3.1 13.6.1's
    // sequential consistency for a process's own accesses.)
    verdicts(rt_, comm(), failed.cls, failed.text, 0, 0, fn,
             write ? "could not write its part of this collective access, which held data of this rank"
                   : "could not read its part of this collective access, which held data of this rank");
    return write ? bytes : valid;
}

}  // namespace shmpi::io
