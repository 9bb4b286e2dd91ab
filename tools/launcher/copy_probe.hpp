// What mpirun measures about copies before it starts the ranks.
//
// 1. glibc's memcpy and a slow `rep movsb`.
//
// glibc's memcpy (2.36, Debian 12) copies from about 2 KiB up to the L2
// cache's size with `rep movsb` on CPUs that have fast short `rep movsb`
// (FSRM).  On some of them it runs 15-30 times slower when the destination
// lies 1 to 63 bytes past the source modulo 4096: on the 2-CPU AMD EPYC VM
// of docs/BENCHMARKS.md, 1.3-2.5 GB/s for 4 to 256 KiB against 40-90 GB/s
// for other distances.  Every copy out of a 64-byte aligned cell into a
// buffer that malloc placed 16 bytes into a page is such a copy: shmpi's
// 1 MiB messages took 420 us there instead of 48.  (glibc checks the
// distance itself on Intel CPUs, Avoid_Short_Distance_REP_MOVSB.)
//
// So mpirun times the two kinds of copy once, in a few hundred
// microseconds, and when the short distance is more than 4 times slower it
// raises glibc's rep-movsb threshold for the ranks (GLIBC_TUNABLES); memcpy
// then keeps its vector loops, which copy at full speed at every distance.
// SHMPI_REP_MOVSB=keep leaves the ranks' memcpy alone, =avoid raises the
// threshold without measuring; a GLIBC_TUNABLES that already sets the
// threshold is never changed.
//
// 2. The kernel's copies between processes.  The single-copy collectives
// (Bcast `direct`, Reduce and Allreduce `push` and `rsag`) move data with
// process_vm_readv/writev, one copy instead of the cells' two.  That pays
// only where the kernel copies about as fast as memcpy.  On the 2-CPU AMD
// EPYC VM of docs/BENCHMARKS.md it copies 3-5 times slower (64 KiB-1 MiB,
// cache-warm: 8 GB/s against 30), and the cells' two user-space copies won:
// a 2-rank 1 MiB Reduce took 101-110 us in the tree against 131-164 by
// `push`.  The cells also need cache lines that cross between CPUs fast:
// when that VM's lines took 0.29 us instead of 0.06 (it switches for
// minutes at a time), the single copies won again (2-rank 1 MiB Bcast
// 132-141 us against 262-318 in the cells).  So mpirun times 64 KiB both
// ways in this process (a process_vm_readv from itself runs the same
// kernel path as one from another process) and, when the kernel is slow,
// a line's trip between two CPUs, and records the verdict in the segment's
// header (SegmentHeader::kernel_copies_slow), where every rank reads the
// same value and the collectives choose by it (coll/select_shm.cpp).
// SHMPI_KERNEL_COPIES=fast or =slow sets the verdict without measuring.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shmpi::launcher {

/// The glibc tunable, and the value mpirun gives it: above every copy.
inline constexpr std::string_view kRepMovsbTunable = "glibc.cpu.x86_rep_movsb_threshold";
inline constexpr std::string_view kRepMovsbOff = "2147483647";

/// Whether memcpy in this process copies 16 KiB more than 4 times slower
/// when the destination is 16 bytes past the source modulo 4096 than when
/// it is 16 bytes before it.  Measured on each call.
bool short_distance_copies_slow();

/// What SHMPI_REP_MOVSB asks for.
enum class RepMovsb { Auto, Keep, Avoid };
/// Parses SHMPI_REP_MOVSB's value (nullptr: unset, Auto); nullopt for
/// anything but "auto", "keep" and "avoid".
std::optional<RepMovsb> parse_rep_movsb(const char* value);

/// The ranks' GLIBC_TUNABLES when their memcpy should avoid `rep movsb`,
/// given the value they would otherwise get (`current`, nullopt: unset):
/// `current` with the threshold appended; nullopt when `current` sets the
/// threshold already (the user's choice stands).
std::optional<std::string> tunables_avoiding_rep_movsb(std::optional<std::string_view> current);

/// Whether process_vm_readv copies 64 KiB more than twice as slowly as
/// memcpy in this process (best of 5 rounds of 8 copies each, under a
/// millisecond).  False when the call fails: then the ranks' own probe
/// turns the single copies off anyway.  Measured on each call.
bool kernel_copies_slow();

/// Half a round trip of a cache line between the first two CPUs this
/// process may use, in nanoseconds: mpirun and a helper process it forks
/// hand a counter back and forth 2000 times (a millisecond or two).
/// nullopt with one CPU, or when the helper does not answer within 50 ms.
std::optional<double> line_handoff_ns();

/// Lines that cross between CPUs faster than this (one way) make the cells
/// cheap: the VM of docs/BENCHMARKS.md takes 55-75 ns in its usual mode
/// and 260-330 in its slow one, where the single copies won again.
inline constexpr double kFastLineNs = 150;

/// The verdict mpirun records: the kernel copies slowly
/// (kernel_copies_slow()) and lines cross fast (line_handoff_ns() under
/// kFastLineNs), so the cells' two copies beat the kernel's one.
bool cells_beat_kernel_copies();

/// What SHMPI_KERNEL_COPIES asks for.
enum class KernelCopies { Auto, Fast, Slow };
/// Parses SHMPI_KERNEL_COPIES's value (nullptr: unset, Auto); nullopt for
/// anything but "auto", "fast" and "slow".
std::optional<KernelCopies> parse_kernel_copies(const char* value);

}  // namespace shmpi::launcher
