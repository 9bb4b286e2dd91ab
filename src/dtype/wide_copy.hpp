// Block copies with vector moves, for the pack engine's loops over blocks
// longer than 64 bytes (of 64 bytes too with AVX2: wide_single_lines())
// and over many runs.
//
// The library is built for the baseline x86-64 instruction set, where a
// fixed-size copy moves 16 bytes at a time.  On a CPU with AVX-512F one
// load and one store move a whole cache line.  On the Intel Xeon VM of
// docs/BENCHMARKS.md, in alternating runs of one binary (medians of 4),
// packs of 128-byte to 4 KiB blocks at a stride of twice the block went
// from 0.87-0.93x to 0.94-0.96x of a memcpy of the packed bytes for 32 KiB
// (in cache) and from 0.70-0.95x to 0.76-0.98x for 8 MiB; unpacks gained
// 0.01-0.04.  A CPU with AVX2 but not AVX-512F (AMD before Zen 4, Intel's
// client cores) moves a line as two 32-byte halves: on the 2-CPU AMD VM,
// four alternating rounds, packs of 128 and 256-byte blocks in cache went
// from 0.72-0.81x to 0.85-0.97x, of 512 B to 4 KiB from 0.86-1.03x to
// 0.97-1.16x; unpacks stayed within the noise.  Blocks of one to four
// whole lines then got loops of their own (no branch per block), and with
// AVX2 one-line blocks go wide too: four alternating rounds, in cache, 64 B
// blocks 0.73-0.81x -> 0.86-0.93x (pack) and 0.76-0.81x -> 0.93-0.96x
// (unpack), 128 and 256 B unpacks 0.71-0.84x -> 0.90-1.01x; 8 MiB packs of
// 64 to 256 B blocks (pack_lines_streamed()) 0.69-0.82x -> 0.78-1.05x.
// wide_copies() says, once per process, whether the CPU has either; the
// pack engine keeps its baseline loops otherwise.
//
// Types of many runs (indexed, struct) move each run in 32-byte pieces
// and one overlapping last piece (shorter runs as two overlapping
// halves): on an AMD VM without AVX-512, three alternating rounds, packs
// of an indexed type of 64 runs of 32 to 224 bytes went from 0.54-0.58x
// to 0.63-0.65x a memcpy of the packed bytes in cache and from
// 0.80-0.85x to 0.88-0.92x at 8 MiB; unpacks from 0.57-0.69x to
// 0.60-0.62x and from 0.82-0.84x to 0.86-0.89x.  With AVX-512BW, each run
// can move as whole lines and one masked store of its rest (no branch on
// the run's length but the line count): on an AMD VM with AVX-512 that
// indexed type went from 0.58-0.64x (the baseline) to 0.74-0.81x in
// cache, but on the AMD EPYC (Zen 5) VM of session 53 the 32-byte pieces
// beat the masks (8 MiB packs 0.88-0.89x against 0.53-0.55x), as on the
// Intel Xeon VM below; the masks run only where SHMPI_WIDE_COPIES=512
// asks for them (masked_copies() in wide_copy.cpp).
//
// On the Intel Xeon VM the AVX2 moves beat AVX-512's for blocks of one to
// four lines and for the runs, by 0.03-0.08x memcpy in cache: an Intel
// CPU with AVX-512F uses them there and keeps 64-byte moves for longer
// blocks (short_halves() in wide_copy.cpp has the numbers).  With
// AVX-512BW and VL as well, such a CPU moves the runs of a call that fits
// in its L2, and blocks whose destinations do not all start on a cache
// line, as the 32-byte pieces of the destination they touch, the first
// and last through byte masks: no store crosses a cache line (one that
// does costs two there).  In cache, that indexed type's packs went from
// 0.72-0.73x to 0.83-0.85x, its unpacks from 0.65-0.67x to 0.76-0.78x; a
// vector of 200-byte blocks from 0.63x to 0.81-0.82x (pack) and from
// 0.55-0.56x to 0.77-0.78x (unpack) (aligned_runs() and aligned_blocks()
// in wide_copy.cpp).  An Intel CPU whose widest moves are AVX2 (a client
// core) stores the same pieces aligned but for an unaligned first and
// last one (run_avx2_aligned()): 200-byte blocks 0.62x -> 0.82x (pack).
//
// SHMPI_WIDE_COPIES=0 keeps the baseline loops, =256 the AVX2 moves on a
// CPU that has AVX-512F too, and =512 the 64-byte moves for every length
// on an Intel CPU and the masked runs on any CPU with AVX-512BW;
// SHMPI_ALIGNED_STORES=0 keeps the unaligned
// moves on Intel, =1 stores aligned on any CPU with AVX2 or AVX-512BW and
// VL, whatever the size and alignment: each can be compared, and tested,
// on any machine that has the instructions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype/datatype.hpp"

namespace shmpi::dtype {

/// True when the environment variable `var` holds exactly `value`: the
/// switches (SHMPI_WIDE_COPIES, SHMPI_ALIGNED_STORES, SHMPI_STREAMED_PACKS)
/// that pick one of the engine's loops, to compare them in one binary.
/// The engine reads them when it first needs them; MPI_Init checks their
/// values first (check_copy_settings()).
bool env_is(const char* var, const char* value);

/// Throws shm::SegmentError naming a switch of env_is() whose value is not
/// one the engine knows (a typo such as SHMPI_WIDE_COPIES=off would
/// otherwise leave the default in force without a word).
void check_copy_settings();

/// Bytes of the level-`level` data (or unified) cache of the CPU this
/// process first asked from, or -1 when neither the kernel nor the C
/// library says.  From the kernel's /sys/devices/system/cpu/cpuN/cache
/// first: it describes the cache that CPU shares with its neighbours.
/// glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) adds up the L3s of a whole AMD
/// package: 384 MiB on the 2-CPU AMD EPYC VM of docs/BENCHMARKS.md
/// (session 53), whose CPUs share one L3 of 32 MiB.  Levels 2 and 3 (what
/// the engine asks for) are read once; other levels on every call.
std::int64_t cache_bytes(int level);

/// True when this CPU runs the functions below (x86-64 with AVX-512F or
/// AVX2); checked once.  Always false elsewhere.
bool wide_copies();

/// True when blocks of exactly one line (64 bytes) should go through the
/// functions below too: with AVX2 (two 32-byte moves against the
/// baseline's four 16-byte ones; packs in cache on the 2-CPU AMD VM
/// 0.86-0.93x against 0.73-0.81x a memcpy of the packed bytes), and on an
/// Intel CPU with AVX-512F, which moves short blocks as 32-byte halves too
/// (0.90 against the baseline's 0.86 on the Intel Xeon VM; one 64-byte
/// move did worse than the baseline, 0.82-0.83).
bool wide_single_lines();

/// Packs `n` blocks of `len` bytes (len >= 64), `stride` bytes apart from
/// address `src`, back to back into `dst`.  Addresses are integers: `src`
/// may be MPI_BOTTOM-based.
void pack_blocks_wide(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n,
                      std::int64_t len);

/// Packs as pack_blocks_wide() does, with non-temporal stores and a store
/// fence at the end, where this CPU's moves are AVX2, `len` is 64, 128, 192
/// or 256 and `dst` is 32-byte aligned; returns false, having done nothing,
/// otherwise.  For packs too large for the caches.
bool pack_lines_streamed(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n, std::int64_t len);

/// Packs as pack_blocks_wide() does, with non-temporal stores and a store
/// fence at the end, each line's load paired with a prefetch of the same
/// line 8 KiB of source ahead (in whole strides: the blocks' lines, not
/// the gaps'), where this CPU has AVX2 and the blocks are 32 lines (2 KiB)
/// or longer, or, where it has AVX-512F, one to four lines long (64 to
/// 256 bytes); returns false, having done nothing, otherwise.  For packs
/// too large for the caches, whose gaps are at most two blocks.  On the
/// 2-CPU AMD EPYC (Zen 5) VM of docs/BENCHMARKS.md (session 54,
/// `dtype_pack`, 8 MiB packs at a stride of twice the block, three to
/// six alternating rounds against the build before, medians of three, x
/// memcpy): 4 KiB blocks 0.84-0.93 against 0.73-0.77, 16 KiB 1.01-1.07
/// against 0.58-0.64 (the sweep of pack.cpp's pack_streaming() reads
/// every gap, there whole pages, which the hardware's prefetchers, which
/// stop at page ends, never would), 64 B 0.70-0.72 against 0.63-0.65,
/// 256 B 0.72 against 0.67; 2 KiB and 128 B blocks alike (0.74-0.78,
/// 0.67).  Blocks of 5 to 31 lines keep the sweep (512 B: 0.63-0.67 this
/// way against 0.73 in a trial), and so do CPUs with AVX2 only for short
/// blocks (pack_lines_streamed() first, for whole lines).
bool pack_prefetched(std::byte* dst, std::uintptr_t src, std::int64_t stride, std::int64_t n, std::int64_t len);

/// Copies one block of `len` >= 64 bytes to `d` with non-temporal stores
/// for the lines of `d` it fills whole and plain stores that stay inside
/// its first and last lines, as AVX-512's 64-byte moves, where this CPU
/// moves 64 bytes at a time; returns false, having done nothing,
/// elsewhere.  No fence: the caller ends its loop with one.  For the
/// streamed packs that sweep their source (pack.cpp's pack_streaming()),
/// in place of 16-byte stores, as the streamed unpacks already do.  On
/// the Zen 5 VM of docs/BENCHMARKS.md (session 54, `dtype_pack`, 8 MiB
/// packs at a stride of twice the block, six alternating rounds against
/// the 16-byte stores, medians of three, x memcpy) 512-byte blocks moved
/// at 0.76-0.80 against 0.74-0.77 (ahead in all six), 1 KiB blocks at
/// 0.74-0.78 against 0.74-0.79 (ahead in four), 1000-byte blocks, off
/// the lines, at 0.63-0.66 against 0.64-0.69.
bool stream_block_512(std::byte* d, const std::byte* s, std::size_t len);

/// The reverse: `n` blocks of `len` bytes (len >= 64) from `src`, back to
/// back, into memory at `dst`, `stride` bytes apart, in block order.  With
/// `stream` (only for blocks that do not overlap), whole 64-byte lines of
/// the blocks are written with non-temporal stores and a store fence ends
/// the call; the parts of a block's first and last lines are written with
/// plain stores that stay inside those lines.
void unpack_blocks_wide(std::uintptr_t dst, std::int64_t stride, const std::byte* src, std::int64_t n,
                        std::int64_t len, bool stream);

/// Packs `n` elements, `extent` bytes apart from address `base`, each the
/// `nr` runs `r` (in type-map order), back to back into `dst`.  Each run
/// moves as 32-byte pieces and an overlapping last one (the baseline
/// copies loop in 16-byte pairs); on Intel, up to the L2's size, as the
/// aligned 32-byte pieces of the destination, the first and last masked
/// with AVX-512BW and VL, unaligned with AVX2 alone; with
/// SHMPI_WIDE_COPIES=512 and AVX-512BW, as whole 64-byte lines and one
/// masked load and store of the rest.
/// Returns the end of what it wrote.
std::byte* pack_runs_wide(std::byte* dst, std::uintptr_t base, std::int64_t extent, std::int64_t n,
                          const Datatype::Run* r, std::size_t nr);

/// The reverse, run after run in type-map order (so overlapping runs of an
/// erroneous receive type end as the type map says).  Returns the end of
/// what it read.
const std::byte* unpack_runs_wide(std::uintptr_t base, std::int64_t extent, std::int64_t n, const Datatype::Run* r,
                                  std::size_t nr, const std::byte* src);

}  // namespace shmpi::dtype
