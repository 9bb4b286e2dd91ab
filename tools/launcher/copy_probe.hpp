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
// `push`.  The cells also need lines that move between CPUs fast.  When
// that VM's lines took 0.29 us one way instead of 0.06 (it switches for
// minutes at a time), the single copies won again (2-rank 1 MiB Bcast
// 132-141 us against 262-318 in the cells); but a Zen 5 VM whose lines
// take 0.25 us streams the cells at 27 GB/s (against that VM's 3.5), and
// there the cells won in both stretches (2-rank 1 MiB Reduce 54-56 us
// against 107-109).  A line's latency does not tell the two apart; the
// copy does.  So mpirun times 64 KiB both ways in this process (a
// process_vm_readv from itself runs the same kernel path as one from
// another process) and, when the kernel is slow, races 1 MiB from one CPU
// to another through slots like the cells against one process_vm_readv
// (copy_race()).  It records the verdict in the segment's header
// (SegmentHeader::kernel_copies_slow), where every rank reads the same
// value and the collectives choose by it (coll/select_shm.cpp).  The
// verdict holds for a minute: launches within it read it from /dev/shm
// (cells_beat_kernel_copies_kept()).  SHMPI_KERNEL_COPIES=fast or =slow
// sets the verdict without measuring.
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
/// Parses SHMPI_REP_MOVSB's value (nullptr or "": unset, Auto); nullopt for
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

/// copy_race()'s answer: the best time, in nanoseconds, to move 1 MiB
/// from one CPU to another each way.
struct CopyRace {
    double cells_ns;   ///< the sender copies it into 8 slots of 16 KiB in turn, the receiver out of them
    double kernel_ns;  ///< the receiver copies it with one process_vm_readv from the sender (infinity: refused)
};

/// Races the cells' two copies against the kernel's one between the first
/// two CPUs this process may use: mpirun and a helper process it forks
/// move 1 MiB from the helper's freshly written buffer each way three
/// times (after one warm-up each), taking turns: a few milliseconds.
/// nullopt with one CPU, when the race is not over within `limit_ms` (a
/// loaded machine may leave the helper without a CPU: then the answer is
/// "unknown", not a wait), or when a copy brings the wrong bytes.  Leaves
/// mpirun's affinity as it was.
std::optional<CopyRace> copy_race(double limit_ms = 50);

/// The verdict mpirun records: the kernel copies slowly
/// (kernel_copies_slow()), and from CPU to CPU the cells move 1 MiB
/// faster than process_vm_readv (copy_race()).
bool cells_beat_kernel_copies();

/// The kernel-copy verdict that mpirun keeps between launches: the race
/// takes 15-20 ms of an idle 2-CPU VM's start and up to its 50 ms limit on
/// a busy one, every launch of 2 ranks or more, while the answer holds for
/// minutes.  So mpirun writes it to /dev/shm/shmpi-UID-copies and launches
/// within kVerdictKeepSeconds of it, on the same boot and with the same
/// allowed CPUs (the race runs on the first two), read it instead.  The
/// file is text ("shmpi-copies 1 KEY AT SLOW"); removing it makes the next
/// launch measure.  It is only ever read when it is a regular file of this
/// user's, not a link.
inline constexpr long long kVerdictKeepSeconds = 60;

/// This process's key: the boot's id and the CPUs it may run on
/// ("BOOT_ID/0-1,4").
std::string verdict_key();

/// The file's text for `slow` measured at `at_s` (CLOCK_BOOTTIME seconds).
std::string format_verdict(std::string_view key, long long at_s, bool slow);
/// The verdict of a file's `text`, when it is ours (`key`) and taken at
/// most kVerdictKeepSeconds before `now_s` (and not after it); nullopt for
/// anything else.
std::optional<bool> parse_verdict(std::string_view text, std::string_view key, long long now_s);

/// /dev/shm/shmpi-UID-copies.
std::string verdict_path();
/// The file at `path` as parse_verdict() reads it (nullopt: none, not
/// ours, stale, or unreadable).
std::optional<bool> load_verdict(const std::string& path, std::string_view key, long long now_s);
/// Writes the verdict to `path` whole (a private file renamed over it);
/// false where it could not.
bool store_verdict(const std::string& path, std::string_view key, long long at_s, bool slow);

/// cells_beat_kernel_copies(), or the answer kept at verdict_path() by a
/// launch of the last kVerdictKeepSeconds (which it then keeps itself).
bool cells_beat_kernel_copies_kept();

/// What SHMPI_KERNEL_COPIES asks for.
enum class KernelCopies { Auto, Fast, Slow };
/// Parses SHMPI_KERNEL_COPIES's value (nullptr or "": unset, Auto); nullopt for
/// anything but "auto", "fast" and "slow".
std::optional<KernelCopies> parse_kernel_copies(const char* value);

}  // namespace shmpi::launcher
