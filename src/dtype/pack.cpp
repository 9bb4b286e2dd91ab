// The pack engine: between elements of a datatype in user memory and their
// dense stream, in both directions, from any byte offset of the stream.
//
// One template serves pack and unpack (Dir says which way bytes move).
// Three functions walk the normalised layout:
//   whole(t, base, n)        n whole elements: the hot path.  A contiguous
//                            type is one memcpy; a dense type is one run per
//                            element; a vector of runs and a list of runs
//                            have their own loops, with fixed-size copies
//                            for the common run lengths.
//   part(t, elem, off, max)  up to `max` bytes of one element from byte
//                            `off` of its stream: finds the block that holds
//                            `off` (prefix sums for indexed and struct
//                            types) and resumes there.
//   range(t, base, count, skip, max)
//                            bytes [skip, skip + max) of the stream of
//                            `count` elements: a partial first element, whole
//                            elements, a partial last one.
// Addresses are computed as integers (Mem), since a buffer may be MPI_BOTTOM
// and displacements absolute.
//
// Blocks longer than 64 bytes move with 64-byte (AVX-512F) or 32-byte
// (AVX2) vector moves where the CPU has them (dtype/wide_copy.hpp), with
// the baseline fixed-size copies otherwise; types of more than 8 runs move
// each run as whole lines and one masked store where the CPU has
// AVX-512BW, in 32-byte pieces where it has AVX2.  On Intel, runs (in
// calls that fit the L2) and blocks that start off the cache lines move
// as the aligned 32-byte pieces of the destination (wide_copy.hpp).
//
// Loops of blocks of 64 bytes or more that move kStreamLoopBytes or more
// in one call (packs: a quarter of the last-level cache where that is
// more, stream_pack_bytes()) write with non-temporal stores, so the lines
// they fill are not first read from memory only to be overwritten whole.
// Unpacks (on the 2-CPU AMD VM, 8 MiB into 64-byte to 4 KiB blocks: 0.4-0.9x
// to 0.96-1.41x a memcpy of the packed bytes) and packs whose gaps are at
// most two blocks, which also prefetch every line of the source, gaps
// included (pack_streaming(); 8 MiB of 64-byte to 2 KiB blocks at a stride
// of two blocks: 0.51-0.69x to 0.77-1.07x; docs/BENCHMARKS.md).
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <unistd.h>

#include "arith.hpp"
#include "dtype/datatype.hpp"
#include "dtype/wide_copy.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shmpi::dtype {
namespace {

using Mem = std::uintptr_t;
/// Which way bytes move; Segments moves none but lists where they are.
enum class Dir { Pack, Unpack, Segments };

/// Where Dir::Segments lists the runs it walks (one walk at a time per thread).
thread_local std::vector<Segment>* t_segments = nullptr;

/// Set while a pack of one piece of a large message runs (pack() with
/// Loads::kAhead): its loops of blocks of kAheadBlock bytes or more
/// prefetch ahead (pack_ahead()).
thread_local bool t_large_source = false;

inline Mem at(Mem base, std::int64_t off) { return base + static_cast<Mem>(off); }
/// base + i * step, in address arithmetic (wraps like the hardware; a type
/// whose elements lie outside the address space is the caller's error).
inline Mem at(Mem base, std::int64_t i, std::int64_t step) {
    return base + static_cast<Mem>(i) * static_cast<Mem>(step);
}

/// Moves `n` bytes between memory at `m` and the stream at `s`.
template <Dir D>
inline void move(Mem m, std::byte* s, std::size_t n) {
    if constexpr (D == Dir::Segments) {
        (void)s;
        std::vector<Segment>& out = *t_segments;
        if (!out.empty() && reinterpret_cast<Mem>(out.back().address) + out.back().length == m) {
            out.back().length += static_cast<std::int64_t>(n);
        } else {
            out.push_back({reinterpret_cast<void*>(m), static_cast<std::int64_t>(n)});
        }
    } else if constexpr (D == Dir::Pack) {
        std::memcpy(s, reinterpret_cast<const void*>(m), n);
    } else {
        std::memcpy(reinterpret_cast<void*>(m), s, n);
    }
}

/// Moves a short run of `len` bytes with at most two overlapping fixed-size
/// moves (each inside the run, so nothing outside it is read or written);
/// longer runs go to memcpy.
template <Dir D>
inline void move_any(Mem m, std::byte* s, std::int64_t len) {
    const auto n = static_cast<std::size_t>(len);
    if constexpr (D == Dir::Segments) return move<D>(m, s, n);  // one run, not overlapping moves
    if (len > 256) {
        move<D>(m, s, n);
    } else if (len > 32) {
        for (std::size_t o = 0; o + 32 < n; o += 32) move<D>(m + o, s + o, 32);
        move<D>(m + n - 32, s + n - 32, 32);
    } else if (len >= 16) {
        move<D>(m, s, 16);
        move<D>(m + n - 16, s + n - 16, 16);
    } else if (len >= 8) {
        move<D>(m, s, 8);
        move<D>(m + n - 8, s + n - 8, 8);
    } else if (len >= 4) {
        move<D>(m, s, 4);
        move<D>(m + n - 4, s + n - 4, 4);
    } else if (len > 0) {
        move<D>(m, s, 1);
        move<D>(m + n / 2, s + n / 2, 1);
        move<D>(m + n - 1, s + n - 1, 1);
    }
}

/// `n` runs of N bytes, `stride` bytes apart in memory, back to back in the
/// stream.  N is a constant, so each copy compiles to a few moves.
template <Dir D, std::size_t N>
inline void runs_of(Mem m, std::int64_t stride, std::int64_t n, std::byte*& s) {
    std::byte* p = s;
    std::int64_t i = 0;
    if constexpr (N <= 16 && D != Dir::Segments) {
        // Four runs an iteration.  One run is a move or two, so the loop's
        // own work would be most of it, and its speed would hang on where
        // the compiler happens to place it: an 8-byte unpack in cache ran
        // at 0.52x or 0.27x memcpy after an unrelated change elsewhere in
        // this file.
        for (; i + 4 <= n; i += 4) {
            move<D>(m, p, N);
            move<D>(at(m, stride), p + N, N);
            move<D>(at(m, 2, stride), p + 2 * N, N);
            move<D>(at(m, 3, stride), p + 3 * N, N);
            m = at(m, 4, stride);  // (address arithmetic: 4 * stride may not fit a signed int64)
            p += 4 * N;
        }
    }
    for (; i < n; ++i) {
        move<D>(m, p, N);
        m = at(m, stride);
        p += N;
    }
    s = p;
}

/// A strided loop that moves at least this many bytes streams (see the top
/// of the file): its destination is then larger than what the caches of a
/// small machine keep for one core, so little of it would still be cached
/// when next read, and the loop is long enough to pay for the final fence.
constexpr std::int64_t kStreamLoopBytes = std::int64_t{4} << 20;
constexpr std::int64_t kLineBytes = 64;

/// The shortest strided pack that streams: kStreamLoopBytes, or a quarter
/// of the last-level cache where that is more (about where glibc 2.38's
/// memcpy starts to store non-temporally).  A pack's stream is dense, so
/// its cached stores read each line of it once, from the cache when it fits
/// there, and leave it cached for whoever reads it next; the streamed loop
/// sends it to memory (pack_streaming() prefetches the gaps as well).  On
/// the Intel Xeon VM of docs/BENCHMARKS.md (480 MiB of L3), 8 MiB packs at
/// a stride of twice the block, two alternating runs of one binary: 64 B
/// to 2 KiB blocks 0.59-0.67x memcpy streamed against 0.64-0.76x cached,
/// 4 KiB 0.62x against 0.87-0.88x.  Where the L3 is 32 MiB, 8 MiB packs
/// still stream: on the 2-CPU AMD EPYC VM of session 53, whose glibc says
/// 384 MiB (the L3s of the host's whole package; cache_bytes() asks the
/// kernel), two alternating rounds, medians of three: 64 B to 4 KiB blocks
/// 0.64-0.78x memcpy streamed against 0.43-0.68x cached (64 B 0.65 / 0.44,
/// 1 KiB 0.73 / 0.61), 256 B alike (0.66-0.68).  Unpacks keep
/// kStreamLoopBytes: their blocks have gaps, whose lines cached stores
/// would read too (on the Xeon VM streamed unpacks ran at 0.74-0.98x
/// against 0.52-0.90x).
///
/// SHMPI_STREAMED_PACKS=0 keeps the cached loops for every pack, =1 streams
/// from kStreamLoopBytes whatever the cache: to compare the two in one
/// binary, and to test the streamed loops on any machine.
std::int64_t stream_pack_bytes() {
    static const std::int64_t bytes = [] {
        if (env_is("SHMPI_STREAMED_PACKS", "0")) return std::numeric_limits<std::int64_t>::max();
        if (env_is("SHMPI_STREAMED_PACKS", "1")) return kStreamLoopBytes;
        std::int64_t cache = cache_bytes(3);
        if (cache <= 0) cache = cache_bytes(2);
        return std::max<std::int64_t>(kStreamLoopBytes, cache > 0 ? cache / 4 : 0);
    }();
    return bytes;
}

/// Copies `n` bytes to `d`, the 64-byte lines of `d` it fills whole with
/// non-temporal stores, the rest of its first and last lines with plain
/// copies that stay inside them.  The stores are weakly ordered: call
/// stream_fence() before anything publishes `d`.  Lines shared with the
/// neighbouring blocks (of a dense stream, or gaps that other loops
/// write) take plain stores only: a non-temporal store to a line that a
/// plain store has just cached is slow.  On the Intel Xeon VM of
/// docs/BENCHMARKS.md this copy once streamed every aligned 16 bytes, and
/// streamed 8 MiB packs (SHMPI_STREAMED_PACKS=1) of 72, 200 and 1000-byte
/// blocks at a stride of twice the block ran at 0.05-0.06, 0.13 and
/// 0.28-0.31x a memcpy of the packed bytes, against 0.46, 0.57-0.61 and
/// 0.56-0.62x cached (two rounds each).
inline void stream_copy(std::byte* d, const std::byte* s, std::size_t n) {
#if defined(__SSE2__)
    constexpr std::size_t kLine = kLineBytes;
    const std::size_t head = (kLine - (reinterpret_cast<std::uintptr_t>(d) & (kLine - 1))) & (kLine - 1);
    if (head >= n) {
        std::memcpy(d, s, n);
        return;
    }
    std::memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= kLine; n -= kLine, d += kLine, s += kLine) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
        _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
    }
#endif
    if (n > 0) std::memcpy(d, s, n);
}

/// Orders the non-temporal stores of stream_copy() before every later store
/// (a release store that publishes the data, say).
inline void stream_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/// The streaming form of strided_loop() for unpacking: non-temporal stores
/// into the blocks.
inline void unpack_streaming(Mem m, std::int64_t stride, std::int64_t n, std::int64_t len, std::byte*& s) {
    const auto bytes = static_cast<std::size_t>(len);
    std::byte* p = s;
    for (std::int64_t i = 0; i < n; ++i) {
        stream_copy(reinterpret_cast<std::byte*>(m), p, bytes);
        m = at(m, stride);
        p += len;
    }
    stream_fence();
    s = p;
}

/// How far ahead of its loads a streamed pack prefetches, in bytes of
/// source: 1 KiB for one-line blocks, 8 KiB for longer ones.  On the 2-CPU
/// AMD VM (`dtype_pack`, 8 MiB packs, six alternating runs in one binary)
/// 128-byte blocks ran at 0.92-0.99x memcpy with 8 KiB against 0.78-0.94x
/// with 1 KiB, and 256-byte blocks at 0.76-0.80x against 0.68-0.82x; 4 to
/// 32 KiB did about as well as 8 KiB for blocks of 128 bytes to 2 KiB.
inline std::int64_t prefetch_ahead(std::int64_t len) { return len <= kLineBytes ? 1024 : 8192; }

/// How far past the start of the block it copies a streamed pack keeps its
/// source prefetched, in bytes.  For blocks longer than four lines and up
/// to 4 KiB: two strides or a page, whichever is more, in whole strides,
/// so that the sweep stops at a block's start.  On the 2-CPU AMD VM
/// (`dtype_pack`, 8 MiB packs at a stride of twice the block, six rounds
/// alternating with the binary before, medians of three) 512 B blocks went
/// from 0.72-0.89x memcpy (median 0.78) to 0.78-0.93x (0.81), 1 KiB from
/// 0.72-0.84x (0.75) to 0.76-0.86x (0.79), 2 KiB from 0.85-0.93x to
/// 0.89-0.94x; 4 KiB blocks reach as far as before.  A sweep stopping
/// where a gap starts lost the most (2 KiB blocks, 6 KiB ahead:
/// 0.54-0.61x).  Other blocks: prefetch_ahead() past the next block (256 B
/// blocks did about as well either way; longer blocks than 4 KiB were not
/// measured, and a sweep once per block already reaches far for them).
inline std::int64_t prefetch_reach(std::int64_t len, std::int64_t stride) {
    constexpr std::int64_t kPage = 4096;
    if (len > 4 * kLineBytes && len <= kPage) return stride * std::max<std::int64_t>(2, ceil_div(kPage, stride));
    return stride + prefetch_ahead(len);
}

/// The streaming form of strided_loop() for packing blocks no more than
/// three blocks apart: the loop prefetches every line of the source a
/// little ahead, gaps included, and writes the stream with non-temporal
/// stores (64-byte ones where stream_block_512() runs).  Left to the
/// hardware, a strided read of every other line runs slower than a read
/// of every line (the prefetchers fetch the gaps anyway, late); prefetched
/// as one sweep, it runs at the speed of a plain read, and the stream's
/// lines are not read first only to be overwritten.
/// (Not for the blocks that pack_lines_streamed() or pack_prefetched()
/// take: strided_loop() tries those first.)
inline void pack_streaming(Mem m, std::int64_t stride, std::int64_t n, std::int64_t len, std::byte*& s) {
    const auto bytes = static_cast<std::size_t>(len);
    const std::int64_t reach = prefetch_reach(len, stride);
    const Mem end = at(m, n - 1, stride) + static_cast<Mem>(len);  // one past the last source byte
    Mem next = m & ~static_cast<Mem>(kLineBytes - 1);              // the next line to prefetch
    std::byte* p = s;
    for (std::int64_t i = 0; i < n; ++i) {
        const Mem upto = std::min(end, at(m, reach));
        for (; next < upto; next += kLineBytes) __builtin_prefetch(reinterpret_cast<const void*>(next), 0, 3);
        if (!stream_block_512(p, reinterpret_cast<const std::byte*>(m), bytes)) {
            stream_copy(p, reinterpret_cast<const std::byte*>(m), bytes);
        }
        m = at(m, stride);
        p += len;
    }
    stream_fence();
    s = p;
}

/// Pieces of large messages (pack() with Loads::kAhead; p2p streams 16 KiB
/// pieces of messages of 4 MiB or more).  `bench/dtype_sendrecv` on the
/// 2-CPU AMD VM (docs/BENCHMARKS.md, "Large messages of large blocks"):
/// prefetching ahead took 16 MiB of 4 KiB blocks from 2429-2475 to
/// 1958-1997 us one way, 2 KiB blocks from 2270-2467 to 1842-2213; 1 KiB
/// blocks gained less, and 64-byte blocks, tried too, lost a third (a call
/// per block).  The receiver's pieces keep cached stores: non-temporal ones
/// for blocks of 2 KiB or more cost up to 1.8x at 4 to 16 MiB on a later
/// host of the same VM (BENCHMARKS.md, "Large messages: cached stores").
constexpr std::int64_t kAheadBlock = 1024;

/// A pack of one piece of a large message: each block is copied while the
/// lines of the block one prefetch distance ahead are prefetched, past the
/// end of this piece too (a prefetch never faults), so the next piece's
/// first blocks are on their way.  The hardware's stream prefetchers stop
/// at each page boundary, and a 4 KiB block is a page.
inline void pack_ahead(Mem m, std::int64_t stride, std::int64_t n, std::int64_t len, std::byte*& s) {
    const std::int64_t span = stride < 0 ? -stride : stride;  // bytes from block to block
    const std::int64_t dist = std::max<std::int64_t>(1, ceil_div(prefetch_ahead(len), span));  // in blocks
    std::byte* p = s;
    for (std::int64_t i = 0; i < n; ++i) {
        const Mem next = at(m, dist, stride);
        for (std::int64_t o = 0; o < len; o += kLineBytes) {
            __builtin_prefetch(reinterpret_cast<const void*>(next + static_cast<Mem>(o)), 0, 3);
        }
        if (wide_copies()) {
            pack_blocks_wide(p, m, stride, 1, len);
        } else {
            std::memcpy(p, reinterpret_cast<const void*>(m), static_cast<std::size_t>(len));
        }
        m = at(m, stride);
        p += len;
    }
    s = p;
}

/// `n` runs of `len` bytes, `stride` bytes apart: the vector-of-blocks loop.
template <Dir D>
inline void strided_loop(Mem m, std::int64_t stride, std::int64_t n, std::int64_t len, std::byte*& s) {
    // Wide moves for blocks longer than a line, and for blocks of one line
    // where that is faster than the baseline's moves (wide_single_lines()).
    const bool wide = (len > kLineBytes || (len == kLineBytes && wide_single_lines())) && wide_copies();
    if constexpr (D == Dir::Pack) {
        // (A block is at least a line, and the gaps at most two blocks:
        // wider gaps are not worth reading.)
        // (n * len cannot overflow: the bytes are in memory.)
        if (len >= kLineBytes && stride >= len && stride <= 3 * len && n * len >= stream_pack_bytes()) {
            if (pack_lines_streamed(s, m, stride, n, len)) {
                s += n * len;
                return;
            }
            if (pack_prefetched(s, m, stride, n, len)) {
                s += n * len;
                return;
            }
            return pack_streaming(m, stride, n, len, s);
        }
        if (t_large_source && len >= kAheadBlock && (stride >= len || stride <= -len)) {
            return pack_ahead(m, stride, n, len, s);
        }
        if (wide) {
            pack_blocks_wide(s, m, stride, n, len);
            s += n * len;
            return;
        }
    }
    if constexpr (D == Dir::Unpack) {
        // Only disjoint blocks stream: overlapping ones (an erroneous receive
        // type) keep plain stores, whose order is the type map's.
        const bool disjoint_blocks = stride >= len || stride <= -len;
        const bool long_loop = n * len >= kStreamLoopBytes;
        if (wide) {
            unpack_blocks_wide(m, stride, s, n, len, long_loop && disjoint_blocks);
            s += n * len;
            return;
        }
        if (len >= kLineBytes && disjoint_blocks && long_loop) return unpack_streaming(m, stride, n, len, s);
    }
    switch (len) {
    case 1: return runs_of<D, 1>(m, stride, n, s);
    case 2: return runs_of<D, 2>(m, stride, n, s);
    case 4: return runs_of<D, 4>(m, stride, n, s);
    case 8: return runs_of<D, 8>(m, stride, n, s);
    case 12: return runs_of<D, 12>(m, stride, n, s);
    case 16: return runs_of<D, 16>(m, stride, n, s);
    case 24: return runs_of<D, 24>(m, stride, n, s);
    case 32: return runs_of<D, 32>(m, stride, n, s);
    case 48: return runs_of<D, 48>(m, stride, n, s);
    case 64: return runs_of<D, 64>(m, stride, n, s);
    case 96: return runs_of<D, 96>(m, stride, n, s);
    case 128: return runs_of<D, 128>(m, stride, n, s);
    case 256: return runs_of<D, 256>(m, stride, n, s);
    default: break;
    }
    std::byte* p = s;
    for (std::int64_t i = 0; i < n; ++i) {
        move_any<D>(m, p, len);
        m = at(m, stride);
        p += len;
    }
    s = p;
}

/// `n` runs of N bytes: in memory `mstride` apart, in the stream `sstride`.
template <Dir D, std::size_t N>
inline void pairs_of(Mem m, std::int64_t mstride, std::byte* s, std::int64_t sstride, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        move<D>(m, s, N);
        m = at(m, mstride);
        s += sstride;
    }
}

/// The same for any run length.
template <Dir D>
inline void pairs(Mem m, std::int64_t mstride, std::byte* s, std::int64_t sstride, std::int64_t n,
                  std::int64_t len) {
    switch (len) {
    case 1: return pairs_of<D, 1>(m, mstride, s, sstride, n);
    case 2: return pairs_of<D, 2>(m, mstride, s, sstride, n);
    case 4: return pairs_of<D, 4>(m, mstride, s, sstride, n);
    case 8: return pairs_of<D, 8>(m, mstride, s, sstride, n);
    case 16: return pairs_of<D, 16>(m, mstride, s, sstride, n);
    default: break;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        move_any<D>(m, s, len);
        m = at(m, mstride);
        s += sstride;
    }
}

/// True when no two bytes of `n` elements of the runs `r` coincide, so they
/// may be written in any order (type-map order decides otherwise).
inline bool disjoint(const Datatype::Run* r, std::size_t nr, std::int64_t extent, std::int64_t n) {
    std::int64_t lo = r[0].offset, hi = r[0].offset + r[0].length;
    for (std::size_t a = 0; a < nr; ++a) {
        lo = std::min(lo, r[a].offset);
        hi = std::max(hi, r[a].offset + r[a].length);
        for (std::size_t b = a + 1; b < nr; ++b) {
            if (r[a].offset < r[b].offset + r[b].length && r[b].offset < r[a].offset + r[a].length) return false;
        }
    }
    return n == 1 || hi - lo <= extent;
}

/// `n` elements, `extent` bytes apart, each the list of runs `r`.
template <Dir D>
inline void runs_loop(const Datatype::Run* r, std::size_t nr, Mem base, std::int64_t extent, std::int64_t n,
                      std::byte*& s) {
    std::byte* p = s;
    // (Packing only reads memory, so any order will do; Segments must list
    // the runs in stream order.)
    if (nr <= 8 && (D == Dir::Pack || (D == Dir::Unpack && disjoint(r, nr, extent, n)))) {
        // A few short runs (a struct): run by run over a batch of elements,
        // so each loop copies one length (a fixed-size move) at two strides,
        // and the batch of the stream stays in L1.
        constexpr std::int64_t kBatch = 64;
        std::int64_t size = 0;
        for (std::size_t k = 0; k < nr; ++k) size += r[k].length;
        for (std::int64_t i = 0; i < n; i += kBatch) {
            const std::int64_t b = std::min(kBatch, n - i);
            const Mem elem = at(base, i, extent);
            std::int64_t at_stream = 0;
            for (std::size_t k = 0; k < nr; ++k) {
                pairs<D>(at(elem, r[k].offset), extent, p + at_stream, size, b, r[k].length);
                at_stream += r[k].length;
            }
            p += b * size;
        }
        s = p;
        return;
    }
    if (D != Dir::Segments && wide_copies()) {
        if constexpr (D == Dir::Pack) s = pack_runs_wide(p, base, extent, n, r, nr);
        if constexpr (D == Dir::Unpack) s += unpack_runs_wide(base, extent, n, r, nr, p) - p;
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
        const Mem elem = at(base, i, extent);
        for (std::size_t k = 0; k < nr; ++k) {
            move_any<D>(at(elem, r[k].offset), p, r[k].length);
            p += r[k].length;
        }
    }
    s = p;
}

template <Dir D>
inline void strided(Mem m, std::int64_t stride, std::int64_t n, std::int64_t len, std::byte*& s) {
    strided_loop<D>(m, stride, n, len, s);
}

template <Dir D>
inline void runs(const Datatype& t, Mem base, std::int64_t n, std::byte*& s) {
    runs_loop<D>(t.runs.data(), t.runs.size(), base, t.extent, n, s);
}

template <Dir D>
std::int64_t range(const Datatype& t, Mem base, std::int64_t count, std::int64_t skip, std::byte*& s,
                   std::int64_t max);

template <Dir D>
void whole(const Datatype& t, Mem base, std::int64_t n, std::byte*& s) {
    if (n <= 0 || t.size == 0) return;
    if (t.contiguous) {
        const std::int64_t bytes = n * t.size;
        move<D>(at(base, t.true_lb), s, static_cast<std::size_t>(bytes));
        s += bytes;
        return;
    }
    if (t.dense) return strided<D>(at(base, t.true_lb), t.extent, n, t.size, s);
    switch (t.kind) {
    case Kind::Vector: {
        const Datatype& c = *t.child;
        if (c.is_run(t.blocklen)) {
            const std::int64_t len = t.blocklen * c.size;
            for (std::int64_t i = 0; i < n; ++i) {
                strided<D>(at(at(base, i, t.extent), c.true_lb), t.stride, t.count, len, s);
            }
            return;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const Mem elem = at(base, i, t.extent);
            for (std::int64_t b = 0; b < t.count; ++b) whole<D>(c, at(elem, b, t.stride), t.blocklen, s);
        }
        return;
    }
    case Kind::Blocks:
    case Kind::Struct:
        if (!t.runs.empty()) return runs<D>(t, base, n, s);
        for (std::int64_t i = 0; i < n; ++i) {
            const Mem elem = at(base, i, t.extent);
            for (std::int64_t b = 0; b < t.count; ++b) {
                const auto k = static_cast<std::size_t>(b);
                const Datatype& c = t.kind == Kind::Struct ? *t.children[k] : *t.child;
                whole<D>(c, at(elem, t.displs[k]), t.blocklens[k], s);
            }
        }
        return;
    case Kind::Resized: {
        const Datatype& c = *t.child;
        if (c.extent == t.extent) return whole<D>(c, base, n, s);
        for (std::int64_t i = 0; i < n; ++i) whole<D>(c, at(base, i, t.extent), 1, s);
        return;
    }
    case Kind::Builtin:
    case Kind::Marker: break;  // always contiguous
    }
    assert(false && "every kind of datatype is handled above");
}

/// Up to `max` bytes of the stream of one element at `elem`, from byte
/// `off` (off < size).  Returns the bytes moved.
template <Dir D>
std::int64_t part(const Datatype& t, Mem elem, std::int64_t off, std::byte*& s, std::int64_t max) {
    const std::int64_t want = std::min(max, t.size - off);
    if (t.dense) {
        move<D>(at(elem, t.true_lb + off), s, static_cast<std::size_t>(want));
        s += want;
        return want;
    }
    std::int64_t moved = 0;
    switch (t.kind) {
    case Kind::Vector: {
        const Datatype& c = *t.child;
        const std::int64_t block = t.blocklen * c.size;
        std::int64_t in = off % block;
        if (c.is_run(t.blocklen)) {
            // Blocks that are runs: the rest of the first, the whole ones
            // between in the vector loop of whole() (its fixed-size and wide
            // copies, not one memcpy call per block: a message of one large
            // vector streams through here piece by piece), the start of the
            // last.
            std::int64_t b = off / block;
            auto run = [&](std::int64_t i) { return at(at(elem, i, t.stride), c.true_lb); };
            if (in != 0) {
                const std::int64_t n = std::min(block - in, want);
                move<D>(run(b) + static_cast<Mem>(in), s, static_cast<std::size_t>(n));
                s += n;
                moved = n;
                ++b;
            }
            if (const std::int64_t blocks = (want - moved) / block; blocks > 0) {
                strided<D>(run(b), t.stride, blocks, block, s);
                moved += blocks * block;
                b += blocks;
            }
            if (moved < want) {
                const std::int64_t n = want - moved;
                move<D>(run(b), s, static_cast<std::size_t>(n));
                s += n;
                moved = want;
            }
            break;
        }
        for (std::int64_t b = off / block; moved < want && b < t.count; ++b) {
            moved += range<D>(c, at(elem, b, t.stride), t.blocklen, in, s, want - moved);
            in = 0;
        }
        break;
    }
    case Kind::Blocks:
    case Kind::Struct: {
        // The last block whose stream starts at or before `off`.
        const auto first = std::upper_bound(t.prefix.begin(), t.prefix.end() - 1, off) - t.prefix.begin() - 1;
        std::int64_t in = off - t.prefix[static_cast<std::size_t>(first)];
        if (!t.runs.empty()) {
            // Every block is one run (set_struct_flags): move each with the
            // short moves of whole(), not range() and a memcpy call per block
            // (one large element, streamed piece by piece: 3.5 against 8.2
            // GB/s for the same blocks as many elements).
            for (std::int64_t b = first; moved < want && b < t.count; ++b) {
                const auto k = static_cast<std::size_t>(b);
                const Datatype& c = t.kind == Kind::Struct ? *t.children[k] : *t.child;
                const std::int64_t n = std::min(t.prefix[k + 1] - t.prefix[k] - in, want - moved);
                if (n == 0) continue;  // an empty block (lists no segment)
                move_any<D>(at(elem, t.displs[k] + c.true_lb + in), s, n);
                s += n;
                moved += n;
                in = 0;
            }
            break;
        }
        for (std::int64_t b = first; moved < want && b < t.count; ++b) {
            const auto k = static_cast<std::size_t>(b);
            const Datatype& c = t.kind == Kind::Struct ? *t.children[k] : *t.child;
            moved += range<D>(c, at(elem, t.displs[k]), t.blocklens[k], in, s, want - moved);
            in = 0;
        }
        break;
    }
    case Kind::Resized: moved = range<D>(*t.child, elem, 1, off, s, want); break;
    case Kind::Builtin:
    case Kind::Marker: break;  // always dense
    }
    assert(moved == want && "a partial element moves what it was asked");
    return moved;
}

template <Dir D>
std::int64_t range(const Datatype& t, Mem base, std::int64_t count, std::int64_t skip, std::byte*& s,
                   std::int64_t max) {
    if (t.size == 0 || count <= 0 || max <= 0) return 0;
    std::int64_t total = 0;
    if (__builtin_mul_overflow(count, t.size, &total)) total = INT64_MAX;  // no message is that long
    if (skip >= total) return 0;
    const std::int64_t take = std::min(max, total - skip);
    if (t.contiguous) {
        move<D>(at(base, t.true_lb + skip), s, static_cast<std::size_t>(take));
        s += take;
        return take;
    }
    // 1. A partial first element; 2. whole elements; 3. a partial last one.
    std::int64_t e = skip / t.size;
    std::int64_t left = take;
    if (const std::int64_t off = skip % t.size; off != 0) {
        left -= part<D>(t, at(base, e, t.extent), off, s, left);
        ++e;
    }
    if (const std::int64_t n = left / t.size; n > 0) {
        whole<D>(t, at(base, e, t.extent), n, s);
        left -= n * t.size;
        e += n;
    }
    if (left > 0) part<D>(t, at(base, e, t.extent), 0, s, left);
    return take;
}

}  // namespace

void copy(const Datatype& st, const void* sbuf, std::int64_t scount, const Datatype& rt, void* rbuf,
          std::int64_t rcount) {
    const std::int64_t bytes = std::min(scount * st.size, rcount * rt.size);
    if (bytes <= 0) return;
    if (st.contiguous) {
        unpack(rt, rbuf, rcount, 0, static_cast<const std::byte*>(sbuf) + st.true_lb, bytes);
        return;
    }
    if (rt.contiguous) {
        pack(st, sbuf, scount, 0, static_cast<std::byte*>(rbuf) + rt.true_lb, bytes);
        return;
    }
    constexpr std::int64_t kPiece = 64 * 1024;  // stays in L2 between the two halves
    const std::unique_ptr<std::byte[]> piece(
        new std::byte[static_cast<std::size_t>(std::min(bytes, kPiece))]);
    for (std::int64_t off = 0; off < bytes;) {
        const std::int64_t n = pack(st, sbuf, scount, off, piece.get(), std::min(kPiece, bytes - off));
        unpack(rt, rbuf, rcount, off, piece.get(), n);
        off += n;
    }
}

void pack(const Datatype& type, const void* buf, std::int64_t count, std::byte* out) {
    whole<Dir::Pack>(type, reinterpret_cast<Mem>(buf), count, out);
}

std::int64_t pack(const Datatype& type, const void* buf, std::int64_t count, std::int64_t offset, std::byte* out,
                  std::int64_t max_bytes, Loads loads) {
    t_large_source = loads == Loads::kAhead;
    const std::int64_t n = range<Dir::Pack>(type, reinterpret_cast<Mem>(buf), count, offset, out, max_bytes);
    t_large_source = false;
    return n;
}

void unpack(const Datatype& type, const std::byte* in, std::int64_t bytes, void* buf) {
    if (type.size == 0 || bytes <= 0) return;
    const std::int64_t count = (bytes + type.size - 1) / type.size;
    auto* s = const_cast<std::byte*>(in);  // only read: Dir::Unpack copies out of the stream
    range<Dir::Unpack>(type, reinterpret_cast<Mem>(buf), count, 0, s, bytes);
}

std::int64_t segments(const Datatype& type, const void* buf, std::int64_t count, std::int64_t offset,
                      std::int64_t max_bytes, std::vector<Segment>& out) {
    t_segments = &out;
    // The walk advances a stream pointer it never dereferences in this mode.
    static std::byte nowhere;
    std::byte* cursor = &nowhere;
    const std::int64_t n = range<Dir::Segments>(type, reinterpret_cast<Mem>(buf), count, offset, cursor, max_bytes);
    t_segments = nullptr;
    return n;
}

std::int64_t unpack(const Datatype& type, void* buf, std::int64_t count, std::int64_t offset, const std::byte* in,
                    std::int64_t bytes) {
    auto* s = const_cast<std::byte*>(in);  // only read: Dir::Unpack copies out of the stream
    return range<Dir::Unpack>(type, reinterpret_cast<Mem>(buf), count, offset, s, bytes);
}

}  // namespace shmpi::dtype
