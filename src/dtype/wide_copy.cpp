#include "dtype/wide_copy.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "shm/settings.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHMPI_WIDE_COPIES 1
#include <immintrin.h>
#else
#define SHMPI_WIDE_COPIES 0
#endif

namespace shmpi::dtype {
namespace {

using Mem = std::uintptr_t;

inline Mem step(Mem m, std::int64_t stride) { return m + static_cast<Mem>(stride); }

#if SHMPI_WIDE_COPIES
/// The vector moves of wide_copies(): none, 32 or 64 bytes.
enum class Width { kNone, k256, k512 };

#define SHMPI_WIDE_TARGET __attribute__((target("avx512f")))

SHMPI_WIDE_TARGET inline void line(std::byte* d, const std::byte* s) {
    _mm512_storeu_si512(d, _mm512_loadu_si512(s));
}

/// One block of `len` >= 64 bytes: whole lines, then the block's last 64
/// bytes (overlapping the line before; both moves stay inside the block).
SHMPI_WIDE_TARGET inline void block(std::byte* d, const std::byte* s, std::size_t len) {
    std::size_t o = 0;
    for (; o + 64 <= len; o += 64) line(d + o, s + o);
    if (o < len) line(d + len - 64, s + len - 64);
}

/// The same with non-temporal stores for the lines of `d` the block fills
/// whole; its unaligned head and tail are plain stores (they may share a
/// line with the neighbouring block, which only plain stores touch) that
/// stay inside their lines.  A plain store that reached into a line the
/// block streams (a whole 64-byte move over the head, as this once did)
/// made the non-temporal store to that line find it cached: on the Intel
/// Xeon VM, 8 MiB unpacks of 72, 200, 784, 1000 and 2056-byte blocks at a
/// stride of twice the block ran at 0.15-0.17, 0.13-0.15, 0.29-0.44,
/// 0.32-0.39 and 0.38-0.45x a memcpy of the packed bytes that way, and at
/// 0.42-0.47, 0.49-0.54, 0.72-0.79, 0.69-0.75 and 0.77-0.91x this way.
SHMPI_WIDE_TARGET inline void block_streamed(std::byte* d, const std::byte* s, std::size_t len) {
    const std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
    if (head != 0) std::memcpy(d, s, head);
    std::size_t o = head;
    for (; o + 64 <= len; o += 64) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(d + o), _mm512_loadu_si512(s + o));
    }
    if (o < len) std::memcpy(d + o, s + o, len - o);
}

SHMPI_WIDE_TARGET void pack_avx512(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n,
                                   std::size_t len) {
    for (std::int64_t i = 0; i < n; ++i, dst += len, src = step(src, stride)) {
        block(dst, reinterpret_cast<const std::byte*>(src), len);
    }
}

SHMPI_WIDE_TARGET void unpack_avx512(Mem dst, std::int64_t stride, const std::byte* src, std::int64_t n,
                                     std::size_t len, bool stream) {
    for (std::int64_t i = 0; i < n; ++i, src += len, dst = step(dst, stride)) {
        auto* d = reinterpret_cast<std::byte*>(dst);
        stream ? block_streamed(d, src, len) : block(d, src, len);
    }
    // Orders the weakly ordered stores before whatever publishes `dst`.
    if (stream) _mm_sfence();
}

// The same moves as two 32-byte halves, for CPUs with AVX2 but not
// AVX-512F (AMD before Zen 4, Intel's client cores).
#define SHMPI_AVX2_TARGET __attribute__((target("avx2")))

SHMPI_AVX2_TARGET inline void line_avx2(std::byte* d, const std::byte* s) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), hi);
}

SHMPI_AVX2_TARGET inline void block_avx2(std::byte* d, const std::byte* s, std::size_t len) {
    std::size_t o = 0;
    for (; o + 64 <= len; o += 64) line_avx2(d + o, s + o);
    if (o < len) line_avx2(d + len - 64, s + len - 64);
}

/// line_avx2() with non-temporal stores: `d` must be 32-byte aligned.
SHMPI_AVX2_TARGET inline void stream_line_avx2(std::byte* d, const std::byte* s) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), lo);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), hi);
}

/// block_streamed() in 32-byte halves: the lines it fills whole are
/// 64-byte aligned, so each half is aligned as the stream store needs.
/// With kPrefetch, each line's load is paired with a prefetch of the
/// source `reach` bytes on (Mem arithmetic: it wraps for a negative
/// stride, as step() does).
template <bool kPrefetch = false>
SHMPI_AVX2_TARGET inline void block_streamed_avx2(std::byte* d, const std::byte* s, std::size_t len,
                                                  Mem reach = 0) {
    const std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
    if (head != 0) std::memcpy(d, s, head);
    std::size_t o = head;
    for (; o + 64 <= len; o += 64) {
        if constexpr (kPrefetch) {
            __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<Mem>(s) + reach + o), 0, 3);
        }
        stream_line_avx2(d + o, s + o);
    }
    if (o < len) std::memcpy(d + o, s + o, len - o);
}

/// block_streamed_avx2() for `n` blocks `stride` bytes apart, each line's
/// load paired with a prefetch of the same line `ahead` blocks on (the
/// lines of the blocks only, never of the gaps between them; past the
/// last block the prefetches run off the end, which a prefetch may).
SHMPI_AVX2_TARGET void pack_prefetched_avx2(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n,
                                            std::size_t len, std::int64_t ahead) {
    const Mem reach = static_cast<Mem>(ahead * stride);
    for (std::int64_t i = 0; i < n; ++i, dst += len, src = step(src, stride)) {
        block_streamed_avx2<true>(dst, reinterpret_cast<const std::byte*>(src), len, reach);
    }
    // Orders the weakly ordered stores before whatever publishes `dst`.
    _mm_sfence();
}

/// Blocks of N bytes, a few whole lines: the loops below with the line
/// count fixed, so that a block costs no branch of its own.  A block of
/// one to four lines takes about as long as the loop's own work, and each
/// taken branch counts: on the 2-CPU AMD VM, in cache, at a stride of
/// twice the block, `dtype_pack`'s packs of 64-byte blocks moved at
/// 0.86-0.93x a memcpy of the packed bytes this way against 0.73-0.81x,
/// its unpacks of 128-byte blocks at 0.94-0.99x against 0.71-0.74x.
template <std::size_t N>
SHMPI_AVX2_TARGET void pack_lines_avx2(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i, dst += N, src = step(src, stride)) {
#pragma GCC unroll 4
        for (std::size_t o = 0; o < N; o += 64) line_avx2(dst + o, reinterpret_cast<const std::byte*>(src) + o);
    }
}

template <std::size_t N>
SHMPI_AVX2_TARGET void unpack_lines_avx2(Mem dst, std::int64_t stride, const std::byte* src, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i, src += N, dst = step(dst, stride)) {
#pragma GCC unroll 4
        for (std::size_t o = 0; o < N; o += 64) line_avx2(reinterpret_cast<std::byte*>(dst) + o, src + o);
    }
}

/// pack_lines_avx2() with non-temporal stores (`dst` 32-byte aligned), for
/// packs too large to stay in cache.  No software prefetches: on the 2-CPU
/// AMD VM, 8 MiB of 64 to 256-byte blocks at a stride of twice the block
/// (a standalone copy of the loops, medians of twelve rounds) moved at
/// 0.79-0.89x memcpy this way, 0.70-0.79x with the 16-byte stream stores
/// and the prefetch sweep of pack.cpp's pack_streaming(), and 0.68-0.74x
/// with both the sweep and these stores.
template <std::size_t N>
SHMPI_AVX2_TARGET void pack_lines_streamed_avx2(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i, dst += N, src = step(src, stride)) {
#pragma GCC unroll 4
        for (std::size_t o = 0; o < N; o += 64) {
            stream_line_avx2(dst + o, reinterpret_cast<const std::byte*>(src) + o);
        }
    }
    // Orders the weakly ordered stores before whatever publishes `dst`.
    _mm_sfence();
}

/// The block lengths with loops of their own (one to four whole lines):
/// when `len` is one of them, calls `f` with it as a
/// std::integral_constant and returns true; else returns false.
template <class F>
bool with_lines(std::int64_t len, F&& f) {
    switch (len) {
    case 64: f(std::integral_constant<std::size_t, 64>{}); return true;
    case 128: f(std::integral_constant<std::size_t, 128>{}); return true;
    case 192: f(std::integral_constant<std::size_t, 192>{}); return true;
    case 256: f(std::integral_constant<std::size_t, 256>{}); return true;
    default: return false;
    }
}

SHMPI_AVX2_TARGET void pack_avx2(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n, std::size_t len) {
    for (std::int64_t i = 0; i < n; ++i, dst += len, src = step(src, stride)) {
        block_avx2(dst, reinterpret_cast<const std::byte*>(src), len);
    }
}

SHMPI_AVX2_TARGET void unpack_avx2(Mem dst, std::int64_t stride, const std::byte* src, std::int64_t n, std::size_t len,
                                   bool stream) {
    for (std::int64_t i = 0; i < n; ++i, src += len, dst = step(dst, stride)) {
        auto* d = reinterpret_cast<std::byte*>(dst);
        stream ? block_streamed_avx2(d, src, len) : block_avx2(d, src, len);
    }
    if (stream) _mm_sfence();
}

/// The loops around a run mover `MOVE(d, s, len)`, compiled for `TARGET`:
/// pack_runs_NAME() and unpack_runs_NAME() (SHMPI_RUN_LOOPS) take
/// pack_runs_wide()'s and unpack_runs_wide()'s arguments,
/// pack_blocks_NAME() and unpack_blocks_NAME() (SHMPI_BLOCK_LOOPS) those of
/// pack_blocks_wide() and unpack_blocks_wide() (without `stream`).  One
/// definition for each instruction set: a function must carry the target
/// of the moves it inlines, so a template could not serve them all.
#define SHMPI_RUN_LOOPS(TARGET, NAME, MOVE)                                                                   \
    TARGET std::byte* pack_runs_##NAME(std::byte* dst, Mem base, std::int64_t extent, std::int64_t n,         \
                                       const Datatype::Run* r, std::size_t nr) {                              \
        for (std::int64_t i = 0; i < n; ++i, base = step(base, extent)) {                                     \
            for (std::size_t k = 0; k < nr; ++k) {                                                            \
                const auto len = static_cast<std::size_t>(r[k].length);                                       \
                MOVE(dst, reinterpret_cast<const std::byte*>(step(base, r[k].offset)), len);                  \
                dst += len;                                                                                   \
            }                                                                                                 \
        }                                                                                                     \
        return dst;                                                                                           \
    }                                                                                                         \
    TARGET const std::byte* unpack_runs_##NAME(Mem base, std::int64_t extent, std::int64_t n,                 \
                                               const Datatype::Run* r, std::size_t nr, const std::byte* src) { \
        for (std::int64_t i = 0; i < n; ++i, base = step(base, extent)) {                                     \
            for (std::size_t k = 0; k < nr; ++k) {                                                            \
                const auto len = static_cast<std::size_t>(r[k].length);                                       \
                MOVE(reinterpret_cast<std::byte*>(step(base, r[k].offset)), src, len);                        \
                src += len;                                                                                   \
            }                                                                                                 \
        }                                                                                                     \
        return src;                                                                                           \
    }

#define SHMPI_BLOCK_LOOPS(TARGET, NAME, MOVE)                                                                 \
    TARGET void pack_blocks_##NAME(std::byte* dst, Mem src, std::int64_t stride, std::int64_t n,              \
                                   std::size_t len) {                                                         \
        for (std::int64_t i = 0; i < n; ++i, dst += len, src = step(src, stride)) {                           \
            MOVE(dst, reinterpret_cast<const std::byte*>(src), len);                                          \
        }                                                                                                     \
    }                                                                                                         \
    TARGET void unpack_blocks_##NAME(Mem dst, std::int64_t stride, const std::byte* src, std::int64_t n,      \
                                     std::size_t len) {                                                       \
        for (std::int64_t i = 0; i < n; ++i, src += len, dst = step(dst, stride)) {                           \
            MOVE(reinterpret_cast<std::byte*>(dst), src, len);                                                \
        }                                                                                                     \
    }

/// One run of any length with 32-byte moves and no mask: whole 32-byte
/// pieces, then the run's last 32 bytes (overlapping the piece before); a
/// run under 32 bytes moves as two overlapping halves of a power of two
/// (three single bytes under 4).  Every move stays inside the run.
SHMPI_AVX2_TARGET inline void run_avx2(std::byte* d, const std::byte* s, std::size_t len) {
    if (len >= 32) {
        std::size_t o = 0;
        for (; o + 32 < len; o += 32) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + o),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + o)));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + len - 32),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + len - 32)));
    } else if (len >= 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + len - 16));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), a);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + len - 16), b);
    } else if (len >= 8) {
        std::uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + len - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + len - 8, &b, 8);
    } else if (len >= 4) {
        std::uint32_t a, b;
        std::memcpy(&a, s, 4);
        std::memcpy(&b, s + len - 4, 4);
        std::memcpy(d, &a, 4);
        std::memcpy(d + len - 4, &b, 4);
    } else if (len > 0) {
        const std::byte a = s[0], b = s[len / 2], c = s[len - 1];
        d[0] = a;
        d[len / 2] = b;
        d[len - 1] = c;
    }
}

SHMPI_RUN_LOOPS(SHMPI_AVX2_TARGET, avx2, run_avx2)

#define SHMPI_MASKED_TARGET __attribute__((target("avx512f,avx512bw")))

/// One run of any length: whole lines, then the rest (if any) through a
/// byte mask, which neither reads nor writes outside the run.
SHMPI_MASKED_TARGET inline void run_masked(std::byte* d, const std::byte* s, std::size_t len) {
    std::size_t o = 0;
    for (; o + 64 <= len; o += 64) line(d + o, s + o);
    if (o < len) {
        const __mmask64 m = (std::uint64_t{1} << (len - o)) - 1;
        _mm512_mask_storeu_epi8(d + o, m, _mm512_maskz_loadu_epi8(m, s + o));
    }
}

SHMPI_RUN_LOOPS(SHMPI_MASKED_TARGET, avx512, run_masked)

/// One run of any length, its stores aligned on the destination: the
/// 32-byte pieces of `d`'s memory that the run touches, the first and last
/// through byte masks (a piece may hold bytes of the neighbouring runs,
/// which the masks leave alone), those between whole.  The loads follow
/// the stores' pieces, so they are unaligned, and masked where a piece
/// reaches beyond the run.  On an Intel CPU a 32-byte store that crosses a
/// cache line costs two; run_avx2()'s unaligned pieces cross one in two
/// lines when runs start anywhere (an indexed type of ints).  See
/// aligned_runs() and aligned_blocks() for when it is used.
#define SHMPI_ALIGNED_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

SHMPI_ALIGNED_TARGET inline void run_aligned(std::byte* d, const std::byte* s, std::size_t len) {
    if (len == 0) return;
    const std::size_t head = reinterpret_cast<std::uintptr_t>(d) & 31;
    // The first piece, and what goes there (the bytes before `s` are masked
    // off); as integers, since the piece may start before the buffer.
    auto* pd = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(d) - head);
    const auto* ps = reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(s) - head);
    const std::size_t end = head + len;  // the run's end, from `pd`
    constexpr __mmask32 kAll = ~__mmask32{0};
    if (end <= 32) {
        const __mmask32 m = (kAll >> (32 - len)) << head;
        _mm256_mask_storeu_epi8(pd, m, _mm256_maskz_loadu_epi8(m, ps));
        return;
    }
    const __mmask32 first = kAll << head;
    _mm256_mask_storeu_epi8(pd, first, _mm256_maskz_loadu_epi8(first, ps));
    std::size_t o = 32;
    for (; o + 32 <= end; o += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(pd + o),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ps + o)));
    }
    if (o < end) {
        const __mmask32 last = kAll >> (32 - (end - o));
        _mm256_mask_storeu_epi8(pd + o, last, _mm256_maskz_loadu_epi8(last, ps + o));
    }
}

/// run_aligned() for a CPU with AVX2 but not AVX-512BW, which has no
/// byte masks: a run of 32 bytes or more moves as one unaligned 32-byte
/// piece at its start, the aligned pieces of the destination after it,
/// and one unaligned piece at its end (two stores that may cross a line
/// instead of one in two); shorter runs as run_avx2() moves them.  On the
/// Intel Xeon VM with SHMPI_WIDE_COPIES=256 (the AVX2 loops of an Intel
/// client core; two alternating rounds, x memcpy, in cache) packs of
/// 72, 200 and 1000-byte blocks went from 0.47, 0.62 and 0.67 to 0.72,
/// 0.82 and 0.90-0.91, unpacks from 0.40, 0.62 and 0.84 to 0.52, 0.74-0.75
/// and 0.89-0.90, the indexed type from 0.73 / 0.66-0.67 to 0.78 / 0.72
/// (pack / unpack); 8 MiB packs of those blocks 0.59-0.62, 0.72 and
/// 0.76-0.79 against 0.58-0.59, 0.63-0.65 and 0.64.  (On this CPU the
/// masked pieces do better still: 0.81 / 0.76 for the indexed type.)
SHMPI_AVX2_TARGET inline void run_avx2_aligned(std::byte* d, const std::byte* s, std::size_t len) {
    if (len < 32) return run_avx2(d, s, len);
    const std::size_t head = reinterpret_cast<std::uintptr_t>(d) & 31;
    auto* pd = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(d) - head);
    const auto* ps = reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(s) - head);
    const std::size_t end = head + len;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    std::size_t o = 32;
    for (; o + 32 <= end; o += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(pd + o),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ps + o)));
    }
    if (o < end) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + len - 32),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + len - 32)));
    }
}


SHMPI_RUN_LOOPS(SHMPI_ALIGNED_TARGET, aligned, run_aligned)
SHMPI_BLOCK_LOOPS(SHMPI_ALIGNED_TARGET, aligned, run_aligned)
SHMPI_RUN_LOOPS(SHMPI_AVX2_TARGET, avx2_aligned, run_avx2_aligned)
SHMPI_BLOCK_LOOPS(SHMPI_AVX2_TARGET, avx2_aligned, run_avx2_aligned)
#undef SHMPI_RUN_LOOPS
#undef SHMPI_BLOCK_LOOPS

/// The widest moves this CPU has, capped by SHMPI_WIDE_COPIES (0: none,
/// 256: AVX2 at most, to compare the tiers on one machine; 512, see
/// short_halves()).
Width detect() {
    if (env_is("SHMPI_WIDE_COPIES", "0")) return Width::kNone;
    const bool cap256 = env_is("SHMPI_WIDE_COPIES", "256");
    __builtin_cpu_init();
    // (GCC's and Clang's checks include the OS's support for the AVX
    // register state.)
    if (!cap256 && __builtin_cpu_supports("avx512f") != 0) return Width::k512;
    if (__builtin_cpu_supports("avx2") != 0) return Width::k256;
    return Width::kNone;
}

Width width() {
    static const Width w = detect();
    return w;
}

/// Whether an Intel CPU with AVX-512F moves the lines of short blocks (one
/// to four lines: with_lines()) and of run lists as 32-byte halves, with
/// the AVX2 loops, keeping 64-byte moves for longer blocks.  On the Intel
/// Xeon VM of docs/BENCHMARKS.md (`dtype_pack`, two alternating rounds of
/// one binary against SHMPI_WIDE_COPIES=512, medians of three, x memcpy),
/// in cache: packs of 64-byte blocks 0.90 against 0.86 (64-byte moves in
/// the same loops: 0.82), unpacks 0.82 against 0.79; 128 and 256-byte
/// blocks 0.97-0.98 against 0.93-0.96 (pack), 0.94-0.95 against 0.91
/// (unpack); the indexed layout 0.73-0.74 against 0.67 (pack), 0.67
/// against 0.59-0.60 (unpack); 8 MiB packs of 64-byte blocks 0.72-0.86
/// against 0.62.  Longer blocks keep the 64-byte moves (4 KiB blocks,
/// 8 MiB packs: 0.87-0.88 against 0.79-0.81 as halves).  AMD's AVX-512
/// cores keep the 64-byte moves for blocks (on the Zen 5 VM of session 53,
/// 128-byte blocks in cache packed at 1.05-1.08x memcpy against 0.69-0.75
/// as halves); their run lists move as halves too (masked_copies()).
/// SHMPI_WIDE_COPIES=512 keeps the 64-byte moves and masks on Intel too,
/// and the masks on AMD, to compare.
bool short_halves() {
    static const bool on = [] {
        if (width() != Width::k512 || env_is("SHMPI_WIDE_COPIES", "512")) return false;
        return __builtin_cpu_is("intel") != 0;
    }();
    return on;
}

/// Whether the run loops use AVX-512BW's byte masks: only where
/// SHMPI_WIDE_COPIES=512 asks for them, on a CPU with AVX-512F and BW;
/// checked once.  (width() has run __builtin_cpu_init().)  Elsewhere the
/// runs move as AVX2's 32-byte pieces, which beat the masks on both
/// AVX-512 CPUs they met: the Intel Xeon VM (short_halves()), and the
/// 2-CPU AMD EPYC (Zen 5) VM of session 53 (the masks' gain on AMD had
/// been measured against the baseline only).  There (`dtype_pack`, the
/// indexed type of 64 runs of 32 to 224 bytes, three alternating rounds
/// against SHMPI_WIDE_COPIES=512, medians of three, x memcpy) packs went
/// from 0.54-0.56 to 0.66-0.67 in cache and from 0.53-0.55 to 0.88-0.89
/// at 8 MiB, unpacks from 0.52-0.59 to 0.64-0.66 and from 0.66-0.67 to
/// 0.89; vectors and structs of a few runs do not take these loops.
bool masked_copies() {
    static const bool has = width() == Width::k512 && __builtin_cpu_supports("avx512bw") != 0 &&
                            env_is("SHMPI_WIDE_COPIES", "512");
    return has;
}

/// Where this CPU stores aligned on the destination (run_aligned() with
/// AVX-512BW and VL, run_avx2_aligned() where the widest moves are AVX2):
/// kNever, kIntel (an Intel CPU: with AVX-512, where short_halves()) or
/// kForced (SHMPI_ALIGNED_STORES=1, on any CPU with AVX2 or with AVX-512BW
/// and VL).  SHMPI_ALIGNED_STORES=0 keeps the unaligned moves: to compare
/// the two, and to test each where it would not run.  AMD's cores keep the
/// unaligned moves: not measured there.  Checked once.
enum class Aligned { kNever, kIntel, kForced };

Aligned aligned_mode() {
    static const Aligned mode = [] {
        if (width() == Width::kNone || env_is("SHMPI_ALIGNED_STORES", "0")) return Aligned::kNever;
        if (width() == Width::k512 &&
            (__builtin_cpu_supports("avx512bw") == 0 || __builtin_cpu_supports("avx512vl") == 0)) {
            return Aligned::kNever;
        }
        if (env_is("SHMPI_ALIGNED_STORES", "1")) return Aligned::kForced;
        const bool intel = __builtin_cpu_is("intel") != 0;
        return intel && (width() == Width::k256 || short_halves()) ? Aligned::kIntel : Aligned::kNever;
    }();
    return mode;
}

/// Whether the run loops of a call (`n` elements of the runs `r`) store
/// aligned: on Intel, for calls that move at most this CPU's L2 (1 MiB
/// where sysconf does not say).  On the Intel Xeon VM of docs/BENCHMARKS.md
/// (`dtype_pack`, the indexed type of 64 runs of 32 to 224 bytes,
/// alternating runs of one binary, medians of three, x memcpy) 32 KiB
/// packs went from 0.72-0.73 to 0.83-0.85, unpacks from 0.65-0.67 to
/// 0.76-0.78; from 256 KiB to 2 MiB the two stayed within each other's
/// spread (0.79-0.86 against 0.81-0.86); 4 MiB packs lost (0.78 against
/// 0.81-0.85), and 8 MiB packs did in six rounds of six (0.76-0.82
/// against 0.77-0.85): there the halves stay.  (Plain loads in place of
/// the masked ones, which may not read outside the run, would add
/// 0.01-0.03 in cache.)
bool aligned_runs(std::int64_t n, const Datatype::Run* r, std::size_t nr) {
    static const std::int64_t most = [] {
        const std::int64_t l2 = cache_bytes(2);
        return l2 > 0 ? l2 : std::int64_t{1} << 20;
    }();
    switch (aligned_mode()) {
    case Aligned::kNever: return false;
    case Aligned::kForced: return true;
    case Aligned::kIntel: break;
    }
    // The bytes the call moves.  (n * one cannot overflow: they are in memory.)
    std::int64_t one = 0;
    for (std::size_t k = 0; k < nr; ++k) one += r[k].length;
    return n * one <= most;
}

/// Whether a loop of blocks stores aligned: on Intel, when its blocks'
/// destinations start at `first` and `apart` bytes apart do not all start
/// on a cache line (a dense stream of blocks of a length that is not a
/// multiple of 64; a stride that is not; an unaligned buffer), whatever
/// the size.  Same VM, vector types at a stride of twice the block, in
/// cache: packs of 72, 200, 784, 1000 and 2056-byte blocks went from
/// 0.46, 0.63, 0.78, 0.78-0.79 and 0.76-0.78 to 0.71-0.72, 0.81-0.82,
/// 0.91, 0.90-0.92 and 0.93-0.94x memcpy, unpacks from 0.34, 0.55-0.56,
/// 0.76-0.77, 0.74-0.75 and 0.83-0.84 to 0.56-0.57, 0.77-0.78, 0.89-0.90,
/// 0.90 and 0.90-0.91; 8 MiB packs of those blocks 0.60, 0.74, 0.75, 0.76,
/// 0.81 against 0.56-0.60, 0.64, 0.72-0.75, 0.75-0.77, 0.79-0.84.  Blocks
/// that all start on a line keep the 64-byte moves (512 and 4096 bytes:
/// 0.92-0.93 either way in cache, 8 MiB packs of 4 KiB blocks 0.81
/// aligned against 0.85-0.86).
bool aligned_blocks(std::uintptr_t first, std::int64_t apart) {
    switch (aligned_mode()) {
    case Aligned::kNever: return false;
    case Aligned::kForced: return true;
    case Aligned::kIntel: break;
    }
    return ((first | static_cast<std::uintptr_t>(apart)) & 63) != 0;
}

/// Whether blocks of one to four lines (with_lines()) move with the AVX2
/// loops: on a CPU whose widest moves are AVX2's, and where short_halves().
bool short_blocks_avx2() { return width() == Width::k256 || short_halves(); }
#endif

}  // namespace

namespace {

/// cache_bytes() from the kernel: the `size` of the `cache/indexK` of this
/// CPU whose `level` is `level` and whose `type` is Data or Unified.
std::int64_t sysfs_cache_bytes(int level) {
    const int cpu = std::max(0, sched_getcpu());
    for (int k = 0; k < 16; ++k) {
        const std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/cache/index{}/", cpu, k);
        std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
        if (!lv) break;  // the indexes are numbered without gaps
        int l = 0;
        std::string type, size;
        if (!(lv >> l) || !(ty >> type) || !(sz >> size) || l != level || type == "Instruction") continue;
        // "32768K"; the kernel writes K, but M and G would read as well.
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(size, &used);
        } catch (const std::exception&) {
            continue;
        }
        const std::string unit = size.substr(used);
        const int shift = unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit.empty() ? 0 : -1;
        if (v > 0 && shift >= 0 && v < (1LL << (62 - shift))) return static_cast<std::int64_t>(v) << shift;
    }
    return -1;
}

}  // namespace

std::int64_t cache_bytes(int level) {
    auto read = [](int lv) {
        std::int64_t bytes = sysfs_cache_bytes(lv);
        long c = -1;
#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
        if (bytes <= 0 && lv == 2) c = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (bytes <= 0 && lv == 3) c = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        if (bytes <= 0 && c > 0) bytes = c;
        return bytes > 0 ? bytes : std::int64_t{-1};
    };
    static const std::int64_t l2 = read(2);
    static const std::int64_t l3 = read(3);
    return level == 2 ? l2 : level == 3 ? l3 : read(level);
}

bool env_is(const char* var, const char* value) {
    const char* env = std::getenv(var);
    return env != nullptr && std::strcmp(env, value) == 0;
}

void check_copy_settings() {
    shm::choice_setting("SHMPI_WIDE_COPIES", {"0", "1", "256", "512"});
    shm::choice_setting("SHMPI_ALIGNED_STORES", {"0", "1", "auto"});
    shm::choice_setting("SHMPI_STREAMED_PACKS", {"0", "1", "auto"});
}

bool wide_copies() {
#if SHMPI_WIDE_COPIES
    return width() != Width::kNone;
#else
    return false;
#endif
}

bool wide_single_lines() {
#if SHMPI_WIDE_COPIES
    return short_blocks_avx2();
#else
    return false;
#endif
}

void pack_blocks_wide(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n,
                      std::int64_t len) {
#if SHMPI_WIDE_COPIES
    // (The dispatch stays out of pack_avx2(): inside it, the loop for other
    // lengths compiled slower, 512-byte blocks 0.85 against 0.95x memcpy.)
    if (aligned_blocks(reinterpret_cast<std::uintptr_t>(dst), len)) {
        const auto bytes = static_cast<std::size_t>(len);
        return width() == Width::k512 ? pack_blocks_aligned(dst, src, stride, n, bytes)
                                      : pack_blocks_avx2_aligned(dst, src, stride, n, bytes);
    }
    if (short_blocks_avx2() &&
        with_lines(len, [&](auto lines) { pack_lines_avx2<decltype(lines)::value>(dst, src, stride, n); })) {
        return;
    }
    if (width() == Width::k512) return pack_avx512(dst, src, stride, n, static_cast<std::size_t>(len));
    pack_avx2(dst, src, stride, n, static_cast<std::size_t>(len));
#else
    for (std::int64_t i = 0; i < n; ++i, dst += len, src = step(src, stride)) {
        std::memcpy(dst, reinterpret_cast<const void*>(src), static_cast<std::size_t>(len));
    }
#endif
}

bool pack_lines_streamed(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n, std::int64_t len) {
#if SHMPI_WIDE_COPIES
    if (width() != Width::k256 || (reinterpret_cast<std::uintptr_t>(dst) & 31) != 0) return false;
    return with_lines(len, [&](auto lines) { pack_lines_streamed_avx2<decltype(lines)::value>(dst, src, stride, n); });
#else
    (void)dst, (void)src, (void)stride, (void)n, (void)len;
    return false;
#endif
}

bool pack_prefetched(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n, std::int64_t len) {
#if SHMPI_WIDE_COPIES
    constexpr std::int64_t kLine = 64;
    constexpr std::int64_t kAhead = 8192;  // bytes of source, rounded up to whole strides
    const bool lines = len <= 4 * kLine && width() == Width::k512;
    if (width() == Width::kNone || len < kLine || (len < 32 * kLine && !lines)) return false;
    const std::int64_t span = stride < 0 ? -stride : stride;
    const std::int64_t ahead = span == 0 ? 1 : std::max<std::int64_t>(1, (kAhead + span - 1) / span);
    pack_prefetched_avx2(dst, src, stride, n, static_cast<std::size_t>(len), ahead);
    return true;
#else
    (void)dst, (void)src, (void)stride, (void)n, (void)len;
    return false;
#endif
}

bool stream_block_512(std::byte* d, const std::byte* s, std::size_t len) {
#if SHMPI_WIDE_COPIES
    if (width() != Width::k512 || len < 64) return false;
    block_streamed(d, s, len);
    return true;
#else
    (void)d, (void)s, (void)len;
    return false;
#endif
}

void unpack_blocks_wide(std::uintptr_t dst, std::int64_t stride, const std::byte* src, std::int64_t n,
                        std::int64_t len, bool stream) {
#if SHMPI_WIDE_COPIES
    if (!stream && aligned_blocks(dst, stride)) {
        const auto bytes = static_cast<std::size_t>(len);
        return width() == Width::k512 ? unpack_blocks_aligned(dst, stride, src, n, bytes)
                                      : unpack_blocks_avx2_aligned(dst, stride, src, n, bytes);
    }
    if (short_blocks_avx2() && !stream &&
        with_lines(len, [&](auto lines) { unpack_lines_avx2<decltype(lines)::value>(dst, stride, src, n); })) {
        return;
    }
    if (width() == Width::k512) return unpack_avx512(dst, stride, src, n, static_cast<std::size_t>(len), stream);
    unpack_avx2(dst, stride, src, n, static_cast<std::size_t>(len), stream);
#else
    (void)stream;
    for (std::int64_t i = 0; i < n; ++i, src += len, dst = step(dst, stride)) {
        std::memcpy(reinterpret_cast<void*>(dst), src, static_cast<std::size_t>(len));
    }
#endif
}

std::byte* pack_runs_wide(std::byte* dst, std::uintptr_t base, std::int64_t extent, std::int64_t n,
                          const Datatype::Run* r, std::size_t nr) {
#if SHMPI_WIDE_COPIES
    if (aligned_runs(n, r, nr)) {
        return width() == Width::k512 ? pack_runs_aligned(dst, base, extent, n, r, nr)
                                      : pack_runs_avx2_aligned(dst, base, extent, n, r, nr);
    }
    if (masked_copies()) return pack_runs_avx512(dst, base, extent, n, r, nr);
    return pack_runs_avx2(dst, base, extent, n, r, nr);
#else
    (void)dst, (void)base, (void)extent, (void)n, (void)r, (void)nr;
    std::abort();  // wide_copies() is false here
#endif
}

const std::byte* unpack_runs_wide(std::uintptr_t base, std::int64_t extent, std::int64_t n, const Datatype::Run* r,
                                  std::size_t nr, const std::byte* src) {
#if SHMPI_WIDE_COPIES
    if (aligned_runs(n, r, nr)) {
        return width() == Width::k512 ? unpack_runs_aligned(base, extent, n, r, nr, src)
                                      : unpack_runs_avx2_aligned(base, extent, n, r, nr, src);
    }
    if (masked_copies()) return unpack_runs_avx512(base, extent, n, r, nr, src);
    return unpack_runs_avx2(base, extent, n, r, nr, src);
#else
    (void)base, (void)extent, (void)n, (void)r, (void)nr, (void)src;
    std::abort();  // wide_copies() is false here
#endif
}

}  // namespace shmpi::dtype
