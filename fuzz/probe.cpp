// Compiled at configure time to find out whether clang++ can build
// libFuzzer targets (fuzz/meson.build).
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
