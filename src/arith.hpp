// Integer rounding used across the layers: sizes rounded up to lines and
// pages, counts split into chunks.
#pragma once

#include <concepts>
#include <type_traits>

namespace shmpi {

/// n / d rounded up, for n >= 0 and d > 0 where n + d - 1 does not overflow.
template <std::integral T>
constexpr T ceil_div(T n, std::type_identity_t<T> d) {
    return (n + d - 1) / d;
}

/// The smallest multiple of `to` that is at least n; same conditions as
/// ceil_div().
template <std::integral T>
constexpr T round_up(T n, std::type_identity_t<T> to) {
    return ceil_div(n, to) * to;
}

static_assert(round_up(0, 64) == 0 && round_up(1, 64) == 64 && round_up(64, 64) == 64 && round_up(65, 64) == 128);
static_assert(ceil_div(7, 2) == 4 && ceil_div(8, 2) == 4);

}  // namespace shmpi
