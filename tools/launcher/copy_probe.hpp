// glibc's memcpy and a slow `rep movsb`.
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

}  // namespace shmpi::launcher
