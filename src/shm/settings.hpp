// SHMPI_* settings from the environment: one parser for the numeric ones,
// so that every bad value fails alike, with a message that names the
// setting, its value and the range it must be in.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "shm/segment.hpp"

namespace shmpi::shm {

/// Who reads a setting, as its error message begins: ranks read theirs in
/// MPI_Init, mpirun reads the segment's geometry.
inline constexpr std::string_view kReadInInit = "MPI_Init: ";
inline constexpr std::string_view kReadByLauncher = "";

/// `value`, the value of the setting `name`, as a decimal integer in
/// lo..hi: decimal digits, '-' before them at most (no blanks, no '+').
/// Anything else throws SegmentError
/// "shmpi: <who>NAME='value' is not a number in lo..hi".
inline long long integer_setting_value(const char* name, const char* value, long long lo, long long hi,
                                       std::string_view who = kReadInInit) {
    const std::string_view text(value);
    long long n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n, 10);
    if (ec != std::errc{} || end != text.data() + text.size() || n < lo || n > hi) {
        throw SegmentError(fmt::format("shmpi: {}{}='{}' is not a number in {}..{}", who, name, value, lo, hi));
    }
    return n;
}

/// The environment variable `name` as a decimal integer in lo..hi, or
/// nullopt when it is unset or empty (integer_setting_value's error
/// otherwise).
inline std::optional<long long> integer_setting(const char* name, long long lo, long long hi,
                                                std::string_view who = kReadInInit) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return integer_setting_value(name, v, lo, hi, who);
}

/// integer_setting() for a setting whose default is automatic: "auto"
/// (or unset, or empty) gives nullopt; the error message says that "auto"
/// is accepted too.
inline std::optional<long long> integer_or_auto_setting(const char* name, long long lo, long long hi,
                                                        std::string_view who = kReadInInit) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0' || std::string_view(v) == "auto") return std::nullopt;
    try {
        return integer_setting_value(name, v, lo, hi, who);
    } catch (const SegmentError&) {
        throw SegmentError(fmt::format("shmpi: {}{}='{}' is not auto or a number in {}..{}", who, name, v, lo, hi));
    }
}

/// The environment variable `name` as one of `choices` (returned as the
/// choice), or nullopt when it is unset or empty.  Anything else throws
/// SegmentError "shmpi: <who>NAME='value' is not 0, 1 or auto".
inline std::optional<std::string_view> choice_setting(const char* name, std::initializer_list<std::string_view> choices,
                                                      std::string_view who = kReadInInit) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    std::string listed;
    std::size_t i = 0;
    for (const std::string_view c : choices) {
        if (c == v) return c;
        listed += fmt::format("{}{}", i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ", c);
        ++i;
    }
    throw SegmentError(fmt::format("shmpi: {}{}='{}' is not {}", who, name, v, listed));
}

}  // namespace shmpi::shm
