// libFuzzer target for the datatype engine.  The first input byte picks a
// mode; the rest drive it:
//   0  a random nested type (test/dtype/reference.hpp's generator, drawing
//      from the input) checked against the reference flattening: bounds,
//      size, and byte-exact pack and unpack, native and external32;
//   1  a random sequence of constructor calls with raw arguments (negative
//      counts, huge displacements, markers, ...) over a pool of types: a
//      call either succeeds or throws MpiError of an argument class, and
//      every type made packs and unpacks consistently from any offset.
// Built with AddressSanitizer and UBSan, so overflows and bad reads fail.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "dtype/datatype.hpp"
#include "errors.hpp"
#include "reference.hpp"

namespace {

using shmpi::dtype::Datatype;
using shmpi::dtype::Ref;

/// Draws values from the fuzzer's bytes; zeros once they run out.
class Input {
public:
    Input(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
    std::uint64_t bits(int bytes) {
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v = (v << 8) | (at_ < n_ ? d_[at_++] : 0);
        return v;
    }
    std::uint64_t below(std::uint64_t bound) { return bound == 0 ? 0 : bits(bound > 255 ? 4 : 1) % bound; }
    bool done() const { return at_ >= n_; }
    /// A value of interest for an argument: small, negative, or extreme.
    std::int64_t arg() {
        switch (bits(1) % 8) {
        case 0: return -static_cast<std::int64_t>(bits(1));
        case 1: return static_cast<std::int64_t>(bits(4)) - (std::int64_t{1} << 31);
        case 2: return static_cast<std::int64_t>(bits(8));  // anything, overflow included
        default: return static_cast<std::int64_t>(bits(1) % 9);
        }
    }

private:
    const std::uint8_t* d_;
    std::size_t n_;
    std::size_t at_ = 0;
};

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "dtype_fuzz: %s\n", what);
    std::abort();
}

/// p + off computed as an address: a type's lower bound may be far below
/// its memory (the library only ever touches bytes of the map).
unsigned char* shifted(unsigned char* p, std::int64_t off) {
    return reinterpret_cast<unsigned char*>(reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(off));
}

/// The bytes [lo, hi) that `count` elements of a type with these bounds
/// and extent cover, when that is at most 8 MiB (larger types are legal but
/// only exhaust the fuzzer's memory); nothing otherwise, overflow included.
std::optional<std::pair<std::int64_t, std::int64_t>> small_span(std::int64_t true_lb, std::int64_t true_ub,
                                                                std::int64_t extent, std::int64_t count) {
    std::int64_t step = 0, lo = 0, hi = 0, span = 0;
    if (__builtin_mul_overflow(count - 1, extent, &step) ||
        __builtin_add_overflow(true_lb, std::min<std::int64_t>(0, step), &lo) ||
        __builtin_add_overflow(true_ub, std::max<std::int64_t>(0, step), &hi) ||
        __builtin_sub_overflow(hi, lo, &span) || span > (8 << 20) || span < 0) {
        return std::nullopt;
    }
    return std::pair{lo, hi};
}

/// Memory for `count` elements of `t`, or false when that is too large to
/// bother with.
bool arena_for(const Datatype& t, std::int64_t count, std::vector<unsigned char>& mem, std::int64_t& origin) {
    if (t.size == 0 || t.size > (1 << 20) / count) return false;
    const auto span = small_span(t.true_lb, t.true_ub(), t.extent, count);
    if (!span) return false;
    mem.assign(static_cast<std::size_t>(span->second - span->first), 0);
    origin = -span->first;
    return true;
}

/// Pack in pieces equals pack whole; unpacking the stream into zeroed
/// memory and packing again gives the stream back.
void self_check(const Datatype& t, Input& in) {
    const std::int64_t count = 1 + static_cast<std::int64_t>(in.below(3));
    std::vector<unsigned char> mem;
    std::int64_t origin = 0;
    if (!arena_for(t, count, mem, origin)) return;
    for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i * 131 + 7);
    unsigned char* base = shifted(mem.data(), origin);
    const std::int64_t total = count * t.size;
    std::vector<std::byte> whole(static_cast<std::size_t>(total)), pieces(whole.size());
    shmpi::dtype::pack(t, base, count, whole.data());
    // Pieces of random sizes, at most 64 of them.
    const auto piece = [&] {
        return std::max<std::int64_t>(total / 64, 1 + static_cast<std::int64_t>(in.below(static_cast<std::uint64_t>(total))));
    };
    for (std::int64_t off = 0; off < total;) {
        const std::int64_t k = piece();
        const std::int64_t n = shmpi::dtype::pack(t, base, count, off, pieces.data() + off, k);
        if (n != std::min(k, total - off)) fail("resumed pack moved the wrong number of bytes");
        off += n;
    }
    if (whole != pieces) fail("pack in pieces differs from pack whole");
    // Copying the listed segments in order is packing.
    std::vector<shmpi::dtype::Segment> segs;
    if (shmpi::dtype::segments(t, base, count, 0, total, segs) != total) fail("segments cover the wrong length");
    std::vector<std::byte> gathered;
    for (const shmpi::dtype::Segment& g : segs) {
        const auto* p = static_cast<const std::byte*>(g.address);
        gathered.insert(gathered.end(), p, p + g.length);
    }
    if (gathered != whole) fail("the segments differ from the packed stream");
    // Unpacking is only invertible when no two bytes of the map overlap
    // (receiving into an overlapping map is erroneous MPI): a stream of 0xff
    // unpacked into zeros must mark `total` distinct bytes.
    std::vector<unsigned char> back(mem.size(), 0);
    unsigned char* bbase = shifted(back.data(), origin);
    const std::vector<std::byte> ones(whole.size(), std::byte{0xff});
    shmpi::dtype::unpack(t, ones.data(), total, bbase);
    std::int64_t marked = 0;
    for (unsigned char b : back) marked += b != 0;
    if (marked > total) fail("unpack wrote outside the type map");
    if (marked < total) return;
    std::fill(back.begin(), back.end(), 0);
    for (std::int64_t off = 0; off < total;) {
        const std::int64_t k = piece();
        off += shmpi::dtype::unpack(t, bbase, count, off, whole.data() + off, k);
    }
    std::vector<std::byte> again(whole.size());
    shmpi::dtype::pack(t, bbase, count, again.data());
    if (again != whole) fail("unpack then pack does not give the stream back");
    if (shmpi::dtype::elements_in(t, total) != count * t.elements) fail("element count of whole elements");
}

void reference_mode(Input& in) {
    const ref::Draw draw = [&in](std::uint64_t bound) { return in.below(bound); };
    const ref::Spec s = ref::random_spec(draw, 1 + static_cast<int>(in.below(4)));
    const ref::Map m = ref::flatten(s);
    const Ref t = ref::build(s);
    if (t->size != m.size() || t->lb != m.lb || t->extent != m.extent() || t->true_lb != m.true_lb() ||
        t->true_ub() != m.true_ub()) {
        fail(("bounds differ from the reference for " + ref::describe(s)).c_str());
    }
    const std::int64_t count = 1 + static_cast<std::int64_t>(in.below(3));
    // The reference check makes three arenas of the span (the generator's
    // resized and strided types reach gigabytes): the same limit as
    // arena_for().
    if (m.has_data() && !small_span(m.true_lb(), m.true_ub(), m.extent(), count)) return;
    ref::Arena a(m, count);
    a.fill(in.bits(8));
    const std::vector<unsigned char> want = ref::pack(m, a.base(), count);
    std::vector<std::byte> got(want.size() + 1);
    shmpi::dtype::pack(*t, a.base(), count, got.data());
    if (!want.empty() && std::memcmp(got.data(), want.data(), want.size()) != 0) {
        fail(("pack differs from the reference for " + ref::describe(s)).c_str());
    }
    ref::Arena x(m, count), y(m, count);
    x.fill(7);
    y.fill(7);
    const auto cut = static_cast<std::int64_t>(in.below(want.size() + 1));
    ref::unpack(m, want.data(), cut, x.base(), count);
    shmpi::dtype::unpack(*t, reinterpret_cast<const std::byte*>(want.data()), cut, y.base());
    if (x.bytes != y.bytes) fail(("unpack differs from the reference for " + ref::describe(s)).c_str());
    // external32: the reference's bytes, and back into memory as a plain
    // unpack of the whole stream leaves it (long double aside: empty).
    const std::vector<unsigned char> ext = ref::pack_external32(m, a.base(), count);
    if (!ext.empty()) {
        std::vector<std::byte> packed(ext.size());
        if (shmpi::dtype::external32_size(*t, count, "fuzz") != static_cast<std::int64_t>(ext.size()))
            fail(("external32 size differs from the reference for " + ref::describe(s)).c_str());
        shmpi::dtype::pack_external32(*t, a.base(), count, packed.data(), "fuzz");
        if (std::memcmp(packed.data(), ext.data(), ext.size()) != 0)
            fail(("external32 pack differs from the reference for " + ref::describe(s)).c_str());
        x.fill(7);
        y.fill(7);
        ref::unpack(m, want.data(), static_cast<std::int64_t>(want.size()), x.base(), count);
        shmpi::dtype::unpack_external32(*t, packed.data(), y.base(), count, "fuzz");
        if (x.bytes != y.bytes) fail(("external32 unpack differs from the reference for " + ref::describe(s)).c_str());
    }
    self_check(*t, in);
}

void sequence_mode(Input& in) {
    using namespace shmpi::dtype;
    static const MPI_Datatype seeds[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LB, MPI_UB};
    std::vector<Ref> pool;
    for (MPI_Datatype h : seeds) pool.emplace_back(predefined(h));
    const char* fn = "fuzz";
    for (int step = 0; step < 12 && !in.done(); ++step) {
        const Datatype& a = *pool[in.below(pool.size())];
        const int op = static_cast<int>(in.below(12));
        const int n = static_cast<int>(in.below(5));
        // Arrays one longer than any count used with them (resized reads two).
        std::vector<int> ints(static_cast<std::size_t>(n) + 2), ints2(ints.size());
        std::vector<MPI_Aint> aints(ints.size());
        std::vector<const Datatype*> types(ints.size());
        for (std::size_t i = 0; i < ints.size(); ++i) {
            ints[i] = static_cast<int>(in.arg());
            ints2[i] = static_cast<int>(in.arg());
            aints[i] = in.arg();
            types[i] = pool[in.below(pool.size())].get();
        }
        // Mostly the array length; sometimes a bad count (never past the arrays).
        const int count = in.bits(1) % 16 == 0 ? std::min(static_cast<int>(in.arg()), n + 1) : n;
        Datatype* made = nullptr;
        try {
            switch (op) {
            case 0: made = make_contiguous(ints[0], a, fn); break;
            case 1: made = make_vector(ints[0], ints2[0], static_cast<int>(aints[0]), a, fn); break;
            case 2: made = make_hvector(ints[0], ints2[0], aints[0], a, fn); break;
            case 3: made = make_indexed(count, ints.data(), ints2.data(), a, fn); break;
            case 4: made = make_hindexed(count, ints.data(), aints.data(), a, fn); break;
            case 5: made = make_indexed_block(count, ints[0], ints2.data(), a, fn); break;
            case 6: made = make_hindexed_block(count, ints[0], aints.data(), a, fn); break;
            case 7: made = make_struct(count, ints.data(), aints.data(), types.data(), fn); break;
            case 8: made = make_resized(a, aints[0], aints[1], fn); break;
            case 9: made = make_dup(a, fn); break;
            case 10: {
                std::vector<int> sizes(ints.size()), subs(ints.size()), starts(ints.size());
                for (std::size_t i = 0; i < ints.size(); ++i) {
                    sizes[i] = ints[i] % 6;
                    subs[i] = ints2[i] % 6;
                    starts[i] = static_cast<int>(aints[i] % 6);
                }
                made = make_subarray(count, sizes.data(), subs.data(), starts.data(),
                                     in.bits(1) % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, a, fn);
                break;
            }
            default: {
                const int size = 1 + static_cast<int>(in.below(6));
                std::vector<int> g(ints.size()), dist(ints.size()), darg(ints.size()), ps(ints.size(), 1);
                const int kinds[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
                for (std::size_t i = 0; i < ints.size(); ++i) {
                    g[i] = ints[i] % 9;
                    dist[i] = kinds[in.below(3)];
                    darg[i] = in.bits(1) % 2 ? MPI_DISTRIBUTE_DFLT_DARG : ints2[i] % 4;
                }
                ps[0] = size;
                made = make_darray(size, static_cast<int>(in.below(7)), n + 1, g.data(), dist.data(), darg.data(),
                                   ps.data(), MPI_ORDER_C, a, fn);
                break;
            }
            }
        } catch (const shmpi::MpiError& e) {
            const int c = e.error_class();
            if (c != MPI_ERR_COUNT && c != MPI_ERR_ARG && c != MPI_ERR_TYPE && c != MPI_ERR_RANK) {
                fail("a constructor failed with an unexpected error class");
            }
            continue;
        }
        Ref t(made);
        free_handle(*made, fn);
        commit(*t);
        self_check(*t, in);
        if (pool.size() < 24) pool.push_back(std::move(t));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    Input in(data + 1, size - 1);
    if (data[0] % 2 == 0) {
        reference_mode(in);
    } else {
        sequence_mode(in);
    }
    return 0;
}
